//! `convert-nn-to-tile`: distributes an `nn` program over the target's tiles.
//!
//! Every matmul gets a plan from [`plan::plan_matmul`] (the cheapest split
//! over M, N and K that fits each tile's memory, costed with the target's
//! figures); elementwise ops follow their producer's mapping; function
//! arguments become host inputs and constants tile constants, laid out as
//! their first consumer wants them; returned values are streamed out.
//! Ops of the first op set only: anything else is a diagnostic naming the op.

pub mod plan;

use ipu_dialects::tile::Mapping;
use ipu_ir::pass::{Pass, PassInfo, PassOptionInfo, PassOptions};
use ipu_ir::{Attr, Context, Diagnostic, Op, OperationState, Type, TypeKind, Value};
use ipu_target::Target;
use plan::{plan_matmul, GemmKind};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The module attribute naming the target every stage compiles for.
pub const TARGET_ATTR: &str = "ipu.target";

pub const INFO: PassInfo = PassInfo {
    argument: "convert-nn-to-tile",
    name: "ConvertNNToTile",
    description: "Distribute nn ops over the tiles of the target: plan every matmul's M/N/K split with the target's \
                  cost model within each tile's memory, map elementwise ops after their producers, stream \
                  arguments in and results out.",
    anchor: Some("builtin.module"),
    options: &[TARGET_OPTION],
    create,
};

/// The option every target-dependent pass takes.
pub const TARGET_OPTION: PassOptionInfo = PassOptionInfo {
    name: "target",
    description: "Target name or file (default: the module's ipu.target attribute)",
    default: "",
};

fn create(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(NnToTile {
        target_option: o
            .get("target")
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    }))
}

struct NnToTile {
    target_option: Option<String>,
}

/// The target a module is compiled for: `option`, else its `ipu.target`.
pub fn module_target(
    cx: &mut Context,
    module: Op,
    option: Option<&str>,
) -> Result<Arc<Target>, Diagnostic> {
    let name = match option
        .map(str::to_string)
        .or_else(|| cx.get_str_attr(module, TARGET_ATTR).map(str::to_string))
    {
        Some(n) => n,
        None => {
            return Err(Diagnostic::error(
                cx.op_loc(module),
                "no target: give --target NAME|FILE, or the pass option target=NAME",
            ))
        }
    };
    let t = Target::load(&name)
        .map_err(|e| Diagnostic::error(cx.op_loc(module), format!("target '{name}': {e}")))?;
    let a = cx.string_attr(&name);
    cx.set_attr(module, TARGET_ATTR, a);
    Ok(Arc::new(t))
}

impl Pass for NnToTile {
    fn run(&mut self, cx: &mut Context, module: Op) -> Result<(), Diagnostic> {
        let target = module_target(cx, module, self.target_option.as_deref())?;
        for f in cx.nested_ops(module) {
            if cx.is(f, "func.func") && cx.entry_block(cx.region(f, 0)).is_some() {
                lower_function(cx, f, &target)?;
            }
        }
        Ok(())
    }
}

fn elem_of(cx: &Context, v: Value) -> Type {
    cx.tensor_parts(cx.value_type(v))
        .map(|(_, e)| e)
        .unwrap_or(Type::NONE)
}

fn elem_name(cx: &Context, t: Type) -> String {
    ipu_ir::printer::type_to_string(cx, t)
}

/// Blocks spread over the tiles, outer dimensions first.
pub fn spread(shape: &[i64], tiles: u32) -> Mapping {
    let mut remaining = tiles.max(1) as i64;
    let grid = shape
        .iter()
        .map(|&d| {
            let g = d.max(1).min(remaining);
            remaining /= g;
            g
        })
        .collect();
    Mapping {
        grid,
        first_tile: 0,
        stride: 1,
    }
}

struct Lowered {
    mappings: FxHashMap<Value, Mapping>,
}

/// What the consumers of a value want its layout to be (the first one wins).
fn operand_preferences(
    cx: &Context,
    ops: &[Op],
    target: &Target,
) -> Result<FxHashMap<Value, Mapping>, Diagnostic> {
    let mut want: FxHashMap<Value, Mapping> = FxHashMap::default();
    for &op in ops {
        if cx.is(op, "nn.matmul") {
            if let Ok(p) = matmul_plan(cx, op, target) {
                let (a, b) = (cx.operand(op, 0), cx.operand(op, 1));
                // When the GEMM reads A in K-chunks, A's blocks are best kept
                // on tiles outside the matmul, so that every matmul tile
                // receives its block already chunked instead of re-laying it
                // out (the slowest tile bounds the superstep).
                let in_bytes = crate::tile_to_exchange::gemm_input_bytes(cx, a, b);
                let k = cx.value_shape(a)[1];
                let chunked =
                    crate::tile_to_exchange::k_chunk((k as u64).div_ceil(p.pk) as i64, in_bytes)
                        .is_some();
                let apart = chunked && p.tiles() + p.pm * p.pk <= target.tiles() as u64;
                let lhs = Mapping {
                    grid: vec![p.pm as i64, p.pk as i64],
                    first_tile: if apart { p.tiles() as i64 } else { 0 },
                    stride: 1,
                };
                let rhs = Mapping {
                    grid: vec![p.pk as i64, p.pn as i64],
                    first_tile: 0,
                    stride: 1,
                };
                want.entry(a).or_insert(lhs);
                want.entry(b).or_insert(rhs);
            }
        }
    }
    Ok(want)
}

