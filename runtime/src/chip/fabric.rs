//! The exchange fabric: the timing model of `lowering/EXCHANGE.md`, enforced.
//!
//! A word sent by tile `s` in cycle `c` is visible at tile `r`'s input in
//! cycle `c + latency(s, r)`, and only there: a receiver whose `recv`
//! issues in cycle `t` with sender `s` selected gets the word `s` sent in
//! cycle `t - latency(s, r)`, or nothing (the tile faults with
//! [`FaultKind::NoData`](crate::FaultKind::NoData)). Any number of
//! receivers may take the same word (multicast). A tile sends at most one
//! word per cycle (a `send` in a cycle its engine sends in is refused: the
//! tile faults with [`FaultKind::DoubleSend`](crate::FaultKind::DoubleSend)),
//! and a port listens to one sender per cycle (captures of a word while two
//! senders are selected are [`ChipFault::TwoSenders`], found when the
//! chip resolves the captures).
//!
//! The chip runs tiles in parallel: during one simulation round the
//! committed words ([`Fabric`]) are read-only, and each tile's
//! [`FabricPort`] appends its sends to its own outbox ([`PortState`]);
//! between rounds the chip commits every outbox in tile order. The fabric
//! also knows, per tile, the cycle up to which its sends are complete
//! ([`Fabric::set_known`]); a receive whose word lies beyond that is not
//! answered but *stalled* ([`PortState::stalled`]): the chip rolls the
//! `recv` back and retries it in a later round (see `chip.rs`).
//!
//! Exchange engines (`exch`) send runs of words: the port puts them in its
//! `engine_outbox` and keeps the row ([`PortState::rows`]) for the chip to
//! resolve its captures at the sync ([`Fabric::gather`]).

use std::sync::Arc;

use crate::exchange::{EngineRow, ExchangePort};

use super::ChipFault;

/// Route latency as `lowering/EXCHANGE.md` defines it:
/// `base + ceil(|col(s) - col(d)| / columns_per_cycle)`, with
/// `col(t) = t / tiles_per_column`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteModel {
    pub tiles: u32,
    pub tiles_per_column: u32,
    pub base_cycles: u32,
    pub columns_per_cycle: u32,
    /// Latency by column distance (precomputed).
    by_distance: Vec<u32>,
    /// The column of each tile (precomputed: no division per word).
    column: Vec<u32>,
}

impl RouteModel {
    pub fn new(
        tiles: u32,
        tiles_per_column: u32,
        base_cycles: u32,
        columns_per_cycle: u32,
    ) -> Self {
        let tpc = tiles_per_column.max(1);
        let columns = tiles.div_ceil(tpc).max(1);
        let by_distance = (0..columns)
            .map(|d| base_cycles + d.div_ceil(columns_per_cycle.max(1)))
            .collect();
        RouteModel {
            tiles,
            tiles_per_column: tpc,
            base_cycles,
            columns_per_cycle,
            by_distance,
            column: (0..tiles).map(|t| t / tpc).collect(),
        }
    }

    /// Cycles from a send by `src` to the word being visible at `dst`.
    #[inline]
    pub fn latency(&self, src: u32, dst: u32) -> u32 {
        let col = |t: u32| {
            self.column
                .get(t as usize)
                .copied()
                .unwrap_or(t / self.tiles_per_column)
        };
        let d = col(src).abs_diff(col(dst));
        match self.by_distance.get(d as usize) {
            Some(l) => *l,
            None => self.base_cycles + d.div_ceil(self.columns_per_cycle.max(1)),
        }
    }

    /// The smallest latency between any two tiles (the base).
    pub fn min_latency(&self) -> u32 {
        self.base_cycles
    }

    /// The largest latency between any two tiles.
    pub fn max_latency(&self) -> u32 {
        self.by_distance.last().copied().unwrap_or(self.base_cycles)
    }
}

