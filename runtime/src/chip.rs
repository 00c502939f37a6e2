//! The whole-chip simulator: N tile simulators, bulk-synchronous supersteps
//! and the exchange fabric, configured from an [`ipu_target::Target`].
//!
//! ```text
//! let target = Target::load("test4")?;
//! let mut chip = Chip::new(&target)?;
//! chip.load(0, &image0)?;            // per-tile images (TileImage)
//! chip.start(0, image0.symbol("main").unwrap(), 0);
//! chip.write(0, 0x90000, &input)?;   // host writes (target addresses)
//! let report = chip.run(u64::MAX)?;  // Err(RunError) carries the faults
//! let out = chip.read(1, 0xA0000, 64)?;
//! ```
//!
//! # Execution
//! Every started tile runs until it reaches `sync 1` or halts; when every
//! live tile is at the sync (halted tiles no longer take part), all of them
//! resume at one cycle: the latest arrival plus the target's
//! `exchange.sync_cycles`. Tiles run in parallel on rayon.
//!
//! # Exchange, and why parallel execution is exact
//! Sends and receives go through the [`fabric`] (the timing model of
//! `lowering/EXCHANGE.md`). The simulation advances in *rounds*. In one
//! round every running tile runs on a rayon thread, reading only words
//! committed in earlier rounds and appending its sends to a private outbox;
//! the chip then commits the outboxes in tile order. Before a round, the
//! fabric records each tile's cycle `K_s`: all of `s`'s sends before `K_s`
//! are committed (a tile at the sync, halted or faulted sends no more).
//! A `recv` in cycle `t` from `s` needs the word `s` sent in
//! `t - latency(s, r)`: if that cycle is before `K_s` the answer (the word,
//! or none: a fault) is final; otherwise the receive *stalls*: the port
//! gives no word, the tile stops with a fault at that `recv` before it has
//! changed anything but the post-increment of its address register, and
//! the chip undoes that increment ([`Tile::set_m_reg`]) and resumes the
//! tile at the same cycle in a later round, once `K_s` has moved past the
//! send cycle. Sends never wait. The tile with the lowest cycle can never
//! stall (its senders' words are older than every latency), so each round
//! makes progress; compute runs in one round per superstep, and an
//! exchange phase takes a few rounds (one per chain of dependent words).
//! Every answer equals what a cycle-by-cycle lockstep simulation of the
//! whole chip gives, and the rounds depend only on earlier rounds, so the
//! results are identical for any thread count.
//!
//! # Exchange engines
//! An `exch` hands its checked row to the tile's port
//! ([`ExchangePort::start_row`](crate::ExchangePort::start_row)): its send
//! runs go to the fabric with the tile's outbox (as runs sharing the bytes
//! read at issue, found by binary search, never expanded into words), so
//! `recv` instructions see them like `send`s, and the row is kept until
//! its captures are resolved. Engine sends lie after the `exch`'s cycle, so
//! the `K_s` rule above covers them. Captures are resolved when every live
//! tile is at the sync or halted (all sends of the superstep are then
//! committed), before the release, and at the end of a run for halted
//! tiles: receivers in parallel, each writing only its own memory and
//! faults, a run of words per sender and row at a time (one copy from the
//! sender's snapshot into the receiver's memory). A tile's arrival at a
//! `sync 1` issued while its engine runs is the engine end (see
//! `docs/isa.md` section 7).
//!
//! # Reports
//! [`ChipReport`] holds per-tile totals ([`TileReport`]) and one
//! [`SuperstepReport`] per superstep (between two chip-wide syncs, the last
//! one ending when every tile has halted). Each superstep carries one
//! [`TileSuperstep`] per started tile, in tile order: its arrival cycle at
//! the sync (or where it halted), and its issue cycles, instructions, words
//! sent and words received (engine and instructions) in that superstep: a
//! profiler's timeline. A run that stops on a fault or the cycle limit
//! reports the supersteps completed so far.
//!
//! # Faults
//! A tile fault (out-of-range access, a receive with no word: tile, cycle,
//! pc, instruction and the selected sender; a `send` in a cycle the tile's
//! engine sends in) or an exchange fault found when captures are resolved
//! (a capture before its data arrives, a capture while two senders are
//! selected on its port) stops the chip: no tile is run past the cycle of the earliest
//! fault found in a later round (tiles may already be past it from the
//! round in which it was found), and [`Chip::run`] returns every fault,
//! ordered by cycle and tile, with the report so far. Every fault names
//! the tile, the cycle, and the pc and disassembly of its instruction (for
//! exchange faults, the `exch` of the row). A tile that never reaches the
//! sync the others wait at keeps them waiting up to the cycle budget of
//! [`Chip::run`]; with [`Chip::require_all_tiles_at_syncs`] (compiled
//! programs, where every tile runs every superstep) it is a fault naming
//! the tile and the waiting ones as soon as all the others wait and it
//! has halted, or at the budget if it still runs. A context that branches
//! to itself is a tile fault at once. Nothing panics on a program.
//!
//! Engine captures that find no word ([`ChipFault::Capture`]) are found
//! when the superstep's captures are resolved, after every tile has
//! reached the sync; they are reported with the same ordering.
//!
//! # Limits of the model
//! An engine send and a `send` in one cycle are a tile fault of the `send`
//! ([`FaultKind::DoubleSend`]);
//! a tile's `recv` and its engine's captures use separate selectors and
//! are not checked against each other. Paired (supertile) receives at
//! 8 B/cycle are engine captures with the partner flag. Tile memory is the
//! target's `[memory.base_address, base_address + memory.bytes)`: a
//! program's access outside it is a tile fault, and host access and image
//! loading outside it are refused.

