//! Elementwise arithmetic: the ops with a dialect op of their own, and
//! those composed from a few (`Mean`, `Clip`, the hyperbolic functions,
//! `Swish`, `Shrink`), and the casts.

use ipu_reference::{ElementType, GeluApproximation, OpKind};

use super::super::importer::{invalid, unsupported, Importer, NResult};
use super::{binary, op, unary, AttrKind as A, Binder, OnnxOp};
use crate::import::ValueId;
use crate::model::{data_type_name, element_type};

pub(super) const OPS: &[OnnxOp] = &[
    op("Add", 1, &[], |im, n| binary(im, n, OpKind::Add)),
    op("Sub", 1, &[], |im, n| binary(im, n, OpKind::Sub)),
    op("Mul", 1, &[], |im, n| binary(im, n, OpKind::Mul)),
    op("Div", 1, &[], |im, n| binary(im, n, OpKind::Div)),
    op("Pow", 1, &[], |im, n| binary(im, n, OpKind::Pow)),
    op("Mod", 10, &[("fmod", A::Int)], modulo),
    op("Max", 1, &[], |im, n| fold(im, n, OpKind::Max)),
    op("Min", 1, &[], |im, n| fold(im, n, OpKind::Min)),
    op("Sum", 1, &[], |im, n| fold(im, n, OpKind::Add)),
    op("Mean", 1, &[], mean),
    op("Clip", 1, &[("min", A::Float), ("max", A::Float)], clip_1).until(10),
    op("Clip", 11, &[], clip_11),
    op("Floor", 1, &[], |im, n| unary(im, n, OpKind::Floor)),
    op("Ceil", 1, &[], |im, n| unary(im, n, OpKind::Ceil)),
    op("Round", 11, &[], |im, n| unary(im, n, OpKind::Round)),
    op("Neg", 1, &[], |im, n| unary(im, n, OpKind::Neg)),
    op("Abs", 1, &[], |im, n| unary(im, n, OpKind::Abs)),
    op("Exp", 1, &[], |im, n| unary(im, n, OpKind::Exp)),
    op("Log", 1, &[], |im, n| unary(im, n, OpKind::Log)),
    op("Sqrt", 1, &[], |im, n| unary(im, n, OpKind::Sqrt)),
    op("Reciprocal", 1, &[], |im, n| {
        unary(im, n, OpKind::Reciprocal)
    }),
    op("Tanh", 1, &[], |im, n| unary(im, n, OpKind::Tanh)),
    op("Erf", 9, &[], |im, n| unary(im, n, OpKind::Erf)),
    op("Sigmoid", 1, &[], |im, n| unary(im, n, OpKind::Sigmoid)),
    op("Sin", 7, &[], |im, n| unary(im, n, OpKind::Sin)),
    op("Cos", 7, &[], |im, n| unary(im, n, OpKind::Cos)),
    op("Tan", 7, &[], tan),
    op("Sinh", 9, &[], |im, n| hyperbolic(im, n, OpKind::Sub)),
    op("Cosh", 9, &[], |im, n| hyperbolic(im, n, OpKind::Add)),
    op("Asinh", 9, &[], |im, n| {
        inverse_hyperbolic(im, n, OpKind::Add)
    }),
    op("Acosh", 9, &[], |im, n| {
        inverse_hyperbolic(im, n, OpKind::Sub)
    }),
    op("Atanh", 9, &[], atanh),
    op("Relu", 1, &[], |im, n| unary(im, n, OpKind::Relu)),
    op("Gelu", 20, &[("approximate", A::String)], gelu),
    op("Swish", 24, &[("alpha", A::Float)], swish),
    op(
        "Shrink",
        9,
        &[("lambd", A::Float), ("bias", A::Float)],
        shrink,
    ),
    op("Cast", 1, CAST_ATTRS, cast),
    op(
        "CastLike",
        15,
        &[("saturate", A::Int), ("round_mode", A::String)],
        cast_like,
    ),
];

const CAST_ATTRS: &[(&str, A)] = &[
    ("to", A::Int),
    ("saturate", A::Int),
    ("round_mode", A::String),
];

fn modulo(im: &mut Importer, n: &Binder) -> NResult<()> {
    let fmod = n.attr_i("fmod", 0)? != 0;
    binary(im, n, OpKind::Mod { fmod })
}

/// `op` over every input, left to right.
fn fold(im: &mut Importer, n: &Binder, op: OpKind) -> NResult<()> {
    let y = im.binary_fold(op, n, n.name)?;
    im.bind(n, &[Some(y)])
}

fn mean(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let y = im.binary_fold(OpKind::Add, n, name)?;
    let dt = im.ty(y).dtype;
    let c = im.scalar(n.inputs.len() as f32, dt, name)?;
    let y = im.op(OpKind::Div, &[y, c], name)?;
    im.bind(n, &[Some(y)])
}

/// `x` clamped below by `lo` and above by `hi`, where given.
fn clamp(
    im: &mut Importer,
    n: &Binder,
    x: ValueId,
    lo: Option<ValueId>,
    hi: Option<ValueId>,
) -> NResult<()> {
    let mut y = x;
    if let Some(lo) = lo {
        y = im.op(OpKind::Max, &[y, lo], n.name)?;
    }
    if let Some(hi) = hi {
        y = im.op(OpKind::Min, &[y, hi], n.name)?;
    }
    im.bind(n, &[Some(y)])
}

/// Before opset 11 the bounds are attributes.
fn clip_1(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let dt = im.ty(x).dtype;
    let mut bound = |key: &str| -> NResult<Option<ValueId>> {
        match n.attr(key)? {
            Some(_) => Ok(Some(im.scalar(n.attr_f(key, 0.0)?, dt, n.name)?)),
            None => Ok(None),
        }
    };
    let lo = bound("min")?;
    let hi = bound("max")?;
    clamp(im, n, x, lo, hi)
}

