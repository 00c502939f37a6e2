//! Quantization composed from dialect ops: `QuantizeLinear` and
//! `DequantizeLinear` (per tensor, per axis or blocked; integer and FP8
//! targets), `DynamicQuantizeLinear`, and the integer matmuls:
//! `MatMulInteger` and `QLinearMatMul` subtract their zero points in i32
//! and multiply with the reference's exact integer matmul;
//! `QLinearMatMul` then requantizes.

use ipu_reference::{ElementType, OpKind, ReduceKind};

use super::super::importer::{invalid, norm_axis, unsupported, Importer, NResult, NodeErr};
use super::{op, AttrKind as A, Binder, OnnxOp};
use crate::import::ValueId;
use crate::model::{data_type_name, element_type};

pub(super) const OPS: &[OnnxOp] = &[
    op("QuantizeLinear", 10, QUANTIZE, quantize_linear),
    op(
        "DequantizeLinear",
        10,
        &[("axis", A::Int), ("block_size", A::Int)],
        dequantize_linear,
    ),
    op("DynamicQuantizeLinear", 11, &[], dynamic_quantize_linear),
    op("MatMulInteger", 10, &[], Importer::matmul_integer),
    op("QLinearMatMul", 10, &[], Importer::qlinear_matmul),
];

const QUANTIZE: &[(&str, A)] = &[
    ("axis", A::Int),
    ("block_size", A::Int),
    ("output_dtype", A::Int),
    ("saturate", A::Int),
];

/// Which operand a quantization parameter belongs to: A's are per row
/// (the matrix's second-last dimension), B's per column (its last).
#[derive(Clone, Copy)]
enum Side {
    Rows,
    Columns,
}

impl Importer {
    /// An exact i32 accumulator `acc` requantized as onnxruntime does:
    /// times the multiplier `a_scale * b_scale / y_scale` (computed in the
    /// scales' type, left to right), rounded half to even, plus `y_zp`,
    /// saturated to `y_zp`'s type (u8 or i8). The parameters are shaped
    /// to broadcast against `acc`.
    pub(super) fn requantize(
        &mut self,
        acc: ValueId,
        [sa, sb, sy]: [ValueId; 3],
        zy: ValueId,
        name: &str,
    ) -> NResult<ValueId> {
        let st = self.ty(sa).dtype;
        if !st.is_float() || self.ty(sb).dtype != st || self.ty(sy).dtype != st {
            return invalid("the three scales must be floats of one type");
        }
        let to = self.ty(zy).dtype;
        let (lo, hi) = match to {
            ElementType::U8 => (0.0, 255.0),
            ElementType::I8 => (-128.0, 127.0),
            t => return unsupported(format!("a result of type {t} (u8 and i8 are)")),
        };
        let f = self.op(OpKind::Mul, &[sa, sb], name)?;
        let f = self.op(OpKind::Div, &[f, sy], name)?;
        let f = self.cast(f, ElementType::F32, name)?;
        let cf = self.cast(acc, ElementType::F32, name)?;
        let d = self.op(OpKind::Mul, &[cf, f], name)?;
        let d = self.op(OpKind::Round, &[d], name)?;
        let zf = self.cast(zy, ElementType::F32, name)?;
        let d = self.op(OpKind::Add, &[d, zf], name)?;
        let lo = self.scalar(lo, ElementType::F32, name)?;
        let hi = self.scalar(hi, ElementType::F32, name)?;
        let d = self.op(OpKind::Max, &[d, lo], name)?;
        let d = self.op(OpKind::Min, &[d, hi], name)?;
        self.cast(d, to, name)
    }

    /// A zero point or scale shaped to broadcast against its operand
    /// `[..., M, K]` (rows) or `[..., K, N]` (columns): one value, or one
    /// per row / column.
    fn matmul_param(
        &mut self,
        p: ValueId,
        operand: &[usize],
        side: Side,
        name: &str,
    ) -> NResult<ValueId> {
        let count: usize = self.ty(p).shape.iter().product();
        if count == 1 {
            return self.reshape(p, vec![], name);
        }
        let r = operand.len();
        let (dim, shape) = match side {
            Side::Rows if r >= 2 => (operand[r - 2], vec![operand[r - 2], 1]),
            Side::Columns if r >= 2 => (operand[r - 1], vec![operand[r - 1]]),
            _ => return invalid("a per-row or per-column parameter needs a 2-D (or more) operand"),
        };
        if self.ty(p).shape.len() != 1 || count != dim {
            return unsupported(format!(
                "a quantization parameter of shape {:?} for an operand of shape {operand:?} (only one value, or one per {})",
                self.ty(p).shape,
                match side {
                    Side::Rows => "row",
                    Side::Columns => "column",
                }
            ));
        }
        self.reshape(p, shape, name)
    }

