//! Exchange-phase scheduling for the bulk-synchronous IPU machine.
//!
//! Between two syncs, an exchange phase moves bytes between tiles. The fabric
//! is stateless and compiler-timed: a sender puts one word (4 B) per cycle on
//! its bus at a fixed cycle, and a receiver switches its input to that sender
//! at the fixed cycle the word arrives (send cycle + route latency). Nothing
//! is addressed, so the compiler must give every word a send cycle and every
//! receiver a select cycle such that no receiver listens to two senders at
//! once and no sender sends two words at once. This module computes those
//! cycles, proves them, and reports how close they are to the bound.
//!
//! * [`phase`]: the input ([`Phase`] of [`Transfer`]s), validation, and the
//!   endpoint lower bound of docs/target.md.
//! * [`engine`]: list schedulers producing a [`Schedule`] of kind
//!   `compact-streams` (per-receiver streams packed into the earliest common
//!   free windows, multicast sending shared bytes once) or `paired`
//!   (supertile pairs take shared bytes on either tile's port, 8 B/cycle).
//! * [`scheduler`]: [`ExchangeScheduler`], which picks the best variant and
//!   reuses a previous schedule for a phase identical up to relocation
//!   (kind `reused`); [`PhaseQueue`] schedules many phases on the rayon pool
//!   with the answers of scheduling them one by one.
//! * [`mod@verify`]: an independent checker of every schedule property.
//! * [`rows`]: per-tile exchange-table row sizes (words).
//! * [`summary`]: transfers grouped by pattern, for printing in IR.
//!
//! ```
//! use ipu_exchange_schedule::{summarize, verify, ExchangeScheduler, Phase, Transfer};
//! use ipu_target::Target;
//! use std::sync::Arc;
//!
//! let target = Arc::new(Target::load("test16").unwrap());
//! // Even tiles send 256 B to their odd neighbour.
//! let phase = Phase::new((0..16).step_by(2).map(|t| Transfer::unicast(t, 0, 256, t + 1, 1024)).collect());
//! let mut scheduler = ExchangeScheduler::new(target.clone());
//! let s = scheduler.schedule(&phase).unwrap();
//! assert!(verify(&phase, &s, &target).is_ok());
//! assert_eq!(s.lower_bound, 64); // 256 B at 4 B/cycle
//! assert_eq!(s.horizon, 64 + 6); // + route latency within a column
//! assert_eq!(summarize(&phase).lines(8), ["tiles 0..14 step 2 -> +1, 256 B each (8 transfers)"]);
//! ```
//!
//! Cycle 0 is the first cycle after the phase's fixed cost; the horizon is
//! the cycle after the last word lands. The fixed per-phase cost and sync are
//! added by [`ipu_target::Target::exchange_phase_cycles`], not here.
//!
//! Paired receives (assumption, stated in the target file): the two tiles of
//! a supertile each select a sender for their own port; in a paired receive a
//! tile also captures the word on its partner's port. A tile may capture from
//! its partner's port only when the partner captures the same word, so only
//! bytes both tiles need arrive at 8 B/cycle.

mod bucket;
pub mod engine;
pub mod patterns;
pub mod phase;
pub mod rows;
pub mod scheduler;
pub mod summary;
pub mod verify;

#[cfg(test)]
mod tests;

use smallvec::SmallVec;
use std::fmt::{self, Write as _};

pub use phase::{
    lower_bound, validate_phase, Destination, LowerBound, Phase, PhaseError, Transfer,
};
pub use rows::{row_stats, sat, tile_rows, RowEntry, RowStats};
pub use scheduler::{
    evaluate_variants, schedule, CacheStats, ExchangeScheduler, PhaseQueue, ScheduleError,
    VariantReport,
};
pub use summary::{summarize, PatternGroup, PhaseSummary};
pub use verify::{verify, VerifyError};

/// How a schedule was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScheduleKind {
    /// Per-receiver streams packed by a list scheduler; every tile receives on its own port.
    CompactStreams,
    /// Like compact-streams, but supertile pairs take shared bytes on either port.
    Paired,
    /// A schedule of an identical (up to relocation) phase, rows relocated.
    Reused,
}

impl ScheduleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleKind::CompactStreams => "compact-streams",
            ScheduleKind::Paired => "paired",
            ScheduleKind::Reused => "reused",
        }
    }
}

