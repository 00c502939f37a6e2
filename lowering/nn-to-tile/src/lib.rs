//! `convert-nn-to-tile`: distributes an `nn` program over the target's tiles.
//!
//! Every op with a device lowering ([`ipu_device`]) chooses its result's
//! mapping and its kernel and becomes a `tile` op; function arguments
//! become host inputs and constants tile constants, laid out as their first
//! consumer wants them; returned values are streamed out. An op without a
//! device lowering is a diagnostic naming it.
//!
//! `legalize` first rewrites shapes the kernels cannot take into padded
//! `nn` ops. Depends on `ipu-device` (the op families) and `ipu-program`
//! (target, geometry); nothing depends on it but the `ipu-lowering` facade.

mod fp8;
pub mod legalize;
mod quant;
mod resize;
mod window;
mod wrap;

use ipu_device::{for_nn, TileEnv};
use ipu_dialects::nn;
use ipu_dialects::tile::{self, Mapping};
use ipu_ir::pass::{Pass, PassInfo, PassOptions};
use ipu_ir::types::AttrKind;
use ipu_ir::{Context, Diagnostic, Op, Value};
use ipu_program::geometry::spread;
use ipu_program::target::{functions_callees_first, module_target, target_option, TARGET_OPTION};
use ipu_target::Target;
use rustc_hash::FxHashMap;
use std::sync::Arc;

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
        let mut layouts = Layouts::default();
        let blobs = fp8::named_blobs(cx, module);
        let order = functions_callees_first(cx, module)?;
        let runs = instances(cx, &order);
        let called: Vec<String> = order
            .iter()
            .flat_map(|&g| ipu_program::target::callees(cx, g))
            .map(|(_, n)| n)
            .collect();
        for f in order {
            let name = cx.get_str_attr(f, "sym_name").map(str::to_string);
            let n = name
                .as_ref()
                .and_then(|s| runs.get(s).copied())
                .unwrap_or(1);
            let streamed = !name.as_ref().is_some_and(|s| called.contains(s));
            fp8::narrow_parameters(cx, module, f);
            lower_function(cx, f, &target, &layouts, n, streamed)?;
            if name.is_some_and(|s| called.contains(&s)) {
                carry_layouts(cx, f);
            }
            if let Some(name) = cx.get_str_attr(f, "sym_name") {
                let l = signature_layout(cx, f);
                layouts.insert(name.to_string(), l);
            }
        }
        fp8::drop_unnamed_blobs(cx, module, &blobs);
        Ok(())
    }
}

/// The layouts a lowered function's signature chose: each argument's (as
/// its host input lands, `None` when unread or a parameter placed straight
/// into its readers' buffers) and each result's. A call binds its operands
/// and results in these layouts.
#[derive(Clone, Debug, Default)]
pub struct SignatureLayout {
    pub args: Vec<Option<Mapping>>,
    pub results: Vec<Option<Mapping>>,
}

/// The signature layouts of the functions lowered so far, by name.
type Layouts = FxHashMap<String, SignatureLayout>;

/// The layouts of lowered function `f`'s arguments and results.
fn signature_layout(cx: &Context, f: Op) -> SignatureLayout {
    use ipu_program::geometry::mapping_of;
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let args = cx.block_args(entry).to_vec();
    let mut l = SignatureLayout {
        args: vec![None; args.len()],
        results: Vec::new(),
    };
    for op in cx.block_ops_vec(entry) {
        if tile::HostInput::isa(cx, op) {
            if let Some(i) = args.iter().position(|&a| a == cx.operand(op, 0)) {
                l.args[i] = mapping_of(cx, op);
            }
        } else if tile::HostOutput::isa(cx, op) {
            let v = cx.operand(op, 0);
            l.results
                .push(cx.defining_op(v).and_then(|p| mapping_of(cx, p)));
        }
    }
    l
}

