//! Reductions (`tile.reduce`): sum, mean, max and min over any axes, with
//! or without `keepdims`, including rows cut over tiles.
//!
//! Mapping: the input is cut by `grid` (kept axes outer first, as the row
//! family does; the producer's layout where one kernel reads its blocks).
//! When the kept axes leave tiles idle, a reduced axis may be cut too:
//! each tile then reduces its piece of the rows to f32 partial results, an
//! exchange phase gathers the partials of each result block onto its tile
//! (a tile's own partial is written there in place), and a second compute
//! set combines them; the cut is chosen by the kernels' cycle formulas and
//! the target's exchange costs. Kernel: `rows.S`, one call per run of
//! consecutive reduced axes, innermost first (along rows when the run ends
//! the block, else down its columns; f16 columns are cast to f32 first),
//! the last writing the result type (a mean scaled by 1 / count there).
//! Booleans (max: any, min: all) take `intew.S`'s reduction on the
//! supervisor, one call per run, and are cut along kept axes only.

use super::rows::{
    alloc_temps, at_zero, check_fits, check_recorded, row_elem, row_grids, row_walk, stage_call,
    walk_of, Calls, Slot, SlotWords,
};
use super::{block_bytes_of, build_op, DeviceOp, TileEnv};
use crate::ProgramBuilder;
use ipu_dialects::nn;
use ipu_dialects::tile::{self, reduced_shape, Mapping};
use ipu_ir::{Context, Diagnostic, Op};
use ipu_isa::kernels::{ElemType, KernelSpec, RowOp, RowWalk};
use ipu_program::geometry::{blocks, elem_bytes, mapping_of, Layout, Run};
use ipu_program::Word;
use ipu_target::Target;
use rustc_hash::FxHashMap;

pub struct Reduce;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Sum,
    Mean,
    Max,
    Min,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Sum => "sum",
            Kind::Mean => "mean",
            Kind::Max => "max",
            Kind::Min => "min",
        }
    }
    fn from_name(s: &str) -> Option<Kind> {
        [Kind::Sum, Kind::Mean, Kind::Max, Kind::Min]
            .into_iter()
            .find(|k| k.name() == s)
    }
    fn row_op(self) -> RowOp {
        match self {
            Kind::Sum | Kind::Mean => RowOp::Sum,
            Kind::Max => RowOp::Max,
            Kind::Min => RowOp::Min,
        }
    }
}

/// What a reduction is: kind, axes, keepdims, input shape, element type.
struct Form {
    kind: Kind,
    axes: Vec<usize>,
    keepdims: bool,
    shape: Vec<i64>,
    elem: ElemType,
    /// A max or min of booleans (`elem` then unused).
    boolean: bool,
}

/// The kind, axes and `keepdims` of a `tile.reduce` or an `nn.reduce_*`
/// (its kind from its name; an op that is neither reduces nothing).
fn reduction(cx: &Context, op: Op) -> (Option<Kind>, &[i64], bool) {
    if let Some(t) = tile::Reduce::cast(cx, op) {
        return (Kind::from_name(t.kind(cx)), t.axes(cx), t.keepdims(cx));
    }
    macro_rules! nn_reductions {
        ($($view:ident),*) => {$(
            if let Some(r) = nn::$view::cast(cx, op) {
                let kind = nn::$view::NAME.strip_prefix("nn.reduce_").and_then(Kind::from_name);
                return (kind, r.axes(cx), r.keepdims(cx));
            }
        )*};
    }
    nn_reductions!(ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd);
    (None, &[], false)
}

