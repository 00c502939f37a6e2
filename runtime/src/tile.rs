//! The single-tile simulator.
//!
//! It executes a linked tile image cycle by cycle as `docs/isa.md` says:
//! six worker contexts share a round-robin barrel (the worker in slot
//! `cycle % 6` issues in that cycle, so each worker issues at most once every
//! 6 cycles), and the supervisor issues in any cycle the slot's worker does
//! not use. An issue is one instruction or one LIW bundle (memory slot plus
//! arithmetic slot). Instructions are decoded once when the image is loaded,
//! so the loop only dispatches on pre-decoded ops.
//!
//! A tile owns all its state (no globals, `Send`), so a chip simulator can
//! run 1472 of them on rayon threads; the exchange is reached only through
//! an [`ExchangePort`] passed to [`Tile::run`], and a chip-wide sync returns
//! [`Outcome::Sync`] so the chip can align every tile before resuming it.
//! Every error is a [`Fault`] value naming tile, context, pc, cycle and the
//! instruction: nothing in here panics on a bad program.

use ipu_isa::disasm::format_inst;
use ipu_isa::float::{bf16_bits, bf16_value, f16_bits, f16_value, f8_table, F8Format};
use ipu_isa::link::TileImage;
use ipu_isa::table::{Ctx, Slot};
use ipu_isa::{decode, info, AmpMode, Inst, Op, AMP_BANK_BYTES, AMP_COLUMNS, BUNDLE_BIT};

use crate::exchange::{EngineCapture, EngineRow, EngineSend, ExchangePort};
use std::sync::Arc;

mod fp8;
mod pool;

/// Worker contexts per tile.
pub const WORKERS: usize = 6;
const SUP: usize = WORKERS;

/// What the simulator needs to know about the tile: figures of the target
/// description (see [`TileConfig::from_target`]), and the tile's id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileConfig {
    pub tile_id: u32,
    /// First byte of tile SRAM (target `memory.base_address`): memory spans
    /// `memory_base..memory_base + memory_bytes`, and every access of a
    /// program outside it is a fault.
    pub memory_base: u32,
    /// Bytes of tile SRAM, code and data (target `memory.bytes`).
    pub memory_bytes: u32,
    /// First byte of the interleaved region (128-bit loads, and two loads in
    /// one bundle, are only allowed at or above it).
    pub interleaved_start: u32,
    /// Cycles a chip-wide sync takes when the tile runs alone.
    pub sync_cycles: u64,
    /// Fixed cost of an exchange phase: an `exch` issued in cycle c has its
    /// time base T0 = c + 1 + `phase_fixed_cycles` (target
    /// `exchange.phase_fixed_cycles`).
    pub phase_fixed_cycles: u64,
    /// Tiles per supertile (target `exchange.supertile_tiles`): 2 allows
    /// partner captures (from tile ^ 1's port), 1 refuses them.
    pub supertile_tiles: u32,
}

impl TileConfig {
    /// The figures of `target` (tile id 0).
    pub fn from_target(target: &ipu_target::Target) -> Result<Self, crate::chip::ChipError> {
        Ok(crate::chip::ChipConfig::from_target(target)?.tile_config(0))
    }
    /// One past the last byte of tile memory.
    pub fn memory_end(&self) -> u32 {
        self.memory_base.saturating_add(self.memory_bytes)
    }
    pub fn with_tile_id(mut self, id: u32) -> Self {
        self.tile_id = id;
        self
    }
}

/// A context of the tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextId {
    Supervisor,
    Worker(u8),
}

impl std::fmt::Display for ContextId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ContextId::Supervisor => write!(f, "supervisor"),
            ContextId::Worker(w) => write!(f, "worker {w}"),
        }
    }
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FaultKind {
    #[error("address {addr:#x} (+{len}) is outside tile memory [{base:#x}, {end:#x})")]
    OutOfBounds {
        addr: u32,
        len: u32,
        base: u32,
        end: u32,
    },
    #[error("address {addr:#x} is not {align}-byte aligned")]
    Misaligned { addr: u32, align: u32 },
    #[error("address {addr:#x} is not in the interleaved region (a 128-bit access needs it)")]
    NotInterleaved { addr: u32 },
    #[error("store to {addr:#x} inside the code")]
    StoreToCode { addr: u32 },
    #[error("pc {pc:#x} is not in the executable code")]
    PcOutOfCode { pc: u32 },
    #[error("word {word:#010x} is not a valid instruction")]
    IllegalInstruction { word: u32 },
    #[error("a bundle must be a memory-slot instruction followed by an arithmetic-slot one")]
    BadBundle,
    #[error("`{0}` may only be issued by a worker")]
    WorkerOnly(&'static str),
    #[error("`{0}` may only be issued by the supervisor")]
    SupervisorOnly(&'static str),
    #[error("no free worker context")]
    NoFreeWorker,
    #[error("`rpt` inside a repeat body")]
    NestedRpt,
    #[error("division by zero")]
    DivideByZero,
    /// `bndchk` found an index outside `[0, bound)` (shown signed).
    #[error("index {index} is out of range [0, {bound}) (a gather index outside its axis)")]
    IndexOutOfRange { index: i32, bound: u32 },
    #[error("AMP used with {kph} instructions per row; this mode needs at least {need} (set with `ampk`)")]
    AmpRow { kph: u32, need: u32 },
    #[error("AMP row reaches weight byte {end}, past the {AMP_BANK_BYTES}-byte bank")]
    AmpWeights { end: usize },
    #[error("`recv` with no sender selected")]
    NoSender,
    #[error("no word from tile {sender} arrived in this cycle")]
    NoData { sender: u32 },
    #[error("`halt` while workers are still running")]
    HaltWithWorkers,
    #[error("no context can ever issue again (deadlock)")]
    Deadlock,
    #[error("the tile was not started")]
    NotStarted,
    #[error("bad exchange row: {0}")]
    ExchRow(ipu_isa::exchange_row::RowError),
    #[error("`exch` while the exchange engine runs (until cycle {end})")]
    EngineBusy { end: u64 },
    #[error("`halt` while the exchange engine runs (until cycle {end})")]
    HaltWithEngine { end: u64 },
    #[error("a second word in one cycle (the exchange engine sends {first:#010x}, this `send` {second:#010x}); a tile sends at most one word per cycle")]
    DoubleSend { first: u32, second: u32 },
    #[error("the instruction branches to itself: the context can never make progress")]
    SelfLoop,
}

/// A fault: where and when, and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tile {tile}, {context}, pc {pc:#x}, cycle {cycle}: {kind} (in `{instruction}`)")]
pub struct Fault {
    pub tile: u32,
    pub context: ContextId,
    pub pc: u32,
    pub cycle: u64,
    pub instruction: String,
    pub kind: FaultKind,
}

/// Why [`Tile::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The supervisor executed `halt`.
    Halted,
    /// The supervisor reached `sync 1` (all its workers done): the chip must
    /// call [`Tile::resume_from_sync`] with the cycle at which it continues.
    Sync { cycle: u64 },
    /// The cycle budget given to `run` was used up.
    CycleLimit,
}

/// Counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileStats {
    /// Instructions executed (a bundle counts two).
    pub instructions: u64,
    /// Issues (instructions or bundles).
    pub issues: u64,
    pub supervisor_issues: u64,
    pub worker_issues: u64,
    /// Multiply-accumulates done by the AMP.
    pub amp_macs: u64,
}

#[derive(Clone, Copy, Debug)]
struct Pre {
    inst: Inst,
    word: u32,
    legal: bool,
    bundle: bool,
    cost: u8,
    slot: Slot,
    ctx: Ctx,
}

impl Pre {
    fn of(word: u32) -> Pre {
        match decode(word) {
            Ok(inst) => {
                let o = info(inst.op);
                Pre {
                    inst,
                    word,
                    legal: true,
                    bundle: word & BUNDLE_BIT != 0,
                    cost: o.cost,
                    slot: o.slot,
                    ctx: o.ctx,
                }
            }
            Err(_) => Pre {
                inst: Inst {
                    op: Op::Nop,
                    regs: [0; 6],
                    imm: 0,
                    post: false,
                },
                word,
                legal: false,
                bundle: false,
                cost: 1,
                slot: Slot::Mem,
                ctx: Ctx::Any,
            },
        }
    }
}

/// A pre-decoded issue: one instruction or a whole bundle, validated at
/// load time so that the issue loop only checks one flag per context kind.
/// A bundle's arithmetic half is the next word's entry (its `first` and
/// `h_first`), so an entry is 32 bytes: two to a cache line.
#[derive(Clone, Copy, Debug)]
struct Fast {
    first: Inst,
    h_first: Handler,
    kind: IssueKind,
    words: u8,
    turns: u8,
    ok_supervisor: bool,
    ok_worker: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IssueKind {
    Mem,
    Arith,
    Bundle,
    Invalid,
}

impl Fast {
    fn of(code: &[Pre], idx: usize) -> Fast {
        let handlers = handlers();
        let p = code[idx];
        let invalid = Fast {
            first: p.inst,
            h_first: handlers[0],
            kind: IssueKind::Invalid,
            words: 1,
            turns: 1,
            ok_supervisor: false,
            ok_worker: false,
        };
        if !p.legal {
            return invalid;
        }
        let allowed = |c: Ctx| (c != Ctx::Worker, c != Ctx::Supervisor);
        let (s0, w0) = allowed(p.ctx);
        if !p.bundle {
            let kind = if p.slot == Slot::Mem {
                IssueKind::Mem
            } else {
                IssueKind::Arith
            };
            return Fast {
                first: p.inst,
                h_first: handlers[p.inst.op as usize],
                kind,
                words: 1,
                turns: p.cost,
                ok_supervisor: s0,
                ok_worker: w0,
            };
        }
        match code.get(idx + 1) {
            Some(q) if q.legal && !q.bundle && q.slot == Slot::Arith && p.slot == Slot::Mem => {
                let (s1, w1) = allowed(q.ctx);
                Fast {
                    first: p.inst,
                    h_first: handlers[p.inst.op as usize],
                    kind: IssueKind::Bundle,
                    words: 2,
                    turns: p.cost.max(q.cost),
                    ok_supervisor: s0 && s1,
                    ok_worker: w0 && w1,
                }
            }
            _ => invalid,
        }
    }
}

/// What an instruction's handler may change besides the tile, and the
/// exchange port (kept here so a handler takes few enough arguments to pass
/// them all in registers).
struct IssueState<'p> {
    pc: u32,
    next: u32,
    extra: u64,
    port: &'p mut dyn ExchangePort,
}

/// One function per op: the big `match` in `exec_mem` / `exec_arith` is
/// specialised for a constant op, so dispatch is one indirect call to a
/// small function chosen at load time. (`unsafe`: the table of
/// [`handlers`] may hold versions compiled for CPU features, which it
/// only hands out on a CPU that has them.)
type Handler = unsafe fn(&mut Tile, usize, Inst, &mut IssueState) -> Result<(), HandlerFault>;

