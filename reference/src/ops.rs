//! The op set of the `tensor` dialect, with attributes, and shape/type
//! inference shared by the evaluator and the dialect verifier.

use crate::dtype::ElementType;
use crate::error::EvalError;
pub use crate::resize::{NearestMode, ResizeCoordinate, ResizeMode};
use crate::tensor::{Tensor, TensorType};

/// GELU formulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GeluApproximation {
    /// `0.5 x (1 + erf(x / sqrt 2))`
    None,
    /// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`
    Tanh,
}

/// How [`OpKind::Pad`] fills positions outside the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PadMode {
    /// The `value` attribute.
    Constant,
    /// Mirror without repeating the edge element.
    Reflect,
    /// Repeat the edge element.
    Edge,
    /// Wrap around.
    Wrap,
}

/// How scatter ops combine an update with the existing element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScatterReduction {
    /// Overwrite (later updates win).
    None,
    Add,
    Mul,
    Max,
    Min,
}

/// Reduction kind of [`OpKind::Reduce`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
}

/// An operation of the `tensor` dialect. Axes are normalized
/// (non-negative, in range); attributes are fully explicit.
#[derive(Clone, Debug, PartialEq)]
pub enum OpKind {
    /// A constant tensor (no operands).
    Constant(Tensor),
    /// numpy `matmul`: 1-D operands are promoted, batch dims broadcast.
    /// Floats accumulate in f64 and round once; integers (both operands of
    /// one type) accumulate exactly and wrap to the type, as numpy does.
    MatMul,
    // Elementwise binary, numpy broadcasting, both operands of one type
    // (Pow: exponent of any type).
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Pow,
    /// Remainder. `fmod`: sign of the dividend (C `fmod`); otherwise the
    /// sign of the divisor (Python `%`, integers only in ONNX).
    Mod {
        fmod: bool,
    },
    // Comparisons and logic -> i1.
    Equal,
    Less,
    Greater,
    And,
    Or,
    Not,
    // Elementwise unary.
    Neg,
    Abs,
    Exp,
    Log,
    Sqrt,
    Rsqrt,
    Reciprocal,
    Tanh,
    Erf,
    Sigmoid,
    Sin,
    Cos,
    Relu,
    Floor,
    Ceil,
    /// Round half to even.
    Round,
    Gelu {
        approximate: GeluApproximation,
    },
    /// Softmax along one axis.
    Softmax {
        axis: usize,
    },
    LogSoftmax {
        axis: usize,
    },
    /// Normalize over dims `axis..rank`; operands: x, then scale if
    /// `has_scale`, then bias if `has_bias` (both broadcast to the
    /// normalized shape).
    LayerNorm {
        axis: usize,
        epsilon: f32,
        has_scale: bool,
        has_bias: bool,
    },
    /// Reduction over `axes` (sorted, unique); empty `axes` is the identity.
    Reduce {
        kind: ReduceKind,
        axes: Vec<usize>,
        keepdims: bool,
    },
    /// Index (i64) of the largest element along `axis`; ties pick the
    /// first index, or the last with `select_last_index`.
    ArgMax {
        axis: usize,
        keepdims: bool,
        select_last_index: bool,
    },
    /// Like [`OpKind::ArgMax`] for the smallest element.
    ArgMin {
        axis: usize,
        keepdims: bool,
        select_last_index: bool,
    },
    /// Running sum along `axis` (f64 accumulation for floats).
    CumSum {
        axis: usize,
        exclusive: bool,
        reverse: bool,
    },
    /// Running product along `axis` (f64 accumulation for floats).
    CumProd {
        axis: usize,
        exclusive: bool,
        reverse: bool,
    },
    /// Pad (or crop, with negative amounts) every dimension: output dim
    /// `i` is `low[i] + dim + high[i]`.
    Pad {
        low: Vec<i64>,
        high: Vec<i64>,
        mode: PadMode,
        value: f64,
    },
    /// `out[i] = data[i with i[axis] = indices[i]]` (ONNX GatherElements);
    /// the result has the indices' shape.
    GatherElements {
        axis: usize,
    },
    /// Indices (i64) of the `k` largest (or smallest) elements along
    /// `axis`, sorted by value (ties: lower index first).
    TopK {
        axis: usize,
        k: usize,
        largest: bool,
    },
    /// Operands: data, indices, updates (indices' shape). Writes
    /// `updates[p]` to `data[p with p[axis] = indices[p]]`.
    ScatterElements {
        axis: usize,
        reduction: ScatterReduction,
    },
    /// Operands: data, indices `[..., q]`, updates
    /// `indices.shape[..-1] + data.shape[q..]`; each index tuple selects a
    /// slice of data that receives the matching update slice.
    ScatterNd {
        reduction: ScatterReduction,
    },
    Transpose {
        perm: Vec<usize>,
    },
    Reshape {
        shape: Vec<usize>,
    },
    /// numpy broadcast to `shape`.
    Broadcast {
        shape: Vec<usize>,
    },
    /// Strided slice, one entry per dimension. Normalized: `step != 0`;
    /// element `i` of an axis is `start + i*step` for
    /// `i < max(0, ceil((end - start) / step))`; every selected index is in
    /// range (`start` in `0..dim` when non-empty, `end` in `-1..=dim`).
    Slice {
        starts: Vec<i64>,
        ends: Vec<i64>,
        steps: Vec<i64>,
    },
    Concat {
        axis: usize,
    },
    /// `data[..., indices, ...]` along `axis`; negative indices count from
    /// the end.
    Gather {
        axis: usize,
    },
    /// `select(cond, a, b)` = where cond then a else b (broadcasting).
    Select,
    /// Element type conversion. FP8 targets use `saturate` and `scale`
    /// (result value = fp8 * 2^scale).
    Cast {
        to: ElementType,
        saturate: bool,
        scale: i32,
    },
    /// Convolution (ONNX `Conv` without its bias): input `[N, C, S...]`,
    /// weights `[M, C/group, K...]` -> `[N, M, O...]`, over one or more
    /// spatial axes. `pads` holds each spatial axis's low pad, then each
    /// one's high pad. Floats accumulate in f64 and round once; integers
    /// accumulate exactly and wrap to the type (as [`OpKind::MatMul`]).
    Conv {
        strides: Vec<usize>,
        dilations: Vec<usize>,
        pads: Vec<usize>,
        group: usize,
    },
    /// Transposed convolution (ONNX `ConvTranspose` without its bias):
    /// input `[N, C, S...]`, weights `[C, M/group, K...]` -> `[N, M, O...]`
    /// with `O = (S - 1) * stride + output_padding + (K - 1) * dilation + 1
    /// - pads`.
    ConvTranspose {
        strides: Vec<usize>,
        dilations: Vec<usize>,
        pads: Vec<usize>,
        output_padding: Vec<usize>,
        group: usize,
    },
    /// The largest element of each window (`[N, C, S...]`); the padding
    /// takes no part. `ceil_mode` rounds the output size up (a window that
    /// would start in the high padding is dropped). With `indices`, the
    /// result is where that element is (i64, the first of equal ones): its
    /// row-major position in the whole input.
    MaxPool {
        kernel: Vec<usize>,
        strides: Vec<usize>,
        dilations: Vec<usize>,
        pads: Vec<usize>,
        ceil_mode: bool,
        indices: bool,
    },
    /// The mean of each window: over the taps inside the input, or with
    /// `count_include_pad` divided by the taps inside the padded input.
    AvgPool {
        kernel: Vec<usize>,
        strides: Vec<usize>,
        dilations: Vec<usize>,
        pads: Vec<usize>,
        ceil_mode: bool,
        count_include_pad: bool,
    },
    /// Interpolation to `shape`: nearest neighbour (its index rounding
    /// `nearest`), n-linear or n-cubic (`cubic_coeff_a`), antialiased when
    /// shrinking with `antialias`, taps outside the input dropped with
    /// `exclude_outside`; output position `x` of an axis reads input
    /// coordinate `coordinate(x, scale)`, edges clamped. A
    /// `TfCropAndResize` resizes the crop `roi` (each axis's start, then
    /// each one's end; empty for the other transformations) and reads
    /// `extrapolation_value` outside the input.
    Resize {
        shape: Vec<usize>,
        scales: Vec<f64>,
        coordinate: ResizeCoordinate,
        roi: Vec<f64>,
        extrapolation_value: f64,
        mode: ResizeMode,
        nearest: NearestMode,
        antialias: bool,
        cubic_coeff_a: f64,
        exclude_outside: bool,
    },
}

