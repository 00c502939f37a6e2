//! `convert-tile-to-exchange`: turns the tile-stage program into the
//! explicit bulk-synchronous program of the exchange stage.
//!
//! Host inputs and constants get buffers where their mapping puts their
//! blocks; each compute op's device lowering ([`ipu_device`]) derives
//! the transfers that move its operands from their producers' blocks into
//! the layout it reads (each phase scheduled with the exchange scheduler
//! and proven by the verifier: on the rayon pool while the ops after it
//! are lowered, its figures filled in when the function is finished) and
//! its compute sets of per-tile kernel
//! calls; results streamed out keep their buffers. The function body is
//! then replaced by the [`Program`] written in the `exchange` dialect.
//!
//! [`ExchangeBuilder`] implements the device crate's [`ProgramBuilder`];
//! `resolve` traces a view's rectangles to the blocks underneath. Depends
//! on `ipu-device`, `ipu-program` and `ipu-exchange-schedule`; nothing
//! depends on it but the `ipu-lowering` facade.

mod builder;
mod chain;
mod resolve;

pub use builder::{call_cycles, copy_cycles, ExchangeBuilder, Resident, Totals};

use ipu_device::{for_tile, peak_tile_cycles, ProgramBuilder};
use ipu_dialects::tile;
use ipu_exchange_schedule::ExchangeScheduler;
use ipu_ir::pass::{Pass, PassInfo, PassOptions, Statistic};
use ipu_ir::{Context, Diagnostic, Op};
use ipu_program::geometry::mapping_of;
use ipu_program::target::{functions_callees_first, module_target, target_option, TARGET_OPTION};
use ipu_program::{
    CallArg, CallStep, ConstantDecl, HostInput, HostOutput, Placed, Program, Stored,
};
use ipu_target::Target;
use rustc_hash::FxHashMap;
use std::sync::Arc;

pub const INFO: PassInfo = PassInfo {
    argument: "convert-tile-to-exchange",
    name: "ConvertTileToExchange",
    description: "Build the bulk-synchronous program: buffers for every value's blocks, the transfers every \
                  compute set needs from the mappings of its operands (each exchange phase scheduled - \
                  compact-streams, paired or reused - and verified, with its horizon, endpoint lower bound and \
                  gap), and compute sets of per-tile kernel calls with their state records; the function \
                  becomes exchange-dialect IR.",
    anchor: Some("builtin.module"),
    options: &[TARGET_OPTION],
    create,
};

fn create(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(TileToExchange {
        target_option: target_option(o),
        totals: Totals::default(),
    }))
}

struct TileToExchange {
    target_option: Option<String>,
    totals: Totals,
}

impl Pass for TileToExchange {
    fn run(&mut self, cx: &mut Context, module: Op) -> Result<(), Diagnostic> {
        let target = module_target(cx, module, self.target_option.as_deref())?;
        let mut scheduler = ExchangeScheduler::new(target.clone());
        let mut callees = Callees::default();
        for f in functions_callees_first(cx, module)? {
            lower_function(
                cx,
                f,
                &target,
                &mut scheduler,
                &mut self.totals,
                &mut callees,
            )?;
        }
        Ok(())
    }

    fn statistics(&self) -> Vec<Statistic> {
        let t = &self.totals;
        vec![
            Statistic {
                name: "phases",
                description: "Exchange phases scheduled",
                value: t.phases,
            },
            Statistic {
                name: "transfers",
                description: "Transfers scheduled",
                value: t.transfers,
            },
            Statistic {
                name: "horizon-sum",
                description: "Sum of phase horizons (cycles)",
                value: t.horizon,
            },
            Statistic {
                name: "lower-bound-sum",
                description: "Sum of phase endpoint lower bounds (cycles)",
                value: t.lower_bound,
            },
        ]
    }
}

/// The programs of the functions lowered so far, by name, with their
/// figures: what a call of each binds to, lowered once for all its calls.
#[derive(Default)]
struct Callees {
    programs: FxHashMap<String, (Program, Totals)>,
}

