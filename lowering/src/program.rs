//! The bulk-synchronous program of the exchange stage, as data, and its
//! textual form in the `exchange` dialect.
//!
//! `convert-tile-to-exchange` builds a [`Program`] (buffers, host streams,
//! constants, and the supersteps: compute sets of per-tile kernel calls and
//! exchange phases of transfers between buffers) and writes it as IR with
//! [`Program::emit`]; `convert-exchange-to-machine` reads it back with
//! [`Program::read`] and nothing else, so printing the exchange stage,
//! reading it back and lowering it gives the same package as the one-shot
//! pipeline. [`Program::check`] refuses a program whose phases no longer
//! deliver what its compute sets read (a hand-edited phase, say), at the phase.
//!
//! Within a phase each move's offsets are relative to its own buffers; the
//! scheduler sees one offset space per tile in which the phase's source
//! buffers (and, separately, its destination buffers) sit one after another
//! with a gap ([`Program::virtual_phase`]), so transfers of different moves
//! never merge.

use crate::exchange_schedule::{Destination, Phase, Transfer};
use crate::geometry::{Block, Layout};
use ipu_dialects::exchange::{DstSegment, TransferRun};
use ipu_dialects::machine::{parse_tiles, tiles_to_string};
use ipu_dialects::tile::Mapping;
use ipu_ir::types::AttrKind;
use ipu_ir::{Attr, Block as IrBlock, Context, Diagnostic, Loc, Op, OperationState, Type, Value};
use ipu_isa::kernels::KernelSpec;
use ipu_package::TileSet;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::collections::BTreeMap;

/// Index of a buffer in [`Program::buffers`].
pub type BufId = usize;

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
    pub at: Placed,
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

/// What a call runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    Lib(KernelSpec),
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
    pub transfers: Vec<Transfer>,
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

#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Compute(ComputeSet),
    Exchange(PhaseDecl),
}

