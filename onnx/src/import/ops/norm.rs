//! Normalizations: `LayerNormalization` (the dialect's op, with its
//! optional mean and inverse-deviation outputs computed beside it), and
//! those composed from dialect ops: RMS, batch (inference), group,
//! instance, mean-variance and Lp normalization.

use ipu_reference::{ElementType, OpKind, ReduceKind};

use super::super::importer::{invalid, norm_axis, numel, unsupported, Importer, NResult};
use super::{op, AttrKind as A, Binder, OnnxOp};
use crate::import::ValueId;
use crate::model::element_type;

const NORM: &[(&str, A)] = &[
    ("axis", A::Int),
    ("epsilon", A::Float),
    ("stash_type", A::Int),
];
const GROUP_NORM: &[(&str, A)] = &[
    ("num_groups", A::Int),
    ("epsilon", A::Float),
    ("stash_type", A::Int),
];
const BATCH_NORM: &[(&str, A)] = &[("training_mode", A::Int), ("epsilon", A::Float)];

pub(super) const OPS: &[OnnxOp] = &[
    op("LayerNormalization", 17, NORM, layer_norm),
    op("RMSNormalization", 23, NORM, rms_norm),
    op("BatchNormalization", 1, BATCH_NORM, batch_norm),
    op("GroupNormalization", 18, GROUP_NORM, group_norm),
    op(
        "InstanceNormalization",
        1,
        &[("epsilon", A::Float)],
        instance_norm,
    ),
    op(
        "MeanVarianceNormalization",
        9,
        &[("axes", A::Ints)],
        mean_variance_norm,
    ),
    op(
        "LpNormalization",
        1,
        &[("axis", A::Int), ("p", A::Int)],
        lp_norm,
    ),
];

/// The type statistics are computed in (`stash_type`; f32 by default or
/// when unknown).
fn stash_type(n: &Binder) -> NResult<ElementType> {
    Ok(match n.attr_i("stash_type", 1)? {
        1 => ElementType::F32,
        t => element_type(t as i32).unwrap_or(ElementType::F32),
    })
}

fn layer_norm(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let scale = im.input(n, 1)?;
    let bias = im.input(n, 2)?;
    let rank = im.ty(x).shape.len();
    let axis = norm_axis(n.attr_i("axis", -1)?, rank)?;
    let eps = n.attr_f("epsilon", 1e-5)?;
    let mut ins = vec![x];
    ins.extend(scale);
    ins.extend(bias);
    let ln = OpKind::LayerNorm {
        axis,
        epsilon: eps,
        has_scale: scale.is_some(),
        has_bias: bias.is_some(),
    };
    let y = im.op(ln, &ins, name)?;
    let mut outs = vec![Some(y), None, None];
    if Importer::wants_output(n, 1) || Importer::wants_output(n, 2) {
        let (mean, inv) = layer_norm_stats(im, n, x, axis, eps)?;
        outs[1] = Some(mean);
        outs[2] = Some(inv);
    }
    im.bind(n, &outs)
}

/// `LayerNormalization`'s mean and inverse standard deviation over the
/// axes from `axis` on, in the stash type.
fn layer_norm_stats(
    im: &mut Importer,
    n: &Binder,
    x: ValueId,
    axis: usize,
    eps: f32,
) -> NResult<(ValueId, ValueId)> {
    let name = n.name;
    let rank = im.ty(x).shape.len();
    let stash = stash_type(n)?;
    let xs = im.cast(x, stash, name)?;
    let axes: Vec<i64> = (axis as i64..rank as i64).collect();
    let mean = im.reduce(xs, ReduceKind::Mean, Some(axes.clone()), true, false, name)?;
    let d = im.op(OpKind::Sub, &[xs, mean], name)?;
    let d2 = im.op(OpKind::Mul, &[d, d], name)?;
    let var = im.reduce(d2, ReduceKind::Mean, Some(axes), true, false, name)?;
    let e = im.scalar(eps, stash, name)?;
    let ve = im.op(OpKind::Add, &[var, e], name)?;
    let inv = im.op(OpKind::Rsqrt, &[ve], name)?;
    Ok((mean, inv))
}