pub mod fabric;

use std::time::Instant;

use ipu_isa::link::TileImage;
use ipu_isa::{decode, Op};
use ipu_target::Target;
use rayon::prelude::*;

use crate::exchange::{EngineCapture, EngineRow};
use crate::tile::{
    ContextId, DecodedCode, Fault, FaultKind, HostAccessError, Outcome, Tile, TileConfig,
    TileStats, WORKERS,
};
use fabric::{Fabric, PortState, RouteModel};
use std::sync::Arc;

/// Why a capture failed, at its first bad word.
enum CaptureError {
    /// No sender selected (`None`) or no word sent by the selected one.
    NoWord { cycle: u64, sender: Option<u32> },
    /// Two senders selected on the port in the cycle of the word.
    TwoSenders { cycle: u64, first: u32, second: u32 },
}

/// `v.partition_point(le)`, trying `hint` and the position after it
/// before searching (captures mostly read a port's rows and selects in
/// order).
fn point_near<T>(v: &[T], hint: usize, le: impl Fn(&T) -> bool) -> usize {
    let at = |k: usize| k <= v.len() && (k == 0 || le(&v[k - 1])) && (k == v.len() || !le(&v[k]));
    if at(hint) {
        hint
    } else if at(hint + 1) {
        hint + 1
    } else {
        v.partition_point(le)
    }
}

/// Captures the words of `cap` (an entry of a row of `tile`) from port `p`,
/// whose rows this superstep are `port_rows`, into the tile's memory.
/// `hint`: where the last capture from that port found its row and select.
fn capture(
    fabric: &Fabric,
    tile: &mut Tile,
    cap: &EngineCapture,
    p: u32,
    port_rows: &[Arc<EngineRow>],
    hint: &mut (usize, usize),
) -> Result<(), CaptureError> {
    let words = cap.words() as u64;
    let route = fabric.route();
    let mut k = 0u64;
    while k < words {
        let t = cap.start + k;
        // The port's running row: its latest row started by cycle t.
        let none = CaptureError::NoWord {
            cycle: t,
            sender: None,
        };
        let i = point_near(port_rows, hint.0, |x| x.t0 <= t);
        let Some(pr) = i.checked_sub(1).map(|i| &port_rows[i]) else {
            return Err(none);
        };
        let j = point_near(&pr.selects, if i == hint.0 { hint.1 } else { 0 }, |s| {
            s.0 <= t
        });
        *hint = (i, j);
        // Every select cycle inside the capture starts a segment, so a
        // second select of another sender in cycle t shows up here.
        if let (Some(a), Some(b)) = (j.checked_sub(2), j.checked_sub(1)) {
            let (first, second) = (pr.selects[a], pr.selects[b]);
            if first.0 == t && second.0 == t && first.1 != second.1 {
                return Err(CaptureError::TwoSenders {
                    cycle: t,
                    first: first.1,
                    second: second.1,
                });
            }
        }
        let sender = j
            .checked_sub(1)
            .map(|j| pr.selects[j].1)
            .filter(|&s| s != u32::MAX);
        let Some(s) = sender else {
            return Err(none);
        };
        // The sender stays selected until the port's next select or row.
        let mut seg_end = cap.start + words;
        if let Some(n) = pr.selects.get(j) {
            seg_end = seg_end.min(n.0);
        }
        if let Some(n) = port_rows.get(i) {
            seg_end = seg_end.min(n.t0);
        }
        let lat = route.latency(s, p) as u64;
        let no_word = |cycle| CaptureError::NoWord {
            cycle,
            sender: Some(s),
        };
        let (Some(from), true) = (t.checked_sub(lat), s < route.tiles) else {
            return Err(no_word(t));
        };
        let n = seg_end - t;
        let lo = 4 * k as usize;
        let hi = (4 * (k + n) as usize).min(cap.len as usize);
        let Ok(dst) = tile.memory_mut(cap.addr + lo as u32, hi - lo) else {
            return Err(no_word(t));
        };
        if let Err(c) = fabric.gather(s, from, dst) {
            return Err(no_word(c + lat));
        }
        k += n;
    }
    Ok(())
}

/// The figures of a target the chip simulator uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChipConfig {
    pub tiles: u32,
    /// First byte of tile SRAM (tile-local address).
    pub memory_base: u32,
    /// One past the last byte of tile SRAM: tile memory spans
    /// `memory_base..memory_end`, and any access outside it (by a program,
    /// an exchange row, the host or an image) is refused.
    pub memory_end: u32,
    pub interleaved_start: u32,
    pub sync_cycles: u64,
    /// `exchange.phase_fixed_cycles`: an `exch` in cycle c starts its row
    /// at T0 = c + 1 + this.
    pub phase_fixed_cycles: u64,
    /// `exchange.supertile_tiles` (2: tiles 2k and 2k + 1 are partners).
    pub supertile_tiles: u32,
    pub route: RouteModel,
}

