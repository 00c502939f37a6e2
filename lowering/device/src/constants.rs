//! Compile-time work on `tile.constant`s that device ops read: their values,
//! and their conversion to the type a kernel computes in.

use super::build_op;
use ipu_dialects::nn::{element_type, elements_attr, elements_to_tensor};
use ipu_dialects::tile;
use ipu_ir::{Context, Loc, Op, Type, Value};
use ipu_reference::{evaluate, OpKind, Tensor};

/// The values of `v` when it is a `tile.constant`.
pub fn constant_tensor(cx: &Context, v: Value) -> Option<Tensor> {
    let c = cx
        .defining_op(v)
        .and_then(|c| tile::Constant::cast(cx, c))?;
    elements_to_tensor(cx, c.value(cx)).ok()
}

/// `t` converted to element type `to` by the reference's cast, when the
/// conversion changes none of its values (NaN stays NaN).
fn exact_cast(t: &Tensor, to: ipu_reference::ElementType) -> Option<Tensor> {
    let cast = |x: &Tensor, to| {
        evaluate(
            &OpKind::Cast {
                to,
                saturate: false,
                scale: 0,
            },
            &[x],
        )
        .ok()
    };
    let there = cast(t, to)?;
    let back = cast(&there, t.dtype())?;
    let same = if t.dtype().is_float() {
        t.to_f32_vec()
            .iter()
            .zip(back.to_f32_vec())
            .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
    } else {
        t.to_i64_vec() == back.to_i64_vec()
    };
    same.then_some(there)
}

/// A `tile.constant` (same mapping, not inserted) holding constant `v`'s
/// values as elements of tensor type `like`'s element type, when `v` is a
/// constant of another element type; `Ok(None)` when `v` already has that
/// type or is not a constant. A value the conversion would change is an
/// error.
pub fn converted_to(
    cx: &mut Context,
    v: Value,
    like: Type,
    loc: Loc,
) -> Result<Option<Op>, String> {
    let elem = |cx: &Context, t: Type| cx.tensor_parts(t).map(|(_, e)| e);
    let (Some(from), Some(to)) = (elem(cx, cx.value_type(v)), elem(cx, like)) else {
        return Ok(None);
    };
    if from == to {
        return Ok(None);
    }
    let Some(t) = constant_tensor(cx, v) else {
        return Ok(None);
    };
    let to_ty = element_type(cx, to).ok_or("has an operand of an unknown element type")?;
    let name = |cx: &Context, e| ipu_ir::printer::type_to_string(cx, e);
    let converted = exact_cast(&t, to_ty).ok_or_else(|| {
        format!(
            "has a constant operand of type {} whose values {} does not hold exactly",
            name(cx, cx.value_type(v)),
            name(cx, to)
        )
    })?;
    let value = elements_attr(cx, &converted).ok_or("has a constant its kernel cannot hold")?;
    let c = cx.defining_op(v).ok_or("has a constant without its op")?;
    let mapping = cx
        .get_attr(c, "mapping")
        .ok_or("has a constant without a mapping")?;
    let ty = cx.tensor_type(&cx.value_shape(v), to);
    Ok(Some(build_op(
        cx,
        tile::Constant::NAME,
        &[],
        Some(ty),
        vec![("value", value), ("mapping", mapping)],
        loc,
    )))
}

/// A `tile.constant` of constant `v` broadcast to `shape` under mapping `m`
/// (not inserted), when `v` is a `tile.constant`: a consumer that reads an
/// operand expanded to its own blocks then reads it in place, as loaded
/// with the image, instead of through an exchange of a constant that has
/// no blocks of its own.
pub fn broadcast_to(
    cx: &mut Context,
    v: Value,
    shape: &[i64],
    m: &ipu_dialects::tile::Mapping,
    loc: Loc,
) -> Result<Option<Op>, String> {
    let Some(t) = constant_tensor(cx, v) else {
        return Ok(None);
    };
    let to: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    let expanded = evaluate(&OpKind::Broadcast { shape: to }, &[&t])
        .map_err(|e| format!("cannot broadcast its constant operand: {e}"))?;
    let value = elements_attr(cx, &expanded).ok_or("has a constant its kernel cannot hold")?;
    let ty = cx.tensor_type(
        shape,
        cx.tensor_parts(cx.value_type(v))
            .ok_or("has a constant that is no tensor")?
            .1,
    );
    let mapping = m.to_attr(cx);
    Ok(Some(build_op(
        cx,
        tile::Constant::NAME,
        &[],
        Some(ty),
        vec![("value", value), ("mapping", mapping)],
        loc,
    )))
}