fn rms_norm(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let scale = im.req(n, 1)?;
    let ty = im.ty(x).clone();
    let rank = ty.shape.len();
    let axis = norm_axis(n.attr_i("axis", -1)?, rank)?;
    let eps = n.attr_f("epsilon", 1e-5)?;
    let stash = stash_type(n)?;
    let xs = im.cast(x, stash, name)?;
    let sq = im.op(OpKind::Mul, &[xs, xs], name)?;
    let axes: Vec<i64> = (axis as i64..rank as i64).collect();
    let ms = im.reduce(sq, ReduceKind::Mean, Some(axes), true, false, name)?;
    let e = im.scalar(eps, stash, name)?;
    let me = im.op(OpKind::Add, &[ms, e], name)?;
    let inv = im.op(OpKind::Rsqrt, &[me], name)?;
    let normed = im.op(OpKind::Mul, &[xs, inv], name)?;
    let normed = im.cast(normed, ty.dtype, name)?;
    let y = im.op(OpKind::Mul, &[normed, scale], name)?;
    im.bind(n, &[Some(y)])
}

/// Inference: `(x - mean) / sqrt(var + eps) * scale + bias` per channel;
/// folded into a conv it directly follows (`conv::fold_batch_norm`).
fn batch_norm(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    if n.attr_i("training_mode", 0)? != 0 || n.outputs.len() > 1 {
        return unsupported("training mode");
    }
    let x = im.req(n, 0)?;
    let shape = im.ty(x).shape.clone();
    if shape.len() < 2 {
        return invalid("input must have rank >= 2");
    }
    let eps = n.attr_f("epsilon", 1e-5)?;
    let stats = [im.req(n, 1)?, im.req(n, 2)?, im.req(n, 3)?, im.req(n, 4)?];
    if let Some(y) = super::conv::fold_batch_norm(im, n, x, stats, eps)? {
        return im.bind(n, &[Some(y)]);
    }
    let mut params = Vec::with_capacity(4);
    for i in 1..5 {
        let p = im.req(n, i)?;
        let c = im.ty(p).numel();
        let mut ps = vec![1usize; shape.len() - 1];
        ps[0] = c;
        params.push(im.reshape(p, ps, name)?);
    }
    let (scale, bias, mean, var) = (params[0], params[1], params[2], params[3]);
    let dt = im.ty(var).dtype;
    let e = im.scalar(eps, dt, name)?;
    let ve = im.op(OpKind::Add, &[var, e], name)?;
    let inv = im.op(OpKind::Rsqrt, &[ve], name)?;
    let d = im.op(OpKind::Sub, &[x, mean], name)?;
    let d = im.op(OpKind::Mul, &[d, inv], name)?;
    let d = im.op(OpKind::Mul, &[d, scale], name)?;
    let y = im.op(OpKind::Add, &[d, bias], name)?;
    im.bind(n, &[Some(y)])
}

/// `y * scale + bias` with one scale and bias per channel (axis 1 of a
/// `rank`-D tensor).
fn per_channel_affine(
    im: &mut Importer,
    n: &Binder,
    y: ValueId,
    [scale, bias]: [ValueId; 2],
    channels: usize,
    rank: usize,
) -> NResult<()> {
    let mut ps = vec![1usize; rank - 1];
    ps[0] = channels;
    let sc = im.reshape(scale, ps.clone(), n.name)?;
    let bi = im.reshape(bias, ps, n.name)?;
    let y = im.op(OpKind::Mul, &[y, sc], n.name)?;
    let y = im.op(OpKind::Add, &[y, bi], n.name)?;
    im.bind(n, &[Some(y)])
}

