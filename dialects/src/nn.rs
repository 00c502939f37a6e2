//! The `nn` dialect: value-semantics ops on ranked tensors, what a model is
//! (the design's `tensor` stage; named `nn` because upstream MLIR registers
//! a `tensor` dialect, and our generic output must stay valid upstream). Each op corresponds to one [`OpKind`] of the reference numerics; the
//! verifier checks result types with the reference's shape and type rules,
//! so the dialect and the interpreter cannot disagree.

use ipu_ir::context::{Context, Op, OperationState, Value};
use ipu_ir::diag::Diagnostic;
use ipu_ir::numeric;
use ipu_ir::opdef::{
    constraints, Arity, AttrConstraint, AttrDef, Dialect, FoldResult, FoldValue, OpDef, Trait,
    TypeConstraint, ValueDef,
};
use ipu_ir::printer::type_to_string;
use ipu_ir::rewrite::{RewritePattern, Rewriter};
use ipu_ir::types::{Attr, AttrKind, DenseData, Loc, Signedness, Type, TypeKind};
use ipu_ir::verify::op_error;
use ipu_reference::{
    ElementType, GeluApproximation, OpKind, PadMode, ReduceKind, ScatterReduction, Tensor,
    TensorData, TensorType,
};

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

const fn operand(name: &'static str) -> ValueDef {
    ValueDef {
        name,
        arity: Arity::Single,
        constraint: TENSOR,
    }
}
const RESULT: &[ValueDef] = &[operand("result")];
const AXIS: AttrDef = AttrDef {
    name: "axis",
    optional: false,
    constraint: I64_ATTR,
};

const BINARY_FORMAT: &str = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
const UNARY_FORMAT: &str = "$input attr-dict `:` type($result)";
const CONVERT_FORMAT: &str = "$input attr-dict `:` type($input) `->` type($result)";

macro_rules! binary {
    ($stat:ident, $name:literal, $summary:literal $(, $tr:expr)*) => {
        pub static $stat: OpDef = OpDef {
            name: $name,
            summary: $summary,
            operands: &[operand("lhs"), operand("rhs")],
            results: RESULT,
            traits: &[Trait::Pure $(, $tr)*],
            assembly_format: Some(BINARY_FORMAT),
            verify: Some(verify_tensor_op),
            fold: Some(fold_tensor_op),
            ..OpDef::EMPTY
        };
    };
}

macro_rules! unary {
    ($stat:ident, $name:literal, $summary:literal) => {
        pub static $stat: OpDef = OpDef {
            name: $name,
            summary: $summary,
            operands: &[operand("input")],
            results: RESULT,
            traits: &[Trait::Pure, Trait::SameOperandsAndResultType],
            assembly_format: Some(UNARY_FORMAT),
            verify: Some(verify_tensor_op),
            fold: Some(fold_tensor_op),
            ..OpDef::EMPTY
        };
    };
}

pub static CONSTANT: OpDef = OpDef {
    name: "nn.constant",
    summary: "A constant tensor: inline dense elements or a named blob (dense_resource).",
    results: RESULT,
    attributes: &[AttrDef {
        name: "value",
        optional: false,
        constraint: ELEMENTS_ATTR,
    }],
    traits: &[Trait::Pure, Trait::ConstantLike],
    custom_assembly: Some(ipu_ir::constant::CONSTANT_ASSEMBLY),
    verify: Some(ipu_ir::constant::verify_constant),
    ..OpDef::EMPTY
};

