//! The `nn` ops <-> reference [`OpKind`]s, declared once: each row of
//! `op_kinds!` names an op's typed view and the `OpKind` it computes, each
//! field with the codec that reads it from the op (through the view's
//! accessor, whose name is also the attribute written back) or derives it
//! from the op's types. [`op_kind`] and [`build_op`] both follow from it.

use super::{
    constant_tensor, elements_attr, ir_tensor_type, tensor_type, Abs, Add, And, ArgMax, ArgMin,
    AvgPool, Broadcast, Cast, Ceil, Concat, Constant, Conv, ConvTranspose, Cos, CumProd, CumSum,
    Div, Equal, Erf, Exp, Floor, Gather, GatherElements, Gelu, Greater, LayerNorm, Less, Log,
    LogSoftmax, MatMul, Max, MaxPool, Min, Mod, Mul, Neg, Not, Or, Pad, Pow, Reciprocal, ReduceMax,
    ReduceMean, ReduceMin, ReduceProd, ReduceSum, Relu, Reshape, Resize, Round, Rsqrt,
    ScatterElements, ScatterNd, Select, Sigmoid, Sin, Slice, Softmax, Sqrt, Sub, Tanh, TopK,
    Transpose,
};
use ipu_ir::context::{Context, Op, OperationState, Value};
use ipu_ir::types::{Attr, Loc};
use ipu_reference::OpKind;

/// One field of an [`OpKind`] read from an op: `codec(accessor)` through the
/// view, or `codec()` from the op's types and operands.
macro_rules! read_field {
    ($cx:ident, $op:ident, $view:ident, $codec:ident ()) => {
        codec::$codec::read($cx, $op)?
    };
    ($cx:ident, $op:ident, $view:ident, $codec:ident ($acc:ident)) => {
        codec::$codec::read($cx, $op, stringify!($acc), $view.$acc($cx))?
    };
    ($cx:ident, $op:ident, $view:ident, = $fixed:path) => {
        $fixed
    };
}

/// The attribute a field writes, if it is read through an accessor and not
/// at its default.
macro_rules! write_field {
    ($cx:ident, $attrs:ident, $f:ident, $codec:ident ()) => {};
    ($cx:ident, $attrs:ident, $f:ident, $codec:ident ($acc:ident)) => {
        if let Some(a) = codec::$codec::write($cx, $f) {
            $attrs.push((stringify!($acc), a));
        }
    };
    ($cx:ident, $attrs:ident, $f:ident, = $fixed:path) => {};
}

macro_rules! op_kinds {
    ($(
        $view:ident => $variant:ident $({
            $( $f:ident $(: $codec:ident ( $($acc:ident)? ))? $(= $fixed:path)? ),* $(,)?
        })?;
    )*) => {
        /// The `OpKind` of an `nn` op other than `nn.constant`; `None` for
        /// an op the table does not hold.
        fn kind_of(cx: &Context, op: Op) -> Result<Option<OpKind>, String> {
            Ok(match cx.name_str(op) {
                $($view::NAME => {
                    #[allow(unused_variables)]
                    let view = $view(op);
                    Some(OpKind::$variant $({ $( $f: read_field!(cx, op, view, $($codec ($($acc)?))? $(= $fixed)?) ),* })?)
                })*
                _ => None,
            })
        }

        /// The op name and attributes of `kind` (not a constant).
        #[allow(unused_variables)]
        fn attrs_of(cx: &mut Context, kind: &OpKind) -> (&'static str, Vec<(&'static str, Attr)>) {
            let mut attrs = Vec::new();
            let name = match kind {
                $(OpKind::$variant $({ $( $f $(: $fixed)? ),* })? => {
                    $($( write_field!(cx, attrs, $f, $($codec ($($acc)?))? $(= $fixed)?); )*)?
                    $view::NAME
                })*
                OpKind::Constant(_) => Constant::NAME,
            };
            (name, attrs)
        }
    };
}

