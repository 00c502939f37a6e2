//! The reference interpreter: runs a `func.func` of `tensor` ops on the CPU
//! with the reference numerics. It is the ground truth the simulated device
//! is checked against.

use crate::func::{Call, Return};
use crate::nn::{op_kind, tensor_type};
use ipu_ir::context::{Context, Op, Value};
use ipu_ir::diag::Diagnostic;
use ipu_ir::verify::op_error as err;
use ipu_reference::{evaluate, Tensor};
use rustc_hash::FxHashMap;

/// Evaluates function `f` on `inputs` (one per argument, in order).
pub fn interpret(cx: &Context, f: Op, inputs: &[Tensor]) -> Result<Vec<Tensor>, Diagnostic> {
    interpret_at_depth(cx, f, inputs, &mut Vec::new(), false, &mut |_, _, _, r| {
        Ok(r)
    })
}

/// What [`interpret_observed`] calls after each op of the function's body:
/// the op, its operands' values and the results it computed; it returns the
/// values later ops see (the results, or others in their place).
pub type Observer<'a> =
    dyn FnMut(Op, &[&Tensor], Vec<Tensor>) -> Result<Vec<Tensor>, Diagnostic> + 'a;

/// [`interpret`], calling `observe` after each op of `f`'s own body (not of
/// the functions it calls): per-op checks read each op's inputs and results
/// there, and can substitute the values later ops see.
pub fn interpret_observed(
    cx: &Context,
    f: Op,
    inputs: &[Tensor],
    observe: &mut Observer<'_>,
) -> Result<Vec<Tensor>, Diagnostic> {
    interpret_at_depth(
        cx,
        f,
        inputs,
        &mut Vec::new(),
        false,
        &mut |path, op, o, r| {
            if path.is_empty() {
                observe(op, o, r)
            } else {
                Ok(r)
            }
        },
    )
}

/// What [`interpret_observed_in_calls`] calls after each op: the calls
/// the op runs inside (outermost first; empty for `f`'s own body), the op,
/// its operands' values and its results; it returns the values later ops
/// see.
pub type CallObserver<'a> =
    dyn FnMut(&[Op], Op, &[&Tensor], Vec<Tensor>) -> Result<Vec<Tensor>, Diagnostic> + 'a;

/// [`interpret`], calling `observe` after each op of `f` and of every
/// function it calls, in each call: one op of a callee is observed once
/// per call, with the calls it runs inside (a call op is observed after
/// its callee's ops).
pub fn interpret_observed_in_calls(
    cx: &Context,
    f: Op,
    inputs: &[Tensor],
    observe: &mut CallObserver<'_>,
) -> Result<Vec<Tensor>, Diagnostic> {
    interpret_at_depth(cx, f, inputs, &mut Vec::new(), true, observe)
}

fn interpret_at_depth(
    cx: &Context,
    f: Op,
    inputs: &[Tensor],
    path: &mut Vec<Op>,
    into_calls: bool,
    observe: &mut CallObserver<'_>,
) -> Result<Vec<Tensor>, Diagnostic> {
    if path.len() > 64 {
        return Err(err(cx, f, "call depth exceeds 64 (recursion?)"));
    }
    let body = cx.region(f, 0);
    let Some(entry) = cx.entry_block(body) else {
        return Err(err(cx, f, "has no body to interpret"));
    };
    if cx.region_blocks(body).len() != 1 {
        return Err(err(
            cx,
            f,
            "has control flow, which the interpreter does not run",
        ));
    }
    let args = cx.block_args(entry);
    if args.len() != inputs.len() {
        return Err(err(
            cx,
            f,
            format!(
                "takes {} inputs, but {} were given",
                args.len(),
                inputs.len()
            ),
        ));
    }
    let mut env: FxHashMap<Value, Tensor> = FxHashMap::default();
    for (i, (&a, t)) in args.iter().zip(inputs).enumerate() {
        let expected = tensor_type(cx, cx.value_type(a)).map_err(|m| err(cx, f, m))?;
        if t.ty() != expected {
            return Err(err(
                cx,
                f,
                format!("input #{i} should be {expected}, but is {}", t.ty()),
            ));
        }
        env.insert(a, t.clone());
    }
    for op in cx.block_ops(entry) {
        let name = cx.name_str(op);
        let operands: Vec<&Tensor> = cx
            .operands(op)
            .iter()
            .map(|v| {
                env.get(v)
                    .ok_or_else(|| err(cx, op, "uses a value the interpreter has not computed"))
            })
            .collect::<Result<_, _>>()?;
        if Return::isa(cx, op) {
            return Ok(operands.into_iter().cloned().collect());
        }
        let results = if let Some(call) = Call::cast(cx, op) {
            let callee = cx.str(call.callee(cx));
            let target = cx
                .nearest_symbol_table(op)
                .and_then(|t| cx.lookup_symbol(t, callee))
                .ok_or_else(|| err(cx, op, format!("calls unknown function @{callee}")))?;
            let args: Vec<Tensor> = operands.iter().map(|&t| t.clone()).collect();
            path.push(op);
            let r = if into_calls {
                interpret_at_depth(cx, target, &args, path, true, observe)
            } else {
                interpret_at_depth(cx, target, &args, path, false, &mut |_, _, _, r| Ok(r))
            };
            path.pop();
            r?
        } else if name.starts_with("nn.") {
            let kind = op_kind(cx, op).map_err(|m| err(cx, op, m))?;
            vec![evaluate(&kind, &operands).map_err(|e| err(cx, op, e))?]
        } else {
            return Err(err(cx, op, "is not supported by the reference interpreter"));
        };
        let results = observe(path, op, &operands, results)?;
        for (r, t) in cx.results(op).zip(results) {
            env.insert(r, t);
        }
    }
    Err(err(cx, f, "body ends without func.return"))
}
