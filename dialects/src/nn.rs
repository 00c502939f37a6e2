//! The `nn` dialect: value-semantics ops on ranked tensors, what a model is
//! (the design's `tensor` stage; named `nn` because upstream MLIR registers
//! a `tensor` dialect, and our generic output must stay valid upstream). Each op corresponds to one [`OpKind`] of the reference numerics; the
//! verifier checks result types with the reference's shape and type rules,
//! so the dialect and the interpreter cannot disagree.
//!
//! Every op is one `declare_op!`, which also gives its typed view (`Softmax`,
//! `Add`, ...); the op <-> [`OpKind`] mapping is one table (`kind.rs`).

use ipu_ir::context::{Context, Op, OperationState};
use ipu_ir::declare_op;
use ipu_ir::diag::Diagnostic;
use ipu_ir::numeric;
use ipu_ir::opdef::{
    constraints, AttrConstraint, Dialect, FoldResult, FoldValue, Trait, TypeConstraint, ValueDef,
};
use ipu_ir::printer::type_to_string;
use ipu_ir::rewrite::{RewritePattern, Rewriter};
use ipu_ir::types::{Attr, AttrKind, DenseData, Loc, Signedness, Type, TypeKind};
use ipu_ir::verify::op_error;
use ipu_reference::{ElementType, OpKind, Tensor, TensorData, TensorType};

mod kind;

pub use kind::{build_op, op_kind};

const TENSOR: TypeConstraint = constraints::ANY_TENSOR;
const I64_ATTR: AttrConstraint = AttrConstraint {
    description: "64-bit integer attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Integer { ty, .. } if *ty == Type::I64),
};
const I64_ARRAY: AttrConstraint = AttrConstraint {
    description: "array<i64: ...> attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::I64Array(_)),
};
/// A flag: present (unit, or `true`) or absent.
const FLAG_ATTR: AttrConstraint = AttrConstraint {
    description: "unit or bool attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Unit | AttrKind::Bool(_)),
};
const F32_ATTR: AttrConstraint = AttrConstraint {
    description: "f32 attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Float { ty, .. } if *ty == Type::F32),
};
const F64_ATTR: AttrConstraint = AttrConstraint {
    description: "f64 attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Float { ty, .. } if *ty == Type::F64),
};
const ELEMENTS_ATTR: AttrConstraint = AttrConstraint {
    description: "dense elements attribute",
    check: |cx, a| {
        matches!(
            cx.attr_kind(a),
            AttrKind::DenseElements { .. } | AttrKind::DenseResource { .. }
        )
    },
};
const GELU_APPROX: AttrConstraint = AttrConstraint {
    description: "\"none\" or \"tanh\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if &**s == "none" || &**s == "tanh"),
};

const RESULT: &[ValueDef] = &[ValueDef {
    name: "result",
    arity: ipu_ir::opdef::Arity::Single,
    constraint: TENSOR,
}];

const BINARY_FORMAT: &str = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
const UNARY_FORMAT: &str = "$input attr-dict `:` type($result)";
const CONVERT_FORMAT: &str = "$input attr-dict `:` type($input) `->` type($result)";
const INDEXED_FORMAT: &str =
    "$data `[` $indices `]` attr-dict `:` functional-type(operands, results)";
const SCATTER_FORMAT: &str =
    "$data `[` $indices `]` `,` $updates attr-dict `:` functional-type(operands, results)";

