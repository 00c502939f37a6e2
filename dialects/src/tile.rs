//! The `tile` dialect: tensors distributed over tiles, and compute sets of
//! per-tile kernel invocations. Values are still whole tensors (value
//! semantics); every op says where its result lives (`mapping`) and how the
//! work is split, so `tile -> exchange` can derive every transfer.
//!
//! A mapping is a dictionary attribute
//! `{grid = array<i64: g0, g1, ...>, tiles = array<i64: first, stride>}`:
//! dimension `d` is cut into `g_d` blocks of `ceil(dim_d / g_d)` elements
//! (the last ones may be short or empty), and block `b` (row-major over the
//! grid) lives on tile `first + b * stride`.

use ipu_ir::accessors::AttrValue;
use ipu_ir::context::{Context, Op};
use ipu_ir::declare_op;
use ipu_ir::diag::Diagnostic;
use ipu_ir::lexer::Tok;
use ipu_ir::opdef::{constraints, Arity, AttrConstraint, CustomAssembly, Dialect, Trait, ValueDef};
use ipu_ir::parser::OpParser;
use ipu_ir::printer::{type_to_string, Printer};
use ipu_ir::types::{Attr, AttrKind, Type};
use ipu_ir::verify::op_error;

const RESULT: &[ValueDef] = &[ValueDef {
    name: "result",
    arity: Arity::Single,
    constraint: constraints::ANY_TENSOR,
}];

/// The op verifiers say what is wrong with a mapping ([`Mapping::from_attr`]).
const MAPPING_ATTR: AttrConstraint = AttrConstraint {
    description: "tile mapping {grid = array<i64: ...>, tiles = array<i64: first, stride>}",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Dictionary(_)),
};
const I64_ARRAY: AttrConstraint = AttrConstraint {
    description: "array<i64: ...> attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::I64Array(_)),
};
const I64_ATTR: AttrConstraint = AttrConstraint {
    description: "64-bit integer attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Integer { ty, .. } if *ty == ipu_ir::Type::I64),
};

declare_op! {
    pub static HOST_INPUT: HostInput = "tile.host_input" {
        operands: [input: constraints::ANY_TENSOR],
        attributes: [
            mapping: Mapping [MAPPING_ATTR],
            resident: bool [constraints::ANY_ATTR],
            scale: Option<i64> [I64_ATTR],
        ],
        summary: "A function argument streamed from the host into tile memory, laid out by `mapping`; a `resident` one \
                  (a parameter, `ipu.weight`) is loaded once, straight into the buffers of the ops that read it. A \
                  host input may hold its elements widened exactly (f8E4M3FN, f8E5M2, i8 or ui8 to f16 or f32, f16, bf16, \
                  i16 or ui16 to f32): the host converts them as it writes them, once at load for a resident one, at \
                  every run otherwise (`%w : tensor<..xf8E4M3FN> -> tensor<..xf16>`). An FP8 one held as it is may \
                  carry the power-of-two `scale` of its codes (a parameter bound to constants of that scale).",
        results: RESULT,
        traits: &[Trait::Pure],
        custom_assembly: Some(CustomAssembly {
            parse: parse_host_input,
            print: print_host_input,
        }),
        verify: Some(verify_host_input),
    }
}

/// `%x {attrs} : type`, or `: host type -> tile type` for a load that widens.
fn parse_host_input(p: &mut OpParser<'_, '_, '_>) -> Result<(), Diagnostic> {
    let r = p.p.parse_operand_ref()?;
    p.parse_optional_attr_dict()?;
    p.p.expect(Tok::Colon)?;
    let host = p.p.parse_type()?;
    let tile = if p.p.consume_if(Tok::Arrow) {
        p.p.parse_type()?
    } else {
        host
    };
    p.add_operand(r, host)?;
    p.add_result_type(tile);
    Ok(())
}

fn print_host_input(p: &mut Printer<'_>, op: Op) -> std::fmt::Result {
    let (input, result) = (p.cx.operand(op, 0), p.cx.result(op, 0));
    p.write(" ");
    p.print_value(input);
    p.print_attr_dict(op, &[]);
    p.write(" : ");
    let (host, tile) = (p.cx.value_type(input), p.cx.value_type(result));
    p.print_type(host);
    if tile != host {
        p.write(" -> ");
        p.print_type(tile);
    }
    Ok(())
}

/// Whether every value of element type `from` is exactly one of `to`, as a
/// loaded parameter's elements may be widened (the package's rule,
/// [`ipu_package::ElementType::widens_exactly_to`]).
pub fn load_widens_exactly(cx: &Context, from: ipu_ir::Type, to: ipu_ir::Type) -> bool {
    use ipu_ir::TypeKind::*;
    matches!(
        (cx.type_kind(from), cx.type_kind(to)),
        (F8E4M3FN | F8E5M2 | Integer { width: 8, .. }, F16 | F32)
            | (F16 | BF16 | Integer { width: 16, .. }, F32)
    )
}

/// The element type of tensor type `t`.
fn element_of(cx: &Context, t: ipu_ir::Type) -> Option<(Vec<i64>, ipu_ir::Type)> {
    cx.tensor_parts(t).map(|(s, e)| (s.to_vec(), e))
}

/// Checks a host input that converts `host` into `tile` as the host hands
/// it over (a parameter at load, an input at every run): tensors of one
/// shape and an exact widening of the elements. Shared by
/// `tile.host_input` and `exchange.host_input`.
pub fn verify_load_conversion(
    cx: &Context,
    op: Op,
    host: ipu_ir::Type,
    tile: ipu_ir::Type,
) -> Result<(), Diagnostic> {
    let what = format!(
        "{} to {}",
        type_to_string(cx, host),
        type_to_string(cx, tile)
    );
    let (Some((hs, he)), Some((ts, te))) = (element_of(cx, host), element_of(cx, tile)) else {
        return Err(op_error(
            cx,
            op,
            format!("converts between types that are not both tensors ({what})"),
        ));
    };
    if hs != ts {
        return Err(op_error(
            cx,
            op,
            format!("may change only the element type of its input, not the shape ({what})"),
        ));
    }
    if !load_widens_exactly(cx, he, te) {
        return Err(op_error(
            cx,
            op,
            format!(
                "converts {what}, which is not an exact widening (f8E4M3FN or f8E5M2 to f16 or f32, f16 or \
                 bf16 to f32)"
            ),
        ));
    }
    Ok(())
}

