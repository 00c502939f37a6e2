//! The windowed ops of convolutional networks: convolution, transposed
//! convolution, max and average pooling. Tensors are `[N, C, S...]` with
//! one or more spatial axes `S`; `pads` lists each spatial axis's low pad,
//! then each one's high pad (ONNX's layout). Shape rules check every
//! attribute with checked arithmetic; evaluation accumulates floats in f64
//! and rounds once, integers exactly (wrapping to the type, as the integer
//! matmul does).

use rayon::prelude::*;

use crate::dtype::ElementType;
use crate::error::EvalError;
use crate::float8::round_slice;
use crate::ops::OpKind;
use crate::tensor::{Tensor, TensorData, TensorType};

/// Work (multiply-adds) above which a conv is split over rayon's pool.
const PAR_WORK: usize = 1 << 16;

/// The geometry of one windowed op over the spatial axes.
#[derive(Clone, Debug)]
struct Geometry {
    input: Vec<usize>,
    kernel: Vec<usize>,
    output: Vec<usize>,
    strides: Vec<usize>,
    dilations: Vec<usize>,
    low: Vec<usize>,
    high: Vec<usize>,
}

fn count(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// The `i`-th multi-index of `shape` (row-major), into `idx`.
fn unravel(mut i: usize, shape: &[usize], idx: &mut [usize]) {
    for a in (0..shape.len()).rev() {
        idx[a] = i % shape[a].max(1);
        i /= shape[a].max(1);
    }
}

fn spatial_list(
    name: &'static str,
    what: &str,
    v: &[usize],
    n: usize,
    min: usize,
) -> Result<(), EvalError> {
    if v.len() != n {
        return Err(EvalError::attr(
            name,
            format!("`{what}` has {} entries for {n} spatial axes", v.len()),
        ));
    }
    if let Some(bad) = v.iter().find(|&&x| x < min) {
        return Err(EvalError::attr(
            name,
            format!("`{what}` holds {bad}; its entries must be at least {min}"),
        ));
    }
    Ok(())
}

fn too_large(name: &'static str) -> EvalError {
    EvalError::attr(name, "the window's extent overflows")
}

impl Geometry {
    /// Checks the attributes against `input` (the spatial dims) and
    /// `kernel`; the output is computed by the caller's rule.
    fn new(
        name: &'static str,
        input: &[usize],
        kernel: &[usize],
        strides: &[usize],
        dilations: &[usize],
        pads: &[usize],
    ) -> Result<Geometry, EvalError> {
        let s = input.len();
        spatial_list(name, "kernel", kernel, s, 1)?;
        spatial_list(name, "strides", strides, s, 1)?;
        spatial_list(name, "dilations", dilations, s, 1)?;
        if pads.len() != 2 * s {
            return Err(EvalError::attr(
                name,
                format!("`pads` has {} entries for {s} spatial axes", pads.len()),
            ));
        }
        Ok(Geometry {
            input: input.to_vec(),
            kernel: kernel.to_vec(),
            output: Vec::new(),
            strides: strides.to_vec(),
            dilations: dilations.to_vec(),
            low: pads[..s].to_vec(),
            high: pads[s..].to_vec(),
        })
    }

    /// The extent of axis `a`'s dilated kernel, and of its padded input.
    fn extents(&self, name: &'static str, a: usize) -> Result<(usize, usize), EvalError> {
        let k = (self.kernel[a] - 1)
            .checked_mul(self.dilations[a])
            .and_then(|e| e.checked_add(1))
            .ok_or_else(|| too_large(name))?;
        let padded = self.input[a]
            .checked_add(self.low[a])
            .and_then(|p| p.checked_add(self.high[a]))
            .ok_or_else(|| too_large(name))?;
        Ok((k, padded))
    }

    /// A forward window's output size per axis: `(padded - k) / stride + 1`,
    /// rounded down, or up with `ceil` (a last window that would start in
    /// the high padding is dropped, as onnxruntime and PyTorch do).
    fn forward(mut self, name: &'static str, ceil: bool) -> Result<Geometry, EvalError> {
        for a in 0..self.input.len() {
            let (k, padded) = self.extents(name, a)?;
            if padded < k {
                return Err(EvalError::shape(
                    name,
                    format!(
                        "spatial axis {a}: the window ({k}) is larger than the padded input ({padded})"
                    ),
                ));
            }
            let s = self.strides[a];
            let mut out = if ceil {
                (padded - k).div_ceil(s) + 1
            } else {
                (padded - k) / s + 1
            };
            if ceil && out > 1 && (out - 1) * s >= self.input[a] + self.low[a] {
                out -= 1;
            }
            self.output.push(out);
        }
        Ok(self)
    }

    /// A transposed conv's output size per axis:
    /// `(in - 1) * stride + output_padding + k - low - high`.
    fn transposed(
        mut self,
        name: &'static str,
        output_padding: &[usize],
    ) -> Result<Geometry, EvalError> {
        for (a, &extra) in output_padding.iter().enumerate() {
            let (k, _) = self.extents(name, a)?;
            let full = self.input[a]
                .saturating_sub(1)
                .checked_mul(self.strides[a])
                .and_then(|v| v.checked_add(extra))
                .and_then(|v| v.checked_add(k))
                .ok_or_else(|| too_large(name))?;
            let cut = self.low[a] + self.high[a];
            if self.input[a] == 0 || full < cut {
                return Err(EvalError::shape(
                    name,
                    format!("spatial axis {a}: the pads ({cut}) remove the whole output ({full})"),
                ));
            }
            self.output.push(full - cut);
        }
        Ok(self)
    }

    /// For each output position and kernel tap, the input position it
    /// reads (flat over the spatial axes), `None` in the padding.
    fn taps(&self) -> Vec<Option<usize>> {
        let (outs, ks) = (count(&self.output), count(&self.kernel));
        let s = self.input.len();
        let (mut o, mut k) = (vec![0; s], vec![0; s]);
        let mut taps = Vec::with_capacity(outs * ks);
        for oi in 0..outs {
            unravel(oi, &self.output, &mut o);
            for ki in 0..ks {
                unravel(ki, &self.kernel, &mut k);
                let mut flat = 0usize;
                let mut inside = true;
                for a in 0..s {
                    let p = (o[a] * self.strides[a] + k[a] * self.dilations[a]) as i64
                        - self.low[a] as i64;
                    if p < 0 || p >= self.input[a] as i64 {
                        inside = false;
                        break;
                    }
                    flat = flat * self.input[a] + p as usize;
                }
                taps.push(inside.then_some(flat));
            }
        }
        taps
    }

    /// For each output position, how many of its taps fall inside the
    /// input extended by its pads (the divisor of an average that counts
    /// the padding; the part of a ceil-mode window past the pads is not
    /// counted).
    fn padded_taps(&self) -> Vec<usize> {
        let s = self.input.len();
        let mut o = vec![0; s];
        (0..count(&self.output))
            .map(|oi| {
                unravel(oi, &self.output, &mut o);
                (0..s)
                    .map(|a| {
                        let start = o[a] * self.strides[a];
                        let end = self.input[a] + self.low[a] + self.high[a];
                        (0..self.kernel[a])
                            .filter(|&k| start + k * self.dilations[a] < end)
                            .count()
                    })
                    .product()
            })
            .collect()
    }
}

/// The operand types of a conv: `x` `[N, C, S...]` and weights, of one
/// float or integer type.
fn conv_operands(name: &'static str, x: &TensorType, w: &TensorType) -> Result<(), EvalError> {
    if x.shape.len() < 3 || w.shape.len() != x.shape.len() {
        return Err(EvalError::shape(
            name,
            format!(
                "expected input [N, C, spatial...] and weights of the same rank, got {:?} and {:?}",
                x.shape, w.shape
            ),
        ));
    }
    if x.dtype != w.dtype {
        return Err(EvalError::ty(
            name,
            w.dtype,
            format!("operand types differ: {} vs {}", x.dtype, w.dtype),
        ));
    }
    if x.dtype == ElementType::I1 || x.dtype.is_fp8() {
        return Err(EvalError::ty(
            name,
            x.dtype,
            "expected a float or integer type",
        ));
    }
    Ok(())
}

fn group_ok(name: &'static str, what: &str, n: usize, group: usize) -> Result<(), EvalError> {
    if group == 0 || n % group != 0 {
        return Err(EvalError::attr(
            name,
            format!("{what} ({n}) is not a multiple of the group count ({group})"),
        ));
    }
    Ok(())
}

fn not_windowed(name: &'static str) -> EvalError {
    EvalError::attr(name, "not a windowed op")
}

/// The geometry of a windowed op on operands of `types`, every attribute
/// checked.
fn geometry(op: &OpKind, types: &[TensorType]) -> Result<Geometry, EvalError> {
    let name = op.name();
    match op {
        OpKind::Conv {
            strides,
            dilations,
            pads,
            group,
        } => conv_geometry(name, &types[0], &types[1], strides, dilations, pads, *group),
        OpKind::ConvTranspose {
            strides,
            dilations,
            pads,
            output_padding,
            group,
        } => conv_transpose_geometry(
            name,
            &types[0],
            &types[1],
            (strides, dilations, pads, output_padding),
            *group,
        ),
        OpKind::MaxPool {
            kernel,
            strides,
            dilations,
            pads,
            ceil_mode,
            ..
        }
        | OpKind::AvgPool {
            kernel,
            strides,
            dilations,
            pads,
            ceil_mode,
            ..
        } => pool_geometry(op, &types[0], kernel, strides, dilations, pads, *ceil_mode),
        _ => Err(not_windowed(name)),
    }
}

/// The shape rule of the windowed ops: `[N, channels, output...]`.
pub(crate) fn infer(op: &OpKind, inputs: &[TensorType]) -> Result<TensorType, EvalError> {
    let g = geometry(op, inputs)?;
    let x = &inputs[0];
    let channels = match op {
        OpKind::Conv { .. } => inputs[1].shape[0],
        OpKind::ConvTranspose { group, .. } => inputs[1].shape[1] * group,
        _ => x.shape[1],
    };
    let mut shape = vec![x.shape[0], channels];
    shape.extend_from_slice(&g.output);
    let dtype = match op {
        OpKind::MaxPool { indices: true, .. } => ElementType::I64,
        _ => x.dtype,
    };
    Ok(TensorType::new(shape, dtype))
}

fn conv_geometry(
    name: &'static str,
    x: &TensorType,
    w: &TensorType,
    strides: &[usize],
    dilations: &[usize],
    pads: &[usize],
    group: usize,
) -> Result<Geometry, EvalError> {
    conv_operands(name, x, w)?;
    let (c, m) = (x.shape[1], w.shape[0]);
    group_ok(name, "the input channel count", c, group)?;
    group_ok(name, "the output channel count", m, group)?;
    if w.shape[1] * group != c {
        return Err(EvalError::shape(
            name,
            format!(
                "weights {:?} take {} input channels per group, the input has {c} in {group} group(s)",
                w.shape, w.shape[1]
            ),
        ));
    }
    let g = Geometry::new(name, &x.shape[2..], &w.shape[2..], strides, dilations, pads)?;
    g.forward(name, false)
}

fn conv_transpose_geometry(
    name: &'static str,
    x: &TensorType,
    w: &TensorType,
    (strides, dilations, pads, output_padding): (&[usize], &[usize], &[usize], &[usize]),
    group: usize,
) -> Result<Geometry, EvalError> {
    conv_operands(name, x, w)?;
    let c = x.shape[1];
    group_ok(name, "the input channel count", c, group)?;
    if w.shape[0] != c {
        return Err(EvalError::shape(
            name,
            format!(
                "weights {:?} are for {} input channels, the input has {c}",
                w.shape, w.shape[0]
            ),
        ));
    }
    if w.shape[1].checked_mul(group).is_none() {
        return Err(too_large(name));
    }
    spatial_list(name, "output_padding", output_padding, x.shape.len() - 2, 0)?;
    let g = Geometry::new(name, &x.shape[2..], &w.shape[2..], strides, dilations, pads)?;
    g.transposed(name, output_padding)
}

fn pool_geometry(
    op: &OpKind,
    x: &TensorType,
    kernel: &[usize],
    strides: &[usize],
    dilations: &[usize],
    pads: &[usize],
    ceil: bool,
) -> Result<Geometry, EvalError> {
    let name = op.name();
    if x.shape.len() < 3 {
        return Err(EvalError::shape(
            name,
            format!("expected [N, C, spatial...], got {:?}", x.shape),
        ));
    }
    let float = x.dtype.is_float() && !x.dtype.is_fp8();
    let int = !x.dtype.is_float() && x.dtype != ElementType::I1;
    if !(float || (int && matches!(op, OpKind::MaxPool { .. }))) {
        return Err(EvalError::ty(name, x.dtype, "expected a float type"));
    }
    let g = Geometry::new(name, &x.shape[2..], kernel, strides, dilations, pads)?;
    g.forward(name, ceil)
}

/// Evaluates a windowed op; `out` is its inferred type.
pub(crate) fn evaluate(
    op: &OpKind,
    inputs: &[&Tensor],
    out: &TensorType,
) -> Result<Tensor, EvalError> {
    let x = inputs[0];
    let types: Vec<TensorType> = inputs.iter().map(|t| t.ty()).collect();
    let g = geometry(op, &types)?;
    // The tap table (one entry per output position and kernel tap, or per
    // input position and tap of a transposed conv) is checked before it
    // is built.
    let positions = match op {
        OpKind::ConvTranspose { .. } => count(&g.input),
        _ => count(&g.output),
    };
    crate::limits::check_tensor_size(
        &format!("{}'s window taps", op.name()),
        &[positions, count(&g.kernel)],
        ElementType::I64,
    )?;
    Ok(match op {
        OpKind::Conv { group, .. } => conv(x, inputs[1], &g, *group, out, false),
        OpKind::ConvTranspose { group, .. } => conv(x, inputs[1], &g, *group, out, true),
        OpKind::MaxPool { indices: false, .. } => max_pool(x, &g, out),
        OpKind::MaxPool { indices: true, .. } => max_pool_indices(x, &g, out),
        OpKind::AvgPool {
            count_include_pad, ..
        } => avg_pool(x, &g, *count_include_pad, out),
        _ => return Err(not_windowed(op.name())),
    })
}

/// The arithmetic a conv accumulates in: f64 for floats (each f32 product
/// exact), wrapping i64 for integers.
trait Mac: Copy + Send + Sync + Default {
    type Acc: Copy + Send + Default;
    fn mac(acc: Self::Acc, a: Self, b: Self) -> Self::Acc;
    fn done(acc: Self::Acc) -> Self;
}

impl Mac for f32 {
    type Acc = f64;
    fn mac(acc: f64, a: f32, b: f32) -> f64 {
        acc + a as f64 * b as f64
    }
    fn done(acc: f64) -> f32 {
        acc as f32
    }
}

impl Mac for i64 {
    type Acc = i64;
    fn mac(acc: i64, a: i64, b: i64) -> i64 {
        acc.wrapping_add(a.wrapping_mul(b))
    }
    fn done(acc: i64) -> i64 {
        acc
    }
}

/// `y[n, m, o] = sum over the group's channels c and taps k of
/// x[n, c, tap(o, k)] * w[m, c', k]`.
fn conv_core<T: Mac>(
    x: &[T],
    w: &[T],
    xs: &[usize],
    ws: &[usize],
    g: &Geometry,
    group: usize,
) -> Vec<T> {
    let (n, c, m) = (xs[0], xs[1], ws[0]);
    let (cg, mg) = (c / group, m / group);
    let (ins, ks, outs) = (count(&g.input), count(&g.kernel), count(&g.output));
    let taps = g.taps();
    let mut y = vec![T::default(); n * m * outs];
    if outs == 0 {
        return y;
    }
    let plane = |(nm, row): (usize, &mut [T])| {
        let (b, oc) = (nm / m, nm % m);
        let gi = oc / mg;
        for (oi, yv) in row.iter_mut().enumerate() {
            let mut acc = T::Acc::default();
            for ci in 0..cg {
                let xb = (b * c + gi * cg + ci) * ins;
                let wb = (oc * cg + ci) * ks;
                for (ki, tap) in taps[oi * ks..(oi + 1) * ks].iter().enumerate() {
                    if let Some(p) = tap {
                        acc = T::mac(acc, x[xb + p], w[wb + ki]);
                    }
                }
            }
            *yv = T::done(acc);
        }
    };
    if y.len().saturating_mul(cg * ks) >= PAR_WORK {
        y.par_chunks_mut(outs).enumerate().for_each(plane);
    } else {
        y.chunks_mut(outs).enumerate().for_each(plane);
    }
    y
}

/// Each input element scattered through the kernel:
/// `y[n, g*Mg + m, o] += x[n, c, i] * w[c, m, k]` for `o = i * stride +
/// k * dilation - low`, within the output.
fn conv_transpose_core<T: Mac>(
    x: &[T],
    w: &[T],
    xs: &[usize],
    ws: &[usize],
    g: &Geometry,
    group: usize,
) -> Vec<T> {
    let (n, c, mg) = (xs[0], xs[1], ws[1]);
    let (cg, m) = (c / group, mg * group);
    let (ins, ks, outs) = (count(&g.input), count(&g.kernel), count(&g.output));
    // Where input position i and tap k land (the forward taps of the
    // swapped geometry, in reverse).
    let s = g.input.len();
    let (mut iv, mut kv) = (vec![0; s], vec![0; s]);
    let mut lands = Vec::with_capacity(ins * ks);
    for ii in 0..ins {
        unravel(ii, &g.input, &mut iv);
        for ki in 0..ks {
            unravel(ki, &g.kernel, &mut kv);
            let mut flat = 0usize;
            let mut inside = true;
            for a in 0..s {
                let p = (iv[a] * g.strides[a] + kv[a] * g.dilations[a]) as i64 - g.low[a] as i64;
                if p < 0 || p >= g.output[a] as i64 {
                    inside = false;
                    break;
                }
                flat = flat * g.output[a] + p as usize;
            }
            lands.push(inside.then_some(flat));
        }
    }
    let mut y = vec![T::default(); n * m * outs];
    if outs == 0 {
        return y;
    }
    let plane = |(nm, row): (usize, &mut [T])| {
        let (b, oc) = (nm / m, nm % m);
        let (gi, mi) = (oc / mg, oc % mg);
        let mut acc = vec![T::Acc::default(); outs];
        for ci in 0..cg {
            let ch = gi * cg + ci;
            let xb = (b * c + ch) * ins;
            let wb = (ch * mg + mi) * ks;
            for ii in 0..ins {
                for ki in 0..ks {
                    if let Some(o) = lands[ii * ks + ki] {
                        acc[o] = T::mac(acc[o], x[xb + ii], w[wb + ki]);
                    }
                }
            }
        }
        for (yv, a) in row.iter_mut().zip(acc) {
            *yv = T::done(a);
        }
    };
    if (n * m * ins).saturating_mul(cg * ks) >= PAR_WORK {
        y.par_chunks_mut(outs).enumerate().for_each(plane);
    } else {
        y.chunks_mut(outs).enumerate().for_each(plane);
    }
    y
}

fn finish(out: &TensorType, data: TensorData) -> Tensor {
    match data {
        TensorData::F32(mut v) => {
            round_slice(&mut v, out.dtype);
            Tensor::raw(out.shape.clone(), out.dtype, TensorData::F32(v))
        }
        TensorData::I64(mut v) => {
            if !matches!(out.dtype, ElementType::I64 | ElementType::U64) {
                v.iter_mut().for_each(|x| *x = out.dtype.wrap_int(*x));
            }
            Tensor::raw(out.shape.clone(), out.dtype, TensorData::I64(v))
        }
    }
}

/// Conv (or, `transposed`, ConvTranspose) of `x` by `w`: on the f32 values
/// when both are f32, on the i64 values otherwise.
fn conv(
    x: &Tensor,
    w: &Tensor,
    g: &Geometry,
    group: usize,
    out: &TensorType,
    transposed: bool,
) -> Tensor {
    let (xs, ws) = (x.shape(), w.shape());
    let data = match (x.data(), w.data()) {
        (TensorData::F32(a), TensorData::F32(b)) => {
            TensorData::F32(conv_any(a, b, xs, ws, g, group, transposed))
        }
        _ => {
            let (a, b) = (x.to_i64_vec(), w.to_i64_vec());
            TensorData::I64(conv_any(&a, &b, xs, ws, g, group, transposed))
        }
    };
    finish(out, data)
}

fn conv_any<T: Mac>(
    x: &[T],
    w: &[T],
    xs: &[usize],
    ws: &[usize],
    g: &Geometry,
    group: usize,
    transposed: bool,
) -> Vec<T> {
    if transposed {
        conv_transpose_core(x, w, xs, ws, g, group)
    } else {
        conv_core(x, w, xs, ws, g, group)
    }
}

/// Applies `reduce` to each output position's taps, plane by plane.
fn pool_planes<T: Copy + Send + Sync + Default>(
    x: &[T],
    g: &Geometry,
    planes: usize,
    reduce: impl Fn(usize, &mut dyn Iterator<Item = T>) -> T + Sync,
) -> Vec<T> {
    let (ins, ks, outs) = (count(&g.input), count(&g.kernel), count(&g.output));
    let taps = g.taps();
    let mut y = vec![T::default(); planes * outs];
    if outs == 0 {
        return y;
    }
    let plane = |(p, row): (usize, &mut [T])| {
        let xp = &x[p * ins..(p + 1) * ins];
        for (oi, yv) in row.iter_mut().enumerate() {
            let mut it = taps[oi * ks..(oi + 1) * ks]
                .iter()
                .flatten()
                .map(|&i| xp[i]);
            *yv = reduce(oi, &mut it);
        }
    };
    if y.len().saturating_mul(ks) >= PAR_WORK {
        y.par_chunks_mut(outs).enumerate().for_each(plane);
    } else {
        y.chunks_mut(outs).enumerate().for_each(plane);
    }
    y
}

/// The largest element of each window (the padding takes no part; NaN
/// propagates).
fn max_pool(x: &Tensor, g: &Geometry, out: &TensorType) -> Tensor {
    let planes = x.shape()[0] * x.shape()[1];
    let data = match x.data() {
        TensorData::F32(v) => TensorData::F32(pool_planes(v, g, planes, |_, it| {
            it.fold(f32::NEG_INFINITY, |m, v| {
                if m.is_nan() || !(v.is_nan() || v > m) {
                    m
                } else {
                    v
                }
            })
        })),
        TensorData::I64(v) => TensorData::I64(pool_planes(v, g, planes, |_, it| {
            it.max().unwrap_or(i64::MIN)
        })),
    };
    finish(out, data)
}

/// Where the largest element of each window is: its position in the whole
/// input (row-major), the first of equal ones; NaN is never the largest.
fn max_pool_indices(x: &Tensor, g: &Geometry, out: &TensorType) -> Tensor {
    let planes = x.shape()[0] * x.shape()[1];
    let v = x.to_f32_vec();
    let ints = x.to_i64_vec();
    let float = x.dtype().is_float();
    // Each element as (value, position), compared by value: floats by
    // their f32, integers exactly.
    let pos: Vec<i64> = (0..v.len() as i64).collect();
    let y = pool_planes(&pos, g, planes, |_, it| {
        let mut best: Option<i64> = None;
        for p in it {
            let i = p as usize;
            let better = match best {
                None => !(float && v[i].is_nan()),
                Some(b) if float => v[i] > v[b as usize],
                Some(b) => ints[i] > ints[b as usize],
            };
            if better {
                best = Some(p);
            }
        }
        best.unwrap_or(-1)
    });
    finish(out, TensorData::I64(y))
}

/// The mean of each window: the sum (in f64) over the taps inside the
/// input, divided by their count, or with `count_include_pad` by the count
/// of taps inside the padded input.
fn avg_pool(x: &Tensor, g: &Geometry, include_pad: bool, out: &TensorType) -> Tensor {
    let planes = x.shape()[0] * x.shape()[1];
    let padded = include_pad.then(|| g.padded_taps());
    let v = x.to_f32_vec();
    let y = pool_planes(&v, g, planes, |oi, it| {
        let (sum, n) = it.fold((0f64, 0usize), |(s, n), v| (s + v as f64, n + 1));
        let d = padded.as_ref().map_or(n, |p| p[oi]);
        (sum / d as f64) as f32
    });
    finish(out, TensorData::F32(y))
}