/// The elementwise binary ops (numpy broadcasting), as a pattern: one list
/// for [`OpKind::is_elementwise_binary`] and the type rule's match.
macro_rules! elementwise_binary {
    () => {
        OpKind::Add
            | OpKind::Sub
            | OpKind::Mul
            | OpKind::Div
            | OpKind::Max
            | OpKind::Min
            | OpKind::Pow
            | OpKind::Mod { .. }
            | OpKind::Equal
            | OpKind::Less
            | OpKind::Greater
            | OpKind::And
            | OpKind::Or
    };
}

/// The elementwise unary ops, as a pattern: one list for
/// [`OpKind::is_elementwise_unary`] and the type rule's match.
macro_rules! elementwise_unary {
    () => {
        OpKind::Not
            | OpKind::Neg
            | OpKind::Abs
            | OpKind::Exp
            | OpKind::Log
            | OpKind::Sqrt
            | OpKind::Rsqrt
            | OpKind::Reciprocal
            | OpKind::Tanh
            | OpKind::Erf
            | OpKind::Sigmoid
            | OpKind::Sin
            | OpKind::Cos
            | OpKind::Relu
            | OpKind::Floor
            | OpKind::Ceil
            | OpKind::Round
            | OpKind::Gelu { .. }
    };
}

impl OpKind {
    /// Dialect op name (without the `tensor.` prefix).
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Constant(_) => "constant",
            OpKind::MatMul => "matmul",
            OpKind::Add => "add",
            OpKind::Sub => "sub",
            OpKind::Mul => "mul",
            OpKind::Div => "div",
            OpKind::Max => "max",
            OpKind::Min => "min",
            OpKind::Pow => "pow",
            OpKind::Mod { .. } => "mod",
            OpKind::Floor => "floor",
            OpKind::Ceil => "ceil",
            OpKind::Round => "round",
            OpKind::ArgMax { .. } => "argmax",
            OpKind::ArgMin { .. } => "argmin",
            OpKind::CumSum { .. } => "cumsum",
            OpKind::CumProd { .. } => "cumprod",
            OpKind::Pad { .. } => "pad",
            OpKind::GatherElements { .. } => "gather_elements",
            OpKind::TopK { .. } => "topk",
            OpKind::ScatterElements { .. } => "scatter_elements",
            OpKind::ScatterNd { .. } => "scatter_nd",
            OpKind::Equal => "equal",
            OpKind::Less => "less",
            OpKind::Greater => "greater",
            OpKind::And => "and",
            OpKind::Or => "or",
            OpKind::Not => "not",
            OpKind::Neg => "neg",
            OpKind::Abs => "abs",
            OpKind::Exp => "exp",
            OpKind::Log => "log",
            OpKind::Sqrt => "sqrt",
            OpKind::Rsqrt => "rsqrt",
            OpKind::Reciprocal => "reciprocal",
            OpKind::Tanh => "tanh",
            OpKind::Erf => "erf",
            OpKind::Sigmoid => "sigmoid",
            OpKind::Sin => "sin",
            OpKind::Cos => "cos",
            OpKind::Relu => "relu",
            OpKind::Gelu { .. } => "gelu",
            OpKind::Softmax { .. } => "softmax",
            OpKind::LogSoftmax { .. } => "log_softmax",
            OpKind::LayerNorm { .. } => "layer_norm",
            OpKind::Reduce { kind, .. } => match kind {
                ReduceKind::Sum => "reduce_sum",
                ReduceKind::Mean => "reduce_mean",
                ReduceKind::Max => "reduce_max",
                ReduceKind::Min => "reduce_min",
                ReduceKind::Prod => "reduce_prod",
            },
            OpKind::Transpose { .. } => "transpose",
            OpKind::Reshape { .. } => "reshape",
            OpKind::Broadcast { .. } => "broadcast",
            OpKind::Slice { .. } => "slice",
            OpKind::Concat { .. } => "concat",
            OpKind::Gather { .. } => "gather",
            OpKind::Select => "select",
            OpKind::Cast { .. } => "cast",
            OpKind::Conv { .. } => "conv",
            OpKind::ConvTranspose { .. } => "conv_transpose",
            OpKind::MaxPool { .. } => "max_pool",
            OpKind::AvgPool { .. } => "avg_pool",
            OpKind::Resize { .. } => "resize",
        }
    }

    /// Attributes in MLIR-like syntax (`{axis = 1, keepdims = true}`), or
    /// an empty string. Constants print their type and element count.
    pub fn attributes(&self) -> String {
        fn list<T: std::fmt::Display>(v: &[T]) -> String {
            let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            format!("[{}]", items.join(", "))
        }
        let kv: Vec<(&str, String)> = match self {
            OpKind::Constant(t) => vec![
                ("type", t.ty().to_string()),
                ("elements", t.numel().to_string()),
            ],
            OpKind::Mod { fmod } => vec![("fmod", fmod.to_string())],
            OpKind::Gelu { approximate } => vec![(
                "approximate",
                match approximate {
                    GeluApproximation::None => "\"none\"".into(),
                    GeluApproximation::Tanh => "\"tanh\"".into(),
                },
            )],
            OpKind::Softmax { axis } | OpKind::LogSoftmax { axis } => {
                vec![("axis", axis.to_string())]
            }
            OpKind::Concat { axis } | OpKind::Gather { axis } => vec![("axis", axis.to_string())],
            OpKind::LayerNorm {
                axis,
                epsilon,
                has_scale,
                has_bias,
            } => vec![
                ("axis", axis.to_string()),
                ("epsilon", format!("{epsilon:e}")),
                ("scale", has_scale.to_string()),
                ("bias", has_bias.to_string()),
            ],
            OpKind::Reduce { axes, keepdims, .. } => {
                vec![("axes", list(axes)), ("keepdims", keepdims.to_string())]
            }
            OpKind::ArgMax {
                axis,
                keepdims,
                select_last_index,
            }
            | OpKind::ArgMin {
                axis,
                keepdims,
                select_last_index,
            } => vec![
                ("axis", axis.to_string()),
                ("keepdims", keepdims.to_string()),
                ("select_last_index", select_last_index.to_string()),
            ],
            OpKind::CumSum {
                axis,
                exclusive,
                reverse,
            }
            | OpKind::CumProd {
                axis,
                exclusive,
                reverse,
            } => vec![
                ("axis", axis.to_string()),
                ("exclusive", exclusive.to_string()),
                ("reverse", reverse.to_string()),
            ],
            OpKind::Transpose { perm } => vec![("perm", list(perm))],
            OpKind::Pad {
                low,
                high,
                mode,
                value,
            } => vec![
                ("low", list(low)),
                ("high", list(high)),
                (
                    "mode",
                    format!("\"{}\"", format!("{mode:?}").to_lowercase()),
                ),
                ("value", value.to_string()),
            ],
            OpKind::GatherElements { axis } => vec![("axis", axis.to_string())],
            OpKind::ScatterElements { axis, reduction } => vec![
                ("axis", axis.to_string()),
                (
                    "reduction",
                    format!("\"{}\"", format!("{reduction:?}").to_lowercase()),
                ),
            ],
            OpKind::ScatterNd { reduction } => vec![(
                "reduction",
                format!("\"{}\"", format!("{reduction:?}").to_lowercase()),
            )],
            OpKind::TopK { axis, k, largest } => vec![
                ("axis", axis.to_string()),
                ("k", k.to_string()),
                ("largest", largest.to_string()),
            ],
            OpKind::Reshape { shape } | OpKind::Broadcast { shape } => {
                vec![("shape", list(shape))]
            }
            OpKind::Slice {
                starts,
                ends,
                steps,
            } => vec![
                ("starts", list(starts)),
                ("ends", list(ends)),
                ("steps", list(steps)),
            ],
            OpKind::Cast {
                to,
                saturate,
                scale,
            } => vec![
                ("to", to.to_string()),
                ("saturate", saturate.to_string()),
                ("scale", scale.to_string()),
            ],
            OpKind::Conv {
                strides,
                dilations,
                pads,
                group,
            } => vec![
                ("strides", list(strides)),
                ("dilations", list(dilations)),
                ("pads", list(pads)),
                ("group", group.to_string()),
            ],
            OpKind::ConvTranspose {
                strides,
                dilations,
                pads,
                output_padding,
                group,
            } => vec![
                ("strides", list(strides)),
                ("dilations", list(dilations)),
                ("pads", list(pads)),
                ("output_padding", list(output_padding)),
                ("group", group.to_string()),
            ],
            OpKind::MaxPool {
                kernel,
                strides,
                dilations,
                pads,
                ceil_mode,
                indices,
            } => vec![
                ("kernel", list(kernel)),
                ("strides", list(strides)),
                ("dilations", list(dilations)),
                ("pads", list(pads)),
                ("ceil_mode", ceil_mode.to_string()),
                ("indices", indices.to_string()),
            ],
            OpKind::AvgPool {
                kernel,
                strides,
                dilations,
                pads,
                ceil_mode,
                count_include_pad,
            } => vec![
                ("kernel", list(kernel)),
                ("strides", list(strides)),
                ("dilations", list(dilations)),
                ("pads", list(pads)),
                ("ceil_mode", ceil_mode.to_string()),
                ("count_include_pad", count_include_pad.to_string()),
            ],
            OpKind::Resize { .. } => crate::resize::attributes(self),
            _ => vec![],
        };
        if kv.is_empty() {
            return String::new();
        }
        let items: Vec<String> = kv.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        format!("{{{}}}", items.join(", "))
    }

    /// True for elementwise binary ops (numpy broadcasting).
    pub fn is_elementwise_binary(&self) -> bool {
        matches!(self, elementwise_binary!())
    }

    /// True for elementwise unary ops.
    pub fn is_elementwise_unary(&self) -> bool {
        matches!(self, elementwise_unary!())
    }

    /// Number of operands this op takes.
    pub fn arity(&self) -> usize {
        match self {
            OpKind::Constant(_) => 0,
            OpKind::Select | OpKind::ScatterElements { .. } | OpKind::ScatterNd { .. } => 3,
            OpKind::LayerNorm {
                has_scale,
                has_bias,
                ..
            } => 1 + *has_scale as usize + *has_bias as usize,
            OpKind::MatMul
            | OpKind::Gather { .. }
            | OpKind::GatherElements { .. }
            | OpKind::Conv { .. }
            | OpKind::ConvTranspose { .. } => 2,
            OpKind::Concat { .. } => usize::MAX,
            o if o.is_elementwise_binary() => 2,
            _ => 1,
        }
    }
}