fn gemm_kind(cx: &Context, op: Op) -> Result<GemmKind, String> {
    let (a, b) = (
        elem_of(cx, cx.operand(op, 0)),
        elem_of(cx, cx.operand(op, 1)),
    );
    let is_f8 = |t: Type| matches!(cx.type_kind(t), TypeKind::F8E4M3FN | TypeKind::F8E5M2);
    let is_f16ish = |t: Type| is_f8(t) || matches!(cx.type_kind(t), TypeKind::F16);
    if is_f8(a) && is_f8(b) {
        return Ok(GemmKind::F8F16);
    }
    if is_f16ish(a) && is_f16ish(b) {
        // f8 operands widen to f16 exactly; partials stay f32 so rounding happens once, as in the reference.
        return Ok(GemmKind::F16F32);
    }
    Err(format!(
        "a matmul of {} x {} elements is not lowered yet (f16 and f8 operands are)",
        elem_name(cx, a),
        elem_name(cx, b)
    ))
}

fn matmul_plan(cx: &Context, op: Op, target: &Target) -> Result<plan::MatmulPlan, Diagnostic> {
    let err = |m: String| Diagnostic::error(cx.op_loc(op), format!("'nn.matmul' op {m}"));
    let (a, b) = (
        cx.value_shape(cx.operand(op, 0)),
        cx.value_shape(cx.operand(op, 1)),
    );
    if a.len() != 2 || b.len() != 2 {
        return Err(err(format!(
            "is not lowered yet for rank {} x rank {} operands (2-D matmuls are)",
            a.len(),
            b.len()
        )));
    }
    let kind = gemm_kind(cx, op).map_err(err)?;
    plan_matmul(target, a[0] as u64, a[1] as u64, b[1] as u64, kind).map_err(|e| {
        err(format!(
            "[{}x{}] x [{}x{}] on target {}: {e}",
            a[0], a[1], b[0], b[1], target.name
        ))
    })
}

/// Estimated cycles of an elementwise op over `elements` per tile.
fn map_cycles(cx: &Context, f: &str, elem: Type, elements: i64, target: &Target) -> i64 {
    let lanes = match cx.type_kind(elem) {
        TypeKind::F32 => target.vector.f32_lanes,
        TypeKind::F8E4M3FN | TypeKind::F8E5M2 => target.vector.f8_lanes,
        _ => target.vector.f16_lanes,
    }
    .max(1) as i64;
    // A: vector instructions per element group; gelu's polynomial and tanh take about 24.
    let per_vector = if f == "gelu" { 24 } else { 1 };
    (elements + lanes - 1) / lanes * per_vector
}