impl Form {
    fn of(cx: &Context, op: Op) -> Result<Form, String> {
        let (kind, axes, keepdims) = reduction(cx, op);
        let kind = kind.ok_or("is not a sum, mean, max or min reduction")?;
        let x = cx.operand(op, 0);
        let shape = cx.value_shape(x);
        let axes: Vec<usize> = axes
            .iter()
            .map(|&a| usize::try_from(a).unwrap_or(usize::MAX))
            .collect();
        if axes.is_empty() {
            return Err("reduces no axes, which is not lowered to the tile dialect".into());
        }
        if axes.iter().any(|&a| a >= shape.len()) || !axes.windows(2).all(|w| w[0] < w[1]) {
            return Err(format!(
                "has axes {axes:?} that are not sorted axes of its input"
            ));
        }
        let boolean = super::ints::int_bytes(cx, x) == Some(1);
        if boolean && !matches!(kind, Kind::Max | Kind::Min) {
            return Err(format!(
                "takes the {} of booleans, which has no kernel (max and min do)",
                kind.name()
            ));
        }
        let elem = if boolean {
            ElemType::F32
        } else {
            row_elem(cx, x)?
        };
        Ok(Form {
            kind,
            axes,
            keepdims,
            shape,
            elem,
            boolean,
        })
    }

    /// Bytes of an input (and result) element.
    fn elem_bytes(&self) -> i64 {
        if self.boolean {
            1
        } else {
            self.elem.bytes() as i64
        }
    }

    /// Elements reduced into each result element.
    fn count(&self) -> i64 {
        self.axes.iter().map(|&a| self.shape[a]).product()
    }

    /// Runs of consecutive reduced axes, outermost first, as `[lo, hi)`.
    fn runs(&self) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for &a in &self.axes {
            match out.last_mut() {
                Some(r) if r.1 == a => r.1 = a + 1,
                _ => out.push((a, a + 1)),
            }
        }
        out
    }

    fn result_shape(&self) -> Vec<i64> {
        let axes: Vec<i64> = self.axes.iter().map(|&a| a as i64).collect();
        reduced_shape(&self.shape, &axes, self.keepdims)
    }

    /// The result mapping of an input cut `m`: its grid on the kept axes,
    /// each result block on the tile of the first input block reduced into
    /// it where the cut allows (the reduced axes it cuts come after the
    /// kept ones it cuts), else on the cut's first tiles.
    fn result_mapping(&self, m: &Mapping) -> Mapping {
        let axes: Vec<i64> = self.axes.iter().map(|&a| a as i64).collect();
        let cut: Vec<usize> = (0..m.grid.len()).filter(|&d| m.grid[d] > 1).collect();
        let reduced_last = cut
            .iter()
            .skip_while(|d| !self.axes.contains(d))
            .all(|d| self.axes.contains(d));
        let groups: i64 = self.axes.iter().map(|&a| m.grid[a]).product();
        Mapping {
            grid: reduced_shape(&m.grid, &axes, self.keepdims),
            first_tile: m.first_tile,
            stride: if reduced_last {
                m.stride * groups
            } else {
                m.stride
            },
        }
    }
}

/// Partial results gathered and combined on the result tiles.
struct Split {
    /// Partials per result block (blocks along the reduced axes).
    groups: usize,
    /// Elements of a result block, and their pitch in the gathered buffer.
    elems: usize,
    pitch: usize,
    combine: KernelSpec,
}

struct Plan {
    calls: Calls,
    split: Option<Split>,
}