/// numpy broadcast of two shapes.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let r = a.len().max(b.len());
    let mut out = vec![0; r];
    for i in 0..r {
        let da = if i + a.len() >= r {
            a[i + a.len() - r]
        } else {
            1
        };
        let db = if i + b.len() >= r {
            b[i + b.len() - r]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return None;
        };
    }
    Some(out)
}

fn bcast(op: &'static str, a: &[usize], b: &[usize]) -> Result<Vec<usize>, EvalError> {
    broadcast_shapes(a, b)
        .ok_or_else(|| EvalError::shape(op, format!("cannot broadcast {a:?} with {b:?}")))
}

/// Largest element count of a tensor (an 8-byte-element allocation of
/// this size is still addressable).
pub const MAX_ELEMENTS: usize = (isize::MAX as usize) / 8;

fn checked_numel(op: &'static str, shape: &[usize]) -> Result<usize, EvalError> {
    shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= MAX_ELEMENTS)
        .ok_or_else(|| EvalError::shape(op, format!("shape {shape:?} is too large")))
}

/// Number of elements selected by a normalized slice of one axis.
pub fn slice_len(start: i64, end: i64, step: i64) -> usize {
    let (s, e, st) = (start as i128, end as i128, step as i128);
    let n = if st > 0 && e > s {
        (e - s + st - 1) / st
    } else if st < 0 && s > e {
        (s - e - st - 1) / -st
    } else {
        0
    };
    n.min(usize::MAX as i128) as usize
}

