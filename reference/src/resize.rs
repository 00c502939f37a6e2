//! `resize`: nearest-neighbour, n-linear and n-cubic interpolation of a
//! tensor to a new shape (antialiased when shrinking, if asked), with
//! ONNX's coordinate transformations and nearest-index roundings.
//! Positions and weights are computed in f64 from the f64 scales, as
//! ONNX's reference computes them; a result is the weighted sum of its
//! taps in f64, rounded once.

use rayon::prelude::*;

use crate::dtype::ElementType;
use crate::error::EvalError;
use crate::float8::round_slice;
use crate::ops::OpKind;
use crate::tensor::{Tensor, TensorData, TensorType};

/// How an output position maps to an input coordinate (ONNX's
/// `coordinate_transformation_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResizeCoordinate {
    HalfPixel,
    HalfPixelSymmetric,
    PytorchHalfPixel,
    AlignCorners,
    Asymmetric,
    /// The crop `roi` (per axis a start and an end, fractions of the
    /// input) resized; coordinates outside the input read
    /// `extrapolation_value`.
    TfCropAndResize,
}

/// How a resize interpolates (ONNX's `mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResizeMode {
    Nearest,
    Linear,
    Cubic,
}

impl ResizeMode {
    pub const NAMES: [(&'static str, ResizeMode); 3] = [
        ("nearest", ResizeMode::Nearest),
        ("linear", ResizeMode::Linear),
        ("cubic", ResizeMode::Cubic),
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("nearest", |(n, _)| n)
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::NAMES.iter().find(|(n, _)| *n == s).map(|(_, c)| *c)
    }
}

/// The interpolation of a resize: its mode and that mode's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Interpolation {
    pub(crate) mode: ResizeMode,
    /// Nearest: how a coordinate becomes an index.
    pub(crate) nearest: NearestMode,
    /// Linear and cubic: widen the kernel by 1 / scale when shrinking.
    pub(crate) antialias: bool,
    /// Cubic: the kernel's `a`.
    pub(crate) cubic_coeff_a: f64,
    /// Linear and cubic: taps outside the input weigh 0 (the others
    /// renormalized).
    pub(crate) exclude_outside: bool,
}

/// How a nearest-neighbour coordinate becomes an index (ONNX's
/// `nearest_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NearestMode {
    RoundPreferFloor,
    RoundPreferCeil,
    Floor,
    Ceil,
}