/// A tensor op: its declaration, with the verifier and folder every tensor
/// op shares (the reference's type rule and evaluation).
macro_rules! tensor_op {
    ($(#[$m:meta])* $stat:ident: $view:ident = $name:literal {
        operands: [$($operands:tt)*],
        $(variadic: [$($variadic:tt)*],)?
        attributes: [$($attrs:tt)*],
        $($field:ident: $value:expr),* $(,)?
    }) => {
        declare_op! {
            $(#[$m])*
            pub static $stat: $view = $name {
                operands: [$($operands)*],
                $(variadic: [$($variadic)*],)?
                attributes: [$($attrs)*],
                results: RESULT,
                verify: Some(verify_tensor_op),
                fold: Some(fold_tensor_op),
                $($field: $value,)*
            }
        }
    };
}

macro_rules! binary {
    ($stat:ident: $view:ident = $name:literal, $summary:literal $(, $tr:expr)*) => {
        tensor_op! {
            $stat: $view = $name {
                operands: [lhs: TENSOR, rhs: TENSOR],
                attributes: [],
                summary: $summary,
                traits: &[Trait::Pure $(, $tr)*],
                assembly_format: Some(BINARY_FORMAT),
            }
        }
    };
}

/// Ops of one input that share their attributes, traits and format.
macro_rules! input_ops {
    ($attrs:tt, $traits:expr, $format:expr; $($stat:ident: $view:ident = $name:literal, $summary:literal;)*) => {
        $(tensor_op! {
            $stat: $view = $name {
                operands: [input: TENSOR],
                attributes: $attrs,
                summary: $summary,
                traits: $traits,
                assembly_format: Some($format),
            }
        })*
    };
}

declare_op! {
    pub static CONSTANT: Constant = "nn.constant" {
        operands: [],
        attributes: [value: Attr [ELEMENTS_ATTR]],
        summary: "A constant tensor: inline dense elements or a named blob (dense_resource).",
        results: RESULT,
        traits: &[Trait::Pure, Trait::ConstantLike],
        custom_assembly: Some(ipu_ir::constant::CONSTANT_ASSEMBLY),
        verify: Some(ipu_ir::constant::verify_constant),
    }
}

tensor_op! {
    MATMUL: MatMul = "nn.matmul" {
        operands: [lhs: TENSOR, rhs: TENSOR],
        attributes: [],
        summary: "Matrix product with numpy semantics (batched, broadcasting batch dimensions). Operands may have \
                  different float element types (f16 activations, f8 weights: the result has the wider type); two \
                  FP8 operands give an f16 result, as the AMP's FP8 mode does. The product accumulates in f32 and is \
                  rounded once.",
        traits: &[Trait::Pure],
        assembly_format: Some(BINARY_FORMAT),
    }
}

binary!(ADD: Add = "nn.add", "Elementwise sum with numpy broadcasting.", Trait::Commutative);
binary!(SUB: Sub = "nn.sub", "Elementwise difference with numpy broadcasting.");
binary!(MUL: Mul = "nn.mul", "Elementwise product with numpy broadcasting.", Trait::Commutative);
binary!(DIV: Div = "nn.div", "Elementwise quotient with numpy broadcasting.");
binary!(MAX: Max = "nn.max", "Elementwise maximum with numpy broadcasting.", Trait::Commutative);
binary!(MIN: Min = "nn.min", "Elementwise minimum with numpy broadcasting.", Trait::Commutative);
binary!(POW: Pow = "nn.pow", "Elementwise power with numpy broadcasting.");
binary!(EQUAL: Equal = "nn.equal", "Elementwise equality, giving i1.", Trait::Commutative);
binary!(LESS: Less = "nn.less", "Elementwise less-than, giving i1.");
binary!(GREATER: Greater = "nn.greater", "Elementwise greater-than, giving i1.");
binary!(AND: And = "nn.and", "Elementwise logical and of i1 tensors.", Trait::Commutative);
binary!(OR: Or = "nn.or", "Elementwise logical or of i1 tensors.", Trait::Commutative);

input_ops! {
    [], &[Trait::Pure, Trait::SameOperandsAndResultType], UNARY_FORMAT;
    NOT: Not = "nn.not", "Elementwise logical not of an i1 tensor.";
    NEG: Neg = "nn.neg", "Elementwise negation.";
    ABS: Abs = "nn.abs", "Elementwise absolute value.";
    EXP: Exp = "nn.exp", "Elementwise exponential.";
    LOG: Log = "nn.log", "Elementwise natural logarithm.";
    SQRT: Sqrt = "nn.sqrt", "Elementwise square root.";
    RSQRT: Rsqrt = "nn.rsqrt", "Elementwise reciprocal square root.";
    RECIPROCAL: Reciprocal = "nn.reciprocal", "Elementwise reciprocal.";
    TANH: Tanh = "nn.tanh", "Elementwise hyperbolic tangent.";
    ERF: Erf = "nn.erf", "Elementwise error function.";
    SIGMOID: Sigmoid = "nn.sigmoid", "Elementwise logistic sigmoid.";
    RELU: Relu = "nn.relu", "Elementwise max(x, 0).";
    FLOOR: Floor = "nn.floor", "Elementwise round toward negative infinity.";
    CEIL: Ceil = "nn.ceil", "Elementwise round toward positive infinity.";
    ROUND: Round = "nn.round", "Elementwise round to nearest, ties to even.";
    SIN: Sin = "nn.sin", "Elementwise sine.";
    COS: Cos = "nn.cos", "Elementwise cosine.";
}

tensor_op! {
    MOD: Mod = "nn.mod" {
        operands: [lhs: TENSOR, rhs: TENSOR],
        attributes: [fmod: bool [FLAG_ATTR]],
        summary: "Elementwise remainder with numpy broadcasting: the sign of the divisor (Python's %), or of the \
                  dividend with `fmod` (C's fmod).",
        traits: &[Trait::Pure],
        assembly_format: Some(BINARY_FORMAT),
    }
}

input_ops! {
    [
        axis: i64 [I64_ATTR],
        keepdims: bool [FLAG_ATTR],
        select_last_index: bool [FLAG_ATTR],
    ],
    &[Trait::Pure],
    CONVERT_FORMAT;
    ARGMAX: ArgMax = "nn.argmax",
        "Index (i64) of the largest element along `axis` (the first, or the last with `select_last_index`).";
    ARGMIN: ArgMin = "nn.argmin",
        "Index (i64) of the smallest element along `axis` (the first, or the last with `select_last_index`).";
}

input_ops! {
    [
        axis: i64 [I64_ATTR],
        exclusive: bool [FLAG_ATTR],
        reverse: bool [FLAG_ATTR],
    ],
    &[Trait::Pure, Trait::SameOperandsAndResultType],
    UNARY_FORMAT;
    CUMSUM: CumSum = "nn.cumsum",
        "Running sum along `axis`; `exclusive` leaves out the current element, `reverse` runs from the end.";
    CUMPROD: CumProd = "nn.cumprod",
        "Running product along `axis`; `exclusive` leaves out the current element, `reverse` runs from the end.";
}

const PAD_MODE: AttrConstraint = AttrConstraint {
    description: "\"constant\", \"reflect\", \"edge\" or \"wrap\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if matches!(&**s, "constant" | "reflect" | "edge" | "wrap")),
};

tensor_op! {
    PAD: Pad = "nn.pad" {
        operands: [input: TENSOR],
        attributes: [
            low: &[i64] [I64_ARRAY],
            high: &[i64] [I64_ARRAY],
            mode: &str [PAD_MODE] = "constant",
            value: f64 [F64_ATTR] = 0.0,
        ],
        summary: "Pads each dimension with `low` and `high` elements (negative values crop): `value` in constant \
                  mode, else reflected, edge-repeated or wrapped elements.",
        traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
        assembly_format: Some(CONVERT_FORMAT),
    }
}

tensor_op! {
    GATHER_ELEMENTS: GatherElements = "nn.gather_elements" {
        operands: [data: TENSOR, indices: TENSOR],
        attributes: [axis: i64 [I64_ATTR]],
        summary: "result[i][j]... = data[...][indices[i][j]...][...] along `axis`; the result has the indices' shape.",
        traits: &[Trait::Pure],
        assembly_format: Some(INDEXED_FORMAT),
    }
}

tensor_op! {
    TOPK: TopK = "nn.topk" {
        operands: [input: TENSOR],
        attributes: [
            axis: i64 [I64_ATTR],
            k: i64 [I64_ATTR],
            largest: bool [FLAG_ATTR],
        ],
        summary: "Indices (i64) of the `k` largest (or, without `largest`, smallest) elements along `axis`, sorted \
                  by value, ties to the lower index.",
        traits: &[Trait::Pure],
        assembly_format: Some(CONVERT_FORMAT),
    }
}

const CONV_FORMAT: &str = "$input `,` $weights attr-dict `:` functional-type(operands, results)";

tensor_op! {
    CONV: Conv = "nn.conv" {
        operands: [input: TENSOR, weights: TENSOR],
        attributes: [
            strides: &[i64] [I64_ARRAY],
            dilations: &[i64] [I64_ARRAY],
            pads: &[i64] [I64_ARRAY],
            group: i64 [I64_ATTR],
        ],
        summary: "Convolution of `input` [N, C, spatial...] with `weights` [M, C/group, kernel...] -> [N, M, \
                  out...]; `pads` lists the low pads of the spatial axes, then the high pads.",
        traits: &[Trait::Pure],
        assembly_format: Some(CONV_FORMAT),
    }
}

tensor_op! {
    CONV_TRANSPOSE: ConvTranspose = "nn.conv_transpose" {
        operands: [input: TENSOR, weights: TENSOR],
        attributes: [
            strides: &[i64] [I64_ARRAY],
            dilations: &[i64] [I64_ARRAY],
            pads: &[i64] [I64_ARRAY],
            output_padding: &[i64] [I64_ARRAY],
            group: i64 [I64_ATTR],
        ],
        summary: "Transposed convolution of `input` [N, C, spatial...] with `weights` [C, M/group, kernel...] \
                  -> [N, M, out...]: each input element scattered through the kernel at `strides`.",
        traits: &[Trait::Pure],
        assembly_format: Some(CONV_FORMAT),
    }
}

tensor_op! {
    MAX_POOL: MaxPool = "nn.max_pool" {
        operands: [input: TENSOR],
        attributes: [
            kernel: &[i64] [I64_ARRAY],
            strides: &[i64] [I64_ARRAY],
            dilations: &[i64] [I64_ARRAY],
            pads: &[i64] [I64_ARRAY],
            ceil_mode: bool [FLAG_ATTR],
            indices: bool [FLAG_ATTR],
        ],
        summary: "The largest element of each window of `input` [N, C, spatial...]; the padding takes no part. With \
                  `indices`, where it is (i64): its row-major position in the whole input, the first of equal ones.",
        traits: &[Trait::Pure],
        assembly_format: Some(CONVERT_FORMAT),
    }
}

tensor_op! {
    AVG_POOL: AvgPool = "nn.avg_pool" {
        operands: [input: TENSOR],
        attributes: [
            kernel: &[i64] [I64_ARRAY],
            strides: &[i64] [I64_ARRAY],
            dilations: &[i64] [I64_ARRAY],
            pads: &[i64] [I64_ARRAY],
            ceil_mode: bool [FLAG_ATTR],
            count_include_pad: bool [FLAG_ATTR],
        ],
        summary: "The mean of each window of `input` [N, C, spatial...]: over the elements inside the input, or \
                  with `count_include_pad` over the window's part inside the padded input.",
        traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
        assembly_format: Some(CONVERT_FORMAT),
    }
}

const F64_ARRAY: AttrConstraint = AttrConstraint {
    description: "array of f64 attributes",
    check: |cx, a| match cx.attr_kind(a) {
        AttrKind::Array(items) => items
            .iter()
            .all(|&i| matches!(cx.attr_kind(i), AttrKind::Float { ty, .. } if *ty == Type::F64)),
        _ => false,
    },
};
const COORDINATE_MODE: AttrConstraint = AttrConstraint {
    description: "a coordinate transformation (\"half_pixel\", \"half_pixel_symmetric\", \"pytorch_half_pixel\", \
                  \"align_corners\" or \"asymmetric\")",
    check: |cx, a| {
        matches!(cx.attr_kind(a), AttrKind::String(s) if ipu_reference::ResizeCoordinate::from_name(s).is_some())
    },
};
const RESIZE_MODE: AttrConstraint = AttrConstraint {
    description: "\"nearest\", \"linear\" or \"cubic\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if ipu_reference::ResizeMode::from_name(s).is_some()),
};
const NEAREST_MODE: AttrConstraint = AttrConstraint {
    description: "\"round_prefer_floor\", \"round_prefer_ceil\", \"floor\" or \"ceil\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if ipu_reference::NearestMode::from_name(s).is_some()),
};

tensor_op! {
    RESIZE: Resize = "nn.resize" {
        operands: [input: TENSOR],
        attributes: [
            scales: Attr [F64_ARRAY],
            coordinate_transformation_mode: &str [COORDINATE_MODE] = "half_pixel",
            roi: Option<Attr> [F64_ARRAY],
            extrapolation_value: f64 [F64_ATTR] = 0.0,
            mode: &str [RESIZE_MODE] = "nearest",
            nearest_mode: &str [NEAREST_MODE] = "round_prefer_floor",
            antialias: bool [FLAG_ATTR],
            cubic_coeff_a: f64 [F64_ATTR] = -0.75,
            exclude_outside: bool [FLAG_ATTR],
        ],
        summary: "Resizes `input` to the result's shape: nearest neighbour (rounded by `nearest_mode`), n-linear \
                  or n-cubic (`cubic_coeff_a`; `antialias` widens the kernel when shrinking, `exclude_outside` \
                  drops taps outside the input); output position x reads the input at the coordinate the \
                  transformation gives for x and the axis's `scales` entry, edges clamped. \
                  \"tf_crop_and_resize\" resizes the crop `roi` (each axis's start, then each one's end) and \
                  reads `extrapolation_value` outside the input.",
        traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
        assembly_format: Some(CONVERT_FORMAT),
    }
}

const SCATTER_REDUCTION: AttrConstraint = AttrConstraint {
    description: "\"add\", \"mul\", \"max\" or \"min\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if matches!(&**s, "add" | "mul" | "max" | "min")),
};

tensor_op! {
    SCATTER_ELEMENTS: ScatterElements = "nn.scatter_elements" {
        operands: [data: TENSOR, indices: TENSOR, updates: TENSOR],
        attributes: [
            axis: i64 [I64_ATTR],
            reduction: Option<&str> [SCATTER_REDUCTION],
        ],
        summary:
            "Writes `updates[p]` to `data[p with p[axis] = indices[p]]` (or combines with `reduction`).",
        traits: &[Trait::Pure],
        assembly_format: Some(SCATTER_FORMAT),
    }
}

tensor_op! {
    SCATTER_ND: ScatterNd = "nn.scatter_nd" {
        operands: [data: TENSOR, indices: TENSOR, updates: TENSOR],
        attributes: [reduction: Option<&str> [SCATTER_REDUCTION]],
        summary: "Each index tuple (the last dimension of `indices`) selects a slice of `data` that receives the \
                  matching slice of `updates` (or is combined with it by `reduction`).",
        traits: &[Trait::Pure],
        assembly_format: Some(SCATTER_FORMAT),
    }
}

tensor_op! {
    GELU: Gelu = "nn.gelu" {
        operands: [input: TENSOR],
        attributes: [approximate: &str [GELU_APPROX] = "none"],
        summary:
            "GELU: 0.5x(1 + erf(x/sqrt 2)), or its tanh approximation with approximate = \"tanh\".",
        traits: &[Trait::Pure, Trait::SameOperandsAndResultType],
        assembly_format: Some(UNARY_FORMAT),
    }
}

input_ops! {
    [axis: i64 [I64_ATTR]],
    &[Trait::Pure, Trait::SameOperandsAndResultType],
    UNARY_FORMAT;
    SOFTMAX: Softmax = "nn.softmax",
        "Softmax along `axis`.";
    LOG_SOFTMAX: LogSoftmax = "nn.log_softmax",
        "Log-softmax along `axis`.";
}

tensor_op! {
    LAYER_NORM: LayerNorm = "nn.layer_norm" {
        operands: [input: TENSOR],
        variadic: [params: TENSOR],
        attributes: [axis: i64 [I64_ATTR], epsilon: f32 [F32_ATTR]],
        summary: "Layer normalization over dimensions `axis`..rank, with `epsilon`; optional scale, then optional bias \
                  operands broadcast to the normalized shape.",
        traits: &[Trait::Pure],
        assembly_format: Some("operands attr-dict `:` functional-type(operands, results)"),
    }
}

input_ops! {
    [axes: &[i64] [I64_ARRAY], keepdims: bool [FLAG_ATTR]],
    &[Trait::Pure, Trait::SameOperandsAndResultElementType],
    CONVERT_FORMAT;
    REDUCE_SUM: ReduceSum = "nn.reduce_sum",
        "Sum over `axes` (f64 accumulation); `keepdims` keeps them as size 1.";
    REDUCE_MEAN: ReduceMean = "nn.reduce_mean",
        "Mean over `axes`; `keepdims` keeps them as size 1.";
    REDUCE_MAX: ReduceMax = "nn.reduce_max",
        "Maximum over `axes`; `keepdims` keeps them as size 1.";
    REDUCE_MIN: ReduceMin = "nn.reduce_min",
        "Minimum over `axes`; `keepdims` keeps them as size 1.";
    REDUCE_PROD: ReduceProd = "nn.reduce_prod",
        "Product over `axes`; `keepdims` keeps them as size 1.";
}

tensor_op! {
    TRANSPOSE: Transpose = "nn.transpose" {
        operands: [input: TENSOR],
        attributes: [permutation: &[i64] [I64_ARRAY]],
        summary: "Permutes dimensions: result dimension i is input dimension permutation[i].",
        traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
        assembly_format: Some(CONVERT_FORMAT),
        canonicalization_patterns: Some(|| vec![Box::new(ComposeTransposes)]),
    }
}

tensor_op! {
    RESHAPE: Reshape = "nn.reshape" {
        operands: [input: TENSOR],
        attributes: [],
        summary: "Reinterprets the elements (row-major) with the result type's shape.",
        traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
        assembly_format: Some(CONVERT_FORMAT),
        canonicalization_patterns: Some(|| vec![Box::new(ComposeReshapes)]),
    }
}

tensor_op! {
    BROADCAST: Broadcast = "nn.broadcast" {
        operands: [input: TENSOR],
        attributes: [],
        summary: "Broadcasts to the result type's shape with numpy rules.",
        traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
        assembly_format: Some(CONVERT_FORMAT),
    }
}

tensor_op! {
    SLICE: Slice = "nn.slice" {
        operands: [input: TENSOR],
        attributes: [
            starts: &[i64] [I64_ARRAY],
            ends: &[i64] [I64_ARRAY],
            steps: &[i64] [I64_ARRAY],
        ],
        summary: "Strided slice: per dimension, elements start + i*step for i < ceil((end - start)/step), in range.",
        traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
        assembly_format: Some(CONVERT_FORMAT),
    }
}

tensor_op! {
    CONCAT: Concat = "nn.concat" {
        operands: [],
        variadic: [inputs: TENSOR],
        attributes: [axis: i64 [I64_ATTR]],
        summary: "Concatenates tensors of one element type along `axis`.",
        traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
        assembly_format: Some("$inputs attr-dict `:` functional-type(operands, results)"),
    }
}

tensor_op! {
    GATHER: Gather = "nn.gather" {
        operands: [data: TENSOR, indices: TENSOR],
        attributes: [axis: i64 [I64_ATTR]],
        summary: "Takes slices of `data` along `axis` at integer `indices` (embedding lookup); negative indices count \
                  from the end.",
        traits: &[Trait::Pure],
        assembly_format: Some(INDEXED_FORMAT),
    }
}

tensor_op! {
    SELECT: Select = "nn.select" {
        operands: [condition: TENSOR, lhs: TENSOR, rhs: TENSOR],
        attributes: [],
        summary: "Elementwise choice: where `condition` (i1) take `lhs`, else `rhs`, with numpy broadcasting.",
        traits: &[Trait::Pure],
        assembly_format: Some("$condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"),
    }
}

tensor_op! {
    CAST: Cast = "nn.cast" {
        operands: [input: TENSOR],
        attributes: [saturate: bool [FLAG_ATTR], scale: Option<i64> [I64_ATTR]],
        summary: "Converts elements to the result element type, rounding to nearest even. FP8 results use `saturate` \
                  (clamp to the largest finite value instead of overflowing) and `scale`: the FP8 value stored is \
                  x / 2^scale, so the logical value is fp8 * 2^scale.",
        traits: &[Trait::Pure],
        assembly_format: Some(CONVERT_FORMAT),
        canonicalization_patterns: Some(|| {
            vec![Box::new(LosslessCastRoundTrip), Box::new(CastBeforeView)]
        }),
    }
}

pub static NN_DIALECT: Dialect = Dialect {
    name: "nn",
    description: "Value-semantics ops on ranked tensors.",
    ops: &[
        &CONSTANT,
        &MATMUL,
        &ADD,
        &SUB,
        &MUL,
        &DIV,
        &MAX,
        &MIN,
        &POW,
        &EQUAL,
        &LESS,
        &GREATER,
        &AND,
        &OR,
        &NOT,
        &NEG,
        &ABS,
        &EXP,
        &LOG,
        &SQRT,
        &RSQRT,
        &RECIPROCAL,
        &TANH,
        &ERF,
        &SIGMOID,
        &RELU,
        &GELU,
        &SOFTMAX,
        &LOG_SOFTMAX,
        &LAYER_NORM,
        &REDUCE_SUM,
        &REDUCE_MEAN,
        &REDUCE_MAX,
        &REDUCE_MIN,
        &REDUCE_PROD,
        &TRANSPOSE,
        &RESHAPE,
        &BROADCAST,
        &SLICE,
        &CONCAT,
        &GATHER,
        &SELECT,
        &CAST,
        &FLOOR,
        &CEIL,
        &ROUND,
        &MOD,
        &ARGMAX,
        &ARGMIN,
        &CUMSUM,
        &CUMPROD,
        &PAD,
        &GATHER_ELEMENTS,
        &TOPK,
        &SIN,
        &COS,
        &SCATTER_ELEMENTS,
        &SCATTER_ND,
        &CONV,
        &CONV_TRANSPOSE,
        &MAX_POOL,
        &AVG_POOL,
        &RESIZE,
    ],
    materialize_constant: Some(materialize_constant),
};

/// `cast(view(x))` is `view(cast(x))` for a layout view (`nn.reshape`,
/// `nn.transpose`) that only the cast reads, when the cast does not widen:
/// converting each element before the view moves it gives the same values,
/// and the narrower elements are what the view then moves (a cast that
/// follows its producer's layout needs no exchange of its own).
struct CastBeforeView;

impl RewritePattern for CastBeforeView {
    fn root(&self) -> Option<&'static str> {
        Some(Cast::NAME)
    }
    fn name(&self) -> &'static str {
        "cast-before-view"
    }
    fn match_and_rewrite(&self, rw: &mut Rewriter<'_>, op: Op) -> bool {
        let cx = &*rw.cx;
        let input = Cast(op).input(cx);
        let Some(view) = cx
            .defining_op(input)
            .filter(|&d| Reshape::isa(cx, d) || Transpose::isa(cx, d))
        else {
            return false;
        };
        if cx.uses(input).len() != 1 || cx.num_results(view) != 1 || cx.operands(view).len() != 1 {
            return false;
        }
        let x = cx.operand(view, 0);
        let (Ok(from), Ok(to), Ok(xt)) = (
            tensor_type(cx, cx.value_type(input)),
            tensor_type(cx, cx.value_type(cx.result(op, 0))),
            tensor_type(cx, cx.value_type(x)),
        ) else {
            return false;
        };
        if to.dtype.byte_size() > from.dtype.byte_size() {
            return false;
        }
        let elem = cx
            .tensor_parts(cx.value_type(cx.result(op, 0)))
            .map(|(_, e)| e)
            .expect("a tensor");
        let (cast_attrs, cast_loc) = (cx.attrs(op), cx.op_loc(op));
        let (view_name, view_attrs, view_loc) = (cx.name(view), cx.attrs(view), cx.op_loc(view));
        let cast_name = cx.name(op);
        let xshape: Vec<i64> = xt.shape.iter().map(|&d| d as i64).collect();
        let vshape = cx.value_shape(input);
        let cast_ty = rw.cx.tensor_type(&xshape, elem);
        let view_ty = rw.cx.tensor_type(&vshape, elem);
        let mut st = OperationState::new(cast_name, cast_loc);
        st.operands.push(x);
        st.result_types.push(cast_ty);
        st.attrs = cast_attrs;
        let cast = rw.create_op_before(view, st);
        let mut st = OperationState::new(view_name, view_loc);
        st.operands.push(rw.cx.result(cast, 0));
        st.result_types.push(view_ty);
        st.attrs = view_attrs;
        let moved = rw.create_op_before(op, st);
        let v = rw.cx.result(moved, 0);
        rw.replace_op(op, &[v]);
        true
    }
}

