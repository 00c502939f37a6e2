//! The exchange interface between one tile and the fabric.
//!
//! Packets carry no destination: a tile `send`s a 32-bit word at a cycle
//! fixed by the compiler, and a receiving tile that has selected that sender
//! (`recvsel`) stores the word arriving at its `recv` cycle. The chip
//! simulator implements [`ExchangePort`] (one port per tile, so tiles can run
//! on rayon threads with no shared mutable state); it may record sends in a
//! per-tile outbox during one pass and serve receives from them in another.
//! A receive that finds no word is a fault of the receiving tile.

/// A tile's connection to the exchange fabric.
pub trait ExchangePort {
    /// `tile` sends `word` in `cycle`.
    fn send(&mut self, tile: u32, cycle: u64, word: u32);
    /// The word arriving at `tile` in `cycle` from `sender`, if any.
    fn receive(&mut self, tile: u32, cycle: u64, sender: u32) -> Option<u32>;
}

/// A port with no fabric behind it: sends vanish, receives find nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoExchange;

impl ExchangePort for NoExchange {
    fn send(&mut self, _tile: u32, _cycle: u64, _word: u32) {}
    fn receive(&mut self, _tile: u32, _cycle: u64, _sender: u32) -> Option<u32> {
        None
    }
}

/// A one-tile fabric for tests: words a tile sends arrive back at it
/// `latency` cycles later, as if from sender `tile`.
#[derive(Clone, Debug, Default)]
pub struct Loopback {
    pub latency: u64,
    /// (arrival cycle, sender, word)
    pub in_flight: Vec<(u64, u32, u32)>,
}

impl Loopback {
    pub fn new(latency: u64) -> Self {
        Loopback {
            latency,
            in_flight: Vec::new(),
        }
    }
}

impl ExchangePort for Loopback {
    fn send(&mut self, tile: u32, cycle: u64, word: u32) {
        self.in_flight.push((cycle + self.latency, tile, word));
    }
    fn receive(&mut self, _tile: u32, cycle: u64, sender: u32) -> Option<u32> {
        let i = self
            .in_flight
            .iter()
            .position(|&(c, s, _)| c == cycle && s == sender)?;
        Some(self.in_flight.swap_remove(i).2)
    }
}