impl ChipConfig {
    pub fn from_target(t: &Target) -> Result<ChipConfig, ChipError> {
        let bad = |m: String| ChipError::Config(format!("target {}: {m}", t.name));
        let end = u32::try_from(t.memory_end())
            .map_err(|_| bad("memory does not fit 32-bit addresses".into()))?;
        let base = u32::try_from(t.memory.base_address)
            .map_err(|_| bad("memory does not fit 32-bit addresses".into()))?;
        let interleaved_start = t.memory.interleaved_start.map_or(Ok(end), u32::try_from);
        let interleaved_start =
            interleaved_start.map_err(|_| bad("memory does not fit 32-bit addresses".into()))?;
        if t.threads.worker_contexts as usize != WORKERS {
            return Err(bad(format!(
                "threads.worker_contexts is {}, but the simulated tile has {WORKERS} worker contexts (the kernel library divides its work over that many)",
                t.threads.worker_contexts
            )));
        }
        if t.exchange.route_latency_base_cycles == 0 {
            return Err(bad(
                "exchange.route_latency_base_cycles must be at least 1 for the chip simulator"
                    .into(),
            ));
        }
        Ok(ChipConfig {
            tiles: t.tiles(),
            memory_base: base,
            memory_end: end,
            interleaved_start,
            sync_cycles: t.exchange.sync_cycles as u64,
            phase_fixed_cycles: t.exchange.phase_fixed_cycles as u64,
            supertile_tiles: t.exchange.supertile_tiles,
            route: RouteModel::new(
                t.tiles(),
                t.chip.tiles_per_column,
                t.exchange.route_latency_base_cycles,
                t.exchange.route_latency_columns_per_cycle,
            ),
        })
    }

    /// The configuration of tile `id`'s simulator.
    pub fn tile_config(&self, id: u32) -> TileConfig {
        TileConfig {
            tile_id: id,
            memory_base: self.memory_base,
            memory_bytes: self.memory_end.saturating_sub(self.memory_base),
            interleaved_start: self.interleaved_start,
            sync_cycles: self.sync_cycles,
            phase_fixed_cycles: self.phase_fixed_cycles,
            supertile_tiles: self.supertile_tiles,
        }
    }
}

/// A fault that stops the chip. Every one names the tile, the cycle, and
/// the pc and disassembly of the instruction it is charged to.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChipFault {
    /// A tile's own fault (out-of-range or misaligned access, a `recv`
    /// that finds no word from its selected sender, a `send` while its
    /// engine sends, a bad exchange row, ...).
    #[error("{0}")]
    Tile(Fault),
    /// A capture word taken in a cycle in which the receiving port has two
    /// senders selected (two select entries of its row at one cycle): a
    /// port listens to one sender per cycle. Charged to the `exch` of the
    /// receiving row.
    #[error("tile {receiver}, supervisor, pc {pc:#x}, cycle {cycle}: port {port} has senders {first} and {second} selected in one cycle and a capture takes a word then; a port listens to one sender per cycle (in `{instruction}`)")]
    TwoSenders {
        receiver: u32,
        cycle: u64,
        port: u32,
        first: u32,
        second: u32,
        pc: u32,
        instruction: String,
    },
    /// An exchange-engine capture word found nothing: no sender selected
    /// on the port at `cycle` (`sender: None`), or no word sent by
    /// `sender` at `cycle - latency(sender, port)` (a capture before the
    /// data arrives). Charged to the `exch` of the receiving row.
    #[error("tile {tile}, supervisor, pc {pc:#x}, cycle {cycle}: exchange capture of {len} bytes to {addr:#x} {} (in `{instruction}`)", match sender { Some(s) => format!("finds no word from tile {s} on port {port}"), None => format!("has no sender selected on port {port}") })]
    Capture {
        tile: u32,
        cycle: u64,
        /// The port captured from: `tile`, or its partner `tile ^ 1`.
        port: u32,
        sender: Option<u32>,
        addr: u32,
        len: u32,
        pc: u32,
        instruction: String,
    },
    /// With [`Chip::require_all_tiles_at_syncs`]: a started tile that
    /// never arrives at the chip-wide sync the others wait at, because it
    /// halted (pc of the `halt`) or was still running when the run's
    /// cycle budget ran out (its supervisor's pc then).
    #[error("tile {tile}, supervisor, pc {pc:#x}, cycle {cycle}: never reaches the chip-wide sync that ends superstep {sync} ({}), at which {} wait{} (in `{instruction}`)", if *halted { "it halted" } else { "still running when the cycle budget ran out" }, tile_list(waiting), if waiting.len() == 1 { "s" } else { "" })]
    SyncNeverReached {
        tile: u32,
        cycle: u64,
        /// The superstep the sync ends (0: the first sync of the run).
        sync: usize,
        halted: bool,
        /// The tiles waiting at it.
        waiting: Vec<u32>,
        pc: u32,
        instruction: String,
    },
    /// The simulator broke one of its own invariants (a bug, reported as a
    /// value rather than a panic).
    #[error("tile {tile}, cycle {cycle}: internal chip-simulator error: {message}")]
    Internal {
        tile: u32,
        cycle: u64,
        message: String,
    },
}

/// `tiles 0-3, 5` (runs of consecutive ids merged; at most 8 items).
fn tile_list(tiles: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &t in tiles {
        match runs.last_mut() {
            Some((_, hi)) if *hi + 1 == t => *hi = t,
            _ => runs.push((t, t)),
        }
    }
    let items: Vec<String> = runs
        .iter()
        .take(8)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    let more = if runs.len() > 8 { ", ..." } else { "" };
    let word = if tiles.len() == 1 { "tile" } else { "tiles" };
    format!("{word} {}{more}", items.join(", "))
}

