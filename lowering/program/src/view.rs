//! Views: values that are a re-indexing of other values (transpose,
//! reshape, broadcast, slice, concat, gather by constant indices) and have no storage of their own. A
//! consumer reading a rectangle of a view receives it straight from the
//! blocks of the values underneath, through the exchange phase that feeds
//! its compute set: the layout change costs no superstep and no on-tile
//! copy.

use smallvec::SmallVec;

/// How a view's elements come from its inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewKind {
    /// Result dimension i is input dimension `perm[i]`.
    Transpose(Vec<usize>),
    /// The same elements in row-major order.
    Reshape,
    /// numpy broadcasting of the input to the view's shape.
    Broadcast,
    /// Element i of dimension d is input element `starts[d] + i * steps[d]`.
    Slice { starts: Vec<i64>, steps: Vec<i64> },
    /// The inputs one after another along `axis`.
    Concat { axis: usize },
    /// The input's rows `indices` (in range, row-major over the index
    /// dimensions) along `axis`: a gather with constant indices.
    Gather { axis: usize, indices: Vec<i64> },
}

impl ViewKind {
    pub fn name(&self) -> &'static str {
        match self {
            ViewKind::Transpose(_) => "transpose",
            ViewKind::Reshape => "reshape",
            ViewKind::Broadcast => "broadcast",
            ViewKind::Slice { .. } => "slice",
            ViewKind::Concat { .. } => "concat",
            ViewKind::Gather { .. } => "gather",
        }
    }
}

/// A view of `inputs` (their shapes given) with `shape`.
#[derive(Clone, Debug)]
pub struct View {
    pub kind: ViewKind,
    pub input_shapes: Vec<Vec<i64>>,
    pub shape: Vec<i64>,
}

fn row_major_strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

impl View {
    /// The input (index) and the index in it of element `idx` of the view.
    pub fn source(&self, idx: &[i64], out: &mut Vec<i64>) -> usize {
        out.clear();
        match &self.kind {
            ViewKind::Transpose(perm) => {
                out.resize(idx.len(), 0);
                for (i, &p) in perm.iter().enumerate() {
                    out[p] = idx[i];
                }
                0
            }
            ViewKind::Reshape => {
                let st = row_major_strides(&self.shape);
                let mut lin: i64 = idx.iter().zip(&st).map(|(i, s)| i * s).sum();
                let ishape = &self.input_shapes[0];
                out.resize(ishape.len(), 0);
                for d in (0..ishape.len()).rev() {
                    out[d] = lin % ishape[d].max(1);
                    lin /= ishape[d].max(1);
                }
                0
            }
            ViewKind::Broadcast => {
                let ishape = &self.input_shapes[0];
                let off = idx.len() - ishape.len();
                out.extend(
                    ishape
                        .iter()
                        .enumerate()
                        .map(|(d, &n)| if n == 1 { 0 } else { idx[d + off] }),
                );
                0
            }
            ViewKind::Slice { starts, steps } => {
                out.extend(
                    idx.iter()
                        .zip(starts.iter().zip(steps))
                        .map(|(&i, (&s, &st))| s + i * st),
                );
                0
            }
            ViewKind::Concat { axis } => {
                let mut at = idx[*axis];
                for (k, s) in self.input_shapes.iter().enumerate() {
                    if at < s[*axis] || k + 1 == self.input_shapes.len() {
                        out.extend_from_slice(idx);
                        out[*axis] = at;
                        return k;
                    }
                    at -= s[*axis];
                }
                unreachable!("a concat has inputs")
            }
            ViewKind::Gather { axis, indices } => {
                // The index dimensions replace the input's `axis`.
                let k = idx.len() + 1 - self.input_shapes[0].len();
                let flat = idx[*axis..*axis + k]
                    .iter()
                    .zip(&self.shape[*axis..*axis + k])
                    .fold(0i64, |f, (&i, &n)| f * n + i);
                out.extend_from_slice(&idx[..*axis]);
                out.push(indices[flat as usize]);
                out.extend_from_slice(&idx[*axis + k..]);
                0
            }
        }
    }
}

/// Up to this rank, index vectors stay off the heap.
pub type Index = SmallVec<[i64; 6]>;