/// How many times each function runs in the program: once for a function
/// no other calls, else once per call of it in each run of its callers
/// (`order`: callees first).
fn instances(cx: &Context, order: &[Op]) -> FxHashMap<String, u64> {
    let mut runs: FxHashMap<String, u64> = FxHashMap::default();
    for &f in order.iter().rev() {
        let Some(name) = cx.get_str_attr(f, "sym_name") else {
            continue;
        };
        let n = *runs.entry(name.to_string()).or_insert(1);
        let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
        for op in cx.block_ops_vec(entry) {
            if ipu_dialects::func::Call::isa(cx, op) {
                let callee = cx.str(ipu_dialects::func::Call(op).callee(cx)).to_string();
                // A function called is not a root: its runs are its calls'.
                let r = runs.entry(callee).or_insert(0);
                *r = r.saturating_add(n);
            }
        }
    }
    runs
}

/// A called function's activation arguments (not parameters) of its
/// result's type take the result's layout: a call's result passed to the
/// next call (a chain of layers) is then where the callee wants its input,
/// with no re-layout between the calls, as the same layers written inline
/// read one layer's result where it lies. The consumers inside read the
/// argument through the exchange from wherever it lands.
fn carry_layouts(cx: &mut Context, f: Op) {
    use ipu_program::geometry::mapping_of;
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let ops = cx.block_ops_vec(entry);
    let outs: Vec<(ipu_ir::Type, Mapping)> = ops
        .iter()
        .filter(|&&o| tile::HostOutput::isa(cx, o))
        .filter_map(|&o| {
            let v = cx.operand(o, 0);
            let m = cx.defining_op(v).and_then(|p| mapping_of(cx, p))?;
            Some((cx.value_type(v), m))
        })
        .collect();
    for op in ops {
        if !tile::HostInput::isa(cx, op) || cx.get_attr(op, "resident").is_some() {
            continue;
        }
        let ty = cx.value_type(cx.result(op, 0));
        if let Some((_, m)) = outs.iter().find(|(t, _)| *t == ty) {
            if mapping_of(cx, op).as_ref() != Some(m) {
                let a = m.to_attr(cx);
                cx.set_attr(op, "mapping", a);
            }
        }
    }
}

/// The function call `op` calls, when the module defines it.
fn callee_of(cx: &Context, op: Op) -> Option<Op> {
    let name = cx.str(ipu_dialects::func::Call(op).callee(cx));
    let module = cx.parent_op(cx.parent_op(op)?)?;
    cx.lookup_symbol(module, name)
}

/// Whether argument `arg` of `f` (or a constant of `f`) is only passed to
/// callees' parameters: then it stays an argument (a constant), which each
/// call binds to its callee's parameter (loaded straight into that call's
/// buffers), never a host input (or a stored constant) of the caller.
pub fn passed_to_parameters(cx: &Context, f: Op, arg: Value) -> bool {
    let _ = f;
    !cx.uses(arg).is_empty()
        && cx.uses(arg).iter().all(|u| {
            ipu_dialects::func::Call::isa(cx, u.op)
                && callee_of(cx, u.op).is_some_and(|g| is_weight(cx, g, u.index as usize))
        })
}

/// What the consumers of a value want its layout to be (the first one wins).
fn operand_preferences(
    cx: &Context,
    f: Op,
    ops: &[Op],
    env: &TileEnv,
    layouts: &Layouts,
) -> FxHashMap<Value, Mapping> {
    let mut want: FxHashMap<Value, Mapping> = FxHashMap::default();
    for &op in ops {
        if is_load_cast(cx, f, op) {
            continue;
        }
        if ipu_dialects::func::Call::isa(cx, op) {
            // A callee's input wants the layout the callee chose for it.
            let name = cx.str(ipu_dialects::func::Call(op).callee(cx));
            if let Some(l) = layouts.get(name) {
                for (i, m) in l.args.iter().enumerate() {
                    if let Some(m) = m {
                        want.entry(cx.operand(op, i)).or_insert_with(|| m.clone());
                    }
                }
            }
            continue;
        }
        if let Some(d) = for_nn(cx, op) {
            for (i, m) in d.operand_mappings(cx, op, env) {
                want.entry(cx.operand(op, i)).or_insert(m);
            }
        }
    }
    want
}