impl ChipFault {
    /// The tile the fault names (the receiver for [`ChipFault::TwoSenders`]).
    pub fn tile(&self) -> u32 {
        match self {
            ChipFault::Tile(f) => f.tile,
            ChipFault::Internal { tile, .. }
            | ChipFault::Capture { tile, .. }
            | ChipFault::SyncNeverReached { tile, .. } => *tile,
            ChipFault::TwoSenders { receiver, .. } => *receiver,
        }
    }

    pub fn cycle(&self) -> u64 {
        match self {
            ChipFault::Tile(f) => f.cycle,
            ChipFault::TwoSenders { cycle, .. }
            | ChipFault::Capture { cycle, .. }
            | ChipFault::SyncNeverReached { cycle, .. }
            | ChipFault::Internal { cycle, .. } => *cycle,
        }
    }

    /// The pc of the instruction the fault is charged to (`None` for an
    /// internal error).
    pub fn pc(&self) -> Option<u32> {
        match self {
            ChipFault::Tile(f) => Some(f.pc),
            ChipFault::TwoSenders { pc, .. }
            | ChipFault::Capture { pc, .. }
            | ChipFault::SyncNeverReached { pc, .. } => Some(*pc),
            ChipFault::Internal { .. } => None,
        }
    }
}

/// Host access and configuration errors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChipError {
    #[error("tile {tile} does not exist (the chip has {tiles})")]
    NoSuchTile { tile: u32, tiles: u32 },
    #[error("tile {tile}: address {addr:#x}+{len} is outside tile memory [{base:#x}, {end:#x})")]
    Outside {
        tile: u32,
        addr: u32,
        len: usize,
        base: u32,
        end: u32,
    },
    #[error("tile {tile}: {source}")]
    Access { tile: u32, source: HostAccessError },
    #[error("tile {tile}: the image has no symbol `{symbol}`")]
    NoEntry { tile: u32, symbol: String },
    #[error("{0}")]
    Config(String),
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChipOutcome {
    /// Every started tile halted.
    Halted,
    /// The cycle budget ran out first; [`Chip::run`] may be called again.
    CycleLimit,
    /// The chip stopped on a fault (the report of a [`RunError`]).
    Faulted,
}

/// Per-tile figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileReport {
    pub tile: u32,
    /// The tile's cycle counter (where it halted, or where it stands).
    pub cycles: u64,
    /// Cycles not spent waiting at chip-wide syncs.
    pub active_cycles: u64,
    /// Cycles in which the tile issued (an instruction or a bundle).
    pub issue_cycles: u64,
    /// Instructions executed (a bundle counts two).
    pub instructions: u64,
    pub stats: TileStats,
    pub words_sent: u64,
    pub words_received: u64,
    pub halted: bool,
}

/// One superstep: the compute and exchange between two syncs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuperstepReport {
    pub index: usize,
    /// The cycle the last tile reached the sync (or halted, for the last).
    pub end_cycle: u64,
    /// The cycle every tile resumed at (`None` for the final superstep).
    pub release_cycle: Option<u64>,
    /// Tiles that took part in the sync.
    pub tiles_synced: u32,
    /// One record per started tile, in tile order.
    pub tiles: Vec<TileSuperstep>,
}

/// One started tile in one superstep (a profiler's figures).
///
/// The counts cover what the tile did from the start of the superstep (the
/// previous release, or the start of the run) to its arrival. A tile that
/// halted in an earlier superstep has its halt cycle and zero counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileSuperstep {
    pub tile: u32,
    /// The cycle the tile arrived at the sync (for a `sync 1` issued while
    /// its exchange engine runs: the engine end E), or where it halted.
    pub arrival: u64,
    /// The tile halted (in this superstep or before) instead of syncing.
    pub halted: bool,
    /// Cycles in which the tile issued, and instructions (a bundle counts two).
    pub issue_cycles: u64,
    pub instructions: u64,
    /// Words sent (`send` and engine sends) and received (`recv` and
    /// engine captures).
    pub words_sent: u64,
    pub words_received: u64,
}

/// What a run did.
#[derive(Clone, Debug, PartialEq)]
pub struct ChipReport {
    pub outcome: ChipOutcome,
    /// The latest tile cycle.
    pub cycles: u64,
    pub supersteps: Vec<SuperstepReport>,
    /// Every tile, started or not, in tile order.
    pub tiles: Vec<TileReport>,
    /// Simulation rounds (parallel sweeps over the tiles), a cost figure.
    pub rounds: u64,
    /// Host wall-clock seconds this run took.
    pub wall_seconds: f64,
}

impl ChipReport {
    pub fn total_tile_cycles(&self) -> u64 {
        self.tiles.iter().map(|t| t.cycles).sum()
    }
    pub fn total_active_cycles(&self) -> u64 {
        self.tiles.iter().map(|t| t.active_cycles).sum()
    }
    pub fn total_instructions(&self) -> u64 {
        self.tiles.iter().map(|t| t.instructions).sum()
    }
    pub fn total_words_sent(&self) -> u64 {
        self.tiles.iter().map(|t| t.words_sent).sum()
    }
}

/// [`Chip::run`] stopped on faults.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}{}", faults.first().map_or_else(String::new, |f| f.to_string()), if faults.len() > 1 { format!(" (and {} more faults)", faults.len() - 1) } else { String::new() })]
pub struct RunError {
    /// Every fault, ordered by cycle, then tile.
    pub faults: Vec<ChipFault>,
    /// The state when the chip stopped.
    pub report: ChipReport,
}