fn verify_host_input(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let (host, tile) = (
        cx.value_type(HostInput(op).input(cx)),
        cx.value_type(cx.result(op, 0)),
    );
    if host != tile {
        verify_load_conversion(cx, op, host, tile)?;
    }
    verify_fp8_scale(cx, op, HostInput(op).scale(cx))?;
    verify_mapped(cx, op)
}

/// A `scale` only on an FP8 result, within the range of `nn.cast`'s.
fn verify_fp8_scale(cx: &Context, op: Op, scale: Option<i64>) -> Result<(), Diagnostic> {
    let Some(s) = scale else {
        return Ok(());
    };
    let fp8 = cx
        .tensor_parts(cx.value_type(cx.result(op, 0)))
        .is_some_and(|(_, e)| {
            matches!(
                cx.type_kind(e),
                ipu_ir::TypeKind::F8E4M3FN | ipu_ir::TypeKind::F8E5M2
            )
        });
    if !fp8 {
        return Err(op_error(
            cx,
            op,
            "has a scale, which only an FP8 (f8E4M3FN, f8E5M2) result takes",
        ));
    }
    if !(-64..=63).contains(&s) {
        return Err(op_error(cx, op, format!("has scale {s}, outside -64..63")));
    }
    Ok(())
}

declare_op! {
    pub static CONSTANT: Constant = "tile.constant" {
        operands: [],
        attributes: [
            value: Attr [constraints::TYPED_ATTR],
            mapping: Mapping [MAPPING_ATTR],
            scale: Option<i64> [I64_ATTR],
        ],
        summary: "A constant loaded with the tile images, laid out by `mapping`; an FP8 one may carry the \
                  power-of-two `scale` of its codes (its values are the codes times 2^scale: a weight cast to FP8 \
                  at compile time, kept in FP8).",
        results: RESULT,
        traits: &[Trait::Pure, Trait::ConstantLike],
        custom_assembly: Some(ipu_ir::constant::CONSTANT_ASSEMBLY),
        verify: Some(verify_constant),
    }
}

declare_op! {
    pub static MATMUL: Matmul = "tile.matmul" {
        operands: [lhs: constraints::ANY_TENSOR, rhs: constraints::ANY_TENSOR],
        attributes: [
            plan: &[i64] [I64_ARRAY],
            tiles: &[i64] [I64_ARRAY],
            kernel: &str [constraints::STRING_ATTR],
            cycles: i64 [I64_ATTR],
            mapping: Mapping [MAPPING_ATTR],
            partials: Type [constraints::ANY_ATTR],
            rhs_transposed: bool [FLAG_ATTR],
        ],
        summary: "A compute set multiplying [M, K] by [K, N], or a batch [B, M, K] by [B, K, N] (either batch may be 1, \
                  shared): the work is cut into a (pb x) pm x pn x pk grid of blocks (`plan`), block (b, i, j, k) on tile \
                  first + (((b * pm + i) * pk + k) * pn + j) * stride (`tiles`), each running `kernel` (`cycles` by \
                  its cycle formula); with pk > 1 the `partials`-typed partial sums of a block are added up by its pk \
                  tiles, tile k a 1/pk share of the block's rows. The result lives as `mapping` says: the (batch x) \
                  (pm * pk) x pn grid on the same tiles. With `rhs_transposed` the rhs is given as [N, K] (or [B, N, K]), \
                  the GEMM's weight banks held column by column.",
        results: RESULT,
        traits: &[Trait::Pure],
        assembly_format: Some("$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"),
        verify: Some(verify_matmul),
    }
}

const MAP_FN_ATTR: AttrConstraint = AttrConstraint {
    description: "elementwise function #tile.fn<name> (add, sub, mul, div, max, min, pow, relu, gelu, gelu_tanh, \
                  exp, tanh, erf, rsqrt, sqrt, neg, abs, sigmoid, reciprocal, log, copy, cast; equal, less, greater, \
                  and, or, not)",
    check: |cx, a| MapFn::from_attr(cx, a).is_some(),
};

declare_op! {
    pub static MAP: Map = "tile.map" {
        operands: [],
        variadic: [inputs: constraints::ANY_TENSOR],
        attributes: [
            map_fn = "fn": MapFn [MAP_FN_ATTR],
            kernel: &str [constraints::STRING_ATTR],
            cycles: i64 [I64_ATTR],
            mapping: Mapping [MAPPING_ATTR],
            scale: Option<i64> [I64_ATTR],
        ],
        summary: "An elementwise compute set (`fn`, a #tile.fn<...>): each tile of `mapping` computes its block of the \
                  result with `kernel` (the exact specialisation the machine stage calls; `cycles` from its cycle \
                  formula), from the matching (broadcast) elements of the operands; a cast to FP8 carries the \
                  result's power-of-two `scale`.",
        results: RESULT,
        traits: &[Trait::Pure],
        assembly_format: Some("$inputs attr-dict `:` functional-type(operands, results)"),
        verify: Some(verify_map),
    }
}

declare_op! {
    pub static PREDICATE: Predicate = "tile.predicate" {
        operands: [],
        variadic: [inputs: constraints::ANY_TENSOR],
        attributes: [
            map_fn = "fn": MapFn [MAP_FN_ATTR],
            kernel: &str [constraints::STRING_ATTR],
            cycles: i64 [I64_ATTR],
            mapping: Mapping [MAPPING_ATTR],
        ],
        summary: "An elementwise compute set with a boolean (i1, one byte per element) result: a comparison of f32, \
                  f16, i32 or i64 operands (`fn` equal, less, greater; NaN compares false) or boolean logic (and, or, not). Each \
                  tile of `mapping` computes its block with `kernel` (`cycles` from its cycle formula) from the \
                  matching (broadcast) elements of the operands.",
        results: RESULT,
        traits: &[Trait::Pure],
        assembly_format: Some("$inputs attr-dict `:` functional-type(operands, results)"),
        verify: Some(verify_mapped),
    }
}