/// Whether argument `i` of `f` is a parameter (`ipu.weight`): loaded once
/// with the program, not streamed every run.
pub fn is_weight(cx: &Context, f: Op, i: usize) -> bool {
    use ipu_ir::types::AttrKind;
    let arg_attrs = ipu_dialects::func::Func(f).arg_attrs(cx);
    let Some(AttrKind::Array(items)) = arg_attrs.map(|a| cx.attr_kind(a)) else {
        return false;
    };
    matches!(items.get(i).map(|&a| cx.attr_kind(a)), Some(AttrKind::Dictionary(es)) if es.iter().any(|(k, _)| cx.str(*k) == "ipu.weight"))
}

/// Whether `v` is an argument of `f` that is a parameter.
pub fn is_parameter(cx: &Context, f: Op, v: Value) -> bool {
    if cx.defining_op(v).is_some() || cx.num_regions(f) == 0 {
        return false;
    }
    let Some(entry) = cx.entry_block(cx.region(f, 0)) else {
        return false;
    };
    cx.block_args(entry)
        .iter()
        .position(|&a| a == v)
        .is_some_and(|i| is_weight(cx, f, i))
}

/// Whether `v` is an argument of `f`'s entry block (an input or a
/// parameter).
fn is_argument(cx: &Context, f: Op, v: Value) -> bool {
    if cx.defining_op(v).is_some() || cx.num_regions(f) == 0 {
        return false;
    }
    cx.entry_block(cx.region(f, 0))
        .is_some_and(|entry| cx.block_args(entry).contains(&v))
}

/// Whether `op` is a cast the host does as it hands a value over: an
/// `nn.cast` without a scale that widens an argument exactly (a
/// parameter when the program is loaded, an input of 8- or 16-bit
/// integers at every run, to the f32 that holds them), the argument's only
/// reader. It folds into the argument's `tile.host_input`, which then
/// holds the widened elements, and its stream converts
/// (`HostStream::host_element`).
pub fn is_load_cast(cx: &Context, f: Op, op: Op) -> bool {
    let Some(cast) = nn::Cast::cast(cx, op) else {
        return false;
    };
    if cast.scale(cx).is_some_and(|s| s != 0) {
        return false;
    }
    let x = cx.operand(op, 0);
    let (tx, ty) = (cx.value_type(x), cx.value_type(cx.result(op, 0)));
    let (Some((sx, ex)), Some((sy, ey))) = (cx.tensor_parts(tx), cx.tensor_parts(ty)) else {
        return false;
    };
    // An input widens on the host only when the device has no kernels for
    // its elements (8- and 16-bit integers); a float input is streamed as
    // it is and cast on the tiles, at half the link bytes.
    let host_only = matches!(cx.type_kind(ex), ipu_ir::TypeKind::Integer { .. });
    (is_parameter(cx, f, x) || (host_only && is_argument(cx, f, x)))
        && cx.uses(x).len() == 1
        && sx == sy
        && ipu_dialects::tile::load_widens_exactly(cx, ex, ey)
}

/// The casts the host does as it reads a result (`found` by legalizing,
/// [`quant::is_store_cast`]), when `f`'s results go to the host
/// (`streamed`); a result of 8- or 16-bit integers that is not one, or of
/// a function that returns to a caller rather than to the host, is
/// refused at the return (the last of `ops`).
fn store_casts(
    cx: &Context,
    ops: &[Op],
    found: Vec<Op>,
    streamed: bool,
) -> Result<Vec<Op>, Diagnostic> {
    let stores = if streamed { found } else { Vec::new() };
    let Some(&ret) = ops
        .last()
        .filter(|&&o| ipu_dialects::func::Return::isa(cx, o))
    else {
        return Ok(stores);
    };
    for (i, &v) in cx.operands(ret).iter().enumerate() {
        let t = cx
            .tensor_parts(cx.value_type(v))
            .and_then(|(_, e)| nn::element_type(cx, e));
        if !t.is_some_and(quant::host_narrowed)
            || cx.defining_op(v).is_some_and(|d| stores.contains(&d))
        {
            continue;
        }
        let why = if streamed {
            "its elements are not known to be integers of that type (no NaN, none out of range), \
             which the host's narrowing of the tiles' exact f32 needs"
        } else {
            "only the program's own results are narrowed by the host, not a called function's"
        };
        return Err(ipu_ir::verify::op_error(
            cx,
            ret,
            format!(
                "returns {} as result #{i}, which the device cannot give: {why}",
                ipu_ir::printer::type_to_string(cx, cx.value_type(v))
            ),
        ));
    }
    Ok(stores)
}