    /// `x - zero_point` in i32 (the zero point absent: `x` in i32).
    fn centred(
        &mut self,
        x: ValueId,
        zp: Option<ValueId>,
        side: Side,
        name: &str,
    ) -> NResult<ValueId> {
        let dt = self.ty(x).dtype;
        if !matches!(dt, ElementType::U8 | ElementType::I8) {
            return unsupported(format!("quantized operands of type {dt} (u8 and i8 are)"));
        }
        let shape = self.ty(x).shape.clone();
        let x32 = self.cast(x, ElementType::I32, name)?;
        let Some(z) = zp else {
            return Ok(x32);
        };
        if self.ty(z).dtype != dt {
            return invalid(format!(
                "the zero point is {}, its operand {dt}",
                self.ty(z).dtype
            ));
        }
        let z = self.matmul_param(z, &shape, side, name)?;
        let z32 = self.cast(z, ElementType::I32, name)?;
        self.op(OpKind::Sub, &[x32, z32], name)
    }

    /// `MatMulInteger(A, B, a_zero_point?, b_zero_point?)` -> i32.
    pub(super) fn matmul_integer(&mut self, n: &Binder) -> NResult<()> {
        let name = n.name;
        let (a, b) = (self.req(n, 0)?, self.req(n, 1)?);
        let (za, zb) = (self.input(n, 2)?, self.input(n, 3)?);
        let a = self.centred(a, za, Side::Rows, name)?;
        let b = self.centred(b, zb, Side::Columns, name)?;
        let y = self.op(OpKind::MatMul, &[a, b], name)?;
        self.bind(n, &[Some(y)])
    }

    /// `QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp)`:
    /// the i32 product of the centred operands, times
    /// `a_scale * b_scale / y_scale` (computed in the scales' type, as
    /// ONNX's reference does), plus `y_zp`, rounded half to even and
    /// saturated to `y_zp`'s type.
    pub(super) fn qlinear_matmul(&mut self, n: &Binder) -> NResult<()> {
        let name = n.name;
        let (a, sa, za) = (self.req(n, 0)?, self.req(n, 1)?, self.req(n, 2)?);
        let (b, sb, zb) = (self.req(n, 3)?, self.req(n, 4)?, self.req(n, 5)?);
        let (sy, zy) = (self.req(n, 6)?, self.req(n, 7)?);
        let (ashape, bshape) = (self.ty(a).shape.clone(), self.ty(b).shape.clone());
        let ac = self.centred(a, Some(za), Side::Rows, name)?;
        let bc = self.centred(b, Some(zb), Side::Columns, name)?;
        let c = self.op(OpKind::MatMul, &[ac, bc], name)?;
        let sa = self.matmul_param(sa, &ashape, Side::Rows, name)?;
        let sb = self.matmul_param(sb, &bshape, Side::Columns, name)?;
        let sy = self.matmul_param(sy, &ashape, Side::Rows, name)?;
        let zy = self.matmul_param(zy, &ashape, Side::Rows, name)?;
        let y = self.requantize(c, [sa, sb, sy], zy, name)?;
        self.bind(n, &[Some(y)])
    }
}

/// The operands of `QuantizeLinear`/`DequantizeLinear`: the input, the
/// scale, and the scale and zero point (if given) shaped to broadcast
/// against the input (per tensor, per `axis`, or in blocks).
struct QOperands {
    x: ValueId,
    scale: ValueId,
    zp: Option<ValueId>,
    scale_b: ValueId,
    zp_b: Option<ValueId>,
}

fn q_operands(im: &mut Importer, n: &Binder) -> NResult<QOperands> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let scale = im.req(n, 1)?;
    let zp = im.input(n, 2)?;
    let xshape = im.ty(x).shape.clone();
    let rank = xshape.len();
    let block = n.attr_i("block_size", 0)?;
    let axis = if im.ty(scale).shape.iter().product::<usize>() > 1 || block > 0 {
        Some(norm_axis(n.attr_i("axis", 1)?, rank)?)
    } else {
        None
    };
    let scale_b = im.qparam(scale, &xshape, axis, block, name)?;
    let zp_b = match zp {
        Some(z) => Some(im.qparam(z, &xshape, axis, block, name)?),
        None => None,
    };
    Ok(QOperands {
        x,
        scale,
        zp,
        scale_b,
        zp_b,
    })
}

/// `x / scale + zero_point`, cast (FP8 targets) or rounded and saturated
/// (integer targets) to the output type: `output_dtype`, else the zero
/// point's, else u8.
fn quantize_linear(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let q = q_operands(im, n)?;
    let dt_attr = n.attr_i("output_dtype", 0)? as i32;
    let to = if dt_attr != 0 {
        element_type(dt_attr).ok_or_else(|| {
            NodeErr::Unsupported(format!("output type {}", data_type_name(dt_attr)))
        })?
    } else if let Some(z) = q.zp {
        im.ty(z).dtype
    } else {
        ElementType::U8
    };
    let xf = im.cast(q.x, ElementType::F32, name)?;
    let sf = im.cast(q.scale_b, ElementType::F32, name)?;
    let scaled = im.op(OpKind::Div, &[xf, sf], name)?;
    let y = if to.is_float() {
        quantize_to_float(im, n, scaled, q.zp_b, to)?
    } else {
        quantize_to_int(im, n, scaled, q.zp_b, to)?
    };
    im.bind(n, &[Some(y)])
}