op_kinds! {
    MatMul => MatMul;
    Add => Add;
    Sub => Sub;
    Mul => Mul;
    Div => Div;
    Max => Max;
    Min => Min;
    Pow => Pow;
    Mod => Mod { fmod: flag(fmod) };
    Equal => Equal;
    Less => Less;
    Greater => Greater;
    And => And;
    Or => Or;
    Not => Not;
    Neg => Neg;
    Abs => Abs;
    Exp => Exp;
    Log => Log;
    Sqrt => Sqrt;
    Rsqrt => Rsqrt;
    Reciprocal => Reciprocal;
    Tanh => Tanh;
    Erf => Erf;
    Sigmoid => Sigmoid;
    Sin => Sin;
    Cos => Cos;
    Relu => Relu;
    Floor => Floor;
    Ceil => Ceil;
    Round => Round;
    Gelu => Gelu { approximate: gelu_approximation(approximate) };
    Softmax => Softmax { axis: axis(axis) };
    LogSoftmax => LogSoftmax { axis: axis(axis) };
    LayerNorm => LayerNorm {
        has_scale: has_scale(),
        has_bias: has_bias(),
        epsilon: epsilon(epsilon),
        axis: axis(axis),
    };
    ReduceSum => Reduce { kind = ipu_reference::ReduceKind::Sum, axes: sorted_axes(axes), keepdims: flag(keepdims) };
    ReduceMean => Reduce { kind = ipu_reference::ReduceKind::Mean, axes: sorted_axes(axes), keepdims: flag(keepdims) };
    ReduceMax => Reduce { kind = ipu_reference::ReduceKind::Max, axes: sorted_axes(axes), keepdims: flag(keepdims) };
    ReduceMin => Reduce { kind = ipu_reference::ReduceKind::Min, axes: sorted_axes(axes), keepdims: flag(keepdims) };
    ReduceProd => Reduce { kind = ipu_reference::ReduceKind::Prod, axes: sorted_axes(axes), keepdims: flag(keepdims) };
    ArgMax => ArgMax {
        axis: axis(axis),
        keepdims: flag(keepdims),
        select_last_index: flag(select_last_index),
    };
    ArgMin => ArgMin {
        axis: axis(axis),
        keepdims: flag(keepdims),
        select_last_index: flag(select_last_index),
    };
    CumSum => CumSum { axis: axis(axis), exclusive: flag(exclusive), reverse: flag(reverse) };
    CumProd => CumProd { axis: axis(axis), exclusive: flag(exclusive), reverse: flag(reverse) };
    Pad => Pad {
        low: i64s(low),
        high: i64s(high),
        mode: pad_mode(mode),
        value: pad_value(value),
    };
    GatherElements => GatherElements { axis: axis(axis) };
    TopK => TopK { k: count(k), axis: axis(axis), largest: flag(largest) };
    ScatterElements => ScatterElements {
        axis: axis(axis),
        reduction: scatter_reduction(reduction),
    };
    ScatterNd => ScatterNd { reduction: scatter_reduction(reduction) };
    Transpose => Transpose { perm: usizes(permutation) };
    Reshape => Reshape { shape: result_shape() };
    Broadcast => Broadcast { shape: result_shape() };
    Slice => Slice { starts: i64s(starts), ends: i64s(ends), steps: i64s(steps) };
    Concat => Concat { axis: axis(axis) };
    Gather => Gather { axis: axis(axis) };
    Select => Select;
    Cast => Cast { to: result_element(), scale: fp8_scale(scale), saturate: flag(saturate) };
    Conv => Conv {
        strides: usizes(strides),
        dilations: usizes(dilations),
        pads: usizes(pads),
        group: count(group),
    };
    ConvTranspose => ConvTranspose {
        strides: usizes(strides),
        dilations: usizes(dilations),
        pads: usizes(pads),
        output_padding: usizes(output_padding),
        group: count(group),
    };
    MaxPool => MaxPool {
        kernel: usizes(kernel),
        strides: usizes(strides),
        dilations: usizes(dilations),
        pads: usizes(pads),
        ceil_mode: flag(ceil_mode),
        indices: flag(indices),
    };
    AvgPool => AvgPool {
        kernel: usizes(kernel),
        strides: usizes(strides),
        dilations: usizes(dilations),
        pads: usizes(pads),
        ceil_mode: flag(ceil_mode),
        count_include_pad: flag(count_include_pad),
    };
    Resize => Resize {
        shape: result_shape(),
        scales: f64s(scales),
        coordinate: coordinate_mode(coordinate_transformation_mode),
        roi: optional_f64s(roi),
        extrapolation_value: pad_value(extrapolation_value),
        mode: resize_mode(mode),
        nearest: nearest_mode(nearest_mode),
        antialias: flag(antialias),
        cubic_coeff_a: cubic_coeff(cubic_coeff_a),
        exclude_outside: flag(exclude_outside),
    };
}