/// Normalize ONNX/numpy-style slice parameters for one axis of size `dim`:
/// negative `start`/`end` count from the end, then clamp (to `0..=dim` for
/// positive steps, `-1..=dim-1` for negative ones).
pub fn normalize_slice(start: i64, end: i64, step: i64, dim: usize) -> (i64, i64) {
    let d = dim as i64;
    let fix = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
    let (s, e) = (fix(start), fix(end));
    if step > 0 {
        (s.clamp(0, d), e.clamp(0, d))
    } else {
        (s.clamp(-1, d - 1), e.clamp(-1, d - 1))
    }
}

/// Result type of `op` applied to operands of the given types.
/// This is the verifier's shape/type rule; [`crate::evaluate`] applies it
/// before computing. The rules live in one function per family of ops.
pub fn infer_type(op: &OpKind, inputs: &[TensorType]) -> Result<TensorType, EvalError> {
    let name = op.name();
    check_arity(op, inputs)?;
    let out = match op {
        OpKind::Constant(t) => t.ty(),
        OpKind::MatMul => infer_matmul(name, &inputs[0], &inputs[1])?,
        elementwise_binary!() => infer_binary(op, &inputs[0], &inputs[1])?,
        elementwise_unary!() => infer_unary(op, &inputs[0])?,
        OpKind::ArgMax { axis, keepdims, .. } | OpKind::ArgMin { axis, keepdims, .. } => {
            infer_arg_reduce(name, &inputs[0], *axis, *keepdims)?
        }
        OpKind::CumSum { axis, .. } | OpKind::CumProd { axis, .. } => {
            axis_ok(name, *axis, inputs[0].shape.len())?;
            inputs[0].clone()
        }
        OpKind::TopK { axis, k, .. } => infer_topk(name, &inputs[0], *axis, *k)?,
        OpKind::Softmax { axis } | OpKind::LogSoftmax { axis } => {
            float_only(name, &inputs[0])?;
            axis_ok(name, *axis, inputs[0].shape.len())?;
            inputs[0].clone()
        }
        OpKind::LayerNorm { axis, .. } => infer_layer_norm(name, inputs, *axis)?,
        OpKind::Reduce {
            kind,
            axes,
            keepdims,
        } => infer_reduce(name, &inputs[0], *kind, axes, *keepdims)?,
        OpKind::Pad {
            low, high, mode, ..
        } => infer_pad(name, &inputs[0], low, high, *mode)?,
        OpKind::Transpose { perm } => infer_transpose(name, &inputs[0], perm)?,
        OpKind::Reshape { shape } => infer_reshape(name, &inputs[0], shape)?,
        OpKind::Broadcast { shape } => infer_broadcast(name, &inputs[0], shape)?,
        OpKind::Slice {
            starts,
            ends,
            steps,
        } => infer_slice(name, &inputs[0], starts, ends, steps)?,
        OpKind::Concat { axis } => infer_concat(name, inputs, *axis)?,
        OpKind::Gather { axis } => infer_gather(name, &inputs[0], &inputs[1], *axis)?,
        OpKind::GatherElements { axis } => {
            infer_gather_elements(name, &inputs[0], &inputs[1], *axis)?
        }
        OpKind::ScatterElements { axis, .. } => infer_scatter_elements(name, inputs, *axis)?,
        OpKind::ScatterNd { .. } => infer_scatter_nd(name, inputs)?,
        OpKind::Select => infer_select(name, inputs)?,
        OpKind::Cast { to, scale, .. } => infer_cast(name, &inputs[0], *to, *scale)?,
        OpKind::Conv { .. }
        | OpKind::ConvTranspose { .. }
        | OpKind::MaxPool { .. }
        | OpKind::AvgPool { .. } => crate::window::infer(op, inputs)?,
        OpKind::Resize {
            shape,
            scales,
            roi,
            coordinate,
            antialias,
            ..
        } => crate::resize::infer(
            name,
            &inputs[0],
            (shape, scales, roi),
            *coordinate,
            *antialias,
        )?,
    };
    checked_numel(name, &out.shape)?;
    Ok(out)
}