impl RunError {
    /// The earliest fault.
    pub fn first(&self) -> &ChipFault {
        &self.faults[0]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    Running,
    AtSync(u64),
    Halted,
    Faulted,
}

struct Slot {
    tile: Tile,
    state: State,
    can_send: bool,
    can_receive: bool,
    port: PortState,
    sync_wait: u64,
    fault: Option<ChipFault>,
    /// A stalled receive: (sender, send cycle it needs).
    waiting: Option<(u32, u64)>,
    /// Issues, instructions, words sent and received at the start of the
    /// current superstep.
    mark: [u64; 4],
}

impl Slot {
    /// Runs the tile below `limit` (one round).
    fn step(&mut self, fabric: &Fabric, limit: u64) {
        let id = self.tile.config().tile_id;
        let now = self.tile.cycle();
        self.waiting = None;
        self.port.stalled = None;
        let r = {
            let mut port = fabric.port(id, &mut self.port);
            self.tile.run(&mut port, limit - now)
        };
        match r {
            Ok(Outcome::Halted) => self.state = State::Halted,
            Ok(Outcome::Sync { cycle }) => self.state = State::AtSync(cycle),
            Ok(Outcome::CycleLimit) => {}
            Err(f) => match self.port.stalled.take() {
                None => {
                    self.state = State::Faulted;
                    self.fault = Some(ChipFault::Tile(f));
                }
                Some((cycle, sender)) => match self.roll_back(&f, cycle) {
                    Ok(()) => {
                        let lat = fabric.route().latency(sender, id) as u64;
                        self.waiting = Some((sender, cycle - lat));
                    }
                    Err(message) => {
                        self.state = State::Faulted;
                        self.fault = Some(ChipFault::Internal {
                            tile: id,
                            cycle,
                            message,
                        });
                    }
                },
            },
        }
    }

    /// Undoes a stalled `recv` (the fault it raised, and its address
    /// post-increment), so that the tile issues it again when resumed.
    fn roll_back(&mut self, f: &Fault, cycle: u64) -> Result<(), String> {
        let ok = f.cycle == cycle
            && f.context == ContextId::Supervisor
            && matches!(f.kind, FaultKind::NoData { .. });
        let word = self
            .tile
            .read(f.pc, 4)
            .ok()
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        match word.map(decode) {
            Some(Ok(i)) if ok && i.op == Op::Recv => {
                if i.post {
                    let sup = WORKERS;
                    let base = i.regs[0] as usize & 15;
                    let m = self.tile.m_regs(sup)[base];
                    self.tile.set_m_reg(sup, base, m.wrapping_sub(i.imm as u32));
                }
                Ok(())
            }
            _ => Err(format!(
                "cannot retry a stalled receive after the fault `{f}`"
            )),
        }
    }
}

/// The chip.
pub struct Chip {
    cfg: ChipConfig,
    slots: Vec<Slot>,
    fabric: Fabric,
    supersteps: Vec<SuperstepReport>,
    rounds: u64,
    /// See [`Chip::require_all_tiles_at_syncs`].
    all_tiles_sync: bool,
    /// The code [`Chip::load`] decoded last (tiles of one image share it).
    code_cache: DecodedCode,
}

impl std::fmt::Debug for Chip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chip")
            .field("tiles", &self.cfg.tiles)
            .field("supersteps", &self.supersteps.len())
            .finish_non_exhaustive()
    }
}

impl Chip {
    /// A chip of `target.tiles()` empty tiles.
    pub fn new(target: &Target) -> Result<Chip, ChipError> {
        Ok(Chip::with_config(ChipConfig::from_target(target)?))
    }

    pub fn with_config(cfg: ChipConfig) -> Chip {
        let slots = (0..cfg.tiles)
            .into_par_iter()
            .map(|id| Slot {
                tile: Tile::new(cfg.tile_config(id)),
                state: State::Idle,
                can_send: false,
                can_receive: false,
                port: PortState::default(),
                sync_wait: 0,
                fault: None,
                waiting: None,
                mark: [0; 4],
            })
            .collect();
        Chip {
            fabric: Fabric::new(cfg.route.clone()),
            cfg,
            slots,
            supersteps: Vec::new(),
            rounds: 0,
            all_tiles_sync: false,
            code_cache: DecodedCode::default(),
        }
    }

    /// Every started tile must take part in every chip-wide sync, as in a
    /// compiled program (every tile runs every superstep). Then a tile
    /// that halts while others wait at a sync, or that is still running
    /// when the cycle budget of [`Chip::run`] runs out while others wait,
    /// is a [`ChipFault::SyncNeverReached`] naming it and the waiting
    /// tiles, instead of the others going on without it (or the run
    /// ending at the budget with no word on why). Without it, halted
    /// tiles simply no longer take part.
    pub fn require_all_tiles_at_syncs(&mut self) {
        self.all_tiles_sync = true;
    }

    pub fn config(&self) -> &ChipConfig {
        &self.cfg
    }

    pub fn tiles(&self) -> u32 {
        self.cfg.tiles
    }

    fn slot(&self, tile: u32) -> Result<&Slot, ChipError> {
        self.slots.get(tile as usize).ok_or(ChipError::NoSuchTile {
            tile,
            tiles: self.cfg.tiles,
        })
    }