/// The calls of reducing the blocks of `m`.
fn plan_for(f: &Form, m: &Mapping) -> Result<Plan, String> {
    let block = m.block_shape(&f.shape);
    let split = f.axes.iter().any(|&a| m.grid[a] > 1);
    if let Some(&a) = f
        .axes
        .iter()
        .find(|&&a| m.grid[a] > 1 && f.shape[a] % m.grid[a] != 0)
    {
        return Err(format!(
            "cuts reduced axis {a} of {} into {} uneven blocks",
            f.shape[a], m.grid[a]
        ));
    }
    // Runs that reduce more than one element on a tile, innermost first.
    let runs: Vec<(usize, usize)> = f
        .runs()
        .into_iter()
        .filter(|&(lo, hi)| block[lo..hi].iter().product::<i64>() > 1)
        .rev()
        .collect();
    if runs.is_empty() {
        return Err(
            "reduces only axes of one element on each tile, which is not lowered yet".into(),
        );
    }
    if f.boolean {
        return bool_plan(f, &block, &runs, split);
    }
    let mut calls = Calls::default();
    let mut cur = block.clone();
    let mut cur_e = f.elem;
    let mut src = Slot::Input;
    let scale = (f.kind == Kind::Mean).then(|| 1.0 / f.count() as f32);
    for (k, &(lo, hi)) in runs.iter().enumerate() {
        let last = k + 1 == runs.len();
        let (outer, len, inner) = walk_of(&cur, lo, hi);
        if inner > 1 && cur_e == ElemType::F16 {
            let n = cur.iter().product::<i64>() as usize;
            if !n.is_multiple_of(4) {
                return Err(format!(
                    "has f16 blocks of {n} elements walked as columns, which the cast to f32 before the row kernel needs in groups of 4"
                ));
            }
            let t = calls.temp(n as u64 * 4);
            calls.push(KernelSpec::cast(ElemType::F16, ElemType::F32, n), src, t);
            src = t;
            cur_e = ElemType::F32;
        }
        let walk = row_walk(len, inner, cur_e)?;
        for d in &mut cur[lo..hi] {
            *d = 1;
        }
        let (out_e, to, scaled) = if last && !split {
            (f.elem, Slot::Out, scale)
        } else if last {
            (ElemType::F32, Slot::Partial, None)
        } else {
            let n = cur.iter().product::<i64>() as u64;
            (ElemType::F32, calls.temp(n * 4), None)
        };
        let spec = KernelSpec::row_reduce(f.kind.row_op(), cur_e, out_e, outer, len, walk, scaled);
        calls.push(spec, src, to);
        src = to;
        cur_e = ElemType::F32;
    }
    let split = if split {
        let groups: i64 = f.axes.iter().map(|&a| m.grid[a]).product();
        let elems = cur.iter().product::<i64>() as usize;
        let pitch = elems.div_ceil(2) * 2;
        if pitch * 4 >= 16384 {
            return Err(format!(
                "cuts reduced axes over tiles with {elems} results per tile, more than the combining kernel reaches (4095)"
            ));
        }
        let combine = KernelSpec::row_reduce(
            f.kind.row_op(),
            ElemType::F32,
            f.elem,
            1,
            groups as usize,
            RowWalk::Columns {
                inner: elems,
                pitch,
            },
            scale,
        );
        Some(Split {
            groups: groups as usize,
            elems,
            pitch,
            combine,
        })
    } else {
        None
    };
    Ok(Plan { calls, split })
}

/// The calls of a boolean reduction of blocks `block` (no cut along the
/// reduced axes): one `intew.S` reduction per run, innermost first.
fn bool_plan(
    f: &Form,
    block: &[i64],
    runs: &[(usize, usize)],
    split: bool,
) -> Result<Plan, String> {
    if split {
        return Err(
            "cuts reduced axes of booleans over tiles, which the boolean reduction does not combine"
                .into(),
        );
    }
    let mut calls = Calls::default();
    let mut cur = block.to_vec();
    let mut src = Slot::Input;
    for (k, &(lo, hi)) in runs.iter().enumerate() {
        let (outer, len, inner) = walk_of(&cur, lo, hi);
        for d in &mut cur[lo..hi] {
            *d = 1;
        }
        let to = if k + 1 == runs.len() {
            Slot::Out
        } else {
            calls.temp((outer * inner) as u64)
        };
        let spec = KernelSpec::bool_reduce(f.kind == Kind::Min, outer * inner, len, inner);
        calls.push(spec, src, to);
        src = to;
    }
    Ok(Plan { calls, split: None })
}