declare_op! {
    pub static SELECT: Select = "tile.select" {
        operands: [cond: constraints::ANY_TENSOR, a: constraints::ANY_TENSOR, b: constraints::ANY_TENSOR],
        attributes: [
            kernel: &str [constraints::STRING_ATTR],
            cycles: i64 [I64_ATTR],
            mapping: Mapping [MAPPING_ATTR],
        ],
        summary: "An elementwise select: `cond ? a : b` with numpy broadcasting, `cond` boolean (i1), `a` and `b` f32, \
                  f16, i32 or i64. Each tile of `mapping` computes its block with `kernel` (`cycles` from its cycle formula).",
        results: RESULT,
        traits: &[Trait::Pure],
        assembly_format: Some("$cond `,` $a `,` $b attr-dict `:` functional-type(operands, results)"),
        verify: Some(verify_mapped),
    }
}

declare_op! {
    pub static GATHER: Gather = "tile.gather" {
        operands: [data: constraints::ANY_TENSOR, indices: constraints::ANY_TENSOR],
        attributes: [
            axis: i64 [I64_ATTR],
            kernel: &str [constraints::STRING_ATTR],
            cycles: i64 [I64_ATTR],
            mapping: Mapping [MAPPING_ATTR],
            data_mapping: Mapping [MAPPING_ATTR],
        ],
        summary: "A gather along `axis` with integer indices known only at run time (an embedding lookup): `data` is \
                  laid out with the whole axis on every tile (`data_mapping`: split over the other dimensions only), \
                  every tile receives all the indices, and looks its rows up locally with `kernel` (`cycles` from its \
                  cycle formula; an index out of range faults). The result's blocks (`mapping`) sit on their data \
                  block's tile.",
        results: RESULT,
        traits: &[Trait::Pure],
        assembly_format: Some("$data `,` $indices attr-dict `:` functional-type(operands, results)"),
        verify: Some(verify_mapped),
    }
}

const VIEW_KIND_ATTR: AttrConstraint = AttrConstraint {
    description: "\"transpose\", \"reshape\", \"broadcast\", \"slice\", \"concat\" or \"gather\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if matches!(&**s, "transpose" | "reshape" | "broadcast" | "slice" | "concat" | "gather")),
};

declare_op! {
    pub static VIEW: View = "tile.view" {
        operands: [],
        variadic: [inputs: constraints::ANY_TENSOR],
        attributes: [
            kind: &str [VIEW_KIND_ATTR],
            permutation: Option<&[i64]> [I64_ARRAY],
            starts: Option<&[i64]> [I64_ARRAY],
            ends: Option<&[i64]> [I64_ARRAY],
            steps: Option<&[i64]> [I64_ARRAY],
            axis: Option<i64> [I64_ATTR],
            indices: Option<&[i64]> [I64_ARRAY],
            mapping: Mapping [MAPPING_ATTR],
        ],
        summary: "A re-indexing of its inputs (`kind`: transpose by `permutation`, reshape, broadcast, slice by \
                  `starts`/`ends`/`steps`, concat along `axis`, gather along `axis` of the constant `indices`) with no \
                  storage of its own: its readers receive \
                  their rectangles from the inputs' blocks during the exchange that feeds them. `mapping` is where \
                  its blocks go if it has to be stored (streamed to the host).",
        results: RESULT,
        traits: &[Trait::Pure],
        assembly_format: Some("$inputs attr-dict `:` functional-type(operands, results)"),
        verify: Some(verify_view),
    }
}

const REDUCE_KIND_ATTR: AttrConstraint = AttrConstraint {
    description: "reduction kind: \"sum\", \"mean\", \"max\" or \"min\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if REDUCE_KINDS.contains(&s.as_ref())),
};
/// The kinds of `tile.reduce`.
pub const REDUCE_KINDS: &[&str] = &["sum", "mean", "max", "min"];
const FLAG_ATTR: AttrConstraint = AttrConstraint {
    description: "unit attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Unit),
};
const F32_ATTR: AttrConstraint = AttrConstraint {
    description: "f32 attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Float { ty, .. } if *ty == ipu_ir::Type::F32),
};

declare_op! {
    pub static REDUCE: Reduce = "tile.reduce" {
        operands: [input: constraints::ANY_TENSOR],
        attributes: [
            kind: &str [REDUCE_KIND_ATTR],
            axes: &[i64] [I64_ARRAY],
            keepdims: bool [FLAG_ATTR],
            grid: &[i64] [I64_ARRAY],
            tiles: &[i64] [I64_ARRAY],
            kernel: &str [constraints::STRING_ATTR],
            cycles: i64 [I64_ATTR],
            mapping: Mapping [MAPPING_ATTR],
        ],
        summary: "A reduction (`kind`: sum, mean, max, min) over `axes` (`keepdims` keeps them as size 1): the input is \
                  cut into the blocks of `grid`, block b on tile first + b * stride (`tiles`); each tile reduces its \
                  block with `kernel` (the exact row-kernel specialisation; `cycles` from the cycle formulas of all \
                  its calls). Where `grid` cuts a reduced axis, each tile's partial results are gathered onto the \
                  tile of their result block and combined there. The result lives as `mapping` says: `grid` on \
                  the kept axes.",
        results: RESULT,
        traits: &[Trait::Pure],
        assembly_format: Some("$input attr-dict `:` type($input) `->` type($result)"),
        verify: Some(verify_reduce),
    }
}

/// A row op (softmax, layer norm) of an input and its parameters.
macro_rules! row_op {
    ($stat:ident: $view:ident = $name:literal, $attrs:tt, $summary:expr, $verify:expr) => {
        declare_op! {
            pub static $stat: $view = $name {
                operands: [input: constraints::ANY_TENSOR],
                variadic: [params: constraints::ANY_TENSOR],
                attributes: $attrs,
                summary: $summary,
                results: RESULT,
                traits: &[Trait::Pure],
                assembly_format: Some("operands attr-dict `:` functional-type(operands, results)"),
                verify: Some($verify),
            }
        }
    };
}

const FLOAT_ATTR: AttrConstraint = AttrConstraint {
    description: "float attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Float { .. }),
};

