//! The row family: ops that run along rows of a tensor, `tile.softmax`
//! (softmax and log-softmax) and `tile.layer_norm` here, `tile.reduce` in
//! [`super::reduce`], and what they share.
//!
//! Mapping: the dimensions a row runs along stay whole on a tile (grid 1
//! there) and the others are cut over the tiles, outer dimensions first
//! ([`cut`]), so each tile holds whole rows. Softmax may cut its axis, and
//! layer norm its first normalized dimension, too (when whole rows would
//! leave tiles or workers idle and the kernels' cycle formulas and the
//! exchange costs say it pays). The producer's layout is used where it lies
//! unless another, charged the re-layout ([`relayout_cycles`]), is
//! cheaper by the same formulas ([`cheapest_row_plan`]). Cut: each tile's pieces'
//! statistics ([max, sum exp] or [mean, var]) are shared out, each piece's
//! tile combining its share of the rows (its rows' groups cut into parts
//! on several workers when the share is short, [`combine_for_share`]),
//! the combined shares sent to all the rows' tiles, and each piece
//! finished ([`run_cut_rows`]); a cut
//! softmax's statistics keep each piece's exponentials exp(x - m) in the
//! result block, so its last pass is one multiply per element by the row's
//! exp(m - M) / S (log-softmax subtracts M + log S from x and keeps none);
//! a cut layer norm's tiles read only their columns of the scale and bias.
//! A cut softmax may take in the elementwise chain just before it
//! ([`prologue_chain`]: scores times a constant, widened, plus a row vector,
//! each op read by nothing but the next): one `tile.softmax` of the chain's
//! input whose statistics pass computes the chain as the separate ops
//! would and stores its value (probed as the chain's last op), where the
//! cycle formulas say it costs less than the ops apart. Kernel:
//! `rows.S` walks each
//! block as `outer` rows of `len` elements, `inner` elements apart: along
//! contiguous rows when the row's dimensions are the block's last
//! (`inner` = 1), else down its columns two at a time (f32; an f16 block is
//! cast to f32 on the tile around the call). A block that does not fit a
//! tile, or rows that are not whole 64-bit granules, are refused at the op.

use super::{block_bytes_of, build_op, data_bytes, kernel_cycles, records, DeviceOp, TileEnv};
use crate::ProgramBuilder;
use ipu_dialects::nn;
use ipu_dialects::tile::{self, MapFn, Mapping};
use ipu_ir::types::AttrKind;
use ipu_ir::{Context, Diagnostic, Op, Type, Value};
use ipu_isa::kernels::{ElemType, KernelSpec, RowWalk, StatsPrologue};
use ipu_program::elem::{name as elem_name, value_elem};
use ipu_program::geometry::{blocks, mapping_of, Block, Layout, Run};
use ipu_program::Word;
use ipu_target::Target;
use rustc_hash::FxHashMap;

/// Where a kernel call of a row op reads or writes on its tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// The op's input block.
    Input,
    /// Scratch buffer `i` of the op.
    Temp(usize),
    /// The result block.
    Out,
    /// The tile's partial results (a reduction cut along a reduced axis).
    Partial,
}

/// One kernel call of every tile.
#[derive(Clone, Debug)]
pub(crate) struct Stage {
    pub spec: KernelSpec,
    pub from: Slot,
    pub to: Slot,
}

/// The calls each tile of a row op makes, in order, and their scratch
/// buffers (bytes).
#[derive(Clone, Debug, Default)]
pub(crate) struct Calls {
    pub stages: Vec<Stage>,
    pub temps: Vec<u64>,
}

impl Calls {
    pub fn temp(&mut self, bytes: u64) -> Slot {
        self.temps.push(bytes.div_ceil(8) * 8);
        Slot::Temp(self.temps.len() - 1)
    }

    pub fn push(&mut self, spec: KernelSpec, from: Slot, to: Slot) {
        self.stages.push(Stage { spec, from, to });
    }

    /// The row kernel: the first call that is not a cast (a boolean
    /// reduction's `intew`).
    pub fn kernel(&self) -> Option<&KernelSpec> {
        self.stages
            .iter()
            .map(|s| &s.spec)
            .find(|s| s.source == "rows" || s.source == "intew")
    }

    /// Cycles of one tile's calls, by their cycle formulas.
    pub fn cycles(&self) -> Result<u64, String> {
        self.stages.iter().map(|s| kernel_cycles(&s.spec)).sum()
    }
}

/// A block of `block` elements seen along its dimensions `[lo, hi)`:
/// (outer, len, inner) element counts.
pub(crate) fn walk_of(block: &[i64], lo: usize, hi: usize) -> (usize, usize, usize) {
    let p = |d: &[i64]| d.iter().product::<i64>().max(0) as usize;
    (p(&block[..lo]), p(&block[lo..hi]), p(&block[hi..]))
}

/// The walk of a row kernel over `len`-element rows `inner` apart of `e`
/// elements (f32 for columns), or why the kernels cannot walk them.
pub(crate) fn row_walk(len: usize, inner: usize, e: ElemType) -> Result<RowWalk, String> {
    if inner == 1 {
        let bytes = len * e.bytes();
        if !bytes.is_multiple_of(8) {
            return Err(format!(
                "has rows of {len} {} elements ({bytes} bytes) on a tile, which are not whole 64-bit granules as the row kernels need",
                elem_name(e)
            ));
        }
        return Ok(RowWalk::Rows);
    }
    if !inner.is_multiple_of(2) {
        return Err(format!(
            "runs along a dimension whose elements are {inner} apart on a tile, an odd number: the row kernels walk columns two at a time"
        ));
    }
    if inner * 4 >= 16384 {
        return Err(format!(
            "runs along a dimension whose elements are {inner} apart on a tile, beyond the row kernels' reach (4095)"
        ));
    }
    Ok(RowWalk::Columns {
        inner,
        pitch: inner,
    })
}

/// Whether one kernel specialisation reads every block of `grid` over
/// `shape`: where a dimension is cut unevenly, the short blocks must be a
/// prefix of the full block's layout (every earlier dimension has blocks
/// of one element).
pub(crate) fn uniform_blocks(shape: &[i64], grid: &[i64]) -> bool {
    let m = Mapping {
        grid: grid.to_vec(),
        first_tile: 0,
        stride: 1,
    };
    let b = m.block_shape(shape);
    (0..shape.len()).all(|k| shape[k] % grid[k] == 0 || b[..k].iter().all(|&e| e == 1))
}

/// Cuts `shape` over at most `tiles` tiles, dimensions in `order` first
/// (the others keep one block): each into as many blocks as the tiles left
/// allow, evenly (a divisor of its extent) unless short blocks keep the
/// full block's layout.
pub(crate) fn cut(shape: &[i64], order: &[usize], tiles: i64) -> Vec<i64> {
    let pick = |uneven: bool| {
        let mut g = vec![1i64; shape.len()];
        let mut left = tiles.max(1);
        for &d in order {
            let n = shape[d].max(1);
            let most = n.min(left);
            g[d] = if uneven && (0..d).all(|e| g[e] >= shape[e]) {
                let per = (n + most - 1) / most;
                (n + per - 1) / per
            } else {
                (1..=most).rev().find(|k| n % k == 0).unwrap_or(1)
            };
            left /= g[d];
        }
        g
    };
    let g = pick(true);
    if uniform_blocks(shape, &g) {
        g
    } else {
        pick(false)
    }
}

/// The grids worth trying for a row op over `shape` whose dimensions not
/// in `kept` stay whole, best first: the kept dimensions cut outer first,
/// then inner first (the blocks' rows then end the block more often and
/// are walked contiguously), on all the tiles, then on half as many, and
/// so on (a smaller cut may make rows of whole granules).
pub(crate) fn row_grids(shape: &[i64], kept: &[usize], tiles: i64) -> Vec<Vec<i64>> {
    let inner_first: Vec<usize> = kept.iter().rev().copied().collect();
    let mut out: Vec<Vec<i64>> = Vec::new();
    let mut budget = tiles.max(1);
    loop {
        for order in [kept, &inner_first[..]] {
            let g = cut(shape, order, budget);
            if !out.contains(&g) {
                out.push(g);
            }
        }
        if budget == 1 {
            return out;
        }
        budget /= 2;
    }
}

/// The dimensions of a tensor of rank `rank` outside `[lo, hi)`.
pub(crate) fn outside(rank: usize, lo: usize, hi: usize) -> Vec<usize> {
    (0..rank).filter(|&d| d < lo || d >= hi).collect()
}

/// The mapping of a cut starting at tile 0.
pub(crate) fn at_zero(grid: Vec<i64>) -> Mapping {
    Mapping {
        grid,
        first_tile: 0,
        stride: 1,
    }
}

