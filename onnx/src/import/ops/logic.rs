//! Comparisons, boolean logic, bit shifts and `Where`.

use ipu_reference::{ElementType, OpKind};

use super::super::importer::{invalid, Importer, NResult};
use super::{binary, op, unary, AttrKind as A, Binder, OnnxOp};

pub(super) const OPS: &[OnnxOp] = &[
    op("Equal", 1, &[], |im, n| binary(im, n, OpKind::Equal)),
    op("Less", 1, &[], |im, n| binary(im, n, OpKind::Less)),
    op("Greater", 1, &[], |im, n| binary(im, n, OpKind::Greater)),
    op("LessOrEqual", 12, &[], |im, n| {
        or_equal(im, n, OpKind::Less)
    }),
    op("GreaterOrEqual", 12, &[], |im, n| {
        or_equal(im, n, OpKind::Greater)
    }),
    op("And", 1, &[], |im, n| binary(im, n, OpKind::And)),
    op("Or", 1, &[], |im, n| binary(im, n, OpKind::Or)),
    op("Xor", 1, &[], xor),
    op("Not", 1, &[], |im, n| unary(im, n, OpKind::Not)),
    op("BitShift", 11, &[("direction", A::String)], bit_shift),
    op("Where", 9, &[], select),
];

/// `a strict b || a == b`.
fn or_equal(im: &mut Importer, n: &Binder, strict: OpKind) -> NResult<()> {
    let name = n.name;
    let (a, b) = (im.req(n, 0)?, im.req(n, 1)?);
    let s = im.op(strict, &[a, b], name)?;
    let e = im.op(OpKind::Equal, &[a, b], name)?;
    let y = im.op(OpKind::Or, &[s, e], name)?;
    im.bind(n, &[Some(y)])
}

fn xor(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let (a, b) = (im.req(n, 0)?, im.req(n, 1)?);
    let e = im.op(OpKind::Equal, &[a, b], name)?;
    let y = im.op(OpKind::Not, &[e], name)?;
    im.bind(n, &[Some(y)])
}

/// A shift by `s` bits as a multiplication or division by `2^s`.
fn bit_shift(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let (x, s) = (im.req(n, 0)?, im.req(n, 1)?);
    let dt = im.ty(x).dtype;
    if !matches!(
        dt,
        ElementType::U8 | ElementType::U16 | ElementType::U32 | ElementType::U64
    ) {
        return invalid(format!("BitShift needs an unsigned type, got {dt}"));
    }
    let two = im.scalar(2.0, dt, name)?;
    let p = im.op(OpKind::Pow, &[two, s], name)?;
    let y = match n.attr_s("direction")?.as_deref() {
        Some("LEFT") => im.op(OpKind::Mul, &[x, p], name)?,
        Some("RIGHT") => im.op(OpKind::Div, &[x, p], name)?,
        d => return invalid(format!("direction {d:?}")),
    };
    im.bind(n, &[Some(y)])
}

fn select(im: &mut Importer, n: &Binder) -> NResult<()> {
    let (c, a, b) = (im.req(n, 0)?, im.req(n, 1)?, im.req(n, 2)?);
    let y = im.op(OpKind::Select, &[c, a, b], n.name)?;
    im.bind(n, &[Some(y)])
}