// ---- types ------------------------------------------------------------------

/// The reference element type of an IR scalar type.
pub fn element_type(cx: &Context, t: Type) -> Option<ElementType> {
    Some(match cx.type_kind(t) {
        TypeKind::F32 => ElementType::F32,
        TypeKind::F16 => ElementType::F16,
        TypeKind::BF16 => ElementType::BF16,
        TypeKind::F64 => ElementType::F64,
        TypeKind::F8E4M3FN => ElementType::F8E4M3FN,
        TypeKind::F8E5M2 => ElementType::F8E5M2,
        TypeKind::Integer { width, signedness } => match (width, signedness) {
            (1, Signedness::Signless) => ElementType::I1,
            (8, Signedness::Signless | Signedness::Signed) => ElementType::I8,
            (16, Signedness::Signless | Signedness::Signed) => ElementType::I16,
            (32, Signedness::Signless | Signedness::Signed) => ElementType::I32,
            (64, Signedness::Signless | Signedness::Signed) => ElementType::I64,
            (8, Signedness::Unsigned) => ElementType::U8,
            (16, Signedness::Unsigned) => ElementType::U16,
            (32, Signedness::Unsigned) => ElementType::U32,
            (64, Signedness::Unsigned) => ElementType::U64,
            (4, Signedness::Signless | Signedness::Signed) => ElementType::I4,
            (2, Signedness::Signless | Signedness::Signed) => ElementType::I2,
            (4, Signedness::Unsigned) => ElementType::U4,
            (2, Signedness::Unsigned) => ElementType::U2,
            _ => return None,
        },
        _ => return None,
    })
}