/// Whether `op` is a cast of a result to 8- or 16-bit integers, the
/// result's only reader being the return: the host does it as it streams
/// the result out, from the image the tiles hold (when the lowering
/// shows the result exact; otherwise it refuses the model).
pub fn is_returned_narrowing(cx: &Context, op: Op) -> bool {
    let Some(cast) = nn::Cast::cast(cx, op) else {
        return false;
    };
    let y = cx.result(op, 0);
    let t = cx
        .tensor_parts(cx.value_type(y))
        .and_then(|(_, e)| nn::element_type(cx, e));
    cast.scale(cx).is_none_or(|s| s == 0)
        && t.is_some_and(quant::host_narrowed)
        && matches!(cx.uses(y), [u] if ipu_dialects::func::Return::isa(cx, u.op))
}

/// Why `op`, which no device family takes, is not lowered.
fn not_lowered(cx: &Context, op: Op) -> String {
    let name = cx.name_str(op);
    let int_result = cx
        .tensor_parts(cx.value_type(cx.result(op, 0)))
        .is_some_and(|(_, e)| matches!(cx.type_kind(e), ipu_ir::TypeKind::Integer { .. }));
    if name == nn::Conv::NAME && int_result {
        // legalize takes an integer conv to f32 only with bounded operands.
        return format!(
            "'{name}' op on integers runs as an exact f32 conv only when its operands' ranges are known and \
             each product is at most 2^24 (8- or 16-bit codes less their zero points); these are not"
        );
    }
    format!("'{name}' op is not lowered to the tile dialect yet")
}

/// Whether `v` is in tile memory from load: a constant, a parameter, or a
/// parameter widened at load.
fn is_resident(cx: &Context, f: Op, v: Value) -> bool {
    match cx.defining_op(v) {
        Some(d) => {
            nn::Constant::isa(cx, d)
                || (is_load_cast(cx, f, d) && is_parameter(cx, f, cx.operand(d, 0)))
        }
        None => is_parameter(cx, f, v),
    }
}

/// The most copies of a resident operand's element the planner tries, in
/// turn, when the program's parameters do not fit replicated on every tile
/// that reads them (the first, no limit, is the fastest plan of each op).
const COPY_LIMITS: [Option<u64>; 7] =
    [None, Some(32), Some(16), Some(8), Some(4), Some(2), Some(1)];

/// The resident ledger under the least limit on copies of resident operands
/// ([`COPY_LIMITS`]) with which every op that plans within memory finds a
/// plan: parameters are replicated over the tiles that read them only as
/// far as the chip's memory allows. When none fits, the last (one copy),
/// whose failing op then says why.
fn ledger_that_fits(
    cx: &Context,
    f: Op,
    ops: &[Op],
    target: &Target,
    instances: u64,
) -> FxHashMap<Op, ipu_device::Resident> {
    let mut last = FxHashMap::default();
    for limit in COPY_LIMITS {
        match resident_ledger(cx, f, ops, target, limit, instances) {
            Ok(ledger) => {
                if let Some(n) = limit {
                    tracing::info!(
                        copies = n,
                        "resident operands limited to {n} copies so the parameters fit"
                    );
                }
                return ledger;
            }
            Err(ledger) => last = ledger,
        }
    }
    last
}