impl ResizeCoordinate {
    pub const NAMES: [(&'static str, ResizeCoordinate); 6] = [
        ("half_pixel", ResizeCoordinate::HalfPixel),
        ("half_pixel_symmetric", ResizeCoordinate::HalfPixelSymmetric),
        ("pytorch_half_pixel", ResizeCoordinate::PytorchHalfPixel),
        ("align_corners", ResizeCoordinate::AlignCorners),
        ("asymmetric", ResizeCoordinate::Asymmetric),
        ("tf_crop_and_resize", ResizeCoordinate::TfCropAndResize),
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("half_pixel", |(n, _)| n)
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::NAMES.iter().find(|(n, _)| *n == s).map(|(_, c)| *c)
    }

    /// The input coordinate of output position `x` on an axis of `len_in`
    /// elements resized to `len_out` with `scale` (and the crop `roi`), as
    /// ONNX's reference computes it (the scaled width `scale * len_in`
    /// where it uses it); `None` outside the input for a crop.
    fn map(
        self,
        x: usize,
        scale: f64,
        len_in: usize,
        len_out: usize,
        roi: (f64, f64),
    ) -> Option<f64> {
        let x = x as f64;
        let width = scale * len_in as f64;
        let last = len_in as f64 - 1.0;
        Some(match self {
            ResizeCoordinate::TfCropAndResize => {
                let (start, end) = roi;
                let c = if width == 1.0 {
                    (end - start) * last / 2.0
                } else {
                    x * (end - start) * last / (width - 1.0)
                } + start * last;
                return (0.0..=last).contains(&c).then_some(c);
            }
            ResizeCoordinate::HalfPixel => (x + 0.5) / scale - 0.5,
            ResizeCoordinate::HalfPixelSymmetric => {
                let adjustment = len_out as f64 / width;
                let center = len_in as f64 / 2.0;
                center * (1.0 - adjustment) + (x + 0.5) / scale - 0.5
            }
            ResizeCoordinate::PytorchHalfPixel if width == 1.0 => -0.5,
            ResizeCoordinate::PytorchHalfPixel => (x + 0.5) / scale - 0.5,
            ResizeCoordinate::AlignCorners if width == 1.0 => 0.0,
            ResizeCoordinate::AlignCorners => x * (len_in as f64 - 1.0) / (width - 1.0),
            ResizeCoordinate::Asymmetric => x / scale,
        })
    }
}

impl NearestMode {
    pub const NAMES: [(&'static str, NearestMode); 4] = [
        ("round_prefer_floor", NearestMode::RoundPreferFloor),
        ("round_prefer_ceil", NearestMode::RoundPreferCeil),
        ("floor", NearestMode::Floor),
        ("ceil", NearestMode::Ceil),
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("round_prefer_floor", |(n, _)| n)
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::NAMES.iter().find(|(n, _)| *n == s).map(|(_, c)| *c)
    }

    fn index(self, x: f64, len_in: usize) -> usize {
        let i = match self {
            NearestMode::RoundPreferFloor if x.fract() == 0.5 => x.floor(),
            NearestMode::RoundPreferCeil if x.fract() == 0.5 => x.ceil(),
            NearestMode::RoundPreferFloor | NearestMode::RoundPreferCeil => x.round(),
            NearestMode::Floor => x.floor(),
            NearestMode::Ceil => x.ceil(),
        };
        i.clamp(0.0, len_in.saturating_sub(1) as f64) as usize
    }
}

/// The widest kernel (taps per output position) of an antialiased resize
/// by `scales`, `None` when it is past any allocation (1 without
/// antialiasing).
fn antialias_footprint(scales: &[f64], antialias: bool) -> Option<usize> {
    if !antialias {
        return Some(1);
    }
    let smallest = scales.iter().copied().fold(1.0f64, f64::min);
    // A cubic kernel spans 4 / scale taps, a linear one 2 / scale.
    let taps = (4.0 / smallest).ceil() + 2.0;
    (taps.is_finite() && taps < (1u64 << 32) as f64).then_some(taps as usize)
}

/// The shape rule: a float input, one positive finite scale and one output
/// size per axis (0 exactly where the input axis is empty).
pub(crate) fn infer(
    name: &'static str,
    x: &TensorType,
    (shape, scales, roi): (&[usize], &[f64], &[f64]),
    coordinate: ResizeCoordinate,
    antialias: bool,
) -> Result<TensorType, EvalError> {
    let rank = x.shape.len();
    if !x.dtype.is_float() || x.dtype.is_fp8() {
        return Err(EvalError::ty(name, x.dtype, "expected a float type"));
    }
    if shape.len() != rank || scales.len() != rank {
        return Err(EvalError::attr(
            name,
            format!(
                "{} sizes and {} scales for rank {rank}",
                shape.len(),
                scales.len()
            ),
        ));
    }
    let crop = coordinate == ResizeCoordinate::TfCropAndResize;
    if roi.len() != if crop { 2 * rank } else { 0 } || roi.iter().any(|r| !r.is_finite()) {
        return Err(EvalError::attr(
            name,
            format!(
                "{} finite roi entries for rank {rank} (a crop has a start and an end per axis, other resizes none)",
                roi.len()
            ),
        ));
    }
    if let Some(s) = scales.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
        return Err(EvalError::attr(name, format!("scale {s} is not positive")));
    }
    if antialias_footprint(scales, antialias)
        .and_then(|f| f.checked_mul(shape.iter().copied().max().unwrap_or(0)))
        .is_none()
    {
        return Err(EvalError::attr(
            name,
            "an antialiased kernel this wide (the scale is too small)",
        ));
    }
    if let Some(a) = (0..rank).find(|&a| (shape[a] == 0) != (x.shape[a] == 0)) {
        return Err(EvalError::shape(
            name,
            format!(
                "axis {a} of {} elements resized to {}: only an empty axis stays empty",
                x.shape[a], shape[a]
            ),
        ));
    }
    Ok(TensorType::new(shape.to_vec(), x.dtype))
}

/// The weights of a linear or cubic kernel at `ratio` (in (0, 1]: the
/// coordinate's distance past its left neighbour `x_int`), for the
/// neighbours `x_int + j`, `j` from `1 - m` to `m`; widened by `1 / scale`
/// with antialiasing when shrinking. As ONNX's reference computes them.
fn kernel_weights(f: &Interpolation, ratio: f64, scale: f64) -> Vec<(i64, f64)> {
    let a = f.cubic_coeff_a;
    let cubic = |x: f64| {
        let x = x.abs();
        if x <= 1.0 {
            ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        } else if x < 2.0 {
            ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
        } else {
            0.0
        }
    };
    let s = if f.antialias { scale.min(1.0) } else { 1.0 };
    let (start, weight): (i64, &dyn Fn(f64) -> f64) = match f.mode {
        ResizeMode::Cubic => ((-2.0 / s).floor() as i64 + 1, &cubic),
        _ => ((-1.0 / s).floor() as i64 + 1, &|x: f64| {
            (1.0 - x.abs()).clamp(0.0, 1.0)
        }),
    };
    let mut w: Vec<(i64, f64)> = (start..2 - start)
        .map(|j| (j, weight((j as f64 - ratio) * s)))
        .collect();
    if f.antialias {
        let total: f64 = w.iter().map(|(_, c)| c).sum();
        w.iter_mut().for_each(|(_, c)| *c /= total);
    }
    w
}

/// One axis's input taps for each output position: `(index, weight)`
/// pairs (one for nearest), indices clamped to the input (edge padding);
/// none where a crop's coordinate falls outside the input.
fn axis_taps(
    (len_in, len_out, scale, roi): (usize, usize, f64, (f64, f64)),
    coordinate: ResizeCoordinate,
    f: &Interpolation,
) -> Vec<Vec<(usize, f64)>> {
    let last = len_in.saturating_sub(1) as i64;
    (0..len_out)
        .map(|o| {
            let Some(x) = coordinate.map(o, scale, len_in, len_out, roi) else {
                return Vec::new();
            };
            if f.mode == ResizeMode::Nearest {
                return vec![(f.nearest.index(x, len_in), 1.0)];
            }
            // The left neighbour, with the ratio in (0, 1].
            let x_int = x.ceil() - 1.0;
            let ratio = x - x_int;
            let mut w = kernel_weights(f, ratio, scale);
            let base = x_int as i64;
            if f.exclude_outside {
                let inside = |j: i64| (0..=last).contains(&base.saturating_add(j));
                w.iter_mut()
                    .filter(|(j, _)| !inside(*j))
                    .for_each(|(_, c)| *c = 0.0);
                let total: f64 = w.iter().map(|(_, c)| c).sum();
                w.iter_mut().for_each(|(_, c)| *c /= total);
            }
            let taps: Vec<(usize, f64)> = w
                .into_iter()
                .filter(|(_, c)| *c != 0.0)
                .map(|(j, c)| (base.saturating_add(j).clamp(0, last) as usize, c))
                .collect();
            if taps.is_empty() {
                // Every weight 0: the output is 0 (one tap, weighing 0).
                return vec![(base.clamp(0, last) as usize, 0.0)];
            }
            taps
        })
        .collect()
}

/// The attributes of a resize op, for [`OpKind::attributes`].
pub(crate) fn attributes(op: &OpKind) -> Vec<(&'static str, String)> {
    let Some((scales, roi, extrapolation_value, coordinate, f)) = parts(op) else {
        return Vec::new();
    };
    let list = |v: &[f64]| {
        let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        format!("[{}]", items.join(", "))
    };
    vec![
        ("scales", list(scales)),
        ("coordinate", format!("\"{}\"", coordinate.name())),
        ("roi", list(roi)),
        ("extrapolation_value", extrapolation_value.to_string()),
        ("mode", format!("\"{}\"", f.mode.name())),
        ("nearest", format!("\"{}\"", f.nearest.name())),
        ("antialias", f.antialias.to_string()),
        ("cubic_coeff_a", f.cubic_coeff_a.to_string()),
        ("exclude_outside", f.exclude_outside.to_string()),
    ]
}

/// The parts of resize `op`: its scales, crop, extrapolation value,
/// coordinate transformation and interpolation.
type Parts<'a> = (&'a [f64], &'a [f64], f64, ResizeCoordinate, Interpolation);

fn parts(op: &OpKind) -> Option<Parts<'_>> {
    let OpKind::Resize {
        scales,
        coordinate,
        roi,
        extrapolation_value,
        mode,
        nearest,
        antialias,
        cubic_coeff_a,
        exclude_outside,
        ..
    } = op
    else {
        return None;
    };
    let f = Interpolation {
        mode: *mode,
        nearest: *nearest,
        antialias: *antialias,
        cubic_coeff_a: *cubic_coeff_a,
        exclude_outside: *exclude_outside,
    };
    Some((scales, roi, *extrapolation_value, *coordinate, f))
}