/// The producer's mapping of `v`, when it fits the target and keeps
/// dimensions `[lo, hi)` of `shape` whole with blocks one kernel reads.
pub(crate) fn producer_cut(
    env: &TileEnv,
    v: Value,
    shape: &[i64],
    lo: usize,
    hi: usize,
) -> Option<Mapping> {
    let m = env.mappings.get(&v)?;
    let fits = m.grid.len() == shape.len()
        && m.last_tile() < env.target.tiles() as i64
        && m.grid[lo..hi].iter().all(|&g| g == 1)
        && uniform_blocks(shape, &m.grid);
    fits.then(|| m.clone())
}

/// The first candidate mapping whose plan `try_plan` accepts: it returns
/// the plan, or an error and whether it is about memory (a mapping that
/// fits is preferred as the diagnostic when none works).
pub(crate) fn first_plan<P>(
    candidates: Vec<Mapping>,
    mut try_plan: impl FnMut(&Mapping) -> Result<P, (bool, String)>,
) -> Result<(Mapping, P), String> {
    let mut why: Option<(bool, String)> = None;
    for m in candidates {
        match try_plan(&m) {
            Ok(p) => return Ok((m, p)),
            Err(e) => {
                if why.as_ref().is_none_or(|w| w.0 && !e.0) {
                    why = Some(e);
                }
            }
        }
    }
    Err(why.map_or_else(|| "has no mapping to try".into(), |w| w.1))
}

/// The memory check of a row op's blocks on one tile.
pub(crate) fn check_fits(
    need: u64,
    shape: &[i64],
    m: &Mapping,
    target: &Target,
) -> Result<(), (bool, String)> {
    let available = data_bytes(target);
    if need > available {
        return Err((
            true,
            format!(
                "does not fit: {shape:?} over a {:?} grid needs {need} bytes per tile, but a tile of {} has {available} for data",
                m.grid, target.name
            ),
        ));
    }
    Ok(())
}

/// A memory refusal of an op that keeps its rows whole on a tile, saying so.
fn whole_rows((memory, why): (bool, String)) -> (bool, String) {
    (
        memory,
        if memory {
            format!("{why} (its rows are not cut over tiles yet)")
        } else {
            why
        },
    )
}

/// The kernel element type of `v`: f32 or f16.
pub(crate) fn row_elem(cx: &Context, v: Value) -> Result<ElemType, String> {
    match value_elem(cx, v) {
        Some(e @ (ElemType::F32 | ElemType::F16)) => Ok(e),
        Some(e) => Err(format!(
            "on {} elements has no row kernel (f32 and f16 do)",
            elem_name(e)
        )),
        None => {
            let e = cx.tensor_parts(cx.value_type(v)).map(|(_, e)| e);
            let name = e.map_or_else(
                || "these".into(),
                |e| ipu_ir::printer::type_to_string(cx, e),
            );
            Err(format!(
                "on {name} elements has no row kernel (f32 and f16 do)"
            ))
        }
    }
}

/// Words of the slots of one tile.
pub(crate) struct SlotWords {
    pub input: Word,
    pub out: Option<Word>,
    pub partial: Option<Word>,
    pub temps: Vec<Word>,
}

impl SlotWords {
    pub fn word(&self, s: Slot) -> Word {
        match s {
            Slot::Input => self.input,
            Slot::Out => self.out.expect("a result buffer"),
            Slot::Partial => self.partial.expect("a partial buffer"),
            Slot::Temp(i) => self.temps[i],
        }
    }
}

/// The call of a row op's stage on a tile (casts and row kernels).
pub(crate) fn stage_call(
    s: &Stage,
    w: &SlotWords,
    params: (Option<Word>, Option<Word>),
) -> ipu_program::Call {
    let (from, to) = (w.word(s.from), w.word(s.to));
    match s.spec.source {
        "rows" if s.spec.params.get("OP") == Some(&(ipu_isa::kernels::RowOp::LayerNorm as i64)) => {
            records::layer_norm(&s.spec, from, params.0, params.1, to)
        }
        "rows" => records::rows_along(&s.spec, from, to),
        "intew" => records::intew(&s.spec, &[from], to),
        _ => records::unary(&s.spec, from, to),
    }
}

/// Refuses a tile op whose `recorded` kernel is not the one its plan calls.
pub(crate) fn check_recorded(
    b: &dyn ProgramBuilder<'_>,
    op: Op,
    recorded: &str,
    calls: &Calls,
) -> Result<(), Diagnostic> {
    let want = calls.kernel().map(KernelSpec::name).unwrap_or_default();
    if recorded != want {
        return Err(b.err(
            op,
            format!("records kernel '{recorded}', but its operands and mapping call for '{want}'"),
        ));
    }
    Ok(())
}

/// The scratch buffers of a row op on a tile, named `s<set>.rows<i>`.
pub(crate) fn alloc_temps(
    b: &mut dyn ProgramBuilder<'_>,
    op: Op,
    tile: u32,
    set: usize,
    calls: &Calls,
) -> Result<Vec<Word>, Diagnostic> {
    let mut out = Vec::new();
    for (i, &bytes) in calls.temps.iter().enumerate() {
        out.push(Word::Buf(
            b.alloc(op, tile, &format!("s{set}.rows{i}"), bytes, false)?,
            0,
        ));
    }
    Ok(out)
}

// ------------------------------------------------------------- softmax

pub struct Softmax;

/// How the tiles of a row op (softmax, layer norm) run it.
enum RowPlan {
    /// Each tile holds whole rows (a layer norm: and the whole scale and
    /// bias).
    Whole(Calls),
    /// The axis (a layer norm: its first normalized dimension) is cut into
    /// `groups` pieces over tiles: each piece's tile gathers every piece's
    /// statistics of its share of the rows and combines them (`combine`:
    /// the busiest tile's share), the combined shares are sent to all the
    /// pieces' tiles, and each piece normalised (a layer norm: with its
    /// columns of the scale and bias).
    Cut {
        groups: usize,
        rows: usize,
        stats: KernelSpec,
        combine: KernelSpec,
        apply: KernelSpec,
    },
}

impl RowPlan {
    /// The kernel the tile op records: the one every tile calls first on
    /// its input.
    fn kernel(&self) -> String {
        match self {
            RowPlan::Whole(c) => c.kernel().map(KernelSpec::name).unwrap_or_default(),
            RowPlan::Cut { stats, .. } => stats.name(),
        }
    }

    /// Cycles of the calls of the busiest tile.
    fn cycles(&self) -> Result<u64, String> {
        match self {
            RowPlan::Whole(c) => c.cycles(),
            RowPlan::Cut {
                stats,
                combine,
                apply,
                ..
            } => Ok(kernel_cycles(stats)? + kernel_cycles(combine)? + kernel_cycles(apply)?),
        }
    }

    /// Estimated cycles: the calls, and for cut rows the two phases and
    /// the two supersteps more.
    fn estimate(&self, target: &Target) -> Result<u64, String> {
        let c = self.cycles()?;
        Ok(match self {
            RowPlan::Whole(_) => c,
            RowPlan::Cut { groups, rows, .. } => c + cut_exchange_cycles(*groups, *rows, target),
        })
    }
}