row_op! {
    SOFTMAX: Softmax = "tile.softmax",
    [
        axis: i64 [I64_ATTR],
        log: bool [FLAG_ATTR],
        scale: Option<f64> [FLOAT_ATTR],
        kernel: &str [constraints::STRING_ATTR],
        cycles: i64 [I64_ATTR],
        mapping: Mapping [MAPPING_ATTR],
    ],
    "Softmax along `axis` (`log`: log-softmax) over the blocks of `mapping`: with grid 1 along the axis \
              each tile holds whole rows; where the grid cuts the axis (evenly), the pieces' statistics are \
              shared out, each piece's tile combining its share of the rows and sending it to the rows' other \
              tiles, before each piece is normalised. With a prologue (the ops before it that its statistics \
              pass does, where the axis is cut) the softmax is of t = widen(x * `scale`) + v, each step \
              rounded as the separate op would: x times `scale` in x's type, widened exactly (f16 x, f32 \
              result), plus the row vector v (operand #1, as many elements of the result's type as the axis, \
              which is the last). `kernel` is the row kernel each tile first calls, `cycles` the cycle \
              formulas of all its calls.",
    verify_softmax
}

row_op! {
    LAYER_NORM: LayerNorm = "tile.layer_norm",
    [
        axis: i64 [I64_ATTR],
        epsilon: f32 [F32_ATTR],
        kernel: &str [constraints::STRING_ATTR],
        cycles: i64 [I64_ATTR],
        mapping: Mapping [MAPPING_ATTR],
    ],
    "Layer normalization over dimensions `axis`..rank with `epsilon`, then the optional scale and bias \
              operands (each as many elements as the normalized shape), over the blocks of `mapping`: with grid 1 \
              from `axis` on each tile holds whole rows and the whole scale and bias; where the grid cuts the \
              first normalized dimension (evenly), the pieces' means and variances are shared out, each piece's \
              tile combining its share of the rows and sending it to the rows' other tiles, before each piece \
              is normalised with its columns of the scale and bias. `kernel` is the row kernel each tile first calls, `cycles` the \
              cycle formulas of all its calls.",
    verify_layer_norm
}

declare_op! {
    pub static HOST_OUTPUT: HostOutput = "tile.host_output" {
        operands: [input: constraints::ANY_TENSOR],
        attributes: [
            name: &str [constraints::STRING_ATTR],
        ],
        summary: "Streams a result from tile memory to the host as output `name`. With a result, the host \
                  narrows the elements to the result's type as it reads them (`%y = tile.host_output %x : \
                  tensor<..xf32> -> tensor<..xui8>`): the tiles hold 8- or 16-bit integers as exact floats \
                  (the inverse of an input's widening), and the function returns the narrowed value.",
        results: &[ValueDef {
            name: "host",
            arity: Arity::Optional,
            constraint: constraints::ANY_TENSOR,
        }],
        custom_assembly: Some(CustomAssembly {
            parse: parse_host_output,
            print: print_host_output,
        }),
        verify: Some(verify_host_output),
    }
}

/// `%x {attrs} : type`, or `%y = ... : tile type -> host type` for an
/// output the host narrows.
fn parse_host_output(p: &mut OpParser<'_, '_, '_>) -> Result<(), Diagnostic> {
    let r = p.p.parse_operand_ref()?;
    p.parse_optional_attr_dict()?;
    p.p.expect(Tok::Colon)?;
    let tile = p.p.parse_type()?;
    p.add_operand(r, tile)?;
    if p.p.consume_if(Tok::Arrow) {
        let host = p.p.parse_type()?;
        p.add_result_type(host);
    }
    Ok(())
}

fn print_host_output(p: &mut Printer<'_>, op: Op) -> std::fmt::Result {
    let input = p.cx.operand(op, 0);
    p.write(" ");
    p.print_value(input);
    p.print_attr_dict(op, &[]);
    p.write(" : ");
    p.print_type(p.cx.value_type(input));
    if p.cx.num_results(op) == 1 {
        p.write(" -> ");
        p.print_type(p.cx.value_type(p.cx.result(op, 0)));
    }
    Ok(())
}

fn verify_host_output(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    match cx.num_results(op) {
        0 => Ok(()),
        1 => {
            let (host, tile) = (
                cx.value_type(cx.result(op, 0)),
                cx.value_type(cx.operand(op, 0)),
            );
            if host == tile {
                return Err(op_error(
                    cx,
                    op,
                    format!(
                        "has a result of its input's own type ({}): a result is the host's narrowing to an \
                         8- or 16-bit integer",
                        type_to_string(cx, host)
                    ),
                ));
            }
            verify_output_narrowing(cx, op, host, tile)
        }
        n => Err(op_error(cx, op, format!("has {n} results; at most one"))),
    }
}

/// Checks an output the host narrows from `tile` to `host` as it reads it:
/// the inverse of an exact widening (same shape), to an 8- or 16-bit
/// integer. Shared by `tile.host_output` and `exchange.host_output`.
pub fn verify_output_narrowing(
    cx: &Context,
    op: Op,
    host: ipu_ir::Type,
    tile: ipu_ir::Type,
) -> Result<(), Diagnostic> {
    verify_load_conversion(cx, op, host, tile)?;
    let he = element_of(cx, host).map(|(_, e)| e);
    if !he.is_some_and(|e| {
        matches!(
            cx.type_kind(e),
            ipu_ir::TypeKind::Integer { width: 8 | 16, .. }
        )
    }) {
        return Err(op_error(
            cx,
            op,
            format!(
                "narrows {} to {}: an output narrows only to 8- or 16-bit integers",
                type_to_string(cx, tile),
                type_to_string(cx, host)
            ),
        ));
    }
    Ok(())
}

pub static TILE_DIALECT: Dialect = Dialect {
    name: "tile",
    description: "Tensors distributed over tiles and compute sets of per-tile vertices.",
    ops: &[
        &HOST_INPUT,
        &CONSTANT,
        &MATMUL,
        &MAP,
        &VIEW,
        &REDUCE,
        &SOFTMAX,
        &LAYER_NORM,
        &PREDICATE,
        &SELECT,
        &GATHER,
        &HOST_OUTPUT,
    ],
    materialize_constant: None,
};

macro_rules! map_fns {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// The functions of `tile.map`, written `#tile.fn<name>`.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        pub enum MapFn {
            $($variant),*
        }

        impl MapFn {
            pub const ALL: &'static [MapFn] = &[$(MapFn::$variant),*];

            pub fn name(self) -> &'static str {
                match self {
                    $(MapFn::$variant => $name),*
                }
            }
        }
    };
}