/// The IR type of a reference element type (None for types the IR lacks).
pub fn ir_element_type(cx: &mut Context, e: ElementType) -> Option<Type> {
    let int = |cx: &mut Context, width, signedness| cx.ty(TypeKind::Integer { width, signedness });
    Some(match e {
        ElementType::F32 => Type::F32,
        ElementType::F16 => Type::F16,
        ElementType::BF16 => Type::BF16,
        ElementType::F64 => Type::F64,
        ElementType::F8E4M3FN => Type::F8E4M3FN,
        ElementType::F8E5M2 => Type::F8E5M2,
        ElementType::I1 => Type::I1,
        ElementType::I8 => Type::I8,
        ElementType::I16 => Type::I16,
        ElementType::I32 => Type::I32,
        ElementType::I64 => Type::I64,
        ElementType::U8 => int(cx, 8, Signedness::Unsigned),
        ElementType::U16 => int(cx, 16, Signedness::Unsigned),
        ElementType::U32 => int(cx, 32, Signedness::Unsigned),
        ElementType::U64 => int(cx, 64, Signedness::Unsigned),
        ElementType::I4 => int(cx, 4, Signedness::Signless),
        ElementType::I2 => int(cx, 2, Signedness::Signless),
        ElementType::U4 => int(cx, 4, Signedness::Unsigned),
        ElementType::U2 => int(cx, 2, Signedness::Unsigned),
        // The FNUZ, f4E2M1FN and f8E8M0FNU formats have no builtin type yet.
        _ => return None,
    })
}