fn lower_function(
    cx: &mut Context,
    f: Op,
    target: &Arc<Target>,
    scheduler: &mut ExchangeScheduler,
    totals: &mut Totals,
    callees: &mut Callees,
) -> Result<(), Diagnostic> {
    let mut fn_totals = Totals::default();
    let program = build_program(cx, f, target, scheduler, &mut fn_totals, callees)?;
    let loc = cx.op_loc(f);
    program.emit(cx, f, loc);
    if let Some(name) = cx.get_str_attr(f, "sym_name") {
        callees
            .programs
            .insert(name.to_string(), (program, fn_totals));
    }
    let sync = target.exchange.sync_cycles as u64;
    let summary = [
        ("exchange.steps", fn_totals.steps),
        ("exchange.compute_cycles", fn_totals.compute_cycles),
        ("exchange.exchange_cycles", fn_totals.exchange_cycles),
        (
            "exchange.estimated_cycles",
            fn_totals.compute_cycles + fn_totals.exchange_cycles + fn_totals.steps * sync,
        ),
    ];
    for (k, v) in summary {
        let a = cx.i64_attr(v as i64);
        cx.set_attr(f, k, a);
    }
    totals.phases += fn_totals.phases;
    totals.transfers += fn_totals.transfers;
    totals.horizon += fn_totals.horizon;
    totals.lower_bound += fn_totals.lower_bound;
    Ok(())
}

/// The program of function `f`, every phase scheduled.
fn build_program(
    cx: &Context,
    f: Op,
    target: &Arc<Target>,
    scheduler: &mut ExchangeScheduler,
    fn_totals: &mut Totals,
    callees: &Callees,
) -> Result<Program, Diagnostic> {
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let ops = cx.block_ops_vec(entry);
    let args = cx.block_args(entry).to_vec();
    let mut b = ExchangeBuilder::new(cx, target, scheduler, fn_totals, peak_tile_cycles);
    let mut streams = Streams::default();
    for &op in &ops {
        let lowered = if ipu_dialects::func::Call::isa(cx, op) {
            lower_call(&mut b, op, &args, callees, &mut streams)
        } else {
            lower_op(&mut b, op, &args, &mut streams)
        };
        if let Err(e) = lowered {
            // A phase built before the error that cannot be scheduled came first.
            b.schedule_pending()?;
            return Err(e);
        }
    }
    let last = ops.last().copied().unwrap_or(f);
    b.finish(last)
}

/// Host inputs and constants numbered so far (`input<n>`, `const<n>`).
#[derive(Default)]
struct Streams {
    inputs: usize,
    consts: usize,
    calls: usize,
}

/// Adds call `op` of the function (whose arguments are `args`): each
/// activation operand in a buffer laid out as the callee's input (its own
/// home when it is that already, else re-laid out by an exchange phase),
/// each parameter operand the caller's argument, loaded into the callee's
/// buffers per call, and each result in a buffer laid out as the callee's
/// output. The callee's program, lowered once, runs at the call.
fn lower_call(
    b: &mut ExchangeBuilder,
    op: Op,
    args: &[ipu_ir::Value],
    callees: &Callees,
    streams: &mut Streams,
) -> Result<(), Diagnostic> {
    let cx = b.cx;
    let call = ipu_dialects::func::Call(op);
    let name = cx.str(call.callee(cx)).to_string();
    let Some((callee, totals)) = callees.programs.get(&name) else {
        return Err(b.err(
            op,
            format!("calls @{name}, which has no body lowered to the exchange stage"),
        ));
    };
    let n = streams.calls;
    streams.calls += 1;
    let mut bound = Vec::with_capacity(cx.operands(op).len());
    for (i, &v) in cx.operands(op).iter().enumerate() {
        let Some(inp) = callee.inputs.iter().find(|x| x.arg == i) else {
            bound.push(CallArg::Unused);
            continue;
        };
        if inp.load {
            bound.push(param_binding(b, op, v, inp, &name, i, args)?);
            continue;
        }
        let Some((home, m)) = &inp.at.home else {
            return Err(b.err(
                op,
                format!("passes operand #{i} to an input of @{name} that has no buffer"),
            ));
        };
        let buf = b.call_operand(op, v, m, &callee.buffers[*home], &format!("call{n}.arg{i}"))?;
        bound.push(CallArg::Buffer(buf));
    }
    if cx.results(op).len() != callee.outputs.len() {
        return Err(b.err(
            op,
            format!(
                "has {} results, but @{name} streams {}",
                cx.results(op).len(),
                callee.outputs.len()
            ),
        ));
    }
    let mut results = Vec::new();
    for (j, (v, o)) in cx.results(op).zip(&callee.outputs).enumerate() {
        let want = &callee.buffers[o.at.buffer];
        results.push(b.call_result(op, v, &o.at.mapping, want, &format!("call{n}.result{j}"))?);
    }
    b.push_call(
        op,
        CallStep {
            callee: name,
            args: bound,
            results,
            source: ipu_ir::diag::loc_key(cx, cx.op_loc(op)),
            loc: cx.op_loc(op),
        },
    )?;
    // The call's estimate is the callee's; its phases were scheduled once.
    b.totals.compute_cycles += totals.compute_cycles;
    b.totals.exchange_cycles += totals.exchange_cycles;
    b.totals.steps += totals.steps;
    Ok(())
}