/// The plan of softmax along `axis` of `shape` (`e` elements) over the
/// blocks of `m`.
fn softmax_calls(
    shape: &[i64],
    e: ElemType,
    axis: usize,
    log: bool,
    m: &Mapping,
    pre: &StatsPrologue,
) -> Result<RowPlan, String> {
    let block = m.block_shape(shape);
    let (outer, len, inner) = walk_of(&block, axis, axis + 1);
    if pre.any() && m.grid[axis] == 1 {
        return Err(
            "takes in the ops before it only where its axis is cut over tiles (in its statistics pass)"
                .into(),
        );
    }
    if pre.any() {
        // rows.S's prologue: f32 rows of two or more whole granules of x.
        let per = if pre.widen { 4 } else { 2 };
        if e != ElemType::F32 || inner != 1 || !len.is_multiple_of(per) || len < 2 * per {
            return Err(format!(
                "takes in the ops before it on pieces of {len} elements, which are not two or more granules of its input"
            ));
        }
    }
    if m.grid[axis] > 1 {
        let groups = m.grid[axis];
        if shape[axis] % groups != 0 {
            return Err(format!(
                "cuts its axis of {} into {groups} uneven blocks",
                shape[axis]
            ));
        }
        if inner != 1 {
            return Err(
                "cuts its axis over tiles where the rows are walked as columns, which is not lowered yet"
                    .into(),
            );
        }
        row_walk(len, 1, e)?;
        if outer * 8 >= 16384 {
            return Err(format!(
                "cuts its axis over tiles with {outer} rows per tile, more than the combining kernel reaches (2047)"
            ));
        }
        // Softmax keeps each piece's exponentials exp(x - m) from the
        // statistics for the last pass (y = e * exp(m - M) / S);
        // log-softmax's last pass (y = x - (M + log S)) needs none.
        let exps = !log;
        return Ok(RowPlan::Cut {
            groups: groups as usize,
            rows: outer,
            stats: KernelSpec::softmax_stats(e, outer, len, exps).with_prologue(pre),
            combine: busiest_share(
                KernelSpec::softmax_combine(log, outer, groups as usize),
                outer,
                groups as usize,
            )?,
            apply: KernelSpec::softmax_apply(log, exps, e, outer, len),
        });
    }
    let mut calls = Calls::default();
    if inner == 1 || e == ElemType::F32 {
        let walk = row_walk(len, inner, e)?;
        calls.push(
            KernelSpec::softmax(log, e, outer, len, walk),
            Slot::Input,
            Slot::Out,
        );
        return Ok(RowPlan::Whole(calls));
    }
    // f16 columns: cast to f32, softmax in place, cast back.
    let walk = row_walk(len, inner, ElemType::F32)?;
    let n = outer * len * inner;
    if !n.is_multiple_of(4) {
        return Err(format!(
            "has f16 blocks of {n} elements walked as columns, which the casts around the row kernel need in groups of 4"
        ));
    }
    let t = calls.temp(n as u64 * 4);
    calls.push(
        KernelSpec::cast(ElemType::F16, ElemType::F32, n),
        Slot::Input,
        t,
    );
    calls.push(
        KernelSpec::softmax(log, ElemType::F32, outer, len, walk),
        t,
        t,
    );
    calls.push(
        KernelSpec::cast(ElemType::F32, ElemType::F16, n),
        t,
        Slot::Out,
    );
    Ok(RowPlan::Whole(calls))
}

/// Axis, log flag, shape and element type (the result's: a prologue's
/// input may be narrower) of a softmax (nn or tile op).
fn softmax_of(cx: &Context, op: Op) -> Result<(usize, bool, Vec<i64>, ElemType), String> {
    let x = cx.operand(op, 0);
    let shape = cx.value_shape(x);
    let (axis, log) = if let Some(t) = tile::Softmax::cast(cx, op) {
        (t.axis(cx), t.log(cx))
    } else if let Some(s) = nn::Softmax::cast(cx, op) {
        (s.axis(cx), false)
    } else if let Some(s) = nn::LogSoftmax::cast(cx, op) {
        (s.axis(cx), true)
    } else {
        return Err("is not a softmax".into());
    };
    let axis = usize::try_from(axis)
        .ok()
        .filter(|&a| a < shape.len())
        .ok_or_else(|| format!("has axis {axis} outside its rank {}", shape.len()))?;
    row_elem(cx, x)?;
    Ok((axis, log, shape, row_elem(cx, cx.result(op, 0))?))
}

/// The prologue a `tile.softmax` records: a widening (an f16 input, an
/// f32 result), its `scale`, its row vector (operand #1).
fn prologue_of(cx: &Context, op: Op) -> StatsPrologue {
    let (x, y) = (cx.operand(op, 0), cx.result(op, 0));
    let mul = tile::Softmax(op).scale(cx).map(|s| s as f32);
    StatsPrologue {
        widen: value_elem(cx, x) == Some(ElemType::F16) && value_elem(cx, y) == Some(ElemType::F32),
        mul,
        mask: cx.operands(op).len() > 1,
    }
}

/// A softmax as its plans see it: along `axis` of `shape`, computing in
/// `e`, reading `in_bytes`-byte elements (a prologue's f16 input), taking
/// in `pre`.
struct SoftmaxShape {
    axis: usize,
    log: bool,
    shape: Vec<i64>,
    e: ElemType,
    in_bytes: u64,
    pre: StatsPrologue,
}

/// The cheapest of the producer's layout (nothing moves), the first
/// whole-row layout that works and the axis cut over the tiles that layout
/// leaves idle (each charged its re-layout), by the kernels' cycle formulas
/// and the target's exchange costs; with the plan's estimate (its
/// re-layout included). A prologue's plans are cut ones.
fn softmax_plan(
    sm: &SoftmaxShape,
    target: &Target,
    producer: Option<Mapping>,
) -> Result<(Mapping, RowPlan, u64), String> {
    let SoftmaxShape {
        axis,
        log,
        ref shape,
        e,
        in_bytes,
        ref pre,
    } = *sm;
    let tiles = target.tiles() as i64;
    let try_one = |m: &Mapping| -> Result<RowPlan, (bool, String)> {
        let eb = e.bytes() as i64;
        let block = block_bytes_of(m, shape, eb);
        let f32_copy = if e == ElemType::F16
            && m.grid[axis] == 1
            && m.block_shape(shape)[axis + 1..].iter().product::<i64>() > 1
        {
            block * 2
        } else {
            0
        };
        // A prologue's input, its rows t and its piece of the row vector.
        let need = if pre.any() {
            let cols = m.block_shape(shape)[axis] as u64 * eb as u64;
            block_bytes_of(m, shape, in_bytes as i64) + 2 * block + cols
        } else {
            2 * block + f32_copy
        };
        check_fits(need, shape, m, target).map_err(whole_rows)?;
        softmax_calls(shape, e, axis, log, m, pre).map_err(|e| (false, e))
    };
    let whole = row_grids(shape, &outside(shape.len(), axis, axis + 1), tiles);
    cheapest_row_plan(
        producer,
        whole,
        axis,
        shape,
        in_bytes,
        target,
        !pre.any(),
        try_one,
    )
}

/// The `tile.map` ops just before a softmax that its statistics pass can
/// do instead ([`StatsPrologue`]), and what it then reads.
struct Prologue {
    /// The value before them.
    root: Value,
    pre: StatsPrologue,
    /// The row vector they add.
    mask: Option<Value>,
    /// The ops, first to last.
    ops: Vec<Op>,
}

/// The splat value of a `tile.constant` of f16 or f32 elements.
fn splat_value(cx: &Context, v: Value) -> Option<f32> {
    let c = cx
        .defining_op(v)
        .and_then(|c| tile::Constant::cast(cx, c))?;
    let AttrKind::DenseElements { data, .. } = cx.attr_kind(c.value(cx)) else {
        return None;
    };
    // A splat (or a single element) holds one element's bytes.
    match (value_elem(cx, v)?, &data.bytes[..]) {
        (ElemType::F32, &[a, b, c, d]) => Some(f32::from_le_bytes([a, b, c, d])),
        (ElemType::F16, &[a, b]) => Some(ipu_isa::float::f16_value(u16::from_le_bytes([a, b]))),
        _ => None,
    }
}

/// The ops before a softmax of `x` along `axis` that its statistics can
/// take in, each read by nothing but the next (so none is stored): from
/// the last, an add of a row vector of f32 along the axis (the last), an
/// exact widening of f16 to f32 before it, a multiply by a splat constant
/// before that; any of them, in that order. `None` when there are none.
fn prologue_chain(cx: &Context, x: Value, axis: usize) -> Option<Prologue> {
    let map = |v: Value, f: MapFn| {
        cx.defining_op(v).filter(|&d| {
            tile::Map::cast(cx, d).is_some_and(|m| m.map_fn(cx) == f)
                && cx.uses(v).len() == 1
                && cx.operands(d).len() == if f == MapFn::Cast { 1 } else { 2 }
        })
    };
    if value_elem(cx, x) != Some(ElemType::F32) {
        return None;
    }
    let shape = cx.value_shape(x);
    let mut p = Prologue {
        root: x,
        pre: StatsPrologue::default(),
        mask: None,
        ops: Vec::new(),
    };
    if let Some(add) = map(x, MapFn::Add).filter(|_| axis + 1 == shape.len()) {
        let o = cx.operands(add);
        let row = |v: Value| {
            let vs = cx.value_shape(v);
            vs.last() == shape.last()
                && vs[..vs.len().saturating_sub(1)].iter().all(|&d| d == 1)
                && value_elem(cx, v) == Some(ElemType::F32)
        };
        if let Some((a, v)) = [(o[0], o[1]), (o[1], o[0])]
            .into_iter()
            .find(|&(a, v)| cx.value_shape(a) == shape && row(v))
        {
            p.mask = Some(v);
            p.pre.mask = true;
            p.ops.push(add);
            p.root = a;
        }
    }
    if let Some(cast) = map(p.root, MapFn::Cast) {
        let input = cx.operand(cast, 0);
        if value_elem(cx, input) == Some(ElemType::F16) && tile::Map(cast).scale(cx).is_none() {
            p.pre.widen = true;
            p.ops.push(cast);
            p.root = input;
        }
    }
    if let Some(mul) = map(p.root, MapFn::Mul) {
        let o = cx.operands(mul);
        let rshape = cx.value_shape(p.root);
        if let Some((a, c)) = [(o[0], o[1]), (o[1], o[0])].into_iter().find_map(|(a, c)| {
            Some((a, splat_value(cx, c)?)).filter(|&(a, _)| cx.value_shape(a) == rshape)
        }) {
            p.pre.mul = Some(c);
            p.ops.push(mul);
            p.root = a;
        }
    }
    p.ops.reverse();
    (!p.ops.is_empty()).then_some(p)
}