fn lower_function(cx: &mut Context, f: Op, target: &Target) -> Result<(), Diagnostic> {
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let ops = cx.block_ops_vec(entry);
    let want = operand_preferences(cx, &ops, target)?;
    let mut lowered = Lowered {
        mappings: FxHashMap::default(),
    };
    let tiles = target.tiles();
    let first = cx.first_op(entry);
    // Arguments: streamed in.
    for arg in cx.block_args(entry).to_vec() {
        if !cx.has_uses(arg) {
            continue;
        }
        let m = want
            .get(&arg)
            .cloned()
            .unwrap_or_else(|| spread(&cx.value_shape(arg), tiles));
        let loc = cx.block_arg_loc(arg);
        let (ty, mapping) = (cx.value_type(arg), m.to_attr(cx));
        let op = build(
            cx,
            "tile.host_input",
            &[arg],
            Some(ty),
            vec![("mapping", mapping)],
            loc,
        );
        match first {
            Some(o) => cx.insert_op_before(o, op),
            None => cx.append_op(entry, op),
        }
        let v = cx.result(op, 0);
        replace_uses_except(cx, arg, v, op);
        lowered.mappings.insert(v, m);
    }
    for op in ops {
        let name = cx.name_str(op).to_string();
        let loc = cx.op_loc(op);
        let new = match name.as_str() {
            "func.return" => {
                for (i, v) in cx.operands(op).to_vec().into_iter().enumerate() {
                    let out_name = ipu_dialects::func::io_name(cx, f, "res_attrs", i)
                        .unwrap_or_else(|| format!("result{i}"));
                    let a = cx.string_attr(&out_name);
                    let o = build(cx, "tile.host_output", &[v], None, vec![("name", a)], loc);
                    cx.insert_op_before(op, o);
                }
                continue;
            }
            "nn.constant" => {
                let v = cx.result(op, 0);
                let m = want
                    .get(&v)
                    .cloned()
                    .unwrap_or_else(|| spread(&cx.value_shape(v), tiles));
                let value = cx.get_attr(op, "value").expect("verified");
                let ty = cx.value_type(v);
                let mapping = m.to_attr(cx);
                let o = build(
                    cx,
                    "tile.constant",
                    &[],
                    Some(ty),
                    vec![("value", value), ("mapping", mapping)],
                    loc,
                );
                lowered.mappings.insert(cx.result(o, 0), m);
                o
            }
            "nn.matmul" => {
                let p = matmul_plan(cx, op, target)?;
                let m = Mapping {
                    grid: vec![p.pm as i64, p.pn as i64],
                    first_tile: 0,
                    stride: 1,
                };
                let attrs = vec![
                    (
                        "plan",
                        cx.i64_array_attr(vec![p.pm as i64, p.pn as i64, p.pk as i64]),
                    ),
                    ("tiles", cx.i64_array_attr(vec![0, 1])),
                    ("kernel", cx.string_attr(&p.kernel_name())),
                    ("cycles", cx.i64_attr(p.compute_cycles as i64)),
                    (
                        "partials",
                        cx.type_attr(if p.kind.partial_bytes() == 4 {
                            Type::F32
                        } else {
                            Type::F16
                        }),
                    ),
                    ("mapping", m.to_attr(cx)),
                ];
                let operands = cx.operands(op).to_vec();
                let ty = cx.value_type(cx.result(op, 0));
                let o = build(cx, "tile.matmul", &operands, Some(ty), attrs, loc);
                lowered.mappings.insert(cx.result(o, 0), m);
                o
            }
            "nn.add" | "nn.mul" | "nn.relu" | "nn.gelu" | "nn.cast" => {
                let fname = name.trim_start_matches("nn.");
                if cx.get_attr(op, "approximate").is_some() || cx.get_attr(op, "scale").is_some() {
                    return Err(Diagnostic::error(loc, format!("'{name}' op with these attributes is not lowered to the tile dialect yet")));
                }
                let result = cx.result(op, 0);
                let rshape = cx.value_shape(result);
                let operands = cx.operands(op).to_vec();
                let m = operands
                    .iter()
                    .find(|&&v| cx.value_shape(v) == rshape)
                    .and_then(|v| lowered.mappings.get(v).cloned())
                    .unwrap_or_else(|| spread(&rshape, tiles));
                let block: i64 = m.block_shape(&rshape).iter().product();
                let relem = elem_of(cx, result);
                let kernel = match fname {
                    "cast" => format!(
                        "cast_{}_{}",
                        elem_name(cx, elem_of(cx, operands[0])),
                        elem_name(cx, relem)
                    ),
                    _ => format!("{fname}_{}", elem_name(cx, relem)),
                };
                let cycles = map_cycles(cx, fname, relem, block, target);
                let attrs = vec![
                    ("fn", cx.string_attr(fname)),
                    ("kernel", cx.string_attr(&kernel)),
                    ("cycles", cx.i64_attr(cycles)),
                    ("mapping", m.to_attr(cx)),
                ];
                let ty = cx.value_type(result);
                let o = build(cx, "tile.map", &operands, Some(ty), attrs, loc);
                lowered.mappings.insert(cx.result(o, 0), m);
                o
            }
            other => {
                return Err(Diagnostic::error(
                    loc,
                    format!("'{other}' op is not lowered to the tile dialect yet"),
                ));
            }
        };
        cx.insert_op_before(op, new);
        let (old, newv) = (cx.result(op, 0), cx.result(new, 0));
        cx.replace_all_uses(old, newv);
        cx.erase_op(op);
    }
    Ok(())
}

fn build(
    cx: &mut Context,
    name: &str,
    operands: &[Value],
    result: Option<Type>,
    attrs: Vec<(&str, Attr)>,
    loc: ipu_ir::Loc,
) -> Op {
    let n = cx.op_name(name);
    let mut st = OperationState::new(n, loc);
    st.operands.extend_from_slice(operands);
    st.result_types.extend(result);
    let entries = attrs.into_iter().map(|(k, v)| (cx.sym(k), v)).collect();
    st.attrs = cx.dict_attr(entries);
    cx.create_op(st)
}

fn replace_uses_except(cx: &mut Context, from: Value, to: Value, except: Op) {
    for u in cx.uses(from).to_vec() {
        if u.op != except {
            cx.set_operand(u.op, u.index as usize, to);
        }
    }
}