/// For each op that plans within memory, what else is resident on the
/// tiles: constants and parameters sit in the operand buffers of each op
/// reading them from load until it runs, so while an op runs its tiles hold
/// what the later ops read, and at load what every op reads. Walked
/// backwards, so each such op is planned beside the later ones' choices,
/// each with at most `max_copies` copies of a resident operand. A function
/// that runs `instances` times (once per call) holds every run's resident
/// operands from load: each op's held `instances` times, and while an op
/// runs, the other runs' copies of every op's besides the later ops'.
/// `Err` (the ledger so far) when some op finds no plan.
fn resident_ledger(
    cx: &Context,
    f: Op,
    ops: &[Op],
    target: &Target,
    max_copies: Option<u64>,
    instances: u64,
) -> Result<FxHashMap<Op, ipu_device::Resident>, FxHashMap<Op, ipu_device::Resident>> {
    let tiles = target.tiles() as usize;
    let empty = FxHashMap::default();
    let mut ledger: FxHashMap<Op, ipu_device::Resident> = FxHashMap::default();
    let flags = |op: Op| -> Vec<bool> {
        cx.operands(op)
            .iter()
            .map(|&v| is_resident(cx, f, v))
            .collect()
    };
    // Each run of the function holds its own copy.
    let add = |held: &mut Vec<u64>, bytes: &[(u32, u64)]| {
        for &(t, b) in bytes {
            if let Some(h) = held.get_mut(t as usize) {
                *h += b * instances.max(1);
            }
        }
    };
    // An op reading resident operands holds them in its operand buffers (a
    // view has none: it reads through the exchange); one that reads other
    // than operand buffers also keeps the value's own blocks, its home.
    let held_for = |d: &dyn ipu_device::DeviceOp, op: Op, env: &TileEnv, fl: &[bool]| {
        let bytes = d.resident_operand_bytes(cx, op, env, &|i| fl[i]);
        let placed = d.tile_op() != tile::View::NAME;
        let home = !d.reads_operand_buffers();
        let times = u64::from(placed) + u64::from(home);
        bytes
            .into_iter()
            .map(|(t, b)| (t, b * times))
            .collect::<Vec<_>>()
    };
    // What the ops whose layout does not depend on memory hold, before each
    // op that plans within memory.
    let mut fixed = vec![0u64; tiles];
    let mut fixed_before: FxHashMap<Op, Vec<u64>> = FxHashMap::default();
    let device_op = |op: Op| for_nn(cx, op).filter(|_| !is_load_cast(cx, f, op));
    for &op in ops {
        let Some(d) = device_op(op) else { continue };
        let fl = flags(op);
        if d.plans_within_memory() {
            fixed_before.insert(op, fixed.clone());
        } else if fl.iter().any(|&r| r) {
            let env = TileEnv {
                target,
                mappings: &empty,
                resident: &ledger,
            };
            add(&mut fixed, &held_for(d, op, &env, &fl));
        }
    }
    let mut after = vec![0u64; tiles];
    for &op in ops.iter().rev() {
        let Some(d) = device_op(op) else { continue };
        let fl = flags(op);
        if d.plans_within_memory() {
            let mut at_load = after.clone();
            if let Some(before) = fixed_before.get(&op) {
                for (a, b) in at_load.iter_mut().zip(before) {
                    *a += b;
                }
            }
            ledger.insert(
                op,
                ipu_device::Resident {
                    during: Arc::new(after.clone()),
                    at_load: Arc::new(at_load),
                    operands: fl.clone(),
                    max_copies,
                    instances,
                },
            );
            let env = TileEnv {
                target,
                mappings: &empty,
                resident: &ledger,
            };
            if !d.fits_in_memory(cx, op, &env) {
                return Err(ledger);
            }
        }
        if fl.iter().any(|&r| r) {
            let env = TileEnv {
                target,
                mappings: &empty,
                resident: &ledger,
            };
            add(&mut after, &held_for(d, op, &env, &fl));
        }
    }
    Ok(ledger)
}