/// The cheapest plan, by the plans' estimates, of the producer's layout
/// (nothing moves) when `try_one` takes it, the first of the whole-row
/// grids `whole` that works, and each of them with dimension `axis` of
/// `shape` cut over the tiles it leaves idle; a layout other than
/// the producer's is charged the re-layout exchange ([`relayout_cycles`]
/// of a value of `shape`, `elem_bytes`-byte elements).
#[allow(clippy::too_many_arguments)]
fn cheapest_row_plan(
    producer: Option<Mapping>,
    whole: Vec<Vec<i64>>,
    axis: usize,
    shape: &[i64],
    elem_bytes: u64,
    target: &Target,
    whole_rows: bool,
    mut try_one: impl FnMut(&Mapping) -> Result<RowPlan, (bool, String)>,
) -> Result<(Mapping, RowPlan, u64), String> {
    let extent = shape[axis];
    let mut best: Option<(u64, Mapping, RowPlan)> = None;
    if let Some(pm) = &producer {
        if let Ok(p) = try_one(pm) {
            best = Some((p.estimate(target)?, pm.clone(), p));
        }
    }
    let moved = |m: &Mapping| {
        producer.as_ref().map_or(Ok(0), |pm| {
            relayout_cycles(shape, elem_bytes, pm, m, target)
        })
    };
    let tiles = target.tiles() as i64;
    let whole: Vec<Mapping> = whole.into_iter().map(at_zero).collect();
    // Keeps `(m, p)` when cheaper; the move is costed only for a plan its
    // kernels alone make cheaper, at tile 0 or ending at the last tile,
    // whichever moves more cheaply (what stays on a tile is copied there,
    // before the kernels, while the exchange moves every tile's data at once).
    let consider = |best: &mut Option<(u64, Mapping, RowPlan)>, m: Mapping, p: RowPlan| {
        let c = p.estimate(target)?;
        if best.as_ref().is_some_and(|b| c >= b.0) {
            return Ok::<(), String>(());
        }
        let mut placed = (moved(&m)?, m.clone());
        let last = tiles - m.blocks();
        if producer.is_some() && last > 0 {
            let at_end = Mapping {
                first_tile: last,
                ..m
            };
            let mv = moved(&at_end)?;
            if mv < placed.0 {
                placed = (mv, at_end);
            }
        }
        let (mv, m) = placed;
        let c = c + mv;
        if best.as_ref().is_none_or(|b| c < b.0) {
            *best = Some((c, m, p));
        }
        Ok(())
    };
    // Without whole rows (`whole_rows` false) only the cut layouts are tried.
    let mut why = None;
    if whole_rows {
        match first_plan(whole.clone(), &mut try_one) {
            Ok((wm, wp)) => consider(&mut best, wm, wp)?,
            Err(e) if best.is_none() => return Err(e),
            Err(_) => {}
        }
    }
    for base in whole {
        let used: i64 = base.grid.iter().product();
        for k in 2..=(tiles / used.max(1)).min(extent) {
            if extent % k != 0 {
                continue;
            }
            let mut m = base.clone();
            m.grid[axis] = k;
            match try_one(&m) {
                Ok(p) => consider(&mut best, m, p)?,
                Err((_, e)) => why = why.or(Some(e)),
            }
        }
    }
    let (c, m, p) = best.ok_or_else(|| why.unwrap_or_else(|| "has no mapping to try".into()))?;
    Ok((m, p, c))
}

/// Estimated cycles of moving a value of `shape` (`elem_bytes`-byte
/// elements) from the blocks of `from` to those of `to`, as the exchange
/// stage makes the move: an exchange phase as long as its busiest tile
/// sends or receives (and the longest route), the local copies of what
/// stays on a tile (on the busiest tile, as `records::local_copy_calls`
/// makes them), and the two supersteps more (the exchange's, and the
/// compute set the move splits off its producer's); nothing when nothing
/// moves.
fn relayout_cycles(
    shape: &[i64],
    elem_bytes: u64,
    from: &Mapping,
    to: &Mapping,
    target: &Target,
) -> Result<u64, String> {
    if from == to {
        return Ok(0);
    }
    let fb = from.block_shape(shape);
    let rank = shape.len();
    let tiles = target.tiles() as usize;
    let (mut sent, mut received) = (vec![0u64; tiles], vec![0u64; tiles]);
    let mut copies = 0u64;
    let mut any = false;
    let (mut srcs, mut local) = (Vec::new(), Vec::new());
    for blk in blocks(to, shape) {
        // The producer's blocks this block overlaps, dimension by dimension.
        let span: Vec<(i64, i64)> = (0..rank)
            .map(|d| {
                let b = fb[d].max(1);
                (blk.lo[d] / b, (blk.hi[d] - 1) / b)
            })
            .collect();
        let mut idx: Vec<i64> = span.iter().map(|s| s.0).collect();
        srcs.clear();
        'walk: loop {
            let (mut flat, mut elems) = (0i64, 1i64);
            let (mut lo, mut hi) = (vec![0i64; rank], vec![0i64; rank]);
            for d in 0..rank {
                flat = flat * from.grid[d] + idx[d];
                lo[d] = (idx[d] * fb[d]).min(shape[d]);
                hi[d] = ((idx[d] + 1) * fb[d]).min(shape[d]);
                elems *= (blk.hi[d].min(hi[d]) - blk.lo[d].max(lo[d])).max(0);
            }
            let src = (from.first_tile + flat * from.stride) as u32;
            if elems > 0 && src == blk.tile {
                srcs.push(Block { tile: src, lo, hi });
            } else if elems > 0 {
                let bytes = elems as u64 * elem_bytes;
                if let Some(s) = sent.get_mut(src as usize) {
                    *s += bytes;
                }
                if let Some(r) = received.get_mut(blk.tile as usize) {
                    *r += bytes;
                }
                any = true;
            }
            // The next overlapped producer block, the last dimension fastest.
            let mut d = rank;
            loop {
                if d == 0 {
                    break 'walk;
                }
                d -= 1;
                if idx[d] < span[d].1 {
                    idx[d] += 1;
                    continue 'walk;
                }
                idx[d] = span[d].0;
            }
        }
        if !srcs.is_empty() {
            local.clear();
            ipu_program::geometry::runs_row_major(&blk, &srcs, elem_bytes as i64, &mut local);
            let ts: Vec<(u32, u32, u32)> = local
                .iter()
                .map(|r| (r.src_off as u32, r.dst_off as u32, r.len as u32))
                .collect();
            let c: u64 = records::local_copy_calls(&ts)?.iter().map(|c| c.1).sum();
            copies = copies.max(c);
        }
    }
    if !any && copies == 0 {
        return Ok(0);
    }
    let x = &target.exchange;
    let (send, recv) = (
        x.send_bytes_per_cycle.max(1) as u64,
        x.receive_bytes_per_cycle.max(1) as u64,
    );
    let horizon = sent
        .iter()
        .map(|b| b.div_ceil(send))
        .chain(received.iter().map(|b| b.div_ceil(recv)))
        .max()
        .unwrap_or(0);
    let exchange = if any {
        2 * x.sync_cycles as u64
            + target.exchange_phase_cycles(horizon + target.max_route_latency() as u64)
    } else {
        0
    };
    Ok(exchange + copies)
}

