//! Reductions: the `Reduce*` family (axes an attribute until `ReduceSum`
//! 13 and the others 18, an input after), arg-max/min, cumulative sums
//! and products, `TopK`, and global pooling (a reduction over the spatial
//! axes).

use ipu_reference::{OpKind, ReduceKind};

use super::super::importer::{invalid, norm_axis, Importer, NResult};
use super::{op, unary, AttrKind as A, Binder, IntsFrom, OnnxOp};
use crate::import::ValueId;

/// What a `Reduce*` op computes around its reduction.
#[derive(Clone, Copy)]
enum Reduction {
    Plain(ReduceKind),
    SumSquare,
    L1,
    L2,
    LogSum,
    LogSumExp,
}

use Reduction::*;

const AXES_ATTR: IntsFrom = IntsFrom::Attr("axes");
const AXES_INPUT: IntsFrom = IntsFrom::Input(1);

const AXES_KEEPDIMS: &[(&str, A)] = &[
    ("axes", A::Ints),
    ("keepdims", A::Int),
    ("noop_with_empty_axes", A::Int),
];
const KEEPDIMS: &[(&str, A)] = &[("keepdims", A::Int), ("noop_with_empty_axes", A::Int)];
const ARG: &[(&str, A)] = &[
    ("axis", A::Int),
    ("keepdims", A::Int),
    ("select_last_index", A::Int),
];
const CUMULATIVE: &[(&str, A)] = &[("exclusive", A::Int), ("reverse", A::Int)];

#[rustfmt::skip]
pub(super) const OPS: &[OnnxOp] = &[
    op("ReduceSum", 1, AXES_KEEPDIMS, |im, n| reduction(im, n, AXES_ATTR, Plain(ReduceKind::Sum))).until(12),
    op("ReduceSum", 13, KEEPDIMS, |im, n| reduction(im, n, AXES_INPUT, Plain(ReduceKind::Sum))),
    op("ReduceMean", 1, AXES_KEEPDIMS, |im, n| reduction(im, n, AXES_ATTR, Plain(ReduceKind::Mean))).until(17),
    op("ReduceMean", 18, KEEPDIMS, |im, n| reduction(im, n, AXES_INPUT, Plain(ReduceKind::Mean))),
    op("ReduceMax", 1, AXES_KEEPDIMS, |im, n| reduction(im, n, AXES_ATTR, Plain(ReduceKind::Max))).until(17),
    op("ReduceMax", 18, KEEPDIMS, |im, n| reduction(im, n, AXES_INPUT, Plain(ReduceKind::Max))),
    op("ReduceMin", 1, AXES_KEEPDIMS, |im, n| reduction(im, n, AXES_ATTR, Plain(ReduceKind::Min))).until(17),
    op("ReduceMin", 18, KEEPDIMS, |im, n| reduction(im, n, AXES_INPUT, Plain(ReduceKind::Min))),
    op("ReduceProd", 1, AXES_KEEPDIMS, |im, n| reduction(im, n, AXES_ATTR, Plain(ReduceKind::Prod))).until(17),
    op("ReduceProd", 18, KEEPDIMS, |im, n| reduction(im, n, AXES_INPUT, Plain(ReduceKind::Prod))),
    op("ReduceSumSquare", 1, AXES_KEEPDIMS, |im, n| reduction(im, n, AXES_ATTR, SumSquare)).until(17),
    op("ReduceSumSquare", 18, KEEPDIMS, |im, n| reduction(im, n, AXES_INPUT, SumSquare)),
    op("ReduceL1", 1, AXES_KEEPDIMS, |im, n| reduction(im, n, AXES_ATTR, L1)).until(17),
    op("ReduceL1", 18, KEEPDIMS, |im, n| reduction(im, n, AXES_INPUT, L1)),
    op("ReduceL2", 1, AXES_KEEPDIMS, |im, n| reduction(im, n, AXES_ATTR, L2)).until(17),
    op("ReduceL2", 18, KEEPDIMS, |im, n| reduction(im, n, AXES_INPUT, L2)),
    op("ReduceLogSum", 1, AXES_KEEPDIMS, |im, n| reduction(im, n, AXES_ATTR, LogSum)).until(17),
    op("ReduceLogSum", 18, KEEPDIMS, |im, n| reduction(im, n, AXES_INPUT, LogSum)),
    op("ReduceLogSumExp", 1, AXES_KEEPDIMS, |im, n| reduction(im, n, AXES_ATTR, LogSumExp)).until(17),
    op("ReduceLogSumExp", 18, KEEPDIMS, |im, n| reduction(im, n, AXES_INPUT, LogSumExp)),
    op("ArgMax", 1, ARG, |im, n| arg_extreme(im, n, true)),
    op("ArgMin", 1, ARG, |im, n| arg_extreme(im, n, false)),
    op("CumSum", 11, CUMULATIVE, |im, n| cumulative(im, n, false)),
    op("CumProd", 26, CUMULATIVE, |im, n| cumulative(im, n, true)),
    op("TopK", 1, &[("axis", A::Int), ("k", A::Int), ("largest", A::Int)], top_k_1).until(9),
    op("TopK", 10, &[("axis", A::Int), ("largest", A::Int)], top_k_10),
    op("GlobalAveragePool", 1, &[], |im, n| global_pool(im, n, ReduceKind::Mean)),
    op("GlobalMaxPool", 1, &[], |im, n| global_pool(im, n, ReduceKind::Max)),
];