/// Bytes a tile holds for the blocks of `m`: input, scratch, partials
/// (sent and gathered) and result.
fn bytes_for(f: &Form, m: &Mapping, calls: Option<&Plan>) -> u64 {
    let eb = f.elem_bytes();
    let input = block_bytes_of(m, &f.shape, eb);
    let rm = f.result_mapping(m);
    let out = block_bytes_of(&rm, &f.result_shape(), eb);
    let Some(p) = calls else {
        return input + out;
    };
    let temps: u64 = p.calls.temps.iter().sum();
    let partials = p.split.as_ref().map_or(0, |s| {
        (s.elems as u64 * 4) + (s.groups * s.pitch) as u64 * 4
    });
    input + out + temps + partials
}

/// Estimated cycles of a plan: its calls, and for a cut along reduced axes
/// the gathering phase and the combining superstep.
fn estimate(p: &Plan, target: &Target) -> Result<u64, String> {
    let mut c = p.calls.cycles()?;
    if let Some(s) = &p.split {
        let received = (s.groups as u64 - 1) * s.elems as u64 * 4;
        let horizon = received.div_ceil(target.exchange.receive_bytes_per_cycle.max(1) as u64);
        c += 2 * target.exchange.sync_cycles as u64
            + target.exchange_phase_cycles(horizon)
            + super::kernel_cycles(&s.combine)?;
    }
    Ok(c)
}

/// The input cuts worth trying: the kept axes cut as the row family does,
/// alone or with the outermost reduced axis of more than one element cut
/// into a divisor of the tiles left.
fn candidates(f: &Form, target: &Target) -> Vec<Mapping> {
    let tiles = target.tiles() as i64;
    let kept: Vec<usize> = (0..f.shape.len()).filter(|d| !f.axes.contains(d)).collect();
    let mut out = Vec::new();
    for base in row_grids(&f.shape, &kept, tiles) {
        let used: i64 = base.iter().product();
        let mut push = |g: Vec<i64>| {
            if !out.contains(&g) {
                out.push(g);
            }
        };
        push(base.clone());
        if let Some(&a) = f.axes.iter().find(|&&a| f.shape[a] > 1) {
            for k in 2..=(tiles / used.max(1)).min(f.shape[a]) {
                if f.shape[a] % k == 0 {
                    let mut g = base.clone();
                    g[a] = k;
                    push(g);
                }
            }
        }
    }
    out.into_iter().map(at_zero).collect()
}

fn reduce_plan(
    cx: &Context,
    op: Op,
    target: &Target,
    producer: Option<Mapping>,
) -> Result<(Mapping, Plan), String> {
    let f = Form::of(cx, op)?;
    let cands = candidates(&f, target);
    // The producer's layout when it works (no input moves), else the
    // cheapest cut by the estimate.
    let mut best: Option<(u64, Mapping, Plan)> = None;
    // Why no cut works: preferably a reason other than memory, from a cut
    // that fits.
    let mut why: Option<(bool, String)> = None;
    let try_one = |m: &Mapping| -> Result<Plan, (bool, String)> {
        check_fits(bytes_for(&f, m, None), &f.shape, m, target)?;
        let p = plan_for(&f, m).map_err(|e| (false, e))?;
        check_fits(bytes_for(&f, m, Some(&p)), &f.shape, m, target)?;
        Ok(p)
    };
    if let Some(pm) = producer {
        if let Ok(p) = try_one(&pm) {
            return Ok((pm, p));
        }
    }
    for m in cands {
        match try_one(&m) {
            Ok(p) => {
                let c = estimate(&p, target)?;
                if best.as_ref().is_none_or(|b| c < b.0) {
                    best = Some((c, m, p));
                }
            }
            Err(e) => {
                if why.as_ref().is_none_or(|w| w.0 && !e.0) {
                    why = Some(e);
                }
            }
        }
    }
    match best {
        Some((_, m, p)) => Ok((m, p)),
        None => Err(why.map_or_else(|| "has no mapping to try".into(), |w| w.1)),
    }
}