impl DeviceOp for Softmax {
    fn nn_ops(&self) -> Vec<&'static str> {
        vec![nn::Softmax::NAME, nn::LogSoftmax::NAME]
    }

    fn tile_op(&self) -> &'static str {
        tile::Softmax::NAME
    }

    fn operand_mappings(&self, cx: &Context, op: Op, env: &TileEnv) -> Vec<(usize, Mapping)> {
        let target = env.target;
        softmax_shape(cx, op, &StatsPrologue::default())
            .and_then(|sm| softmax_plan(&sm, target, None))
            .map(|(m, _, _)| vec![(0, m)])
            .unwrap_or_default()
    }

    fn to_tile(&self, cx: &mut Context, op: Op, env: &TileEnv) -> Result<Op, Diagnostic> {
        let name = cx.name_str(op).to_string();
        let loc = cx.op_loc(op);
        let err = |m: String| Diagnostic::error(loc, format!("'{name}' op {m}"));
        let sm = softmax_shape(cx, op, &StatsPrologue::default()).map_err(err)?;
        let x = cx.operand(op, 0);
        let producer = producer_cut(env, x, &sm.shape, 0, 0);
        let (mut m, mut plan, cost) = softmax_plan(&sm, env.target, producer).map_err(err)?;
        // The ops just before it, done by its statistics pass where that
        // costs less than they and the softmax do apart (their own cycle
        // formulas; the softmax's re-layout then moves their input). Not
        // for a softmax whose own location is fused: the chain's probe
        // could not name the chain's last op.
        let own_loc_fused = matches!(cx.loc_kind(loc), ipu_ir::types::LocKind::Fused { .. });
        let mut taken = None;
        if let Some(p) = prologue_chain(cx, x, sm.axis).filter(|_| !own_loc_fused) {
            let apart: u64 = p
                .ops
                .iter()
                .map(|&o| tile::Map(o).cycles(cx).max(0) as u64)
                .sum();
            let with = SoftmaxShape {
                in_bytes: ipu_program::geometry::elem_bytes(cx, p.root) as u64,
                pre: p.pre,
                ..softmax_shape(cx, op, &p.pre).map_err(err)?
            };
            let producer = producer_cut(env, p.root, &sm.shape, 0, 0);
            if let Ok((pm, pp, pc)) = softmax_plan(&with, env.target, producer) {
                if pc < cost + apart {
                    (m, plan) = (pm, pp);
                    taken = Some(p);
                }
            }
        }
        let cycles = plan.cycles().map_err(err)?;
        let mut attrs = vec![
            ("axis", cx.i64_attr(sm.axis as i64)),
            ("kernel", cx.string_attr(&plan.kernel())),
            ("cycles", cx.i64_attr(cycles as i64)),
            ("mapping", m.to_attr(cx)),
        ];
        if sm.log {
            attrs.push(("log", ipu_ir::Attr::UNIT));
        }
        let ty = cx.value_type(cx.result(op, 0));
        let Some(p) = taken else {
            return Ok(build_op(
                cx,
                tile::Softmax::NAME,
                &[x],
                Some(ty),
                attrs,
                loc,
            ));
        };
        if let Some(s) = p.pre.mul {
            let ety = cx
                .tensor_parts(cx.value_type(p.root))
                .map(|(_, e)| e)
                .unwrap_or(Type::F32);
            attrs.push(("scale", cx.float_attr(f64::from(s), ety)));
        }
        // One op for the chain: its location the chain's, in order (the
        // locations of the ops taken first; the softmax's own last).
        let mut locs = Vec::new();
        for &o in &p.ops {
            match cx.loc_kind(cx.op_loc(o)) {
                ipu_ir::types::LocKind::Fused { locs: inner, .. } => locs.extend(inner.clone()),
                _ => locs.push(cx.op_loc(o)),
            }
        }
        locs.push(loc);
        let floc = cx.fused_loc(locs);
        let mut operands = vec![p.root];
        operands.extend(p.mask);
        let new = build_op(cx, tile::Softmax::NAME, &operands, Some(ty), attrs, floc);
        // The ops taken are read by nothing else: they go.
        cx.set_operand(op, 0, p.root);
        for &o in p.ops.iter().rev() {
            cx.erase_op(o);
        }
        Ok(new)
    }

    fn to_program(&self, op: Op, b: &mut dyn ProgramBuilder<'_>) -> Result<(), Diagnostic> {
        let cx = b.cx();
        let m = mapping_of(cx, op).ok_or_else(|| b.err(op, "has no mapping"))?;
        let pre = prologue_of(cx, op);
        let (axis, log, shape, e) = softmax_of(cx, op).map_err(|e| b.err(op, e))?;
        let plan = softmax_calls(&shape, e, axis, log, &m, &pre).map_err(|e| b.err(op, e))?;
        let recorded = tile::Softmax(op).kernel(cx);
        if recorded != plan.kernel() {
            return Err(b.err(
                op,
                format!(
                    "records kernel '{recorded}', but its operands and mapping call for '{}'",
                    plan.kernel()
                ),
            ));
        }
        let label = if log {
            "tile.softmax log"
        } else {
            tile::Softmax::NAME
        };
        match plan {
            RowPlan::Whole(calls) => run_row_op(b, op, &m, &calls, &[], label),
            RowPlan::Cut {
                groups,
                rows,
                stats,
                combine,
                apply,
            } => {
                let cut = CutRows { axis, groups, rows };
                // With the exponentials, the statistics write them into the
                // result block and the last pass scales them there.
                let exps = stats.params.get("EXPS") == Some(&1);
                // A prologue's rows t, stored by the statistics (the last
                // pass's x when it reads x) and probed as the last op taken.
                let set = b.next_set();
                let mut t = None;
                if pre.any() {
                    let bytes = block_bytes_of(&m, &shape, 4);
                    for blk in blocks(&m, &shape) {
                        t = Some(b.alloc(
                            op,
                            blk.tile,
                            &format!("s{set}.prologue"),
                            bytes,
                            false,
                        )?);
                    }
                }
                let t_word = t.map(|t| Word::Buf(t, 0));
                let first = |x: Word, res: Word, pairs: Word, p: &[Word]| {
                    records::softmax_stats(
                        &stats,
                        x,
                        exps.then_some(res),
                        pairs,
                        p.first().copied(),
                        t_word,
                    )
                };
                let last = |x: Word, pairs: Word, own: Word, _: &[Word], res: Word| {
                    if exps {
                        records::softmax_apply(&apply, res, pairs, Some(own), res)
                    } else {
                        records::softmax_apply(&apply, t_word.unwrap_or(x), pairs, None, res)
                    }
                };
                let params = if pre.mask {
                    vec![mask_rects(cx, op, &shape, axis, &m)]
                } else {
                    Vec::new()
                };
                let stats_step = run_cut_rows(
                    b, op, &m, &cut, &first, None, &combine, &last, &params, label,
                )?;
                if let Some(t) = t {
                    probe_prologue(b, op, t, &m, stats_step, &pre);
                }
                Ok(())
            }
        }
    }
}

/// The softmax `op` as its plans see it, taking in `pre`.
fn softmax_shape(cx: &Context, op: Op, pre: &StatsPrologue) -> Result<SoftmaxShape, String> {
    let (axis, log, shape, e) = softmax_of(cx, op)?;
    Ok(SoftmaxShape {
        axis,
        log,
        shape,
        e,
        in_bytes: ipu_program::geometry::elem_bytes(cx, cx.operand(op, 0)) as u64,
        pre: *pre,
    })
}

/// Each tile's rectangle of a prologue's row vector (operand #1, along the
/// last axis): its piece's columns; and their bytes.
fn mask_rects(
    cx: &Context,
    op: Op,
    shape: &[i64],
    axis: usize,
    m: &Mapping,
) -> (usize, Vec<Block>, u64) {
    let v = cx.operand(op, 1);
    let vrank = cx.value_shape(v).len();
    let cols = m.block_shape(shape)[axis];
    let rects = blocks(m, shape)
        .into_iter()
        .map(|blk| {
            let (mut lo, mut hi) = (vec![0; vrank], vec![1; vrank]);
            lo[vrank - 1] = blk.lo[axis];
            hi[vrank - 1] = blk.hi[axis];
            Block {
                tile: blk.tile,
                lo,
                hi,
            }
        })
        .collect();
    let eb = ipu_program::geometry::elem_bytes(cx, v) as u64;
    (1, rects, cols as u64 * eb)
}

/// The probe of a prologue's rows t (buffer `t`, laid out as the result's
/// blocks under `m`), complete after step `after`: the value of the last
/// op the softmax took in, which answers for the chain before it (the
/// op's location is the chain's, the softmax's own last).
fn probe_prologue(
    b: &mut dyn ProgramBuilder<'_>,
    op: Op,
    t: usize,
    m: &Mapping,
    after: usize,
    pre: &StatsPrologue,
) {
    let cx = b.cx();
    let key = ipu_ir::diag::loc_key(cx, cx.op_loc(op));
    let Some(parts) = ipu_ir::diag::fused_key_parts(&key) else {
        return;
    };
    // One location per op taken (each a plain one; the softmax's last).
    let taken = [pre.mul.is_some(), pre.widen, pre.mask]
        .iter()
        .filter(|&&f| f)
        .count();
    if parts.len() != taken + 1 {
        return;
    }
    let chain = &parts[..taken];
    let source = match chain {
        [one] => one.to_string(),
        _ => format!("fused[{}]", chain.join(", ")),
    };
    let result = cx.result(op, 0);
    let at = ipu_program::Placed::new(cx, t, m.clone(), cx.value_type(result), cx.op_loc(op));
    b.program_mut().probes.push(ipu_program::Probe {
        after,
        at,
        source,
        op: cx.name_str(op).to_string(),
    });
}

