//! `convert-nn-to-tile`: distributes an `nn` program over the target's tiles.
//!
//! Every op with a device lowering ([`crate::device`]) chooses its result's
//! mapping and its kernel and becomes a `tile` op; function arguments
//! become host inputs and constants tile constants, laid out as their first
//! consumer wants them; returned values are streamed out. An op without a
//! device lowering is a diagnostic naming it.

pub mod legalize;

use crate::device::{for_nn, TileEnv};
use crate::geometry::spread;
use crate::target::{functions, module_target, target_option, TARGET_OPTION};
use ipu_dialects::tile::Mapping;
use ipu_ir::pass::{Pass, PassInfo, PassOptions};
use ipu_ir::{Context, Diagnostic, Op, Value};
use ipu_target::Target;
use rustc_hash::FxHashMap;

pub const INFO: PassInfo = PassInfo {
    argument: "convert-nn-to-tile",
    name: "ConvertNNToTile",
    description: "Distribute nn ops over the tiles of the target: every op's device lowering chooses its \
                  mapping (the matmul planner cuts M/N/K with the target's cost model within each tile's \
                  memory; elementwise ops follow their producers) and its kernel specialisation, costed by \
                  the kernel's cycle formula; arguments stream in and results out.",
    anchor: Some("builtin.module"),
    options: &[TARGET_OPTION],
    create,
};

fn create(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(NnToTile {
        target_option: target_option(o),
    }))
}

struct NnToTile {
    target_option: Option<String>,
}

impl Pass for NnToTile {
    fn run(&mut self, cx: &mut Context, module: Op) -> Result<(), Diagnostic> {
        let target = module_target(cx, module, self.target_option.as_deref())?;
        for f in functions(cx, module) {
            lower_function(cx, f, &target)?;
        }
        Ok(())
    }
}

/// What the consumers of a value want its layout to be (the first one wins).
fn operand_preferences(cx: &Context, ops: &[Op], target: &Target) -> FxHashMap<Value, Mapping> {
    let mut want: FxHashMap<Value, Mapping> = FxHashMap::default();
    for &op in ops {
        if let Some(d) = for_nn(cx, op) {
            for (i, m) in d.operand_mappings(cx, op, target) {
                want.entry(cx.operand(op, i)).or_insert(m);
            }
        }
    }
    want
}

/// Whether argument `i` of `f` is a parameter (`ipu.weight`): loaded once
/// with the program, not streamed every run.
fn is_weight(cx: &Context, f: Op, i: usize) -> bool {
    use ipu_ir::types::AttrKind;
    let Some(AttrKind::Array(items)) = cx.get_attr(f, "arg_attrs").map(|a| cx.attr_kind(a)) else {
        return false;
    };
    matches!(items.get(i).map(|&a| cx.attr_kind(a)), Some(AttrKind::Dictionary(es)) if es.iter().any(|(k, _)| cx.str(*k) == "ipu.weight"))
}

fn lower_function(cx: &mut Context, f: Op, target: &Target) -> Result<(), Diagnostic> {
    legalize::legalize(cx, f, target);
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let ops = cx.block_ops_vec(entry);
    let want = operand_preferences(cx, &ops, target);
    let mut mappings: FxHashMap<Value, Mapping> = FxHashMap::default();
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
        let mut attrs = vec![("mapping", mapping)];
        let index = cx
            .block_args(entry)
            .iter()
            .position(|&a| a == arg)
            .unwrap_or(0);
        if is_weight(cx, f, index) {
            attrs.push(("resident", ipu_ir::Attr::UNIT));
        }
        let op = crate::device::build_op(cx, "tile.host_input", &[arg], Some(ty), attrs, loc);
        match first {
            Some(o) => cx.insert_op_before(o, op),
            None => cx.append_op(entry, op),
        }
        let v = cx.result(op, 0);
        for u in cx.uses(arg).to_vec() {
            if u.op != op {
                cx.set_operand(u.op, u.index as usize, v);
            }
        }
        mappings.insert(v, m);
    }
    for op in ops {
        let loc = cx.op_loc(op);
        if cx.is(op, "func.return") {
            for (i, v) in cx.operands(op).to_vec().into_iter().enumerate() {
                let out_name = ipu_dialects::func::io_name(cx, f, "res_attrs", i)
                    .unwrap_or_else(|| format!("result{i}"));
                let a = cx.string_attr(&out_name);
                let o = crate::device::build_op(
                    cx,
                    "tile.host_output",
                    &[v],
                    None,
                    vec![("name", a)],
                    loc,
                );
                cx.insert_op_before(op, o);
            }
            continue;
        }
        let new = if cx.is(op, "nn.constant") {
            let v = cx.result(op, 0);
            let m = want
                .get(&v)
                .cloned()
                .unwrap_or_else(|| spread(&cx.value_shape(v), tiles));
            let value = cx.get_attr(op, "value").expect("verified");
            let ty = cx.value_type(v);
            let mapping = m.to_attr(cx);
            crate::device::build_op(
                cx,
                "tile.constant",
                &[],
                Some(ty),
                vec![("value", value), ("mapping", mapping)],
                loc,
            )
        } else {
            let Some(d) = for_nn(cx, op) else {
                return Err(Diagnostic::error(
                    loc,
                    format!(
                        "'{}' op is not lowered to the tile dialect yet",
                        cx.name_str(op)
                    ),
                ));
            };
            let env = TileEnv {
                target,
                mappings: &mappings,
            };
            d.to_tile(cx, op, &env)?
        };
        let m = crate::geometry::mapping_of(cx, new).expect("tile ops carry their mapping");
        cx.insert_op_before(op, new);
        let (old, newv) = (cx.result(op, 0), cx.result(new, 0));
        cx.replace_all_uses(old, newv);
        cx.erase_op(op);
        mappings.insert(newv, m);
    }
    // Constants and views that lowering left without readers go.
    for op in cx.block_ops_vec(entry).into_iter().rev() {
        if (cx.is(op, "tile.constant") || cx.is(op, "tile.view")) && !cx.has_uses(cx.result(op, 0))
        {
            cx.erase_op(op);
        }
    }
    Ok(())
}
