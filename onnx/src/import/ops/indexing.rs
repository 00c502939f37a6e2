//! Indexing: gathers and scatters, `OneHot`, and the ops composed from
//! dialect ops: `GatherND` as one `gather` of the data flattened over its
//! indexed dimensions, `TensorScatter` (a KV-cache update) as a scatter at
//! computed positions, and `NonZero` of a tensor known at import.

use ipu_reference::{ElementType, OpKind, ReduceKind, ScatterReduction, Tensor};

use super::super::importer::{
    check_alloc, invalid, norm_axis, numel, unsupported, Importer, NResult,
};
use super::{binary, op, AttrKind as A, Binder, OnnxOp};
use crate::import::ValueId;

pub(super) const OPS: &[OnnxOp] = &[
    op("Gather", 1, &[("axis", A::Int)], |im, n| {
        gather(im, n, false)
    }),
    op("GatherElements", 11, &[("axis", A::Int)], |im, n| {
        gather(im, n, true)
    }),
    op(
        "GatherND",
        11,
        &[("batch_dims", A::Int)],
        Importer::gather_nd,
    ),
    op("Scatter", 9, &[("axis", A::Int)], |im, n| {
        scatter(im, n, Scatter::Elements, false)
    }),
    op("ScatterElements", 11, SCATTER, |im, n| {
        scatter(im, n, Scatter::Elements, true)
    }),
    op("ScatterND", 11, &[("reduction", A::String)], |im, n| {
        scatter(im, n, Scatter::Nd, true)
    }),
    op(
        "TensorScatter",
        24,
        &[("axis", A::Int), ("mode", A::String)],
        tensor_scatter,
    ),
    op("OneHot", 9, &[("axis", A::Int)], one_hot),
    op("NonZero", 9, &[], Importer::non_zero),
];

const SCATTER: &[(&str, A)] = &[("axis", A::Int), ("reduction", A::String)];

/// Which scatter: along an axis (`ScatterElements`) or by index tuples.
#[derive(Clone, Copy, PartialEq)]
enum Scatter {
    Elements,
    Nd,
}

/// `Gather` or `GatherElements` (`elements`) along `axis`.
fn gather(im: &mut Importer, n: &Binder, elements: bool) -> NResult<()> {
    let x = im.req(n, 0)?;
    let rank = im.ty(x).shape.len();
    let axis = norm_axis(n.attr_i("axis", 0)?, rank)?;
    if elements {
        binary(im, n, OpKind::GatherElements { axis })
    } else {
        binary(im, n, OpKind::Gather { axis })
    }
}

/// A scatter of input 2 into input 0 at input 1; `Scatter` (opset 9) has
/// no `reduction` attribute.
fn scatter(im: &mut Importer, n: &Binder, kind: Scatter, has_reduction: bool) -> NResult<()> {
    let x = im.req(n, 0)?;
    let rank = im.ty(x).shape.len();
    let reduction = if has_reduction {
        n.attr_s("reduction")?
    } else {
        None
    };
    let reduction = match reduction.as_deref() {
        None | Some("none") => ScatterReduction::None,
        Some("add") => ScatterReduction::Add,
        Some("mul") => ScatterReduction::Mul,
        Some("max") => ScatterReduction::Max,
        Some("min") => ScatterReduction::Min,
        Some(r) => return unsupported(format!("reduction `{r}`")),
    };
    let op = match kind {
        Scatter::Nd => OpKind::ScatterNd { reduction },
        Scatter::Elements => OpKind::ScatterElements {
            axis: norm_axis(n.attr_i("axis", 0)?, rank)?,
            reduction,
        },
    };
    let (i, u) = (im.req(n, 1)?, im.req(n, 2)?);
    let y = im.op(op, &[x, i, u], n.name)?;
    im.bind(n, &[Some(y)])
}

/// `TensorScatter(past, update, write_indices?)`: `update` written into
/// the cache `past` along `axis` from each batch's write index (wrapping
/// in `circular` mode).
fn tensor_scatter(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let past = im.req(n, 0)?;
    let upd = im.req(n, 1)?;
    let ps = im.ty(past).shape.clone();
    let us = im.ty(upd).shape.clone();
    let rank = ps.len();
    if rank < 2 || us.len() != rank {
        return invalid("cache and update must have one rank >= 2");
    }
    let axis = norm_axis(n.attr_i("axis", -2)?, rank)?;
    if axis == 0 {
        return invalid("axis must not be the batch axis");
    }
    let circular = match n.attr_s("mode")?.as_deref() {
        None | Some("linear") => false,
        Some("circular") => true,
        Some(m) => return unsupported(format!("mode `{m}`")),
    };
    let mut bshape = vec![1usize; rank];
    bshape[0] = ps[0];
    let start = match im.input(n, 2)? {
        Some(w) => {
            let w = im.cast(w, ElementType::I64, name)?;
            im.reshape(w, bshape, name)?
        }
        None => im.scalar(0.0, ElementType::I64, name)?,
    };
    let iota = im.iota(&us, axis, name)?;
    let mut idx = im.op(OpKind::Add, &[start, iota], name)?;
    if circular {
        let m = im.scalar(ps[axis] as f32, ElementType::I64, name)?;
        idx = im.op(OpKind::Mod { fmod: false }, &[idx, m], name)?;
    }
    let idx = im.op(OpKind::Broadcast { shape: us.clone() }, &[idx], name)?;
    let scatter = OpKind::ScatterElements {
        axis,
        reduction: ScatterReduction::None,
    };
    let y = im.op(scatter, &[past, idx, upd], name)?;
    im.bind(n, &[Some(y)])
}