fn quantize_to_float(
    im: &mut Importer,
    n: &Binder,
    mut q: ValueId,
    zp: Option<ValueId>,
    to: ElementType,
) -> NResult<ValueId> {
    let name = n.name;
    // A (zero) float zero point still turns -0 into +0.
    if let Some(z) = zp {
        let zf = im.cast(z, ElementType::F32, name)?;
        q = im.op(OpKind::Add, &[q, zf], name)?;
    }
    let saturate = n.attr_i("saturate", 1)? != 0;
    let cast = OpKind::Cast {
        to,
        saturate,
        scale: 0,
    };
    im.op(cast, &[q], name)
}

fn quantize_to_int(
    im: &mut Importer,
    n: &Binder,
    q: ValueId,
    zp: Option<ValueId>,
    to: ElementType,
) -> NResult<ValueId> {
    let name = n.name;
    let mut q = im.op(OpKind::Round, &[q], name)?;
    if let Some(z) = zp {
        let zf = im.cast(z, ElementType::F32, name)?;
        q = im.op(OpKind::Add, &[q, zf], name)?;
    }
    let (lo, hi) = match to {
        ElementType::U8 => (0.0, 255.0),
        ElementType::I8 => (-128.0, 127.0),
        ElementType::U16 => (0.0, 65535.0),
        ElementType::I16 => (-32768.0, 32767.0),
        ElementType::U4 => (0.0, 15.0),
        ElementType::I4 => (-8.0, 7.0),
        ElementType::U2 => (0.0, 3.0),
        ElementType::I2 => (-2.0, 1.0),
        t => return unsupported(format!("quantize to {t}")),
    };
    let lo = im.scalar(lo, ElementType::F32, name)?;
    let hi = im.scalar(hi, ElementType::F32, name)?;
    let q = im.op(OpKind::Max, &[q, lo], name)?;
    let q = im.op(OpKind::Min, &[q, hi], name)?;
    im.cast(q, to, name)
}

/// `(x - zero_point) * scale`, in the scale's type.
fn dequantize_linear(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let q = q_operands(im, n)?;
    let out_ty = im.ty(q.scale).dtype;
    let mut xf = im.cast(q.x, ElementType::F32, name)?;
    if let Some(z) = q.zp_b {
        let zf = im.cast(z, ElementType::F32, name)?;
        xf = im.op(OpKind::Sub, &[xf, zf], name)?;
    }
    let sf = im.cast(q.scale_b, ElementType::F32, name)?;
    let y = im.op(OpKind::Mul, &[xf, sf], name)?;
    let y = im.cast(y, out_ty, name)?;
    im.bind(n, &[Some(y)])
}

/// u8 quantization with the scale and zero point of the input's range
/// (widened to include 0), as onnxruntime computes them: `scale = (max -
/// min) / 255` (1 when the range is empty), `zero_point =
/// round(clamp(-min / scale, 0, 255))`, `y = clamp(round(x / scale) +
/// zero_point, 0, 255)`, rounding half to even.
fn dynamic_quantize_linear(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let rank = im.ty(x).shape.len();
    let all: Vec<i64> = (0..rank as i64).collect();
    let zero = im.scalar(0.0, ElementType::F32, name)?;
    let one = im.scalar(1.0, ElementType::F32, name)?;
    let q255 = im.scalar(255.0, ElementType::F32, name)?;
    let mx = im.reduce(x, ReduceKind::Max, Some(all.clone()), false, false, name)?;
    let mn = im.reduce(x, ReduceKind::Min, Some(all), false, false, name)?;
    let mx = im.op(OpKind::Max, &[mx, zero], name)?;
    let mn = im.op(OpKind::Min, &[mn, zero], name)?;
    let range = im.op(OpKind::Sub, &[mx, mn], name)?;
    let scale = im.op(OpKind::Div, &[range, q255], name)?;
    let empty = im.op(OpKind::Equal, &[mx, mn], name)?;
    let scale = im.op(OpKind::Select, &[empty, one, scale], name)?;
    let clamp = |im: &mut Importer, v: ValueId| -> NResult<ValueId> {
        let v = im.op(OpKind::Max, &[v, zero], name)?;
        im.op(OpKind::Min, &[v, q255], name)
    };
    let neg = im.op(OpKind::Div, &[mn, scale], name)?;
    let neg = im.op(OpKind::Sub, &[zero, neg], name)?;
    let zpf = clamp(im, neg)?;
    let zpf = im.op(OpKind::Round, &[zpf], name)?;
    let zp = im.cast(zpf, ElementType::U8, name)?;
    let q = im.op(OpKind::Div, &[x, scale], name)?;
    let q = im.op(OpKind::Round, &[q], name)?;
    let q = im.op(OpKind::Add, &[q, zpf], name)?;
    let q = clamp(im, q)?;
    let y = im.cast(q, ElementType::U8, name)?;
    im.bind(n, &[Some(y), Some(scale), Some(zp)])
}