/// A run of words an exchange engine sends in consecutive cycles, sharing
/// its row's send bytes.
#[derive(Clone, Debug)]
pub struct EngineRun {
    /// Cycle of the first word.
    pub start: u64,
    pub words: u32,
    /// Byte offset of the first word in `data`.
    pub offset: u64,
    pub data: Arc<Vec<u8>>,
}

impl EngineRun {
    pub fn end(&self) -> u64 {
        self.start + self.words as u64
    }

    /// The bytes of words `k .. k + n` of the run.
    fn bytes(&self, k: u64, n: u64) -> &[u8] {
        let o = (self.offset + 4 * k) as usize;
        self.data.get(o..o + 4 * n as usize).unwrap_or(&[])
    }
}

/// The committed words: per sender, the `(send cycle, word)` of `send`
/// instructions in cycle order, and the runs of its exchange engine in
/// cycle order (looked up by binary search; never expanded to words).
#[derive(Clone, Debug)]
pub struct Fabric {
    route: RouteModel,
    sent: Vec<Vec<(u64, u32)>>,
    runs: Vec<Vec<EngineRun>>,
    /// Per tile: every send before this cycle is committed.
    known: Vec<u64>,
    /// Bumped whenever words are dropped (indices into `sent` change).
    epoch: u64,
}

impl Fabric {
    pub fn new(route: RouteModel) -> Self {
        let n = route.tiles as usize;
        Fabric {
            route,
            sent: vec![Vec::new(); n],
            runs: vec![Vec::new(); n],
            known: vec![u64::MAX; n],
            epoch: 0,
        }
    }

    pub fn route(&self) -> &RouteModel {
        &self.route
    }

    /// Declares that every send of `tile` before `cycle` is committed and
    /// nothing is known from `cycle` on (`u64::MAX`: the tile sends no
    /// more). A new fabric knows everything.
    pub fn set_known(&mut self, tile: u32, cycle: u64) {
        if let Some(k) = self.known.get_mut(tile as usize) {
            *k = cycle;
        }
    }

    /// See [`Fabric::set_known`].
    pub fn known(&self, tile: u32) -> u64 {
        self.known.get(tile as usize).copied().unwrap_or(u64::MAX)
    }

    /// The word `sender` sent in `cycle` (by a `send` or its engine), if
    /// committed.
    pub fn sent_at(&self, sender: u32, cycle: u64) -> Option<u32> {
        let v = self.sent.get(sender as usize)?;
        v.binary_search_by_key(&cycle, |&(c, _)| c)
            .ok()
            .map(|i| v[i].1)
            .or_else(|| self.engine_word(sender, cycle))
    }

    /// The committed engine run of `sender` holding `cycle`.
    fn run_at(&self, sender: u32, cycle: u64) -> Option<&EngineRun> {
        let v = self.runs.get(sender as usize)?;
        let i = v.partition_point(|r| r.start <= cycle);
        v.get(i.checked_sub(1)?).filter(|r| cycle < r.end())
    }

