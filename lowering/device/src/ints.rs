//! Integers and booleans on the device (`kernels/intew.S`): i32 and i64
//! arithmetic, comparisons and select, and the casts that take masks,
//! shapes and indices to the float ops (integer or boolean to boolean,
//! boolean to integer or float, i32 <-> i64). The elementwise family
//! ([`super::map`]), the comparisons and select ([`super::predicate`]) ask
//! here first for any op with an integer or boolean operand or result;
//! casts from i32 and i64 to f32 and f16 stay with `cast.S`.

use ipu_dialects::tile::MapFn;
use ipu_ir::types::Signedness;
use ipu_ir::{Context, Op, TypeKind, Value};
use ipu_isa::kernels::{IntOp, KernelSpec};
use ipu_program::elem::value_elem;

/// The bytes of `v`'s integer elements: 1 for `i1`, 4 for a signless or
/// signed i32, 8 for i64; None for floats and other integers.
pub fn int_bytes(cx: &Context, v: Value) -> Option<usize> {
    let (_, e) = cx.tensor_parts(cx.value_type(v))?;
    match cx.type_kind(e) {
        TypeKind::Integer {
            width: 1,
            signedness: Signedness::Signless,
        } => Some(1),
        TypeKind::Integer { width, signedness } if *signedness != Signedness::Unsigned => {
            match width {
                32 => Some(4),
                64 => Some(8),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `op` has an integer or boolean operand or result.
pub fn has_ints(cx: &Context, op: Op) -> bool {
    let t = |v: Value| {
        cx.tensor_parts(cx.value_type(v))
            .is_some_and(|(_, e)| matches!(cx.type_kind(e), TypeKind::Integer { .. }))
    };
    t(cx.result(op, 0)) || cx.operands(op).iter().any(|&v| t(v))
}

fn type_name(cx: &Context, v: Value) -> String {
    ipu_ir::printer::type_to_string(cx, cx.value_type(v))
}

/// The integer op of an elementwise function.
fn int_op(f: MapFn) -> Option<IntOp> {
    Some(match f {
        MapFn::Add => IntOp::Add,
        MapFn::Sub => IntOp::Sub,
        MapFn::Mul => IntOp::Mul,
        MapFn::Div => IntOp::Div,
        MapFn::Max => IntOp::Max,
        MapFn::Min => IntOp::Min,
        MapFn::Pow => IntOp::Pow,
        MapFn::Equal => IntOp::Eq,
        MapFn::Less => IntOp::Lt,
        MapFn::Greater => IntOp::Gt,
        _ => return None,
    })
}

/// The `intew` kernel of a cast from `from` to `to` over `n` elements,
/// None when `cast.S` takes it (or nothing integer is involved).
fn cast_kernel(
    cx: &Context,
    from: Value,
    to: Value,
    n: usize,
) -> Option<Result<KernelSpec, String>> {
    use ipu_isa::kernels::ElemType::{F16, F32};
    let (fi, ti) = (int_bytes(cx, from), int_bytes(cx, to));
    let spec = |op, w| Some(Ok(KernelSpec::intew(op, w, n)));
    match (fi, ti) {
        (Some(w), Some(1)) => spec(IntOp::ToBool, w),
        (Some(1), Some(w)) => spec(IntOp::FromBool, w),
        (Some(4), Some(8)) => spec(IntOp::Widen, 4),
        (Some(8), Some(4)) => spec(IntOp::Narrow, 8),
        (Some(_), Some(_)) => Some(Err(format!(
            "casts {} to its own type (canonicalize drops it)",
            type_name(cx, from)
        ))),
        (Some(1), None) => match value_elem(cx, to) {
            Some(F32) => spec(IntOp::BoolToFloat, 4),
            Some(F16) => spec(IntOp::BoolToFloat, 2),
            _ => Some(Err(format!(
                "casts i1 to {}, but booleans go to f32, f16, i32 and i64 only",
                type_name(cx, to)
            ))),
        },
        (Some(_), None) => None,
        (None, Some(w)) if value_elem(cx, from) == Some(F32) => match w {
            1 => spec(IntOp::F32ToBool, 4),
            _ => spec(IntOp::FromF32, w),
        },
        (None, Some(_)) => Some(Err(format!(
            "casts {} to {}: casts to integers have a kernel from f32 only (cast to f32 first)",
            type_name(cx, from),
            type_name(cx, to)
        ))),
        (None, None) => None,
    }
}

/// The `intew` kernel of the elementwise op, comparison or select `op`
/// computing `f` (`None` for `nn.select`) over `n` elements of its result,
/// or None when nothing integer is involved (or `cast.S` takes it).
pub fn kernel(
    cx: &Context,
    op: Op,
    f: Option<MapFn>,
    n: usize,
) -> Option<Result<KernelSpec, String>> {
    if !has_ints(cx, op) {
        return None;
    }
    let ops = cx.operands(op);
    if f == Some(MapFn::Cast) {
        return cast_kernel(cx, ops[0], cx.result(op, 0), n);
    }
    let result = cx.result(op, 0);
    // The integers the op computes on: select's values, else its operands.
    let values = if f.is_none() { &ops[1..] } else { ops };
    let Some(&first) = values.first() else {
        return Some(Err("has no operands".into()));
    };
    // Booleans compare and select here; their logic is `compare.S`'s.
    let boolean_here = matches!(f, None | Some(MapFn::Equal | MapFn::Less | MapFn::Greater));
    let Some(w) = int_bytes(cx, first).filter(|&w| w > 1 || boolean_here) else {
        if int_bytes(cx, first).is_some() || value_elem(cx, first).is_some() {
            // Booleans, or floats with a boolean result: the float kernels'.
            return None;
        }
        let e = cx.tensor_parts(cx.value_type(first)).map(|(_, e)| e);
        let e = e.map_or_else(
            || type_name(cx, first),
            |e| ipu_ir::printer::type_to_string(cx, e),
        );
        return Some(Err(format!(
            "on {e} elements has no kernel (f32, f16, i32 and i64 do)"
        )));
    };
    if let Some(&v) = values.iter().find(|&&v| int_bytes(cx, v) != Some(w)) {
        return Some(Err(format!(
            "mixes {} with {}: the integer kernels take one type",
            type_name(cx, first),
            type_name(cx, v)
        )));
    }
    let iop = match f {
        None => IntOp::Select,
        Some(f) => match int_op(f) {
            Some(o) => o,
            None => {
                return Some(Err(format!(
                    "'{}' on {} has no integer kernel",
                    f.name(),
                    type_name(cx, result)
                )))
            }
        },
    };
    Some(Ok(KernelSpec::intew(iop, w, n)))
}