fn reduction(im: &mut Importer, n: &Binder, axes: IntsFrom, what: Reduction) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let axes = axes.read(im, n)?;
    let keep = n.attr_i("keepdims", 1)? != 0;
    let noop = n.attr_i("noop_with_empty_axes", 0)? != 0;
    let sum = |im: &mut Importer, v: ValueId| {
        im.reduce(v, ReduceKind::Sum, axes.clone(), keep, noop, name)
    };
    let y = match what {
        Plain(kind) => im.reduce(x, kind, axes.clone(), keep, noop, name)?,
        SumSquare => {
            let sq = im.op(OpKind::Mul, &[x, x], name)?;
            sum(im, sq)?
        }
        L1 => {
            let a = im.op(OpKind::Abs, &[x], name)?;
            sum(im, a)?
        }
        L2 => {
            let sq = im.op(OpKind::Mul, &[x, x], name)?;
            let s = sum(im, sq)?;
            im.op(OpKind::Sqrt, &[s], name)?
        }
        LogSum => {
            let s = sum(im, x)?;
            im.op(OpKind::Log, &[s], name)?
        }
        LogSumExp => {
            let e = im.op(OpKind::Exp, &[x], name)?;
            let s = sum(im, e)?;
            im.op(OpKind::Log, &[s], name)?
        }
    };
    im.bind(n, &[Some(y)])
}

/// `ArgMax` (`max`) or `ArgMin`.
fn arg_extreme(im: &mut Importer, n: &Binder, max: bool) -> NResult<()> {
    let x = im.req(n, 0)?;
    let rank = im.ty(x).shape.len();
    let axis = norm_axis(n.attr_i("axis", 0)?, rank)?;
    let keepdims = n.attr_i("keepdims", 1)? != 0;
    let select_last_index = n.attr_i("select_last_index", 0)? != 0;
    let op = if max {
        OpKind::ArgMax {
            axis,
            keepdims,
            select_last_index,
        }
    } else {
        OpKind::ArgMin {
            axis,
            keepdims,
            select_last_index,
        }
    };
    unary(im, n, op)
}

/// `CumSum`, or `CumProd` (`prod`), along the axis given as input 1.
fn cumulative(im: &mut Importer, n: &Binder, prod: bool) -> NResult<()> {
    let x = im.req(n, 0)?;
    let a = im.req(n, 1)?;
    let rank = im.ty(x).shape.len();
    let axis = match im.static_ints(a)?.as_slice() {
        [v] => norm_axis(*v, rank)?,
        _ => return invalid("axis must be a scalar"),
    };
    let (exclusive, reverse) = (n.attr_i("exclusive", 0)? != 0, n.attr_i("reverse", 0)? != 0);
    let op = if prod {
        OpKind::CumProd {
            axis,
            exclusive,
            reverse,
        }
    } else {
        OpKind::CumSum {
            axis,
            exclusive,
            reverse,
        }
    };
    let y = im.op(op, &[x], n.name)?;
    im.bind(n, &[Some(y)])
}

/// Before opset 10, `k` is an attribute.
fn top_k_1(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let axis = norm_axis(n.attr_i("axis", -1)?, im.ty(x).shape.len())?;
    let k = n.attr_i("k", -1)?;
    top_k(im, n, x, axis, k)
}

fn top_k_10(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let axis = norm_axis(n.attr_i("axis", -1)?, im.ty(x).shape.len())?;
    let kid = im.req(n, 1)?;
    let k = im.static_ints(kid)?.first().copied().unwrap_or(-1);
    top_k(im, n, x, axis, k)
}

/// The `k` largest (or smallest) values along `axis` and their indices.
fn top_k(im: &mut Importer, n: &Binder, x: ValueId, axis: usize, k: i64) -> NResult<()> {
    let name = n.name;
    if k < 0 {
        return invalid("k must be non-negative");
    }
    let largest = n.attr_i("largest", 1)? != 0;
    let k = k as usize;
    let idx = im.op(OpKind::TopK { axis, k, largest }, &[x], name)?;
    let vals = im.op(OpKind::GatherElements { axis }, &[x, idx], name)?;
    im.bind(n, &[Some(vals), Some(idx)])
}

fn global_pool(im: &mut Importer, n: &Binder, kind: ReduceKind) -> NResult<()> {
    let x = im.req(n, 0)?;
    let rank = im.ty(x).shape.len();
    let axes: Vec<i64> = (2..rank as i64).collect();
    let y = im.reduce(x, kind, Some(axes), true, true, n.name)?;
    im.bind(n, &[Some(y)])
}
