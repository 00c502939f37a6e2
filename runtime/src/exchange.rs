//! The exchange interface between one tile and the fabric.
//!
//! Packets carry no destination: a tile `send`s a 32-bit word at a cycle
//! fixed by the compiler, and a receiving tile that has selected that sender
//! (`recvsel`) stores the word arriving at its `recv` cycle. The chip
//! simulator implements [`ExchangePort`] (one port per tile, so tiles can run
//! on rayon threads with no shared mutable state); it may record sends in a
//! per-tile outbox during one pass and serve receives from them in another.
//! A receive that finds no word is a fault of the receiving tile.
//!
//! The exchange engine (`exch`, `docs/isa.md` section 7) hands the port a
//! whole checked row ([`EngineRow`], in absolute cycles) through
//! [`ExchangePort::start_row`].

/// A tile's connection to the exchange fabric.
pub trait ExchangePort {
    /// `tile` sends `word` in `cycle`. `Err(first)`: the tile already sent
    /// `first` in that cycle (a `send` while its exchange engine sends);
    /// the word is dropped and the `send` faults.
    fn send(&mut self, tile: u32, cycle: u64, word: u32) -> Result<(), u32>;
    /// The word arriving at `tile` in `cycle` from `sender`, if any.
    fn receive(&mut self, tile: u32, cycle: u64, sender: u32) -> Option<u32>;
    /// `tile`'s `exch` started its exchange engine on `row` (validated, its
    /// send bytes already read). The chip records the sends and resolves
    /// the captures at the next sync; the default drops the row (a tile
    /// alone: its sends vanish, its captures write nothing).
    fn start_row(&mut self, tile: u32, row: EngineRow) {
        let _ = (tile, row);
    }
}

/// A run of words one engine sends in consecutive cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineSend {
    /// Absolute cycle of the first word.
    pub start: u64,
    pub words: u32,
    /// Byte offset of the first word in [`EngineRow::data`].
    pub offset: u64,
}

/// A capture entry of a row, in absolute cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineCapture {
    /// Absolute cycle of the first word.
    pub start: u64,
    /// Capture from the supertile partner's port (`tile ^ 1`).
    pub partner: bool,
    pub addr: u32,
    pub len: u32,
    /// Index of the entry in its row.
    pub entry: u32,
}

impl EngineCapture {
    pub fn words(&self) -> u32 {
        self.len.div_ceil(4)
    }
}

/// One started exchange-table row (`exch`), in absolute cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineRow {
    /// Address of the `exch` that started it, and its issue cycle.
    pub pc: u32,
    /// Address of the row in tile memory.
    pub addr: u32,
    pub issue: u64,
    /// Time base: issue + 1 + `phase_fixed_cycles`.
    pub t0: u64,
    /// Engine end E: T0 + the end of the last send or capture (T0 if none).
    pub end: u64,
    /// `(cycle, sender)` per select entry (`u32::MAX`: no sender), in order.
    pub selects: Vec<(u64, u32)>,
    pub captures: Vec<EngineCapture>,
    /// Send runs in cycle order (they never overlap).
    pub sends: Vec<EngineSend>,
    /// The send bytes, read when `exch` issued; each send padded with zeros
    /// to whole words.
    pub data: std::sync::Arc<Vec<u8>>,
}

impl EngineRow {
    /// Words the row sends.
    pub fn words_sent(&self) -> u64 {
        self.sends.iter().map(|s| s.words as u64).sum()
    }

    /// The word the row sends in `cycle`, if any.
    pub fn word_at(&self, cycle: u64) -> Option<u32> {
        let i = self.sends.partition_point(|s| s.start <= cycle);
        let s = self.sends.get(i.checked_sub(1)?)?;
        let k = cycle - s.start;
        if k >= s.words as u64 {
            return None;
        }
        let o = s.offset as usize + 4 * k as usize;
        let b = self.data.get(o..o + 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The sender port selects at `cycle` by this row (`None` before the
    /// first select, or for a select of no sender).
    pub fn selected_at(&self, cycle: u64) -> Option<u32> {
        let i = self.selects.partition_point(|s| s.0 <= cycle);
        let s = self.selects.get(i.checked_sub(1)?)?.1;
        (s != u32::MAX).then_some(s)
    }
}

/// A port with no fabric behind it: sends vanish, receives find nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoExchange;

impl ExchangePort for NoExchange {
    fn send(&mut self, _tile: u32, _cycle: u64, _word: u32) -> Result<(), u32> {
        Ok(())
    }
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
    fn send(&mut self, tile: u32, cycle: u64, word: u32) -> Result<(), u32> {
        self.in_flight.push((cycle + self.latency, tile, word));
        Ok(())
    }
    fn receive(&mut self, _tile: u32, cycle: u64, sender: u32) -> Option<u32> {
        let i = self
            .in_flight
            .iter()
            .position(|&(c, s, _)| c == cycle && s == sender)?;
        Some(self.in_flight.swap_remove(i).2)
    }
}