/// The producer's layout of the input, when one kernel reads its blocks.
fn producer_cut(env: &TileEnv, cx: &Context, op: Op) -> Option<Mapping> {
    let x = cx.operand(op, 0);
    // Any dimension may be cut: no range must stay whole.
    super::rows::producer_cut(env, x, &cx.value_shape(x), 0, 0)
}

impl DeviceOp for Reduce {
    fn nn_ops(&self) -> Vec<&'static str> {
        vec![
            nn::ReduceSum::NAME,
            nn::ReduceMean::NAME,
            nn::ReduceMax::NAME,
            nn::ReduceMin::NAME,
        ]
    }

    fn tile_op(&self) -> &'static str {
        tile::Reduce::NAME
    }

    fn operand_mappings(&self, cx: &Context, op: Op, env: &TileEnv) -> Vec<(usize, Mapping)> {
        let target = env.target;
        reduce_plan(cx, op, target, None)
            .map(|(m, _)| vec![(0, m)])
            .unwrap_or_default()
    }

    fn to_tile(&self, cx: &mut Context, op: Op, env: &TileEnv) -> Result<Op, Diagnostic> {
        let name = cx.name_str(op).to_string();
        let loc = cx.op_loc(op);
        let err = |m: String| Diagnostic::error(loc, format!("'{name}' op {m}"));
        let f = Form::of(cx, op).map_err(err)?;
        let producer = producer_cut(env, cx, op);
        let (m, plan) = reduce_plan(cx, op, env.target, producer).map_err(err)?;
        let mut cycles = plan.calls.cycles().map_err(err)?;
        if let Some(s) = &plan.split {
            cycles += super::kernel_cycles(&s.combine).map_err(err)?;
        }
        let kernel = plan
            .calls
            .kernel()
            .map(KernelSpec::name)
            .unwrap_or_default();
        let rm = f.result_mapping(&m);
        let axes: Vec<i64> = f.axes.iter().map(|&a| a as i64).collect();
        let mut attrs = vec![
            ("kind", cx.string_attr(f.kind.name())),
            ("axes", cx.i64_array_attr(axes)),
            ("grid", cx.i64_array_attr(m.grid.clone())),
            ("tiles", cx.i64_array_attr(vec![m.first_tile, m.stride])),
            ("kernel", cx.string_attr(&kernel)),
            ("cycles", cx.i64_attr(cycles as i64)),
            ("mapping", rm.to_attr(cx)),
        ];
        if f.keepdims {
            attrs.push(("keepdims", ipu_ir::Attr::UNIT));
        }
        let x = cx.operand(op, 0);
        let ty = cx.value_type(cx.result(op, 0));
        Ok(build_op(cx, tile::Reduce::NAME, &[x], Some(ty), attrs, loc))
    }

    fn to_program(&self, op: Op, b: &mut dyn ProgramBuilder<'_>) -> Result<(), Diagnostic> {
        let cx = b.cx();
        let f = Form::of(cx, op).map_err(|e| b.err(op, e))?;
        let rm = mapping_of(cx, op).ok_or_else(|| b.err(op, "has no mapping"))?;
        let grid = tile::Reduce(op).grid(cx).to_vec();
        let tiles = tile::Reduce(op).tiles(cx);
        let &[first_tile, stride] = tiles else {
            return Err(b.err(op, "has no tiles [first, stride]"));
        };
        let m = Mapping {
            grid,
            first_tile,
            stride,
        };
        let plan = plan_for(&f, &m).map_err(|e| b.err(op, e))?;
        check_recorded(b, op, tile::Reduce(op).kernel(cx), &plan.calls)?;
        let x = cx.operand(op, 0);
        let result = cx.result(op, 0);
        let need = blocks(&m, &f.shape);
        let bytes = block_bytes_of(&m, &f.shape, elem_bytes(cx, x));
        let at = b.operand(op, 0, &need, Layout::RowMajor, bytes, false)?.at;
        let set = b.next_set();
        let label = format!("tile.reduce {}", f.kind.name());
        // The tile of each input block's result block (row-major over the
        // result grid: reduced axes have one block there) and the block's
        // index along the reduced axes.
        let rshape = f.result_shape();
        let bs = m.block_shape(&f.shape);
        let place = |blk: &ipu_program::geometry::Block| -> (u32, usize) {
            let (mut rb, mut gi) = (0i64, 0i64);
            for (d, (&lo, &extent)) in blk.lo.iter().zip(&bs).enumerate() {
                let i = lo / extent.max(1);
                if f.axes.contains(&d) {
                    gi = gi * m.grid[d] + i;
                } else {
                    rb = rb * m.grid[d] + i;
                }
            }
            ((rm.first_tile + rb * rm.stride) as u32, gi as usize)
        };
        b.begin_compute(op, "", &label);
        let (res, gathered) = match &plan.split {
            None => (
                Some(b.home(op, result, &rm, &format!("s{set}.result"), false)?),
                None,
            ),
            Some(s) => {
                let mut g: FxHashMap<u32, usize> = FxHashMap::default();
                for blk in blocks(&rm, &rshape) {
                    let buf = b.alloc(
                        op,
                        blk.tile,
                        &format!("s{set}.partials_in"),
                        (s.groups * s.pitch * 4) as u64,
                        false,
                    )?;
                    g.insert(blk.tile, buf);
                }
                (None, Some(g))
            }
        };
        let mut runs = Vec::new();
        let mut sent = None;
        for blk in &need {
            let tl = blk.tile;
            let Some(&input) = at.get(&tl) else {
                return Err(b.err(op, format!("has no input buffer on tile {tl}")));
            };
            let temps = alloc_temps(b, op, tl, set, &plan.calls)?;
            let partial = match (&plan.split, &gathered) {
                (Some(s), Some(g)) => {
                    let (rt, gi) = place(blk);
                    let pitch = (s.pitch * 4) as u64;
                    match g.get(&rt) {
                        Some(&dst) if rt == tl => Some(Word::Buf(dst, (gi as u64 * pitch) as u32)),
                        Some(_) => {
                            let buf = b.alloc(
                                op,
                                tl,
                                &format!("s{set}.partials"),
                                (s.elems * 4) as u64,
                                false,
                            )?;
                            sent = Some(buf);
                            runs.push(Run {
                                src_tile: tl,
                                src_off: 0,
                                dst_tile: rt,
                                dst_off: gi as u64 * pitch,
                                len: (s.elems * 4) as u64,
                            });
                            Some(Word::Buf(buf, 0))
                        }
                        None => {
                            return Err(b.err(
                                op,
                                format!("has no result block on tile {rt} for tile {tl}"),
                            ))
                        }
                    }
                }
                _ => None,
            };
            let words = SlotWords {
                input: Word::Buf(input, 0),
                out: res.map(|r| Word::Buf(r, 0)),
                partial,
                temps,
            };
            for s in &plan.calls.stages {
                b.call(tl, stage_call(s, &words, (None, None)));
            }
        }
        if let (Some(s), Some(g)) = (&plan.split, &gathered) {
            b.end_compute(op)?;
            if let (Some(src), Some(&dst)) = (sent, g.values().next()) {
                b.exchange(
                    op,
                    &format!("partials of s{set} tile.reduce"),
                    vec![(src, dst, runs)],
                )?;
            }
            b.begin_compute(op, ".combine", &format!("{label} combine"));
            let res = b.home(op, result, &rm, &format!("s{set}.result"), false)?;
            let mut tiles: Vec<(u32, usize)> = g.iter().map(|(&t, &buf)| (t, buf)).collect();
            tiles.sort_unstable();
            for (tl, buf) in tiles {
                b.call(
                    tl,
                    super::records::rows_along(&s.combine, Word::Buf(buf, 0), Word::Buf(res, 0)),
                );
            }
        }
        b.end_compute(op)?;
        b.finish_op();
        Ok(())
    }
}