/// A handler's failure: the fault itself waits in `Tile::pending_fault`, so
/// that the success path returns one register.
struct HandlerFault;

#[inline(always)]
fn handler<const N: u8>(
    t: &mut Tile,
    ci: usize,
    i: Inst,
    st: &mut IssueState,
) -> Result<(), HandlerFault> {
    let op = const { Op::from_index(N) };
    let r = if const { matches!(Op::from_index(N).slot(), Slot::Mem) } {
        t.exec_mem(op, ci, &i, st)
    } else {
        t.exec_arith(op, ci, &i)
    };
    match r {
        Ok(()) => Ok(()),
        Err(k) => {
            t.pending_fault = Some(k);
            Err(HandlerFault)
        }
    }
}

/// [`handler`] compiled for AVX2, FMA and F16C: the AMP's MACs and the
/// f16 conversions inline into it instead of being calls behind a
/// feature test. Same operations in the same order (Rust never fuses a
/// multiply and an add by itself; `mul_add` is one rounding either way).
///
/// # Safety
/// The CPU must support AVX2, FMA and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn handler_avx2<const N: u8>(
    t: &mut Tile,
    ci: usize,
    i: Inst,
    st: &mut IssueState,
) -> Result<(), HandlerFault> {
    handler::<N>(t, ci, i, st)
}

macro_rules! handler_tables {
    ($($n:literal)*) => {
        static HANDLERS: [Handler; Op::COUNT] = [$(handler::<$n> as Handler),*];
        #[cfg(target_arch = "x86_64")]
        static HANDLERS_AVX2: [Handler; Op::COUNT] = [$(handler_avx2::<$n> as Handler),*];
    };
}

handler_tables!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127 128 129 130 131 132 133 134 135 136 137 138 139 140 141 142 143 144 145 146 147 148 149 150 151 152 153 154 155 156 157 158 159 160
);

/// The handlers this CPU can run: the AVX2 versions where it has the
/// features they are compiled for.
fn handlers() -> &'static [Handler; Op::COUNT] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx2") && has!("fma") && has!("f16c") {
            return &HANDLERS_AVX2;
        }
    }
    &HANDLERS
}

#[derive(Clone, Copy, Debug, Default)]
struct Context {
    m: [u32; 16],
    a: [u32; 16],
    pc: u32,
    active: bool,
    ready: u64,
    rpt_start: u32,
    rpt_end: u32,
    rpt_left: u32,
    scale: i32,
}

#[derive(Clone, Copy, Debug, Default)]
struct AmpState {
    acc: [f32; AMP_COLUMNS],
    drain: [f32; AMP_COLUMNS],
    phase: u32,
    kph: u32,
    /// The MACs of this context's latest AMP instruction, not yet added
    /// to `acc` (see [`Tile::flush_amp`]).
    pending: PendingMacs,
}

/// An AMP instruction's MACs, held back so that those of several
/// contexts run together: each is a chain of dependent adds, and chains
/// of different contexts overlap on the host where one after another
/// with the issue loop between them would not. Column `c` still adds
/// `xs[j] * w(row0 + j, c)` in order of `j`, so the sums are the same.
#[derive(Clone, Copy, Debug, Default)]
struct PendingMacs {
    xs: [f32; 8],
    k: u8,
    row0: u16,
    /// The instruction ended the accumulation: `drain` takes `acc`,
    /// which restarts at zero.
    drain: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sup {
    NotStarted,
    Running,
    WaitWorkers { then_sync: bool },
    WaitSync,
    Halted,
}

/// Weight formats the decoded-weight cache can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WFmt {
    None,
    F32,
    F16,
    E4,
    E5,
}

/// The FP8 decode tables (E4M3FN, E5M2), made once for every tile.
static F8_TABLES: std::sync::LazyLock<([f32; 256], [f32; 256])> =
    std::sync::LazyLock::new(|| (f8_table(F8Format::E4M3FN), f8_table(F8Format::E5M2)));

/// Decoded code that tiles loading the same code words share
/// ([`Tile::load_shared`]).
#[derive(Clone, Debug)]
pub struct DecodedCode {
    /// What the code was decoded from: the executable ranges and the
    /// memory bytes of the words they cover (from `lo4`), so a tile whose
    /// memory holds the same bytes takes the decoded code with one compare.
    ranges: Vec<std::ops::Range<u32>>,
    lo4: u32,
    raw: Arc<[u8]>,
    code: Arc<[Pre]>,
    fast: Arc<[Fast]>,
    exchange: (bool, bool),
}

impl Default for DecodedCode {
    fn default() -> Self {
        DecodedCode {
            ranges: Vec::new(),
            lo4: 0,
            raw: Arc::new([]),
            code: Arc::new([]),
            fast: Arc::new([]),
            exchange: (false, false),
        }
    }
}

/// One simulated tile.
pub struct Tile {
    cfg: TileConfig,
    mem: Vec<u8>,
    /// The pages of `mem` ever written (all other bytes are zero): a
    /// dropped tile's memory is reused after zeroing only these ([`pool`]).
    dirty: pool::Dirty,
    code: Arc<[Pre]>,
    fast: Arc<[Fast]>,
    /// The code holds a `send` / `exch` (can send), a `recv` / `exch`.
    code_exchange: (bool, bool),
    code_lo: u32,
    code_hi: u32,
    ctx: [Context; WORKERS + 1],
    amp: [AmpState; WORKERS],
    /// Bit `w`: worker `w` has [`PendingMacs`]. They are applied before
    /// anything reads `acc` or `drain`, or rewrites `wcache`.
    amp_pending: u8,
    /// The two weight banks, allocated (zeroed) when the tile first
    /// writes weights or reads them: most tiles never use the AMP.
    banks: Vec<[u8; AMP_BANK_BYTES]>,
    active_bank: usize,
    /// The active bank's rows when it holds its weights column by column
    /// (`ampswapt`), 0 when row by row (`ampswap`).
    bank_rows_t: u32,
    /// Allocated with `banks` ([`Tile::amp_storage`]).
    wcache: Vec<f32>,
    wcache_fmt: WFmt,
    /// Rows of the active bank decoded into `wcache` (from row 0): the
    /// AMP decodes rows as it first reads them.
    wcache_rows: usize,
    /// The FP8 decode tables (E4M3FN, E5M2), shared by every tile.
    f8: &'static ([f32; 256], [f32; 256]),
    cycle: u64,
    sup: Sup,
    recv_sel: u32,
    /// End E of the latest exchange-engine row (0: none ran).
    engine_end: u64,
    stats: TileStats,
    pending_fault: Option<FaultKind>,
    /// The pc of the supervisor's last `halt` or `sync` (where it stopped).
    stop_pc: u32,
}

impl Drop for Tile {
    fn drop(&mut self) {
        pool::give(
            std::mem::take(&mut self.mem),
            std::mem::take(&mut self.dirty),
        );
    }
}

impl std::fmt::Debug for Tile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tile")
            .field("tile_id", &self.cfg.tile_id)
            .field("cycle", &self.cycle)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// Memory access outside the tile, from the host side.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("host access to {addr:#x}+{len} is outside tile memory [{base:#x}, {end:#x})")]
pub struct HostAccessError {
    pub addr: u32,
    pub len: usize,
    pub base: u32,
    pub end: u32,
}

/// The AMP's MACs for one instruction: column `c` adds `x[j] * w[j][c]`
/// for `j` in order (a multiply, then an add: each rounded, as the
/// reference does), the 16 columns side by side.
#[inline(always)]
fn amp_macs_body(acc: &mut [f32; AMP_COLUMNS], xs: &[f32], rows: &[[f32; AMP_COLUMNS]]) {
    let mut a = *acc;
    for (xv, w) in xs.iter().zip(rows) {
        for (a, w) in a.iter_mut().zip(w) {
            *a += xv * w;
        }
    }
    *acc = a;
}

/// [`amp_macs_body`] compiled for AVX2: the same operations in the same
/// order on 8 lanes instead of 4 (IEEE multiplies and adds give the same
/// bits at any width).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn amp_macs_avx2(acc: &mut [f32; AMP_COLUMNS], xs: &[f32], rows: &[[f32; AMP_COLUMNS]]) {
    amp_macs_body(acc, xs, rows)
}

#[inline(always)]
fn amp_macs(acc: &mut [f32; AMP_COLUMNS], xs: &[f32], rows: &[[f32; AMP_COLUMNS]]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { amp_macs_avx2(acc, xs, rows) };
            return;
        }
    }
    amp_macs_body(acc, xs, rows)
}

/// Four f16 (two registers, low half first) as f32.
#[inline(always)]
fn f16x4(lo: u32, hi: u32) -> [f32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU supports F16C (checked just above).
            return unsafe { f16x4_f16c(lo, hi) };
        }
    }
    use half::slice::HalfFloatSliceExt;
    // `half` converts in software here (on a host with F16C it uses the
    // same instruction as `f16x4_f16c`).
    let h = [
        half::f16::from_bits(lo as u16),
        half::f16::from_bits((lo >> 16) as u16),
        half::f16::from_bits(hi as u16),
        half::f16::from_bits((hi >> 16) as u16),
    ];
    let mut out = [0f32; 4];
    h.convert_to_f32_slice(&mut out);
    out
}

/// Four f32 as f16 (round to nearest even), packed as [`f16x4`] reads them.
#[inline(always)]
fn pack_f16x4(v: [f32; 4]) -> (u32, u32) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU supports F16C (checked just above).
            return unsafe { pack_f16x4_f16c(v) };
        }
    }
    use half::slice::HalfFloatSliceExt;
    let mut h = [half::f16::ZERO; 4];
    h.convert_from_f32_slice(&v);
    let b = |k: usize| h[k].to_bits() as u32;
    (b(0) | b(1) << 16, b(2) | b(3) << 16)
}

/// [`f16x4`] by the F16C instruction itself (what `half` runs on such a
/// host), without the slice conversion's dispatch and copies.
///
/// # Safety
/// The CPU must support F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "f16c")]
unsafe fn f16x4_f16c(lo: u32, hi: u32) -> [f32; 4] {
    use std::arch::x86_64::{__m128, _mm_cvtph_ps, _mm_set_epi64x};
    let v = _mm_cvtph_ps(_mm_set_epi64x(0, ((hi as u64) << 32 | lo as u64) as i64));
    // SAFETY: 16 bytes either way; every bit pattern is an f32.
    unsafe { std::mem::transmute::<__m128, [f32; 4]>(v) }
}