/// Shape and element type of a statically shaped tensor type.
pub fn tensor_type(cx: &Context, t: Type) -> Result<TensorType, String> {
    let Some((shape, elem)) = cx.tensor_parts(t) else {
        return Err(format!(
            "expected a ranked tensor, got '{}'",
            type_to_string(cx, t)
        ));
    };
    if shape.iter().any(|&d| d < 0) {
        return Err(format!(
            "dynamic dimensions are not supported: '{}'",
            type_to_string(cx, t)
        ));
    }
    let dtype = element_type(cx, elem)
        .ok_or_else(|| format!("unsupported element type in '{}'", type_to_string(cx, t)))?;
    Ok(TensorType::new(
        shape.iter().map(|&d| d as usize).collect(),
        dtype,
    ))
}

pub fn ir_tensor_type(cx: &mut Context, t: &TensorType) -> Option<Type> {
    let e = ir_element_type(cx, t.dtype)?;
    let shape: Vec<i64> = t.shape.iter().map(|&d| d as i64).collect();
    Some(cx.tensor_type(&shape, e))
}

// ---- constants ------------------------------------------------------------------

/// The value of a `nn.constant` as a reference tensor.
pub fn constant_tensor(cx: &Context, op: Op) -> Result<Tensor, String> {
    let a = cx
        .get_attr(op, "value")
        .ok_or("requires attribute 'value'")?;
    elements_to_tensor(cx, a)
}

