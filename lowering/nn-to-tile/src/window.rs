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
    /// offsets' slices of the input padded with -inf.
    pub(crate) fn max_pool(&mut self, w: &Window) -> Result<Option<Value>, String> {
        let x = self.operand(0);
        let Some((_, sy)) = self.window_shapes(w).filter(|_| pooled(self.elem(x))) else {
            return Ok(None);
        };
        let slices = self.window_slices(x, w, &sy[2..], f32::NEG_INFINITY)?;
        self.fold(&slices, OpKind::Max).map(Some)
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
    use ipu_reference::{ElementType, Tensor};
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

    #[test]
    fn windowed_ops_become_device_ops_of_the_same_values() {
        let mut registry = Registry::new();
        ipu_dialects::register_all_dialects(&mut registry);
        let mut cx = Context::new(Arc::new(registry));
        let module = ipu_ir::parser::parse_source(&mut cx, "t.mlir", WINDOWED).unwrap();
        let f = ipu_program::target::functions(&cx, module)[0];
        let entry = cx.entry_block(cx.region(f, 0)).unwrap();
        // Inputs of a deterministic pattern, away from ties for the max.
        let args: Vec<Tensor> = cx
            .block_args(entry)
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let shape: Vec<usize> = cx.value_shape(a).iter().map(|&d| d as usize).collect();
                let n: usize = shape.iter().product();
                let v = (0..n)
                    .map(|j| ((j * 37 + i * 11) % 29) as f32 / 7.0 - 2.0 + j as f32 * 1e-3)
                    .collect();
                Tensor::from_f32(shape, ElementType::F32, v).unwrap()
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
        for windowed in ["nn.conv", "nn.max_pool", "nn.avg_pool"] {
            assert!(!names.iter().any(|n| n == windowed), "{windowed} left");
        }
        assert!(names.iter().any(|n| n == "nn.matmul"));
        let after = run(&cx, f, &args);
        for (i, (b, a)) in before.iter().zip(&after).enumerate() {
            assert_eq!(b.shape(), a.shape(), "result {i}");
            for (x, y) in b.to_f32_vec().iter().zip(a.to_f32_vec()) {
                assert!(
                    (x - y).abs() <= 1e-5 * (1.0 + x.abs()),
                    "result {i}: {x} vs {y}"
                );
            }
        }
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
