//! The bulk-synchronous program of the exchange stage, as data: buffers,
//! host streams, constants, and the supersteps (compute sets of per-tile
//! kernel calls and exchange phases of transfers between buffers).
//!
//! Within a phase each move's offsets are relative to its own buffers; the
//! scheduler sees one offset space per tile in which the phase's source
//! buffers (and, separately, its destination buffers) sit one after another
//! with a gap ([`Program::virtual_phase`]), so transfers of different moves
//! never merge.

use crate::geometry::{Block, Layout};
use ipu_dialects::tile::Mapping;
use ipu_exchange_schedule::{Destination, Phase, Transfer};
use ipu_ir::{Attr, Context, Loc, Type};
use ipu_isa::kernels::KernelSpec;
use smallvec::SmallVec;

/// Index of a buffer in [`Program::buffers`].
pub type BufId = usize;

/// The bytes a buffer of `bytes` takes in tile memory: kernels process
/// whole groups (up to 8 FP8 elements as f32 = 32 B) and may read 8 bytes
/// past a buffer, so storage gives each buffer that slack, and planning
/// counts it.
pub fn stored_bytes(bytes: u64) -> u64 {
    bytes.div_ceil(32) * 32 + 16
}

/// Storage of `bytes` on every tile of `tiles`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferDecl {
    pub name: String,
    /// Sorted, distinct.
    pub tiles: Vec<u32>,
    pub bytes: u64,
    /// Read by kernels with 128-bit loads.
    pub interleaved: bool,
    /// Byte ranges the phases (and local copies) before its reader must
    /// fill, per group of tiles.
    pub reads: Vec<Reads>,
    pub loc: Loc,
}

/// On each of `tiles`, the ranges `[k * stride, k * stride + len)`, `k < count`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reads {
    pub tiles: Vec<u32>,
    pub count: u64,
    pub len: u64,
    pub stride: u64,
}

/// Where a value's blocks live.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    pub buffer: BufId,
    pub mapping: Mapping,
    pub ty: Type,
    pub shape: Vec<i64>,
    pub elem_bytes: u64,
    pub loc: Loc,
}

impl Placed {
    pub fn new(cx: &Context, buffer: BufId, mapping: Mapping, ty: Type, loc: Loc) -> Placed {
        let (shape, eb) = match cx.tensor_parts(ty) {
            Some((s, e)) => (
                s.to_vec(),
                ipu_ir::numeric::storage_bytes(cx.type_kind(e)).unwrap_or(4) as u64,
            ),
            None => (Vec::new(), 4),
        };
        Placed {
            buffer,
            mapping,
            ty,
            shape,
            elem_bytes: eb,
            loc,
        }
    }
}

/// Rectangles of a value put straight into the buffers of their readers,
/// in the layout each reads: the value's bytes are there before the
/// program runs (loaded with the image, or by a load stream), so no
/// exchange moves them.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    pub buffer: BufId,
    pub layout: Layout,
    /// Each on its tile.
    pub rects: Vec<Block>,
}

/// A value that is in tile memory before the program runs: its blocks
/// under a mapping in a home buffer (when something reads it from there),
/// and rectangles placed in their readers' buffers.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    pub ty: Type,
    pub shape: Vec<i64>,
    pub elem_bytes: u64,
    pub loc: Loc,
    pub home: Option<(BufId, Mapping)>,
    pub placements: Vec<Placement>,
}

impl Stored {
    pub fn new(cx: &Context, ty: Type, loc: Loc) -> Stored {
        let p = Placed::new(
            cx,
            0,
            Mapping {
                grid: Vec::new(),
                first_tile: 0,
                stride: 1,
            },
            ty,
            loc,
        );
        Stored {
            ty,
            shape: p.shape,
            elem_bytes: p.elem_bytes,
            loc,
            home: None,
            placements: Vec::new(),
        }
    }

