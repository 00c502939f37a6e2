//! Convolution and pooling as `nn` ops the device has: windows read as
//! views, arithmetic on the AMP and the elementwise kernels.
//!
//! * The input is padded (a concat with constants: zeros for a conv and an
//!   average, -inf for a max) as far as the windows of the output read it,
//!   and each kernel offset is one strided slice of it, `[N, C, O...]`.
//! * A conv is an implicit GEMM: the offsets' slices, stacked per channel,
//!   are the `[C*K, O]` operand of a matmul by the weights `[M, C*K]` (per
//!   group: a batch of products), whose result is reshaped to
//!   `[N, M, O...]`. A depthwise conv (one input and one output channel a
//!   group) is instead the sum over offsets of each slice times its weight
//!   broadcast along the channel axis.
//! * A max pool is the elementwise max of the offsets' slices; an average
//!   pool their sum divided by each window's count (a constant).
//!
//! Padding, slices, concats and reshapes are views: the exchange phase
//! feeding the matmul (or the elementwise op) moves each element from the
//! input's blocks straight into the layout its reader wants, so the
//! stacked operand is never stored larger than a tile's share of it.

use crate::legalize::Rewriter;
use ipu_ir::Value;
use ipu_program::elem::value_elem;
use ipu_program::gemm::GemmMode;
use ipu_reference::{ElementType, OpKind, Tensor};
use ipu_target::Target;

/// The window of a conv or pool over the spatial axes (each of the
/// op's attributes, verified with it).
pub(crate) struct Window<'a> {
    kernel: Vec<usize>,
    strides: &'a [usize],
    dilations: &'a [usize],
    /// Each spatial axis's low pad, then each one's high pad.
    pads: &'a [usize],
}

impl<'a> Window<'a> {
    pub(crate) fn new(
        kernel: Vec<usize>,
        strides: &'a [usize],
        dilations: &'a [usize],
        pads: &'a [usize],
    ) -> Window<'a> {
        Window {
            kernel,
            strides,
            dilations,
            pads,
        }
    }

    fn rank(&self) -> usize {
        self.kernel.len()
    }

    fn is_consistent(&self) -> bool {
        let s = self.rank();
        s > 0 && self.strides.len() == s && self.dilations.len() == s && self.pads.len() == 2 * s
    }

    /// How far into the padded input axis `a`'s windows of an output of
    /// `out` positions read.
    fn reach(&self, a: usize, out: usize) -> usize {
        (out - 1) * self.strides[a] + (self.kernel[a] - 1) * self.dilations[a] + 1
    }

    /// Every kernel offset, row-major over the spatial axes.
    fn offsets(&self) -> Vec<Vec<usize>> {
        let mut all = vec![Vec::new()];
        for &k in &self.kernel {
            all = all
                .into_iter()
                .flat_map(|o| {
                    (0..k).map(move |i| {
                        let mut o = o.clone();
                        o.push(i);
                        o
                    })
                })
                .collect();
        }
        all
    }

    /// For each position of axis `a`'s output (of `out`), how many of its
    /// taps an average divides by: those inside the input, or with
    /// `include_pad` those inside the input extended by its pads.
    fn counts(&self, a: usize, input: usize, out: usize, include_pad: bool) -> Vec<usize> {
        let low = self.pads[a];
        let (from, to) = if include_pad {
            (0, input + low + self.pads[self.rank() + a])
        } else {
            (low, input + low)
        };
        (0..out)
            .map(|o| {
                (0..self.kernel[a])
                    .map(|k| o * self.strides[a] + k * self.dilations[a])
                    .filter(|&p| p >= from && p < to)
                    .count()
            })
            .collect()
    }
}

/// The element types the pooling rewrite takes: the device's floats.
fn pooled(t: Option<ElementType>) -> bool {
    matches!(t, Some(ElementType::F32 | ElementType::F16))
}