/// `OneHot(indices, depth, [off, on])`: `on` where the position along the
/// new `axis` equals the (wrapped) index, else `off`.
fn one_hot(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let idx = im.req(n, 0)?;
    let depth = im.req(n, 1)?;
    let values = im.req(n, 2)?;
    let d = im.static_tensor(depth)?.to_f32_vec();
    let depth = match d.as_slice() {
        [v] if *v >= 0.0 => *v as i64,
        _ => return invalid("depth must be a non-negative scalar"),
    };
    let ishape = im.ty(idx).shape.clone();
    let r = ishape.len() + 1;
    let axis = norm_axis(n.attr_i("axis", -1)?, r)?;
    let idx = im.cast(idx, ElementType::I64, name)?;
    let zero = im.scalar(0.0, ElementType::I64, name)?;
    let dep = im.scalar(depth as f32, ElementType::I64, name)?;
    let neg = im.op(OpKind::Less, &[idx, zero], name)?;
    let wrapped = im.op(OpKind::Add, &[idx, dep], name)?;
    let idx = im.op(OpKind::Select, &[neg, wrapped, idx], name)?;
    let mut ushape = ishape.clone();
    ushape.insert(axis, 1);
    let idx = im.reshape(idx, ushape.clone(), name)?;
    let mut oshape = ishape;
    oshape.insert(axis, depth as usize);
    check_alloc(&oshape, ElementType::I64)?;
    let iota = im.iota(&oshape, axis, name)?;
    let hit = im.op(OpKind::Equal, &[iota, idx], name)?;
    let vt = im.ty(values).clone();
    if vt.numel() != 2 {
        return invalid("values must have two elements");
    }
    let flat = im.reshape(values, vec![2], name)?;
    let element = |im: &mut Importer, i: i64| -> NResult<ValueId> {
        let slice = OpKind::Slice {
            starts: vec![i],
            ends: vec![i + 1],
            steps: vec![1],
        };
        let v = im.op(slice, &[flat], name)?;
        im.reshape(v, vec![], name)
    };
    let off = element(im, 0)?;
    let on = element(im, 1)?;
    let y = im.op(OpKind::Select, &[hit, on, off], name)?;
    im.bind(n, &[Some(y)])
}