    /// The home as a placed value.
    pub fn placed(&self) -> Option<Placed> {
        self.home.as_ref().map(|(buffer, mapping)| Placed {
            buffer: *buffer,
            mapping: mapping.clone(),
            ty: self.ty,
            shape: self.shape.clone(),
            elem_bytes: self.elem_bytes,
            loc: self.loc,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct HostInput {
    /// The function argument streamed in (the host's type; `at.ty`, the
    /// tiles' type, widens its elements exactly when the host converts a
    /// parameter at load).
    pub arg: usize,
    /// Streamed once when the program is loaded (a parameter), not per run.
    pub load: bool,
    pub at: Stored,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HostOutput {
    pub name: String,
    /// Where the value is on the tiles (`at.ty`: the tiles' type).
    pub at: Placed,
    /// The host's type when it differs from `at.ty`: 8- or 16-bit integers
    /// the host narrows the tiles' exact floats to as it reads them.
    pub host_ty: Option<ipu_ir::Type>,
}

/// Where a tile op's result is complete: its blocks, at the end of compute
/// step `after` (debug information for per-op checks; nothing reads it to
/// run the program).
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// Index in [`Program::steps`] of the compute set after which the
    /// blocks hold the value.
    pub after: usize,
    pub at: Placed,
    /// The location of the op that made the value, in the model compiled,
    /// without file names ([`ipu_ir::diag::loc_key`]).
    pub source: String,
    /// The tile op that made it.
    pub op: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConstantDecl {
    pub value: Attr,
    pub at: Stored,
}

/// What a call runs. A library kernel's specialisation is shared: the
/// machine stage gives every tile of a vertex, and every call of a
/// repeated layer, its own `Call`, and a spec's parameters are a map of
/// strings.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    Lib(std::sync::Arc<KernelSpec>),
    /// The supervisor's byte copy (record: src, dst, len).
    Memcpy,
}

/// A 32-bit word of a kernel state record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Word {
    Val(u32),
    /// The address of a buffer on the calling tile, plus a byte offset.
    Buf(BufId, u32),
}

/// One kernel call.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Call {
    pub kernel: Kernel,
    pub record: Vec<Word>,
    /// Zero bytes after the words (the GEMM's worker records).
    pub scratch: usize,
}

/// One call made by every tile of `tiles`.
#[derive(Clone, Debug, PartialEq)]
pub struct Vertex {
    pub tiles: Vec<u32>,
    pub call: Call,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ComputeSet {
    pub name: String,
    pub label: String,
    /// Estimated cycles (the busiest tile's kernels, by their cycle formulas).
    pub cycles: Option<u64>,
    /// The roofline bound in cycles, sync excluded: the tile ops'
    /// arithmetic at the peak rate of their types, spread over every tile.
    pub bound: Option<u64>,
    /// Operand bytes each tile copies within its memory first (every
    /// transfer's one destination is its source tile).
    pub copies: Vec<Move>,
    /// Each tile runs the vertices naming it, in order.
    pub vertices: Vec<Vertex>,
    pub loc: Loc,
}

/// Transfers from buffer `src` to buffer `dst` (offsets relative to them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    pub src: BufId,
    pub dst: BufId,
    pub transfers: Transfers,
}

/// A move's transfers, shared by its clones: a callee's steps expanded at
/// every call, relocated to the call's buffers, keep one list of
/// transfers (their offsets are relative to the buffers).
#[derive(Clone, Debug, Default)]
pub struct Transfers(std::sync::Arc<Vec<Transfer>>);

impl Transfers {
    /// Appends `t` (the list is copied first if a clone shares it).
    pub fn push(&mut self, t: Transfer) {
        std::sync::Arc::make_mut(&mut self.0).push(t);
    }
}

impl PartialEq for Transfers {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl Eq for Transfers {}

impl From<Vec<Transfer>> for Transfers {
    fn from(v: Vec<Transfer>) -> Self {
        Self(std::sync::Arc::new(v))
    }
}

impl std::ops::Deref for Transfers {
    type Target = [Transfer];
    fn deref(&self) -> &[Transfer] {
        &self.0
    }
}

impl<'a> IntoIterator for &'a Transfers {
    type Item = &'a Transfer;
    type IntoIter = std::slice::Iter<'a, Transfer>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// A scheduled phase's figures, as the exchange stage recorded them.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PhaseFigures {
    pub transfers: u64,
    pub bytes: u64,
    pub local_bytes: u64,
    pub horizon: u64,
    pub initial_horizon: u64,
    pub lower_bound: u64,
    pub gap: u64,
    pub kind: String,
    pub row_words: u64,
    pub patterns: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PhaseDecl {
    pub name: String,
    /// What it moves (`operand #0 of s1 tile.matmul`).
    pub label: String,
    pub moves: Vec<Move>,
    pub figures: PhaseFigures,
    pub loc: Loc,
}

/// How a call passes one argument of the callee.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallArg {
    /// An activation: this buffer of the caller holds it laid out as the
    /// callee's input (the callee's home buffer of that input).
    Buffer(BufId),
    /// A parameter: the caller's argument with this index, loaded straight
    /// into the buffers of the callee's readers, one copy per call.
    Param(usize),
    /// A parameter bound to a constant of the caller (an elements
    /// attribute of the parameter's type): loaded with the image into that
    /// call's copies of the callee's readers' buffers.
    Const { value: Attr, ty: Type },
    /// The callee does not read it.
    Unused,
}

/// A call of another function's program: its steps run here, its inputs
/// and results bound to the caller's buffers ([`Program::expand_calls`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CallStep {
    pub callee: String,
    /// One per argument of the callee.
    pub args: Vec<CallArg>,
    /// One per result of the callee: the caller's buffer it lands in, laid
    /// out as the callee's output.
    pub results: Vec<BufId>,
    /// The call's location in the model compiled, without file names
    /// ([`ipu_ir::diag::loc_key`]): the callee's probes are keyed at it.
    pub source: String,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Compute(ComputeSet),
    Exchange(PhaseDecl),
    Call(CallStep),
}

impl Step {
    pub fn loc(&self) -> Loc {
        match self {
            Step::Compute(c) => c.loc,
            Step::Exchange(p) => p.loc,
            Step::Call(c) => c.loc,
        }
    }
}

/// The whole program of one function.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Program {
    pub buffers: Vec<BufferDecl>,
    pub inputs: Vec<HostInput>,
    pub constants: Vec<ConstantDecl>,
    pub outputs: Vec<HostOutput>,
    /// Supersteps in order; each ends with a chip-wide sync.
    pub steps: Vec<Step>,
    /// In the order of their steps.
    pub probes: Vec<Probe>,
    /// Set where calls were expanded ([`Program::expand_calls`]).
    pub frames: Frames,
}

/// What [`Program::expand_calls`] leaves for the machine stage: which call
/// each step belongs to, and which buffers are a callee's own (they hold no
/// parameter), so that [`Program::fold_frames`] can give every call of a
/// callee one frame of them and storage can place each frame buffer once,
/// alive in each call's steps only.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Frames {
    /// Per step: 0 outside every call, else 1 + the number of the call
    /// expanded there (calls numbered in program order). Empty: no calls.
    pub call_of_step: Vec<u32>,
    /// Per buffer: its frame slot (one per buffer of a callee that holds no
    /// parameter, the same at every call of that callee), or `None`.
    pub slot: Vec<Option<u32>>,
    /// Per step: whether it is a call's copy of its arguments in or its
    /// results out (the caller's work, not the callee's steps).
    pub copy_step: Vec<bool>,
    /// The callees' names, by number.
    pub callees: Vec<String>,
    /// Per call (by its number less one): its callee's number, in the
    /// order callees are first called.
    pub callee_of_call: Vec<u32>,
    /// Set by [`Program::fold_frames`]: the buffers with a slot are each
    /// their slot's one buffer, written once per call.
    pub folded: bool,
}

impl Frames {
    /// The call that step `step` belongs to (0: none).
    pub fn call_of(&self, step: usize) -> u32 {
        self.call_of_step.get(step).copied().unwrap_or(0)
    }