/// The reference op an IR `nn` op computes.
pub fn op_kind(cx: &Context, op: Op) -> Result<OpKind, String> {
    if let Some(c) = Constant::cast(cx, op) {
        return Ok(OpKind::Constant(constant_tensor(cx, c.op())?));
    }
    let name = cx.name_str(op);
    if !name.starts_with("nn.") {
        return Err(format!("'{name}' is not an nn op"));
    }
    kind_of(cx, op)?.ok_or_else(|| format!("unknown nn op '{name}'"))
}

/// Creates a `tensor` op computing `kind` on `operands`, its result type
/// inferred; for ops whose result shape is an attribute of the kind
/// (reshape, broadcast) or its element type (cast), those are used.
pub fn build_op(
    cx: &mut Context,
    kind: &OpKind,
    operands: &[Value],
    loc: Loc,
) -> Result<Op, String> {
    let in_types = operands
        .iter()
        .map(|&v| tensor_type(cx, cx.value_type(v)))
        .collect::<Result<Vec<_>, _>>()?;
    let out = ipu_reference::infer_type(kind, &in_types).map_err(|e| e.to_string())?;
    let result = ir_tensor_type(cx, &out)
        .ok_or_else(|| format!("result type {out} has no IR equivalent"))?;
    let (name, mut attrs) = attrs_of(cx, kind);
    if let OpKind::Constant(t) = kind {
        let a = elements_attr(cx, t).ok_or("constant element type has no IR equivalent")?;
        attrs.push(("value", a));
    }
    if cx.registry().lookup(name).is_none() {
        return Err(format!("no nn dialect op for '{}'", kind.name()));
    }
    let op_name = cx.op_name(name);
    let mut st = OperationState::new(op_name, loc);
    st.operands.extend_from_slice(operands);
    st.result_types.push(result);
    let entries = attrs.into_iter().map(|(n, a)| (cx.sym(n), a)).collect();
    st.attrs = cx.dict_attr(entries);
    Ok(cx.create_op(st))
}

/// How each `OpKind` field is read from an op and written back: `read`
/// takes the accessor's value (and its name, for messages), `write` gives
/// the attribute, or `None` where it is left out (a flag off, a default).
/// Fields derived from types or operands have `read(cx, op)` only.
mod codec {
    use super::super::tensor_type;
    use ipu_ir::context::{Context, Op};
    use ipu_ir::types::{Attr, Type};

    /// An axis, in range for the first operand's rank.
    pub mod axis {
        use super::*;
        pub fn read(cx: &Context, op: Op, _: &str, a: i64) -> Result<usize, String> {
            let rank = cx
                .operands(op)
                .first()
                .and_then(|&v| cx.tensor_parts(cx.value_type(v)))
                .map(|(s, _)| s.len())
                .unwrap_or(0);
            usize::try_from(a)
                .ok()
                .filter(|&a| a < rank.max(1))
                .ok_or_else(|| format!("axis {a} is out of range for rank {rank}"))
        }
        pub fn write(cx: &mut Context, a: &usize) -> Option<Attr> {
            Some(cx.i64_attr(*a as i64))
        }
    }

    pub mod flag {
        use super::*;
        pub fn read(_: &Context, _: Op, _: &str, f: bool) -> Result<bool, String> {
            Ok(f)
        }
        pub fn write(_: &mut Context, f: &bool) -> Option<Attr> {
            f.then_some(Attr::UNIT)
        }
    }

    /// A non-negative count.
    pub mod count {
        use super::*;
        pub fn read(_: &Context, _: Op, name: &str, k: i64) -> Result<usize, String> {
            usize::try_from(k).map_err(|_| format!("'{name}' must be non-negative"))
        }
        pub fn write(cx: &mut Context, k: &usize) -> Option<Attr> {
            Some(cx.i64_attr(*k as i64))
        }
    }

    pub mod i64s {
        use super::*;
        pub fn read(_: &Context, _: Op, _: &str, v: &[i64]) -> Result<Vec<i64>, String> {
            Ok(v.to_vec())
        }
        pub fn write(cx: &mut Context, v: &[i64]) -> Option<Attr> {
            Some(cx.i64_array_attr(v.to_vec()))
        }
    }

