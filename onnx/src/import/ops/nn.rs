//! Matrix products and the row ops of networks: `MatMul`, `Gemm`,
//! `Softmax`/`LogSoftmax`/`Hardmax` (before opset 13 over the input
//! coerced to 2-D at `axis`, from 13 along `axis`), and `Dropout` at
//! inference.

use ipu_reference::{ElementType, OpKind, Tensor};

use super::super::importer::{
    check_alloc, invalid, norm_axis, numel, unsupported, Importer, NResult,
};
use super::{binary, op, AttrKind as A, Binder, OnnxOp};

const AXIS: &[(&str, A)] = &[("axis", A::Int)];
const GEMM: &[(&str, A)] = &[
    ("alpha", A::Float),
    ("beta", A::Float),
    ("transA", A::Int),
    ("transB", A::Int),
];

pub(super) const OPS: &[OnnxOp] = &[
    op("MatMul", 1, &[], |im, n| binary(im, n, OpKind::MatMul)),
    op("Gemm", 1, GEMM, gemm),
    op("Softmax", 1, AXIS, |im, n| softmax_1(im, n, false)).until(12),
    op("Softmax", 13, AXIS, |im, n| softmax_13(im, n, false)),
    op("LogSoftmax", 1, AXIS, |im, n| softmax_1(im, n, true)).until(12),
    op("LogSoftmax", 13, AXIS, |im, n| softmax_13(im, n, true)),
    op("Hardmax", 1, AXIS, |im, n| hardmax(im, n, false)).until(12),
    op("Hardmax", 13, AXIS, |im, n| hardmax(im, n, true)),
    op("Dropout", 1, &[], dropout),
];

/// `alpha * op(A) @ op(B) + beta * C`, `op` a transpose where asked.
fn gemm(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let (mut a, mut b) = (im.req(n, 0)?, im.req(n, 1)?);
    let c = im.input(n, 2)?;
    let alpha = n.attr_f("alpha", 1.0)?;
    let beta = n.attr_f("beta", 1.0)?;
    for (v, flag) in [(&mut a, "transA"), (&mut b, "transB")] {
        if n.attr_i(flag, 0)? != 0 {
            if im.ty(*v).shape.len() != 2 {
                return invalid("Gemm operands must be 2-D");
            }
            *v = im.op(OpKind::Transpose { perm: vec![1, 0] }, &[*v], name)?;
        }
    }
    let mut y = im.op(OpKind::MatMul, &[a, b], name)?;
    let dt = im.ty(y).dtype;
    if alpha != 1.0 {
        let s = im.scalar(alpha, dt, name)?;
        y = im.op(OpKind::Mul, &[y, s], name)?;
    }
    if let Some(mut c) = c {
        if beta != 1.0 {
            let s = im.scalar(beta, dt, name)?;
            c = im.op(OpKind::Mul, &[c, s], name)?;
        }
        y = im.op(OpKind::Add, &[y, c], name)?;
    }
    im.bind(n, &[Some(y)])
}

fn softmax_kind(log: bool, axis: usize) -> OpKind {
    if log {
        OpKind::LogSoftmax { axis }
    } else {
        OpKind::Softmax { axis }
    }
}

/// The `axis` of the opset < 13 row ops: where the input is coerced to
/// 2-D (`0..=rank`).
fn coerced_axis(n: &Binder, rank: usize) -> NResult<usize> {
    let a = n.attr_i("axis", 1)?;
    let a = if a < 0 { a + rank as i64 } else { a };
    if a < 0 || a > rank as i64 {
        return invalid(format!("axis {a} out of range"));
    }
    Ok(a as usize)
}

/// Opset < 13: coerce to 2-D at `axis`, normalize rows.
fn softmax_1(im: &mut Importer, n: &Binder, log: bool) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let shape = im.ty(x).shape.clone();
    let rank = shape.len();
    let axis = if rank == 0 { 0 } else { coerced_axis(n, rank)? };
    let flat = vec![numel(&shape[..axis]), numel(&shape[axis..])];
    let f = im.reshape(x, flat, name)?;
    let s = im.op(softmax_kind(log, 1), &[f], name)?;
    let y = im.reshape(s, shape, name)?;
    im.bind(n, &[Some(y)])
}

fn softmax_13(im: &mut Importer, n: &Binder, log: bool) -> NResult<()> {
    let x = im.req(n, 0)?;
    let rank = im.ty(x).shape.len();
    let axis = norm_axis(n.attr_i("axis", -1)?, rank)?;
    let y = im.op(softmax_kind(log, axis), &[x], n.name)?;
    im.bind(n, &[Some(y)])
}

/// 1 at the (first) maximum along the axis, 0 elsewhere; before opset 13
/// (`!opset13`) over the input coerced to 2-D.
fn hardmax(im: &mut Importer, n: &Binder, opset13: bool) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let ty = im.ty(x).clone();
    let rank = ty.shape.len();
    let (src, axis) = if opset13 {
        (x, norm_axis(n.attr_i("axis", -1)?, rank)?)
    } else {
        let a = coerced_axis(n, rank)?;
        let flat = vec![numel(&ty.shape[..a]), numel(&ty.shape[a..])];
        (im.reshape(x, flat, name)?, 1)
    };
    let sshape = im.ty(src).shape.clone();
    let argmax = OpKind::ArgMax {
        axis,
        keepdims: true,
        select_last_index: false,
    };
    let am = im.op(argmax, &[src], name)?;
    let iota = im.iota(&sshape, axis, name)?;
    let eq = im.op(OpKind::Equal, &[iota, am], name)?;
    let y = im.cast(eq, ty.dtype, name)?;
    let y = im.reshape(y, ty.shape, name)?;
    im.bind(n, &[Some(y)])
}

/// Inference: the input, and an all-true mask if asked for.
fn dropout(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    if let Some(tm) = im.input(n, 2)? {
        if im.static_ints(tm)?.first().copied().unwrap_or(0) != 0 {
            return unsupported("training mode");
        }
    }
    let mut outs = vec![Some(x), None];
    if Importer::wants_output(n, 1) {
        let shape = im.ty(x).shape.clone();
        check_alloc(&shape, ElementType::I1)?;
        let t = Tensor::from_bool(shape.clone(), vec![true; numel(&shape)])?;
        outs[1] = Some(im.constant(t, n.name));
    }
    im.bind(n, &outs)
}