/// [`pack_f16x4`] by the F16C instruction (round to nearest even, as
/// `half` asks it).
///
/// # Safety
/// The CPU must support F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "f16c")]
unsafe fn pack_f16x4_f16c(v: [f32; 4]) -> (u32, u32) {
    use std::arch::x86_64::{__m128, _mm_cvtps_ph, _mm_cvtsi128_si64, _MM_FROUND_TO_NEAREST_INT};
    // SAFETY: 16 bytes either way.
    let x = unsafe { std::mem::transmute::<[f32; 4], __m128>(v) };
    let h = _mm_cvtsi128_si64(_mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(x)) as u64;
    (h as u32, (h >> 32) as u32)
}

/// IEEE 754-2019 `maximum` (ONNX Max, numpy `maximum`): NaN when either
/// operand is NaN, and +0 above -0. (Rust's `f32::max` is maxNum, which
/// drops a NaN operand.)
#[inline(always)]
fn maximum(x: f32, y: f32) -> f32 {
    if x > y {
        x
    } else if y > x {
        y
    } else if x == y {
        if x.is_sign_negative() {
            y
        } else {
            x
        }
    } else {
        x + y
    }
}

/// IEEE 754-2019 `minimum`: NaN when either operand is NaN, -0 below +0.
#[inline(always)]
fn minimum(x: f32, y: f32) -> f32 {
    if x < y {
        x
    } else if y < x {
        y
    } else if x == y {
        if x.is_sign_negative() {
            x
        } else {
            y
        }
    } else {
        x + y
    }
}

/// ONNX Relu as the reference computes it: x < 0 gives +0, anything else
/// (NaN, -0) stays.
#[inline(always)]
fn relu(x: f32) -> f32 {
    if x < 0.0 {
        0.0
    } else {
        x
    }
}

/// `2^n` as `(n as f32).exp2()` gives it, without the library call in the
/// normal range (where the power is exact); `pow2f_matches_exp2` checks
/// every `n` the register can hold against `exp2`.
#[inline(always)]
fn pow2f(n: i32) -> f32 {
    if (-126..=127).contains(&n) {
        f32::from_bits(((n + 127) as u32) << 23)
    } else {
        (n as f32).exp2()
    }
}

/// GELU's tanh form, evaluated in double in the reference's order and
/// rounded once.
fn gelu_tanh(x: f32) -> f32 {
    let x = x as f64;
    let c = (2.0 / std::f64::consts::PI).sqrt();
    (0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())) as f32
}

/// Byte k of a 0/1 mask: lane k's comparison.
#[inline(always)]
fn mask_bytes(bits: impl Iterator<Item = bool>) -> u32 {
    bits.enumerate()
        .fold(0u32, |m, (k, b)| m | (b as u32) << (8 * k))
}

/// Each byte of a 64-bit pair as a truth value.
#[inline(always)]
fn byte_logic(x: [u32; 2], y: [u32; 2], f: impl Fn(bool, bool) -> bool) -> [u32; 2] {
    let one = |a: u32, b: u32| {
        (0..4).fold(0u32, |m, k| {
            let (p, q) = ((a >> (8 * k)) & 0xff != 0, (b >> (8 * k)) & 0xff != 0);
            m | (f(p, q) as u32) << (8 * k)
        })
    };
    [one(x[0], y[0]), one(x[1], y[1])]
}

#[inline(always)]
fn unary(op: Op, x: f32) -> f32 {
    use Op::*;
    match op {
        F32v2exp | F16v4exp => x.exp(),
        F32v2log | F16v4log => x.ln(),
        F32v2tanh | F16v4tanh => x.tanh(),
        F32v2erf | F16v4erf => libm::erff(x),
        F32v2rsqrt | F16v4rsqrt => 1.0 / x.sqrt(),
        F32v2sqrt | F16v4sqrt => x.sqrt(),
        F32v2recip | F16v4recip => 1.0 / x,
        F32v2neg | F16v4neg => -x,
        F32v2abs | F16v4abs => x.abs(),
        F32v2sigmoid | F16v4sigmoid => 1.0 / (1.0 + (-x).exp()),
        F32v2gelu | F16v4gelu => 0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2)),
        F32v2relu | F16v4relu => relu(x),
        F32v2gelutanh | F16v4gelutanh => gelu_tanh(x),
        _ => x,
    }
}

#[inline(always)]
fn binary(op: Op, x: f32, y: f32) -> f32 {
    use Op::*;
    match op {
        F32v2add | F16v4add | F32add => x + y,
        F32v2sub | F16v4sub | F32sub => x - y,
        F32v2mul | F16v4mul | F32mul => x * y,
        F32v2div | F16v4div | F32div => x / y,
        F32v2max | F16v4max | F32max => maximum(x, y),
        F32v2min | F16v4min => minimum(x, y),
        F32v2pow | F16v4pow => (x as f64).powf(y as f64) as f32,
        _ => x,
    }
}

impl Tile {
    /// A tile with zeroed memory and nothing loaded.
    pub fn new(cfg: TileConfig) -> Tile {
        Tile {
            mem: pool::take(cfg.memory_bytes as usize),
            dirty: pool::Dirty::of_bytes(cfg.memory_bytes as usize),
            cfg,
            code: Arc::new([]),
            fast: Arc::new([]),
            code_exchange: (false, false),
            code_lo: 0,
            code_hi: 0,
            ctx: [Context::default(); WORKERS + 1],
            amp: [AmpState::default(); WORKERS],
            amp_pending: 0,
            banks: Vec::new(),
            active_bank: 0,
            bank_rows_t: 0,
            wcache: Vec::new(),
            wcache_fmt: WFmt::None,
            wcache_rows: 0,
            f8: &F8_TABLES,
            cycle: 0,
            sup: Sup::NotStarted,
            recv_sel: u32::MAX,
            engine_end: 0,
            stats: TileStats::default(),
            pending_fault: None,
            stop_pc: 0,
        }
    }

    pub fn config(&self) -> &TileConfig {
        &self.cfg
    }

    /// Copies an image into memory and decodes its code.
    pub fn load(&mut self, image: &TileImage) -> Result<(), HostAccessError> {
        self.load_shared(image, &mut DecodedCode::default())
    }

    /// [`Tile::load`], taking the decoded code from `cache` when it holds
    /// the same code words, else decoding them and keeping them there.
    pub fn load_shared(
        &mut self,
        image: &TileImage,
        cache: &mut DecodedCode,
    ) -> Result<(), HostAccessError> {
        for s in &image.segments {
            // Zeros onto pages never written change nothing (a linked
            // image's zero-filled ranges): skipped, so the pages stay
            // clean and untouched.
            let r = self.host_range(s.address, s.bytes.len())?;
            if self.dirty.clean(r) && s.bytes.iter().all(|&b| b == 0) {
                continue;
            }
            self.write(s.address, &s.bytes)?;
        }
        let base = self.cfg.memory_base;
        let lo = image
            .exec_ranges
            .iter()
            .map(|r| r.start)
            .min()
            .unwrap_or(base);
        let hi = image
            .exec_ranges
            .iter()
            .map(|r| r.end)
            .max()
            .unwrap_or(base);
        // Code words are whole: the range rounded out to words must lie in memory.
        let (lo4, hi4) = (lo & !3, hi.saturating_add(3) & !3);
        if lo > hi || lo4 < base || hi4 as u64 > base as u64 + self.mem.len() as u64 {
            return Err(self.host_error(lo, hi.saturating_sub(lo) as usize));
        }
        self.code_lo = lo4;
        self.code_hi = hi4;
        // Decoding depends on the words alone (the bytes and the ranges):
        // tiles loading the same code share one decoded copy.
        let raw = &self.mem[(lo4 - base) as usize..(hi4 - base) as usize];
        if cache.lo4 == lo4 && cache.ranges == image.exec_ranges && *cache.raw == *raw {
            self.code = cache.code.clone();
            self.fast = cache.fast.clone();
            self.code_exchange = cache.exchange;
            return Ok(());
        }
        // The words as decoded: outside the executable ranges, a word that
        // is no instruction.
        let words: Vec<u32> = (lo4..hi4)
            .step_by(4)
            .map(|a| {
                if image.exec_ranges.iter().any(|r| r.contains(&a)) {
                    let i = (a - base) as usize;
                    u32::from_le_bytes([
                        self.mem[i],
                        self.mem[i + 1],
                        self.mem[i + 2],
                        self.mem[i + 3],
                    ])
                } else {
                    u32::MAX
                }
            })
            .collect();
        let code: Vec<Pre> = words.iter().map(|&w| Pre::of(w)).collect();
        let fast: Vec<Fast> = (0..code.len()).map(|i| Fast::of(&code, i)).collect();
        let has = |ops: &[Op]| code.iter().any(|p| p.legal && ops.contains(&p.inst.op));
        let exchange = (has(&[Op::Send, Op::Exch]), has(&[Op::Recv, Op::Exch]));
        *cache = DecodedCode {
            ranges: image.exec_ranges.clone(),
            lo4,
            raw: raw.into(),
            code: code.into(),
            fast: fast.into(),
            exchange,
        };
        self.code = cache.code.clone();
        self.fast = cache.fast.clone();
        self.code_exchange = cache.exchange;
        Ok(())
    }

    /// Whether the loaded code holds an instruction that sends (`send`,
    /// `exch`) and one that receives (`recv`, `exch`).
    pub fn code_exchange(&self) -> (bool, bool) {
        self.code_exchange
    }

    /// Starts the supervisor at `pc` with `$m0 = arg`.
    pub fn start(&mut self, pc: u32, arg: u32) {
        let s = &mut self.ctx[SUP];
        *s = Context {
            pc,
            active: true,
            ready: self.cycle,
            ..Context::default()
        };
        s.m[0] = arg;
        self.sup = Sup::Running;
    }

    fn host_error(&self, addr: u32, len: usize) -> HostAccessError {
        HostAccessError {
            addr,
            len,
            base: self.cfg.memory_base,
            end: self.cfg.memory_end(),
        }
    }

    /// The offsets in `mem` of the bytes `addr..addr + len`, if all of them
    /// are in tile memory.
    fn host_range(&self, addr: u32, len: usize) -> Result<std::ops::Range<usize>, HostAccessError> {
        let off = addr.checked_sub(self.cfg.memory_base).map(|o| o as usize);
        match off {
            Some(o) if o.checked_add(len).is_some_and(|e| e <= self.mem.len()) => Ok(o..o + len),
            _ => Err(self.host_error(addr, len)),
        }
    }

    /// Host write into tile memory.
    pub fn write(&mut self, addr: u32, bytes: &[u8]) -> Result<(), HostAccessError> {
        let r = self.host_range(addr, bytes.len())?;
        self.dirty.mark(r.clone());
        self.mem[r].copy_from_slice(bytes);
        Ok(())
    }

    /// Host read of tile memory.
    pub fn read(&self, addr: u32, len: usize) -> Result<&[u8], HostAccessError> {
        let r = self.host_range(addr, len)?;
        Ok(&self.mem[r])
    }

