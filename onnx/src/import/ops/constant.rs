//! Ops whose result is known at import: constants, `ConstantOfShape`,
//! `Shape` and `Size` (every shape is static), `Range` of constant bounds,
//! `EyeLike`.

use ipu_reference::{evaluate, ElementType, OpKind, Tensor};

use super::super::importer::{check_alloc, invalid, unsupported, Importer, NResult, NodeErr};
use super::{op, AttrKind as A, Binder, OnnxOp};
use crate::model::{data_type_name, element_type, Attribute};

pub(super) const OPS: &[OnnxOp] = &[
    op("Constant", 1, CONSTANT, constant),
    op(
        "ConstantOfShape",
        9,
        &[("value", A::Tensor)],
        constant_of_shape,
    ),
    op("Shape", 1, &[("start", A::Int), ("end", A::Int)], shape),
    op("Size", 1, &[], size),
    op("Range", 11, &[], range),
    op("EyeLike", 9, &[("dtype", A::Int), ("k", A::Int)], eye_like),
];

/// The value forms of `Constant` that map (not strings or sparse tensors).
const CONSTANT: &[(&str, A)] = &[
    ("value", A::Tensor),
    ("value_float", A::Float),
    ("value_floats", A::Floats),
    ("value_int", A::Int),
    ("value_ints", A::Ints),
];

fn constant(im: &mut Importer, n: &Binder) -> NResult<()> {
    let t = if let Some(Attribute::Tensor(t)) = n.attr("value")? {
        t.clone()
    } else if let Some(Attribute::Float(v)) = n.attr("value_float")? {
        Tensor::scalar_f32(*v)
    } else if let Some(Attribute::Floats(v)) = n.attr("value_floats")? {
        Tensor::from_f32(vec![v.len()], ElementType::F32, v.clone())?
    } else if let Some(Attribute::Int(v)) = n.attr("value_int")? {
        Tensor::scalar_i64(*v)
    } else if let Some(Attribute::Ints(v)) = n.attr("value_ints")? {
        Tensor::from_i64(vec![v.len()], ElementType::I64, v.clone())?
    } else {
        let kinds: Vec<&String> = n.attributes.keys().collect();
        return unsupported(format!("Constant with attributes {kinds:?}"));
    };
    let id = im.constant(t, n.name);
    im.bind(n, &[Some(id)])
}

fn constant_of_shape(im: &mut Importer, n: &Binder) -> NResult<()> {
    let s = im.req(n, 0)?;
    let dims = im.static_ints(s)?;
    if dims.iter().any(|&d| d < 0) {
        return invalid("negative dimension");
    }
    let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    check_alloc(&shape, ElementType::I64)?;
    let value = match n.attr("value")? {
        Some(Attribute::Tensor(t)) if t.numel() == 1 => t.clone(),
        None => Tensor::scalar_f32(0.0),
        Some(_) => return invalid("value must be a one-element tensor"),
    };
    let v = value.reshaped(vec![])?;
    let t = evaluate(&OpKind::Broadcast { shape }, &[&v])?;
    let id = im.constant(t, n.name);
    im.bind(n, &[Some(id)])
}

fn shape(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let shape = im.ty(x).shape.clone();
    let r = shape.len() as i64;
    let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
    let s = clampi(n.attr_i("start", 0)?);
    let e = clampi(n.attr_i("end", r)?);
    let dims: Vec<i64> = if s < e {
        shape[s..e].iter().map(|&d| d as i64).collect()
    } else {
        vec![]
    };
    let t = Tensor::from_i64(vec![dims.len()], ElementType::I64, dims)?;
    let id = im.constant(t, n.name);
    im.bind(n, &[Some(id)])
}

fn size(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let t = Tensor::scalar_i64(im.ty(x).numel() as i64);
    let id = im.constant(t, n.name);
    im.bind(n, &[Some(id)])
}

fn range(im: &mut Importer, n: &Binder) -> NResult<()> {
    let (a, b, c) = (im.req(n, 0)?, im.req(n, 1)?, im.req(n, 2)?);
    let (ta, tb, tc) = (
        im.static_tensor(a)?.clone(),
        im.static_tensor(b)?.clone(),
        im.static_tensor(c)?.clone(),
    );
    if ta.numel() != 1 || tb.numel() != 1 || tc.numel() != 1 {
        return invalid("start, limit and delta must be scalars");
    }
    let dt = ta.dtype();
    let t = if dt.is_float() {
        let (s, l, d) = (
            ta.to_f32_vec()[0] as f64,
            tb.to_f32_vec()[0] as f64,
            tc.to_f32_vec()[0] as f64,
        );
        let cnt = ((l - s) / d).ceil().max(0.0);
        if !cnt.is_finite() || cnt > 1e8 {
            return invalid("range too large");
        }
        let v = (0..cnt as usize)
            .map(|i| (s + i as f64 * d) as f32)
            .collect::<Vec<_>>();
        Tensor::from_f32(vec![v.len()], dt, v)?
    } else {
        let (s, l, d) = (ta.to_i64_vec()[0], tb.to_i64_vec()[0], tc.to_i64_vec()[0]);
        if d == 0 {
            return invalid("delta 0");
        }
        let cnt = ((l as i128 - s as i128) + d as i128 - d.signum() as i128) / d as i128;
        if cnt > 100_000_000 {
            return invalid("range too large");
        }
        let v: Vec<i64> = (0..cnt.max(0) as i64).map(|i| s + i * d).collect();
        Tensor::from_i64(vec![v.len()], dt, v)?
    };
    let id = im.constant(t, n.name);
    im.bind(n, &[Some(id)])
}

fn eye_like(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let s = im.ty(x).shape.clone();
    if s.len() != 2 {
        return invalid("input must be 2-D");
    }
    let dt = match n.attr_i("dtype", 0)? as i32 {
        0 => im.ty(x).dtype,
        d => element_type(d)
            .ok_or_else(|| NodeErr::Unsupported(format!("dtype {}", data_type_name(d))))?,
    };
    let k = n.attr_i("k", 0)?;
    check_alloc(&s, ElementType::I64)?;
    let v: Vec<i64> = (0..s[0] * s[1])
        .map(|e| ((e % s[1]) as i64 - (e / s[1]) as i64 == k) as i64)
        .collect();
    let t = Tensor::from_i64(s, dt, v)?;
    let id = im.constant(t, n.name);
    im.bind(n, &[Some(id)])
}