    /// Non-negative entries (a permutation).
    pub mod usizes {
        use super::*;
        pub fn read(_: &Context, _: Op, name: &str, v: &[i64]) -> Result<Vec<usize>, String> {
            v.iter()
                .map(|&x| {
                    usize::try_from(x).map_err(|_| format!("'{name}' holds a negative entry {x}"))
                })
                .collect()
        }
        pub fn write(cx: &mut Context, v: &[usize]) -> Option<Attr> {
            Some(cx.i64_array_attr(v.iter().map(|&a| a as i64).collect()))
        }
    }

    /// Reduction axes: non-negative, sorted and unique.
    pub mod sorted_axes {
        use super::*;
        pub fn read(cx: &Context, op: Op, name: &str, v: &[i64]) -> Result<Vec<usize>, String> {
            let axes = usizes::read(cx, op, name, v)?;
            if !axes.windows(2).all(|w| w[0] < w[1]) {
                return Err(format!("'{name}' must be sorted and unique"));
            }
            Ok(axes)
        }
        pub use usizes::write;
    }

    pub mod epsilon {
        use super::*;
        pub fn read(_: &Context, _: Op, _: &str, e: f32) -> Result<f32, String> {
            Ok(e)
        }
        pub fn write(cx: &mut Context, e: &f32) -> Option<Attr> {
            Some(cx.float_attr(*e as f64, Type::F32))
        }
    }

    pub mod gelu_approximation {
        use super::*;
        use ipu_reference::GeluApproximation;
        pub fn read(_: &Context, _: Op, _: &str, s: &str) -> Result<GeluApproximation, String> {
            Ok(match s {
                "tanh" => GeluApproximation::Tanh,
                _ => GeluApproximation::None,
            })
        }
        pub fn write(cx: &mut Context, a: &GeluApproximation) -> Option<Attr> {
            (*a == GeluApproximation::Tanh).then(|| cx.string_attr("tanh"))
        }
    }

    pub mod pad_mode {
        use super::*;
        use ipu_reference::PadMode;
        pub fn read(_: &Context, _: Op, _: &str, s: &str) -> Result<PadMode, String> {
            Ok(match s {
                "reflect" => PadMode::Reflect,
                "edge" => PadMode::Edge,
                "wrap" => PadMode::Wrap,
                _ => PadMode::Constant,
            })
        }
        pub fn write(cx: &mut Context, m: &PadMode) -> Option<Attr> {
            let name = match m {
                PadMode::Constant => return None,
                PadMode::Reflect => "reflect",
                PadMode::Edge => "edge",
                PadMode::Wrap => "wrap",
            };
            Some(cx.string_attr(name))
        }
    }

    /// A float that is 0 unless set, left out at 0 (a pad's fill, a crop's
    /// extrapolation value).
    pub mod pad_value {
        use super::*;
        pub fn read(_: &Context, _: Op, _: &str, v: f64) -> Result<f64, String> {
            Ok(v)
        }
        pub fn write(cx: &mut Context, v: &f64) -> Option<Attr> {
            (*v != 0.0).then(|| cx.float_attr(*v, Type::F64))
        }
    }

    pub mod scatter_reduction {
        use super::*;
        use ipu_reference::ScatterReduction;
        pub fn read(
            _: &Context,
            _: Op,
            _: &str,
            s: Option<&str>,
        ) -> Result<ScatterReduction, String> {
            Ok(match s {
                Some("add") => ScatterReduction::Add,
                Some("mul") => ScatterReduction::Mul,
                Some("max") => ScatterReduction::Max,
                Some("min") => ScatterReduction::Min,
                _ => ScatterReduction::None,
            })
        }
        pub fn write(cx: &mut Context, r: &ScatterReduction) -> Option<Attr> {
            let name = match r {
                ScatterReduction::None => return None,
                ScatterReduction::Add => "add",
                ScatterReduction::Mul => "mul",
                ScatterReduction::Max => "max",
                ScatterReduction::Min => "min",
            };
            Some(cx.string_attr(name))
        }
    }

    /// A list of f64s (resize scales).
    pub mod f64s {
        use super::*;
        use ipu_ir::types::AttrKind;
        pub fn read(cx: &Context, _: Op, name: &str, a: Attr) -> Result<Vec<f64>, String> {
            let AttrKind::Array(items) = cx.attr_kind(a) else {
                return Err(format!("'{name}' must be an array of f64"));
            };
            items
                .iter()
                .map(|&i| match cx.attr_kind(i) {
                    AttrKind::Float { bits, .. } => Ok(f64::from_bits(*bits)),
                    _ => Err(format!("'{name}' must be an array of f64")),
                })
                .collect()
        }
        pub fn write(cx: &mut Context, v: &[f64]) -> Option<Attr> {
            let items = v.iter().map(|&x| cx.float_attr(x, Type::F64)).collect();
            Some(cx.array_attr(items))
        }
    }