    /// Host access to tile memory in place (the chip writes captured
    /// exchange words with it).
    pub fn memory_mut(&mut self, addr: u32, len: usize) -> Result<&mut [u8], HostAccessError> {
        let r = self.host_range(addr, len)?;
        self.dirty.mark(r.clone());
        Ok(&mut self.mem[r])
    }

    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    pub fn stats(&self) -> TileStats {
        TileStats {
            worker_issues: self.stats.issues - self.stats.supervisor_issues,
            ..self.stats
        }
    }

    /// A context's `$m` registers (workers 0..5, supervisor 6).
    pub fn m_regs(&self, context: usize) -> [u32; 16] {
        self.ctx[context.min(SUP)].m
    }

    /// Sets one `$m` register of a context (workers 0..5, supervisor 6;
    /// `reg` is taken mod 16). The chip simulator uses it to roll back the
    /// post-increment of a `recv` it asks to be retried.
    pub fn set_m_reg(&mut self, context: usize, reg: usize, value: u32) {
        self.ctx[context.min(SUP)].m[reg & 15] = value;
    }

    /// A context's `$a` registers.
    pub fn a_regs(&self, context: usize) -> [u32; 16] {
        self.ctx[context.min(SUP)].a
    }

    /// Continues after a chip-wide sync, at `cycle`.
    pub fn resume_from_sync(&mut self, cycle: u64) {
        if self.sup == Sup::WaitSync {
            self.sup = Sup::Running;
            self.cycle = self.cycle.max(cycle);
            self.ctx[SUP].ready = self.cycle;
        }
    }

    /// Runs to `halt`, resolving syncs as if the tile were alone (each sync
    /// takes `sync_cycles`).
    pub fn run_to_halt(
        &mut self,
        port: &mut dyn ExchangePort,
        max_cycles: u64,
    ) -> Result<Outcome, Fault> {
        let limit = self.cycle.saturating_add(max_cycles);
        loop {
            let left = limit.saturating_sub(self.cycle);
            match self.run(port, left)? {
                Outcome::Sync { cycle } => self.resume_from_sync(cycle + self.cfg.sync_cycles),
                other => return Ok(other),
            }
        }
    }

    /// The disassembled instruction (or bundle) at `pc`, as fault messages
    /// show it.
    pub fn instruction_at(&self, pc: u32) -> String {
        let idx = (pc.wrapping_sub(self.code_lo) >> 2) as usize;
        match self.code.get(idx) {
            _ if pc & 3 != 0 || pc < self.code_lo => "<no instruction: outside the code>".into(),
            Some(p) if p.legal => {
                let mut s = format_inst(&p.inst);
                if p.bundle {
                    if let Some(q) = self.code.get(idx + 1).filter(|q| q.legal) {
                        s = format!("{{ {s} ; {} }}", format_inst(&q.inst));
                    }
                }
                s
            }
            Some(p) => format!(".word {:#010x}", p.word),
            None => "<no instruction: outside the code>".into(),
        }
    }

    /// The pc of a context (workers 0..5, supervisor 6): the next
    /// instruction it issues.
    pub fn pc(&self, context: usize) -> u32 {
        self.ctx[context.min(SUP)].pc
    }

    /// The pc of the supervisor's latest `halt` or `sync` (0 before any).
    pub fn stop_pc(&self) -> u32 {
        self.stop_pc
    }

    fn fault(&self, ci: usize, pc: u32, kind: FaultKind) -> Fault {
        let instruction = self.instruction_at(pc);
        Fault {
            tile: self.cfg.tile_id,
            context: if ci == SUP {
                ContextId::Supervisor
            } else {
                ContextId::Worker(ci as u8)
            },
            pc,
            cycle: self.cycle,
            instruction,
            kind,
        }
    }

    /// Runs for at most `max_cycles` cycles.
    pub fn run(&mut self, port: &mut dyn ExchangePort, max_cycles: u64) -> Result<Outcome, Fault> {
        let limit = self.cycle.saturating_add(max_cycles);
        loop {
            match self.sup {
                Sup::Halted => return Ok(Outcome::Halted),
                Sup::WaitSync => return Ok(Outcome::Sync { cycle: self.cycle }),
                Sup::NotStarted => return Err(self.fault(SUP, 0, FaultKind::NotStarted)),
                _ => {}
            }
            if self.cycle >= limit {
                return Ok(Outcome::CycleLimit);
            }
            // The steady state: one barrel slot per cycle, no state change
            // of the supervisor that needs the checks above.
            let mut c = self.cycle;
            let mut slot = (c % WORKERS as u64) as usize;
            while c < limit {
                self.cycle = c;
                let w = &self.ctx[slot];
                if w.active && w.ready <= c {
                    self.issue(slot, port)?;
                } else if self.sup == Sup::Running && self.ctx[SUP].ready <= c {
                    self.issue(SUP, port)?;
                } else {
                    // Nobody issues now. Mostly the next slot's worker can
                    // issue in the next cycle (the earliest there is: no
                    // search); else jump to the next cycle someone can.
                    let w = &self.ctx[if slot + 1 == WORKERS { 0 } else { slot + 1 }];
                    if !(w.active && w.ready <= c + 1) {
                        let next = self.next_issue_cycle(c);
                        if next == u64::MAX {
                            if matches!(self.sup, Sup::Halted | Sup::WaitSync) {
                                break;
                            }
                            return Err(self.fault(SUP, self.ctx[SUP].pc, FaultKind::Deadlock));
                        }
                        c = next.min(limit);
                        slot = (c % WORKERS as u64) as usize;
                        continue;
                    }
                }
                c += 1;
                slot += 1;
                if slot == WORKERS {
                    slot = 0;
                }
                if matches!(self.sup, Sup::Halted | Sup::WaitSync) {
                    break;
                }
            }
            // A sync or halt takes effect at the end of its issue cycle; a
            // sync takes part in the chip-wide sync once the engine is done.
            self.cycle = c;
            if self.sup == Sup::WaitSync {
                self.cycle = self.cycle.max(self.engine_end);
                return Ok(Outcome::Sync { cycle: self.cycle });
            }
        }
    }

    fn next_issue_cycle(&self, c: u64) -> u64 {
        let mut next = u64::MAX;
        for (i, cx) in self.ctx[..WORKERS].iter().enumerate() {
            if cx.active {
                let r = cx.ready.max(c + 1);
                let aligned =
                    r + ((i as u64 + WORKERS as u64 - r % WORKERS as u64) % WORKERS as u64);
                next = next.min(aligned);
            }
        }
        if self.sup == Sup::Running {
            next = next.min(self.ctx[SUP].ready.max(c + 1));
        }
        next
    }

    /// Why the issue at `pc` is refused (the slow path of [`Tile::issue`]).
    fn issue_fault(&self, ci: usize, pc: u32) -> Fault {
        let idx = (pc.wrapping_sub(self.code_lo) >> 2) as usize;
        let kind = match self.code.get(idx) {
            _ if pc & 3 != 0 || pc < self.code_lo => FaultKind::PcOutOfCode { pc },
            None => FaultKind::PcOutOfCode { pc },
            Some(p) if !p.legal => FaultKind::IllegalInstruction { word: p.word },
            Some(_) if self.fast[idx].kind == IssueKind::Invalid => FaultKind::BadBundle,
            Some(_) => {
                let f = self.fast[idx];
                let mut insts = vec![f.first];
                if f.kind == IssueKind::Bundle {
                    insts.extend(self.fast.get(idx + 1).map(|g| g.first));
                }
                let mut k = FaultKind::BadBundle;
                for i in insts {
                    let o = info(i.op);
                    match (o.ctx, ci == SUP) {
                        (Ctx::Worker, true) => k = FaultKind::WorkerOnly(o.mnemonic),
                        (Ctx::Supervisor, false) => k = FaultKind::SupervisorOnly(o.mnemonic),
                        _ => {}
                    }
                }
                k
            }
        };
        self.fault(ci, pc, kind)
    }

    #[inline(always)]
    fn issue(&mut self, ci: usize, port: &mut dyn ExchangePort) -> Result<(), Fault> {
        let pc = self.ctx[ci].pc;
        let idx = (pc.wrapping_sub(self.code_lo) >> 2) as usize;
        let is_sup = ci == SUP;
        let f = match self.fast.get(idx) {
            Some(f) if pc & 3 == 0 && if is_sup { f.ok_supervisor } else { f.ok_worker } => f,
            _ => return Err(self.issue_fault(ci, pc)),
        };
        // Fields are read one by one (not by copying the entry) to keep
        // the hot path free of wide-store / narrow-load stalls.
        let (h_first, kind, words, turns) = (f.h_first, f.kind, f.words, f.turns);
        let first = f.first;
        let mut st = IssueState {
            pc,
            next: pc.wrapping_add(4 * words as u32),
            extra: 0,
            port,
        };
        // In a bundle the arithmetic slot executes first: a store in the
        // memory slot sees its result, a load's result is seen by the next issue.
        // SAFETY: the handlers came from `handlers()`, which gives
        // versions compiled for CPU features only on a CPU that has them.
        let r = unsafe {
            match kind {
                IssueKind::Bundle => {
                    // The arithmetic half: the next word's entry (a bundle
                    // is only valid with one).
                    let (h_second, second) = match self.fast.get(idx + 1) {
                        Some(g) => (g.h_first, g.first),
                        None => return Err(self.issue_fault(ci, pc)),
                    };
                    match h_second(self, ci, second, &mut st) {
                        Ok(()) => h_first(self, ci, first, &mut st),
                        e => e,
                    }
                }
                _ => h_first(self, ci, first, &mut st),
            }
        };
        if r.is_err() {
            let k = self.pending_fault.take().unwrap_or(FaultKind::BadBundle);
            return Err(self.fault(ci, pc, k));
        }
        let (mut next, extra) = (st.next, st.extra);
        let c = self.cycle;
        let cx = &mut self.ctx[ci];
        if cx.rpt_left > 0 && next == cx.rpt_end {
            if cx.rpt_left > 1 {
                cx.rpt_left -= 1;
                next = cx.rpt_start;
            } else {
                cx.rpt_left = 0;
            }
        }
        cx.pc = next;
        let ready = if is_sup {
            c + turns as u64 + extra
        } else {
            c + WORKERS as u64 * turns as u64
        };
        cx.ready = cx.ready.max(ready);
        self.stats.instructions += words as u64;
        self.stats.issues += 1;
        if is_sup {
            self.stats.supervisor_issues += 1;
        }
        Ok(())
    }

    /// The offset in `mem` of a program access of `size` bytes at `addr`:
    /// aligned, and wholly inside `memory_base..memory_end` (one subtraction
    /// and one comparison: an address below the base wraps to a huge offset).
    #[inline(always)]
    fn check(&self, addr: u32, size: u32) -> Result<usize, FaultKind> {
        if addr & (size - 1) != 0 {
            return Err(FaultKind::Misaligned { addr, align: size });
        }
        let off = addr.wrapping_sub(self.cfg.memory_base);
        if off as u64 + size as u64 > self.mem.len() as u64 {
            return Err(self.out_of_bounds(addr, size));
        }
        Ok(off as usize)
    }