/// Decodes a dense elements (or resource) attribute.
pub fn elements_to_tensor(cx: &Context, a: Attr) -> Result<Tensor, String> {
    let (ty, splat, bytes): (Type, bool, &[u8]) = match cx.attr_kind(a) {
        AttrKind::DenseElements {
            ty,
            data: DenseData { splat, bytes },
        } => (*ty, *splat, bytes),
        AttrKind::DenseResource { ty, handle } => {
            let name = cx.str(*handle);
            let blob = cx.resources.get(name).ok_or_else(|| {
                format!("resource blob '{name}' is not present (missing weights file?)")
            })?;
            (*ty, false, &blob.data[..])
        }
        _ => return Err("expected a dense elements attribute".into()),
    };
    let tt = tensor_type(cx, ty)?;
    let (_, elem) = cx.tensor_parts(ty).expect("tensor type");
    let ek = cx.type_kind(elem);
    let width = numeric::storage_bytes(ek).ok_or("unsupported element type")?;
    ipu_reference::check_tensor_size("value", &tt.shape, tt.dtype).map_err(|e| e.to_string())?;
    let n = tt.numel();
    let available = bytes.len() / width;
    if (splat && available < 1) || (!splat && available != n) {
        return Err(format!(
            "elements hold {} bytes, but {} needs {}",
            bytes.len(),
            tt,
            n * width
        ));
    }
    let at = |i: usize| {
        let i = if splat { 0 } else { i };
        &bytes[i * width..(i + 1) * width]
    };
    let err = |e: ipu_reference::EvalError| e.to_string();
    if ek.is_float() {
        if let Some(fmt) = tt.dtype.fp8_format() {
            let codes: Vec<u8> = (0..n).map(|i| at(i)[0]).collect();
            return Tensor::from_fp8_codes(tt.shape, fmt, &codes, 0).map_err(err);
        }
        let vals: Vec<f32> = (0..n)
            .map(|i| numeric::float_from_bytes(ek, at(i)) as f32)
            .collect();
        Tensor::from_f32(tt.shape, tt.dtype, vals).map_err(err)
    } else {
        let signed = !matches!(
            ek,
            TypeKind::Integer {
                signedness: Signedness::Unsigned,
                ..
            }
        );
        let vals: Vec<i64> = (0..n)
            .map(|i| {
                let b = at(i);
                let mut buf = [0u8; 8];
                buf[..b.len()].copy_from_slice(b);
                let raw = i64::from_le_bytes(buf);
                let bits = (b.len() * 8) as u32;
                if signed && bits < 64 {
                    (raw << (64 - bits)) >> (64 - bits)
                } else {
                    raw
                }
            })
            .collect();
        Tensor::from_i64(tt.shape, tt.dtype, vals).map_err(err)
    }
}