    /// The word `sender`'s engine sent in `cycle`, if committed.
    fn engine_word(&self, sender: u32, cycle: u64) -> Option<u32> {
        let r = self.run_at(sender, cycle)?;
        let b = r.bytes(cycle - r.start, 1);
        (b.len() == 4).then(|| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Every committed engine run of `sender`, in cycle order.
    pub fn engine_runs(&self, sender: u32) -> &[EngineRun] {
        self.runs.get(sender as usize).map_or(&[], |v| v.as_slice())
    }

    /// Copies the words `sender` sent in the cycles `from, from + 1, ...`
    /// into `out` (4 bytes per word; a last partial word takes only its
    /// first bytes), a run at a time. `Err(c)`: no word was sent in cycle
    /// `c` (the words before it are copied).
    pub fn gather(&self, sender: u32, from: u64, out: &mut [u8]) -> Result<(), u64> {
        let runs = self.engine_runs(sender);
        let words = self.sent_by(sender);
        let mut i = runs.partition_point(|r| r.end() <= from);
        let (mut c, mut at) = (from, 0usize);
        while at < out.len() {
            while runs.get(i).is_some_and(|r| r.end() <= c) {
                i += 1;
            }
            match runs.get(i) {
                Some(r) if r.start <= c => {
                    let n = (r.end() - c).min((out.len() - at).div_ceil(4) as u64);
                    let b = r.bytes(c - r.start, n);
                    let take = b.len().min(out.len() - at);
                    if take == 0 {
                        return Err(c);
                    }
                    out[at..at + take].copy_from_slice(&b[..take]);
                    at += take;
                    c += n;
                }
                _ => {
                    let Ok(k) = words.binary_search_by_key(&c, |&(t, _)| t) else {
                        return Err(c);
                    };
                    let b = words[k].1.to_le_bytes();
                    let take = 4.min(out.len() - at);
                    out[at..at + take].copy_from_slice(&b[..take]);
                    at += take;
                    c += 1;
                }
            }
        }
        Ok(())
    }

    /// [`Fabric::sent_at`] starting from a receiver's cursor: receives
    /// mostly take a sender's words in order, so a short forward scan from
    /// the last position usually finds the word without a search.
    fn sent_at_from(&self, sender: u32, cycle: u64, cursor: &mut Cursor) -> Option<u32> {
        let v = self.sent.get(sender as usize)?;
        let mut i = 0;
        if cursor.epoch == self.epoch
            && cursor.sender == sender
            && v.get(cursor.index).is_some_and(|w| w.0 <= cycle)
        {
            i = cursor.index;
        }
        let end = (i + 8).min(v.len());
        let found = match v[i..end].iter().position(|&(c, _)| c >= cycle) {
            Some(k) if v[i + k].0 == cycle => Ok(i + k),
            Some(k) => Err(i + k),
            None => v[i..]
                .binary_search_by_key(&cycle, |&(c, _)| c)
                .map(|j| i + j)
                .map_err(|j| i + j),
        };
        let (at, word) = match found {
            Ok(j) => (j, Some(v[j].1)),
            Err(j) => (j, None),
        };
        *cursor = Cursor {
            epoch: self.epoch,
            sender,
            index: at,
        };
        word
    }

    /// Every committed `(cycle, word)` of `sender`'s `send` instructions, in
    /// cycle order (its engine's words are in [`Fabric::engine_runs`]).
    pub fn sent_by(&self, sender: u32) -> &[(u64, u32)] {
        self.sent.get(sender as usize).map_or(&[], |v| v.as_slice())
    }

    /// A port for `tile`, reading this fabric and writing `state`.
    pub fn port<'a>(&'a self, tile: u32, state: &'a mut PortState) -> FabricPort<'a> {
        FabricPort {
            fabric: self,
            tile,
            state,
        }
    }

    /// Moves the words of `state`'s outbox into the fabric (the chip calls
    /// this between rounds, in tile order).
    pub fn commit(&mut self, tile: u32, state: &mut PortState) {
        if let Some(v) = self.sent.get_mut(tile as usize) {
            v.append(&mut state.outbox);
        } else {
            state.outbox.clear();
        }
        if let Some(v) = self.runs.get_mut(tile as usize) {
            v.append(&mut state.engine_outbox);
        } else {
            state.engine_outbox.clear();
        }
    }

    /// Forgets words no receive at or after `cycle` can take.
    pub fn prune_before(&mut self, cycle: u64) {
        let keep_from = cycle.saturating_sub(self.route.max_latency() as u64);
        self.epoch += 1;
        for v in &mut self.sent {
            let k = v.partition_point(|&(c, _)| c < keep_from);
            v.drain(..k);
        }
        for v in &mut self.runs {
            let k = v.partition_point(|r| r.end() <= keep_from);
            v.drain(..k);
        }
    }
}

/// One tile's side of the fabric, kept between rounds.
#[derive(Clone, Debug, Default)]
pub struct PortState {
    /// Words sent this round, `(cycle, word)` in cycle order.
    pub outbox: Vec<(u64, u32)>,
    /// The last send: `(cycle, word)`.
    pub last_send: Option<(u64, u32)>,
    /// Fabric faults of this tile, in the order they happened.
    pub faults: Vec<ChipFault>,
    /// A receive that could not be answered yet: `(cycle, sender)`. The
    /// port returned no word, so the tile faulted; the chip undoes the
    /// `recv` and runs the tile again once the sender has progressed.
    pub stalled: Option<(u64, u32)>,
    /// Words sent and captured so far (by instructions and the engine).
    pub words_sent: u64,
    pub words_received: u64,
    /// Engine send runs started this round (committed with the outbox).
    pub engine_outbox: Vec<EngineRun>,
    /// Rows started since the chip last resolved captures, in order.
    pub rows: Vec<Arc<EngineRow>>,
    cursor: Cursor,
}

impl PortState {
    /// The word this tile's latest engine row sends in `cycle`.
    fn engine_word(&self, cycle: u64) -> Option<u32> {
        self.rows.last()?.word_at(cycle)
    }
}

/// Where a receiver last found a sender's word.
#[derive(Clone, Copy, Debug, Default)]
struct Cursor {
    epoch: u64,
    sender: u32,
    index: usize,
}

/// A tile's [`ExchangePort`] onto a [`Fabric`].
pub struct FabricPort<'a> {
    fabric: &'a Fabric,
    tile: u32,
    state: &'a mut PortState,
}

impl FabricPort<'_> {
    pub fn state(&self) -> &PortState {
        self.state
    }
}