    #[cold]
    fn out_of_bounds(&self, addr: u32, len: u32) -> FaultKind {
        FaultKind::OutOfBounds {
            addr,
            len,
            base: self.cfg.memory_base,
            end: self.cfg.memory_end(),
        }
    }

    #[inline(always)]
    fn check_store(&mut self, addr: u32, size: u32) -> Result<usize, FaultKind> {
        let a = self.check(addr, size)?;
        if addr < self.code_hi && addr + size > self.code_lo {
            return Err(FaultKind::StoreToCode { addr });
        }
        // An aligned store of at most 8 bytes lies in one page.
        self.dirty.mark_byte(a);
        Ok(a)
    }

    #[inline(always)]
    fn interleaved(&self, addr: u32) -> Result<(), FaultKind> {
        if addr < self.cfg.interleaved_start {
            Err(FaultKind::NotInterleaved { addr })
        } else {
            Ok(())
        }
    }

    #[inline(always)]
    fn ld32(&self, addr: u32) -> Result<u32, FaultKind> {
        let a = self.check(addr, 4)?;
        Ok(u32::from_le_bytes([
            self.mem[a],
            self.mem[a + 1],
            self.mem[a + 2],
            self.mem[a + 3],
        ]))
    }

    #[inline(always)]
    fn ld64(&self, addr: u32) -> Result<[u32; 2], FaultKind> {
        let a = self.check(addr, 8)?;
        let m = &self.mem[a..a + 8];
        Ok([
            u32::from_le_bytes([m[0], m[1], m[2], m[3]]),
            u32::from_le_bytes([m[4], m[5], m[6], m[7]]),
        ])
    }

    #[inline(always)]
    fn st64(&mut self, addr: u32, v: [u32; 2]) -> Result<(), FaultKind> {
        let a = self.check_store(addr, 8)?;
        self.mem[a..a + 4].copy_from_slice(&v[0].to_le_bytes());
        self.mem[a + 4..a + 8].copy_from_slice(&v[1].to_le_bytes());
        Ok(())
    }

    /// Effective address of a `Mem` operand, applying post-increment.
    #[inline(always)]
    fn ea(&mut self, ci: usize, base: u8, inst: &Inst) -> u32 {
        let m = &mut self.ctx[ci].m;
        let b = m[base as usize];
        if inst.post {
            m[base as usize] = b.wrapping_add(inst.imm as u32);
            b
        } else {
            b.wrapping_add(inst.imm as u32)
        }
    }

    /// Address of a post-increment-by-`n` operand.
    #[inline(always)]
    fn post(&mut self, ci: usize, base: u8, n: u32) -> u32 {
        let m = &mut self.ctx[ci].m;
        let b = m[base as usize];
        m[base as usize] = b.wrapping_add(n);
        b
    }

    /// A branch to its own address, unless it is the end of an active
    /// repeat body (which goes back to the body's start), leaves the
    /// context issuing it forever: a livelock, reported at once rather
    /// than after the cycle budget.
    #[inline(always)]
    fn progress(&self, ci: usize, st: &IssueState) -> Result<(), FaultKind> {
        let cx = &self.ctx[ci];
        if st.next == st.pc && !(cx.rpt_left > 0 && st.pc == cx.rpt_end) {
            return Err(FaultKind::SelfLoop);
        }
        Ok(())
    }

    /// The end E of the latest exchange-engine row (0 if none ran): the
    /// engine runs while the cycle is below it.
    pub fn engine_end(&self) -> u64 {
        self.engine_end
    }

    /// Reads and checks the exchange row at `addr` for an `exch` at `pc`
    /// issuing now, and reads its send bytes.
    fn engine_row(&self, addr: u32, pc: u32) -> Result<EngineRow, FaultKind> {
        use ipu_isa::exchange_row::{decode_row, RowEntry, RowError};
        let bad = |e| Err(FaultKind::ExchRow(e));
        if addr & 3 != 0 {
            return bad(RowError::Misaligned { addr });
        }
        let base = self.cfg.memory_base;
        if addr < base {
            return bad(RowError::Outside { addr });
        }
        let bytes = self.mem.get((addr - base) as usize..).unwrap_or(&[]);
        let entries = decode_row(bytes, addr).map_err(FaultKind::ExchRow)?;
        let t0 = self.cycle + 1 + self.cfg.phase_fixed_cycles;
        let (lo, hi) = (base as u64, self.cfg.memory_end() as u64);
        // Each list allocated once, at its size.
        let (mut selects, mut captures, mut sends, mut send_bytes) = (0, 0, 0, 0u64);
        for e in &entries {
            match e {
                RowEntry::Select { .. } => selects += 1,
                RowEntry::Capture { .. } => captures += 1,
                RowEntry::Send { .. } => {
                    sends += 1;
                    send_bytes += 4 * e.data_words() as u64;
                }
            }
        }
        let mut row = EngineRow {
            pc,
            addr,
            issue: self.cycle,
            t0,
            end: t0,
            selects: Vec::with_capacity(selects),
            captures: Vec::with_capacity(captures),
            sends: Vec::with_capacity(sends),
            data: std::sync::Arc::default(),
        };
        // (Capped: a refused row must not allocate its claimed size first.)
        let mut data = Vec::with_capacity(send_bytes.min(hi) as usize);
        for (k, e) in entries.iter().enumerate() {
            let entry = k as u32;
            let start = t0 + e.cycle() as u64;
            match *e {
                RowEntry::Select { sender, .. } => {
                    row.selects.push((start, sender.unwrap_or(u32::MAX)));
                    continue;
                }
                RowEntry::Capture {
                    addr, len, partner, ..
                } => {
                    if (addr as u64) < lo || addr as u64 + len as u64 > hi {
                        return bad(RowError::RangeOutside { entry, addr, len });
                    }
                    if addr < self.code_hi && addr as u64 + len as u64 > self.code_lo as u64 {
                        return bad(RowError::CaptureIntoCode { entry, addr, len });
                    }
                    if partner && self.cfg.supertile_tiles < 2 {
                        return bad(RowError::NoPartner { entry });
                    }
                    row.captures.push(EngineCapture {
                        start,
                        partner,
                        addr,
                        len,
                        entry,
                    });
                }
                RowEntry::Send { addr, len, .. } => {
                    if (addr as u64) < lo || addr as u64 + len as u64 > hi {
                        return bad(RowError::RangeOutside { entry, addr, len });
                    }
                    let offset = data.len() as u64;
                    let from = (addr - base) as usize;
                    data.extend_from_slice(&self.mem[from..from + len as usize]);
                    data.resize(offset as usize + 4 * e.data_words() as usize, 0);
                    row.sends.push(EngineSend {
                        start,
                        words: e.data_words(),
                        offset,
                    });
                }
            }
            row.end = row.end.max(start + e.data_words() as u64);
        }
        // Moved, not copied: the fabric shares these bytes with the row.
        row.data = std::sync::Arc::new(data);
        Ok(row)
    }

    /// Allocates the weight banks (zero) and the decoded-weight cache on
    /// first use.
    #[cold]
    fn alloc_amp_storage(&mut self) {
        self.banks = vec![[0; AMP_BANK_BYTES]; 2];
        self.wcache = vec![0.0; AMP_BANK_BYTES];
    }

    #[inline(always)]
    fn amp_storage(&mut self) {
        if self.banks.is_empty() {
            self.alloc_amp_storage();
        }
    }

    fn weight_write(&mut self, offset: u32, bytes: &[u8]) {
        // Writes past the bank are dropped, so kernels may over-fetch.
        let o = offset as usize;
        if o + bytes.len() <= AMP_BANK_BYTES {
            self.amp_storage();
            self.banks[1 - self.active_bank][o..o + bytes.len()].copy_from_slice(bytes);
        }
    }

