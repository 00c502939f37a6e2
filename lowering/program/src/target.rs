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