/// A layer norm of the input grouped to `[N, groups, rest]` (in the stash
/// type), then a per-channel affine.
fn group_norm(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let (scale, bias) = (im.req(n, 1)?, im.req(n, 2)?);
    let ty = im.ty(x).clone();
    let shape = ty.shape.clone();
    if shape.len() < 2 {
        return invalid("input must have rank >= 2");
    }
    let g = n.attr_i("num_groups", 0)?;
    let c = shape[1];
    if g <= 0 || c % g as usize != 0 {
        return invalid(format!("num_groups {g} does not divide {c} channels"));
    }
    let g = g as usize;
    let eps = n.attr_f("epsilon", 1e-5)?;
    let stash = stash_type(n)?;
    let xs = im.cast(x, stash, name)?;
    let grouped = vec![shape[0], g, numel(&shape[1..]) / g];
    let xg = im.reshape(xs, grouped, name)?;
    let ln = OpKind::LayerNorm {
        axis: 2,
        epsilon: eps,
        has_scale: false,
        has_bias: false,
    };
    let ln = im.op(ln, &[xg], name)?;
    let y = im.reshape(ln, shape.clone(), name)?;
    let y = im.cast(y, ty.dtype, name)?;
    if im.ty(scale).numel() != c || im.ty(bias).numel() != c {
        return unsupported("scale and bias must have one value per channel");
    }
    per_channel_affine(im, n, y, [scale, bias], c, shape.len())
}

/// A layer norm over each (batch, channel)'s spatial values, then a
/// per-channel affine.
fn instance_norm(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let (scale, bias) = (im.req(n, 1)?, im.req(n, 2)?);
    let shape = im.ty(x).shape.clone();
    let rank = shape.len();
    if rank < 3 {
        return invalid("input must have rank >= 3");
    }
    let eps = n.attr_f("epsilon", 1e-5)?;
    let flat = vec![shape[0] * shape[1], numel(&shape[2..])];
    let xf = im.reshape(x, flat, name)?;
    let ln = OpKind::LayerNorm {
        axis: 1,
        epsilon: eps,
        has_scale: false,
        has_bias: false,
    };
    let ln = im.op(ln, &[xf], name)?;
    let y = im.reshape(ln, shape.clone(), name)?;
    per_channel_affine(im, n, y, [scale, bias], shape[1], rank)
}

fn mean_variance_norm(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let axes = n.attr_ints("axes")?.unwrap_or_else(|| vec![0, 2, 3]);
    let mean = im.reduce(x, ReduceKind::Mean, Some(axes.clone()), true, false, name)?;
    let d = im.op(OpKind::Sub, &[x, mean], name)?;
    let d2 = im.op(OpKind::Mul, &[d, d], name)?;
    let var = im.reduce(d2, ReduceKind::Mean, Some(axes), true, false, name)?;
    let sd = im.op(OpKind::Sqrt, &[var], name)?;
    let y = im.op(OpKind::Div, &[d, sd], name)?;
    im.bind(n, &[Some(y)])
}

fn lp_norm(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let rank = im.ty(x).shape.len();
    let axis = norm_axis(n.attr_i("axis", -1)?, rank)? as i64;
    let p = n.attr_i("p", 2)?;
    let norm = match p {
        1 => {
            let a = im.op(OpKind::Abs, &[x], name)?;
            im.reduce(a, ReduceKind::Sum, Some(vec![axis]), true, false, name)?
        }
        2 => {
            let sq = im.op(OpKind::Mul, &[x, x], name)?;
            let s = im.reduce(sq, ReduceKind::Sum, Some(vec![axis]), true, false, name)?;
            im.op(OpKind::Sqrt, &[s], name)?
        }
        _ => return invalid(format!("p = {p}")),
    };
    // A zero norm gives zero (not NaN), like the ONNX reference.
    let dt = im.ty(x).dtype;
    let zero = im.scalar(0.0, dt, name)?;
    let is0 = im.op(OpKind::Equal, &[norm, zero], name)?;
    let q = im.op(OpKind::Div, &[x, norm], name)?;
    let y = im.op(OpKind::Select, &[is0, zero, q], name)?;
    im.bind(n, &[Some(y)])
}