/// Encodes a reference tensor as a dense elements attribute. FP8 tensors
/// store their codes (the scale is not part of the attribute).
pub fn elements_attr(cx: &mut Context, t: &Tensor) -> Option<Attr> {
    let ty = ir_tensor_type(cx, &t.ty())?;
    let (_, elem) = cx.tensor_parts(ty)?;
    let ek = cx.type_kind(elem).clone();
    let width = numeric::storage_bytes(&ek)?;
    let mut bytes = Vec::with_capacity(t.numel() * width);
    if let Some(codes) = t.fp8_codes() {
        bytes = codes;
    } else {
        match t.data() {
            TensorData::F32(v) => v
                .iter()
                .for_each(|&x| numeric::float_to_bytes(&ek, x as f64, &mut bytes)),
            TensorData::I64(v) => v
                .iter()
                .for_each(|&x| bytes.extend_from_slice(&x.to_le_bytes()[..width])),
        }
    }
    Some(dense_attr(cx, ty, bytes, width))
}

/// The dense elements attribute of tensor type `ty` (elements of `width`
/// bytes) holding `bytes`: a splat when every element is the same.
fn dense_attr(cx: &mut Context, ty: Type, mut bytes: Vec<u8>, width: usize) -> Attr {
    let splat = bytes.len() > width && bytes.chunks(width).all(|c| c == &bytes[..width]);
    if splat {
        bytes.truncate(width);
    }
    cx.attr(AttrKind::DenseElements {
        ty,
        data: DenseData {
            splat,
            bytes: bytes.into(),
        },
    })
}

/// The dense elements attribute of FP8 tensor type `ty` holding `codes`
/// (one byte an element, as [`elements_attr`] stores an FP8 tensor);
/// `None` when `ty` is not a tensor of one-byte elements of that count.
pub fn fp8_codes_attr(cx: &mut Context, ty: Type, codes: Vec<u8>) -> Option<Attr> {
    let (shape, elem) = cx.tensor_parts(ty)?;
    let n: i64 = shape.iter().product();
    let width = numeric::storage_bytes(cx.type_kind(elem))?;
    (width == 1 && usize::try_from(n).ok()? == codes.len()).then(|| dense_attr(cx, ty, codes, 1))
}