/// The operand count `op` takes (at least one for a variadic op).
fn check_arity(op: &OpKind, inputs: &[TensorType]) -> Result<(), EvalError> {
    let name = op.name();
    let arity = op.arity();
    if arity == usize::MAX {
        if inputs.is_empty() {
            return Err(EvalError::Arity {
                op: name,
                expected: "at least 1".into(),
                got: 0,
            });
        }
    } else if inputs.len() != arity {
        return Err(EvalError::Arity {
            op: name,
            expected: arity.to_string(),
            got: inputs.len(),
        });
    }
    Ok(())
}

fn float_only(name: &'static str, t: &TensorType) -> Result<(), EvalError> {
    if t.dtype.is_float() {
        Ok(())
    } else {
        Err(EvalError::ty(name, t.dtype, "expected a float type"))
    }
}

fn same_type(name: &'static str, a: &TensorType, b: &TensorType) -> Result<(), EvalError> {
    if a.dtype == b.dtype {
        Ok(())
    } else {
        Err(EvalError::ty(
            name,
            b.dtype,
            format!("operand types differ: {} vs {}", a.dtype, b.dtype),
        ))
    }
}

fn axis_ok(name: &'static str, axis: usize, rank: usize) -> Result<(), EvalError> {
    if axis < rank {
        Ok(())
    } else {
        Err(EvalError::attr(
            name,
            format!("axis {axis} out of range for rank {rank}"),
        ))
    }
}

/// Integer indices (not booleans).
fn integer_indices(name: &'static str, idx: &TensorType) -> Result<(), EvalError> {
    if idx.dtype.is_float() || idx.dtype == ElementType::I1 {
        return Err(EvalError::ty(name, idx.dtype, "indices must be integers"));
    }
    Ok(())
}

// ---- matmul and elementwise -----------------------------------------------------

fn infer_matmul(
    name: &'static str,
    a: &TensorType,
    b: &TensorType,
) -> Result<TensorType, EvalError> {
    let dtype = match (a.dtype, b.dtype) {
        // Two FP8 operands accumulate into f16, as the AMP's FP8 mode does.
        (x, y) if x.is_fp8() && y.is_fp8() => ElementType::F16,
        (x, y) if x == y => x,
        (x, y) if y.is_fp8() && x.is_float() => x,
        (x, y) if x.is_fp8() && y.is_float() => y,
        (x, y) => {
            return Err(EvalError::ty(
                name,
                y,
                format!("operand types differ: {x} vs {y}"),
            ))
        }
    };
    // Integers (not booleans) multiply exactly, wrapping to the type.
    if dtype == ElementType::I1 {
        return Err(EvalError::ty(
            name,
            dtype,
            "expected a float or integer type",
        ));
    }
    if a.shape.is_empty() || b.shape.is_empty() {
        return Err(EvalError::shape(name, "operands must have rank >= 1"));
    }
    let sa: Vec<usize> = if a.shape.len() == 1 {
        vec![1, a.shape[0]]
    } else {
        a.shape.clone()
    };
    let sb: Vec<usize> = if b.shape.len() == 1 {
        vec![b.shape[0], 1]
    } else {
        b.shape.clone()
    };
    let (m, k) = (sa[sa.len() - 2], sa[sa.len() - 1]);
    let (k2, n) = (sb[sb.len() - 2], sb[sb.len() - 1]);
    if k != k2 {
        return Err(EvalError::shape(
            name,
            format!(
                "contracting dimensions differ: {:?} x {:?}",
                a.shape, b.shape
            ),
        ));
    }
    let mut shape = bcast(name, &sa[..sa.len() - 2], &sb[..sb.len() - 2])?;
    if a.shape.len() > 1 {
        shape.push(m);
    }
    if b.shape.len() > 1 {
        shape.push(n);
    }
    Ok(TensorType::new(shape, dtype))
}