    /// The memory-slot ops not in [`Tile::exec_mem`]'s first match; `op`
    /// is `i.op`, a constant in each handler, so only its arm remains.
    #[inline(always)]
    fn exec_mem_rare(
        &mut self,
        op: Op,
        ci: usize,
        i: &Inst,
        extra: &mut u64,
        port: &mut dyn ExchangePort,
    ) -> Result<(), FaultKind> {
        use Op::*;
        let r = i.regs;
        let (d, s, _t) = (r[0] as usize, r[1] as usize, r[2] as usize);
        let _ = s;
        match op {
            Bndchk => {
                let (index, bound) = (self.ctx[ci].m[d & 15], self.ctx[ci].m[s & 15]);
                if index >= bound {
                    return Err(FaultKind::IndexOutOfRange {
                        index: index as i32,
                        bound,
                    });
                }
            }
            Ldxw => {
                let pa = self.post(ci, r[1], 8);
                let qa = self.post(ci, r[2], 8);
                self.interleaved(pa)?;
                self.interleaved(qa)?;
                let v = self.ld64(pa)?;
                let w = self.ld64(qa)?;
                let o = self.ctx[ci].m[r[3] as usize];
                self.ctx[ci].m[r[3] as usize] = o.wrapping_add(8);
                let mut b = [0u8; 8];
                b[..4].copy_from_slice(&w[0].to_le_bytes());
                b[4..].copy_from_slice(&w[1].to_le_bytes());
                self.weight_write(o, &b);
                self.ctx[ci].a[d..d + 2].copy_from_slice(&v);
            }
            Wld64 | Wld128 => {
                let n = if op == Wld64 { 8 } else { 16 };
                let pa = self.post(ci, r[0], n);
                if n == 16 {
                    self.interleaved(pa)?;
                }
                let a = self.check(pa, n)?;
                let mut b = [0u8; 16];
                b[..n as usize].copy_from_slice(&self.mem[a..a + n as usize]);
                let o = self.ctx[ci].m[r[1] as usize];
                self.ctx[ci].m[r[1] as usize] = o.wrapping_add(n);
                self.weight_write(o, &b[..n as usize]);
            }
            Ampswap => {
                self.flush_amp();
                self.active_bank ^= 1;
                self.bank_rows_t = 0;
                self.wcache_fmt = WFmt::None;
            }
            Ampswapt => {
                let rows = self.ctx[ci].m[r[0] as usize];
                // 16 columns of `rows` weights of the narrowest (1-byte)
                // type must fit the bank at all; wider types are checked
                // when the AMP reads them.
                if rows == 0 || rows as usize * AMP_COLUMNS > AMP_BANK_BYTES {
                    return Err(FaultKind::AmpWeights {
                        end: rows as usize * AMP_COLUMNS,
                    });
                }
                self.flush_amp();
                self.active_bank ^= 1;
                self.bank_rows_t = rows;
                self.wcache_fmt = WFmt::None;
            }
            Ampk => {
                self.flush_amp();
                let kph = self.ctx[ci].m[d];
                self.amp[ci] = AmpState {
                    kph,
                    ..AmpState::default()
                };
            }
            Setscl => self.ctx[ci].scale = self.ctx[ci].m[d] as i32,
            Run => {
                let entry = self.ctx[ci].m[d];
                let arg = self.ctx[ci].m[s];
                let w = (0..WORKERS)
                    .find(|&w| !self.ctx[w].active)
                    .ok_or(FaultKind::NoFreeWorker)?;
                let c = self.cycle + 1;
                let first = c + ((w as u64 + WORKERS as u64 - c % WORKERS as u64) % WORKERS as u64);
                let mut cx = Context {
                    pc: entry,
                    active: true,
                    ready: first,
                    ..Context::default()
                };
                cx.m[0] = arg;
                cx.m[1] = w as u32;
                self.ctx[w] = cx;
            }
            Exit => {
                self.ctx[ci].active = false;
                if let Sup::WaitWorkers { then_sync } = self.sup {
                    if self.ctx[..WORKERS].iter().all(|c| !c.active) {
                        self.sup = if then_sync {
                            Sup::WaitSync
                        } else {
                            Sup::Running
                        };
                        self.ctx[SUP].ready = self.ctx[SUP].ready.max(self.cycle + 1);
                    }
                }
            }
            Sync => {
                self.stop_pc = self.ctx[ci].pc;
                let busy = self.ctx[..WORKERS].iter().any(|c| c.active);
                let then_sync = i.imm != 0;
                self.sup = match (busy, then_sync) {
                    (true, _) => Sup::WaitWorkers { then_sync },
                    (false, true) => Sup::WaitSync,
                    (false, false) => Sup::Running,
                };
            }
            Halt => {
                if self.ctx[..WORKERS].iter().any(|c| c.active) {
                    return Err(FaultKind::HaltWithWorkers);
                }
                if self.cycle < self.engine_end {
                    return Err(FaultKind::HaltWithEngine {
                        end: self.engine_end,
                    });
                }
                self.stop_pc = self.ctx[ci].pc;
                self.sup = Sup::Halted;
            }
            Getc => self.ctx[ci].m[d] = self.cycle as u32,
            Getid => self.ctx[ci].m[d] = ci as u32,
            Gettile => self.ctx[ci].m[d] = self.cfg.tile_id,
            Delay => *extra = i.imm as u64,
            Send => {
                let addr = self.ea(ci, r[0], i);
                let w = self.ld32(addr)?;
                port.send(self.cfg.tile_id, self.cycle, w)
                    .map_err(|first| FaultKind::DoubleSend { first, second: w })?;
            }
            Recv => {
                let addr = self.ea(ci, r[0], i);
                if self.recv_sel == u32::MAX {
                    return Err(FaultKind::NoSender);
                }
                let a = self.check_store(addr, 4)?;
                let w = port
                    .receive(self.cfg.tile_id, self.cycle, self.recv_sel)
                    .ok_or(FaultKind::NoData {
                        sender: self.recv_sel,
                    })?;
                self.mem[a..a + 4].copy_from_slice(&w.to_le_bytes());
            }
            Recvsel => self.recv_sel = self.ctx[ci].m[d],
            Exch => {
                if self.cycle < self.engine_end {
                    return Err(FaultKind::EngineBusy {
                        end: self.engine_end,
                    });
                }
                let row = self.engine_row(self.ctx[ci].m[d], self.ctx[ci].pc)?;
                self.engine_end = row.end;
                port.start_row(self.cfg.tile_id, row);
            }
            _ => return Err(FaultKind::BadBundle),
        }
        Ok(())
    }

    #[inline(always)]
    fn exec_mem(
        &mut self,
        op: Op,
        ci: usize,
        i: &Inst,
        st: &mut IssueState,
    ) -> Result<(), FaultKind> {
        use Op::*;
        let r = i.regs;
        let (d, s, t) = (r[0] as usize & 15, r[1] as usize & 15, r[2] as usize & 15);
        match op {
            Nop => {}
            SetziM => self.ctx[ci].m[d] = i.imm as u32,
            SetziA => self.ctx[ci].a[d] = i.imm as u32,
            SethiM => {
                let m = &mut self.ctx[ci].m[d];
                *m = (*m & 0xffff) | (i.imm as u32) << 16;
            }
            SethiA => {
                let a = &mut self.ctx[ci].a[d];
                *a = (*a & 0xffff) | (i.imm as u32) << 16;
            }
            MovMM => self.ctx[ci].m[d] = self.ctx[ci].m[s],
            MovAM => self.ctx[ci].a[d] = self.ctx[ci].m[s],
            MovMA => self.ctx[ci].m[d] = self.ctx[ci].a[s],
            Add | Sub | Mul | And | Or | Xor | Shl | Shr | Sar | Min | Max | Cmpeq | Cmplt
            | Cmpult | Divu | Remu => {
                let m = &mut self.ctx[ci].m;
                let (x, y) = (m[s], m[t]);
                m[d] = match op {
                    Add => x.wrapping_add(y),
                    Sub => x.wrapping_sub(y),
                    Mul => x.wrapping_mul(y),
                    And => x & y,
                    Or => x | y,
                    Xor => x ^ y,
                    Shl => x.wrapping_shl(y & 31),
                    Shr => x.wrapping_shr(y & 31),
                    Sar => ((x as i32) >> (y & 31)) as u32,
                    Min => (x as i32).min(y as i32) as u32,
                    Max => (x as i32).max(y as i32) as u32,
                    Cmpeq => (x == y) as u32,
                    Cmplt => ((x as i32) < (y as i32)) as u32,
                    Cmpult => (x < y) as u32,
                    Divu | Remu if y == 0 => return Err(FaultKind::DivideByZero),
                    Divu => x / y,
                    _ => x % y,
                };
            }
            Addi | Andi | Ori | Shli | Shri | Sari | Muli | Cmpeqi | Cmplti | Mini => {
                let m = &mut self.ctx[ci].m;
                let x = m[s];
                let y = i.imm as u32;
                m[d] = match op {
                    Addi => x.wrapping_add(y),
                    Andi => x & y,
                    Ori => x | y,
                    Shli => x.wrapping_shl(y & 31),
                    Shri => x.wrapping_shr(y & 31),
                    Sari => ((x as i32) >> (y & 31)) as u32,
                    Muli => x.wrapping_mul(y),
                    Cmpeqi => (x == y) as u32,
                    Cmplti => ((x as i32) < i.imm) as u32,
                    _ => (x as i32).min(i.imm) as u32,
                };
            }
            Ld8 | Ld16 | Ld32M | Ld32A | Ld64 | Ld128 => {
                let addr = self.ea(ci, r[1], i);
                match op {
                    Ld8 => {
                        self.ctx[ci].m[d] =
                            self.mem.get(self.check(addr, 1)?).copied().unwrap_or(0) as u32
                    }
                    Ld16 => {
                        let a = self.check(addr, 2)?;
                        self.ctx[ci].m[d] =
                            u16::from_le_bytes([self.mem[a], self.mem[a + 1]]) as u32;
                    }
                    Ld32M => self.ctx[ci].m[d] = self.ld32(addr)?,
                    Ld32A => self.ctx[ci].a[d] = self.ld32(addr)?,
                    Ld64 => {
                        let v = self.ld64(addr)?;
                        self.ctx[ci].a[d..d + 2].copy_from_slice(&v);
                    }
                    _ => {
                        self.interleaved(addr)?;
                        self.check(addr, 16)?;
                        let lo = self.ld64(addr)?;
                        let hi = self.ld64(addr + 8)?;
                        self.ctx[ci].a[d..d + 4].copy_from_slice(&[lo[0], lo[1], hi[0], hi[1]]);
                    }
                }
            }
            St8 | St16 | St32M | St32A | St64 => {
                let addr = self.ea(ci, r[1], i);
                let cx = self.ctx[ci];
                match op {
                    St8 => {
                        let a = self.check_store(addr, 1)?;
                        self.mem[a] = cx.m[d] as u8;
                    }
                    St16 => {
                        let a = self.check_store(addr, 2)?;
                        self.mem[a..a + 2].copy_from_slice(&(cx.m[d] as u16).to_le_bytes());
                    }
                    St32M | St32A => {
                        let a = self.check_store(addr, 4)?;
                        let v = if op == St32M { cx.m[d] } else { cx.a[d] };
                        self.mem[a..a + 4].copy_from_slice(&v.to_le_bytes());
                    }
                    _ => self.st64(addr, [cx.a[d], cx.a[d + 1]])?,
                }
            }
            Ldst64 => {
                let (pa, qa) = (self.post(ci, r[1], 8), self.post(ci, r[3], 8));
                let v = self.ld64(pa)?;
                let st = [self.ctx[ci].a[t], self.ctx[ci].a[t + 1]];
                self.st64(qa, st)?;
                self.ctx[ci].a[d..d + 2].copy_from_slice(&v);
            }
            Ld2st64 | Ld2x64 => {
                let pa = self.post(ci, r[1], 8);
                let qa = self.post(ci, r[3], 8);
                self.interleaved(pa)?;
                self.interleaved(qa)?;
                let v1 = self.ld64(pa)?;
                let v2 = self.ld64(qa)?;
                if op == Ld2st64 {
                    let ra = self.post(ci, r[5], 8);
                    let e = r[4] as usize;
                    let st = [self.ctx[ci].a[e], self.ctx[ci].a[e + 1]];
                    self.st64(ra, st)?;
                }
                self.ctx[ci].a[d..d + 2].copy_from_slice(&v1);
                self.ctx[ci].a[t..t + 2].copy_from_slice(&v2);
            }
            Br => {
                st.next = st.pc.wrapping_add((i.imm as u32).wrapping_mul(4));
                self.progress(ci, st)?;
            }
            Brz | Brnz | Brneg => {
                let v = self.ctx[ci].m[d];
                let take = match op {
                    Brz => v == 0,
                    Brnz => v != 0,
                    _ => (v as i32) < 0,
                };
                if take {
                    st.next = st.pc.wrapping_add((i.imm as u32).wrapping_mul(4));
                    // Taken to itself: nothing it reads changes, so forever.
                    self.progress(ci, st)?;
                }
            }
            Call => {
                self.ctx[ci].m[d] = st.next;
                st.next = st.pc.wrapping_add((i.imm as u32).wrapping_mul(4));
                self.progress(ci, st)?;
            }
            Jmp => {
                st.next = self.ctx[ci].m[d];
                self.progress(ci, st)?;
            }
            Rpt => {
                let count = self.ctx[ci].m[d];
                let end = st.pc.wrapping_add(4).wrapping_add((i.imm as u32) * 4);
                // Nested even when it would skip its body: the nesting is
                // the program's error, whatever the count.
                if self.ctx[ci].rpt_left > 0 {
                    return Err(FaultKind::NestedRpt);
                }
                if count == 0 {
                    st.next = end;
                } else {
                    let cx = &mut self.ctx[ci];
                    cx.rpt_start = st.pc.wrapping_add(4);
                    cx.rpt_end = end;
                    cx.rpt_left = count;
                }
            }
            _ => return self.exec_mem_rare(op, ci, i, &mut st.extra, &mut *st.port),
        }
        Ok(())
    }

