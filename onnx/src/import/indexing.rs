//! Index ops composed from dialect ops: `GatherND` as one `gather` of the
//! data flattened over its indexed dimensions, and `NonZero` of a tensor
//! known at import.

use ipu_reference::{ElementType, OpKind, ReduceKind, Tensor};

use super::importer::{attr_i, check_alloc, invalid, numel, unsupported, Importer, NResult};
use crate::model::Node;

impl Importer {
    /// `GatherND(data, indices, batch_dims = b)`: the last dimension of
    /// `indices` (k) indexes data dimensions `b..b+k`. Each index tuple
    /// becomes one linear index into the data reshaped to
    /// `[prod(dims 0..b+k), dims b+k..]` (negative indices wrapped, the
    /// batch's offset added), then one `gather` along axis 0. A tuple with
    /// an index out of range gets an index the gather refuses, so the
    /// error is not lost (and is reported at import when the indices are
    /// known).
    pub(super) fn gather_nd(&mut self, n: &Node, name: &str) -> NResult<()> {
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
        let b = attr_i(n, "batch_dims", 0)?;
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
    pub(super) fn non_zero(&mut self, n: &Node, name: &str) -> NResult<()> {
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