/// Elementwise binary ops, numpy broadcasting.
fn infer_binary(op: &OpKind, a: &TensorType, b: &TensorType) -> Result<TensorType, EvalError> {
    let name = op.name();
    let shape = || bcast(name, &a.shape, &b.shape);
    Ok(match op {
        // Any exponent type.
        OpKind::Pow => TensorType::new(shape()?, a.dtype),
        OpKind::And | OpKind::Or => {
            for t in [a, b] {
                if t.dtype != ElementType::I1 {
                    return Err(EvalError::ty(name, t.dtype, "expected i1"));
                }
            }
            TensorType::new(shape()?, ElementType::I1)
        }
        _ => {
            same_type(name, a, b)?;
            let shape = shape()?;
            let dtype = if matches!(op, OpKind::Equal | OpKind::Less | OpKind::Greater) {
                ElementType::I1
            } else {
                a.dtype
            };
            TensorType::new(shape, dtype)
        }
    })
}

/// Elementwise unary ops: the operand's type.
fn infer_unary(op: &OpKind, x: &TensorType) -> Result<TensorType, EvalError> {
    let name = op.name();
    match op {
        OpKind::Not if x.dtype != ElementType::I1 => {
            return Err(EvalError::ty(name, x.dtype, "expected i1"))
        }
        OpKind::Not => {}
        OpKind::Neg | OpKind::Abs | OpKind::Relu if x.dtype == ElementType::I1 => {
            return Err(EvalError::ty(name, x.dtype, ""))
        }
        OpKind::Neg | OpKind::Abs | OpKind::Relu => {}
        _ => float_only(name, x)?,
    }
    Ok(x.clone())
}

// ---- along axes -------------------------------------------------------------------

fn infer_arg_reduce(
    name: &'static str,
    x: &TensorType,
    axis: usize,
    keepdims: bool,
) -> Result<TensorType, EvalError> {
    axis_ok(name, axis, x.shape.len())?;
    let mut shape = x.shape.clone();
    if keepdims {
        shape[axis] = 1;
    } else {
        shape.remove(axis);
    }
    Ok(TensorType::new(shape, ElementType::I64))
}

fn infer_topk(
    name: &'static str,
    x: &TensorType,
    axis: usize,
    k: usize,
) -> Result<TensorType, EvalError> {
    axis_ok(name, axis, x.shape.len())?;
    if k > x.shape[axis] {
        return Err(EvalError::attr(
            name,
            format!("k = {k} exceeds dimension {}", x.shape[axis]),
        ));
    }
    let mut shape = x.shape.clone();
    shape[axis] = k;
    Ok(TensorType::new(shape, ElementType::I64))
}

fn infer_layer_norm(
    name: &'static str,
    inputs: &[TensorType],
    axis: usize,
) -> Result<TensorType, EvalError> {
    let x = &inputs[0];
    float_only(name, x)?;
    axis_ok(name, axis, x.shape.len())?;
    let norm = &x.shape[axis..];
    for p in &inputs[1..] {
        float_only(name, p)?;
        let b = bcast(name, norm, &p.shape)?;
        if b != norm {
            return Err(EvalError::shape(
                name,
                format!(
                    "scale/bias shape {:?} does not broadcast to {norm:?}",
                    p.shape
                ),
            ));
        }
    }
    Ok(x.clone())
}

fn infer_reduce(
    name: &'static str,
    x: &TensorType,
    kind: ReduceKind,
    axes: &[usize],
    keepdims: bool,
) -> Result<TensorType, EvalError> {
    if matches!(kind, ReduceKind::Mean) {
        float_only(name, x)?;
    }
    for w in axes.windows(2) {
        if w[0] >= w[1] {
            return Err(EvalError::attr(name, "axes must be sorted and unique"));
        }
    }
    for &a in axes {
        axis_ok(name, a, x.shape.len())?;
    }
    let shape = x
        .shape
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| {
            if axes.contains(&i) {
                keepdims.then_some(1)
            } else {
                Some(d)
            }
        })
        .collect();
    Ok(TensorType::new(shape, x.dtype))
}

// ---- layout -----------------------------------------------------------------------

fn infer_pad(
    name: &'static str,
    x: &TensorType,
    low: &[i64],
    high: &[i64],
    mode: PadMode,
) -> Result<TensorType, EvalError> {
    let r = x.shape.len();
    if low.len() != r || high.len() != r {
        return Err(EvalError::attr(name, format!("pads must have {r} entries")));
    }
    let mut shape = Vec::with_capacity(r);
    for i in 0..r {
        let d = (x.shape[i] as i64)
            .checked_add(low[i])
            .and_then(|v| v.checked_add(high[i]))
            .unwrap_or(-1);
        if d < 0 {
            return Err(EvalError::attr(name, "pads crop below zero"));
        }
        if d > 0 && x.shape[i] == 0 && mode != PadMode::Constant {
            return Err(EvalError::attr(name, "cannot pad an empty dimension"));
        }
        shape.push(d as usize);
    }
    Ok(TensorType::new(shape, x.dtype))
}