    fn slot_mut(&mut self, tile: u32) -> Result<&mut Slot, ChipError> {
        let tiles = self.cfg.tiles;
        self.slots
            .get_mut(tile as usize)
            .ok_or(ChipError::NoSuchTile { tile, tiles })
    }

    fn check_range(&self, tile: u32, addr: u32, len: usize) -> Result<(), ChipError> {
        let (base, end) = (self.cfg.memory_base, self.cfg.memory_end);
        if addr < base || addr as u64 + len as u64 > end as u64 {
            return Err(ChipError::Outside {
                tile,
                addr,
                len,
                base,
                end,
            });
        }
        Ok(())
    }

    /// Loads `image` into `tile` (copies its segments, decodes its code).
    pub fn load(&mut self, tile: u32, image: &TileImage) -> Result<(), ChipError> {
        self.slot(tile)?;
        for s in &image.segments {
            self.check_range(tile, s.address, s.bytes.len())?;
        }
        self.slot(tile)?;
        let slot = &mut self.slots[tile as usize];
        slot.tile
            .load_shared(image, &mut self.code_cache)
            .map_err(|source| ChipError::Access { tile, source })?;
        (slot.can_send, slot.can_receive) = slot.tile.code_exchange();
        Ok(())
    }

    /// Loads one image into every tile and starts each at `pc` with
    /// `$m0 = arg` (in parallel; the code scan is done once).
    pub fn load_all(&mut self, image: &TileImage, pc: u32, arg: u32) -> Result<(), ChipError> {
        for s in &image.segments {
            self.check_range(0, s.address, s.bytes.len())?;
        }
        // Decoded once, shared by every tile.
        let mut shared = DecodedCode::default();
        if let Some(first) = self.slots.first_mut() {
            first
                .tile
                .load_shared(image, &mut shared)
                .map_err(|source| ChipError::Access { tile: 0, source })?;
        }
        self.slots
            .par_iter_mut()
            .enumerate()
            .try_for_each(|(id, slot)| {
                slot.tile
                    .load_shared(image, &mut shared.clone())
                    .map_err(|source| ChipError::Access {
                        tile: id as u32,
                        source,
                    })?;
                (slot.can_send, slot.can_receive) = slot.tile.code_exchange();
                slot.tile.start(pc, arg);
                slot.state = State::Running;
                Ok(())
            })
    }

    /// Loads `images[k]` into tile `k` and starts it at the image's `entry`
    /// symbol with `$m0 = arg`, in parallel (`None`, or a tile past the
    /// end of `images`, stays idle).
    pub fn load_and_start(
        &mut self,
        images: &[Option<&TileImage>],
        entry: &str,
        arg: u32,
    ) -> Result<(), ChipError> {
        if images.len() > self.slots.len() {
            return Err(ChipError::NoSuchTile {
                tile: images.len() as u32 - 1,
                tiles: self.cfg.tiles,
            });
        }
        for (k, img) in images.iter().enumerate() {
            if let Some(img) = img {
                for s in &img.segments {
                    self.check_range(k as u32, s.address, s.bytes.len())?;
                }
                if img.symbol(entry).is_none() {
                    return Err(ChipError::NoEntry {
                        tile: k as u32,
                        symbol: entry.to_string(),
                    });
                }
            }
        }
        self.slots
            .par_iter_mut()
            .zip(images.par_iter())
            .enumerate()
            .try_for_each(|(k, (slot, img))| {
                let Some(img) = img else { return Ok(()) };
                slot.tile.load(img).map_err(|source| ChipError::Access {
                    tile: k as u32,
                    source,
                })?;
                (slot.can_send, slot.can_receive) = slot.tile.code_exchange();
                slot.tile.start(img.symbol(entry).unwrap_or(0), arg);
                slot.state = State::Running;
                Ok(())
            })
    }

    /// Starts `tile`'s supervisor at `pc` with `$m0 = arg`; only started
    /// tiles run and take part in syncs.
    pub fn start(&mut self, tile: u32, pc: u32, arg: u32) -> Result<(), ChipError> {
        let slot = self.slot_mut(tile)?;
        slot.tile.start(pc, arg);
        slot.state = State::Running;
        Ok(())
    }

    /// Host write into a tile's memory (target addresses).
    pub fn write(&mut self, tile: u32, addr: u32, bytes: &[u8]) -> Result<(), ChipError> {
        self.slot(tile)?;
        self.check_range(tile, addr, bytes.len())?;
        self.slot_mut(tile)?
            .tile
            .write(addr, bytes)
            .map_err(|source| ChipError::Access { tile, source })
    }

    /// Host read of a tile's memory.
    pub fn read(&self, tile: u32, addr: u32, len: usize) -> Result<&[u8], ChipError> {
        self.check_range(tile, addr, len)?;
        self.slot(tile)?
            .tile
            .read(addr, len)
            .map_err(|source| ChipError::Access { tile, source })
    }

