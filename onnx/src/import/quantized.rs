//! Integer matmuls composed from dialect ops: `MatMulInteger` and
//! `QLinearMatMul` subtract their zero points in i32 and multiply with the
//! reference's exact integer matmul; `QLinearMatMul` then requantizes.

use ipu_reference::{ElementType, OpKind};

use super::importer::{invalid, unsupported, Importer, NResult};
use super::ValueId;
use crate::model::Node;

/// Which operand a quantization parameter belongs to: A's are per row
/// (the matrix's second-last dimension), B's per column (its last).
#[derive(Clone, Copy)]
enum Side {
    Rows,
    Columns,
}

impl Importer {
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
    pub(super) fn matmul_integer(&mut self, n: &Node, name: &str) -> NResult<()> {
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
    pub(super) fn qlinear_matmul(&mut self, n: &Node, name: &str) -> NResult<()> {
        let (a, sa, za) = (self.req(n, 0)?, self.req(n, 1)?, self.req(n, 2)?);
        let (b, sb, zb) = (self.req(n, 3)?, self.req(n, 4)?, self.req(n, 5)?);
        let (sy, zy) = (self.req(n, 6)?, self.req(n, 7)?);
        let (ashape, bshape) = (self.ty(a).shape.clone(), self.ty(b).shape.clone());
        let st = self.ty(sa).dtype;
        if !st.is_float() || self.ty(sb).dtype != st || self.ty(sy).dtype != st {
            return invalid("the three scales must be floats of one type");
        }
        let ac = self.centred(a, Some(za), Side::Rows, name)?;
        let bc = self.centred(b, Some(zb), Side::Columns, name)?;
        let c = self.op(OpKind::MatMul, &[ac, bc], name)?;
        let sa = self.matmul_param(sa, &ashape, Side::Rows, name)?;
        let sb = self.matmul_param(sb, &bshape, Side::Columns, name)?;
        let sy = self.matmul_param(sy, &ashape, Side::Rows, name)?;
        let f = self.op(OpKind::Mul, &[sa, sb], name)?;
        let f = self.op(OpKind::Div, &[f, sy], name)?;
        let f = self.cast(f, ElementType::F32, name)?;
        let cf = self.cast(c, ElementType::F32, name)?;
        let d = self.op(OpKind::Mul, &[cf, f], name)?;
        let to = self.ty(zy).dtype;
        let (lo, hi) = match to {
            ElementType::U8 => (0.0, 255.0),
            ElementType::I8 => (-128.0, 127.0),
            t => return unsupported(format!("a result of type {t} (u8 and i8 are)")),
        };
        let zy = self.matmul_param(zy, &ashape, Side::Rows, name)?;
        let zf = self.cast(zy, ElementType::F32, name)?;
        let d = self.op(OpKind::Add, &[d, zf], name)?;
        let d = self.op(OpKind::Round, &[d], name)?;
        let lo = self.scalar(lo, ElementType::F32, name)?;
        let hi = self.scalar(hi, ElementType::F32, name)?;
        let d = self.op(OpKind::Max, &[d, lo], name)?;
        let d = self.op(OpKind::Min, &[d, hi], name)?;
        let y = self.cast(d, to, name)?;
        self.bind(n, &[Some(y)])
    }
}