fn infer_transpose(
    name: &'static str,
    x: &TensorType,
    perm: &[usize],
) -> Result<TensorType, EvalError> {
    let mut seen = vec![false; x.shape.len()];
    if perm.len() != x.shape.len() {
        return Err(EvalError::attr(
            name,
            format!("perm {perm:?} does not match rank {}", x.shape.len()),
        ));
    }
    for &p in perm {
        if p >= seen.len() || seen[p] {
            return Err(EvalError::attr(
                name,
                format!("perm {perm:?} is not a permutation"),
            ));
        }
        seen[p] = true;
    }
    Ok(TensorType::new(
        perm.iter().map(|&p| x.shape[p]).collect(),
        x.dtype,
    ))
}

fn infer_reshape(
    name: &'static str,
    x: &TensorType,
    shape: &[usize],
) -> Result<TensorType, EvalError> {
    if checked_numel(name, shape)? != x.numel() {
        return Err(EvalError::shape(
            name,
            format!("cannot reshape {:?} to {shape:?}", x.shape),
        ));
    }
    Ok(TensorType::new(shape.to_vec(), x.dtype))
}

fn infer_broadcast(
    name: &'static str,
    x: &TensorType,
    shape: &[usize],
) -> Result<TensorType, EvalError> {
    checked_numel(name, shape)?;
    let b = bcast(name, &x.shape, shape)?;
    if b != shape {
        return Err(EvalError::shape(
            name,
            format!("cannot broadcast {:?} to {shape:?}", x.shape),
        ));
    }
    Ok(TensorType::new(shape.to_vec(), x.dtype))
}

fn infer_slice(
    name: &'static str,
    x: &TensorType,
    starts: &[i64],
    ends: &[i64],
    steps: &[i64],
) -> Result<TensorType, EvalError> {
    let r = x.shape.len();
    if starts.len() != r || ends.len() != r || steps.len() != r {
        return Err(EvalError::attr(
            name,
            format!("starts/ends/steps must have {r} entries"),
        ));
    }
    let mut shape = Vec::with_capacity(r);
    for i in 0..r {
        let (s, e, st, d) = (starts[i], ends[i], steps[i], x.shape[i] as i64);
        if st == 0 {
            return Err(EvalError::attr(name, "step must not be 0"));
        }
        let n = slice_len(s, e, st);
        if n > 0 {
            let last = s as i128 + (n as i128 - 1) * st as i128;
            if s < 0 || s >= d || last < 0 || last >= d as i128 {
                return Err(EvalError::attr(
                    name,
                    format!("slice {s}:{e}:{st} out of range for dimension {d}"),
                ));
            }
        }
        shape.push(n);
    }
    Ok(TensorType::new(shape, x.dtype))
}

fn infer_concat(
    name: &'static str,
    inputs: &[TensorType],
    axis: usize,
) -> Result<TensorType, EvalError> {
    let x = &inputs[0];
    axis_ok(name, axis, x.shape.len())?;
    let mut shape = x.shape.clone();
    for t in &inputs[1..] {
        same_type(name, x, t)?;
        let ok = t.shape.len() == x.shape.len()
            && t.shape
                .iter()
                .zip(&x.shape)
                .enumerate()
                .all(|(i, (a, b))| i == axis || a == b);
        if !ok {
            return Err(EvalError::shape(
                name,
                format!("operand shapes differ: {:?} vs {:?}", x.shape, t.shape),
            ));
        }
        shape[axis] += t.shape[axis];
    }
    Ok(TensorType::new(shape, x.dtype))
}

// ---- indexing, select, cast ---------------------------------------------------

fn infer_gather(
    name: &'static str,
    x: &TensorType,
    idx: &TensorType,
    axis: usize,
) -> Result<TensorType, EvalError> {
    axis_ok(name, axis, x.shape.len())?;
    integer_indices(name, idx)?;
    let mut shape = x.shape[..axis].to_vec();
    shape.extend_from_slice(&idx.shape);
    shape.extend_from_slice(&x.shape[axis + 1..]);
    Ok(TensorType::new(shape, x.dtype))
}

fn infer_gather_elements(
    name: &'static str,
    x: &TensorType,
    idx: &TensorType,
    axis: usize,
) -> Result<TensorType, EvalError> {
    axis_ok(name, axis, x.shape.len())?;
    integer_indices(name, idx)?;
    if idx.shape.len() != x.shape.len() {
        return Err(EvalError::shape(name, "indices must have the data's rank"));
    }
    Ok(TensorType::new(idx.shape.clone(), x.dtype))
}

fn infer_scatter_elements(
    name: &'static str,
    inputs: &[TensorType],
    axis: usize,
) -> Result<TensorType, EvalError> {
    let (x, idx, upd) = (&inputs[0], &inputs[1], &inputs[2]);
    axis_ok(name, axis, x.shape.len())?;
    integer_indices(name, idx)?;
    same_type(name, x, upd)?;
    if idx.shape != upd.shape || idx.shape.len() != x.shape.len() {
        return Err(EvalError::shape(
            name,
            "indices and updates must have one shape, of the data's rank",
        ));
    }
    if idx
        .shape
        .iter()
        .zip(&x.shape)
        .enumerate()
        .any(|(i, (a, b))| i != axis && a > b)
    {
        return Err(EvalError::shape(name, "indices exceed the data's shape"));
    }
    Ok(x.clone())
}