impl Step {
    pub fn loc(&self) -> Loc {
        match self {
            Step::Compute(c) => c.loc,
            Step::Exchange(p) => p.loc,
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

// ---------------------------------------------------------------- transfers

/// Destinations as arithmetic segments, greedily.
fn segments(dsts: &[Destination]) -> Vec<DstSegment> {
    let mut out: Vec<DstSegment> = Vec::new();
    for d in dsts {
        let (t, o) = (d.tile as i64, d.offset as i64);
        if let Some(s) = out.last_mut() {
            let (nt, no) = (
                s.tile + s.count * s.tile_step,
                s.offset + s.count * s.offset_step,
            );
            if s.count == 1 {
                s.tile_step = t - s.tile;
                s.offset_step = o - s.offset;
                s.count = 2;
                continue;
            }
            if nt == t && no == o {
                s.count += 1;
                continue;
            }
        }
        out.push(DstSegment {
            count: 1,
            tile: t,
            tile_step: 0,
            offset: o,
            offset_step: 0,
        });
    }
    out
}

/// Transfers as runs of evenly stepping transfers (and repetitions of
/// runs that step evenly), in order.
pub fn compress(transfers: &[Transfer]) -> Vec<TransferRun> {
    repeat_runs(single_runs(transfers))
}

/// Whether `b` is `a` moved by `d` (source tile, source offset, destination
/// tile, destination offset), and that move.
fn shift_of(a: &TransferRun, b: &TransferRun) -> Option<[i64; 4]> {
    let same_shape = a.count == b.count
        && a.len == b.len
        && a.src_tile_step == b.src_tile_step
        && a.src_offset_step == b.src_offset_step
        && a.dst_tile_step == b.dst_tile_step
        && a.dst_offset_step == b.dst_offset_step
        && a.dsts.len() == b.dsts.len()
        && a.repeat == 1
        && b.repeat == 1;
    if !same_shape {
        return None;
    }
    let (dt, doff) = (
        b.dsts[0].tile - a.dsts[0].tile,
        b.dsts[0].offset - a.dsts[0].offset,
    );
    let dsts_match = a.dsts.iter().zip(&b.dsts).all(|(x, y)| {
        x.count == y.count
            && x.tile_step == y.tile_step
            && x.offset_step == y.offset_step
            && y.tile - x.tile == dt
            && y.offset - x.offset == doff
    });
    dsts_match.then_some([
        b.src_tile - a.src_tile,
        b.src_offset - a.src_offset,
        dt,
        doff,
    ])
}

/// Folds consecutive runs that repeat with an even shift into one.
fn repeat_runs(runs: Vec<TransferRun>) -> Vec<TransferRun> {
    let mut out: Vec<TransferRun> = Vec::new();
    // The last run as it was before repetition, to compare the next with.
    let mut prev: Option<TransferRun> = None;
    for r in runs {
        if let (Some(last), Some(p)) = (out.last_mut(), prev.as_ref()) {
            if let Some(d) = shift_of(p, &r) {
                let step = [
                    last.repeat_src_tile_step,
                    last.repeat_src_offset_step,
                    last.repeat_dst_tile_step,
                    last.repeat_dst_offset_step,
                ];
                if last.repeat == 1 || step == d {
                    [
                        last.repeat_src_tile_step,
                        last.repeat_src_offset_step,
                        last.repeat_dst_tile_step,
                        last.repeat_dst_offset_step,
                    ] = d;
                    last.repeat += 1;
                    prev = Some(r);
                    continue;
                }
            }
        }
        prev = Some(r.clone());
        out.push(r);
    }
    out
}

/// Transfers as runs of evenly stepping transfers, in order.
fn single_runs(transfers: &[Transfer]) -> Vec<TransferRun> {
    let mut out: Vec<TransferRun> = Vec::new();
    let mut first: Option<&Transfer> = None;
    for t in transfers {
        if let (Some(run), Some(f)) = (out.last_mut(), first) {
            let i = run.count;
            let fits = |r: &mut TransferRun| -> bool {
                if t.len as i64 != r.len || t.dsts.len() != f.dsts.len() {
                    return false;
                }
                let (dt, doff) = (
                    t.dsts[0].tile as i64 - f.dsts[0].tile as i64,
                    t.dsts[0].offset as i64 - f.dsts[0].offset as i64,
                );
                if i == 1 {
                    r.src_tile_step = t.src_tile as i64 - r.src_tile;
                    r.src_offset_step = t.src_offset as i64 - r.src_offset;
                    r.dst_tile_step = dt;
                    r.dst_offset_step = doff;
                } else if t.src_tile as i64 != r.src_tile + i * r.src_tile_step
                    || t.src_offset as i64 != r.src_offset + i * r.src_offset_step
                    || dt != i * r.dst_tile_step
                    || doff != i * r.dst_offset_step
                {
                    return false;
                }
                t.dsts.iter().zip(&f.dsts).all(|(a, b)| {
                    a.tile as i64 - b.tile as i64 == i * r.dst_tile_step
                        && a.offset as i64 - b.offset as i64 == i * r.dst_offset_step
                })
            };
            let saved = (
                run.src_tile_step,
                run.src_offset_step,
                run.dst_tile_step,
                run.dst_offset_step,
            );
            if fits(run) {
                run.count += 1;
                continue;
            }
            (
                run.src_tile_step,
                run.src_offset_step,
                run.dst_tile_step,
                run.dst_offset_step,
            ) = saved;
        }
        out.push(TransferRun {
            repeat: 1,
            repeat_src_tile_step: 0,
            repeat_src_offset_step: 0,
            repeat_dst_tile_step: 0,
            repeat_dst_offset_step: 0,
            count: 1,
            src_tile: t.src_tile as i64,
            src_tile_step: 0,
            src_offset: t.src_offset as i64,
            src_offset_step: 0,
            len: t.len as i64,
            dst_tile_step: 0,
            dst_offset_step: 0,
            dsts: segments(&t.dsts),
        });
        first = Some(t);
    }
    out
}

/// The transfers of decoded runs, in order.
pub fn expand(runs: &[TransferRun]) -> Vec<Transfer> {
    runs.iter()
        .flat_map(|r| r.expand())
        .map(|(src_tile, src_offset, len, dsts)| Transfer {
            src_tile,
            src_offset,
            len,
            dsts: dsts
                .into_iter()
                .map(|(tile, offset)| Destination { tile, offset })
                .collect(),
        })
        .collect()
}

// ---------------------------------------------------------------- IR

fn build_op(
    cx: &mut Context,
    name: &str,
    operands: &[Value],
    results: &[Type],
    attrs: Vec<(&str, Attr)>,
    regions: u32,
    loc: Loc,
) -> Op {
    let n = cx.op_name(name);
    let mut st = OperationState::new(n, loc);
    st.operands.extend_from_slice(operands);
    st.result_types.extend_from_slice(results);
    let entries = attrs.into_iter().map(|(k, v)| (cx.sym(k), v)).collect();
    st.attrs = cx.dict_attr(entries);
    st.num_regions = regions;
    let op = cx.create_op(st);
    for i in 0..regions as usize {
        let r = cx.region(op, i);
        cx.create_block(r, &[]);
    }
    op
}

/// `count` rectangle groups, the k-th with every bound of `lo`/`hi` moved
/// by k * shift[1..] and every tile by k * shift[0].
struct RectRun {
    lo: Vec<i64>,
    hi: Vec<i64>,
    tiles: Vec<u32>,
    count: i64,
    shift: Option<Vec<i64>>,
}

impl RectRun {
    /// Takes the next group if it continues the run.
    fn extend(&mut self, lo: &[i64], hi: &[i64], tiles: &[u32]) -> bool {
        if tiles.len() != self.tiles.len() || lo.len() != self.lo.len() {
            return false;
        }
        let k = self.count;
        let dt = tiles[0] as i64 - self.tiles[0] as i64;
        let dlo: Vec<i64> = lo.iter().zip(&self.lo).map(|(a, b)| a - b).collect();
        let dhi: Vec<i64> = hi.iter().zip(&self.hi).map(|(a, b)| a - b).collect();
        let mut shift = vec![dt];
        shift.extend(&dlo);
        let step: Vec<i64> = match &self.shift {
            None => shift.clone(),
            Some(s) => s.clone(),
        };
        let same = shift.iter().zip(&step).all(|(a, b)| *a == b * k)
            && dlo == dhi
            && tiles
                .iter()
                .zip(&self.tiles)
                .all(|(a, b)| *a as i64 - *b as i64 == step[0] * k);
        if same {
            self.shift = Some(step);
            self.count += 1;
        }
        same
    }
}

fn tiles_attr(cx: &mut Context, tiles: &[u32]) -> Attr {
    let s = tiles_to_string(&TileSet::from_tiles(tiles.iter().copied()));
    cx.string_attr(&s)
}

impl Program {
    /// Replaces the body of function `f` with the program's ops.
    pub fn emit(&self, cx: &mut Context, f: Op, loc: Loc) {
        let entry = cx
            .entry_block(cx.region(f, 0))
            .expect("a function with a body");
        let args = cx.block_args(entry).to_vec();
        for op in cx.block_ops_vec(entry) {
            cx.erase_op(op);
        }
        let buf_ref = |cx: &mut Context, b: BufId| cx.symbol_ref_attr(&self.buffers[b].name);
        for b in &self.buffers {
            let mut attrs = vec![
                ("sym_name", cx.string_attr(&b.name)),
                ("tiles", tiles_attr(cx, &b.tiles)),
                ("bytes", cx.i64_attr(b.bytes as i64)),
            ];
            if b.interleaved {
                attrs.push(("interleaved", Attr::UNIT));
            }
            if !b.reads.is_empty() {
                let entries = b
                    .reads
                    .iter()
                    .map(|r| {
                        let e = vec![
                            (cx.sym("tiles"), tiles_attr(cx, &r.tiles)),
                            (
                                cx.sym("ranges"),
                                cx.i64_array_attr(vec![
                                    r.count as i64,
                                    r.len as i64,
                                    r.stride as i64,
                                ]),
                            ),
                        ];
                        cx.dict_attr(e)
                    })
                    .collect();
                attrs.push(("reads", cx.array_attr(entries)));
            }
            let op = build_op(cx, "exchange.buffer", &[], &[], attrs, 0, b.loc);
            cx.append_op(entry, op);
        }
        for i in &self.inputs {
            let mut attrs = self.stored_attrs(cx, &i.at);
            if i.load {
                attrs.push(("load", Attr::UNIT));
            }
            // A parameter the host widens when it loads it.
            if cx.value_type(args[i.arg]) != i.at.ty {
                attrs.push(("tile_type", cx.type_attr(i.at.ty)));
            }
            let op = build_op(
                cx,
                "exchange.host_input",
                &[args[i.arg]],
                &[],
                attrs,
                0,
                i.at.loc,
            );
            cx.append_op(entry, op);
        }
        for c in &self.constants {
            let mut attrs = self.stored_attrs(cx, &c.at);
            attrs.push(("value", c.value));
            let op = build_op(cx, "exchange.constant", &[], &[], attrs, 0, c.at.loc);
            cx.append_op(entry, op);
        }
        let mut probes = self.probes.iter().peekable();
        for (si, s) in self.steps.iter().enumerate() {
            let op = match s {
                Step::Compute(c) => self.emit_compute(cx, c),
                Step::Exchange(p) => self.emit_phase(cx, p),
            };
            cx.append_op(entry, op);
            let sync = build_op(cx, "exchange.sync", &[], &[], vec![], 0, s.loc());
            cx.append_op(entry, sync);
            while let Some(pr) = probes.peek().filter(|pr| pr.after == si) {
                let Step::Compute(c) = &self.steps[pr.after] else {
                    unreachable!("probes follow compute sets (checked by Program::check)")
                };
                let attrs = vec![
                    ("buffer", buf_ref(cx, pr.at.buffer)),
                    ("mapping", pr.at.mapping.to_attr(cx)),
                    ("after", cx.symbol_ref_attr(&c.name)),
                    ("type", cx.type_attr(pr.at.ty)),
                    ("source", cx.string_attr(&pr.source)),
                    ("op", cx.string_attr(&pr.op)),
                ];
                let op = build_op(cx, "exchange.probe", &[], &[], attrs, 0, pr.at.loc);
                cx.append_op(entry, op);
                probes.next();
            }
        }
        let mut results = Vec::new();
        for o in &self.outputs {
            let attrs = vec![
                ("buffer", buf_ref(cx, o.at.buffer)),
                ("mapping", o.at.mapping.to_attr(cx)),
                ("name", cx.string_attr(&o.name)),
            ];
            let op = build_op(
                cx,
                "exchange.host_output",
                &[],
                &[o.at.ty],
                attrs,
                0,
                o.at.loc,
            );
            cx.append_op(entry, op);
            results.push(cx.result(op, 0));
        }
        let ret = build_op(cx, "func.return", &results, &[], vec![], 0, loc);
        cx.append_op(entry, ret);
    }

    /// `buffer` and `mapping` of a home, and `placements`.
    fn stored_attrs(&self, cx: &mut Context, at: &Stored) -> Vec<(&'static str, Attr)> {
        let mut attrs = Vec::new();
        if let Some((b, m)) = &at.home {
            attrs.push(("buffer", cx.symbol_ref_attr(&self.buffers[*b].name)));
            attrs.push(("mapping", m.to_attr(cx)));
        }
        if !at.placements.is_empty() {
            let ps = at
                .placements
                .iter()
                .map(|p| {
                    // Rectangles grouped by extent, each with its tiles.
                    let mut groups: Vec<(&[i64], &[i64], Vec<u32>)> = Vec::new();
                    for r in &p.rects {
                        match groups
                            .iter_mut()
                            .find(|g| g.0 == r.lo.as_slice() && g.1 == r.hi.as_slice())
                        {
                            Some(g) => g.2.push(r.tile),
                            None => groups.push((&r.lo, &r.hi, vec![r.tile])),
                        }
                    }
                    // Consecutive groups that step evenly (rectangle and
                    // tiles) print as one, with a count and the step.
                    let mut runs: Vec<RectRun> = Vec::new();
                    for (lo, hi, tiles) in groups {
                        if let Some(r) = runs.last_mut() {
                            if r.extend(lo, hi, &tiles) {
                                continue;
                            }
                        }
                        runs.push(RectRun {
                            lo: lo.to_vec(),
                            hi: hi.to_vec(),
                            tiles,
                            count: 1,
                            shift: None,
                        });
                    }
                    let rects: Vec<Attr> = runs
                        .into_iter()
                        .map(|r| {
                            let mut e = vec![
                                (cx.sym("tiles"), tiles_attr(cx, &r.tiles)),
                                (cx.sym("lo"), cx.i64_array_attr(r.lo.clone())),
                                (cx.sym("hi"), cx.i64_array_attr(r.hi.clone())),
                            ];
                            if let Some(shift) = r.shift.filter(|_| r.count > 1) {
                                e.push((cx.sym("count"), cx.i64_attr(r.count)));
                                e.push((cx.sym("shift"), cx.i64_array_attr(shift)));
                            }
                            cx.dict_attr(e)
                        })
                        .collect();
                    let mut e = vec![
                        (
                            cx.sym("buffer"),
                            cx.symbol_ref_attr(&self.buffers[p.buffer].name),
                        ),
                        (cx.sym("rects"), cx.array_attr(rects)),
                    ];
                    if let Layout::Chunks { kc, rows } = p.layout {
                        e.push((cx.sym("chunks"), cx.i64_array_attr(vec![kc, rows])));
                    }
                    cx.dict_attr(e)
                })
                .collect();
            attrs.push(("placements", cx.array_attr(ps)));
        }
        attrs
    }

    fn word_attr(&self, cx: &mut Context, w: &Word) -> Attr {
        match *w {
            // Words with the top bit set read as negative (FP8 scales).
            Word::Val(v) => cx.i64_attr(v as i32 as i64),
            Word::Buf(b, 0) => cx.symbol_ref_attr(&self.buffers[b].name),
            Word::Buf(b, off) => {
                let r = cx.symbol_ref_attr(&self.buffers[b].name);
                let o = cx.i64_attr(off as i64);
                cx.array_attr(vec![r, o])
            }
        }
    }

    fn emit_compute(&self, cx: &mut Context, c: &ComputeSet) -> Op {
        let mut attrs = vec![
            ("sym_name", cx.string_attr(&c.name)),
            ("label", cx.string_attr(&c.label)),
        ];
        if let Some(cy) = c.cycles {
            attrs.push(("cycles", cx.i64_attr(cy as i64)));
        }
        if let Some(b) = c.bound {
            attrs.push(("bound", cx.i64_attr(b as i64)));
        }
        let op = build_op(cx, "exchange.compute_set", &[], &[], attrs, 1, c.loc);
        let body = cx.entry_block(cx.region(op, 0)).expect("created");
        for m in &c.copies {
            let o = self.emit_move(cx, "exchange.copy", m, c.loc);
            cx.append_op(body, o);
        }
        for v in &c.vertices {
            let record: Vec<Attr> = v
                .call
                .record
                .iter()
                .map(|w| self.word_attr(cx, w))
                .collect();
            let mut attrs = vec![
                ("tiles", tiles_attr(cx, &v.tiles)),
                ("record", cx.array_attr(record)),
            ];
            let Kernel::Lib(spec) = &v.call.kernel else {
                unreachable!("local copies are exchange.copy ops, not vertices")
            };
            attrs.push(("kernel", cx.string_attr(spec.source)));
            attrs.push(("name", cx.string_attr(&spec.name())));
            let params: Vec<_> = spec
                .params
                .iter()
                .map(|(k, &v)| (cx.sym(k), cx.i64_attr(v)))
                .collect();
            attrs.push(("params", cx.dict_attr(params)));
            if v.call.scratch > 0 {
                attrs.push(("scratch", cx.i64_attr(v.call.scratch as i64)));
            }
            let o = build_op(cx, "exchange.vertex", &[], &[], attrs, 0, c.loc);
            cx.append_op(body, o);
        }
        op
    }

    fn emit_phase(&self, cx: &mut Context, p: &PhaseDecl) -> Op {
        let f = &p.figures;
        let patterns: Vec<_> = f.patterns.iter().map(|l| cx.string_attr(l)).collect();
        let mut attrs: Vec<(&str, Attr)> = vec![
            ("sym_name", cx.string_attr(&p.name)),
            ("moves", cx.string_attr(&p.label)),
            ("kind", cx.string_attr(&f.kind)),
            ("patterns", cx.array_attr(patterns)),
        ];
        for (k, v) in [
            ("transfers", f.transfers),
            ("bytes", f.bytes),
            ("local_bytes", f.local_bytes),
            ("horizon", f.horizon),
            ("initial_horizon", f.initial_horizon),
            ("lower_bound", f.lower_bound),
            ("gap", f.gap),
            ("row_words", f.row_words),
        ] {
            attrs.push((k, cx.i64_attr(v as i64)));
        }
        let op = build_op(cx, "exchange.phase", &[], &[], attrs, 1, p.loc);
        let body = cx.entry_block(cx.region(op, 0)).expect("created");
        for m in &p.moves {
            let o = self.emit_move(cx, "exchange.move", m, p.loc);
            cx.append_op(body, o);
        }
        op
    }

    fn emit_move(&self, cx: &mut Context, name: &str, m: &Move, loc: Loc) -> Op {
        let runs: Vec<Attr> = compress(&m.transfers)
            .iter()
            .map(|r| cx.i64_array_attr(r.encode()))
            .collect();
        let attrs = vec![
            ("src", cx.symbol_ref_attr(&self.buffers[m.src].name)),
            ("dst", cx.symbol_ref_attr(&self.buffers[m.dst].name)),
            ("runs", cx.array_attr(runs)),
        ];
        build_op(cx, name, &[], &[], attrs, 0, loc)
    }
}

// ---------------------------------------------------------------- reading

/// A tile set within what a package can hold, checked before it is listed
/// tile by tile (`0 to 4000000000` would be billions).
fn parse_bounded_tiles(s: &str) -> Result<TileSet, String> {
    let t = parse_tiles(s)?;
    match t
        .runs
        .iter()
        .find(|r| r.last().is_none_or(|l| l >= ipu_package::MAX_TILES))
    {
        Some(r) => Err(format!(
            "the run from tile {} goes beyond the {} tiles a package can hold",
            r.first,
            ipu_package::MAX_TILES
        )),
        None => Ok(t),
    }
}

struct Reader<'a> {
    cx: &'a Context,
    names: FxHashMap<String, BufId>,
}

impl Reader<'_> {
    fn err(&self, op: Op, m: impl std::fmt::Display) -> Diagnostic {
        ipu_ir::verify::op_error(self.cx, op, m.to_string())
    }

    fn int(&self, op: Op, name: &str) -> Result<u64, Diagnostic> {
        match self.cx.get_int_attr(op, name) {
            Some(v) if v >= 0 && v <= u64::MAX as i128 => Ok(v as u64),
            _ => Err(self.err(op, format!("needs a non-negative integer '{name}'"))),
        }
    }

    fn str(&self, op: Op, name: &str) -> Result<String, Diagnostic> {
        self.cx
            .get_str_attr(op, name)
            .map(str::to_string)
            .ok_or_else(|| self.err(op, format!("needs a string '{name}'")))
    }

    fn buf_of(&self, op: Op, a: Attr) -> Result<BufId, Diagnostic> {
        match self.cx.attr_kind(a) {
            AttrKind::SymbolRef { root, nested } if nested.is_empty() => {
                let n = self.cx.str(*root);
                self.names.get(n).copied().ok_or_else(|| {
                    self.err(
                        op,
                        format!("refers to @{n}, which no exchange.buffer declares"),
                    )
                })
            }
            _ => Err(self.err(op, "expects a buffer reference @name")),
        }
    }

    fn buf(&self, op: Op, name: &str) -> Result<BufId, Diagnostic> {
        let a = self
            .cx
            .get_attr(op, name)
            .ok_or_else(|| self.err(op, format!("needs '{name}'")))?;
        self.buf_of(op, a)
    }

    fn placed(&self, op: Op, ty: Type) -> Result<Placed, Diagnostic> {
        let mapping = crate::geometry::mapping_of(self.cx, op)
            .ok_or_else(|| self.err(op, "needs a mapping"))?;
        if self.cx.tensor_parts(ty).is_none() {
            return Err(self.err(op, "places a value that is not a tensor"));
        }
        Ok(Placed::new(
            self.cx,
            self.buf(op, "buffer")?,
            mapping,
            ty,
            self.cx.op_loc(op),
        ))
    }

    /// A host input's or constant's home and placements.
    fn stored(&self, op: Op, ty: Type) -> Result<Stored, Diagnostic> {
        let cx = self.cx;
        if cx.tensor_parts(ty).is_none() {
            return Err(self.err(op, "places a value that is not a tensor"));
        }
        let mut at = Stored::new(cx, ty, cx.op_loc(op));
        if cx.get_attr(op, "buffer").is_some() || cx.get_attr(op, "mapping").is_some() {
            let mapping = crate::geometry::mapping_of(cx, op)
                .ok_or_else(|| self.err(op, "needs a mapping with its buffer"))?;
            at.home = Some((self.buf(op, "buffer")?, mapping));
        }
        if let Some(AttrKind::Array(ps)) = cx.get_attr(op, "placements").map(|a| cx.attr_kind(a)) {
            for &p in ps {
                let AttrKind::Dictionary(kv) = cx.attr_kind(p) else {
                    return Err(self.err(op, "placements are dictionaries"));
                };
                let get = |k: &str| kv.iter().find(|(n, _)| cx.str(*n) == k).map(|(_, v)| *v);
                let buffer = self.buf_of(
                    op,
                    get("buffer").ok_or_else(|| self.err(op, "a placement needs a buffer"))?,
                )?;
                let layout = match get("chunks").map(|a| cx.attr_kind(a)) {
                    None => Layout::RowMajor,
                    Some(AttrKind::I64Array(v)) if v.len() == 2 && v[0] > 0 && v[1] > 0 => {
                        Layout::Chunks {
                            kc: v[0],
                            rows: v[1],
                        }
                    }
                    Some(_) => {
                        return Err(self.err(op, "a placement's chunks are array<i64: kc, rows>"))
                    }
                };
                let Some(AttrKind::Array(rs)) = get("rects").map(|a| cx.attr_kind(a)) else {
                    return Err(self.err(op, "a placement needs rects"));
                };
                let mut rects = Vec::new();
                for &rr in rs {
                    let AttrKind::Dictionary(kv) = cx.attr_kind(rr) else {
                        return Err(self.err(op, "rects are dictionaries"));
                    };
                    let get = |k: &str| {
                        kv.iter()
                            .find(|(n, _)| cx.str(*n) == k)
                            .map(|(_, v)| cx.attr_kind(*v))
                    };
                    let (
                        Some(AttrKind::String(ts)),
                        Some(AttrKind::I64Array(lo)),
                        Some(AttrKind::I64Array(hi)),
                    ) = (get("tiles"), get("lo"), get("hi"))
                    else {
                        return Err(self.err(op, "a rect needs tiles, lo and hi"));
                    };
                    let tiles: Vec<u32> = parse_tiles(ts)
                        .map_err(|e| self.err(op, format!("rect tiles: {e}")))?
                        .iter()
                        .collect();
                    let rank = at.shape.len();
                    let (count, shift) = match (get("count"), get("shift")) {
                        (None, None) => (1, vec![0; rank + 1]),
                        (Some(AttrKind::Integer { value, .. }), Some(AttrKind::I64Array(sh)))
                            if (1..=1 << 20).contains(value) && sh.len() == rank + 1 =>
                        {
                            (*value as i64, sh.clone())
                        }
                        _ => return Err(self.err(op, "a rect's count (1 to 2^20) and shift (tile, then one per dimension) go together")),
                    };
                    for k in 0..count {
                        let lo: Vec<i64> = (0..rank).map(|d| lo[d] + k * shift[d + 1]).collect();
                        let hi: Vec<i64> = (0..rank).map(|d| hi[d] + k * shift[d + 1]).collect();
                        let inside = lo.len() == rank
                            && hi.len() == rank
                            && (0..rank)
                                .all(|d| 0 <= lo[d] && lo[d] < hi[d] && hi[d] <= at.shape[d]);
                        if !inside {
                            return Err(self.err(
                                op,
                                format!("a rect [{lo:?}, {hi:?}) is not inside {:?}", at.shape),
                            ));
                        }
                        for &t in &tiles {
                            let t = t as i64 + k * shift[0];
                            if !(0..=u32::MAX as i64).contains(&t) {
                                return Err(
                                    self.err(op, "a rect's shifted tile leaves the u32 range")
                                );
                            }
                            rects.push(Block {
                                tile: t as u32,
                                lo: lo.clone(),
                                hi: hi.clone(),
                            });
                        }
                    }
                }
                at.placements.push(Placement {
                    buffer,
                    layout,
                    rects,
                });
            }
        }
        if at.home.is_none() && at.placements.is_empty() {
            return Err(self.err(op, "needs a buffer and mapping, or placements"));
        }
        Ok(at)
    }

    fn tiles(&self, op: Op) -> Result<Vec<u32>, Diagnostic> {
        let s = self.str(op, "tiles")?;
        let t = parse_bounded_tiles(&s).map_err(|e| self.err(op, format!("tiles: {e}")))?;
        Ok(t.iter().collect())
    }

    fn word(&self, op: Op, a: Attr) -> Result<Word, Diagnostic> {
        match self.cx.attr_kind(a) {
            AttrKind::Integer { value, .. }
                if (i32::MIN as i128..=u32::MAX as i128).contains(value) =>
            {
                Ok(Word::Val(*value as i64 as u32))
            }
            AttrKind::SymbolRef { .. } => Ok(Word::Buf(self.buf_of(op, a)?, 0)),
            AttrKind::Array(pair) if pair.len() == 2 => match self.cx.attr_kind(pair[1]) {
                AttrKind::Integer { value, .. } if (0..=u32::MAX as i128).contains(value) => {
                    Ok(Word::Buf(self.buf_of(op, pair[0])?, *value as u32))
                }
                _ => Err(self.err(op, "a record entry [@b, offset] needs a 32-bit offset")),
            },
            _ => Err(self.err(
                op,
                "record entries are 32-bit integers, buffer references @b, or [@b, offset]",
            )),
        }
    }

    fn vertex(&self, op: Op) -> Result<Vertex, Diagnostic> {
        let cx = self.cx;
        let tiles = self.tiles(op)?;
        let Some(AttrKind::Array(words)) = cx.get_attr(op, "record").map(|a| cx.attr_kind(a))
        else {
            return Err(self.err(op, "needs a record array"));
        };
        let record = words
            .iter()
            .map(|&w| self.word(op, w))
            .collect::<Result<Vec<_>, _>>()?;
        let scratch = match cx.get_attr(op, "scratch") {
            Some(_) => self.int(op, "scratch")? as usize,
            None => 0,
        };
        let kernel = {
            let source = self.str(op, "kernel")?;
            let src = ipu_isa::kernels::source(&source)
                .ok_or_else(|| self.err(op, format!("names no library kernel '{source}'")))?;
            let Some(AttrKind::Dictionary(ps)) = cx.get_attr(op, "params").map(|a| cx.attr_kind(a))
            else {
                return Err(self.err(op, "needs its kernel's params"));
            };
            let mut params = BTreeMap::new();
            for (k, v) in ps {
                let AttrKind::Integer { value, .. } = cx.attr_kind(*v) else {
                    return Err(self.err(op, "kernel params are integers"));
                };
                let value = i64::try_from(*value)
                    .map_err(|_| self.err(op, "a kernel param leaves the i64 range"))?;
                params.insert(cx.str(*k).to_string(), value);
            }
            let spec = KernelSpec {
                source: src.name,
                entry: src.name,
                params,
            };
            let name = self.str(op, "name")?;
            if spec.name() != name {
                return Err(self.err(
                    op,
                    format!(
                        "is named '{name}', but kernel '{source}' with these params is '{}'",
                        spec.name()
                    ),
                ));
            }
            // The record as the kernel's declared layout has it.
            crate::device::records::check_record(&spec, &record, scratch)
                .map_err(|e| self.err(op, e))?;
            Kernel::Lib(spec)
        };
        Ok(Vertex {
            tiles,
            call: Call {
                kernel,
                record,
                scratch,
            },
        })
    }

    fn read_move(&self, m: Op) -> Result<Move, Diagnostic> {
        let cx = self.cx;
        let Some(AttrKind::Array(runs)) = cx.get_attr(m, "runs").map(|a| cx.attr_kind(a)) else {
            return Err(self.err(m, "needs runs"));
        };
        let mut decoded = Vec::new();
        let mut total = 0u64;
        for &r in runs {
            let AttrKind::I64Array(v) = cx.attr_kind(r) else {
                return Err(self.err(m, "a run is an array<i64: ...>"));
            };
            let run = TransferRun::decode(v).map_err(|e| self.err(m, e))?;
            total += run.len();
            if total > ipu_dialects::exchange::MAX_MOVE_TRANSFERS {
                return Err(self.err(m, "holds too many transfers"));
            }
            decoded.push(run);
        }
        Ok(Move {
            src: self.buf(m, "src")?,
            dst: self.buf(m, "dst")?,
            transfers: expand(&decoded),
        })
    }

    fn phase(&self, op: Op, body: &[Op]) -> Result<PhaseDecl, Diagnostic> {
        let cx = self.cx;
        let moves = body
            .iter()
            .map(|&m| self.read_move(m))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(AttrKind::Array(pats)) = cx.get_attr(op, "patterns").map(|a| cx.attr_kind(a))
        else {
            return Err(self.err(op, "needs patterns"));
        };
        let patterns = pats
            .iter()
            .map(|&p| match cx.attr_kind(p) {
                AttrKind::String(s) => Ok(s.to_string()),
                _ => Err(self.err(op, "patterns are strings")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PhaseDecl {
            name: self.str(op, "sym_name")?,
            label: self.str(op, "moves")?,
            moves,
            figures: PhaseFigures {
                transfers: self.int(op, "transfers")?,
                bytes: self.int(op, "bytes")?,
                local_bytes: self.int(op, "local_bytes")?,
                horizon: self.int(op, "horizon")?,
                initial_horizon: self.int(op, "initial_horizon")?,
                lower_bound: self.int(op, "lower_bound")?,
                gap: self.int(op, "gap")?,
                kind: self.str(op, "kind")?,
                row_words: self.int(op, "row_words")?,
                patterns,
            },
            loc: cx.op_loc(op),
        })
    }
}

fn body_of(cx: &Context, op: Op) -> Vec<Op> {
    cx.entry_block(cx.region(op, 0))
        .map(|b: IrBlock| cx.block_ops_vec(b))
        .unwrap_or_default()
}

impl Program {
    /// Reads the exchange-stage program of function `f`.
    pub fn read(cx: &Context, f: Op) -> Result<Program, Diagnostic> {
        let entry = cx
            .entry_block(cx.region(f, 0))
            .ok_or_else(|| ipu_ir::verify::op_error(cx, f, "has no body"))?;
        let args = cx.block_args(entry).to_vec();
        let ops = cx.block_ops_vec(entry);
        let mut r = Reader {
            cx,
            names: FxHashMap::default(),
        };
        let mut p = Program::default();
        // Buffers first: they may be referenced before their declaration.
        for &op in &ops {
            if cx.is(op, "exchange.buffer") {
                let name = r.str(op, "sym_name")?;
                if r.names.contains_key(&name) {
                    return Err(r.err(op, format!("declares buffer @{name} a second time")));
                }
                let mut tiles = r.tiles(op)?;
                tiles.sort_unstable();
                tiles.dedup();
                let mut reads = Vec::new();
                if let Some(AttrKind::Array(es)) = cx.get_attr(op, "reads").map(|a| cx.attr_kind(a))
                {
                    for &e in es {
                        let AttrKind::Dictionary(kv) = cx.attr_kind(e) else {
                            return Err(r.err(op, "reads entries are dictionaries"));
                        };
                        let get = |k: &str| {
                            kv.iter()
                                .find(|(n, _)| cx.str(*n) == k)
                                .map(|(_, v)| cx.attr_kind(*v))
                        };
                        let (Some(AttrKind::String(ts)), Some(AttrKind::I64Array(rg))) =
                            (get("tiles"), get("ranges"))
                        else {
                            return Err(r.err(op, "a reads entry needs tiles and ranges"));
                        };
                        let tiles = parse_bounded_tiles(ts)
                            .map_err(|e| r.err(op, format!("reads tiles: {e}")))?;
                        let &[c, l, s] = &rg[..] else {
                            return Err(r.err(op, "ranges must be [count, len, stride]"));
                        };
                        if c < 1 || l < 1 || s < l {
                            return Err(r.err(op, "ranges must be [count, len, stride] with count, len >= 1 and stride >= len"));
                        }
                        reads.push(Reads {
                            tiles: tiles.iter().collect(),
                            count: c as u64,
                            len: l as u64,
                            stride: s as u64,
                        });
                    }
                }
                r.names.insert(name.clone(), p.buffers.len());
                p.buffers.push(BufferDecl {
                    name,
                    tiles,
                    bytes: r.int(op, "bytes")?,
                    interleaved: cx.get_attr(op, "interleaved").is_some(),
                    reads,
                    loc: cx.op_loc(op),
                });
            }
        }
        let mut expect_sync = false;
        let mut last_step = None;
        // Probes by the compute set they follow, resolved once all are read.
        let mut probes: Vec<(Op, String, Probe)> = Vec::new();
        for &op in &ops {
            let name = cx.name_str(op);
            if expect_sync && name != "exchange.sync" {
                return Err(r.err(
                    last_step.unwrap_or(op),
                    "is not followed by an exchange.sync; every superstep ends with one",
                ));
            }
            match name {
                "exchange.buffer" | "func.return" => {}
                "exchange.host_input" => {
                    let a = cx.operand(op, 0);
                    let arg = args
                        .iter()
                        .position(|&x| x == a)
                        .ok_or_else(|| r.err(op, "streams a value that is not an argument of the function"))?;
                    p.inputs.push(HostInput {
                        arg,
                        load: cx.get_attr(op, "load").is_some(),
                        at: r.stored(op, ipu_dialects::exchange::host_input_tile_type(cx, op))?,
                    });
                }
                "exchange.constant" => {
                    let value = cx
                        .get_attr(op, "value")
                        .ok_or_else(|| r.err(op, "needs a value"))?;
                    let ty = match cx.attr_kind(value) {
                        AttrKind::DenseElements { ty, .. } | AttrKind::DenseResource { ty, .. } => *ty,
                        _ => return Err(r.err(op, "needs a dense elements value")),
                    };
                    p.constants.push(ConstantDecl {
                        value,
                        at: r.stored(op, ty)?,
                    });
                }
                "exchange.host_output" => {
                    let ty = cx.value_type(cx.result(op, 0));
                    p.outputs.push(HostOutput {
                        name: r.str(op, "name")?,
                        at: r.placed(op, ty)?,
                    });
                }
                "exchange.probe" => {
                    let Some(AttrKind::Type(ty)) = cx.get_attr(op, "type").map(|a| cx.attr_kind(a))
                    else {
                        return Err(r.err(op, "needs a tensor 'type'"));
                    };
                    let after = match cx.get_attr(op, "after").map(|a| cx.attr_kind(a)) {
                        Some(AttrKind::SymbolRef { root, nested }) if nested.is_empty() => {
                            cx.str(*root).to_string()
                        }
                        _ => return Err(r.err(op, "needs 'after', a compute set reference @name")),
                    };
                    let probe = Probe {
                        after: 0,
                        at: r.placed(op, *ty)?,
                        source: r.str(op, "source")?,
                        op: r.str(op, "op")?,
                    };
                    probes.push((op, after, probe));
                }
                "exchange.compute_set" => {
                    let mut vertices = Vec::new();
                    let mut copies = Vec::new();
                    for o in body_of(cx, op) {
                        if cx.is(o, "exchange.copy") {
                            let m = r.read_move(o)?;
                            if let Some(t) = m
                                .transfers
                                .iter()
                                .find(|t| t.dsts.len() != 1 || t.dsts[0].tile != t.src_tile)
                            {
                                return Err(r.err(
                                    o,
                                    format!("copies from tile {} to another tile; exchange.copy stays on its tile", t.src_tile),
                                ));
                            }
                            copies.push(m);
                        } else {
                            vertices.push(r.vertex(o)?);
                        }
                    }
                    let cycles = match cx.get_attr(op, "cycles") {
                        Some(_) => Some(r.int(op, "cycles")?),
                        None => None,
                    };
                    let bound = match cx.get_attr(op, "bound") {
                        Some(_) => Some(r.int(op, "bound")?),
                        None => None,
                    };
                    p.steps.push(Step::Compute(ComputeSet {
                        name: r.str(op, "sym_name")?,
                        label: r.str(op, "label")?,
                        cycles,
                        bound,
                        copies,
                        vertices,
                        loc: cx.op_loc(op),
                    }));
                    expect_sync = true;
                    last_step = Some(op);
                }
                "exchange.phase" => {
                    let body = body_of(cx, op);
                    p.steps.push(Step::Exchange(r.phase(op, &body)?));
                    expect_sync = true;
                    last_step = Some(op);
                }
                "exchange.sync" => {
                    if !expect_sync {
                        return Err(r.err(op, "ends no superstep (two syncs in a row, or a sync before the first step)"));
                    }
                    expect_sync = false;
                }
                other => {
                    return Err(r.err(
                        op,
                        format!("is not an exchange-stage op; convert-exchange-to-machine reads only the exchange dialect (is '{other}' lowered yet? run convert-tile-to-exchange first)"),
                    ))
                }
            }
        }
        if expect_sync {
            return Err(r.err(
                last_step.unwrap_or(f),
                "is not followed by an exchange.sync; every superstep ends with one",
            ));
        }
        let sets: FxHashMap<&str, usize> = p
            .steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Step::Compute(c) => Some((c.name.as_str(), i)),
                Step::Exchange(_) => None,
            })
            .collect();
        let mut resolved = Vec::with_capacity(probes.len());
        for (op, after, mut probe) in probes {
            probe.after = *sets.get(after.as_str()).ok_or_else(|| {
                r.err(
                    op,
                    format!("probes after @{after}, which is not a compute set of the function"),
                )
            })?;
            resolved.push(probe);
        }
        // Stable: probes after one compute set keep their order.
        resolved.sort_by_key(|pr| pr.after);
        p.probes = resolved;
        Ok(p)
    }
}

// ---------------------------------------------------------------- checks

impl Program {
    fn on(&self, b: BufId, tile: u32) -> bool {
        let ts = &self.buffers[b].tiles;
        // Most buffers are on a run of consecutive tiles: try the slot tile
        // would have in one before searching.
        let guess = ts
            .first()
            .and_then(|&f| tile.checked_sub(f))
            .and_then(|i| ts.get(i as usize));
        guess == Some(&tile) || ts.binary_search(&tile).is_ok()
    }

