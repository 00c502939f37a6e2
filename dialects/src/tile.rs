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

use ipu_ir::context::{Context, Op};
use ipu_ir::diag::Diagnostic;
use ipu_ir::opdef::{constraints, Arity, AttrConstraint, AttrDef, Dialect, OpDef, Trait, ValueDef};
use ipu_ir::printer::type_to_string;
use ipu_ir::types::{Attr, AttrKind};
use ipu_ir::verify::op_error;

const TENSOR: ValueDef = ValueDef {
    name: "input",
    arity: Arity::Single,
    constraint: constraints::ANY_TENSOR,
};
const RESULT: &[ValueDef] = &[ValueDef {
    name: "result",
    ..TENSOR
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
const MAPPING: AttrDef = AttrDef {
    name: "mapping",
    optional: false,
    constraint: MAPPING_ATTR,
};
const KERNEL: AttrDef = AttrDef {
    name: "kernel",
    optional: false,
    constraint: constraints::STRING_ATTR,
};
const CYCLES: AttrDef = AttrDef {
    name: "cycles",
    optional: false,
    constraint: I64_ATTR,
};

pub static HOST_INPUT: OpDef = OpDef {
    name: "tile.host_input",
    summary: "A function argument streamed from the host into tile memory, laid out by `mapping`.",
    operands: &[TENSOR],
    results: RESULT,
    attributes: &[MAPPING],
    traits: &[Trait::Pure, Trait::SameOperandsAndResultType],
    assembly_format: Some("$input attr-dict `:` type($result)"),
    verify: Some(verify_mapped),
    ..OpDef::EMPTY
};

pub static CONSTANT: OpDef = OpDef {
    name: "tile.constant",
    summary: "A constant loaded with the tile images, laid out by `mapping`.",
    results: RESULT,
    attributes: &[
        AttrDef {
            name: "value",
            optional: false,
            constraint: constraints::TYPED_ATTR,
        },
        MAPPING,
    ],
    traits: &[Trait::Pure, Trait::ConstantLike],
    custom_assembly: Some(ipu_ir::constant::CONSTANT_ASSEMBLY),
    verify: Some(verify_constant),
    ..OpDef::EMPTY
};

pub static MATMUL: OpDef = OpDef {
    name: "tile.matmul",
    summary: "A compute set multiplying [M, K] by [K, N]: the work is cut into a pm x pn x pk grid of blocks (`plan`), \
              block (i, j, k) on tile first + ((k * pm + i) * pn + j) * stride (`tiles`), each running `kernel` (the \
              compute set's estimated `cycles`); with pk > 1 the `partials`-typed partial sums are reduced onto the \
              k = 0 tiles. The result \
              lives as `mapping` says.",
    operands: &[ValueDef { name: "lhs", ..TENSOR }, ValueDef { name: "rhs", ..TENSOR }],
    results: RESULT,
    attributes: &[
        AttrDef { name: "plan", optional: false, constraint: I64_ARRAY },
        AttrDef { name: "tiles", optional: false, constraint: I64_ARRAY },
        KERNEL,
        CYCLES,
        MAPPING,
        AttrDef { name: "partials", optional: false, constraint: constraints::ANY_ATTR },
    ],
    traits: &[Trait::Pure],
    assembly_format: Some("$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_matmul),
    ..OpDef::EMPTY
};

const MAP_FN_ATTR: AttrConstraint = AttrConstraint {
    description: "elementwise function #tile.fn<name> (add, sub, mul, div, max, min, relu, gelu, exp, tanh, erf, \
                  rsqrt, sqrt, neg, abs, sigmoid, reciprocal, log, copy, cast)",
    check: |cx, a| MapFn::from_attr(cx, a).is_some(),
};

pub static MAP: OpDef = OpDef {
    name: "tile.map",
    summary: "An elementwise compute set (`fn`, a #tile.fn<...>): each tile of `mapping` computes its block of the \
              result with `kernel` (the exact specialisation the machine stage calls; `cycles` from its cycle \
              formula), from the matching (broadcast) elements of the operands.",
    operands: &[ValueDef { name: "inputs", arity: Arity::Variadic, constraint: constraints::ANY_TENSOR }],
    results: RESULT,
    attributes: &[
        AttrDef { name: "fn", optional: false, constraint: MAP_FN_ATTR },
        KERNEL,
        CYCLES,
        MAPPING,
    ],
    traits: &[Trait::Pure],
    assembly_format: Some("$inputs attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_map),
    ..OpDef::EMPTY
};

pub static HOST_OUTPUT: OpDef = OpDef {
    name: "tile.host_output",
    summary: "Streams a result from tile memory to the host as output `name`.",
    operands: &[TENSOR],
    attributes: &[AttrDef {
        name: "name",
        optional: false,
        constraint: constraints::STRING_ATTR,
    }],
    assembly_format: Some("$input attr-dict `:` type($input)"),
    ..OpDef::EMPTY
};

pub static TILE_DIALECT: Dialect = Dialect {
    name: "tile",
    description: "Tensors distributed over tiles and compute sets of per-tile vertices.",
    ops: &[&HOST_INPUT, &CONSTANT, &MATMUL, &MAP, &HOST_OUTPUT],
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
    Log = "log", Copy = "copy", Cast = "cast",
}

impl MapFn {
    /// The binary functions (two operands); the others take one.
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            MapFn::Add | MapFn::Sub | MapFn::Mul | MapFn::Div | MapFn::Max | MapFn::Min
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
    verify_mapped(cx, op)
}

/// The kernel a compute set calls and its estimated cycles.
fn verify_kernel(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    if cx.get_str_attr(op, "kernel").is_some_and(str::is_empty) {
        return Err(op_error(
            cx,
            op,
            "kernel must name a kernel specialisation, not be empty",
        ));
    }
    match cx.get_int_attr(op, "cycles") {
        Some(c) if c < 0 => Err(op_error(
            cx,
            op,
            format!("cycles must be non-negative, not {c}"),
        )),
        _ => Ok(()),
    }
}

fn verify_map(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    verify_mapped(cx, op)?;
    verify_kernel(cx, op)?;
    let Some(f) = cx.get_attr(op, "fn").and_then(|a| MapFn::from_attr(cx, a)) else {
        return Err(op_error(cx, op, "requires attribute 'fn'"));
    };
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
    verify_kernel(cx, op)?;
    let plan = cx.get_i64_array_attr(op, "plan").unwrap_or_default();
    if plan.len() != 3 || plan.iter().any(|&p| p < 1) {
        return Err(op_error(
            cx,
            op,
            "plan must be [pm, pn, pk], each at least 1",
        ));
    }
    let tiles = cx.get_i64_array_attr(op, "tiles").unwrap_or_default();
    if tiles.len() != 2 || tiles[0] < 0 || tiles[1] < 1 {
        return Err(op_error(cx, op, "tiles must be [first, stride]"));
    }
    let m = mapping_of(cx, op)?;
    if m.grid != [plan[0], plan[1]] || m.first_tile != tiles[0] || m.stride != tiles[1] {
        return Err(op_error(
            cx,
            op,
            "the result mapping must be the plan's M x N grid on its k = 0 tiles",
        ));
    }
    let shape = |i: usize| {
        cx.tensor_parts(cx.value_type(cx.operand(op, i)))
            .map(|(s, _)| s.to_vec())
            .unwrap_or_default()
    };
    let (a, b) = (shape(0), shape(1));
    if a.len() != 2 || b.len() != 2 || a[1] != b[0] {
        return Err(op_error(
            cx,
            op,
            format!("operands must be [M, K] and [K, N], not {a:?} and {b:?}"),
        ));
    }
    let rt = cx.value_type(cx.result(op, 0));
    let r = cx.value_shape(cx.result(op, 0));
    if r != [a[0], b[1]] {
        return Err(op_error(
            cx,
            op,
            format!(
                "result must be [M, N] = [{}, {}], not '{}'",
                a[0],
                b[1],
                type_to_string(cx, rt)
            ),
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
