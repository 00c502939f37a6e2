//! Views: values that are a re-indexing of other values (transpose,
//! reshape, broadcast, slice, concat, gather by constant indices) and have no storage of their own. A
//! consumer reading a rectangle of a view receives it straight from the
//! blocks of the values underneath, through the exchange phase that feeds
//! its compute set: the layout change costs no superstep and no on-tile
//! copy.

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
