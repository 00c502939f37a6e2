//! Elementwise activations composed from dialect ops (`LeakyRelu`, the
//! exponential-linear family, hard sigmoid and swish, softplus and mish,
//! ...) and the float classifications `IsNaN`/`IsInf`.

use ipu_reference::{ElementType, OpKind};

use super::super::importer::{Importer, NResult};
use super::{op, AttrKind as A, Binder, OnnxOp};
use crate::import::ValueId;

const ALPHA: &[(&str, A)] = &[("alpha", A::Float)];

pub(super) const OPS: &[OnnxOp] = &[
    op("LeakyRelu", 1, ALPHA, leaky_relu),
    op("PRelu", 1, &[], prelu),
    op("Elu", 1, ALPHA, elu),
    op("Celu", 12, ALPHA, celu),
    op("Selu", 1, &[("alpha", A::Float), ("gamma", A::Float)], selu),
    op("ThresholdedRelu", 10, ALPHA, thresholded_relu),
    op(
        "HardSigmoid",
        1,
        &[("alpha", A::Float), ("beta", A::Float)],
        hard_sigmoid,
    ),
    op("HardSwish", 14, &[], hard_swish),
    op("Softplus", 1, &[], |im, n| softplus(im, n, false)),
    op("Mish", 18, &[], |im, n| softplus(im, n, true)),
    op("Softsign", 1, &[], softsign),
    op("Sign", 9, &[], sign),
    op("IsNaN", 9, &[], is_nan),
    op(
        "IsInf",
        10,
        &[("detect_positive", A::Int), ("detect_negative", A::Int)],
        is_inf,
    ),
];

/// An activation's input, its type, and the constants 0 and 1 of that type
/// (made for every activation, used or not, so value names stay stable).
#[derive(Clone, Copy)]
struct Operand {
    x: ValueId,
    dt: ElementType,
    zero: ValueId,
    one: ValueId,
}

fn operand(im: &mut Importer, n: &Binder) -> NResult<Operand> {
    let x = im.req(n, 0)?;
    let dt = im.ty(x).dtype;
    let zero = im.scalar(0.0, dt, n.name)?;
    let one = im.scalar(1.0, dt, n.name)?;
    Ok(Operand { x, dt, zero, one })
}

fn leaky_relu(im: &mut Importer, n: &Binder) -> NResult<()> {
    let a = operand(im, n)?;
    let slope = im.scalar(n.attr_f("alpha", 0.01)?, a.dt, n.name)?;
    scaled_below_zero(im, n, a, slope)
}

fn prelu(im: &mut Importer, n: &Binder) -> NResult<()> {
    let a = operand(im, n)?;
    let slope = im.req(n, 1)?;
    scaled_below_zero(im, n, a, slope)
}

/// `x < 0 ? x * slope : x`.
fn scaled_below_zero(im: &mut Importer, n: &Binder, a: Operand, slope: ValueId) -> NResult<()> {
    let name = n.name;
    let neg = im.op(OpKind::Less, &[a.x, a.zero], name)?;
    let sx = im.op(OpKind::Mul, &[a.x, slope], name)?;
    let y = im.op(OpKind::Select, &[neg, sx, a.x], name)?;
    im.bind(n, &[Some(y)])
}

fn elu(im: &mut Importer, n: &Binder) -> NResult<()> {
    let a = operand(im, n)?;
    let alpha = n.attr_f("alpha", 1.0)?;
    exponential_linear(im, n, a, alpha, 1.0, false)
}

fn celu(im: &mut Importer, n: &Binder) -> NResult<()> {
    let a = operand(im, n)?;
    let alpha = n.attr_f("alpha", 1.0)?;
    exponential_linear(im, n, a, alpha, 1.0, true)
}

fn selu(im: &mut Importer, n: &Binder) -> NResult<()> {
    let a = operand(im, n)?;
    let alpha = n.attr_f("alpha", 1.673_263_2)?;
    let gamma = n.attr_f("gamma", 1.050_701)?;
    exponential_linear(im, n, a, alpha, gamma, false)
}

/// `gamma * (x > 0 ? x : alpha * (e^(x or x / alpha) - 1))`: ELU, SELU and
/// (`celu`: the exponent divided by alpha) CELU.
fn exponential_linear(
    im: &mut Importer,
    n: &Binder,
    op: Operand,
    alpha: f32,
    gamma: f32,
    celu: bool,
) -> NResult<()> {
    let name = n.name;
    let Operand { x, dt, zero, one } = op;
    let a = im.scalar(alpha, dt, name)?;
    let arg = if celu {
        im.op(OpKind::Div, &[x, a], name)?
    } else {
        x
    };
    let e = im.op(OpKind::Exp, &[arg], name)?;
    let em1 = im.op(OpKind::Sub, &[e, one], name)?;
    let neg_branch = im.op(OpKind::Mul, &[em1, a], name)?;
    let pos = im.op(OpKind::Greater, &[x, zero], name)?;
    let mut y = im.op(OpKind::Select, &[pos, x, neg_branch], name)?;
    if gamma != 1.0 {
        let g = im.scalar(gamma, dt, name)?;
        y = im.op(OpKind::Mul, &[y, g], name)?;
    }
    im.bind(n, &[Some(y)])
}