map_fns! {
    Add = "add", Sub = "sub", Mul = "mul", Div = "div", Max = "max", Min = "min",
    Relu = "relu", Gelu = "gelu", Exp = "exp", Tanh = "tanh", Erf = "erf", Rsqrt = "rsqrt",
    Sqrt = "sqrt", Neg = "neg", Abs = "abs", Sigmoid = "sigmoid", Reciprocal = "reciprocal",
    Log = "log", Copy = "copy", Cast = "cast", Pow = "pow", GeluTanh = "gelu_tanh",
    Equal = "equal", Less = "less", Greater = "greater", And = "and", Or = "or", Not = "not",
}

impl MapFn {
    /// The binary functions (two operands); the others take one.
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            MapFn::Add
                | MapFn::Sub
                | MapFn::Mul
                | MapFn::Div
                | MapFn::Max
                | MapFn::Min
                | MapFn::Pow
                | MapFn::Equal
                | MapFn::Less
                | MapFn::Greater
                | MapFn::And
                | MapFn::Or
        )
    }

    pub fn from_name(s: &str) -> Option<MapFn> {
        MapFn::ALL.iter().copied().find(|f| f.name() == s)
    }

    /// Reads `#tile.fn<name>`.
    pub fn from_attr(cx: &Context, a: Attr) -> Option<MapFn> {
        match cx.attr_kind(a) {
            AttrKind::Opaque { dialect, body } if cx.str(*dialect) == "tile" => body
                .strip_prefix(".fn<")
                .and_then(|b| b.strip_suffix('>'))
                .and_then(MapFn::from_name),
            _ => None,
        }
    }

    /// `#tile.fn<name>`.
    pub fn to_attr(self, cx: &mut Context) -> Attr {
        let dialect = cx.sym("tile");
        cx.attr(AttrKind::Opaque {
            dialect,
            body: format!(".fn<{}>", self.name()).into(),
        })
    }
}

/// A grid partition of a tensor over tiles.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mapping {
    pub grid: Vec<i64>,
    pub first_tile: i64,
    pub stride: i64,
}

impl Mapping {
    /// Reads a mapping, checked: a grid of at least one block per dimension
    /// whose every block is on a tile index (`u32`), so that block counts
    /// and tile numbers computed from it cannot overflow.
    pub fn from_attr(cx: &Context, a: Attr) -> Result<Mapping, String> {
        let AttrKind::Dictionary(entries) = cx.attr_kind(a) else {
            return Err("mapping must be a dictionary {grid = array<i64: ...>, tiles = array<i64: first, stride>}".into());
        };
        if let Some((k, _)) = entries
            .iter()
            .find(|(k, _)| !matches!(cx.str(*k), "grid" | "tiles"))
        {
            return Err(format!(
                "mapping has an unknown entry '{}' (it holds grid and tiles)",
                cx.str(*k)
            ));
        }
        let get = |n: &str, form: &str| -> Result<Vec<i64>, String> {
            match entries.iter().find(|(k, _)| cx.str(*k) == n) {
                Some((_, v)) => match cx.attr_kind(*v) {
                    AttrKind::I64Array(x) => Ok(x.to_vec()),
                    _ => Err(format!("mapping {n} must be {form}")),
                },
                None => Err(format!("mapping needs {n} = {form}")),
            }
        };
        let grid = get("grid", "array<i64: ...>")?;
        let tiles = get("tiles", "array<i64: first, stride>")?;
        if let Some(g) = grid.iter().find(|&&g| g < 1) {
            return Err(format!("mapping grid entries must be at least 1, not {g}"));
        }
        let [first, stride] = tiles[..] else {
            return Err(format!(
                "mapping tiles must be array<i64: first, stride>, not {} entries",
                tiles.len()
            ));
        };
        if first < 0 || stride < 1 {
            return Err(format!(
                "mapping tiles must have first >= 0 and stride >= 1, not [{first}, {stride}]"
            ));
        }
        // The last block's tile, first + (blocks - 1) * stride, in u128 (None: beyond).
        let last = grid
            .iter()
            .try_fold(1u128, |n, &g| n.checked_mul(g as u128))
            .and_then(|blocks| (blocks - 1).checked_mul(stride as u128))
            .and_then(|d| d.checked_add(first as u128));
        if last.is_none_or(|l| l > u32::MAX as u128) {
            return Err(format!(
                "mapping puts block b on tile {first} + b * {stride}: its {} blocks go beyond tile {}",
                grid.iter()
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join(" x "),
                u32::MAX
            ));
        }
        Ok(Mapping {
            grid,
            first_tile: first,
            stride,
        })
    }

    pub fn to_attr(&self, cx: &mut Context) -> Attr {
        let grid = cx.i64_array_attr(self.grid.clone());
        let tiles = cx.i64_array_attr(vec![self.first_tile, self.stride]);
        let entries = vec![(cx.sym("grid"), grid), (cx.sym("tiles"), tiles)];
        cx.dict_attr(entries)
    }

    pub fn blocks(&self) -> i64 {
        self.grid.iter().product()
    }

    /// The highest tile index used.
    pub fn last_tile(&self) -> i64 {
        self.first_tile + (self.blocks() - 1) * self.stride
    }

    /// Extent of every block along each dimension of `shape`.
    pub fn block_shape(&self, shape: &[i64]) -> Vec<i64> {
        shape
            .iter()
            .zip(&self.grid)
            .map(|(&d, &g)| (d + g - 1) / g)
            .collect()
    }
}

/// A mapping attribute; a malformed one reads as none (the verifiers say
/// what is wrong with it, `mapping_of`).
impl AttrValue<'_> for Mapping {
    fn from_attr(cx: &Context, a: Attr) -> Option<Self> {
        Mapping::from_attr(cx, a).ok()
    }
}

/// `#tile.fn<name>`.
impl AttrValue<'_> for MapFn {
    fn from_attr(cx: &Context, a: Attr) -> Option<Self> {
        MapFn::from_attr(cx, a)
    }
}

fn mapping_of(cx: &Context, op: Op) -> Result<Mapping, Diagnostic> {
    let a = cx
        .get_attr(op, "mapping")
        .ok_or_else(|| op_error(cx, op, "requires attribute 'mapping'"))?;
    Mapping::from_attr(cx, a).map_err(|m| op_error(cx, op, m))
}