/// Every tensor op: its attributes make a valid [`OpKind`] and its result
/// type is the one the reference infers from the operand types.
fn verify_tensor_op(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let kind = op_kind(cx, op).map_err(|m| op_error(cx, op, m))?;
    let inputs = cx
        .operands(op)
        .iter()
        .map(|&v| tensor_type(cx, cx.value_type(v)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| op_error(cx, op, m))?;
    let out = ipu_reference::infer_type(&kind, &inputs).map_err(|e| op_error(cx, op, e))?;
    let actual =
        tensor_type(cx, cx.value_type(cx.result(op, 0))).map_err(|m| op_error(cx, op, m))?;
    if out != actual {
        return Err(op_error(
            cx,
            op,
            format!("result type should be {out}, but is {actual}"),
        ));
    }
    Ok(())
}

/// Largest constant a fold creates, in elements.
const MAX_FOLD_ELEMENTS: usize = 1 << 16;

/// Folds a tensor op whose operands are all constants by evaluating it with
/// the reference numerics; identity ops fold to their input.
fn fold_tensor_op(cx: &mut Context, op: Op, consts: &[Option<Attr>]) -> FoldResult {
    let Ok(kind) = op_kind(cx, op) else {
        return FoldResult::None;
    };
    // Identities.
    let input = cx.operands(op).first().copied();
    if let Some(input) = input {
        let same_type = cx.value_type(input) == cx.value_type(cx.result(op, 0));
        let fp8 = tensor_type(cx, cx.value_type(input)).is_ok_and(|t| t.dtype.is_fp8());
        let identity = match &kind {
            OpKind::Reshape { .. } | OpKind::Broadcast { .. } => same_type,
            OpKind::Transpose { perm } => perm.iter().enumerate().all(|(i, &p)| i == p),
            // An FP8 -> FP8 cast re-encodes at its own scale, whatever the
            // scale its input was made with: not an identity.
            OpKind::Cast { scale: 0, .. } => same_type && !fp8,
            _ => false,
        };
        if identity {
            return FoldResult::Replace(vec![FoldValue::Value(input)]);
        }
    }
    if consts.is_empty() || consts.iter().any(|c| c.is_none()) {
        return FoldResult::None;
    }
    let Ok(out_ty) = tensor_type(cx, cx.value_type(cx.result(op, 0))) else {
        return FoldResult::None;
    };
    if out_ty.numel() > MAX_FOLD_ELEMENTS {
        return FoldResult::None;
    }
    let Ok(inputs) = consts
        .iter()
        .map(|c| elements_to_tensor(cx, c.expect("checked")))
        .collect::<Result<Vec<_>, _>>()
    else {
        return FoldResult::None;
    };
    // FP8 operands carry their scale from the op that produced them; a folded
    // constant has scale 0, so only fold FP8 through scale-free casts.
    if inputs.iter().any(|t| t.dtype().is_fp8())
        || matches!(kind, OpKind::Cast { scale, .. } if scale != 0)
    {
        return FoldResult::None;
    }
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let Ok(result) = ipu_reference::evaluate(&kind, &refs) else {
        return FoldResult::None;
    };
    match elements_attr(cx, &result) {
        Some(a) => FoldResult::Replace(vec![FoldValue::Constant(a)]),
        None => FoldResult::None,
    }
}

fn materialize_constant(cx: &mut Context, value: Attr, ty: Type, loc: Loc) -> Option<Op> {
    if !matches!(
        cx.attr_kind(value),
        AttrKind::DenseElements { .. } | AttrKind::DenseResource { .. }
    ) {
        return None;
    }
    ipu_ir::constant::create_constant(cx, Constant::NAME, value, ty, loc)
}

// ---- canonicalization patterns ---------------------------------------------------

/// `transpose(transpose(x, p), q)` is `transpose(x, p∘q)`.
struct ComposeTransposes;

impl RewritePattern for ComposeTransposes {
    fn root(&self) -> Option<&'static str> {
        Some(Transpose::NAME)
    }
    fn name(&self) -> &'static str {
        "compose-transposes"
    }
    fn match_and_rewrite(&self, rw: &mut Rewriter<'_>, op: Op) -> bool {
        let cx = &*rw.cx;
        let outer = Transpose(op);
        let Some(inner) = cx
            .defining_op(outer.input(cx))
            .and_then(|d| Transpose::cast(cx, d))
        else {
            return false;
        };
        let (q, p) = (outer.permutation(cx), inner.permutation(cx));
        if p.len() != q.len() || q.iter().any(|&i| i < 0 || i as usize >= p.len()) {
            return false;
        }
        // Result dim i of the outer is inner dim q[i], which is input dim p[q[i]].
        let composed: Vec<i64> = q.iter().map(|&i| p[i as usize]).collect();
        let x = inner.input(cx);
        let a = rw.cx.i64_array_attr(composed);
        rw.cx.set_operand(op, 0, x);
        rw.cx.set_attr(op, "permutation", a);
        let loc = rw
            .cx
            .fused_loc(vec![rw.cx.op_loc(inner.op()), rw.cx.op_loc(op)]);
        rw.cx.set_op_loc(op, loc);
        rw.modified(op);
        true
    }
}

/// `reshape(reshape(x))` is one reshape of `x`.
struct ComposeReshapes;

impl RewritePattern for ComposeReshapes {
    fn root(&self) -> Option<&'static str> {
        Some(Reshape::NAME)
    }
    fn name(&self) -> &'static str {
        "compose-reshapes"
    }
    fn match_and_rewrite(&self, rw: &mut Rewriter<'_>, op: Op) -> bool {
        let cx = &*rw.cx;
        let Some(inner) = cx
            .defining_op(Reshape(op).input(cx))
            .and_then(|d| Reshape::cast(cx, d))
        else {
            return false;
        };
        let x = inner.input(cx);
        rw.cx.set_operand(op, 0, x);
        rw.modified(op);
        true
    }
}

/// Whether every value of `from` is exactly a value of `to`.
fn widens_exactly(from: ElementType, to: ElementType) -> bool {
    use ElementType::*;
    matches!(
        (from, to),
        (F8E4M3FN | F8E5M2, F16 | F32 | F64) | (F16 | BF16, F32 | F64) | (F32, F64)
    )
}

/// `cast(cast(x: A -> B) -> A)` is `x` when A -> B loses nothing.
struct LosslessCastRoundTrip;

impl RewritePattern for LosslessCastRoundTrip {
    fn root(&self) -> Option<&'static str> {
        Some(Cast::NAME)
    }
    fn name(&self) -> &'static str {
        "lossless-cast-round-trip"
    }
    fn match_and_rewrite(&self, rw: &mut Rewriter<'_>, op: Op) -> bool {
        let cx = &*rw.cx;
        let outer = Cast(op);
        let Some(inner) = cx
            .defining_op(outer.input(cx))
            .and_then(|d| Cast::cast(cx, d))
        else {
            return false;
        };
        if outer.scale(cx).is_some() || inner.scale(cx).is_some() {
            return false;
        }
        let x = inner.input(cx);
        let (Ok(a), Ok(b)) = (
            tensor_type(cx, cx.value_type(x)),
            tensor_type(cx, cx.value_type(outer.input(cx))),
        ) else {
            return false;
        };
        // FP8 x carries its producer's scale; the outer cast re-encodes at
        // scale 0, which is x itself only when that scale is 0 too.
        if cx.value_type(x) != cx.value_type(cx.result(op, 0))
            || !widens_exactly(a.dtype, b.dtype)
            || a.dtype.is_fp8()
        {
            return false;
        }
        rw.replace_op(op, &[x]);
        true
    }
}