    /// An optional list of f64s (a resize's crop), empty when absent.
    pub mod optional_f64s {
        use super::*;
        pub fn read(cx: &Context, op: Op, name: &str, a: Option<Attr>) -> Result<Vec<f64>, String> {
            a.map_or(Ok(Vec::new()), |a| super::f64s::read(cx, op, name, a))
        }
        pub fn write(cx: &mut Context, v: &[f64]) -> Option<Attr> {
            if v.is_empty() {
                None
            } else {
                super::f64s::write(cx, v)
            }
        }
    }

    pub mod coordinate_mode {
        use super::*;
        use ipu_reference::ResizeCoordinate;
        pub fn read(_: &Context, _: Op, _: &str, s: &str) -> Result<ResizeCoordinate, String> {
            ResizeCoordinate::from_name(s)
                .ok_or_else(|| format!("unknown coordinate transformation `{s}`"))
        }
        pub fn write(cx: &mut Context, c: &ResizeCoordinate) -> Option<Attr> {
            (*c != ResizeCoordinate::HalfPixel).then(|| cx.string_attr(c.name()))
        }
    }

    pub mod resize_mode {
        use super::*;
        use ipu_reference::ResizeMode;
        pub fn read(_: &Context, _: Op, _: &str, s: &str) -> Result<ResizeMode, String> {
            ResizeMode::from_name(s).ok_or_else(|| format!("unknown resize mode `{s}`"))
        }
        pub fn write(cx: &mut Context, m: &ResizeMode) -> Option<Attr> {
            (*m != ResizeMode::Nearest).then(|| cx.string_attr(m.name()))
        }
    }

    /// A cubic resize's `a` (-0.75 is left out).
    pub mod cubic_coeff {
        use super::*;
        pub fn read(_: &Context, _: Op, _: &str, a: f64) -> Result<f64, String> {
            Ok(a)
        }
        pub fn write(cx: &mut Context, a: &f64) -> Option<Attr> {
            (*a != -0.75).then(|| cx.float_attr(*a, Type::F64))
        }
    }

    pub mod nearest_mode {
        use super::*;
        use ipu_reference::NearestMode;
        pub fn read(_: &Context, _: Op, _: &str, s: &str) -> Result<NearestMode, String> {
            NearestMode::from_name(s).ok_or_else(|| format!("unknown nearest mode `{s}`"))
        }
        pub fn write(cx: &mut Context, m: &NearestMode) -> Option<Attr> {
            (*m != NearestMode::RoundPreferFloor).then(|| cx.string_attr(m.name()))
        }
    }

    /// A cast's power-of-two scale: FP8 results only (0 is left out).
    pub mod fp8_scale {
        use super::*;
        pub fn read(cx: &Context, op: Op, _: &str, s: Option<i64>) -> Result<i32, String> {
            let scale = match s {
                Some(s) => i32::try_from(s).map_err(|_| "scale out of range".to_string())?,
                None => 0,
            };
            if scale != 0 && !super::result_element::read(cx, op)?.is_fp8() {
                return Err("'scale' applies only to FP8 results".into());
            }
            Ok(scale)
        }
        pub fn write(cx: &mut Context, s: &i32) -> Option<Attr> {
            (*s != 0).then(|| cx.i64_attr(*s as i64))
        }
    }

    /// The result's shape (reshape, broadcast).
    pub mod result_shape {
        use super::*;
        pub fn read(cx: &Context, op: Op) -> Result<Vec<usize>, String> {
            Ok(tensor_type(cx, cx.value_type(cx.result(op, 0)))?.shape)
        }
    }

    /// The result's element type (cast).
    pub mod result_element {
        use super::*;
        pub fn read(cx: &Context, op: Op) -> Result<ipu_reference::ElementType, String> {
            Ok(tensor_type(cx, cx.value_type(cx.result(op, 0)))?.dtype)
        }
    }

    /// A layer norm's optional scale and bias operands, after the input.
    pub mod has_scale {
        use super::*;
        pub fn read(cx: &Context, op: Op) -> Result<bool, String> {
            let n = cx.operands(op).len();
            if n > 3 {
                return Err(format!(
                    "takes the input and at most a scale and a bias, got {n} operands"
                ));
            }
            Ok(n >= 2)
        }
    }

