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

const MAPPING_ATTR: AttrConstraint = AttrConstraint {
    description: "tile mapping {grid = array<i64: ...>, tiles = array<i64: first, stride>}",
    check: |cx, a| Mapping::from_attr(cx, a).is_ok(),
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
    summary: "A compute set multiplying [M, K] by [K, N], or a batch [B, M, K] by [B, K, N] (either batch may be 1, \
              shared): the work is cut into a (pb x) pm x pn x pk grid of blocks (`plan`), block (b, i, j, k) on tile \
              first + ((k * pb + b) * pm * pn + i * pn + j) * stride (`tiles`), each running `kernel` (`cycles` by \
              its cycle formula); with pk > 1 the `partials`-typed partial sums are reduced onto the k = 0 tiles. \
              The result lives as `mapping` says.",
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
    description: "elementwise function #tile.fn<name> (add, sub, mul, div, max, min, pow, relu, gelu, gelu_tanh, \
                  exp, tanh, erf, rsqrt, sqrt, neg, abs, sigmoid, reciprocal, log, copy, cast; equal, less, greater, \
                  and, or, not)",
    check: |cx, a| MapFn::from_attr(cx, a).is_some(),
};

pub static MAP: OpDef = OpDef {
    name: "tile.map",
    summary: "An elementwise compute set (`fn`, a #tile.fn<...>): each tile of `mapping` computes its block of the \
              result with `kernel` (the exact specialisation the machine stage calls; `cycles` from its cycle \
              formula), from the matching (broadcast) elements of the operands; a cast to FP8 carries the \
              result's power-of-two `scale`.",
    operands: &[ValueDef { name: "inputs", arity: Arity::Variadic, constraint: constraints::ANY_TENSOR }],
    results: RESULT,
    attributes: &[
        AttrDef { name: "fn", optional: false, constraint: MAP_FN_ATTR },
        KERNEL,
        CYCLES,
        MAPPING,
        AttrDef { name: "scale", optional: true, constraint: I64_ATTR },
    ],
    traits: &[Trait::Pure],
    assembly_format: Some("$inputs attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_mapped),
    ..OpDef::EMPTY
};

pub static PREDICATE: OpDef = OpDef {
    name: "tile.predicate",
    summary: "An elementwise compute set with a boolean (i1, one byte per element) result: a comparison of f32 or \
              f16 operands (`fn` equal, less, greater; NaN compares false) or boolean logic (and, or, not). Each \
              tile of `mapping` computes its block with `kernel` (`cycles` from its cycle formula) from the \
              matching (broadcast) elements of the operands.",
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
    verify: Some(verify_mapped),
    ..OpDef::EMPTY
};

pub static SELECT: OpDef = OpDef {
    name: "tile.select",
    summary: "An elementwise select: `cond ? a : b` with numpy broadcasting, `cond` boolean (i1), `a` and `b` f32 or \
              f16. Each tile of `mapping` computes its block with `kernel` (`cycles` from its cycle formula).",
    operands: &[
        ValueDef { name: "cond", ..TENSOR },
        ValueDef { name: "a", ..TENSOR },
        ValueDef { name: "b", ..TENSOR },
    ],
    results: RESULT,
    attributes: &[KERNEL, CYCLES, MAPPING],
    traits: &[Trait::Pure],
    assembly_format: Some("$cond `,` $a `,` $b attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_mapped),
    ..OpDef::EMPTY
};

pub static GATHER: OpDef = OpDef {
    name: "tile.gather",
    summary: "A gather along `axis` with integer indices known only at run time (an embedding lookup): `data` is \
              laid out with the whole axis on every tile (`data_mapping`: split over the other dimensions only), \
              every tile receives all the indices, and looks its rows up locally with `kernel` (`cycles` from its \
              cycle formula; an index out of range faults). The result's blocks (`mapping`) sit on their data \
              block's tile.",
    operands: &[ValueDef { name: "data", ..TENSOR }, ValueDef { name: "indices", ..TENSOR }],
    results: RESULT,
    attributes: &[
        AttrDef { name: "axis", optional: false, constraint: I64_ATTR },
        KERNEL,
        CYCLES,
        MAPPING,
        AttrDef { name: "data_mapping", optional: false, constraint: MAPPING_ATTR },
    ],
    traits: &[Trait::Pure],
    assembly_format: Some("$data `,` $indices attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_mapped),
    ..OpDef::EMPTY
};

const VIEW_KIND_ATTR: AttrConstraint = AttrConstraint {
    description: "\"transpose\", \"reshape\", \"broadcast\", \"slice\", \"concat\" or \"gather\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if matches!(&**s, "transpose" | "reshape" | "broadcast" | "slice" | "concat" | "gather")),
};

pub static VIEW: OpDef = OpDef {
    name: "tile.view",
    summary: "A re-indexing of its inputs (`kind`: transpose by `permutation`, reshape, broadcast, slice by \
              `starts`/`ends`/`steps`, concat along `axis`, gather along `axis` of the constant `indices`) with no \
              storage of its own: its readers receive \
              their rectangles from the inputs' blocks during the exchange that feeds them. `mapping` is where \
              its blocks go if it has to be stored (streamed to the host).",
    operands: &[ValueDef { name: "inputs", arity: Arity::Variadic, constraint: constraints::ANY_TENSOR }],
    results: RESULT,
    attributes: &[
        AttrDef { name: "kind", optional: false, constraint: VIEW_KIND_ATTR },
        AttrDef { name: "permutation", optional: true, constraint: I64_ARRAY },
        AttrDef { name: "starts", optional: true, constraint: I64_ARRAY },
        AttrDef { name: "ends", optional: true, constraint: I64_ARRAY },
        AttrDef { name: "steps", optional: true, constraint: I64_ARRAY },
        AttrDef { name: "axis", optional: true, constraint: I64_ATTR },
        AttrDef { name: "indices", optional: true, constraint: I64_ARRAY },
        MAPPING,
    ],
    traits: &[Trait::Pure],
    assembly_format: Some("$inputs attr-dict `:` functional-type(operands, results)"),
    verify: Some(verify_view),
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
    ops: &[
        &HOST_INPUT,
        &CONSTANT,
        &MATMUL,
        &MAP,
        &PREDICATE,
        &SELECT,
        &GATHER,
        &VIEW,
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
    pub fn from_attr(cx: &Context, a: Attr) -> Result<Mapping, String> {
        let AttrKind::Dictionary(entries) = cx.attr_kind(a) else {
            return Err("a mapping is a dictionary".into());
        };
        let get = |n: &str| {
            entries
                .iter()
                .find(|(k, _)| cx.str(*k) == n)
                .and_then(|(_, v)| match cx.attr_kind(*v) {
                    AttrKind::I64Array(x) => Some(x.clone()),
                    _ => None,
                })
        };
        let grid = get("grid").ok_or("a mapping needs grid = array<i64: ...>")?;
        let tiles = get("tiles").ok_or("a mapping needs tiles = array<i64: first, stride>")?;
        if entries.len() != 2 {
            return Err("a mapping holds exactly grid and tiles".into());
        }
        if grid.iter().any(|&g| g < 1) {
            return Err("grid entries must be at least 1".into());
        }
        let [first, stride] = tiles[..] else {
            return Err("tiles must be [first, stride]".into());
        };
        if first < 0 || stride < 1 {
            return Err("tiles must have first >= 0 and stride >= 1".into());
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
    let rank = cx.tensor_parts(t).map(|(s, _)| s.len()).unwrap_or(0);
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

fn verify_matmul(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    verify_mapped(cx, op)?;
    let shape = |v| {
        cx.tensor_parts(cx.value_type(v))
            .map(|(s, _)| s.to_vec())
            .unwrap_or_default()
    };
    let (a, b) = (shape(cx.operand(op, 0)), shape(cx.operand(op, 1)));
    let batched = a.len() == 3;
    let plan = cx.get_i64_array_attr(op, "plan").unwrap_or_default();
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
    let tiles = cx.get_i64_array_attr(op, "tiles").unwrap_or_default();
    if tiles.len() != 2 || tiles[0] < 0 || tiles[1] < 1 {
        return Err(op_error(cx, op, "tiles must be [first, stride]"));
    }
    let m = mapping_of(cx, op)?;
    if m.grid[..] != plan[..want - 1] || m.first_tile != tiles[0] || m.stride != tiles[1] {
        return Err(op_error(
            cx,
            op,
            "the result mapping must be the plan's (batch x) M x N grid on its k = 0 tiles",
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
        return Err(op_error(
            cx,
            op,
            "operands must be [M, K] and [K, N], or [B, M, K] and [B, K, N] (B may be 1 on one side)",
        ));
    }
    Ok(())
}

fn verify_view(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    verify_mapped(cx, op)?;
    let kind = cx.get_str_attr(op, "kind").unwrap_or("");
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
    let need = |n: &str| -> Result<Vec<i64>, Diagnostic> {
        cx.get_i64_array_attr(op, n)
            .map(<[i64]>::to_vec)
            .ok_or_else(|| op_error(cx, op, format!("a {kind} view needs '{n}'")))
    };
    let numel = |s: &[i64]| s.iter().product::<i64>();
    match kind {
        "transpose" => {
            let p = need("permutation")?;
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
            let (st, en, sp) = (need("starts")?, need("ends")?, need("steps")?);
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
            let axis = cx.get_int_attr(op, "axis").unwrap_or(-1);
            let idx = need("indices")?;
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
            let axis = cx.get_int_attr(op, "axis").unwrap_or(-1);
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