/// How call `op` binds its operand `v`, passed to parameter `inp` (operand
/// `i`) of `callee`: the caller's argument, or the value of a constant of
/// the caller of the parameter's type (loaded per call with the image).
fn param_binding(
    b: &ExchangeBuilder,
    op: Op,
    v: ipu_ir::Value,
    inp: &HostInput,
    callee: &str,
    i: usize,
    args: &[ipu_ir::Value],
) -> Result<CallArg, Diagnostic> {
    let cx = b.cx;
    if let Some(k) = args.iter().position(|&a| a == v) {
        return Ok(CallArg::Param(k));
    }
    match cx.defining_op(v).filter(|&d| tile::Constant::isa(cx, d)) {
        Some(_) if cx.value_type(v) != inp.at.ty => Err(b.err(
            op,
            format!(
                "passes a constant to operand #{i}, a parameter of @{callee} that widens at load: \
                 pass a constant of the widened type"
            ),
        )),
        Some(d) => Ok(CallArg::Const {
            value: tile::Constant(d).value(cx),
            ty: inp.at.ty,
        }),
        None => Err(b.err(
            op,
            format!(
                "passes operand #{i} to a parameter of @{callee}: it must be a parameter of the caller \
                 (an argument marked ipu.weight) or a constant, that nothing else reads"
            ),
        )),
    }
}

/// Whether every reader of `v` is a call passing it to a parameter of its
/// callee: a constant read so is loaded per call, never stored as the
/// caller's.
fn only_call_parameters(cx: &Context, v: ipu_ir::Value) -> bool {
    cx.has_uses(v)
        && cx.uses(v).iter().all(|u| {
            ipu_dialects::func::Call::isa(cx, u.op)
                && cx
                    .parent_op(u.op)
                    .and_then(|f| cx.parent_op(f))
                    .and_then(|m| {
                        cx.lookup_symbol(m, cx.str(ipu_dialects::func::Call(u.op).callee(cx)))
                    })
                    .is_some_and(|g| ipu_dialects::func::is_weight_arg(cx, g, u.index as usize))
        })
}