/// Axis `a`'s crop (start, end) of a resize of rank `rank` with `roi`.
fn crop(roi: &[f64], rank: usize, a: usize) -> (f64, f64) {
    match roi.len() {
        0 => (0.0, 1.0),
        _ => (roi[a], roi[rank + a]),
    }
}

/// The taps of resize `op` along axis `a` of an input of shape `input`:
/// for each output position of that axis, the `(index, weight)` pairs the
/// evaluation weighs (none where a crop's coordinate is outside the
/// input, which reads the extrapolation value). A result element is the
/// product over the axes of their taps' weights, summed over every
/// combination of taps: the resize is separable, one axis after another.
/// `None` when `op` is not a resize of `input`'s rank.
pub fn resize_taps(op: &OpKind, input: &[usize], a: usize) -> Option<Vec<Vec<(usize, f64)>>> {
    let (scales, roi, _, coordinate, f) = parts(op)?;
    let OpKind::Resize { shape, .. } = op else {
        return None;
    };
    let rank = input.len();
    let fits = a < rank && shape.len() == rank && scales.len() == rank;
    if !fits || !(roi.is_empty() || roi.len() == 2 * rank) {
        return None;
    }
    let len = (input[a], shape[a], scales[a], crop(roi, rank, a));
    Some(axis_taps(len, coordinate, &f))
}