fn verify_mapped(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let m = mapping_of(cx, op)?;
    let t = cx.value_type(cx.result(op, 0));
    let shape = cx.tensor_parts(t).map(|(s, _)| s).unwrap_or_default();
    if shape.contains(&ipu_ir::types::DYNAMIC) {
        return Err(op_error(
            cx,
            op,
            format!(
                "has a result with dynamic dimensions, '{}': a mapping needs static shapes",
                type_to_string(cx, t)
            ),
        ));
    }
    let rank = shape.len();
    if m.grid.len() != rank {
        return Err(op_error(
            cx,
            op,
            format!(
                "mapping grid has rank {}, but the result has rank {rank}",
                m.grid.len()
            ),
        ));
    }
    Ok(())
}

fn verify_constant(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    ipu_ir::constant::verify_constant(cx, op)?;
    verify_fp8_scale(cx, op, Constant(op).scale(cx))?;
    verify_mapped(cx, op)
}

/// The kernel a compute set calls and its estimated cycles.
fn verify_kernel(cx: &Context, op: Op, kernel: &str, cycles: i64) -> Result<(), Diagnostic> {
    if kernel.is_empty() {
        return Err(op_error(
            cx,
            op,
            "kernel must name a kernel specialisation, not be empty",
        ));
    }
    if cycles < 0 {
        return Err(op_error(
            cx,
            op,
            format!("cycles must be non-negative, not {cycles}"),
        ));
    }
    Ok(())
}

fn verify_map(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    verify_mapped(cx, op)?;
    let map = Map(op);
    verify_kernel(cx, op, map.kernel(cx), map.cycles(cx))?;
    let f = map.map_fn(cx);
    let want = if f.is_binary() { 2 } else { 1 };
    let n = cx.operands(op).len();
    if n != want {
        return Err(op_error(
            cx,
            op,
            format!(
                "#tile.fn<{}> takes {want} operand{}, but has {n}",
                f.name(),
                if want == 1 { "" } else { "s" }
            ),
        ));
    }
    let rt = cx.value_type(cx.result(op, 0));
    let Some((rshape, relem)) = cx.tensor_parts(rt) else {
        return Ok(());
    };
    for (i, &v) in cx.operands(op).iter().enumerate() {
        let t = cx.value_type(v);
        let Some((shape, elem)) = cx.tensor_parts(t) else {
            continue;
        };
        // Broadcasting as in nn: trailing dimensions equal, or 1 in the operand.
        let broadcasts = shape.len() <= rshape.len()
            && shape
                .iter()
                .rev()
                .zip(rshape.iter().rev())
                .all(|(&d, &r)| d == r || d == 1);
        let what = |m: &str| {
            op_error(
                cx,
                op,
                format!(
                    "operand #{i} ('{}') {m} the result ('{}')",
                    type_to_string(cx, t),
                    type_to_string(cx, rt)
                ),
            )
        };
        if f == MapFn::Cast {
            if shape != rshape {
                return Err(what("of #tile.fn<cast> must have the shape of"));
            }
        } else if !broadcasts {
            return Err(what("does not broadcast to"));
        } else if elem != relem {
            return Err(what(&format!(
                "of #tile.fn<{}> must have the element type of",
                f.name()
            )));
        }
    }
    Ok(())
}

fn verify_matmul(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    verify_mapped(cx, op)?;
    let shape = |v| {
        cx.tensor_parts(cx.value_type(v))
            .map(|(s, _)| s.to_vec())
            .unwrap_or_default()
    };
    let matmul = Matmul(op);
    verify_kernel(cx, op, matmul.kernel(cx), matmul.cycles(cx))?;
    let (a, mut b) = (shape(matmul.lhs(cx)), shape(matmul.rhs(cx)));
    let given_b = b.clone();
    // Given transposed, the rhs is [N, K]: checked as the [K, N] it stands for.
    let transposed = matmul.rhs_transposed(cx);
    if transposed && b.len() >= 2 {
        let r = b.len();
        b.swap(r - 2, r - 1);
    }
    let batched = a.len() == 3;
    let plan = matmul.plan(cx);
    let want = if batched { 4 } else { 3 };
    if plan.len() != want || plan.iter().any(|&p| p < 1) {
        return Err(op_error(
            cx,
            op,
            if batched {
                "plan must be [pb, pm, pn, pk], each at least 1"
            } else {
                "plan must be [pm, pn, pk], each at least 1"
            },
        ));
    }
    let tiles = matmul.tiles(cx);
    if tiles.len() != 2 || tiles[0] < 0 || tiles[1] < 1 {
        return Err(op_error(cx, op, "tiles must be [first, stride]"));
    }
    let m = mapping_of(cx, op)?;
    let (pm, pk) = (plan[want - 3], plan[want - 1]);
    let mut grid = plan[..want - 1].to_vec();
    grid[want - 3] = pm.saturating_mul(pk);
    if m.grid[..] != grid[..] || m.first_tile != tiles[0] || m.stride != tiles[1] {
        return Err(op_error(
            cx,
            op,
            "the result mapping must be the plan's (batch x) (pm * pk) x pn grid on its tiles",
        ));
    }
    let ok = if batched {
        b.len() == 3
            && a[2] == b[1]
            && (a[0] == b[0] || a[0] == 1 || b[0] == 1)
            && plan[0] <= a[0].max(b[0])
    } else {
        a.len() == 2 && b.len() == 2 && a[1] == b[0]
    };
    if !ok {
        let message = if transposed {
            format!("operands must be [M, K] and [N, K], or [B, M, K] and [B, N, K] (B may be 1 on one side; the rhs is transposed), not {a:?} and {given_b:?}")
        } else {
            format!("operands must be [M, K] and [K, N], or [B, M, K] and [B, K, N] (B may be 1 on one side), not {a:?} and {b:?}")
        };
        return Err(op_error(cx, op, message));
    }
    let rt = cx.value_type(cx.result(op, 0));
    let r = cx.value_shape(cx.result(op, 0));
    let want: Vec<i64> = if batched {
        vec![a[0].max(b[0]), a[1], b[2]]
    } else {
        vec![a[0], b[1]]
    };
    if r != want {
        return Err(op_error(
            cx,
            op,
            format!("result must be {want:?}, not '{}'", type_to_string(cx, rt)),
        ));
    }
    let partials = cx.get_attr(op, "partials").map(|p| cx.attr_kind(p));
    if !matches!(partials, Some(AttrKind::Type(t)) if cx.type_kind(*t).is_float()) {
        return Err(op_error(
            cx,
            op,
            "partials must be the floating-point type of the partial sums (f32, f16)",
        ));
    }
    Ok(())
}

