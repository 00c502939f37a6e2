//! Target plumbing shared by every target-dependent pass: the module
//! attribute naming the target, the `target=` pass option, and loading the
//! description a module is compiled for.

use ipu_ir::pass::{PassOptionInfo, PassOptions};
use ipu_ir::{Context, Diagnostic, Op};
use ipu_target::Target;
use std::sync::Arc;

/// The module attribute naming the target every stage compiles for.
pub const TARGET_ATTR: &str = "ipu.target";

/// The option every target-dependent pass takes.
pub const TARGET_OPTION: PassOptionInfo = PassOptionInfo {
    name: "target",
    description: "Target name or file (default: the module's ipu.target attribute)",
    default: "",
};

/// The `target=` option of a pass, when given.
pub fn target_option(o: &PassOptions) -> Option<String> {
    o.get("target")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The target a module is compiled for: `option`, else its `ipu.target`.
/// The name is recorded on the module, so every later stage plans for the
/// same machine.
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
    // The kernels split their work over the supervisor's workers: six in
    // every kernel of the library (their state records hold six).
    if t.threads.worker_contexts != ipu_isa::kernels::WORKER_CONTEXTS {
        return Err(Diagnostic::error(
            cx.op_loc(module),
            format!(
                "target '{name}': threads.worker_contexts is {}, but the kernel library runs {} workers per tile",
                t.threads.worker_contexts,
                ipu_isa::kernels::WORKER_CONTEXTS
            ),
        ));
    }
    let a = cx.string_attr(&name);
    cx.set_attr(module, TARGET_ATTR, a);
    Ok(Arc::new(t))
}

/// The functions of `module` that have a body.
pub fn functions(cx: &Context, module: Op) -> Vec<Op> {
    cx.nested_ops(module)
        .into_iter()
        .filter(|&f| {
            ipu_dialects::func::Func::isa(cx, f) && cx.entry_block(cx.region(f, 0)).is_some()
        })
        .collect()
}

/// The functions a call op (`func.call`, `exchange.call`) of `f` names,
/// in order, each once.
pub fn callees(cx: &Context, f: Op) -> Vec<(Op, String)> {
    let mut out: Vec<(Op, String)> = Vec::new();
    let Some(entry) = cx.entry_block(cx.region(f, 0)) else {
        return out;
    };
    for op in cx.block_ops_vec(entry) {
        if !(cx.is(op, "func.call") || cx.is(op, "exchange.call")) {
            continue;
        }
        if let Some(ipu_ir::types::AttrKind::SymbolRef { root, .. }) =
            cx.get_attr(op, "callee").map(|a| cx.attr_kind(a))
        {
            let name = cx.str(*root).to_string();
            if !out.iter().any(|(_, n)| *n == name) {
                out.push((op, name));
            }
        }
    }
    out
}

/// [`functions`] with every function after the functions it calls, so a
/// callee is lowered (once) before its callers; a call of a function that
/// calls back (recursion) is an error at that call.
pub fn functions_callees_first(cx: &Context, module: Op) -> Result<Vec<Op>, Diagnostic> {
    let funcs = functions(cx, module);
    let by_name = |n: &str| {
        funcs
            .iter()
            .copied()
            .find(|&g| cx.get_str_attr(g, "sym_name") == Some(n))
    };
    // 0: not seen, 1: on the path, 2: done.
    let mut state = vec![0u8; funcs.len()];
    let mut order = Vec::with_capacity(funcs.len());
    for start in 0..funcs.len() {
        // Depth-first, with an explicit stack of (function, next callee).
        let mut stack: Vec<(usize, usize)> = Vec::new();
        if state[start] == 0 {
            state[start] = 1;
            stack.push((start, 0));
        }
        while let Some(&mut (i, ref mut next)) = stack.last_mut() {
            let calls = callees(cx, funcs[i]);
            match calls.get(*next) {
                Some((call, name)) => {
                    *next += 1;
                    let Some(g) = by_name(name) else { continue };
                    let j = funcs.iter().position(|&x| x == g).expect("listed");
                    match state[j] {
                        0 => {
                            state[j] = 1;
                            stack.push((j, 0));
                        }
                        1 => {
                            return Err(ipu_ir::verify::op_error(
                                cx,
                                *call,
                                format!("calls @{name}, which calls back: recursion is not lowered to the device"),
                            ))
                        }
                        _ => {}
                    }
                }
                None => {
                    state[i] = 2;
                    order.push(funcs[i]);
                    stack.pop();
                }
            }
        }
    }
    Ok(order)
}