    /// Each call's steps of its callee (a range of step indices, without
    /// the copies in and out) and its callee's number, in program order.
    pub fn call_ranges(&self) -> Vec<(std::ops::Range<usize>, u32)> {
        let mut out: Vec<(std::ops::Range<usize>, u32)> = Vec::new();
        for (s, &c) in self.call_of_step.iter().enumerate() {
            if c == 0 || self.copy_step.get(s) == Some(&true) {
                continue;
            }
            let callee = self
                .callee_of_call
                .get(c as usize - 1)
                .copied()
                .unwrap_or(0);
            match out.last_mut() {
                Some((r, _)) if r.end == s && self.call_of_step[r.start] == c => r.end = s + 1,
                _ => out.push((s..s + 1, callee)),
            }
        }
        out
    }

    /// Whether buffer `b` is a frame buffer, alive in each call separately.
    pub fn is_frame(&self, b: BufId) -> bool {
        self.folded && self.slot.get(b).is_some_and(|s| s.is_some())
    }
}

/// Bytes left between buffers in a phase's offset space, so that runs of
/// different buffers are never contiguous.
const VIRTUAL_GAP: u64 = 8;

/// Per tile, the base of each of a phase's buffers in its offset space.
#[derive(Default, Debug)]
pub struct VirtualSpace {
    /// Per tile, (base, buffer) in increasing base order, for sources and
    /// destinations.
    pub src: TileSpaces,
    pub dst: TileSpaces,
}

/// Per tile (indexed by tile), its buffers' bases in increasing order and
/// the end of the last one.
#[derive(Default, Debug)]
pub struct TileSpaces {
    tiles: Vec<(Vec<(u64, BufId)>, u64)>,
}

impl TileSpaces {
    /// The (base, buffer) list of `tile`, in increasing base order.
    pub fn get(&self, tile: u32) -> Option<&[(u64, BufId)]> {
        self.tiles
            .get(tile as usize)
            .map(|(v, _)| &v[..])
            .filter(|v| !v.is_empty())
    }