impl Rewriter<'_> {
    /// The shapes of the op's input `[N, C, S...]` and result
    /// `[N, M, O...]`, when the rewrite applies to them (a window that
    /// matches the input's rank, no empty dimension).
    fn window_shapes(&self, w: &Window) -> Option<(Vec<usize>, Vec<usize>)> {
        let x = self.shape(self.operand(0));
        let y = self.shape(self.cx.result(self.at, 0));
        let fits = w.is_consistent() && x.len() == w.rank() + 2 && y.len() == x.len();
        (fits && !x.contains(&0) && !y.contains(&0)).then_some((x, y))
    }

    /// `v` with `p` elements of `value` before its start along `axis`.
    fn pad_front(&mut self, v: Value, axis: usize, p: usize, value: f32) -> Result<Value, String> {
        if p == 0 {
            return Ok(v);
        }
        let mut s = self.shape(v);
        s[axis] = p;
        let t = self.elem(v).ok_or("has no element type")?;
        let c = self.fill(s, t, value)?;
        self.emit(OpKind::Concat { axis }, &[c, v])
    }

    /// The slice of `x` (`[N, C, S...]`, padded with `value`) each kernel
    /// offset of `w` reads for an output of spatial sizes `out`, in
    /// offset order. The input is padded only as far as the windows
    /// reach: its low pads, and at the high end up to the last window
    /// (in ceil mode past the high pads).
    fn window_slices(
        &mut self,
        x: Value,
        w: &Window,
        out: &[usize],
        value: f32,
    ) -> Result<Vec<Value>, String> {
        let mut xp = x;
        for (a, &o) in out.iter().enumerate() {
            let (axis, low) = (a + 2, w.pads[a]);
            let len = self.shape(xp)[axis];
            let high = w.reach(a, o).saturating_sub(low + len);
            xp = self.pad_front(xp, axis, low, value)?;
            xp = self.pad(xp, axis, high, value)?;
        }
        let s = self.shape(xp);
        let mut slices = Vec::new();
        for k in w.offsets() {
            let mut starts = vec![0i64; s.len()];
            let mut ends: Vec<i64> = s.iter().map(|&d| d as i64).collect();
            let mut steps = vec![1i64; s.len()];
            for a in 0..w.rank() {
                let start = k[a] * w.dilations[a];
                starts[a + 2] = start as i64;
                ends[a + 2] = (start + (out[a] - 1) * w.strides[a] + 1) as i64;
                steps[a + 2] = w.strides[a] as i64;
            }
            let whole = starts.iter().all(|&b| b == 0)
                && steps.iter().all(|&t| t == 1)
                && ends.iter().zip(&s).all(|(&e, &d)| e == d as i64);
            slices.push(if whole {
                xp
            } else {
                self.emit(
                    OpKind::Slice {
                        starts,
                        ends,
                        steps,
                    },
                    &[xp],
                )?
            });
        }
        Ok(slices)
    }

    /// `nn.conv` as an implicit GEMM (or, depthwise, a sum of products);
    /// an integer one of the f32 images of its operands (`quant.rs`).
    pub(crate) fn conv(
        &mut self,
        w: &Window,
        group: usize,
        target: &Target,
    ) -> Result<Option<Value>, String> {
        let Some((sx, sy)) = self.window_shapes(w) else {
            return Ok(None);
        };
        let (x, wt) = (self.operand(0), self.operand(1));
        if let Some(t) = self
            .elem(self.cx.result(self.at, 0))
            .filter(|t| t.is_integer())
        {
            return self.integer_conv(w, group, (&sx, &sy), t, target);
        }
        // Only the element types an AMP mode multiplies.
        let e = |v| value_elem(self.cx, v);
        let (Some(ex), Some(ew), Some(ey)) = (e(x), e(wt), e(self.cx.result(self.at, 0))) else {
            return Ok(None);
        };
        if GemmMode::select(ex, ew, ey).is_err() {
            return Ok(None);
        }
        let conv = self.conv_of(x, wt, w, group, (&sx, &sy), &mut |r, a, b| {
            r.legal_matmul(a, b, target)
        })?;
        Ok(Some(conv))
    }

    /// The conv of `x` by `wt` (shapes `sx`, `sy`), its GEMM by `matmul`.
    pub(crate) fn conv_of(
        &mut self,
        x: Value,
        wt: Value,
        w: &Window,
        group: usize,
        (sx, sy): (&[usize], &[usize]),
        matmul: &mut dyn FnMut(&mut Self, Value, Value) -> Result<Value, String>,
    ) -> Result<Value, String> {
        let (n, c, m) = (sx[0], sx[1], sy[1]);
        let (cg, mg) = (c / group, m / group);
        let out = sy[2..].to_vec();
        let p: usize = out.iter().product();
        let kk: usize = w.kernel.iter().product();
        let slices = self.window_slices(x, w, &out, 0.0)?;
        if group > 1 && cg == 1 && mg == 1 {
            return self.depthwise(&slices, wt, m);
        }
        // Per channel its offsets: [N, C, K, P], row (c, k) of the GEMM's
        // [C*K, P] operand, as the weights [M, C/g, K...] are laid out.
        let mut cols = Vec::with_capacity(kk);
        for &s in &slices {
            cols.push(self.emit(
                OpKind::Reshape {
                    shape: vec![n, c, 1, p],
                },
                &[s],
            )?);
        }
        let col = match cols[..] {
            [one] => one,
            _ => self.emit(OpKind::Concat { axis: 2 }, &cols)?,
        };
        let k = cg * kk;
        // [g, M/g, K] x [N, g, K, P]; a batch of one (N or g) left out.
        let (mut ws, mut cs) = (vec![mg, k], vec![k, p]);
        if group > 1 {
            ws.insert(0, group);
            cs.insert(0, group);
        }
        if n > 1 {
            cs.insert(0, n);
        }
        let lhs = self.emit(OpKind::Reshape { shape: ws }, &[wt])?;
        let rhs = self.emit(OpKind::Reshape { shape: cs }, &[col])?;
        let y = matmul(self, lhs, rhs)?;
        self.emit(OpKind::Reshape { shape: sy.to_vec() }, &[y])
    }

    /// `nn.conv_transpose` as a conv (stride 1, same dilations) of the
    /// input with `stride - 1` zeros between its elements along each
    /// spatial axis, by the weights flipped along the spatial axes and
    /// with their two channel axes swapped per group: output position `o`
    /// of the full transposed conv sums `x[i] * w[k]` over `o = i * s + k
    /// * d`, which is that conv's window at `o` padded by `(K - 1) * d` in
    /// front. The op's low pads crop that front (beyond it, the zeros-
    /// stuffed input itself), and its result's size (with
    /// `output_padding`) how far the windows reach past the end.
    pub(crate) fn conv_transpose(
        &mut self,
        (strides, dilations, pads): (&[usize], &[usize], &[usize]),
        group: usize,
        target: &Target,
    ) -> Result<Option<Value>, String> {
        let (x, wt, y) = (self.operand(0), self.operand(1), self.cx.result(self.at, 0));
        let (sx, sw, sy) = (self.shape(x), self.shape(wt), self.shape(y));
        let s = sx.len().saturating_sub(2);
        let fits = s > 0
            && sw.len() == sx.len()
            && sy.len() == sx.len()
            && strides.len() == s
            && dilations.len() == s
            && pads.len() == 2 * s
            && group > 0
            && sx[1] % group == 0
            // A low pad that crops the whole stuffed input is left alone.
            && (0..s).all(|a| {
                let stuffed = (sx.get(a + 2).map_or(1, |&d| d.max(1)) - 1) * strides[a] + 1;
                let span = sw.get(a + 2).map_or(0, |&k| k.saturating_sub(1)) * dilations[a];
                pads[a] < span + stuffed
            });
        if !fits || [&sx, &sw, &sy].iter().any(|v| v.contains(&0)) {
            return Ok(None);
        }
        let e = |v| value_elem(self.cx, v);
        let (Some(ex), Some(ew), Some(ey)) = (e(x), e(wt), e(y)) else {
            return Ok(None);
        };
        if GemmMode::select(ex, ew, ey).is_err() {
            return Ok(None);
        }
        let kernel = sw[2..].to_vec();
        let mut xu = x;
        let mut conv_pads = vec![0usize; 2 * s];
        for a in 0..s {
            xu = self.stuffed(xu, a + 2, strides[a])?;
            let span = (kernel[a] - 1) * dilations[a];
            if pads[a] > span {
                xu = self.slice_from(xu, a + 2, pads[a] - span)?;
            }
            let low = span.saturating_sub(pads[a]);
            let len = self.shape(xu)[a + 2];
            conv_pads[a] = low;
            conv_pads[s + a] = (sy[a + 2] + span).saturating_sub(low + len);
        }
        let wc = self.transposed_weights(wt, group)?;
        let ones = vec![1usize; s];
        let w = Window::new(kernel, &ones, dilations, &conv_pads);
        let sxu = self.shape(xu);
        let conv = self.conv_of(xu, wc, &w, group, (&sxu, &sy), &mut |r, a, b| {
            r.legal_matmul(a, b, target)
        })?;
        Ok(Some(conv))
    }

    /// `v` with `s - 1` zeros between its elements along `axis`: each
    /// element and the zeros after it a row of a new axis, the last
    /// element's zeros cut off.
    fn stuffed(&mut self, v: Value, axis: usize, s: usize) -> Result<Value, String> {
        if s <= 1 {
            return Ok(v);
        }
        let sv = self.shape(v);
        let len = sv[axis];
        let mut rows = sv.clone();
        rows.insert(axis + 1, 1);
        let r = self.emit(OpKind::Reshape { shape: rows }, &[v])?;
        let padded = self.pad(r, axis + 1, s - 1, 0.0)?;
        let mut flat = sv;
        flat[axis] = len * s;
        let f = self.emit(OpKind::Reshape { shape: flat }, &[padded])?;
        self.unpad(f, axis, (len - 1) * s + 1)
    }

    /// `v` from element `from` on along `axis`.
    fn slice_from(&mut self, v: Value, axis: usize, from: usize) -> Result<Value, String> {
        let sv = self.shape(v);
        let mut starts = vec![0i64; sv.len()];
        starts[axis] = from as i64;
        self.emit(
            OpKind::Slice {
                starts,
                ends: sv.iter().map(|&d| d as i64).collect(),
                steps: vec![1; sv.len()],
            },
            &[v],
        )
    }

    /// A transposed conv's weights `[C, M/g, K...]` as a conv's `[M, C/g,
    /// K...]` (each group's two channel axes swapped), flipped along each
    /// spatial axis (a gather by the reversed positions).
    fn transposed_weights(&mut self, wt: Value, group: usize) -> Result<Value, String> {
        let sw = self.shape(wt);
        let (c, mg) = (sw[0], sw[1]);
        let cg = c / group;
        let r = sw.len();
        let mut grouped = vec![group, cg, mg];
        grouped.extend_from_slice(&sw[2..]);
        let g = self.emit(OpKind::Reshape { shape: grouped }, &[wt])?;
        let mut perm = vec![0, 2, 1];
        perm.extend(3..r + 1);
        let t = self.emit(OpKind::Transpose { perm }, &[g])?;
        let mut conv = vec![group * mg, cg];
        conv.extend_from_slice(&sw[2..]);
        let mut w = self.emit(OpKind::Reshape { shape: conv }, &[t])?;
        for (a, &k) in sw.iter().enumerate().skip(2) {
            if k > 1 {
                let rev = (0..k as i64).rev().collect();
                let it =
                    Tensor::from_i64(vec![k], ElementType::I64, rev).map_err(|e| e.to_string())?;
                let indices = self.emit(OpKind::Constant(it), &[])?;
                w = self.emit(OpKind::Gather { axis: a }, &[w, indices])?;
            }
        }
        Ok(w)
    }

    /// A conv with one input and one output channel per group: the sum
    /// over kernel offsets of each offset's slice (`[N, C, O...]`) times
    /// that offset's weights (`[C, 1, K...]`) along the channel axis.
    fn depthwise(&mut self, slices: &[Value], wt: Value, m: usize) -> Result<Value, String> {
        let ws = self.shape(wt);
        let kk: usize = ws[2..].iter().product();
        let flat = self.emit(OpKind::Reshape { shape: vec![m, kk] }, &[wt])?;
        let mut along = vec![1usize; ws.len()];
        along[1] = m;
        let mut acc: Option<Value> = None;
        for (i, &s) in slices.iter().enumerate() {
            let wi = self.emit(
                OpKind::Slice {
                    starts: vec![0, i as i64],
                    ends: vec![m as i64, i as i64 + 1],
                    steps: vec![1, 1],
                },
                &[flat],
            )?;
            let wb = self.emit(
                OpKind::Reshape {
                    shape: along.clone(),
                },
                &[wi],
            )?;
            let term = self.emit(OpKind::Mul, &[s, wb])?;
            acc = Some(match acc {
                None => term,
                Some(a) => self.emit(OpKind::Add, &[a, term])?,
            });
        }
        acc.ok_or_else(|| "has an empty kernel".to_string())
    }

    /// `nn.max_pool` (without indices): the elementwise max of the
    /// offsets' slices of the input padded with -inf. Of integers, the max
    /// of their f32 images (exact), whose cast back is the result.
    pub(crate) fn max_pool(&mut self, w: &Window) -> Result<Option<Value>, String> {
        let x = self.operand(0);
        let Some((_, sy)) = self.window_shapes(w) else {
            return Ok(None);
        };
        let int = self.elem(x).filter(|t| t.is_integer());
        let from = match int {
            Some(_) => match self.image(x)? {
                Some(i) => i,
                None => return Ok(None),
            },
            None if pooled(self.elem(x)) => x,
            None => return Ok(None),
        };
        let slices = self.window_slices(from, w, &sy[2..], f32::NEG_INFINITY)?;
        let y = self.fold(&slices, OpKind::Max)?;
        let Some(t) = int else {
            return Ok(Some(y));
        };
        let c = self.emit(crate::quant::cast_to(t), &[y])?;
        self.images.insert(c, y);
        Ok(Some(c))
    }

    /// `nn.avg_pool`: the sum of the offsets' slices of the input padded
    /// with zeros, divided by each window's count of taps.
    pub(crate) fn avg_pool(
        &mut self,
        w: &Window,
        include_pad: bool,
    ) -> Result<Option<Value>, String> {
        let x = self.operand(0);
        let Some((sx, sy)) = self.window_shapes(w).filter(|_| pooled(self.elem(x))) else {
            return Ok(None);
        };
        let t = self.elem(x).ok_or("has no element type")?;
        let out = &sy[2..];
        let slices = self.window_slices(x, w, out, 0.0)?;
        let sum = self.fold(&slices, OpKind::Add)?;
        // The counts are separable: a product of one factor per axis.
        let per_axis: Vec<Vec<usize>> = (0..w.rank())
            .map(|a| w.counts(a, sx[a + 2], out[a], include_pad))
            .collect();
        let mut counts = vec![1usize];
        for axis in &per_axis {
            counts = counts
                .iter()
                .flat_map(|&c| axis.iter().map(move |&k| c * k))
                .collect();
        }
        let divisor = if counts.iter().all(|&c| c == counts[0]) {
            self.fill(vec![], t, counts[0] as f32)?
        } else {
            let mut shape = vec![1, 1];
            shape.extend_from_slice(out);
            let values = counts.iter().map(|&c| c as f32).collect();
            let c = Tensor::from_f32(shape, t, values).map_err(|e| e.to_string())?;
            self.emit(OpKind::Constant(c), &[])?
        };
        self.emit(OpKind::Div, &[sum, divisor]).map(Some)
    }

    /// `vs` combined by the elementwise binary `op`, in order.
    fn fold(&mut self, vs: &[Value], op: OpKind) -> Result<Value, String> {
        let (&first, rest) = vs.split_first().ok_or("has an empty kernel")?;
        let mut acc = first;
        for &v in rest {
            acc = self.emit(op.clone(), &[acc, v])?;
        }
        Ok(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::Window;
    use ipu_ir::{Context, Op, Registry, Value};
    use ipu_reference::Tensor;
    use rustc_hash::FxHashMap;
    use std::sync::Arc;

    /// Convs (strided and padded, grouped, depthwise, dilated 1-D, batch
    /// of two) and pools (ceil mode, count_include_pad, uneven counts).
    const WINDOWED: &str = r#"
func.func @main(%x: tensor<2x4x7x6xf32>, %w: tensor<6x4x3x3xf32>, %g: tensor<4x2x3x2xf32>, %d: tensor<4x1x3x3xf32>, %s: tensor<1x3x9xf32>, %k: tensor<2x3x3xf32>) -> (tensor<2x6x4x3xf32>, tensor<2x4x3x5xf32>, tensor<2x4x7x6xf32>, tensor<1x2x3xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x3xf32>) {
  %0 = nn.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 0>, group = 1} : (tensor<2x4x7x6xf32>, tensor<6x4x3x3xf32>) -> tensor<2x6x4x3xf32>
  %1 = nn.conv %x, %g {strides = array<i64: 2, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2} : (tensor<2x4x7x6xf32>, tensor<4x2x3x2xf32>) -> tensor<2x4x3x5xf32>
  %2 = nn.conv %x, %d {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 4} : (tensor<2x4x7x6xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x7x6xf32>
  %3 = nn.conv %s, %k {strides = array<i64: 2>, dilations = array<i64: 2>, pads = array<i64: 1, 0>, group = 1} : (tensor<1x3x9xf32>, tensor<2x3x3xf32>) -> tensor<1x2x3xf32>
  %4 = nn.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, ceil_mode} : tensor<2x4x7x6xf32> -> tensor<2x4x4x4xf32>
  %5 = nn.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, ceil_mode} : tensor<2x4x7x6xf32> -> tensor<2x4x4x4xf32>
  %6 = nn.avg_pool %x {kernel = array<i64: 2, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 1, 1, 0>, count_include_pad} : tensor<2x4x7x6xf32> -> tensor<2x4x4x3xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x6x4x3xf32>, tensor<2x4x3x5xf32>, tensor<2x4x7x6xf32>, tensor<1x2x3xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x3xf32>
}
"#;

    /// The reference's values of `f`'s results on `args`.
    fn run(cx: &Context, f: Op, args: &[Tensor]) -> Vec<Tensor> {
        let entry = cx.entry_block(cx.region(f, 0)).unwrap();
        let mut vals: FxHashMap<Value, Tensor> = FxHashMap::default();
        for (&a, t) in cx.block_args(entry).iter().zip(args) {
            vals.insert(a, t.clone());
        }
        let mut results = Vec::new();
        for op in cx.block_ops_vec(entry) {
            let ins: Vec<&Tensor> = cx.operands(op).iter().map(|v| &vals[v]).collect();
            if cx.name_str(op) == "func.return" {
                results = ins.into_iter().cloned().collect();
                continue;
            }
            let kind = ipu_dialects::nn::op_kind(cx, op).unwrap();
            let out = ipu_reference::evaluate(&kind, &ins).unwrap();
            vals.insert(cx.result(op, 0), out);
        }
        results
    }

    /// Transposed convs (strided with output padding and groups, pads
    /// past the kernel's span, dilated 1-D), resizes (nearest, linear,
    /// cubic, a crop) and a max pool of u8.
    const TRANSPOSED: &str = r#"