fn clip_11(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let (lo, hi) = (im.input(n, 1)?, im.input(n, 2)?);
    clamp(im, n, x, lo, hi)
}

/// The input, and the constants 1 and 1/2 of its type (made for every
/// trigonometric composition, used or not, so value names stay stable).
fn trig_operands(im: &mut Importer, n: &Binder) -> NResult<(ValueId, ValueId, ValueId)> {
    let x = im.req(n, 0)?;
    let dt = im.ty(x).dtype;
    let one = im.scalar(1.0, dt, n.name)?;
    let half = im.scalar(0.5, dt, n.name)?;
    Ok((x, one, half))
}

fn tan(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let (x, _, _) = trig_operands(im, n)?;
    let s = im.op(OpKind::Sin, &[x], name)?;
    let c = im.op(OpKind::Cos, &[x], name)?;
    let y = im.op(OpKind::Div, &[s, c], name)?;
    im.bind(n, &[Some(y)])
}

/// `sinh` (`combine` = Sub) or `cosh` (Add): `(e^x combine e^-x) / 2`.
fn hyperbolic(im: &mut Importer, n: &Binder, combine: OpKind) -> NResult<()> {
    let name = n.name;
    let (x, _, half) = trig_operands(im, n)?;
    let e = im.op(OpKind::Exp, &[x], name)?;
    let nx = im.op(OpKind::Neg, &[x], name)?;
    let en = im.op(OpKind::Exp, &[nx], name)?;
    let t = im.op(combine, &[e, en], name)?;
    let y = im.op(OpKind::Mul, &[t, half], name)?;
    im.bind(n, &[Some(y)])
}

/// `asinh` (`combine` = Add) or `acosh` (Sub): `ln(x + sqrt(x^2 combine 1))`.
fn inverse_hyperbolic(im: &mut Importer, n: &Binder, combine: OpKind) -> NResult<()> {
    let name = n.name;
    let (x, one, _) = trig_operands(im, n)?;
    let x2 = im.op(OpKind::Mul, &[x, x], name)?;
    let r = im.op(combine, &[x2, one], name)?;
    let sq = im.op(OpKind::Sqrt, &[r], name)?;
    let t = im.op(OpKind::Add, &[x, sq], name)?;
    let y = im.op(OpKind::Log, &[t], name)?;
    im.bind(n, &[Some(y)])
}

fn atanh(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let (x, one, half) = trig_operands(im, n)?;
    let p = im.op(OpKind::Add, &[one, x], name)?;
    let q = im.op(OpKind::Sub, &[one, x], name)?;
    let d = im.op(OpKind::Div, &[p, q], name)?;
    let l = im.op(OpKind::Log, &[d], name)?;
    let y = im.op(OpKind::Mul, &[l, half], name)?;
    im.bind(n, &[Some(y)])
}

fn gelu(im: &mut Importer, n: &Binder) -> NResult<()> {
    let approximate = match n.attr_s("approximate")?.as_deref() {
        None | Some("none") => GeluApproximation::None,
        Some("tanh") => GeluApproximation::Tanh,
        Some(o) => return invalid(format!("unknown approximate `{o}`")),
    };
    unary(im, n, OpKind::Gelu { approximate })
}

fn swish(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let dt = im.ty(x).dtype;
    let a = im.scalar(n.attr_f("alpha", 1.0)?, dt, name)?;
    let ax = im.op(OpKind::Mul, &[x, a], name)?;
    let sg = im.op(OpKind::Sigmoid, &[ax], name)?;
    let y = im.op(OpKind::Mul, &[x, sg], name)?;
    im.bind(n, &[Some(y)])
}

fn shrink(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let dt = im.ty(x).dtype;
    let l = n.attr_f("lambd", 0.5)?;
    let b = n.attr_f("bias", 0.0)?;
    let pl = im.scalar(l, dt, name)?;
    let nl = im.scalar(-l, dt, name)?;
    let bv = im.scalar(b, dt, name)?;
    let zero = im.scalar(0.0, dt, name)?;
    let lo = im.op(OpKind::Less, &[x, nl], name)?;
    let hi = im.op(OpKind::Greater, &[x, pl], name)?;
    let xp = im.op(OpKind::Add, &[x, bv], name)?;
    let xm = im.op(OpKind::Sub, &[x, bv], name)?;
    let inner = im.op(OpKind::Select, &[hi, xm, zero], name)?;
    let y = im.op(OpKind::Select, &[lo, xp, inner], name)?;
    im.bind(n, &[Some(y)])
}

fn cast(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let dt = n.attr_i("to", 0)? as i32;
    let Some(to) = element_type(dt) else {
        return unsupported(format!("cast to {} ({dt})", data_type_name(dt)));
    };
    cast_to(im, n, x, to)
}

fn cast_like(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let t = im.req(n, 1)?;
    let to = im.ty(t).dtype;
    cast_to(im, n, x, to)
}

fn cast_to(im: &mut Importer, n: &Binder, x: ValueId, to: ElementType) -> NResult<()> {
    let saturate = n.attr_i("saturate", 1)? != 0;
    if let Some(mode) = n.attr_s("round_mode")? {
        if mode != "up" && to == ElementType::F8E8M0FNU {
            return unsupported(format!("round_mode `{mode}` (only \"up\")"));
        }
    }
    let cast = OpKind::Cast {
        to,
        saturate,
        scale: 0,
    };
    let y = im.op(cast, &[x], n.name)?;
    im.bind(n, &[Some(y)])
}