/// Rows cut along `axis` into `groups` pieces, `rows` rows on each tile.
struct CutRows {
    axis: usize,
    groups: usize,
    rows: usize,
}

/// The rows `[start, end)` of `rows` whose statistics piece `piece` of
/// `groups` combines: the rows shared out in runs of `ceil(rows / groups)`
/// (the last pieces' shares may be short or empty).
fn row_share(rows: usize, groups: usize, piece: usize) -> (usize, usize) {
    let chunk = rows.div_ceil(groups.max(1));
    let start = (piece * chunk).min(rows);
    (start, (start + chunk).min(rows))
}

/// The combining kernel `full` (over `rows` rows) on the busiest tile's
/// share of the rows when `groups` tiles share them.
fn busiest_share(full: KernelSpec, rows: usize, groups: usize) -> Result<KernelSpec, String> {
    let (start, end) = row_share(rows, groups, 0);
    combine_for_share(&full, end - start, rows)
}

/// The combining kernel `full` on `share` rows of groups `pitch` rows
/// apart, its rows' groups cut into the parts its cycle formula makes
/// cheapest ([`KernelSpec::combine_parts`]: more workers on a row, and a
/// second round merging their partial pairs; one part when the share
/// keeps the workers busy or the merge costs more than it saves).
fn combine_for_share(full: &KernelSpec, share: usize, pitch: usize) -> Result<KernelSpec, String> {
    let mut base = full.combine_share(share, pitch);
    for k in ["P", "INV_Q", "INV_P"] {
        base.params.remove(k);
    }
    let groups = base.params.get("C").copied().unwrap_or(1).max(1) as usize;
    let mut best = (kernel_cycles(&base)?, base.clone());
    for parts in (2..=groups).filter(|&p| groups.is_multiple_of(p) && share * p <= 6) {
        let spec = base.combine_parts(parts);
        let c = kernel_cycles(&spec)?;
        if c < best.0 {
            best = (c, spec);
        }
    }
    Ok(best.1)
}

/// The first call of a cut row op on a tile: its input piece, its result
/// block (which the call may use for what the last call reads), its
/// piece's pairs of statistics, its pieces of the op's other operands.
type StatsCall<'a> = &'a dyn Fn(Word, Word, Word, &[Word]) -> ipu_program::Call;

/// A cut row op's first call on a tile taking in the tile's last call
/// before it (an op the statistics pass can do too), given that call, the
/// input piece and the piece's pairs of statistics; `None` if it cannot.
type TakeCall<'a> = &'a dyn Fn(&ipu_program::Call, Word, Word) -> Option<ipu_program::Call>;

/// The last call of a cut row op on a tile: its input piece, its rows'
/// combined pairs, its piece's own pairs (as the first call left them),
/// its pieces of the op's other operands, its result.
type ApplyCall<'a> = &'a dyn Fn(Word, Word, Word, &[Word], Word) -> ipu_program::Call;

/// The supersteps of a row op whose rows are cut over tiles: each tile's
/// pieces' statistics (`stats`, written in place in the tile's group of
/// the gathered pairs, which keeps them to the end); a phase sending each piece's tile the other
/// pieces' pairs of its share of the rows ([`row_share`]); each share's
/// combination on its tile (`combine`, re-specialised per share); a phase
/// multicasting each combined share to the rows' other tiles; each piece
/// finished by `apply`; both also read each tile's rectangles `params` of
/// the op's other operands (operand index, rectangles, bytes). Returns the
/// statistics' step.
#[allow(clippy::too_many_arguments)]
fn run_cut_rows(
    b: &mut dyn ProgramBuilder<'_>,
    op: Op,
    m: &Mapping,
    cut: &CutRows,
    stats: StatsCall,
    take: Option<TakeCall>,
    combine: &KernelSpec,
    apply: ApplyCall,
    params: &[(usize, Vec<Block>, u64)],
    label: &str,
) -> Result<usize, Diagnostic> {
    let cx = b.cx();
    let x = cx.operand(op, 0);
    let shape = cx.value_shape(x);
    let eb = ipu_program::geometry::elem_bytes(cx, x);
    let need = blocks(m, &shape);
    let bytes = block_bytes_of(m, &shape, eb);
    // The input and the other operands in one phase.
    b.begin_one_phase();
    let at = b.operand(op, 0, &need, Layout::RowMajor, bytes, false)?.at;
    let mut param_at = Vec::new();
    for (i, rects, pbytes) in params {
        param_at.push(
            b.operand(op, *i, rects, Layout::RowMajor, *pbytes, false)?
                .at,
        );
    }
    b.end_one_phase(op)?;
    let set = b.next_set();
    let bs = m.block_shape(&shape);
    // Each block's piece along the axis and the tiles of its rows' pieces,
    // in piece order.
    let piece_of = |blk: &Block| (blk.lo[cut.axis] / bs[cut.axis].max(1)) as usize;
    let rows_key = |blk: &Block| {
        let mut k = blk.lo.clone();
        k[cut.axis] = 0;
        k
    };
    let mut pieces: FxHashMap<Vec<i64>, Vec<Option<u32>>> = FxHashMap::default();
    for blk in &need {
        let tiles = pieces
            .entry(rows_key(blk))
            .or_insert_with(|| vec![None; cut.groups]);
        match tiles.get_mut(piece_of(blk)) {
            Some(t) => *t = Some(blk.tile),
            None => {
                return Err(b.err(
                    op,
                    format!("has a piece beyond its {} on tile {}", cut.groups, blk.tile),
                ))
            }
        }
    }
    let pb = cut.rows as u64 * 8;
    let share = |piece: usize| row_share(cut.rows, cut.groups, piece);
    let (mut gbuf, mut cbuf) = (None, None);
    for blk in &need {
        gbuf = Some(b.alloc(
            op,
            blk.tile,
            &format!("s{set}.stats_in"),
            pb * cut.groups as u64,
            false,
        )?);
        cbuf = Some(b.alloc(op, blk.tile, &format!("s{set}.row_stats"), pb, false)?);
    }
    let (Some(gbuf), Some(cbuf)) = (gbuf, cbuf) else {
        return Err(b.err(op, "has no pieces to gather"));
    };
    // Every piece's tile writes its rows' pairs into its own group of the
    // gathered pairs, sends each other piece's tile that tile's share of
    // them, combines its own share, and sends the combined share to every
    // other piece's tile: the combining is spread over all the tiles.
    let res = b.home(op, cx.result(op, 0), m, &format!("s{set}.result"), false)?;
    b.begin_compute(op, "", &format!("{label} statistics"));
    let (mut gather, mut back) = (Vec::new(), Vec::new());
    for blk in &need {
        let tl = blk.tile;
        let piece = piece_of(blk);
        let Some(&input) = at.get(&tl) else {
            return Err(b.err(op, format!("has no input buffer on tile {tl}")));
        };
        let tiles = &pieces[&rows_key(blk)];
        for (j, other) in tiles.iter().enumerate() {
            let Some(other) = *other else {
                return Err(b.err(op, format!("misses piece {j} of the rows of tile {tl}")));
            };
            if j == piece {
                continue;
            }
            let (start, end) = share(j);
            if start < end {
                let off = piece as u64 * pb + start as u64 * 8;
                gather.push(Run {
                    src_tile: tl,
                    src_off: off,
                    dst_tile: other,
                    dst_off: off,
                    len: (end - start) as u64 * 8,
                });
            }
            let (start, end) = share(piece);
            if start < end {
                back.push(Run {
                    src_tile: tl,
                    src_off: start as u64 * 8,
                    dst_tile: other,
                    dst_off: start as u64 * 8,
                    len: (end - start) as u64 * 8,
                });
            }
        }
        let pairs = Word::Buf(gbuf, (piece as u64 * pb) as u32);
        let p = param_words(b, op, &param_at, tl)?;
        // The producer's call just before, when the statistics can do it
        // too (one worker start-up instead of two).
        let taken = take.and_then(|t| t(b.last_call(tl)?, Word::Buf(input, 0), pairs));
        match taken {
            Some(call) => b.replace_last_call(tl, call),
            None => b.call(tl, stats(Word::Buf(input, 0), Word::Buf(res, 0), pairs, &p)),
        }
    }
    b.end_compute(op)?;
    let stats_step = b.program_mut().steps.len() - 1;
    let name = cx.name_str(op);
    b.exchange(
        op,
        &format!("row statistics of s{set} {name}"),
        vec![(gbuf, gbuf, gather)],
    )?;
    b.begin_compute(op, ".combine", &format!("{label} combine"));
    let mut order: Vec<(u32, usize)> = need.iter().map(|blk| (blk.tile, piece_of(blk))).collect();
    order.sort_unstable();
    for (tl, piece) in order {
        let (start, end) = share(piece);
        if start == end {
            continue;
        }
        let spec = combine_for_share(combine, end - start, cut.rows).map_err(|e| b.err(op, e))?;
        let off = start as u32 * 8;
        let parts = spec.params.get("P").copied().unwrap_or(1) as u64;
        let partials = if parts > 1 {
            let bytes = (end - start) as u64 * parts * 8;
            let buf = b.alloc(op, tl, &format!("s{set}.partial_stats"), bytes, false)?;
            Some(Word::Buf(buf, 0))
        } else {
            None
        };
        b.call(
            tl,
            records::row_combine(&spec, Word::Buf(gbuf, off), partials, Word::Buf(cbuf, off)),
        );
    }
    b.end_compute(op)?;
    b.exchange(
        op,
        &format!("combined row statistics of s{set} {name}"),
        vec![(cbuf, cbuf, back)],
    )?;
    b.begin_compute(op, ".apply", label);
    for blk in &need {
        let tl = blk.tile;
        let input = at[&tl];
        let own = Word::Buf(gbuf, (piece_of(blk) as u64 * pb) as u32);
        let p = param_words(b, op, &param_at, tl)?;
        b.call(
            tl,
            apply(
                Word::Buf(input, 0),
                Word::Buf(cbuf, 0),
                own,
                &p,
                Word::Buf(res, 0),
            ),
        );
    }
    b.end_compute(op)?;
    // A cast after it may be done on the way out (`records::rows_epilogue`).
    let tiles = need.iter().map(|blk| blk.tile).collect();
    b.offer_epilogue_at(cx.result(op, 0), res, tiles, 4, records::rows_epilogue);
    b.finish_op();
    Ok(stats_step)
}