    pub mod has_bias {
        use super::*;
        pub fn read(cx: &Context, op: Op) -> Result<bool, String> {
            Ok(cx.operands(op).len() == 3)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipu_ir::opdef::Registry;
    use ipu_ir::types::Type;
    use ipu_reference::{
        ElementType, GeluApproximation, PadMode, ReduceKind, ScatterReduction, Tensor,
    };
    use std::sync::Arc;

    /// Every row of the table read back as the kind it was built from.
    #[test]
    fn build_op_and_op_kind_are_inverses() {
        let mut registry = Registry::new();
        crate::register_all_dialects(&mut registry);
        let mut cx = Context::new(Arc::new(registry));
        let loc = cx.file_loc("t", 1, 1);
        let (x_ty, row_ty, idx_ty) = (
            cx.tensor_type(&[4, 8], Type::F32),
            cx.tensor_type(&[8], Type::F32),
            cx.tensor_type(&[4, 8], Type::I64),
        );
        let b = cx.create_detached_block(&[(x_ty, loc), (row_ty, loc), (idx_ty, loc)]);
        let (x, row, idx) = (
            cx.block_args(b)[0],
            cx.block_args(b)[1],
            cx.block_args(b)[2],
        );
        let cases: Vec<(OpKind, Vec<Value>)> = vec![
            (OpKind::Add, vec![x, x]),
            (OpKind::Mod { fmod: true }, vec![x, x]),
            (OpKind::Mod { fmod: false }, vec![x, x]),
            (
                OpKind::Gelu {
                    approximate: GeluApproximation::Tanh,
                },
                vec![x],
            ),
            (OpKind::LogSoftmax { axis: 1 }, vec![x]),
            (
                OpKind::LayerNorm {
                    axis: 1,
                    epsilon: 1e-5,
                    has_scale: true,
                    has_bias: true,
                },
                vec![x, row, row],
            ),
            (
                OpKind::Reduce {
                    kind: ReduceKind::Prod,
                    axes: vec![0, 1],
                    keepdims: true,
                },
                vec![x],
            ),
            (
                OpKind::ArgMin {
                    axis: 1,
                    keepdims: false,
                    select_last_index: true,
                },
                vec![x],
            ),
            (
                OpKind::CumProd {
                    axis: 0,
                    exclusive: true,
                    reverse: false,
                },
                vec![x],
            ),
            (
                OpKind::Pad {
                    low: vec![1, 0],
                    high: vec![0, -2],
                    mode: PadMode::Edge,
                    value: 0.0,
                },
                vec![x],
            ),
            (
                OpKind::Pad {
                    low: vec![1, 0],
                    high: vec![0, 2],
                    mode: PadMode::Constant,
                    value: 2.5,
                },
                vec![x],
            ),
            (
                OpKind::TopK {
                    axis: 1,
                    k: 3,
                    largest: true,
                },
                vec![x],
            ),
            (
                OpKind::ScatterElements {
                    axis: 1,
                    reduction: ScatterReduction::Max,
                },
                vec![x, idx, x],
            ),
            (OpKind::Transpose { perm: vec![1, 0] }, vec![x]),
            (OpKind::Reshape { shape: vec![32] }, vec![x]),
            (
                OpKind::Broadcast {
                    shape: vec![2, 4, 8],
                },
                vec![x],
            ),
            (
                OpKind::Slice {
                    starts: vec![3, 0],
                    ends: vec![-1, 8],
                    steps: vec![-2, 3],
                },
                vec![x],
            ),
            (OpKind::Concat { axis: 0 }, vec![x, x, x]),
            (OpKind::GatherElements { axis: 0 }, vec![x, idx]),
            (
                OpKind::Cast {
                    to: ElementType::F8E4M3FN,
                    saturate: true,
                    scale: -3,
                },
                vec![x],
            ),
            (
                OpKind::Constant(
                    Tensor::from_f32(vec![2], ElementType::F32, vec![1.0, 2.0]).unwrap(),
                ),
                vec![],
            ),
        ];
        for (kind, operands) in cases {
            let op = build_op(&mut cx, &kind, &operands, loc).unwrap();
            assert_eq!(op_kind(&cx, op), Ok(kind));
        }
    }
}