    /// Checks a move's transfers against its buffers.
    fn check_move(&self, m: &Move, loc: Loc, who: &str) -> Result<(), Diagnostic> {
        let (sb, db) = (&self.buffers[m.src], &self.buffers[m.dst]);
        for t in &m.transfers {
            let len = t.len as u64;
            if !self.on(m.src, t.src_tile) || t.src_offset as u64 + len > sb.bytes {
                return Err(Diagnostic::error(
                    loc,
                    format!(
                        "{who} reads bytes [{}, {}) of @{} on tile {}, which does not hold them",
                        t.src_offset,
                        t.src_offset as u64 + len,
                        sb.name,
                        t.src_tile
                    ),
                ));
            }
            for d in &t.dsts {
                let end = d.offset as u64 + len;
                if !self.on(m.dst, d.tile) || end > db.bytes {
                    return Err(Diagnostic::error(
                        loc,
                        format!(
                            "{who} writes bytes [{}, {end}) of @{} on tile {}, which does not hold them",
                            d.offset, db.name, d.tile
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks what the machine stage relies on, cheaply and before anything
    /// expensive: every tile inside the target, every buffer reference on a
    /// tile that has the buffer and inside it, every host stream's blocks in
    /// their buffer, and every byte a compute set reads from a delivered
    /// buffer written exactly once by the phases and local copies.
    /// A buffer a kernel reads with paired loads must be flagged
    /// `interleaved`, or placement may put it where those loads fault.
    fn check_wide_reads(&self, c: &ComputeSet, v: &Vertex) -> Result<(), Diagnostic> {
        let Kernel::Lib(spec) = &v.call.kernel else {
            return Ok(());
        };
        let Ok((layout, _)) = crate::device::records::record_layout(spec) else {
            return Ok(()); // check_record refuses it where the record is read
        };
        for (i, (w, slot)) in v.call.record.iter().zip(&layout).enumerate() {
            if let (Word::Buf(b, _), crate::device::records::Slot::Wide) = (*w, slot) {
                let buf = &self.buffers[b];
                if !buf.interleaved {
                    return Err(Diagnostic::error(
                        c.loc,
                        format!(
                            "compute set {}: {} reads @{} (record word {i}) with paired 64-bit loads, but @{} is not `interleaved`",
                            c.name,
                            spec.name(),
                            buf.name,
                            buf.name
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn check(&self, target: &ipu_target::Target) -> Result<(), Diagnostic> {
        let tiles = target.tiles();
        let sram = target.sram_bytes();
        for b in &self.buffers {
            if let Some(&t) = b.tiles.iter().find(|&&t| t >= tiles) {
                return Err(Diagnostic::error(
                    b.loc,
                    format!(
                        "buffer @{} is on tile {t}, but target {} has {tiles} tiles",
                        b.name, target.name
                    ),
                ));
            }
            if b.bytes > sram {
                return Err(Diagnostic::error(
                    b.loc,
                    format!(
                        "buffer @{} needs {} bytes, but a tile of {} has {sram}",
                        b.name, b.bytes, target.name
                    ),
                ));
            }
        }
        let placed: Vec<Placed> = self
            .inputs
            .iter()
            .filter_map(|i| i.at.placed())
            .chain(self.constants.iter().filter_map(|c| c.at.placed()))
            .chain(self.outputs.iter().map(|o| o.at.clone()))
            .chain(self.probes.iter().map(|p| p.at.clone()))
            .collect();
        for p in &self.probes {
            if !matches!(self.steps.get(p.after), Some(Step::Compute(_))) {
                return Err(Diagnostic::error(
                    p.at.loc,
                    "probes a value after a step that is not a compute set",
                ));
            }
        }
        let stored = self
            .inputs
            .iter()
            .map(|i| &i.at)
            .chain(self.constants.iter().map(|c| &c.at));
        for at in stored {
            for p in &at.placements {
                let buf = &self.buffers[p.buffer];
                for r in &p.rects {
                    let (count, len, stride) = p.layout.filled(r, at.elem_bytes as i64);
                    let end = (count - 1) * stride + len;
                    if !self.on(p.buffer, r.tile) || end > buf.bytes {
                        return Err(Diagnostic::error(
                            at.loc,
                            format!(
                                "places [{:?}, {:?}) in @{} on tile {}, which does not hold {end} bytes of it",
                                r.lo, r.hi, buf.name, r.tile
                            ),
                        ));
                    }
                }
            }
        }
        for at in &placed {
            let shape = (at.shape.clone(), at.elem_bytes);
            if at.mapping.grid.len() != shape.0.len() {
                return Err(Diagnostic::error(
                    at.loc,
                    "has a mapping whose rank is not the value's",
                ));
            }
            // Before the blocks are listed: a grid can have billions of them.
            if at.mapping.last_tile() >= i64::from(tiles) {
                return Err(Diagnostic::error(
                    at.loc,
                    format!(
                        "has a mapping whose blocks reach tile {}, but target {} has {tiles} tiles",
                        at.mapping.last_tile(),
                        target.name
                    ),
                ));
            }
            let full: i64 = at.mapping.block_shape(&shape.0).iter().product();
            let bytes = full.max(0) as u64 * shape.1;
            let buf = &self.buffers[at.buffer];
            if bytes > buf.bytes {
                return Err(Diagnostic::error(
                    at.loc,
                    format!(
                        "needs {bytes} bytes per block, but buffer @{} has {}",
                        buf.name, buf.bytes
                    ),
                ));
            }
            for blk in crate::geometry::blocks(&at.mapping, &shape.0) {
                if !self.on(at.buffer, blk.tile) {
                    return Err(Diagnostic::error(
                        at.loc,
                        format!(
                            "puts a block on tile {}, where buffer @{} is not",
                            blk.tile, buf.name
                        ),
                    ));
                }
            }
        }
        // Each step's own checks (its records and its moves' bounds) on
        // their own, in parallel; the first error in program order.
        use rayon::prelude::*;
        let mut tasks: Vec<StepCheck<'_>> = Vec::new();
        for s in &self.steps {
            match s {
                Step::Compute(c) => {
                    tasks.push(StepCheck::Vertices(c));
                    tasks.extend(c.copies.iter().map(|m| StepCheck::Copy(c, m)));
                }
                Step::Exchange(p) => tasks.extend(p.moves.iter().map(|m| StepCheck::Phase(p, m))),
            }
        }
        if let Some(Err(e)) = tasks
            .par_iter()
            .map(|t| self.check_task(t))
            .find_first(|r| r.is_err())
        {
            return Err(e);
        }
        // Per delivered buffer, the moves writing it (in program order) and where they are.
        let mut writers: Vec<Vec<(&Move, Loc)>> = vec![Vec::new(); self.buffers.len()];
        for t in &tasks {
            let (m, loc) = match t {
                StepCheck::Vertices(_) => continue,
                StepCheck::Copy(c, m) => (*m, c.loc),
                StepCheck::Phase(p, m) => (*m, p.loc),
            };
            if !self.buffers[m.dst].reads.is_empty() {
                writers[m.dst].push((m, loc));
            }
        }
        // Each delivered buffer's bytes checked on its own; the first error in buffer order.
        let delivered: Vec<BufId> = (0..self.buffers.len())
            .filter(|&b| !self.buffers[b].reads.is_empty())
            .collect();
        match delivered
            .par_iter()
            .map(|&b| self.check_delivered(b, &writers[b], tiles))
            .find_first(|r| r.is_err())
        {
            Some(Err(e)) => Err(e),
            _ => Ok(()),
        }
    }

    /// One step's check of [`Program::check`]: a compute set's records, or
    /// one move's transfers against its buffers.
    fn check_task(&self, t: &StepCheck<'_>) -> Result<(), Diagnostic> {
        match *t {
            StepCheck::Vertices(c) => {
                for v in &c.vertices {
                    for w in &v.call.record {
                        let Word::Buf(b, off) = *w else { continue };
                        let buf = &self.buffers[b];
                        if off as u64 > buf.bytes {
                            return Err(Diagnostic::error(
                                c.loc,
                                format!(
                                    "compute set {} refers to byte {off} of @{}, which has {} bytes",
                                    c.name, buf.name, buf.bytes
                                ),
                            ));
                        }
                        if let Some(&t) = v.tiles.iter().find(|&&t| !self.on(b, t)) {
                            return Err(Diagnostic::error(
                                c.loc,
                                format!(
                                    "compute set {} refers to @{} on tile {t}, where it is not",
                                    c.name, buf.name
                                ),
                            ));
                        }
                    }
                }
                for v in &c.vertices {
                    self.check_wide_reads(c, v)?;
                }
                Ok(())
            }
            StepCheck::Copy(c, m) => self.check_move(m, c.loc, &format!("compute set {}", c.name)),
            StepCheck::Phase(p, m) => {
                self.check_move(m, p.loc, &format!("exchange.phase @{}", p.name))
            }
        }
    }

    /// Checks that the moves `writers` (in program order) write every byte
    /// the readers of delivered buffer `b` read, and none twice.
    fn check_delivered(
        &self,
        b: BufId,
        writers: &[(&Move, Loc)],
        tiles: u32,
    ) -> Result<(), Diagnostic> {
        let buf = &self.buffers[b];
        // Each tile's writes, in program order: (start, end, writer).
        let n = tiles as usize;
        let mut start = vec![0usize; n + 1];
        for (m, _) in writers {
            for t in &m.transfers {
                for d in &t.dsts {
                    start[d.tile as usize + 1] += 1;
                }
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut writes = vec![(0u64, 0u64, 0u32); start[n]];
        for (k, (m, _)) in writers.iter().enumerate() {
            for t in &m.transfers {
                let len = t.len as u64;
                for d in &t.dsts {
                    let at = &mut fill[d.tile as usize];
                    writes[*at] = (d.offset as u64, d.offset as u64 + len, k as u32);
                    *at += 1;
                }
            }
        }
        let mut taken = vec![false; n];
        let mut bits = Bits::default();
        for r in &buf.reads {
            for &t in &r.tiles {
                // A tile's writes are checked once; a tile listed again has none left.
                let w: &mut [(u64, u64, u32)] = match taken.get_mut(t as usize) {
                    Some(done) if !*done => {
                        *done = true;
                        &mut writes[start[t as usize]..start[t as usize + 1]]
                    }
                    _ => &mut [],
                };
                // Most tiles' writes cover their reads exactly once: seen
                // without sorting them; any other tile is checked in order.
                if bits.written_once(w, r, buf.bytes) {
                    continue;
                }
                w.sort_by_key(|x| (x.0, x.1));
                for pair in w.windows(2) {
                    if pair[1].0 < pair[0].1 {
                        return Err(Diagnostic::error(
                            writers[pair[1].2 as usize].1,
                            format!(
                                "writes bytes [{}, {}) of @{} on tile {t} a second time",
                                pair[1].0,
                                pair[0].1.min(pair[1].1),
                                buf.name
                            ),
                        ));
                    }
                }
                let reach = reaches(w);
                for k in 0..r.count {
                    let (lo, hi) = (k * r.stride, k * r.stride + r.len);
                    // The part of [lo, hi) the writes leave uncovered, if any.
                    let at = covered_to(w, &reach, lo, hi);
                    if at < hi {
                        let (loc, who) = self.blame(b);
                        let gap_end = w
                            .iter()
                            .map(|x| x.0)
                            .filter(|&s| s > at)
                            .min()
                            .unwrap_or(hi)
                            .min(hi);
                        return Err(Diagnostic::error(
                            loc,
                            format!(
                                "{who} does not deliver bytes [{at}, {gap_end}) of @{} on tile {t}, which the next compute set reads",
                                buf.name
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Where to blame a buffer's missing bytes: the first phase writing it.
    fn blame(&self, b: BufId) -> (Loc, String) {
        for s in &self.steps {
            if let Step::Exchange(p) = s {
                if p.moves.iter().any(|m| m.dst == b) {
                    return (p.loc, format!("exchange.phase @{}", p.name));
                }
            }
        }
        let loc = self.steps.iter().find_map(|s| match s {
            Step::Compute(c)
                if c.vertices.iter().any(|v| {
                    v.call
                        .record
                        .iter()
                        .any(|w| matches!(w, Word::Buf(x, _) if *x == b))
                }) =>
            {
                Some(c.loc)
            }
            _ => None,
        });
        (
            loc.unwrap_or(self.buffers[b].loc),
            "no exchange phase".to_string(),
        )
    }
}

/// Per write of `w` (sorted by start), the furthest end of the writes
/// before it.
fn reaches(w: &[(u64, u64, u32)]) -> Vec<u64> {
    let mut reach = Vec::with_capacity(w.len());
    let mut furthest = 0;
    for x in w {
        reach.push(furthest);
        furthest = furthest.max(x.1);
    }
    reach
}

/// How far from `lo` (up to `hi`) the writes `w` (sorted by start) cover
/// without a gap; `reach` is [`reaches`] of `w`.
fn covered_to(w: &[(u64, u64, u32)], reach: &[u64], lo: u64, hi: u64) -> u64 {
    let mut at = lo;
    // The writes before `first` all end by `lo`: none of them can cover it.
    let first = reach.partition_point(|&e| e <= lo).saturating_sub(1);
    for &(s, e, _) in &w[first..] {
        if e <= at || s >= hi {
            continue;
        }
        if s > at {
            break;
        }
        at = at.max(e);
    }
    at
}

/// A bit per byte of a buffer on one tile (reused from tile to tile).
#[derive(Default)]
struct Bits {
    words: Vec<u64>,
}

impl Bits {
    /// Whether the writes `w` (start, end, writer), none empty, share no
    /// byte and cover every range `r` reads, in a buffer of `bytes` bytes.
    /// False says only that the writes need the exact check.
    fn written_once(&mut self, w: &[(u64, u64, u32)], r: &Reads, bytes: u64) -> bool {
        let n = bytes.div_ceil(64) as usize;
        self.words.clear();
        self.words.resize(n, 0);
        // Bits lo..hi of word i, lo < hi <= 64.
        let mask = |lo: u64, hi: u64| (u64::MAX >> (64 - (hi - lo))) << lo;
        for &(s, e, _) in w {
            if s >= e || e > bytes {
                return false;
            }
            let mut at = s;
            while at < e {
                let (i, lo) = ((at / 64) as usize, at % 64);
                let hi = (e - at + lo).min(64);
                let m = mask(lo, hi);
                if self.words[i] & m != 0 {
                    return false;
                }
                self.words[i] |= m;
                at += hi - lo;
            }
        }
        for k in 0..r.count {
            let (lo, hi) = (k * r.stride, k * r.stride + r.len);
            if hi > bytes {
                return false;
            }
            let mut at = lo;
            while at < hi {
                let (i, l) = ((at / 64) as usize, at % 64);
                let h = (hi - at + l).min(64);
                let m = mask(l, h);
                if self.words[i] & m != m {
                    return false;
                }
                at += h - l;
            }
        }
        true
    }
}

/// One part of [`Program::check`]'s per-step checks.
enum StepCheck<'a> {
    Vertices(&'a ComputeSet),
    Copy(&'a ComputeSet, &'a Move),
    Phase(&'a PhaseDecl, &'a Move),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(src: u32, off: u32, len: u32, dsts: &[(u32, u32)]) -> Transfer {
        Transfer {
            src_tile: src,
            src_offset: off,
            len,
            dsts: dsts
                .iter()
                .map(|&(tile, offset)| Destination { tile, offset })
                .collect(),
        }
    }

    #[test]
    fn coverage_skipping_ended_writes_matches_a_plain_scan() {
        // The plain scan: every write from the first.
        let plain = |w: &[(u64, u64, u32)], lo: u64, hi: u64| {
            let mut at = lo;
            for &(s, e, _) in w {
                if e <= at || s >= hi {
                    continue;
                }
                if s > at {
                    break;
                }
                at = at.max(e);
            }
            at
        };
        let mut x = 12345u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..500 {
            let n = next(12) as usize;
            let mut w: Vec<(u64, u64, u32)> = (0..n)
                .map(|k| {
                    let s = next(64);
                    (s, s + 1 + next(24), k as u32)
                })
                .collect();
            w.sort_by_key(|x| (x.0, x.1));
            let reach = reaches(&w);
            for lo in 0..80 {
                for len in [1, 3, 8, 40] {
                    assert_eq!(
                        covered_to(&w, &reach, lo, lo + len),
                        plain(&w, lo, lo + len),
                        "{w:?} [{lo}, {})",
                        lo + len
                    );
                }
            }
        }
    }

    #[test]
    fn writes_seen_once_by_bits_are_what_the_ordered_check_passes() {
        // The ordered check: no two writes overlap, and every read range is covered.
        let ordered = |w: &[(u64, u64, u32)], r: &Reads| {
            let mut w = w.to_vec();
            w.sort_by_key(|x| (x.0, x.1));
            if w.windows(2).any(|p| p[1].0 < p[0].1) {
                return false;
            }
            let reach = reaches(&w);
            (0..r.count).all(|k| {
                let (lo, hi) = (k * r.stride, k * r.stride + r.len);
                covered_to(&w, &reach, lo, hi) >= hi
            })
        };
        let mut x = 99u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let mut bits = Bits::default();
        let (mut passed, mut failed) = (0, 0);
        for _ in 0..4000 {
            let bytes = 1 + next(300);
            // Mostly a tiling of the buffer in a shuffled order, sometimes disturbed.
            let mut w = Vec::new();
            let mut at = 0;
            while at < bytes {
                let len = (1 + next(90)).min(bytes - at);
                w.push((at, at + len, w.len() as u32));
                at += len;
            }
            for i in (1..w.len()).rev() {
                w.swap(i, next(i as u64 + 1) as usize);
            }
            match next(4) {
                0 if !w.is_empty() => {
                    let i = next(w.len() as u64) as usize;
                    w.remove(i);
                }
                1 => {
                    let s = next(bytes);
                    w.push((s, (s + 1 + next(8)).min(bytes), 7));
                }
                _ => {}
            }
            let stride = 1 + next(80);
            let r = Reads {
                tiles: vec![0],
                count: 1 + next(5),
                len: 1 + next(stride),
                stride,
            };
            let want = ordered(&w, &r);
            assert_eq!(
                bits.written_once(&w, &r, bytes),
                want,
                "{w:?} {r:?} {bytes}"
            );
            if want {
                passed += 1;
            } else {
                failed += 1;
            }
        }
        assert!(passed > 100 && failed > 100, "{passed} {failed}");
    }

    #[test]
    fn regular_transfers_compress_to_one_run_and_back() {
        // Rows of a block multicast to 4 tiles, row by row.
        let ts: Vec<Transfer> = (0..8)
            .map(|r| {
                t(
                    0,
                    r * 64,
                    64,
                    &[(1, r * 64), (2, r * 64), (3, r * 64), (4, r * 64)],
                )
            })
            .collect();
        let runs = compress(&ts);
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].dsts.len(), 1);
        assert_eq!(expand(&runs), ts);
    }

    #[test]
    fn irregular_transfers_round_trip_exactly() {
        let ts = vec![
            t(3, 0, 16, &[(1, 0)]),
            t(4, 16, 16, &[(2, 0)]),
            t(9, 4, 8, &[(0, 8), (5, 0), (6, 100)]),
            t(10, 4, 8, &[(1, 8), (6, 0), (7, 100)]),
            t(0, 0, 4, &[(15, 0)]),
        ];
        let runs = compress(&ts);
        assert_eq!(expand(&runs), ts);
        assert_eq!(runs.len(), 3);
    }

    #[test]
    fn runs_that_repeat_with_a_shift_fold_into_one() {
        // Two rows of 4 chunks each, every row moved by 512 source bytes and
        // 256 destination bytes: one run repeated.
        let mut ts = Vec::new();
        for row in 0..6u32 {
            for c in 0..4u32 {
                ts.push(t(
                    1152,
                    row * 512 + c * 64,
                    64,
                    &[(c, row * 256), (c + 192, row * 256)],
                ));
            }
        }
        let runs = compress(&ts);
        assert_eq!(runs.len(), 1, "{runs:?}");
        assert_eq!((runs[0].repeat, runs[0].count), (6, 4));
        assert_eq!(expand(&runs), ts);
    }
}