/// Tile `tl`'s buffers of a row op's other operands (`at`, delivered).
fn param_words(
    b: &dyn ProgramBuilder<'_>,
    op: Op,
    at: &[FxHashMap<u32, usize>],
    tl: u32,
) -> Result<Vec<Word>, Diagnostic> {
    at.iter()
        .map(|a| a.get(&tl).map(|&buf| Word::Buf(buf, 0)))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            b.err(
                op,
                format!("has no piece of its other operands on tile {tl}"),
            )
        })
}

/// The supersteps of a row op whose result blocks are its input's blocks:
/// the input (and each of `params`, whole on every tile) delivered, then
/// one compute set of `calls` on every tile.
fn run_row_op(
    b: &mut dyn ProgramBuilder<'_>,
    op: Op,
    m: &Mapping,
    calls: &Calls,
    params: &[usize],
    label: &str,
) -> Result<(), Diagnostic> {
    let cx = b.cx();
    let x = cx.operand(op, 0);
    let shape = cx.value_shape(x);
    let eb = ipu_program::geometry::elem_bytes(cx, x);
    let need = blocks(m, &shape);
    let bytes = block_bytes_of(m, &shape, eb);
    let at = b.operand(op, 0, &need, Layout::RowMajor, bytes, false)?.at;
    let mut param_at: Vec<FxHashMap<u32, usize>> = Vec::new();
    for &i in params {
        let v = cx.operand(op, i);
        let pshape = cx.value_shape(v);
        let whole: Vec<Block> = need
            .iter()
            .map(|n| Block {
                tile: n.tile,
                lo: vec![0; pshape.len()],
                hi: pshape.clone(),
            })
            .collect();
        let pbytes =
            (pshape.iter().product::<i64>() * ipu_program::geometry::elem_bytes(cx, v)) as u64;
        param_at.push(
            b.operand(op, i, &whole, Layout::RowMajor, pbytes, false)?
                .at,
        );
    }
    let set = b.next_set();
    b.begin_compute(op, "", label);
    let res = b.home(op, cx.result(op, 0), m, &format!("s{set}.result"), false)?;
    for n in &need {
        let tl = n.tile;
        let Some(&input) = at.get(&tl) else {
            return Err(b.err(op, format!("has no input buffer on tile {tl}")));
        };
        let temps = alloc_temps(b, op, tl, set, calls)?;
        let words = SlotWords {
            input: Word::Buf(input, 0),
            out: Some(Word::Buf(res, 0)),
            partial: None,
            temps,
        };
        let p: Vec<Word> = param_at
            .iter()
            .map(|a| a.get(&tl).map(|&buf| Word::Buf(buf, 0)))
            .collect::<Option<_>>()
            .ok_or_else(|| b.err(op, format!("has no scale or bias buffer on tile {tl}")))?;
        for s in &calls.stages {
            let call = stage_call(s, &words, (p.first().copied(), p.get(1).copied()));
            b.call(tl, call);
        }
    }
    b.end_compute(op)?;
    b.finish_op();
    Ok(())
}

// ---------------------------------------------------------- layer norm

pub struct LayerNorm;

/// Axis, epsilon, shape and element type of a layer norm (nn or tile op),
/// with its scale and bias operands checked.
fn layer_norm_of(cx: &Context, op: Op) -> Result<(usize, f32, Vec<i64>, ElemType), String> {
    let x = cx.operand(op, 0);
    let shape = cx.value_shape(x);
    let (axis, eps) = if let Some(t) = tile::LayerNorm::cast(cx, op) {
        (t.axis(cx), t.epsilon(cx))
    } else if let Some(n) = nn::LayerNorm::cast(cx, op) {
        (n.axis(cx), n.epsilon(cx))
    } else {
        return Err("is not a layer norm".into());
    };
    let axis = usize::try_from(axis)
        .ok()
        .filter(|&a| a < shape.len())
        .ok_or_else(|| format!("has axis {axis} outside its rank {}", shape.len()))?;
    let e = row_elem(cx, x)?;
    let norm: i64 = shape[axis..].iter().product();
    let xty = cx.tensor_parts(cx.value_type(x)).map(|(_, t)| t);
    for i in 1..cx.operands(op).len() {
        let v = cx.operand(op, i);
        let n: i64 = cx.value_shape(v).iter().product();
        let what = if i == 1 { "scale" } else { "bias" };
        if n != norm {
            return Err(format!(
                "has a {what} broadcast from {n} to the {norm} elements of the normalized shape, which is not lowered yet (a {what} with as many elements is)"
            ));
        }
        let ty: Option<Type> = cx.tensor_parts(cx.value_type(v)).map(|(_, t)| t);
        if ty != xty {
            return Err(format!(
                "has a {what} of another element type than its input, which is not lowered yet"
            ));
        }
    }
    Ok((axis, eps, shape, e))
}

/// The rectangle of a tensor of `shape` holding its row-major elements
/// `[start, start + len)`, when they form one.
fn flat_rect(shape: &[i64], start: i64, len: i64) -> Option<(Vec<i64>, Vec<i64>)> {
    for j in 0..shape.len() {
        let inner: i64 = shape[j + 1..].iter().product();
        if inner == 0 || len % inner != 0 || start % inner != 0 {
            continue;
        }
        let (first, count) = (start / inner, len / inner);
        if first % shape[j] + count > shape[j] {
            continue;
        }
        // Dimensions before j at the start's coordinates, j the range, the
        // rest whole.
        let mut lo = vec![0; shape.len()];
        let mut hi = shape.to_vec();
        let mut rem = first;
        for d in (0..=j).rev() {
            lo[d] = rem % shape[d];
            hi[d] = lo[d] + 1;
            rem /= shape[d];
        }
        hi[j] = lo[j] + count;
        return Some((lo, hi));
    }
    None
}

/// Estimated cycles a cut row op adds: two phases (each piece's tile
/// receiving the other pieces' pairs of its share of the rows, then every
/// other share combined) and two supersteps; a phase lasts as long as its
/// busiest tile sends or receives.
fn cut_exchange_cycles(groups: usize, rows: usize, target: &Target) -> u64 {
    let x = &target.exchange;
    let (send, recv) = (
        x.send_bytes_per_cycle.max(1) as u64,
        x.receive_bytes_per_cycle.max(1) as u64,
    );
    let (mut gather, mut broadcast) = (0u64, 0u64);
    for piece in 0..groups {
        let (start, end) = row_share(rows, groups, piece);
        let own = (end - start) as u64 * 8;
        let others = rows as u64 * 8 - own;
        gather = gather.max((others / send).max((groups as u64 - 1) * own / recv));
        broadcast = broadcast.max((own / send).max(others / recv));
    }
    4 * x.sync_cycles as u64
        + target.exchange_phase_cycles(gather)
        + target.exchange_phase_cycles(broadcast)
}