pub static MATMUL: OpDef = OpDef {
    name: "nn.matmul",
    summary: "Matrix product with numpy semantics (batched, broadcasting batch dimensions). Operands may have \
              different float element types (f16 activations, f8 weights: the result has the wider type); two \
              FP8 operands give an f16 result, as the AMP's FP8 mode does. The product accumulates in f32 and is \
              rounded once.",
    operands: &[operand("lhs"), operand("rhs")],
    results: RESULT,
    traits: &[Trait::Pure],
    assembly_format: Some(BINARY_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

binary!(
    ADD,
    "nn.add",
    "Elementwise sum with numpy broadcasting.",
    Trait::Commutative
);
binary!(
    SUB,
    "nn.sub",
    "Elementwise difference with numpy broadcasting."
);
binary!(
    MUL,
    "nn.mul",
    "Elementwise product with numpy broadcasting.",
    Trait::Commutative
);
binary!(
    DIV,
    "nn.div",
    "Elementwise quotient with numpy broadcasting."
);
binary!(
    MAX,
    "nn.max",
    "Elementwise maximum with numpy broadcasting.",
    Trait::Commutative
);
binary!(
    MIN,
    "nn.min",
    "Elementwise minimum with numpy broadcasting.",
    Trait::Commutative
);
binary!(POW, "nn.pow", "Elementwise power with numpy broadcasting.");
binary!(
    EQUAL,
    "nn.equal",
    "Elementwise equality, giving i1.",
    Trait::Commutative
);
binary!(LESS, "nn.less", "Elementwise less-than, giving i1.");
binary!(
    GREATER,
    "nn.greater",
    "Elementwise greater-than, giving i1."
);
binary!(
    AND,
    "nn.and",
    "Elementwise logical and of i1 tensors.",
    Trait::Commutative
);
binary!(
    OR,
    "nn.or",
    "Elementwise logical or of i1 tensors.",
    Trait::Commutative
);

unary!(NOT, "nn.not", "Elementwise logical not of an i1 tensor.");
unary!(NEG, "nn.neg", "Elementwise negation.");
unary!(ABS, "nn.abs", "Elementwise absolute value.");
unary!(EXP, "nn.exp", "Elementwise exponential.");
unary!(LOG, "nn.log", "Elementwise natural logarithm.");
unary!(SQRT, "nn.sqrt", "Elementwise square root.");
unary!(RSQRT, "nn.rsqrt", "Elementwise reciprocal square root.");
unary!(RECIPROCAL, "nn.reciprocal", "Elementwise reciprocal.");
unary!(TANH, "nn.tanh", "Elementwise hyperbolic tangent.");
unary!(ERF, "nn.erf", "Elementwise error function.");
unary!(SIGMOID, "nn.sigmoid", "Elementwise logistic sigmoid.");
unary!(RELU, "nn.relu", "Elementwise max(x, 0).");

unary!(
    FLOOR,
    "nn.floor",
    "Elementwise round toward negative infinity."
);
unary!(
    CEIL,
    "nn.ceil",
    "Elementwise round toward positive infinity."
);
unary!(
    ROUND,
    "nn.round",
    "Elementwise round to nearest, ties to even."
);

pub static MOD: OpDef = OpDef {
    name: "nn.mod",
    summary: "Elementwise remainder with numpy broadcasting: the sign of the divisor (Python's %), or of the \
              dividend with `fmod` (C's fmod).",
    operands: &[operand("lhs"), operand("rhs")],
    results: RESULT,
    attributes: &[AttrDef { name: "fmod", optional: true, constraint: FLAG_ATTR }],
    traits: &[Trait::Pure],
    assembly_format: Some(BINARY_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

const AXIS_FLAGS_FORMAT: &str = CONVERT_FORMAT;

pub static ARGMAX: OpDef = OpDef {
    name: "nn.argmax",
    summary: "Index (i64) of the largest element along `axis` (the first, or the last with `select_last_index`).",
    operands: &[operand("input")],
    results: RESULT,
    attributes: &[
        AXIS,
        AttrDef { name: "keepdims", optional: true, constraint: FLAG_ATTR },
        AttrDef { name: "select_last_index", optional: true, constraint: FLAG_ATTR },
    ],
    traits: &[Trait::Pure],
    assembly_format: Some(AXIS_FLAGS_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static ARGMIN: OpDef = OpDef {
    name: "nn.argmin",
    summary: "Index (i64) of the smallest element along `axis` (the first, or the last with `select_last_index`).",
    ..ARGMAX
};

pub static CUMSUM: OpDef = OpDef {
    name: "nn.cumsum",
    summary: "Running sum along `axis`; `exclusive` leaves out the current element, `reverse` runs from the end.",
    operands: &[operand("input")],
    results: RESULT,
    attributes: &[
        AXIS,
        AttrDef { name: "exclusive", optional: true, constraint: FLAG_ATTR },
        AttrDef { name: "reverse", optional: true, constraint: FLAG_ATTR },
    ],
    traits: &[Trait::Pure, Trait::SameOperandsAndResultType],
    assembly_format: Some(UNARY_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static CUMPROD: OpDef = OpDef {
    name: "nn.cumprod",
    summary: "Running product along `axis`; `exclusive` leaves out the current element, `reverse` runs from the end.",
    ..CUMSUM
};

const PAD_MODE: AttrConstraint = AttrConstraint {
    description: "\"constant\", \"reflect\", \"edge\" or \"wrap\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if matches!(&**s, "constant" | "reflect" | "edge" | "wrap")),
};

pub static PAD: OpDef = OpDef {
    name: "nn.pad",
    summary: "Pads each dimension with `low` and `high` elements (negative values crop): `value` in constant \
              mode, else reflected, edge-repeated or wrapped elements.",
    operands: &[operand("input")],
    results: RESULT,
    attributes: &[
        AttrDef { name: "low", optional: false, constraint: I64_ARRAY },
        AttrDef { name: "high", optional: false, constraint: I64_ARRAY },
        AttrDef { name: "mode", optional: true, constraint: PAD_MODE },
        AttrDef { name: "value", optional: true, constraint: F64_ATTR },
    ],
    traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
    assembly_format: Some(CONVERT_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static GATHER_ELEMENTS: OpDef = OpDef {
    name: "nn.gather_elements",
    summary: "result[i][j]... = data[...][indices[i][j]...][...] along `axis`; the result has the indices' shape.",
    operands: &[operand("data"), operand("indices")],
    results: RESULT,
    attributes: &[AXIS],
    traits: &[Trait::Pure],
    assembly_format: Some("$data `[` $indices `]` attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static TOPK: OpDef = OpDef {
    name: "nn.topk",
    summary: "Indices (i64) of the `k` largest (or, without `largest`, smallest) elements along `axis`, sorted \
              by value, ties to the lower index.",
    operands: &[operand("input")],
    results: RESULT,
    attributes: &[
        AXIS,
        AttrDef { name: "k", optional: false, constraint: I64_ATTR },
        AttrDef { name: "largest", optional: true, constraint: FLAG_ATTR },
    ],
    traits: &[Trait::Pure],
    assembly_format: Some(CONVERT_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

unary!(SIN, "nn.sin", "Elementwise sine.");
unary!(COS, "nn.cos", "Elementwise cosine.");

const SCATTER_REDUCTION: AttrConstraint = AttrConstraint {
    description: "\"add\", \"mul\", \"max\" or \"min\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if matches!(&**s, "add" | "mul" | "max" | "min")),
};

pub static SCATTER_ELEMENTS: OpDef = OpDef {
    name: "nn.scatter_elements",
    summary:
        "Writes `updates[p]` to `data[p with p[axis] = indices[p]]` (or combines with `reduction`).",
    operands: &[operand("data"), operand("indices"), operand("updates")],
    results: RESULT,
    attributes: &[
        AXIS,
        AttrDef {
            name: "reduction",
            optional: true,
            constraint: SCATTER_REDUCTION,
        },
    ],
    traits: &[Trait::Pure],
    assembly_format: Some(
        "$data `[` $indices `]` `,` $updates attr-dict `:` functional-type(operands, results)",
    ),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static SCATTER_ND: OpDef = OpDef {
    name: "nn.scatter_nd",
    summary: "Each index tuple (the last dimension of `indices`) selects a slice of `data` that receives the \
              matching slice of `updates` (or is combined with it by `reduction`).",
    operands: &[operand("data"), operand("indices"), operand("updates")],
    results: RESULT,
    attributes: &[AttrDef { name: "reduction", optional: true, constraint: SCATTER_REDUCTION }],
    traits: &[Trait::Pure],
    assembly_format: Some("$data `[` $indices `]` `,` $updates attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static GELU: OpDef = OpDef {
    name: "nn.gelu",
    summary:
        "GELU: 0.5x(1 + erf(x/sqrt 2)), or its tanh approximation with approximate = \"tanh\".",
    operands: &[operand("input")],
    results: RESULT,
    attributes: &[AttrDef {
        name: "approximate",
        optional: true,
        constraint: GELU_APPROX,
    }],
    traits: &[Trait::Pure, Trait::SameOperandsAndResultType],
    assembly_format: Some(UNARY_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static SOFTMAX: OpDef = OpDef {
    name: "nn.softmax",
    summary: "Softmax along `axis`.",
    operands: &[operand("input")],
    results: RESULT,
    attributes: &[AXIS],
    traits: &[Trait::Pure, Trait::SameOperandsAndResultType],
    assembly_format: Some(UNARY_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static LOG_SOFTMAX: OpDef = OpDef {
    name: "nn.log_softmax",
    summary: "Log-softmax along `axis`.",
    ..SOFTMAX
};

pub static LAYER_NORM: OpDef = OpDef {
    name: "nn.layer_norm",
    summary: "Layer normalization over dimensions `axis`..rank, with `epsilon`; optional scale, then optional bias \
              operands broadcast to the normalized shape.",
    operands: &[
        operand("input"),
        ValueDef { name: "params", arity: Arity::Variadic, constraint: TENSOR },
    ],
    results: RESULT,
    attributes: &[AXIS, AttrDef { name: "epsilon", optional: false, constraint: F32_ATTR }],
    traits: &[Trait::Pure],
    assembly_format: Some("operands attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

macro_rules! reduce {
    ($stat:ident, $name:literal, $summary:literal) => {
        pub static $stat: OpDef = OpDef {
            name: $name,
            summary: $summary,
            operands: &[operand("input")],
            results: RESULT,
            attributes: &[
                AttrDef {
                    name: "axes",
                    optional: false,
                    constraint: I64_ARRAY,
                },
                AttrDef {
                    name: "keepdims",
                    optional: true,
                    constraint: FLAG_ATTR,
                },
            ],
            traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
            assembly_format: Some(CONVERT_FORMAT),
            verify: Some(verify_tensor_op),
            fold: Some(fold_tensor_op),
            ..OpDef::EMPTY
        };
    };
}

reduce!(
    REDUCE_SUM,
    "nn.reduce_sum",
    "Sum over `axes` (f64 accumulation); `keepdims` keeps them as size 1."
);
reduce!(
    REDUCE_MEAN,
    "nn.reduce_mean",
    "Mean over `axes`; `keepdims` keeps them as size 1."
);
reduce!(
    REDUCE_MAX,
    "nn.reduce_max",
    "Maximum over `axes`; `keepdims` keeps them as size 1."
);
reduce!(
    REDUCE_MIN,
    "nn.reduce_min",
    "Minimum over `axes`; `keepdims` keeps them as size 1."
);
reduce!(
    REDUCE_PROD,
    "nn.reduce_prod",
    "Product over `axes`; `keepdims` keeps them as size 1."
);

pub static TRANSPOSE: OpDef = OpDef {
    name: "nn.transpose",
    summary: "Permutes dimensions: result dimension i is input dimension permutation[i].",
    operands: &[operand("input")],
    results: RESULT,
    attributes: &[AttrDef {
        name: "permutation",
        optional: false,
        constraint: I64_ARRAY,
    }],
    traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
    assembly_format: Some(CONVERT_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    canonicalization_patterns: Some(|| vec![Box::new(ComposeTransposes)]),
    ..OpDef::EMPTY
};

pub static RESHAPE: OpDef = OpDef {
    name: "nn.reshape",
    summary: "Reinterprets the elements (row-major) with the result type's shape.",
    operands: &[operand("input")],
    results: RESULT,
    traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
    assembly_format: Some(CONVERT_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    canonicalization_patterns: Some(|| vec![Box::new(ComposeReshapes)]),
    ..OpDef::EMPTY
};

pub static BROADCAST: OpDef = OpDef {
    name: "nn.broadcast",
    summary: "Broadcasts to the result type's shape with numpy rules.",
    operands: &[operand("input")],
    results: RESULT,
    traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
    assembly_format: Some(CONVERT_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static SLICE: OpDef = OpDef {
    name: "nn.slice",
    summary: "Strided slice: per dimension, elements start + i*step for i < ceil((end - start)/step), in range.",
    operands: &[operand("input")],
    results: RESULT,
    attributes: &[
        AttrDef { name: "starts", optional: false, constraint: I64_ARRAY },
        AttrDef { name: "ends", optional: false, constraint: I64_ARRAY },
        AttrDef { name: "steps", optional: false, constraint: I64_ARRAY },
    ],
    traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
    assembly_format: Some(CONVERT_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static CONCAT: OpDef = OpDef {
    name: "nn.concat",
    summary: "Concatenates tensors of one element type along `axis`.",
    operands: &[ValueDef {
        name: "inputs",
        arity: Arity::Variadic,
        constraint: TENSOR,
    }],
    results: RESULT,
    attributes: &[AXIS],
    traits: &[Trait::Pure, Trait::SameOperandsAndResultElementType],
    assembly_format: Some("$inputs attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static GATHER: OpDef = OpDef {
    name: "nn.gather",
    summary: "Takes slices of `data` along `axis` at integer `indices` (embedding lookup); negative indices count \
              from the end.",
    operands: &[operand("data"), operand("indices")],
    results: RESULT,
    attributes: &[AXIS],
    traits: &[Trait::Pure],
    assembly_format: Some("$data `[` $indices `]` attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

pub static SELECT: OpDef = OpDef {
    name: "nn.select",
    summary: "Elementwise choice: where `condition` (i1) take `lhs`, else `rhs`, with numpy broadcasting.",
    operands: &[operand("condition"), operand("lhs"), operand("rhs")],
    results: RESULT,
    traits: &[Trait::Pure],
    assembly_format: Some("$condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    ..OpDef::EMPTY
};

/// `cast(view(x))` is `view(cast(x))` for a layout view (`nn.reshape`,
/// `nn.transpose`) that only the cast reads, when the cast does not widen:
/// converting each element before the view moves it gives the same values,
/// and the narrower elements are what the view then moves (a cast that
/// follows its producer's layout needs no exchange of its own).
struct CastBeforeView;

impl RewritePattern for CastBeforeView {
    fn root(&self) -> Option<&'static str> {
        Some("nn.cast")
    }
    fn name(&self) -> &'static str {
        "cast-before-view"
    }
    fn match_and_rewrite(&self, rw: &mut Rewriter<'_>, op: Op) -> bool {
        let cx = &*rw.cx;
        let input = cx.operand(op, 0);
        let Some(view) = cx
            .defining_op(input)
            .filter(|&d| cx.is(d, "nn.reshape") || cx.is(d, "nn.transpose"))
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

pub static CAST: OpDef = OpDef {
    name: "nn.cast",
    summary: "Converts elements to the result element type, rounding to nearest even. FP8 results use `saturate` \
              (clamp to the largest finite value instead of overflowing) and `scale`: the FP8 value stored is \
              x / 2^scale, so the logical value is fp8 * 2^scale.",
    operands: &[operand("input")],
    results: RESULT,
    attributes: &[
        AttrDef { name: "saturate", optional: true, constraint: FLAG_ATTR },
        AttrDef { name: "scale", optional: true, constraint: I64_ATTR },
    ],
    traits: &[Trait::Pure],
    assembly_format: Some(CONVERT_FORMAT),
    verify: Some(verify_tensor_op),
    fold: Some(fold_tensor_op),
    canonicalization_patterns: Some(|| {
        vec![Box::new(LosslessCastRoundTrip), Box::new(CastBeforeView)]
    }),
    ..OpDef::EMPTY
};

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
    ],
    materialize_constant: Some(materialize_constant),
};

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

// ---- ops <-> OpKind -----------------------------------------------------------

fn int_attr(cx: &Context, op: Op, name: &str) -> Result<i64, String> {
    cx.get_int_attr(op, name)
        .and_then(|v| i64::try_from(v).ok())
        .ok_or_else(|| format!("requires integer attribute '{name}'"))
}

fn axis(cx: &Context, op: Op, rank: usize) -> Result<usize, String> {
    let a = int_attr(cx, op, "axis")?;
    usize::try_from(a)
        .ok()
        .filter(|&a| a < rank.max(1))
        .ok_or_else(|| format!("axis {a} is out of range for rank {rank}"))
}

fn usize_array(cx: &Context, op: Op, name: &str) -> Result<Vec<usize>, String> {
    let v = cx
        .get_i64_array_attr(op, name)
        .ok_or_else(|| format!("requires array<i64> attribute '{name}'"))?;
    v.iter()
        .map(|&x| usize::try_from(x).map_err(|_| format!("'{name}' holds a negative entry {x}")))
        .collect()
}

fn bool_attr(cx: &Context, op: Op, name: &str) -> bool {
    cx.get_attr(op, name).is_some_and(|a| a != Attr::FALSE)
}

fn scatter_reduction(cx: &Context, op: Op) -> ScatterReduction {
    match cx.get_str_attr(op, "reduction") {
        Some("add") => ScatterReduction::Add,
        Some("mul") => ScatterReduction::Mul,
        Some("max") => ScatterReduction::Max,
        Some("min") => ScatterReduction::Min,
        _ => ScatterReduction::None,
    }
}

fn scatter_reduction_name(r: ScatterReduction) -> Option<&'static str> {
    match r {
        ScatterReduction::None => None,
        ScatterReduction::Add => Some("add"),
        ScatterReduction::Mul => Some("mul"),
        ScatterReduction::Max => Some("max"),
        ScatterReduction::Min => Some("min"),
    }
}

/// The reference op an IR `nn` op computes.
pub fn op_kind(cx: &Context, op: Op) -> Result<OpKind, String> {
    let name = cx.name_str(op);
    let short = name
        .strip_prefix("nn.")
        .ok_or_else(|| format!("'{name}' is not an nn op"))?;
    let input_rank = || {
        cx.operands(op)
            .first()
            .and_then(|&v| cx.tensor_parts(cx.value_type(v)))
            .map(|(s, _)| s.len())
            .unwrap_or(0)
    };
    let result_shape = || -> Result<Vec<usize>, String> {
        let t = cx.value_type(cx.result(op, 0));
        Ok(tensor_type(cx, t)?.shape)
    };
    Ok(match short {
        "constant" => OpKind::Constant(constant_tensor(cx, op)?),
        "matmul" => OpKind::MatMul,
        "add" => OpKind::Add,
        "sub" => OpKind::Sub,
        "mul" => OpKind::Mul,
        "div" => OpKind::Div,
        "max" => OpKind::Max,
        "min" => OpKind::Min,
        "pow" => OpKind::Pow,
        "equal" => OpKind::Equal,
        "less" => OpKind::Less,
        "greater" => OpKind::Greater,
        "and" => OpKind::And,
        "or" => OpKind::Or,
        "not" => OpKind::Not,
        "neg" => OpKind::Neg,
        "abs" => OpKind::Abs,
        "exp" => OpKind::Exp,
        "log" => OpKind::Log,
        "sqrt" => OpKind::Sqrt,
        "rsqrt" => OpKind::Rsqrt,
        "reciprocal" => OpKind::Reciprocal,
        "tanh" => OpKind::Tanh,
        "erf" => OpKind::Erf,
        "sigmoid" => OpKind::Sigmoid,
        "relu" => OpKind::Relu,
        "gelu" => OpKind::Gelu {
            approximate: match cx.get_str_attr(op, "approximate") {
                Some("tanh") => GeluApproximation::Tanh,
                _ => GeluApproximation::None,
            },
        },
        "softmax" => OpKind::Softmax {
            axis: axis(cx, op, input_rank())?,
        },
        "log_softmax" => OpKind::LogSoftmax {
            axis: axis(cx, op, input_rank())?,
        },
        "layer_norm" => {
            let n = cx.operands(op).len();
            if n > 3 {
                return Err(format!(
                    "takes the input and at most a scale and a bias, got {n} operands"
                ));
            }
            let eps = match cx.get_attr(op, "epsilon").map(|a| cx.attr_kind(a)) {
                Some(AttrKind::Float { bits, .. }) => f64::from_bits(*bits) as f32,
                _ => return Err("requires f32 attribute 'epsilon'".into()),
            };
            OpKind::LayerNorm {
                axis: axis(cx, op, input_rank())?,
                epsilon: eps,
                has_scale: n >= 2,
                has_bias: n == 3,
            }
        }
        "reduce_sum" | "reduce_mean" | "reduce_max" | "reduce_min" | "reduce_prod" => {
            let kind = match short {
                "reduce_sum" => ReduceKind::Sum,
                "reduce_mean" => ReduceKind::Mean,
                "reduce_max" => ReduceKind::Max,
                "reduce_prod" => ReduceKind::Prod,
                _ => ReduceKind::Min,
            };
            let mut axes = usize_array(cx, op, "axes")?;
            if !axes.windows(2).all(|w| w[0] < w[1]) {
                return Err("'axes' must be sorted and unique".into());
            }
            axes.dedup();
            OpKind::Reduce {
                kind,
                axes,
                keepdims: bool_attr(cx, op, "keepdims"),
            }
        }
        "transpose" => OpKind::Transpose {
            perm: usize_array(cx, op, "permutation")?,
        },
        "reshape" => OpKind::Reshape {
            shape: result_shape()?,
        },
        "broadcast" => OpKind::Broadcast {
            shape: result_shape()?,
        },
        "slice" => {
            let get = |n| {
                cx.get_i64_array_attr(op, n)
                    .map(|v| v.to_vec())
                    .ok_or(format!("requires array<i64> attribute '{n}'"))
            };
            OpKind::Slice {
                starts: get("starts")?,
                ends: get("ends")?,
                steps: get("steps")?,
            }
        }
        "concat" => OpKind::Concat {
            axis: axis(cx, op, input_rank())?,
        },
        "gather" => OpKind::Gather {
            axis: axis(cx, op, input_rank())?,
        },
        "select" => OpKind::Select,
        "sin" => OpKind::Sin,
        "cos" => OpKind::Cos,
        "scatter_elements" => OpKind::ScatterElements {
            axis: axis(cx, op, input_rank())?,
            reduction: scatter_reduction(cx, op),
        },
        "scatter_nd" => OpKind::ScatterNd {
            reduction: scatter_reduction(cx, op),
        },
        "floor" => OpKind::Floor,
        "ceil" => OpKind::Ceil,
        "round" => OpKind::Round,
        "mod" => OpKind::Mod {
            fmod: bool_attr(cx, op, "fmod"),
        },
        "argmax" | "argmin" => {
            let (axis, keepdims, select_last_index) = (
                axis(cx, op, input_rank())?,
                bool_attr(cx, op, "keepdims"),
                bool_attr(cx, op, "select_last_index"),
            );
            if short == "argmax" {
                OpKind::ArgMax {
                    axis,
                    keepdims,
                    select_last_index,
                }
            } else {
                OpKind::ArgMin {
                    axis,
                    keepdims,
                    select_last_index,
                }
            }
        }
        "cumsum" | "cumprod" => {
            let (axis, exclusive, reverse) = (
                axis(cx, op, input_rank())?,
                bool_attr(cx, op, "exclusive"),
                bool_attr(cx, op, "reverse"),
            );
            if short == "cumsum" {
                OpKind::CumSum {
                    axis,
                    exclusive,
                    reverse,
                }
            } else {
                OpKind::CumProd {
                    axis,
                    exclusive,
                    reverse,
                }
            }
        }
        "pad" => {
            let get = |n| {
                cx.get_i64_array_attr(op, n)
                    .map(|v| v.to_vec())
                    .ok_or(format!("requires array<i64> attribute '{n}'"))
            };
            let mode = match cx.get_str_attr(op, "mode").unwrap_or("constant") {
                "reflect" => PadMode::Reflect,
                "edge" => PadMode::Edge,
                "wrap" => PadMode::Wrap,
                _ => PadMode::Constant,
            };
            let value = match cx.get_attr(op, "value").map(|a| cx.attr_kind(a)) {
                Some(AttrKind::Float { bits, .. }) => f64::from_bits(*bits),
                _ => 0.0,
            };
            OpKind::Pad {
                low: get("low")?,
                high: get("high")?,
                mode,
                value,
            }
        }
        "gather_elements" => OpKind::GatherElements {
            axis: axis(cx, op, input_rank())?,
        },
        "topk" => {
            let k = usize::try_from(int_attr(cx, op, "k")?)
                .map_err(|_| "'k' must be non-negative".to_string())?;
            OpKind::TopK {
                axis: axis(cx, op, input_rank())?,
                k,
                largest: bool_attr(cx, op, "largest"),
            }
        }
        "cast" => {
            let t = cx.value_type(cx.result(op, 0));
            let to = tensor_type(cx, t)?.dtype;
            let scale = match cx.get_int_attr(op, "scale") {
                Some(s) => i32::try_from(s).map_err(|_| "scale out of range".to_string())?,
                None => 0,
            };
            if scale != 0 && !to.is_fp8() {
                return Err("'scale' applies only to FP8 results".into());
            }
            OpKind::Cast {
                to,
                saturate: bool_attr(cx, op, "saturate"),
                scale,
            }
        }
        _ => return Err(format!("unknown nn op '{name}'")),
    })
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
    let mut attrs: Vec<(&str, Attr)> = Vec::new();
    match kind {
        OpKind::Constant(t) => {
            let a = elements_attr(cx, t).ok_or("constant element type has no IR equivalent")?;
            attrs.push(("value", a));
        }
        OpKind::Gelu {
            approximate: GeluApproximation::Tanh,
        } => attrs.push(("approximate", cx.string_attr("tanh"))),
        OpKind::Softmax { axis }
        | OpKind::LogSoftmax { axis }
        | OpKind::Concat { axis }
        | OpKind::Gather { axis } => attrs.push(("axis", cx.i64_attr(*axis as i64))),
        OpKind::LayerNorm { axis, epsilon, .. } => {
            attrs.push(("axis", cx.i64_attr(*axis as i64)));
            attrs.push(("epsilon", cx.float_attr(*epsilon as f64, Type::F32)));
        }
        OpKind::Reduce { axes, keepdims, .. } => {
            attrs.push((
                "axes",
                cx.i64_array_attr(axes.iter().map(|&a| a as i64).collect()),
            ));
            if *keepdims {
                attrs.push(("keepdims", Attr::UNIT));
            }
        }
        OpKind::Mod { fmod: true } => attrs.push(("fmod", Attr::UNIT)),
        OpKind::ArgMax {
            axis,
            keepdims,
            select_last_index,
        }
        | OpKind::ArgMin {
            axis,
            keepdims,
            select_last_index,
        } => {
            attrs.push(("axis", cx.i64_attr(*axis as i64)));
            if *keepdims {
                attrs.push(("keepdims", Attr::UNIT));
            }
            if *select_last_index {
                attrs.push(("select_last_index", Attr::UNIT));
            }
        }
        OpKind::CumSum {
            axis,
            exclusive,
            reverse,
        }
        | OpKind::CumProd {
            axis,
            exclusive,
            reverse,
        } => {
            attrs.push(("axis", cx.i64_attr(*axis as i64)));
            if *exclusive {
                attrs.push(("exclusive", Attr::UNIT));
            }
            if *reverse {
                attrs.push(("reverse", Attr::UNIT));
            }
        }
        OpKind::Pad {
            low,
            high,
            mode,
            value,
        } => {
            attrs.push(("low", cx.i64_array_attr(low.clone())));
            attrs.push(("high", cx.i64_array_attr(high.clone())));
            let m = match mode {
                PadMode::Constant => None,
                PadMode::Reflect => Some("reflect"),
                PadMode::Edge => Some("edge"),
                PadMode::Wrap => Some("wrap"),
            };
            if let Some(m) = m {
                attrs.push(("mode", cx.string_attr(m)));
            }
            if *value != 0.0 {
                attrs.push(("value", cx.float_attr(*value, Type::F64)));
            }
        }
        OpKind::GatherElements { axis } => attrs.push(("axis", cx.i64_attr(*axis as i64))),
        OpKind::TopK { axis, k, largest } => {
            attrs.push(("axis", cx.i64_attr(*axis as i64)));
            attrs.push(("k", cx.i64_attr(*k as i64)));
            if *largest {
                attrs.push(("largest", Attr::UNIT));
            }
        }
        OpKind::ScatterElements { axis, reduction } => {
            attrs.push(("axis", cx.i64_attr(*axis as i64)));
            if let Some(r) = scatter_reduction_name(*reduction) {
                attrs.push(("reduction", cx.string_attr(r)));
            }
        }
        OpKind::ScatterNd { reduction } => {
            if let Some(r) = scatter_reduction_name(*reduction) {
                attrs.push(("reduction", cx.string_attr(r)));
            }
        }
        OpKind::Transpose { perm } => attrs.push((
            "permutation",
            cx.i64_array_attr(perm.iter().map(|&a| a as i64).collect()),
        )),
        OpKind::Slice {
            starts,
            ends,
            steps,
        } => {
            attrs.push(("starts", cx.i64_array_attr(starts.clone())));
            attrs.push(("ends", cx.i64_array_attr(ends.clone())));
            attrs.push(("steps", cx.i64_array_attr(steps.clone())));
        }
        OpKind::Cast {
            saturate, scale, ..
        } => {
            if *saturate {
                attrs.push(("saturate", Attr::UNIT));
            }
            if *scale != 0 {
                attrs.push(("scale", cx.i64_attr(*scale as i64)));
            }
        }
        _ => {}
    }
    let name = match kind {
        OpKind::Reduce { kind, .. } => match kind {
            ReduceKind::Sum => "nn.reduce_sum".to_string(),
            ReduceKind::Mean => "nn.reduce_mean".into(),
            ReduceKind::Max => "nn.reduce_max".into(),
            ReduceKind::Min => "nn.reduce_min".into(),
            ReduceKind::Prod => "nn.reduce_prod".into(),
        },
        k => format!("nn.{}", k.name()),
    };
    if cx.registry().lookup(&name).is_none() {
        return Err(format!("no nn dialect op for '{}'", kind.name()));
    }
    let op_name = cx.op_name(&name);
    let mut st = OperationState::new(op_name, loc);
    st.operands.extend_from_slice(operands);
    st.result_types.push(result);
    let entries = attrs.into_iter().map(|(n, a)| (cx.sym(n), a)).collect();
    st.attrs = cx.dict_attr(entries);
    Ok(cx.create_op(st))
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
    let splat = t.numel() > 1 && bytes.chunks(width).all(|c| c == &bytes[..width]);
    if splat {
        bytes.truncate(width);
    }
    Some(cx.attr(AttrKind::DenseElements {
        ty,
        data: DenseData {
            splat,
            bytes: bytes.into(),
        },
    }))
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
    ipu_ir::constant::create_constant(cx, "nn.constant", value, ty, loc)
}

// ---- canonicalization patterns ---------------------------------------------------

/// `transpose(transpose(x, p), q)` is `transpose(x, p∘q)`.
struct ComposeTransposes;

impl RewritePattern for ComposeTransposes {
    fn root(&self) -> Option<&'static str> {
        Some("nn.transpose")
    }
    fn name(&self) -> &'static str {
        "compose-transposes"
    }
    fn match_and_rewrite(&self, rw: &mut Rewriter<'_>, op: Op) -> bool {
        let cx = &*rw.cx;
        let Some(inner) = cx
            .defining_op(cx.operand(op, 0))
            .filter(|&d| cx.is(d, "nn.transpose"))
        else {
            return false;
        };
        let (Some(q), Some(p)) = (
            cx.get_i64_array_attr(op, "permutation"),
            cx.get_i64_array_attr(inner, "permutation"),
        ) else {
            return false;
        };
        if p.len() != q.len() || q.iter().any(|&i| i < 0 || i as usize >= p.len()) {
            return false;
        }
        // Result dim i of the outer is inner dim q[i], which is input dim p[q[i]].
        let composed: Vec<i64> = q.iter().map(|&i| p[i as usize]).collect();
        let x = cx.operand(inner, 0);
        let a = rw.cx.i64_array_attr(composed);
        rw.cx.set_operand(op, 0, x);
        rw.cx.set_attr(op, "permutation", a);
        let loc = rw.cx.fused_loc(vec![rw.cx.op_loc(inner), rw.cx.op_loc(op)]);
        rw.cx.set_op_loc(op, loc);
        rw.modified(op);
        true
    }
}

/// `reshape(reshape(x))` is one reshape of `x`.
struct ComposeReshapes;

impl RewritePattern for ComposeReshapes {
    fn root(&self) -> Option<&'static str> {
        Some("nn.reshape")
    }
    fn name(&self) -> &'static str {
        "compose-reshapes"
    }
    fn match_and_rewrite(&self, rw: &mut Rewriter<'_>, op: Op) -> bool {
        let cx = &*rw.cx;
        let Some(inner) = cx
            .defining_op(cx.operand(op, 0))
            .filter(|&d| cx.is(d, "nn.reshape"))
        else {
            return false;
        };
        let x = cx.operand(inner, 0);
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
        Some("nn.cast")
    }
    fn name(&self) -> &'static str {
        "lossless-cast-round-trip"
    }
    fn match_and_rewrite(&self, rw: &mut Rewriter<'_>, op: Op) -> bool {
        let cx = &*rw.cx;
        let Some(inner) = cx
            .defining_op(cx.operand(op, 0))
            .filter(|&d| cx.is(d, "nn.cast"))
        else {
            return false;
        };
        if cx.get_attr(op, "scale").is_some() || cx.get_attr(inner, "scale").is_some() {
            return false;
        }
        let x = cx.operand(inner, 0);
        let (Ok(a), Ok(b)) = (
            tensor_type(cx, cx.value_type(x)),
            tensor_type(cx, cx.value_type(cx.operand(op, 0))),
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