fn verify_view(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    verify_mapped(cx, op)?;
    let view = View(op);
    let kind = view.kind(cx);
    let rank_of = |v| {
        cx.tensor_parts(cx.value_type(v))
            .map(|(s, _)| s.to_vec())
            .unwrap_or_default()
    };
    let out = rank_of(cx.result(op, 0));
    let ins: Vec<Vec<i64>> = cx.operands(op).iter().map(|&v| rank_of(v)).collect();
    if ins.is_empty() || (kind != "concat" && ins.len() != 1) {
        return Err(op_error(
            cx,
            op,
            format!("a {kind} view takes one input, this one {}", ins.len()),
        ));
    }
    let need = |n: &str, a: Option<&[i64]>| -> Result<Vec<i64>, Diagnostic> {
        a.map(<[i64]>::to_vec)
            .ok_or_else(|| op_error(cx, op, format!("a {kind} view needs '{n}'")))
    };
    let numel = |s: &[i64]| s.iter().product::<i64>();
    match kind {
        "transpose" => {
            let p = need("permutation", view.permutation(cx))?;
            let mut seen = vec![false; ins[0].len()];
            let ok = p.len() == ins[0].len()
                && p.iter().all(|&d| {
                    let fresh = (0..seen.len() as i64).contains(&d) && !seen[d as usize];
                    if fresh {
                        seen[d as usize] = true;
                    }
                    fresh
                })
                && p.iter()
                    .enumerate()
                    .all(|(i, &d)| out.get(i) == ins[0].get(d as usize));
            if !ok {
                return Err(op_error(
                    cx,
                    op,
                    format!("permutation {p:?} does not take {:?} to {out:?}", ins[0]),
                ));
            }
        }
        "reshape" if numel(&ins[0]) != numel(&out) => {
            return Err(op_error(
                cx,
                op,
                format!("cannot reshape {:?} to {out:?}", ins[0]),
            ))
        }
        "broadcast" => {
            let i = &ins[0];
            let ok = i.len() <= out.len()
                && i.iter()
                    .enumerate()
                    .all(|(d, &n)| n == 1 || n == out[d + out.len() - i.len()]);
            if !ok {
                return Err(op_error(
                    cx,
                    op,
                    format!("cannot broadcast {i:?} to {out:?}"),
                ));
            }
        }
        "slice" => {
            let (st, en, sp) = (
                need("starts", view.starts(cx))?,
                need("ends", view.ends(cx))?,
                need("steps", view.steps(cx))?,
            );
            let r = ins[0].len();
            if st.len() != r || en.len() != r || sp.len() != r || out.len() != r {
                return Err(op_error(
                    cx,
                    op,
                    format!("starts, ends and steps need {r} entries"),
                ));
            }
            for d in 0..r {
                let n = out[d];
                let last = st[d] as i128 + (n as i128 - 1) * sp[d] as i128;
                if sp[d] == 0
                    || (n > 0
                        && (st[d] < 0
                            || st[d] >= ins[0][d]
                            || last < 0
                            || last >= ins[0][d] as i128))
                {
                    return Err(op_error(
                        cx,
                        op,
                        format!(
                            "dimension {d}: a slice of {n} from {} by {} leaves 0..{}",
                            st[d], sp[d], ins[0][d]
                        ),
                    ));
                }
            }
        }
        "gather" => {
            let axis = view.axis(cx).map_or(-1, i128::from);
            let idx = need("indices", view.indices(cx))?;
            let i = &ins[0];
            let n = out.len() as i64 + 1 - i.len() as i64;
            let ok = (0..i.len() as i128).contains(&axis) && n >= 0 && {
                let a = axis as usize;
                let k = n as usize;
                out[..a] == i[..a]
                    && out[a + k..] == i[a + 1..]
                    && numel(&out[a..a + k]) == idx.len() as i64
                    && idx.iter().all(|&j| (0..i[a]).contains(&j))
            };
            if !ok {
                return Err(op_error(
                    cx,
                    op,
                    format!(
                        "cannot gather {} indices in 0..{} along axis {axis} of {i:?} into {out:?}",
                        idx.len(),
                        i.get(axis.max(0) as usize).copied().unwrap_or(0)
                    ),
                ));
            }
        }
        "concat" => {
            let axis = view.axis(cx).map_or(-1, i128::from);
            let r = out.len() as i128;
            let ok = (0..r).contains(&axis)
                && ins.iter().all(|s| s.len() == out.len())
                && ins.iter().map(|s| s[axis as usize]).sum::<i64>() == out[axis as usize]
                && ins.iter().all(|s| {
                    s.iter()
                        .enumerate()
                        .all(|(d, &n)| d == axis as usize || n == out[d])
                });
            if !ok {
                return Err(op_error(
                    cx,
                    op,
                    format!("cannot concatenate {ins:?} along axis {axis} into {out:?}"),
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

fn shape_of(cx: &Context, v: ipu_ir::Value) -> Vec<i64> {
    cx.tensor_parts(cx.value_type(v))
        .map(|(s, _)| s.to_vec())
        .unwrap_or_default()
}

fn elem_of(cx: &Context, v: ipu_ir::Value) -> Option<ipu_ir::Type> {
    cx.tensor_parts(cx.value_type(v)).map(|(_, e)| e)
}

/// The `axis` attribute of `op`, checked against `rank`.
fn axis_of(cx: &Context, op: Op, axis: i64, rank: usize) -> Result<usize, Diagnostic> {
    if axis < 0 || axis as usize >= rank {
        return Err(op_error(
            cx,
            op,
            format!("axis {axis} is out of range for rank {rank}"),
        ));
    }
    Ok(axis as usize)
}

/// The result shape of reducing `shape` over `axes`.
pub fn reduced_shape(shape: &[i64], axes: &[i64], keepdims: bool) -> Vec<i64> {
    shape
        .iter()
        .enumerate()
        .filter_map(|(d, &n)| {
            if axes.contains(&(d as i64)) {
                keepdims.then_some(1)
            } else {
                Some(n)
            }
        })
        .collect()
}

fn verify_reduce(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    verify_mapped(cx, op)?;
    let reduce = Reduce(op);
    let (input, result) = (reduce.input(cx), cx.result(op, 0));
    let shape = shape_of(cx, input);
    let rank = shape.len() as i64;
    let axes = reduce.axes(cx);
    if axes.is_empty()
        || !axes.windows(2).all(|w| w[0] < w[1])
        || axes.iter().any(|&a| a < 0 || a >= rank)
    {
        return Err(op_error(
            cx,
            op,
            format!("axes {axes:?} must be sorted, unique and within rank {rank}, and not empty"),
        ));
    }
    let keepdims = reduce.keepdims(cx);
    let want = reduced_shape(&shape, axes, keepdims);
    if shape_of(cx, result) != want || elem_of(cx, input) != elem_of(cx, result) {
        return Err(op_error(
            cx,
            op,
            format!("the result must be the input's element type with shape {want:?}"),
        ));
    }
    let grid = reduce.grid(cx);
    if grid.len() != shape.len() || grid.iter().any(|&g| g < 1) {
        return Err(op_error(
            cx,
            op,
            format!("grid must give every one of the input's {rank} dimensions at least 1 block"),
        ));
    }
    let tiles = reduce.tiles(cx);
    if tiles.len() != 2 || tiles[0] < 0 || tiles[1] < 1 {
        return Err(op_error(cx, op, "tiles must be [first, stride]"));
    }
    let m = mapping_of(cx, op)?;
    // Reduced axes kept as size 1 have one block, like their extent.
    let kept = reduced_shape(grid, axes, keepdims);
    if m.grid != kept {
        return Err(op_error(
            cx,
            op,
            format!("the result mapping's grid must be the input grid on the kept axes, {kept:?}"),
        ));
    }
    Ok(())
}

fn verify_softmax(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    verify_mapped(cx, op)?;
    let softmax = Softmax(op);
    let input = softmax.input(cx);
    let shape = shape_of(cx, input);
    let rank = shape.len();
    let axis = axis_of(cx, op, softmax.axis(cx), rank)?;
    let element = |v| cx.tensor_parts(cx.value_type(v)).map(|(_, e)| e);
    let (ex, ey) = (element(input), element(cx.result(op, 0)));
    if shape_of(cx, cx.result(op, 0)) != shape {
        return Err(op_error(cx, op, "the result must have the input's shape"));
    }
    let widens = ex == Some(Type::F16) && ey == Some(Type::F32);
    if ex != ey && !widens {
        return Err(op_error(
            cx,
            op,
            "the result must have the input's element type, or widen f16 to f32",
        ));
    }
    let params = cx.operands(op).len() - 1;
    if params > 1 {
        return Err(op_error(
            cx,
            op,
            format!("takes the input and at most a row vector, got {params} of those"),
        ));
    }
    if params == 1 {
        let v = cx.operand(op, 1);
        let vshape = shape_of(cx, v);
        let row = vshape.last() == shape.last()
            && axis + 1 == rank
            && vshape[..vshape.len().saturating_sub(1)]
                .iter()
                .all(|&d| d == 1);
        if !row || element(v) != ey {
            return Err(op_error(
                cx,
                op,
                "operand #1 must be a row vector along the axis, the last, of the result's element type",
            ));
        }
    }
    let m = mapping_of(cx, op)?;
    let n = shape[axis];
    if n % m.grid[axis] != 0 {
        return Err(op_error(
            cx,
            op,
            format!(
                "the mapping cuts the axis of {n} into {} uneven blocks",
                m.grid[axis]
            ),
        ));
    }
    Ok(())
}

fn verify_layer_norm(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    verify_mapped(cx, op)?;
    let ln = LayerNorm(op);
    let input = ln.input(cx);
    let shape = shape_of(cx, input);
    let axis = axis_of(cx, op, ln.axis(cx), shape.len())?;
    let params = cx.operands(op).len() - 1;
    if params > 2 {
        return Err(op_error(
            cx,
            op,
            format!("takes the input and at most a scale and a bias, got {params} of those"),
        ));
    }
    if cx.value_type(cx.result(op, 0)) != cx.value_type(input) {
        return Err(op_error(cx, op, "the result must have the input's type"));
    }
    let norm: i64 = shape[axis..].iter().product();
    for i in 1..=params {
        let n: i64 = shape_of(cx, cx.operand(op, i)).iter().product();
        if n != norm {
            return Err(op_error(
                cx,
                op,
                format!(
                    "operand #{i} has {n} elements, but the normalized shape {:?} has {norm}",
                    &shape[axis..]
                ),
            ));
        }
    }
    let m = mapping_of(cx, op)?;
    if m.grid[axis + 1..].iter().any(|&g| g != 1) || shape[axis] % m.grid[axis] != 0 {
        return Err(op_error(
            cx,
            op,
            "the mapping may cut only the first normalized dimension, and evenly",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipu_ir::opdef::Registry;
    use std::sync::Arc;

    fn mapping(cx: &mut Context, grid: Vec<i64>, tiles: Vec<i64>) -> Result<Mapping, String> {
        let g = cx.i64_array_attr(grid);
        let t = cx.i64_array_attr(tiles);
        let entries = vec![(cx.sym("grid"), g), (cx.sym("tiles"), t)];
        let a = cx.dict_attr(entries);
        Mapping::from_attr(cx, a)
    }

    #[test]
    fn every_block_of_a_mapping_is_on_a_tile_index() {
        let mut cx = Context::new(Arc::new(Registry::new()));
        let top = u32::MAX as i64;
        // The last block on tile u32::MAX is the most a mapping may place.
        let m = mapping(&mut cx, vec![2, 3], vec![top - 10, 2]).unwrap();
        assert_eq!(m.last_tile(), top);
        assert!(mapping(&mut cx, vec![2, 3], vec![top - 9, 2]).is_err());
        assert!(mapping(&mut cx, vec![1 << 32, 2], vec![0, 1]).is_err());
        // Block counts that overflow any integer are refused, not computed.
        assert!(mapping(&mut cx, vec![i64::MAX, i64::MAX, i64::MAX], vec![0, 1]).is_err());
        assert!(mapping(&mut cx, vec![1, 1], vec![0, i64::MAX]).is_ok());
    }
}