    /// The base of `buf` (of `bytes` bytes) on `tile`, given one after the
    /// tile's last buffer when it has none yet.
    fn base(&mut self, tile: u32, buf: BufId, bytes: u64) -> u64 {
        let t = tile as usize;
        if t >= self.tiles.len() {
            self.tiles.resize_with(t + 1, Default::default);
        }
        let (v, end) = &mut self.tiles[t];
        if let Some(&(b, _)) = v.iter().find(|(_, x)| *x == buf) {
            return b;
        }
        let b = *end;
        *end += bytes + VIRTUAL_GAP;
        v.push((b, buf));
        b
    }
}

impl VirtualSpace {
    /// The buffer and the offset in it of virtual offset `off` on `tile`.
    pub fn resolve(spaces: &TileSpaces, tile: u32, off: u64) -> Option<(BufId, u64)> {
        let v = spaces.get(tile)?;
        let i = v.partition_point(|&(b, _)| b <= off).checked_sub(1)?;
        Some((v[i].1, off - v[i].0))
    }
}

impl Program {
    /// The phase the scheduler sees: the moves' transfers, in order, with
    /// offsets in per-tile spaces where the phase's source buffers (and its
    /// destination buffers) follow one another.
    pub fn virtual_phase(&self, p: &PhaseDecl) -> (Phase, VirtualSpace) {
        let mut vs = VirtualSpace::default();
        let mut transfers = Vec::with_capacity(p.moves.iter().map(|m| m.transfers.len()).sum());
        for m in &p.moves {
            let (sb, db) = (self.buffers[m.src].bytes, self.buffers[m.dst].bytes);
            for t in &m.transfers {
                let s = vs.src.base(t.src_tile, m.src, sb);
                let dsts: SmallVec<[Destination; 2]> = t
                    .dsts
                    .iter()
                    .map(|d| {
                        let b = vs.dst.base(d.tile, m.dst, db);
                        Destination {
                            tile: d.tile,
                            offset: (b + d.offset as u64) as u32,
                        }
                    })
                    .collect();
                transfers.push(Transfer {
                    src_tile: t.src_tile,
                    src_offset: (s + t.src_offset as u64) as u32,
                    len: t.len,
                    dsts,
                });
            }
        }
        (Phase::new(transfers), vs)
    }
}