/// A call, in the tile stage: the callee lowered (before its callers), the
/// call keeps its form and takes the layout of the callee's result as its
/// `mapping`. Each operand the callee takes as a parameter must be a
/// parameter of the caller passed to parameters only.
fn call_to_tile(cx: &mut Context, f: Op, op: Op, layouts: &Layouts) -> Result<Mapping, Diagnostic> {
    let err = |cx: &Context, m: String| ipu_ir::verify::op_error(cx, op, m);
    let name = cx.str(ipu_dialects::func::Call(op).callee(cx)).to_string();
    let (Some(g), Some(l)) = (callee_of(cx, op), layouts.get(&name)) else {
        return Err(err(
            cx,
            format!("calls @{name}, which has no body lowered to the tile dialect"),
        ));
    };
    for (i, &v) in cx.operands(op).iter().enumerate() {
        let bindable = is_parameter(cx, f, v)
            || cx
                .defining_op(v)
                .is_some_and(|d| nn::Constant::isa(cx, d) || tile::Constant::isa(cx, d));
        if is_weight(cx, g, i) && !(bindable && passed_to_parameters(cx, f, v)) {
            return Err(err(
                cx,
                format!(
                    "passes operand #{i} to a parameter of @{name}: it must be a parameter of the caller \
                     (an argument marked ipu.weight) or a constant, that only calls' parameters read"
                ),
            ));
        }
    }
    let m = match (cx.results(op).len(), l.results.first()) {
        (1, Some(Some(m))) => m.clone(),
        (1, _) => {
            return Err(err(
                cx,
                format!("calls @{name}, whose result has no tile layout"),
            ))
        }
        (n, _) => {
            return Err(err(
                cx,
                format!("has {n} results; a call is lowered to the device with exactly one"),
            ))
        }
    };
    let a = m.to_attr(cx);
    cx.set_attr(op, "mapping", a);
    Ok(m)
}