fn infer_scatter_nd(name: &'static str, inputs: &[TensorType]) -> Result<TensorType, EvalError> {
    let (x, idx, upd) = (&inputs[0], &inputs[1], &inputs[2]);
    integer_indices(name, idx)?;
    same_type(name, x, upd)?;
    let q = idx.shape.last().copied().unwrap_or(0);
    if idx.shape.is_empty() || q > x.shape.len() {
        return Err(EvalError::shape(
            name,
            "index depth exceeds the data's rank",
        ));
    }
    let mut want = idx.shape[..idx.shape.len() - 1].to_vec();
    want.extend_from_slice(&x.shape[q..]);
    if upd.shape != want {
        return Err(EvalError::shape(
            name,
            format!("updates shape {:?}, expected {want:?}", upd.shape),
        ));
    }
    Ok(x.clone())
}

fn infer_select(name: &'static str, inputs: &[TensorType]) -> Result<TensorType, EvalError> {
    let (c, a, b) = (&inputs[0], &inputs[1], &inputs[2]);
    if c.dtype != ElementType::I1 {
        return Err(EvalError::ty(name, c.dtype, "condition must be i1"));
    }
    same_type(name, a, b)?;
    let s = bcast(name, &c.shape, &a.shape)?;
    Ok(TensorType::new(bcast(name, &s, &b.shape)?, a.dtype))
}

fn infer_cast(
    name: &'static str,
    x: &TensorType,
    to: ElementType,
    scale: i32,
) -> Result<TensorType, EvalError> {
    if scale != 0 && !to.is_fp8() && !x.dtype.is_fp8() {
        return Err(EvalError::attr(name, "scale applies to FP8 casts only"));
    }
    if !(-64..=63).contains(&scale) {
        return Err(EvalError::attr(name, format!("scale {scale} out of range")));
    }
    Ok(TensorType::new(x.shape.clone(), to))
}

/// Shapes-only convenience for [`infer_type`].
pub fn infer_shape(op: &OpKind, inputs: &[TensorType]) -> Result<Vec<usize>, EvalError> {
    infer_type(op, inputs).map(|t| t.shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElementType::*;

    fn t(shape: &[usize], d: ElementType) -> TensorType {
        TensorType::new(shape.to_vec(), d)
    }

    #[test]
    fn matmul_shapes() {
        let r = infer_type(
            &OpKind::MatMul,
            &[t(&[2, 1, 3, 4], F32), t(&[5, 4, 6], F32)],
        )
        .unwrap();
        assert_eq!(r.shape, vec![2, 5, 3, 6]);
        let r = infer_type(&OpKind::MatMul, &[t(&[4], F32), t(&[3, 4, 6], F32)]).unwrap();
        assert_eq!(r.shape, vec![3, 6]);
        let r = infer_type(&OpKind::MatMul, &[t(&[3, 4], F32), t(&[4], F32)]).unwrap();
        assert_eq!(r.shape, vec![3]);
        assert!(infer_type(&OpKind::MatMul, &[t(&[3, 4], F32), t(&[5, 6], F32)]).is_err());
        let r = infer_type(&OpKind::MatMul, &[t(&[3, 4], F16), t(&[4, 2], F8E4M3FN)]).unwrap();
        assert_eq!(r.dtype, F16);
        let r = infer_type(
            &OpKind::MatMul,
            &[t(&[3, 4], F8E4M3FN), t(&[4, 2], F8E4M3FN)],
        )
        .unwrap();
        assert_eq!(r.dtype, F16);
        let r = infer_type(&OpKind::MatMul, &[t(&[3, 4], I32), t(&[4, 2], I32)]).unwrap();
        assert_eq!(r, t(&[3, 2], I32));
        assert!(infer_type(&OpKind::MatMul, &[t(&[3, 4], I32), t(&[4, 2], I64)]).is_err());
        assert!(infer_type(&OpKind::MatMul, &[t(&[3, 4], I1), t(&[4, 2], I1)]).is_err());
    }

    #[test]
    fn broadcasting_and_errors() {
        assert_eq!(broadcast_shapes(&[3, 1], &[4]).unwrap(), vec![3, 4]);
        assert!(broadcast_shapes(&[3], &[4]).is_none());
        assert!(infer_type(&OpKind::Add, &[t(&[3], F32), t(&[3], F16)]).is_err());
        assert!(infer_type(&OpKind::Add, &[t(&[3], F32)]).is_err());
        let r = infer_type(&OpKind::Less, &[t(&[2, 3], I64), t(&[3], I64)]).unwrap();
        assert_eq!(r, t(&[2, 3], I1));
    }

    #[test]
    fn slices() {
        assert_eq!(normalize_slice(-1, i64::MIN, -1, 5), (4, -1));
        assert_eq!(normalize_slice(1, 1000, 2, 5), (1, 5));
        assert_eq!(slice_len(4, -1, -1), 5);
        assert_eq!(slice_len(1, 5, 2), 2);
        let op = OpKind::Slice {
            starts: vec![4],
            ends: vec![-1],
            steps: vec![-2],
        };
        assert_eq!(infer_shape(&op, &[t(&[5], F32)]).unwrap(), vec![3]);
        let bad = OpKind::Slice {
            starts: vec![7],
            ends: vec![9],
            steps: vec![1],
        };
        assert!(infer_type(&bad, &[t(&[5], F32)]).is_err());
    }

    #[test]
    fn reduce_and_gather() {
        let op = OpKind::Reduce {
            kind: ReduceKind::Sum,
            axes: vec![0, 2],
            keepdims: false,
        };
        assert_eq!(infer_shape(&op, &[t(&[2, 3, 4], F32)]).unwrap(), vec![3]);
        let g = OpKind::Gather { axis: 1 };
        assert_eq!(
            infer_shape(&g, &[t(&[2, 3, 4], F32), t(&[5, 6], I64)]).unwrap(),
            vec![2, 5, 6, 4]
        );
    }
}