/// Each tile's rectangles of the scale (operand 1) and bias (operand 2)
/// of a layer norm whose blocks are those of `m`: the whole tensor, or
/// where the rows are cut, the piece's columns.
fn param_rects(
    cx: &Context,
    op: Op,
    shape: &[i64],
    axis: usize,
    m: &Mapping,
) -> Result<Vec<(usize, Vec<Block>, u64)>, String> {
    let bs = m.block_shape(shape);
    let len: i64 = bs[axis..].iter().product();
    let mut out = Vec::new();
    for i in 1..cx.operands(op).len() {
        let v = cx.operand(op, i);
        let pshape = cx.value_shape(v);
        let eb = ipu_program::geometry::elem_bytes(cx, v);
        let mut rects = Vec::new();
        for blk in blocks(m, shape) {
            let start = blk.lo[axis] * bs[axis + 1..].iter().product::<i64>();
            let (lo, hi) = flat_rect(&pshape, start, len).ok_or_else(|| {
                format!(
                    "cuts its rows where operand #{i}'s shape {pshape:?} cannot be cut with them"
                )
            })?;
            rects.push(Block {
                tile: blk.tile,
                lo,
                hi,
            });
        }
        out.push((i, rects, (len * eb) as u64));
    }
    Ok(out)
}

fn layer_norm_calls(cx: &Context, op: Op, m: &Mapping) -> Result<RowPlan, String> {
    let (axis, eps, shape, e) = layer_norm_of(cx, op)?;
    let params = cx.operands(op).len() - 1;
    let block = m.block_shape(&shape);
    let (outer, len, _) = walk_of(&block, axis, shape.len());
    row_walk(len, 1, e)?;
    let (gamma, beta) = (params >= 1, params >= 2);
    if m.grid[axis + 1..].iter().any(|&g| g != 1) {
        return Err("cuts a normalized dimension after the first, which is not lowered".into());
    }
    if m.grid[axis] > 1 {
        let groups = m.grid[axis];
        if shape[axis] % groups != 0 {
            return Err(format!(
                "cuts its first normalized dimension of {} into {groups} uneven blocks",
                shape[axis]
            ));
        }
        if outer * 8 >= 16384 {
            return Err(format!(
                "cuts its rows over tiles with {outer} rows per tile, more than the combining kernel reaches (2047)"
            ));
        }
        param_rects(cx, op, &shape, axis, m)?;
        return Ok(RowPlan::Cut {
            groups: groups as usize,
            rows: outer,
            stats: KernelSpec::ln_stats(e, outer, len),
            combine: busiest_share(
                KernelSpec::ln_combine(outer, groups as usize, eps),
                outer,
                groups as usize,
            )?,
            apply: KernelSpec::ln_apply(e, outer, len, gamma, beta),
        });
    }
    let mut calls = Calls::default();
    calls.push(
        KernelSpec::layer_norm(e, outer, len, eps, gamma, beta),
        Slot::Input,
        Slot::Out,
    );
    Ok(RowPlan::Whole(calls))
}

/// As softmax: the cheapest of the producer's layout, the first whole-row
/// layout that works and its first normalized dimension cut over the tiles
/// that layout leaves idle (each charged its re-layout).
fn layer_norm_plan(
    cx: &Context,
    op: Op,
    target: &Target,
    producer: Option<Mapping>,
) -> Result<(Mapping, RowPlan), String> {
    let (axis, _, shape, e) = layer_norm_of(cx, op)?;
    let params = cx.operands(op).len() - 1;
    let rank = shape.len();
    let tiles = target.tiles() as i64;
    let try_one = |m: &Mapping| -> Result<RowPlan, (bool, String)> {
        let eb = e.bytes() as i64;
        let bs = m.block_shape(&shape);
        let piece: i64 = bs[axis..].iter().product();
        let need = 2 * block_bytes_of(m, &shape, eb) + params as u64 * (piece * eb) as u64;
        check_fits(need, &shape, m, target).map_err(whole_rows)?;
        layer_norm_calls(cx, op, m).map_err(|e| (false, e))
    };
    let whole = row_grids(&shape, &outside(rank, axis, rank), tiles);
    let (m, p, _) = cheapest_row_plan(
        producer,
        whole,
        axis,
        &shape,
        e.bytes() as u64,
        target,
        true,
        try_one,
    )?;
    Ok((m, p))
}

impl DeviceOp for LayerNorm {
    fn nn_ops(&self) -> Vec<&'static str> {
        vec![nn::LayerNorm::NAME]
    }

    fn tile_op(&self) -> &'static str {
        tile::LayerNorm::NAME
    }

    fn operand_mappings(&self, cx: &Context, op: Op, env: &TileEnv) -> Vec<(usize, Mapping)> {
        let target = env.target;
        let Ok((m, plan)) = layer_norm_plan(cx, op, target, None) else {
            return Vec::new();
        };
        let rank = cx.value_shape(cx.operand(op, 0)).len();
        let axis = nn::LayerNorm(op).axis(cx) as usize;
        // The scale and bias whole on one tile (one multicast to all), or
        // for cut rows cut like the first rows' pieces (on their tiles).
        let mut out = vec![(0, m.clone())];
        for i in 1..cx.operands(op).len() {
            let prank = cx.value_shape(cx.operand(op, i)).len();
            let mut grid = vec![1; prank];
            if let (RowPlan::Cut { groups, .. }, true) = (&plan, prank == rank - axis) {
                grid[0] = *groups as i64;
                out.push((
                    i,
                    Mapping {
                        grid,
                        first_tile: m.first_tile,
                        stride: m.stride,
                    },
                ));
            } else {
                out.push((i, at_zero(grid)));
            }
        }
        out
    }

    fn to_tile(&self, cx: &mut Context, op: Op, env: &TileEnv) -> Result<Op, Diagnostic> {
        let loc = cx.op_loc(op);
        let err = |m: String| Diagnostic::error(loc, format!("'nn.layer_norm' op {m}"));
        let (axis, eps, shape, _) = layer_norm_of(cx, op).map_err(err)?;
        let x = cx.operand(op, 0);
        let producer = producer_cut(env, x, &shape, axis + 1, shape.len());
        let (m, plan) = layer_norm_plan(cx, op, env.target, producer).map_err(err)?;
        let cycles = plan.cycles().map_err(err)?;
        let attrs = vec![
            ("axis", cx.i64_attr(axis as i64)),
            ("epsilon", cx.float_attr(eps as f64, Type::F32)),
            ("kernel", cx.string_attr(&plan.kernel())),
            ("cycles", cx.i64_attr(cycles as i64)),
            ("mapping", m.to_attr(cx)),
        ];
        let operands = cx.operands(op).to_vec();
        let ty = cx.value_type(cx.result(op, 0));
        Ok(build_op(
            cx,
            tile::LayerNorm::NAME,
            &operands,
            Some(ty),
            attrs,
            loc,
        ))
    }

    fn to_program(&self, op: Op, b: &mut dyn ProgramBuilder<'_>) -> Result<(), Diagnostic> {
        let cx = b.cx();
        let m = mapping_of(cx, op).ok_or_else(|| b.err(op, "has no mapping"))?;
        let (axis, _, shape, _) = layer_norm_of(cx, op).map_err(|e| b.err(op, e))?;
        let plan = layer_norm_calls(cx, op, &m).map_err(|e| b.err(op, e))?;
        let recorded = tile::LayerNorm(op).kernel(cx);
        if recorded != plan.kernel() {
            return Err(b.err(
                op,
                format!(
                    "records kernel '{recorded}', but its operands and mapping call for '{}'",
                    plan.kernel()
                ),
            ));
        }
        let params = cx.operands(op).len() - 1;
        match plan {
            RowPlan::Whole(calls) => {
                let params: Vec<usize> = (1..=params).collect();
                run_row_op(b, op, &m, &calls, &params, tile::LayerNorm::NAME)
            }
            RowPlan::Cut {
                groups,
                rows,
                stats,
                combine,
                apply,
            } => {
                let rects = param_rects(cx, op, &shape, axis, &m).map_err(|e| b.err(op, e))?;
                let cut = CutRows { axis, groups, rows };
                let first = |x: Word, _: Word, pairs: Word, _: &[Word]| {
                    records::rows_along(&stats, x, pairs)
                };
                // An f32 add into the rows just before (a residual add):
                // summed and stored by the statistics pass.
                let take = |add: &ipu_program::Call, x: Word, pairs: Word| {
                    records::ln_stats_taking_add(&stats, add, x, pairs)
                };
                let last = |x: Word, pairs: Word, _: Word, p: &[Word], out: Word| {
                    records::ln_apply(&apply, x, pairs, p.first().copied(), p.get(1).copied(), out)
                };
                run_cut_rows(
                    b,
                    op,
                    &m,
                    &cut,
                    &first,
                    Some(&take),
                    &combine,
                    &last,
                    &rects,
                    tile::LayerNorm::NAME,
                )?;
                Ok(())
            }
        }
    }
}