/// Adds op `op` of the function (whose arguments are `args`) to the program.
fn lower_op(
    b: &mut ExchangeBuilder,
    op: Op,
    args: &[ipu_ir::Value],
    streams: &mut Streams,
) -> Result<(), Diagnostic> {
    let cx = b.cx;
    let target = b.target;
    let loc = cx.op_loc(op);
    // Before any block is listed: a grid can have billions of them.
    if let Some(m) = mapping_of(cx, op) {
        let tiles = i64::from(target.tiles());
        if m.last_tile() >= tiles {
            let reach = m.last_tile();
            let name = &target.name;
            return Err(b.err(
                op,
                format!(
                    "has a mapping whose blocks reach tile {reach}, but target {name} has \
                     {tiles} tiles"
                ),
            ));
        }
    }
    // A value only ops reading operand buffers read (matmuls,
    // elementwise ops) can live there alone; any other reader needs
    // its blocks.
    let needs_home = |v| {
        cx.uses(v)
            .iter()
            .any(|u| !for_tile(cx, u.op).is_some_and(|d| d.reads_operand_buffers()))
    };
    match cx.name_str(op) {
        tile::HostInput::NAME => {
            let v = cx.result(op, 0);
            let m = mapping_of(cx, op).ok_or_else(|| b.err(op, "has no mapping"))?;
            let arg = args
                .iter()
                .position(|&a| a == cx.operand(op, 0))
                .ok_or_else(|| {
                    b.err(
                        op,
                        "streams a value that is not an argument of the function",
                    )
                })?;
            // A parameter is loaded once, straight into the buffers
            // of the ops that read it; an activation lands in its
            // blocks each run and moves from there.
            // Any `resident`, even `= false`, as the verifier's
            // widening check reads it (not the flag accessor's meaning).
            let load = cx.get_attr(op, "resident").is_some();
            let mut at = Stored::new(cx, cx.value_type(v), loc);
            if !load || needs_home(v) {
                let buf = b.home(op, v, &m, &format!("input{}", streams.inputs), false)?;
                at.home = Some((buf, m));
            }
            streams.inputs += 1;
            let index = b.program_mut().inputs.len();
            b.program_mut().inputs.push(HostInput { arg, load, at });
            if load {
                b.add_resident(v, Resident::Input(index));
            }
        }
        tile::Constant::NAME if only_call_parameters(cx, cx.result(op, 0)) => {}
        tile::Constant::NAME => {
            let v = cx.result(op, 0);
            let m = mapping_of(cx, op).ok_or_else(|| b.err(op, "has no mapping"))?;
            let value = tile::Constant(op).value(cx);
            // Constants are loaded with the image, straight into the
            // buffers of the ops that read them.
            let mut at = Stored::new(cx, cx.value_type(v), loc);
            if needs_home(v) {
                let buf = b.home(op, v, &m, &format!("const{}", streams.consts), false)?;
                at.home = Some((buf, m));
            }
            streams.consts += 1;
            let index = b.program_mut().constants.len();
            b.program_mut().constants.push(ConstantDecl { value, at });
            b.add_resident(v, Resident::Constant(index));
        }
        tile::HostOutput::NAME => {
            let v = cx.operand(op, 0);
            let producer = cx.defining_op(v);
            let mapping = producer
                .and_then(|p| mapping_of(cx, p))
                .ok_or_else(|| b.err(op, "streams a value with no tile mapping"))?;
            let outputs = b.program_mut().outputs.len();
            let buffer = if b.is_view(v) {
                // A view the host reads is stored first.
                b.materialize(op, v, &mapping, &format!("output{outputs}"))?
            } else {
                match b.home_of(v) {
                    Some(home) => home.buf,
                    None => return Err(b.err(op, "streams a value with no tile mapping")),
                }
            };
            let name = tile::HostOutput(op).name(cx).to_string();
            let at = Placed::new(cx, buffer, mapping, cx.value_type(v), loc);
            // With a result: the host narrows the tiles' floats to its type.
            let host_ty = (cx.num_results(op) == 1).then(|| cx.value_type(cx.result(op, 0)));
            b.program_mut()
                .outputs
                .push(HostOutput { name, at, host_ty });
        }
        "func.return" => {}
        _ => match for_tile(cx, op) {
            Some(d) => {
                let before = b.compute_sets_closed();
                d.to_program(op, b)?;
                // A value only exchanges made is complete after a
                // phase, which probes do not name: left out.
                if b.compute_sets_closed() > before {
                    b.probe_results(op);
                }
            }
            None => {
                return Err(b.err(
                    op,
                    "is not lowered to the exchange stage (convert-tile-to-exchange takes the \
                     tile dialect)",
                ))
            }
        },
    }
    Ok(())
}