/// Refuses, at the constant, a `dense_resource` whose blob was never loaded:
/// its bytes go into the image, so lowering without them cannot succeed.
fn check_resources(cx: &Context, f: Op) -> Result<(), Diagnostic> {
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    for op in cx.block_ops_vec(entry) {
        let Some(a) = cx.get_attr(op, "value") else {
            continue;
        };
        if let AttrKind::DenseResource { handle, .. } = cx.attr_kind(a) {
            let name = cx.str(*handle);
            if cx.resources.get(name).is_none() {
                return Err(Diagnostic::error(
                    cx.op_loc(op),
                    format!(
                        "'{}' op has no data for resource blob '{name}': neither the file's \
                         dialect_resources section nor a loaded weights file (ipu.weights, read \
                         beside the input) holds it",
                        cx.name_str(op)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn lower_function(
    cx: &mut Context,
    f: Op,
    target: &Target,
    layouts: &Layouts,
    instances: u64,
    streamed: bool,
) -> Result<(), Diagnostic> {
    check_resources(cx, f)?;
    let stores = legalize::legalize(cx, f, target);
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let ops = cx.block_ops_vec(entry);
    let stores = store_casts(cx, &ops, stores, streamed)?;
    let resident = ledger_that_fits(cx, f, &ops, target, instances);
    let want = operand_preferences(
        cx,
        f,
        &ops,
        &TileEnv {
            target,
            mappings: &FxHashMap::default(),
            resident: &resident,
        },
        layouts,
    );
    let mut mappings: FxHashMap<Value, Mapping> = FxHashMap::default();
    let tiles = target.tiles();
    let first = cx.first_op(entry);
    // Arguments: streamed in; a parameter's load cast folded into its load.
    let mut folded: Vec<Op> = Vec::new();
    for arg in cx.block_args(entry).to_vec() {
        if !cx.has_uses(arg) || passed_to_parameters(cx, f, arg) {
            continue;
        }
        let load_cast = match cx.uses(arg) {
            [u] if is_load_cast(cx, f, u.op) => Some(u.op),
            _ => None,
        };
        // What the host's value becomes on the tiles: the widened one.
        let tile_value = load_cast.map_or(arg, |c| cx.result(c, 0));
        let m = want
            .get(&tile_value)
            .cloned()
            .unwrap_or_else(|| spread(&cx.value_shape(arg), tiles));
        let loc = cx.block_arg_loc(arg);
        let (ty, mapping) = (cx.value_type(tile_value), m.to_attr(cx));
        let mut attrs = vec![("mapping", mapping)];
        let index = cx
            .block_args(entry)
            .iter()
            .position(|&a| a == arg)
            .unwrap_or(0);
        if is_weight(cx, f, index) {
            attrs.push(("resident", ipu_ir::Attr::UNIT));
        }
        // A parameter narrowed to FP8 keeps its codes' scale (`fp8.rs`).
        if let Some(s) = fp8::parameter_scale(cx, f, index) {
            attrs.push(("scale", cx.i64_attr(s)));
        }
        let op = ipu_device::build_op(cx, tile::HostInput::NAME, &[arg], Some(ty), attrs, loc);
        match first {
            Some(o) => cx.insert_op_before(o, op),
            None => cx.append_op(entry, op),
        }
        let v = cx.result(op, 0);
        if let Some(c) = load_cast {
            cx.replace_all_uses(tile_value, v);
            folded.push(c);
        }
        for u in cx.uses(arg).to_vec() {
            if u.op != op && Some(u.op) != load_cast {
                cx.set_operand(u.op, u.index as usize, v);
            }
        }
        mappings.insert(v, m);
    }
    // After the inputs are in: the first op may be a folded cast.
    for &c in &folded {
        cx.erase_op(c);
    }
    for op in ops {
        if folded.contains(&op) || stores.contains(&op) {
            continue;
        }
        let loc = cx.op_loc(op);
        if ipu_dialects::func::Return::isa(cx, op) {
            for (i, v) in cx.operands(op).to_vec().into_iter().enumerate() {
                let out_name = ipu_dialects::func::io_name(cx, f, "res_attrs", i)
                    .unwrap_or_else(|| format!("result{i}"));
                let a = cx.string_attr(&out_name);
                // A store cast: the host narrows its operand as it reads it.
                let store = cx.defining_op(v).filter(|d| stores.contains(d));
                let (sent, host) = match store {
                    Some(c) => (cx.operand(c, 0), Some(cx.value_type(v))),
                    None => (v, None),
                };
                let o = ipu_device::build_op(
                    cx,
                    tile::HostOutput::NAME,
                    &[sent],
                    host,
                    vec![("name", a)],
                    loc,
                );
                cx.insert_op_before(op, o);
                if let Some(c) = store {
                    cx.set_operand(op, i, cx.result(o, 0));
                    cx.erase_op(c);
                }
            }
            continue;
        }
        if ipu_dialects::func::Call::isa(cx, op) {
            let m = call_to_tile(cx, f, op, layouts)?;
            mappings.insert(cx.result(op, 0), m);
            continue;
        }
        let new = if let Some(c) = nn::Constant::cast(cx, op) {
            let v = cx.result(op, 0);
            let m = want
                .get(&v)
                .cloned()
                .unwrap_or_else(|| spread(&cx.value_shape(v), tiles));
            let value = c.value(cx);
            let ty = cx.value_type(v);
            let mapping = m.to_attr(cx);
            let mut attrs = vec![("value", value), ("mapping", mapping)];
            // A folded FP8 weight keeps its scale (`fp8.rs`).
            if let Some(s) = fp8::constant_scale(cx, op) {
                attrs.push(("scale", cx.i64_attr(s)));
            }
            ipu_device::build_op(cx, tile::Constant::NAME, &[], Some(ty), attrs, loc)
        } else {
            let Some(d) = for_nn(cx, op) else {
                return Err(Diagnostic::error(loc, not_lowered(cx, op)));
            };
            let env = TileEnv {
                target,
                mappings: &mappings,
                resident: &resident,
            };
            d.to_tile(cx, op, &env)?
        };
        let m = ipu_program::geometry::mapping_of(cx, new).expect("tile ops carry their mapping");
        cx.insert_op_before(op, new);
        let (old, newv) = (cx.result(op, 0), cx.result(new, 0));
        cx.replace_all_uses(old, newv);
        cx.erase_op(op);
        mappings.insert(newv, m);
    }
    // Constants and views that lowering left without readers go.
    for op in cx.block_ops_vec(entry).into_iter().rev() {
        if (tile::Constant::isa(cx, op) || tile::View::isa(cx, op))
            && !cx.has_uses(cx.result(op, 0))
        {
            cx.erase_op(op);
        }
    }
    Ok(())
}