impl fmt::Display for ScheduleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One receiver of a fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Receive {
    /// Index of the transfer in the phase.
    pub transfer: u32,
    /// Index of the destination in that transfer.
    pub dst: u32,
    /// Tile whose input selects the sender: the destination tile itself, or
    /// (paired receive) its supertile partner.
    pub port: u32,
    /// First cycle the port selects the sender (= send cycle + route
    /// latency), 32 bits as a row holds it ([`sat`]urated: the verifier
    /// refuses a saturated cycle, which no longer equals the arrival). A
    /// big phase has millions of receives: 16 bytes each, not 24.
    pub select_cycle: u32,
}

/// A run of consecutive words one sender sends, and who takes them.
///
/// The sender sends `len` bytes from `src_offset` in `ceil(len / 4)`
/// consecutive cycles from `send_cycle`. Each receive takes the same words in
/// consecutive cycles from its `select_cycle`, writing them to its
/// destination at `dst.offset + (src_offset - transfer.src_offset)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fragment {
    pub src_tile: u32,
    pub src_offset: u32,
    pub len: u32,
    pub send_cycle: u64,
    pub receives: SmallVec<[Receive; 2]>,
}

impl Fragment {
    /// Cycles the fragment occupies its sender and each port.
    pub fn words(&self, word_bytes: u32) -> u64 {
        (self.len as u64).div_ceil(word_bytes.max(1) as u64)
    }
}

/// A scheduled exchange phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub kind: ScheduleKind,
    /// Fragments sorted by (source tile, send cycle).
    pub fragments: Vec<Fragment>,
    /// Cycle after the last word lands (0 for an empty phase).
    pub horizon: u64,
    /// Horizon of the first (baseline) variant tried.
    pub initial_horizon: u64,
    /// Endpoint lower bound of the phase, in cycles.
    pub lower_bound: u64,
    /// Number of transfers in the phase.
    pub transfers: usize,
    /// Per-tile exchange-table row sizes.
    pub rows: RowStats,
    /// Improving rounds of iterated greedy behind the selected schedule.
    pub improvements: usize,
}

impl Schedule {
    /// horizon - lower_bound.
    pub fn gap(&self) -> u64 {
        self.horizon.saturating_sub(self.lower_bound)
    }

    /// horizon / lower_bound, the quality figure (1.0 for an empty phase).
    pub fn ratio(&self) -> f64 {
        if self.lower_bound == 0 {
            1.0
        } else {
            self.horizon as f64 / self.lower_bound as f64
        }
    }
}

impl Schedule {
    /// One line per fragment, for small phases in tests and debugging:
    /// `tile 0 cycles 0..4 bytes 0..16 -> t2 (port 2) at 6 [transfer 0.0]`.
    /// Ranges are half-open; `word_bytes` is the target's exchange word.
    pub fn listing(&self, phase: &Phase, word_bytes: u32) -> String {
        let mut out = String::new();
        for f in &self.fragments {
            let words = f.words(word_bytes);
            let _ = write!(
                out,
                "tile {} cycles {}..{} bytes {}..{} ->",
                f.src_tile,
                f.send_cycle,
                f.send_cycle.saturating_add(words),
                f.src_offset,
                f.src_offset as u64 + f.len as u64
            );
            for (k, r) in f.receives.iter().enumerate() {
                let tile = phase
                    .transfers
                    .get(r.transfer as usize)
                    .and_then(|t| t.dsts.get(r.dst as usize))
                    .map_or(u32::MAX, |d| d.tile);
                let sep = if k == 0 { " " } else { ", " };
                let _ = write!(out, "{sep}t{tile}");
                if r.port != tile {
                    let _ = write!(out, " (port {})", r.port);
                }
                let _ = write!(
                    out,
                    " at {} [transfer {}.{}]",
                    r.select_cycle, r.transfer, r.dst
                );
            }
            out.push('\n');
        }
        out
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "transfers={} initial_horizon={} selected_horizon={} endpoint_lower_bound={} lower_bound_gap={} selected_kind=\"{}\" neighborhood_improvements={} row_words={} row_tile={}",
            self.transfers,
            self.initial_horizon,
            self.horizon,
            self.lower_bound,
            self.gap(),
            self.kind,
            self.improvements,
            self.rows.max_row_words,
            self.rows.max_row_tile
        )
    }
}