impl Importer {
    /// `GatherND(data, indices, batch_dims = b)`: the last dimension of
    /// `indices` (k) indexes data dimensions `b..b+k`. Each index tuple
    /// becomes one linear index into the data reshaped to
    /// `[prod(dims 0..b+k), dims b+k..]` (negative indices wrapped, the
    /// batch's offset added), then one `gather` along axis 0. A tuple with
    /// an index out of range gets an index the gather refuses, so the
    /// error is not lost (and is reported at import when the indices are
    /// known).
    pub(super) fn gather_nd(&mut self, n: &Binder) -> NResult<()> {
        let name = n.name;
        let data = self.req(n, 0)?;
        let indices = self.req(n, 1)?;
        let ds = self.ty(data).shape.clone();
        let is = self.ty(indices).shape.clone();
        let (r, q) = (ds.len(), is.len());
        if !self.ty(indices).dtype.is_integer() {
            return invalid(format!(
                "indices must be integers, got {}",
                self.ty(indices).dtype
            ));
        }
        let b = n.attr_i("batch_dims", 0)?;
        if b < 0 || b as usize >= q.min(r) {
            return invalid(format!(
                "batch_dims {b} must be in [0, min(rank of data {r}, rank of indices {q}))"
            ));
        }
        let b = b as usize;
        let k = is[q - 1];
        if k < 1 || k > r - b {
            return invalid(format!(
                "the indices' last dimension {k} must be in [1, {}] (data rank {r} - batch_dims {b})",
                r - b
            ));
        }
        if ds[..b] != is[..b] {
            return invalid(format!(
                "the batch dimensions differ: data {:?}, indices {:?}",
                &ds[..b],
                &is[..b]
            ));
        }
        let indexed = ds[b..b + k].to_vec();
        let cells = numel(&indexed);
        let rows = numel(&ds[..b]) * cells;
        if let Some(t) = self
            .consts
            .get(&indices)
            .or_else(|| self.special.get(&indices))
        {
            for (i, tuple) in t.to_i64_vec().chunks(k).enumerate() {
                for (j, (&v, &d)) in tuple.iter().zip(&indexed).enumerate() {
                    if v < -(d as i64) || v >= d as i64 {
                        return invalid(format!(
                            "index {v} (tuple {i}, position {j}) is out of range for dimension {} of size {d}",
                            b + j
                        ));
                    }
                }
            }
        }
        let mut flat_shape = vec![rows];
        flat_shape.extend_from_slice(&ds[b + k..]);
        let flat = self.reshape(data, flat_shape, name)?;
        let i64_row = |s: &mut Self, v: Vec<i64>| -> NResult<usize> {
            let t = Tensor::from_i64(vec![v.len()], ElementType::I64, v)?;
            let c = s.fresh_name(name);
            Ok(s.constant(t, &c))
        };
        let dims = i64_row(self, indexed.iter().map(|&d| d as i64).collect())?;
        let strides = i64_row(
            self,
            (0..k).map(|j| numel(&indexed[j + 1..]) as i64).collect(),
        )?;
        let idx = self.cast(indices, ElementType::I64, name)?;
        let zero = self.scalar(0.0, ElementType::I64, name)?;
        let negative = self.op(OpKind::Less, &[idx, zero], name)?;
        let wrapped = self.op(OpKind::Add, &[idx, dims], name)?;
        let idx = self.op(OpKind::Select, &[negative, wrapped, idx], name)?;
        // Out of range after wrapping: below 0 or not below the dimension.
        let low = self.op(OpKind::Less, &[idx, zero], name)?;
        let high = self.op(OpKind::Less, &[idx, dims], name)?;
        let high = self.op(OpKind::Not, &[high], name)?;
        let bad = self.op(OpKind::Or, &[low, high], name)?;
        let bad = self.cast(bad, ElementType::I64, name)?;
        let bad = self.reduce(
            bad,
            ReduceKind::Max,
            Some(vec![q as i64 - 1]),
            false,
            false,
            name,
        )?;
        let bad = self.op(OpKind::Greater, &[bad, zero], name)?;
        let scaled = self.op(OpKind::Mul, &[idx, strides], name)?;
        let mut lin = self.reduce(
            scaled,
            ReduceKind::Sum,
            Some(vec![q as i64 - 1]),
            false,
            false,
            name,
        )?;
        if b > 0 {
            // Each batch's first row: its linear batch index times `cells`.
            let mut oshape = is[..b].to_vec();
            oshape.resize(q - 1, 1);
            check_alloc(&oshape, ElementType::I64)?;
            let nb = numel(&is[..b]) as i64;
            let offs = (0..nb).map(|i| i * cells as i64).collect();
            let t = Tensor::from_i64(oshape, ElementType::I64, offs)?;
            let c = self.fresh_name(name);
            let offs = self.constant(t, &c);
            lin = self.op(OpKind::Add, &[lin, offs], name)?;
        }
        let c = self.fresh_name(name);
        let refused = self.constant(Tensor::scalar_i64(-(rows as i64) - 1), &c);
        let lin = self.op(OpKind::Select, &[bad, refused, lin], name)?;
        let y = self.op(OpKind::Gather { axis: 0 }, &[flat, lin], name)?;
        self.bind(n, &[Some(y)])
    }

    /// `NonZero(x)`: the `[rank, count]` indices (i64, row-major order) of
    /// the non-zero elements. The result's shape depends on the values, so
    /// `x` must be known at import; the result is a constant.
    pub(super) fn non_zero(&mut self, n: &Binder) -> NResult<()> {
        let name = n.name;
        let x = self.req(n, 0)?;
        let Some(t) = self.consts.get(&x).or_else(|| self.special.get(&x)) else {
            return unsupported(format!(
                "NonZero of `{}`, which is not known at import: its result's shape depends on the values",
                self.g.values[x].name
            ));
        };
        let shape = t.shape().to_vec();
        if shape.is_empty() {
            return invalid("NonZero of a scalar (rank 0) has no indices to give");
        }
        let nonzero: Vec<usize> = if t.dtype().is_float() {
            let v = t.to_f32_vec();
            (0..v.len()).filter(|&i| v[i] != 0.0).collect()
        } else {
            let v = t.to_i64_vec();
            (0..v.len()).filter(|&i| v[i] != 0).collect()
        };
        let rank = shape.len();
        let out_shape = vec![rank, nonzero.len()];
        check_alloc(&out_shape, ElementType::I64)?;
        let mut out = vec![0i64; rank * nonzero.len()];
        for (c, &flat) in nonzero.iter().enumerate() {
            let mut rest = flat;
            for d in (0..rank).rev() {
                out[d * nonzero.len() + c] = (rest % shape[d]) as i64;
                rest /= shape[d];
            }
        }
        let t = Tensor::from_i64(out_shape, ElementType::I64, out)?;
        let y = self.constant(t, name);
        self.bind(n, &[Some(y)])
    }
}