/// Evaluates a resize op to `out` (its inferred type).
pub(crate) fn evaluate_op(op: &OpKind, x: &Tensor, out: &TensorType) -> Result<Tensor, EvalError> {
    let Some((scales, roi, extrapolation, coordinate, f)) = parts(op) else {
        return Err(EvalError::attr(op.name(), "not a resize"));
    };
    evaluate(x, (scales, roi, extrapolation), coordinate, &f, out)
}

/// Evaluates a resize to `out`. `roi` holds each axis's crop start, then
/// each one's end (used by `TfCropAndResize`, which reads `extrapolation`
/// outside the input).
fn evaluate(
    x: &Tensor,
    (scales, roi, extrapolation): (&[f64], &[f64], f64),
    coordinate: ResizeCoordinate,
    f: &Interpolation,
    out: &TensorType,
) -> Result<Tensor, EvalError> {
    let xs = x.shape();
    let rank = xs.len();
    // The tap tables: up to the kernel's width per output position.
    let width = antialias_footprint(scales, f.antialias && f.mode != ResizeMode::Nearest)
        .unwrap_or(usize::MAX)
        .max(4);
    let positions: usize = out.shape.iter().sum();
    crate::limits::check_tensor_size("resize's taps", &[positions, width, 2], ElementType::I64)?;
    let v = x.to_f32_vec();
    let taps: Vec<Vec<Vec<(usize, f64)>>> = (0..rank)
        .map(|a| {
            let c = crop(roi, rank, a);
            axis_taps((xs[a], out.shape[a], scales[a], c), coordinate, f)
        })
        .collect();
    let strides = crate::eval::contiguous_strides(xs);
    let total: usize = out.shape.iter().product();
    let element = |flat: usize| -> f32 {
        let mut idx = vec![0usize; rank];
        let mut r = flat;
        for a in (0..rank).rev() {
            idx[a] = r % out.shape[a];
            r /= out.shape[a];
        }
        if (0..rank).any(|a| taps[a][idx[a]].is_empty()) {
            return extrapolation as f32;
        }
        // Sum over the corners: one tap per axis.
        let mut acc = 0f64;
        let mut pick = vec![0usize; rank];
        loop {
            let (mut off, mut w) = (0usize, 1f64);
            for a in 0..rank {
                let (i, wa) = taps[a][idx[a]][pick[a]];
                off += i * strides[a];
                w *= wa;
            }
            acc += w * v[off] as f64;
            let mut a = rank;
            loop {
                if a == 0 {
                    return acc as f32;
                }
                a -= 1;
                pick[a] += 1;
                if pick[a] < taps[a][idx[a]].len() {
                    break;
                }
                pick[a] = 0;
            }
        }
    };
    let mut y: Vec<f32> = if v.is_empty() {
        vec![0.0; total]
    } else if total >= 1 << 14 {
        (0..total).into_par_iter().map(element).collect()
    } else {
        (0..total).map(element).collect()
    };
    round_slice(&mut y, out.dtype);
    Ok(Tensor::raw(
        out.shape.clone(),
        out.dtype,
        TensorData::F32(y),
    ))
}