fn thresholded_relu(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let Operand { x, dt, zero, .. } = operand(im, n)?;
    let a = im.scalar(n.attr_f("alpha", 1.0)?, dt, name)?;
    let gt = im.op(OpKind::Greater, &[x, a], name)?;
    let y = im.op(OpKind::Select, &[gt, x, zero], name)?;
    im.bind(n, &[Some(y)])
}

fn hard_sigmoid(im: &mut Importer, n: &Binder) -> NResult<()> {
    let a = operand(im, n)?;
    let (alpha, beta) = (n.attr_f("alpha", 0.2)?, n.attr_f("beta", 0.5)?);
    let y = clamped_linear(im, n, a, alpha, beta)?;
    im.bind(n, &[Some(y)])
}

fn hard_swish(im: &mut Importer, n: &Binder) -> NResult<()> {
    let a = operand(im, n)?;
    let hs = clamped_linear(im, n, a, 1.0 / 6.0, 0.5)?;
    let y = im.op(OpKind::Mul, &[a.x, hs], n.name)?;
    im.bind(n, &[Some(y)])
}

/// `clamp(alpha * x + beta, 0, 1)`.
fn clamped_linear(
    im: &mut Importer,
    n: &Binder,
    op: Operand,
    alpha: f32,
    beta: f32,
) -> NResult<ValueId> {
    let name = n.name;
    let a = im.scalar(alpha, op.dt, name)?;
    let b = im.scalar(beta, op.dt, name)?;
    let ax = im.op(OpKind::Mul, &[op.x, a], name)?;
    let axb = im.op(OpKind::Add, &[ax, b], name)?;
    let lo = im.op(OpKind::Max, &[axb, op.zero], name)?;
    im.op(OpKind::Min, &[lo, op.one], name)
}

/// `ln(1 + e^x)`, or with `mish` `x * tanh(ln(1 + e^x))`.
fn softplus(im: &mut Importer, n: &Binder, mish: bool) -> NResult<()> {
    let name = n.name;
    let Operand { x, one, .. } = operand(im, n)?;
    let e = im.op(OpKind::Exp, &[x], name)?;
    let e1 = im.op(OpKind::Add, &[e, one], name)?;
    let mut y = im.op(OpKind::Log, &[e1], name)?;
    if mish {
        let t = im.op(OpKind::Tanh, &[y], name)?;
        y = im.op(OpKind::Mul, &[x, t], name)?;
    }
    im.bind(n, &[Some(y)])
}

fn softsign(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let Operand { x, one, .. } = operand(im, n)?;
    let a = im.op(OpKind::Abs, &[x], name)?;
    let a1 = im.op(OpKind::Add, &[a, one], name)?;
    let y = im.op(OpKind::Div, &[x, a1], name)?;
    im.bind(n, &[Some(y)])
}

fn sign(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let Operand { x, dt, zero, one } = operand(im, n)?;
    let m1 = im.scalar(-1.0, dt, name)?;
    let gt = im.op(OpKind::Greater, &[x, zero], name)?;
    let lt = im.op(OpKind::Less, &[x, zero], name)?;
    // Zero (and NaN) pass through unchanged.
    let inner = im.op(OpKind::Select, &[lt, m1, x], name)?;
    let y = im.op(OpKind::Select, &[gt, one, inner], name)?;
    im.bind(n, &[Some(y)])
}

fn is_nan(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let Operand { x, .. } = operand(im, n)?;
    let eq = im.op(OpKind::Equal, &[x, x], name)?;
    let y = im.op(OpKind::Not, &[eq], name)?;
    im.bind(n, &[Some(y)])
}

fn is_inf(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let Operand { x, dt, .. } = operand(im, n)?;
    let pos = n.attr_i("detect_positive", 1)? != 0;
    let neg = n.attr_i("detect_negative", 1)? != 0;
    let pinf = im.scalar(f32::INFINITY, dt, name)?;
    let ninf = im.scalar(f32::NEG_INFINITY, dt, name)?;
    let p = im.op(OpKind::Equal, &[x, pinf], name)?;
    let q = im.op(OpKind::Equal, &[x, ninf], name)?;
    let y = match (pos, neg) {
        (true, true) => im.op(OpKind::Or, &[p, q], name)?,
        (true, false) => p,
        (false, true) => q,
        (false, false) => {
            // All false, of the input's shape.
            let f = im.op(OpKind::Equal, &[x, x], name)?;
            let t = im.op(OpKind::Not, &[f], name)?;
            im.op(OpKind::And, &[f, t], name)?
        }
    };
    im.bind(n, &[Some(y)])
}
