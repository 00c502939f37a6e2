//! `nn.resize` as `nn` ops the device has: one axis after another, each a
//! weighted sum of gathers by constant indices.
//!
//! A resize is separable: each result element is the product over the
//! axes of their taps' weights, summed over every combination of taps
//! ([`ipu_reference::resize_taps`], the reference's own taps). So each
//! resized axis in turn is `sum_j gather(v, index_j) * weight_j`, where
//! tap `j` of every output position gives `index_j` and `weight_j` (a
//! position with fewer taps weighs 0 there): one gather for nearest, two
//! for linear, four for cubic, more for an antialiased shrink. A gather
//! by constant indices is a view (the readers receive the chosen rows
//! straight from the input's blocks), the products and sums elementwise
//! kernels; a tap of weight 1 everywhere (nearest) is the gather alone.
//! A crop's positions outside the input (`tf_crop_and_resize`) read one
//! element of the extrapolation value concatenated at the axis's end. An
//! axis whose taps are the identity is left alone.

use crate::legalize::Rewriter;
use ipu_ir::Value;
use ipu_reference::{ElementType, OpKind, Tensor};

/// One axis's taps: for each output position, `(index, weight)` pairs.
type Taps = [Vec<(usize, f64)>];

/// Tap `j` of each output position of an axis of `len_in` elements:
/// its index and weight. A position outside the crop (no taps) reads
/// index `len_in`, the extrapolation element, at its first tap.
fn tap(taps: &Taps, j: usize, len_in: usize) -> (Vec<i64>, Vec<f32>) {
    taps.iter()
        .map(|ts| match ts.get(j) {
            Some(&(i, w)) => (i as i64, w as f32),
            None if ts.is_empty() && j == 0 => (len_in as i64, 1.0),
            None => (0, 0.0),
        })
        .unzip()
}

/// Whether `taps` read each position of an axis of `len_in` elements
/// as it is.
fn is_identity(taps: &Taps, len_in: usize) -> bool {
    taps.len() == len_in
        && taps
            .iter()
            .enumerate()
            .all(|(o, ts)| ts.as_slice() == [(o, 1.0)])
}

impl Rewriter<'_> {
    /// `nn.resize` of a float input as a weighted sum of gathers along each
    /// resized axis.
    pub(crate) fn resize(&mut self, kind: &OpKind) -> Result<Option<Value>, String> {
        let OpKind::Resize {
            extrapolation_value,
            ..
        } = kind
        else {
            return Ok(None);
        };
        let x = self.operand(0);
        let Some(t) = self
            .elem(x)
            .filter(|t| matches!(t, ElementType::F32 | ElementType::F16))
        else {
            return Ok(None);
        };
        let sx = self.shape(x);
        if sx.contains(&0) {
            return Ok(None);
        }
        let mut y = x;
        for a in 0..sx.len() {
            let taps = ipu_reference::resize_taps(kind, &sx, a)
                .ok_or("is not a resize of its input's rank")?;
            y = self.resize_axis(y, a, &taps, (t, *extrapolation_value as f32))?;
        }
        Ok(Some(y))
    }

    /// `v` resized along `axis` by `taps`: the sum over taps of the
    /// gather of each position's index times its weight (`t`: the element
    /// type; `extrapolation`: what a position outside a crop reads).
    fn resize_axis(
        &mut self,
        v: Value,
        axis: usize,
        taps: &Taps,
        (t, extrapolation): (ElementType, f32),
    ) -> Result<Value, String> {
        let len_in = self.shape(v)[axis];
        if is_identity(taps, len_in) {
            return Ok(v);
        }
        let table = if taps.iter().any(Vec::is_empty) {
            self.pad(v, axis, 1, extrapolation)?
        } else {
            v
        };
        let rank = self.shape(v).len();
        let mut along = vec![1usize; rank];
        along[axis] = taps.len();
        let width = taps.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let mut acc: Option<Value> = None;
        for j in 0..width {
            let (index, weight) = tap(taps, j, len_in);
            if weight.iter().all(|&w| w == 0.0) {
                continue;
            }
            let it = Tensor::from_i64(vec![taps.len()], ElementType::I64, index)
                .map_err(|e| e.to_string())?;
            let indices = self.emit(OpKind::Constant(it), &[])?;
            let g = self.emit(OpKind::Gather { axis }, &[table, indices])?;
            let term = if weight.iter().all(|&w| w == 1.0) {
                g
            } else {
                let wt = Tensor::from_f32(along.clone(), t, weight).map_err(|e| e.to_string())?;
                let w = self.emit(OpKind::Constant(wt), &[])?;
                self.emit(OpKind::Mul, &[g, w])?
            };
            acc = Some(match acc {
                None => term,
                Some(a) => self.emit(OpKind::Add, &[a, term])?,
            });
        }
        // Every weight 0 (a linear tap can give that): the zeros it sums.
        match acc {
            Some(y) => Ok(y),
            None => {
                let mut s = self.shape(v);
                s[axis] = taps.len();
                self.fill(s, t, 0.0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_identity, tap};

    #[test]
    fn taps_pad_with_zero_weights_and_read_the_extrapolation_element() {
        let taps = vec![vec![(0, 0.25), (1, 0.75)], vec![(2, 1.0)], vec![]];
        assert_eq!(tap(&taps, 0, 3), (vec![0, 2, 3], vec![0.25, 1.0, 1.0]));
        assert_eq!(tap(&taps, 1, 3), (vec![1, 0, 0], vec![0.75, 0.0, 0.0]));
    }

    #[test]
    fn identity_taps_are_each_position_whole() {
        assert!(is_identity(&[vec![(0, 1.0)], vec![(1, 1.0)]], 2));
        assert!(!is_identity(&[vec![(0, 1.0)], vec![(0, 1.0)]], 2));
        assert!(!is_identity(&[vec![(0, 1.0)]], 2));
    }
}