impl View {
    /// Elements `idx + j * step` (j < n, n >= 1) of the view: the input
    /// they come from, and how many of them (at least one) are elements
    /// `src + j * src_step` of that input, as [`View::source`] gives them.
    pub fn source_line(
        &self,
        idx: &[i64],
        step: &[i64],
        n: i64,
        src: &mut Index,
        src_step: &mut Index,
    ) -> (usize, i64) {
        src.clear();
        src_step.clear();
        match &self.kind {
            ViewKind::Transpose(perm) => {
                src.resize(idx.len(), 0);
                src_step.resize(idx.len(), 0);
                for (i, &p) in perm.iter().enumerate() {
                    src[p] = idx[i];
                    src_step[p] = step[i];
                }
                (0, n)
            }
            ViewKind::Reshape => {
                let st = row_major_strides(&self.shape);
                let dot = |v: &[i64]| v.iter().zip(&st).map(|(i, s)| i * s).sum::<i64>();
                let (mut lin, by) = (dot(idx), dot(step));
                let ishape = &self.input_shapes[0];
                src.resize(ishape.len(), 0);
                src_step.resize(ishape.len(), 0);
                for d in (0..ishape.len()).rev() {
                    src[d] = lin % ishape[d].max(1);
                    lin /= ishape[d].max(1);
                }
                if by == 0 {
                    return (0, n);
                }
                if (0..ishape.len()).any(|d| src[d] < 0 || src[d] >= ishape[d]) {
                    return (0, 1);
                }
                // The outermost input dimension whose stride divides the
                // linear step moves alone while it stays in range.
                let ist = row_major_strides(ishape);
                let Some(e) = (0..ishape.len()).find(|&e| ist[e] != 0 && by % ist[e] == 0) else {
                    return (0, 1);
                };
                let q = by / ist[e];
                src_step[e] = q;
                let fit = if q > 0 {
                    (ishape[e] - 1 - src[e]) / q + 1
                } else {
                    src[e] / -q + 1
                };
                (0, fit.clamp(1, n))
            }
            ViewKind::Broadcast => {
                let ishape = &self.input_shapes[0];
                let off = idx.len() - ishape.len();
                for (d, &s) in ishape.iter().enumerate() {
                    let one = s == 1;
                    src.push(if one { 0 } else { idx[d + off] });
                    src_step.push(if one { 0 } else { step[d + off] });
                }
                (0, n)
            }
            ViewKind::Slice { starts, steps } => {
                for d in 0..idx.len() {
                    src.push(starts[d] + idx[d] * steps[d]);
                    src_step.push(step[d] * steps[d]);
                }
                (0, n)
            }
            ViewKind::Concat { axis } => {
                let a = *axis;
                let inputs = self.input_shapes.len();
                let mut at = idx[a];
                for (k, s) in self.input_shapes.iter().enumerate() {
                    if at < s[a] || k + 1 == inputs {
                        src.extend_from_slice(idx);
                        src[a] = at;
                        src_step.extend_from_slice(step);
                        // Input 0 takes everything below its end, the last
                        // input everything from its start (as `source`).
                        let fit = match step[a] {
                            0 => n,
                            s if s > 0 && k + 1 < inputs => {
                                (self.input_shapes[k][a] - 1 - at) / s + 1
                            }
                            s if s < 0 && k > 0 => at / -s + 1,
                            _ => n,
                        };
                        return (k, fit.clamp(1, n));
                    }
                    at -= s[a];
                }
                unreachable!("a concat has inputs")
            }
            ViewKind::Gather { axis, indices } => {
                let a = *axis;
                let k = idx.len() + 1 - self.input_shapes[0].len();
                let flat = idx[a..a + k]
                    .iter()
                    .zip(&self.shape[a..a + k])
                    .fold(0i64, |f, (&i, &n)| f * n + i);
                src.extend_from_slice(&idx[..a]);
                src.push(indices[flat as usize]);
                src.extend_from_slice(&idx[a + k..]);
                src_step.extend_from_slice(&step[..a]);
                src_step.push(0);
                src_step.extend_from_slice(&step[a + k..]);
                if step[a..a + k].iter().any(|&s| s != 0) {
                    return (0, 1);
                }
                (0, n)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_map_elements_to_their_inputs() {
        let mut out = Vec::new();
        let t = View {
            kind: ViewKind::Transpose(vec![1, 0]),
            input_shapes: vec![vec![2, 3]],
            shape: vec![3, 2],
        };
        assert_eq!(t.source(&[2, 1], &mut out), 0);
        assert_eq!(out, [1, 2]);
        let r = View {
            kind: ViewKind::Reshape,
            input_shapes: vec![vec![4, 6]],
            shape: vec![2, 12],
        };
        r.source(&[1, 5], &mut out);
        assert_eq!(out, [2, 5]);
        let b = View {
            kind: ViewKind::Broadcast,
            input_shapes: vec![vec![3, 1]],
            shape: vec![2, 3, 4],
        };
        b.source(&[1, 2, 3], &mut out);
        assert_eq!(out, [2, 0]);
        let s = View {
            kind: ViewKind::Slice {
                starts: vec![1, 6],
                steps: vec![1, -2],
            },
            input_shapes: vec![vec![4, 8]],
            shape: vec![2, 3],
        };
        s.source(&[1, 2], &mut out);
        assert_eq!(out, [2, 2]);
        let c = View {
            kind: ViewKind::Concat { axis: 1 },
            input_shapes: vec![vec![2, 3], vec![2, 5]],
            shape: vec![2, 8],
        };
        assert_eq!(c.source(&[1, 4], &mut out), 1);
        assert_eq!(out, [1, 1]);
        // Rows [[2, 0], [1, 2]] of a [3, 4] input: out[i][j][c] = x[idx[i][j]][c].
        let g = View {
            kind: ViewKind::Gather {
                axis: 0,
                indices: vec![2, 0, 1, 2],
            },
            input_shapes: vec![vec![3, 4]],
            shape: vec![2, 2, 4],
        };
        g.source(&[1, 0, 3], &mut out);
        assert_eq!(out, [1, 3]);
        g.source(&[0, 0, 2], &mut out);
        assert_eq!(out, [2, 2]);
        // Along the last axis of a [2, 5] input, one index dimension.
        let g = View {
            kind: ViewKind::Gather {
                axis: 1,
                indices: vec![4, 0, 3],
            },
            input_shapes: vec![vec![2, 5]],
            shape: vec![2, 3],
        };
        g.source(&[1, 2], &mut out);
        assert_eq!(out, [1, 3]);
    }
}