func.func @main(%x: tensor<1x4x3x3xf32>, %t: tensor<4x3x3x3xf32>, %s: tensor<2x2x5xf32>, %k: tensor<2x3x2xf32>, %p: tensor<1x2x5x4xf32>, %u: tensor<1x1x5x5xui8>) -> (tensor<1x6x8x8xf32>, tensor<1x3x3x5xf32>, tensor<2x3x10xf32>, tensor<1x2x10x6xf32>, tensor<1x2x10x6xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x1x3x3xui8>) {
  %0 = nn.conv_transpose %x, %t {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 1, 1>, group = 2} : (tensor<1x4x3x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x8x8xf32>
  %1 = nn.conv_transpose %x, %t {strides = array<i64: 3, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 3, 1, 3, 1>, output_padding = array<i64: 0, 0>, group = 1} : (tensor<1x4x3x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x3x5xf32>
  %2 = nn.conv_transpose %s, %k {strides = array<i64: 2>, dilations = array<i64: 2>, pads = array<i64: 1, 1>, output_padding = array<i64: 1>, group = 1} : (tensor<2x2x5xf32>, tensor<2x3x2xf32>) -> tensor<2x3x10xf32>
  %3 = nn.resize %p {scales = [1.0 : f64, 1.0 : f64, 2.0 : f64, 1.5 : f64], nearest_mode = "round_prefer_ceil", coordinate_transformation_mode = "asymmetric"} : tensor<1x2x5x4xf32> -> tensor<1x2x10x6xf32>
  %4 = nn.resize %p {scales = [1.0 : f64, 1.0 : f64, 2.0 : f64, 1.5 : f64], mode = "linear", coordinate_transformation_mode = "align_corners"} : tensor<1x2x5x4xf32> -> tensor<1x2x10x6xf32>
  %5 = nn.resize %p {scales = [1.0 : f64, 1.0 : f64, 0.6 : f64, 0.75 : f64], mode = "cubic", cubic_coeff_a = -0.5 : f64, exclude_outside, antialias} : tensor<1x2x5x4xf32> -> tensor<1x2x3x3xf32>
  %6 = nn.resize %p {scales = [1.0 : f64, 1.0 : f64, 0.6 : f64, 0.75 : f64], coordinate_transformation_mode = "tf_crop_and_resize", roi = [0.0 : f64, 0.0 : f64, 0.4 : f64, 0.6 : f64, 1.0 : f64, 1.0 : f64, 1.2 : f64, 1.5 : f64], extrapolation_value = 10.0 : f64, mode = "linear"} : tensor<1x2x5x4xf32> -> tensor<1x2x3x3xf32>
  %7 = nn.max_pool %u {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x1x5x5xui8> -> tensor<1x1x3x3xui8>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<1x6x8x8xf32>, tensor<1x3x3x5xf32>, tensor<2x3x10xf32>, tensor<1x2x10x6xf32>, tensor<1x2x10x6xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x1x3x3xui8>
}
"#;

    /// Legalizes `src` and checks that none of the ops named `gone` is
    /// left and that the reference gives the same values before and after.
    fn legalized_values_match(src: &str, gone: &[&str]) -> Vec<String> {
        let mut registry = Registry::new();
        ipu_dialects::register_all_dialects(&mut registry);
        let mut cx = Context::new(Arc::new(registry));
        let module = ipu_ir::parser::parse_source(&mut cx, "t.mlir", src).unwrap();
        let f = ipu_program::target::functions(&cx, module)[0];
        let entry = cx.entry_block(cx.region(f, 0)).unwrap();
        // Inputs of a deterministic pattern, away from ties for the max
        // (small integers for an integer input).
        let args: Vec<Tensor> = cx
            .block_args(entry)
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let shape: Vec<usize> = cx.value_shape(a).iter().map(|&d| d as usize).collect();
                let (_, e) = cx.tensor_parts(cx.value_type(a)).unwrap();
                let t = ipu_dialects::nn::element_type(&cx, e).unwrap();
                let n: usize = shape.iter().product();
                let v = (0..n)
                    .map(|j| match t.is_integer() {
                        true => ((j * 37 + i * 11) % 251) as f32,
                        false => ((j * 37 + i * 11) % 29) as f32 / 7.0 - 2.0 + j as f32 * 1e-3,
                    })
                    .collect();
                Tensor::from_f32(shape, t, v).unwrap()
            })
            .collect();
        let before = run(&cx, f, &args);
        let target = ipu_target::Target::load("ipu21").unwrap();
        let _ = crate::legalize::legalize(&mut cx, f, &target);
        let names: Vec<String> = cx
            .block_ops_vec(entry)
            .iter()
            .map(|&o| cx.name_str(o).to_string())
            .collect();
        for op in gone {
            assert!(!names.iter().any(|n| n == op), "{op} left");
        }
        let after = run(&cx, f, &args);
        for (i, (b, a)) in before.iter().zip(&after).enumerate() {
            assert_eq!(b.shape(), a.shape(), "result {i}");
            assert_eq!(b.dtype(), a.dtype(), "result {i}");
            for (x, y) in b.to_f32_vec().iter().zip(a.to_f32_vec()) {
                assert!(
                    (x - y).abs() <= 1e-5 * (1.0 + x.abs()),
                    "result {i}: {x} vs {y}"
                );
            }
        }
        names
    }

    #[test]
    fn windowed_ops_become_device_ops_of_the_same_values() {
        let gone = ["nn.conv", "nn.max_pool", "nn.avg_pool"];
        let names = legalized_values_match(WINDOWED, &gone);
        assert!(names.iter().any(|n| n == "nn.matmul"));
    }

    #[test]
    fn transposed_convs_resizes_and_integer_pools_become_device_ops() {
        let gone = ["nn.conv_transpose", "nn.resize", "nn.max_pool"];
        let names = legalized_values_match(TRANSPOSED, &gone);
        assert!(names.iter().any(|n| n == "nn.matmul"));
        assert!(names.iter().any(|n| n == "nn.gather"));
    }

    #[test]
    fn offsets_are_row_major() {
        let w = Window::new(vec![2, 3], &[1, 1], &[1, 1], &[0, 0, 0, 0]);
        let o = w.offsets();
        assert_eq!(o.len(), 6);
        assert_eq!(o[0], vec![0, 0]);
        assert_eq!(o[1], vec![0, 1]);
        assert_eq!(o[3], vec![1, 0]);
        assert_eq!(o[5], vec![1, 2]);
    }

    #[test]
    fn windows_reach_as_far_as_the_last_one_reads() {
        // 3 taps, dilation 2, stride 2: the 4th window starts at 6, its
        // last tap at 6 + 4.
        let w = Window::new(vec![3], &[2], &[2], &[1, 1]);
        assert_eq!(w.reach(0, 4), 11);
    }

    #[test]
    fn average_counts_follow_count_include_pad() {
        // Input 5, kernel 3, stride 2, pads 1/1: windows at -1, 1, 3.
        let w = Window::new(vec![3], &[2], &[1], &[1, 1]);
        assert_eq!(w.counts(0, 5, 3, false), vec![2, 3, 2]);
        assert_eq!(w.counts(0, 5, 3, true), vec![3, 3, 3]);
        // Input 6 in ceil mode: a 4th window, at 6, reaches past the high
        // pad, which it counts with count_include_pad.
        assert_eq!(w.counts(0, 6, 4, true), vec![3, 3, 3, 2]);
        assert_eq!(w.counts(0, 6, 4, false), vec![2, 3, 3, 1]);
    }
}