    /// The arithmetic-slot ops not in [`Tile::exec_arith`]'s first match
    /// (`op` as in [`Tile::exec_mem_rare`]).
    #[inline(always)]
    fn exec_arith_rare(&mut self, op: Op, ci: usize, i: &Inst) -> Result<(), FaultKind> {
        use Op::*;
        let r = i.regs;
        let (d, s, t) = (r[0] as usize & 15, r[1] as usize & 15, r[2] as usize & 15);
        let scale = self.ctx[ci].scale;
        let a = &mut self.ctx[ci].a;
        let _ = t;
        match op {
            F16v4dup => {
                let h = f16_bits(f32::from_bits(a[s])) as u32;
                a[d] = h | h << 16;
                a[d + 1] = h | h << 16;
            }
            Pack16 => a[d] = (a[s] & 0xffff) | a[t] << 16,
            Hi16 => a[d] = a[s] >> 16,
            CvtF32F16 => {
                a[d] = f16_bits(f32::from_bits(a[s])) as u32
                    | (f16_bits(f32::from_bits(a[s + 1])) as u32) << 16
            }
            CvtF16F32 => {
                let v = a[s];
                a[d] = f16_value(v as u16).to_bits();
                a[d + 1] = f16_value((v >> 16) as u16).to_bits();
            }
            CvtF32Bf16 => {
                a[d] = bf16_bits(f32::from_bits(a[s])) as u32
                    | (bf16_bits(f32::from_bits(a[s + 1])) as u32) << 16
            }
            CvtBf16F32 => {
                let v = a[s];
                a[d] = bf16_value(v as u16).to_bits();
                a[d + 1] = bf16_value((v >> 16) as u16).to_bits();
            }
            CvtF16Bf16 => {
                let v = a[s];
                a[d] = bf16_bits(f16_value(v as u16)) as u32
                    | (bf16_bits(f16_value((v >> 16) as u16)) as u32) << 16;
            }
            CvtBf16F16 => {
                let v = a[s];
                a[d] = f16_bits(bf16_value(v as u16)) as u32
                    | (f16_bits(bf16_value((v >> 16) as u16)) as u32) << 16;
            }
            CvtF32F8e4 | CvtF32F8e5 => {
                let f = if op == CvtF32F8e4 {
                    F8Format::E4M3FN
                } else {
                    F8Format::E5M2
                };
                let q0 = fp8::f8_code(f32::from_bits(a[s]), scale, f) as u32;
                let q1 = fp8::f8_code(f32::from_bits(a[s + 1]), scale, f) as u32;
                a[d] = q0 | q1 << 8;
            }
            CvtF16F8e4 | CvtF16F8e5 => {
                let f = if op == CvtF16F8e4 {
                    F8Format::E4M3FN
                } else {
                    F8Format::E5M2
                };
                let x = f16x4(a[s], a[s + 1]);
                let mut v = 0u32;
                for (k, x) in x.iter().enumerate() {
                    v |= (fp8::f8_code(*x, scale, f) as u32) << (8 * k);
                }
                a[d] = v;
            }
            CvtF8e4F16 | CvtF8e5F16 => {
                let lut = if op == CvtF8e4F16 {
                    &self.f8.0
                } else {
                    &self.f8.1
                };
                let v = a[s];
                let m = pow2f(scale);
                let x = [0, 1, 2, 3].map(|k| lut[(v >> (8 * k)) as u8 as usize] * m);
                (a[d], a[d + 1]) = pack_f16x4(x);
            }
            CvtF8e4F32 | CvtF8e5F32 => {
                let lut = if op == CvtF8e4F32 {
                    &self.f8.0
                } else {
                    &self.f8.1
                };
                let v = a[s];
                let m = pow2f(scale);
                a[d] = (lut[v as u8 as usize] * m).to_bits();
                a[d + 1] = (lut[(v >> 8) as u8 as usize] * m).to_bits();
            }
            F32v2cmpeq | F32v2cmplt => {
                let x = [f32::from_bits(a[s]), f32::from_bits(a[s + 1])];
                let y = [f32::from_bits(a[t]), f32::from_bits(a[t + 1])];
                let eq = op == F32v2cmpeq;
                a[d] = mask_bytes((0..2).map(|k| if eq { x[k] == y[k] } else { x[k] < y[k] }));
            }
            F16v4cmpeq | F16v4cmplt => {
                let x = f16x4(a[s], a[s + 1]);
                let y = f16x4(a[t], a[t + 1]);
                let eq = op == F16v4cmpeq;
                a[d] = mask_bytes((0..4).map(|k| if eq { x[k] == y[k] } else { x[k] < y[k] }));
            }
            F32v2sel | F16v4sel => {
                // Operands d, c (the mask), s, t: lane k of d is lane k of
                // s where byte k of c is non-zero, else lane k of t.
                let (c, x, y) = (a[s], r[2] as usize & 15, r[3] as usize & 15);
                let pick = |k: usize, v: [u32; 2], w: [u32; 2]| {
                    if (c >> (8 * k)) & 0xff != 0 {
                        v
                    } else {
                        w
                    }
                };
                let (v, w) = ([a[x], a[x + 1]], [a[y], a[y + 1]]);
                let out = if op == F32v2sel {
                    [pick(0, v, w)[0], pick(1, v, w)[1]]
                } else {
                    // Four 16-bit lanes, two per word.
                    let lane = |k: usize| {
                        let word = pick(k, v, w)[k / 2];
                        (word >> (16 * (k % 2))) & 0xffff
                    };
                    [lane(0) | lane(1) << 16, lane(2) | lane(3) << 16]
                };
                a[d] = out[0];
                a[d + 1] = out[1];
            }
            I1v8and | I1v8or | I1v8not => {
                let (x, y) = ([a[s], a[s + 1]], [a[t], a[t + 1]]);
                let out = match op {
                    I1v8and => byte_logic(x, y, |p, q| p && q),
                    I1v8or => byte_logic(x, y, |p, q| p || q),
                    _ => byte_logic(x, x, |p, _| !p),
                };
                a[d] = out[0];
                a[d + 1] = out[1];
            }
            AmpF32F32 | AmpF16F32 | AmpF16F16 | AmpF8e4F16 | AmpF8e5F16 => {
                return self.amp(op, ci, i)
            }
            _ => return Err(FaultKind::BadBundle),
        }
        Ok(())
    }

    #[inline(always)]
    fn exec_arith(&mut self, op: Op, ci: usize, i: &Inst) -> Result<(), FaultKind> {
        use Op::*;
        let r = i.regs;
        let (d, s, t) = (r[0] as usize & 15, r[1] as usize & 15, r[2] as usize & 15);
        let a = &mut self.ctx[ci].a;
        match op {
            F32v2add | F32v2sub | F32v2mul | F32v2div | F32v2max | F32v2min | F32v2pow => {
                let x = [f32::from_bits(a[s]), f32::from_bits(a[s + 1])];
                let y = [f32::from_bits(a[t]), f32::from_bits(a[t + 1])];
                a[d] = binary(op, x[0], y[0]).to_bits();
                a[d + 1] = binary(op, x[1], y[1]).to_bits();
            }
            F32v2fma => {
                for k in 0..2 {
                    let acc = f32::from_bits(a[d + k]);
                    a[d + k] = f32::from_bits(a[s + k])
                        .mul_add(f32::from_bits(a[t + k]), acc)
                        .to_bits();
                }
            }
            F16v4add | F16v4sub | F16v4mul | F16v4div | F16v4max | F16v4min | F16v4fma
            | F16v4pow => {
                let x = f16x4(a[s], a[s + 1]);
                let y = f16x4(a[t], a[t + 1]);
                let o = if op == F16v4fma {
                    let z = f16x4(a[d], a[d + 1]);
                    [
                        x[0].mul_add(y[0], z[0]),
                        x[1].mul_add(y[1], z[1]),
                        x[2].mul_add(y[2], z[2]),
                        x[3].mul_add(y[3], z[3]),
                    ]
                } else {
                    [
                        binary(op, x[0], y[0]),
                        binary(op, x[1], y[1]),
                        binary(op, x[2], y[2]),
                        binary(op, x[3], y[3]),
                    ]
                };
                (a[d], a[d + 1]) = pack_f16x4(o);
            }
            F32v2exp | F32v2log | F32v2tanh | F32v2erf | F32v2rsqrt | F32v2sqrt | F32v2recip
            | F32v2neg | F32v2abs | F32v2sigmoid | F32v2gelu | F32v2relu | F32v2gelutanh => {
                let (x0, x1) = (f32::from_bits(a[s]), f32::from_bits(a[s + 1]));
                a[d] = unary(op, x0).to_bits();
                a[d + 1] = unary(op, x1).to_bits();
            }
            F16v4exp | F16v4log | F16v4tanh | F16v4erf | F16v4rsqrt | F16v4sqrt | F16v4recip
            | F16v4neg | F16v4abs | F16v4sigmoid | F16v4gelu | F16v4relu | F16v4gelutanh => {
                let x = f16x4(a[s], a[s + 1]);
                (a[d], a[d + 1]) = pack_f16x4([
                    unary(op, x[0]),
                    unary(op, x[1]),
                    unary(op, x[2]),
                    unary(op, x[3]),
                ]);
            }
            F32v2hadd => a[d] = (f32::from_bits(a[s]) + f32::from_bits(a[s + 1])).to_bits(),
            F32v2hmax => a[d] = maximum(f32::from_bits(a[s]), f32::from_bits(a[s + 1])).to_bits(),
            F16v4hadd => {
                let x = f16x4(a[s], a[s + 1]);
                a[d] = ((x[0] + x[1]) + (x[2] + x[3])).to_bits();
            }
            F16v4hmax => {
                let x = f16x4(a[s], a[s + 1]);
                a[d] = maximum(maximum(x[0], x[1]), maximum(x[2], x[3])).to_bits();
            }
            F32add | F32sub | F32mul | F32div | F32max => {
                a[d] = binary(op, f32::from_bits(a[s]), f32::from_bits(a[t])).to_bits()
            }
            F32v2dup => {
                let v = a[s];
                a[d] = v;
                a[d + 1] = v;
            }
            Mov64 => {
                let (x, y) = (a[s], a[s + 1]);
                a[d] = x;
                a[d + 1] = y;
            }
            Zero64 => {
                a[d] = 0;
                a[d + 1] = 0;
            }
            MovA => a[d] = a[s],
            _ => return self.exec_arith_rare(op, ci, i),
        }
        Ok(())
    }