impl ExchangePort for FabricPort<'_> {
    fn send(&mut self, _tile: u32, cycle: u64, word: u32) -> Result<(), u32> {
        let engine = self.state.engine_word(cycle).map(|w| (cycle, w));
        if let Some((c, first)) = engine.or(self.state.last_send) {
            if c == cycle {
                return Err(first);
            }
        }
        self.state.last_send = Some((cycle, word));
        self.state.outbox.push((cycle, word));
        self.state.words_sent += 1;
        Ok(())
    }

    fn receive(&mut self, _tile: u32, cycle: u64, sender: u32) -> Option<u32> {
        let tile = self.tile;
        let f = self.fabric;
        let lat = f.route.latency(sender, tile) as u64;
        let sent = cycle.checked_sub(lat);
        let word = match sent {
            _ if sender >= f.route.tiles => None,
            None => None,
            Some(sent) if sender == tile => {
                // Own words of this round are still in the outbox.
                f.sent_at(sender, sent)
                    .or_else(|| {
                        let o = &self.state.outbox;
                        o.binary_search_by_key(&sent, |&(c, _)| c)
                            .ok()
                            .map(|i| o[i].1)
                    })
                    .or_else(|| self.state.rows.iter().find_map(|r| r.word_at(sent)))
            }
            Some(sent) if sent >= f.known[sender as usize] => {
                // Not simulated that far yet: ask for a retry.
                self.state.stalled = Some((cycle, sender));
                return None;
            }
            Some(sent) => f
                .sent_at_from(sender, sent, &mut self.state.cursor)
                .or_else(|| f.engine_word(sender, sent)),
        };
        if word.is_some() {
            self.state.words_received += 1;
        }
        word
    }

    fn start_row(&mut self, _tile: u32, row: EngineRow) {
        let row = Arc::new(row);
        self.state.words_sent += row.words_sent();
        self.state
            .engine_outbox
            .extend(row.sends.iter().map(|s| EngineRun {
                start: s.start,
                words: s.words,
                offset: s.offset,
                data: row.data.clone(),
            }));
        self.state.rows.push(row);
    }
}