    /// A little-endian 32-bit word of a tile's memory.
    pub fn read_u32(&self, tile: u32, addr: u32) -> Result<u32, ChipError> {
        let b = self.read(tile, addr, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The simulator of one tile (registers, stats, memory).
    pub fn tile(&self, tile: u32) -> Option<&Tile> {
        self.slots.get(tile as usize).map(|s| &s.tile)
    }

    /// The committed exchange words.
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// The figures so far.
    pub fn report(&self, outcome: ChipOutcome, wall_seconds: f64) -> ChipReport {
        let tiles: Vec<TileReport> = self
            .slots
            .iter()
            .enumerate()
            .map(|(id, s)| {
                let st = s.tile.stats();
                let cycles = if s.state == State::Idle {
                    0
                } else {
                    s.tile.cycle()
                };
                TileReport {
                    tile: id as u32,
                    cycles,
                    active_cycles: cycles.saturating_sub(s.sync_wait),
                    issue_cycles: st.issues,
                    instructions: st.instructions,
                    stats: st,
                    words_sent: s.port.words_sent,
                    words_received: s.port.words_received,
                    halted: s.state == State::Halted,
                }
            })
            .collect();
        ChipReport {
            outcome,
            cycles: tiles.iter().map(|t| t.cycles).max().unwrap_or(0),
            supersteps: self.supersteps.clone(),
            tiles,
            rounds: self.rounds,
            wall_seconds,
        }
    }

    /// Runs until every started tile halts, a fault, or until no tile may
    /// pass cycle `start + max_cycles` (start: the lowest running tile's
    /// cycle). Runs on the current rayon pool.
    pub fn run(&mut self, max_cycles: u64) -> Result<ChipReport, RunError> {
        self.run_observed(max_cycles, &mut |_, _| {})
    }

    /// [`Chip::run`], calling `at_end(s, chip)` when superstep `s` has
    /// ended cleanly (every tile at the sync or halted, every capture
    /// resolved), before any tile runs on: tile memory then holds what
    /// superstep `s` left (a debugger's or a golden check's view).
    pub fn run_observed(
        &mut self,
        max_cycles: u64,
        at_end: &mut dyn FnMut(usize, &Chip),
    ) -> Result<ChipReport, RunError> {
        let t0 = Instant::now();
        let start = self
            .slots
            .iter()
            .filter(|s| s.state == State::Running)
            .map(|s| s.tile.cycle())
            .min()
            .unwrap_or(0);
        let mut limit = start.saturating_add(max_cycles);
        loop {
            // One round: the tiles that can advance below `limit`.
            for (id, sl) in self.slots.iter().enumerate() {
                let k = match sl.state {
                    State::Running if sl.can_send => sl.tile.cycle(),
                    _ => u64::MAX,
                };
                self.fabric.set_known(id as u32, k);
            }
            let fabric = &self.fabric;
            let ready = |sl: &Slot| {
                sl.state == State::Running
                    && sl.tile.cycle() < limit
                    && sl.waiting.is_none_or(|(s, sent)| fabric.known(s) > sent)
            };
            if self.slots.iter().any(ready) {
                self.rounds += 1;
                self.slots.par_iter_mut().with_min_len(4).for_each(|sl| {
                    if ready(sl) {
                        sl.step(fabric, limit);
                    }
                });
                for (id, sl) in self.slots.iter_mut().enumerate() {
                    if !sl.port.outbox.is_empty() || !sl.port.engine_outbox.is_empty() {
                        self.fabric.commit(id as u32, &mut sl.port);
                    }
                }
                // On a fault, let the others catch up to its cycle only, so
                // the earliest faults are the ones reported.
                let first_fault = self
                    .slots
                    .iter()
                    .flat_map(|sl| {
                        sl.fault
                            .as_ref()
                            .map(|f| f.cycle())
                            .into_iter()
                            .chain(sl.port.faults.iter().map(|f| f.cycle()))
                    })
                    .min();
                if let Some(c) = first_fault {
                    limit = limit.min(c + 1);
                }
                continue;
            }
            // No tile can advance: faults, a sync, the end, or the limit.
            if self
                .slots
                .iter()
                .any(|s| s.fault.is_some() || !s.port.faults.is_empty())
            {
                return Err(self.fail(t0));
            }
            if self.slots.iter().any(|s| s.state == State::Running) {
                if self.all_tiles_sync && self.sync_never_reached(false) {
                    return Err(self.fail(t0));
                }
                return Ok(self.report(ChipOutcome::CycleLimit, t0.elapsed().as_secs_f64()));
            }
            if self.all_tiles_sync && self.sync_never_reached(true) {
                return Err(self.fail(t0));
            }
            let arrivals: Vec<u64> = self
                .slots
                .iter()
                .filter_map(|s| match s.state {
                    State::AtSync(c) => Some(c),
                    _ => None,
                })
                .collect();
            // Every live tile is at the sync or halted: every send of the
            // superstep is known, so the engines' captures can be resolved.
            self.resolve_captures();
            if self.slots.iter().any(|s| !s.port.faults.is_empty()) {
                return Err(self.fail(t0));
            }
            let Some(&last) = arrivals.iter().max() else {
                let end = self
                    .slots
                    .iter()
                    .filter(|s| s.state == State::Halted)
                    .map(|s| s.tile.cycle())
                    .max()
                    .unwrap_or(0);
                let index = self.supersteps.len();
                let tiles = self.superstep_tiles();
                self.supersteps.push(SuperstepReport {
                    index,
                    end_cycle: end,
                    release_cycle: None,
                    tiles_synced: 0,
                    tiles,
                });
                at_end(index, self);
                return Ok(self.report(ChipOutcome::Halted, t0.elapsed().as_secs_f64()));
            };
            let release = last + self.cfg.sync_cycles;
            let tiles = self.superstep_tiles();
            for s in &mut self.slots {
                if let State::AtSync(c) = s.state {
                    s.sync_wait += release - c;
                    s.tile.resume_from_sync(release);
                    s.state = State::Running;
                }
            }
            let index = self.supersteps.len();
            self.supersteps.push(SuperstepReport {
                index,
                end_cycle: last,
                release_cycle: Some(release),
                tiles_synced: arrivals.len() as u32,
                tiles,
            });
            self.fabric.prune_before(release);
            // The tiles are released but have not run: memory is as the
            // superstep left it.
            at_end(index, self);
        }
    }

    /// With every tile required at every sync: when some tiles wait at a
    /// sync, marks each started tile that is not there (halted, or with
    /// `halted` false still running) with a [`ChipFault::SyncNeverReached`].
    /// Returns whether there was one.
    fn sync_never_reached(&mut self, halted: bool) -> bool {
        // Checked at every superstep's end: the lists only when a tile is missing.
        let missing = |s: &Slot| match s.state {
            State::Halted => halted,
            State::Running => !halted,
            _ => false,
        };
        if !self.slots.iter().any(missing) {
            return false;
        }
        let waiting: Vec<u32> = (0..self.slots.len() as u32)
            .filter(|&t| matches!(self.slots[t as usize].state, State::AtSync(_)))
            .collect();
        if waiting.is_empty() {
            return false;
        }
        let sync = self.supersteps.len();
        let mut any = false;
        for (id, sl) in self.slots.iter_mut().enumerate() {
            if !missing(sl) {
                continue;
            }
            let pc = if halted {
                sl.tile.stop_pc()
            } else {
                sl.tile.pc(WORKERS)
            };
            sl.state = State::Faulted;
            sl.fault = Some(ChipFault::SyncNeverReached {
                tile: id as u32,
                cycle: sl.tile.cycle(),
                sync,
                halted,
                waiting: waiting.clone(),
                pc,
                instruction: sl.tile.instruction_at(pc),
            });
            any = true;
        }
        any
    }

    /// The per-tile records of the superstep ending now (every tile at the
    /// sync or halted), and the marks for the next one.
    fn superstep_tiles(&mut self) -> Vec<TileSuperstep> {
        let mut out = Vec::new();
        for (id, s) in self.slots.iter_mut().enumerate() {
            let (arrival, halted) = match s.state {
                State::AtSync(c) => (c, false),
                State::Halted => (s.tile.cycle(), true),
                _ => continue,
            };
            let st = s.tile.stats();
            let now = [
                st.issues,
                st.instructions,
                s.port.words_sent,
                s.port.words_received,
            ];
            let d = |k: usize| now[k] - s.mark[k];
            out.push(TileSuperstep {
                tile: id as u32,
                arrival,
                halted,
                issue_cycles: d(0),
                instructions: d(1),
                words_sent: d(2),
                words_received: d(3),
            });
            s.mark = now;
        }
        out
    }

    /// Resolves the captures of every row started since the last
    /// resolution (all their senders' words are committed), writing tile
    /// memory; faults go to the receivers' port states. Receivers run in
    /// parallel; each writes only its own memory and faults, so the
    /// result does not depend on the thread count.
    fn resolve_captures(&mut self) {
        let rows: Vec<Vec<Arc<EngineRow>>> = self
            .slots
            .iter_mut()
            .map(|s| std::mem::take(&mut s.port.rows))
            .collect();
        if rows.iter().all(|r| r.is_empty()) {
            return;
        }
        let fabric = &self.fabric;
        let rows = &rows;
        self.slots
            .par_iter_mut()
            .enumerate()
            .with_min_len(4)
            .for_each(|(r, sl)| {
                // Per port (own, partner's): where the last capture read.
                let mut hints = [(0, 0); 2];
                for row in &rows[r] {
                    for cap in &row.captures {
                        let p = if cap.partner { r as u32 ^ 1 } else { r as u32 };
                        let port_rows = rows.get(p as usize).map_or(&[][..], |v| v.as_slice());
                        let hint = &mut hints[cap.partner as usize];
                        let fault = match capture(fabric, &mut sl.tile, cap, p, port_rows, hint) {
                            Ok(()) => {
                                sl.port.words_received += cap.words() as u64;
                                continue;
                            }
                            Err(CaptureError::NoWord { cycle, sender }) => ChipFault::Capture {
                                tile: r as u32,
                                cycle,
                                port: p,
                                sender,
                                addr: cap.addr,
                                len: cap.len,
                                pc: row.pc,
                                instruction: sl.tile.instruction_at(row.pc),
                            },
                            Err(CaptureError::TwoSenders {
                                cycle,
                                first,
                                second,
                            }) => ChipFault::TwoSenders {
                                receiver: r as u32,
                                cycle,
                                port: p,
                                first,
                                second,
                                pc: row.pc,
                                instruction: sl.tile.instruction_at(row.pc),
                            },
                        };
                        sl.port.faults.push(fault);
                    }
                }
            });
    }

    fn fail(&mut self, t0: Instant) -> RunError {
        let mut faults: Vec<ChipFault> = Vec::new();
        for s in &mut self.slots {
            faults.append(&mut s.port.faults);
            if let Some(f) = s.fault.clone() {
                faults.push(f);
            }
        }
        // Fabric faults before the tile faults they cause in the same cycle.
        faults.sort_by_key(|f| (f.cycle(), f.tile(), matches!(f, ChipFault::Tile(_))));
        RunError {
            faults,
            report: self.report(ChipOutcome::Faulted, t0.elapsed().as_secs_f64()),
        }
    }
}