    /// Decodes the active bank's rows up to `upto` (at least, in blocks
    /// of 16, never past the bank) into `wcache` as `fmt`, restarting
    /// from row 0 when the cache holds another format.
    #[cold]
    fn decode_weights(&mut self, fmt: WFmt, upto: usize) {
        self.flush_amp();
        self.amp_storage();
        if self.wcache_fmt != fmt {
            self.wcache_fmt = fmt;
            self.wcache_rows = 0;
        }
        let eb = match fmt {
            WFmt::F32 => 4,
            WFmt::F16 => 2,
            _ => 1,
        };
        let bank = &self.banks[self.active_bank];
        let rows_t = self.bank_rows_t as usize;
        let all = if rows_t > 0 {
            rows_t
        } else {
            AMP_BANK_BYTES / (AMP_COLUMNS * eb)
        };
        let (r0, r1) = (self.wcache_rows, (upto.next_multiple_of(16)).min(all));
        let lut = if fmt == WFmt::E5 {
            &self.f8.1
        } else {
            &self.f8.0
        };
        let value = |b: &[u8]| match fmt {
            WFmt::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            WFmt::F16 => f16_value(u16::from_le_bytes([b[0], b[1]])),
            WFmt::E4 | WFmt::E5 => lut[b[0] as usize],
            WFmt::None => 0.0,
        };
        if rows_t > 0 {
            // Column by column: weight (k, c) is element c * rows + k, laid
            // out here row by row as the AMP reads it.
            for c in 0..AMP_COLUMNS {
                for k in r0..r1 {
                    let at = (c * rows_t + k) * eb;
                    if let Some(b) = bank.get(at..at + eb) {
                        self.wcache[k * AMP_COLUMNS + c] = value(b);
                    }
                }
            }
        } else {
            let bytes = &bank[r0 * AMP_COLUMNS * eb..r1 * AMP_COLUMNS * eb];
            let out = &mut self.wcache[r0 * AMP_COLUMNS..r1 * AMP_COLUMNS];
            match fmt {
                WFmt::E4 | WFmt::E5 => {
                    for (w, b) in out.iter_mut().zip(bytes) {
                        *w = lut[*b as usize];
                    }
                }
                _ => {
                    for (w, b) in out.iter_mut().zip(bytes.chunks_exact(eb)) {
                        *w = value(b);
                    }
                }
            }
        }
        self.wcache_rows = self.wcache_rows.max(r1);
    }

    /// Adds every context's [`PendingMacs`] to its accumulators, one
    /// context after another in a tight loop (where the host overlaps
    /// their chains of adds).
    #[inline(always)]
    fn flush_amp(&mut self) {
        let mut m = self.amp_pending;
        self.amp_pending = 0;
        while m != 0 {
            let w = m.trailing_zeros() as usize;
            m &= m - 1;
            let st = &mut self.amp[w];
            let p = st.pending;
            let (k, r0) = (p.k as usize, p.row0 as usize);
            if let Some(w) = self.wcache.get(r0 * AMP_COLUMNS..(r0 + k) * AMP_COLUMNS) {
                amp_macs(&mut st.acc, &p.xs[..k], w.as_chunks::<AMP_COLUMNS>().0);
            }
            if p.drain {
                st.drain = st.acc;
                st.acc = [0.0; AMP_COLUMNS];
            }
        }
    }

    #[inline(always)]
    fn amp(&mut self, op: Op, ci: usize, i: &Inst) -> Result<(), FaultKind> {
        let Some(mode) = AmpMode::of(op) else {
            return Err(FaultKind::BadBundle);
        };
        let fmt = match op {
            Op::AmpF32F32 => WFmt::F32,
            Op::AmpF16F32 | Op::AmpF16F16 => WFmt::F16,
            Op::AmpF8e4F16 => WFmt::E4,
            _ => WFmt::E5,
        };
        let (ro, rx, rp) = (i.regs[0] as usize, i.regs[1] as usize, i.regs[2] as usize);
        let cx = &self.ctx[ci];
        let x = [cx.a[rx], cx.a[rx + 1]];
        let pin = [cx.a[rp], cx.a[rp + 1]];
        let scale = pow2f(cx.scale);
        let st = &mut self.amp[ci];
        let drain_n = mode.drain_instrs() as u32;
        if st.kph < drain_n {
            return Err(FaultKind::AmpRow {
                kph: st.kph,
                need: drain_n,
            });
        }
        let p = st.phase as usize;
        let k0 = p * mode.k_per_instr;
        let end = (k0 + mode.k_per_instr) * AMP_COLUMNS * mode.in_bytes;
        // A bank held column by column has its rows and no more; all of
        // them must lie in it.
        let rows_t = self.bank_rows_t as usize;
        let t_end = rows_t * AMP_COLUMNS * mode.in_bytes;
        if end > AMP_BANK_BYTES
            || (rows_t > 0 && (k0 + mode.k_per_instr > rows_t || t_end > AMP_BANK_BYTES))
        {
            return Err(FaultKind::AmpWeights {
                end: end.max(t_end),
            });
        }
        if self.amp_pending & (1 << ci) != 0 {
            self.flush_amp();
        }
        if self.wcache_fmt != fmt || self.wcache_rows < k0 + mode.k_per_instr {
            self.decode_weights(fmt, k0 + mode.k_per_instr);
        }
        let st = &mut self.amp[ci];
        let mut out = [0u32; 2];
        if st.phase < drain_n {
            let b = p * mode.partials_per_instr;
            if mode.partial_bytes == 4 {
                out = [st.drain[b].to_bits(), st.drain[b + 1].to_bits()];
                st.acc[b] += f32::from_bits(pin[0]);
                st.acc[b + 1] += f32::from_bits(pin[1]);
            } else {
                out = {
                    let (lo, hi) = pack_f16x4([
                        st.drain[b],
                        st.drain[b + 1],
                        st.drain[b + 2],
                        st.drain[b + 3],
                    ]);
                    [lo, hi]
                };
                let pv = f16x4(pin[0], pin[1]);
                for (acc, p) in st.acc[b..b + 4].iter_mut().zip(pv) {
                    *acc += p;
                }
            }
        }
        // The row's inputs now, the MACs with other contexts' later
        // ([`Tile::flush_amp`]).
        let k = mode.k_per_instr;
        let mut xs = [0f32; 8];
        for (j, xv) in xs.iter_mut().enumerate().take(k) {
            *xv = match op {
                Op::AmpF32F32 => f32::from_bits(x[p % 2]),
                Op::AmpF16F32 => {
                    let e = (p % 2) * 2 + j;
                    f16_value((x[e / 2] >> (16 * (e % 2))) as u16)
                }
                Op::AmpF16F16 => f16_value((x[j / 2] >> (16 * (j % 2))) as u16),
                Op::AmpF8e4F16 => self.f8.0[(x[j / 4] >> (8 * (j % 4))) as u8 as usize] * scale,
                _ => self.f8.1[(x[j / 4] >> (8 * (j % 4))) as u8 as usize] * scale,
            };
        }
        st.phase += 1;
        let drain = st.phase == st.kph;
        if drain {
            st.phase = 0;
        }
        st.pending = PendingMacs {
            xs,
            k: k as u8,
            row0: k0 as u16,
            drain,
        };
        self.amp_pending |= 1 << ci;
        self.stats.amp_macs += mode.macs() as u64;
        let a = &mut self.ctx[ci].a;
        a[ro] = out[0];
        a[ro + 1] = out[1];
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{f16x4, pack_f16x4, pow2f, Tile, TileConfig};

    /// The f16 conversions give what `half` gives, bit for bit, for every
    /// f16 and for f32 values across the whole range (NaNs, infinities,
    /// subnormals, ties included).
    #[test]
    fn f16_conversions_match_half() {
        for b in 0..=u16::MAX as u32 {
            let want = half::f16::from_bits(b as u16).to_f32().to_bits();
            let got = f16x4(b | 0x3c00 << 16, 0x7e01 << 16 | b);
            assert_eq!(got[0].to_bits(), want, "{b:#06x}");
            assert_eq!(got[2].to_bits(), want, "{b:#06x}");
            assert_eq!(got[1].to_bits(), 1f32.to_bits());
        }
        let mut bits: Vec<u32> = (0..=u32::MAX).step_by(4099).collect();
        bits.extend([
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0001,
            0x7f80_0001,
            0x3880_1000,
        ]);
        for w in bits.chunks(4) {
            let v: Vec<f32> = (0..4).map(|k| f32::from_bits(w[k % w.len()])).collect();
            let h: Vec<u32> = v
                .iter()
                .map(|&x| half::f16::from_f32(x).to_bits() as u32)
                .collect();
            let want = (h[0] | h[1] << 16, h[2] | h[3] << 16);
            assert_eq!(pack_f16x4([v[0], v[1], v[2], v[3]]), want, "{w:x?}");
        }
    }

    /// A tile's memory is zero however the previous tile of its size (whose
    /// memory it may reuse) wrote to its own.
    #[test]
    fn new_tile_memory_is_zero_after_reuse() {
        // A size no other test uses, so the memory reused is this test's.
        let cfg = TileConfig {
            tile_id: 0,
            memory_base: 0x1000,
            memory_bytes: 3 * 4096 + 64,
            interleaved_start: 0x1000,
            sync_cycles: 1,
            phase_fixed_cycles: 0,
            supertile_tiles: 1,
        };
        let (base, n) = (cfg.memory_base, cfg.memory_bytes as usize);
        for round in 0..3u8 {
            let mut t = Tile::new(cfg.clone());
            assert!(
                t.read(base, n).unwrap().iter().all(|&b| b == 0),
                "round {round}"
            );
            t.write(base + 100 * round as u32, &[round + 1; 7]).unwrap();
            // Across the boundary of the second and third pages.
            t.write(base + 2 * 4096 - 3 - round as u32, &[0x5a; 7])
                .unwrap();
            t.memory_mut(base + n as u32 - 8, 8).unwrap().fill(0xa5);
        }
    }

    /// The issue loop's entries stay two to a cache line.
    #[test]
    fn fast_entries_are_32_bytes() {
        assert_eq!(std::mem::size_of::<super::Fast>(), 32);
    }

    #[test]
    fn pow2f_matches_exp2() {
        for n in -400..=400 {
            assert_eq!(pow2f(n).to_bits(), (n as f32).exp2().to_bits(), "2^{n}");
        }
        for n in [i32::MIN, i32::MIN + 1, -1000, 1000, i32::MAX] {
            assert_eq!(pow2f(n).to_bits(), (n as f32).exp2().to_bits(), "2^{n}");
        }
    }
}
