//! `symbol-dce`: erases private symbols (`sym_visibility = "private"`) that
//! nothing references, iterating so that symbols used only by dead symbols
//! die too.

use ipu_ir::pass::{Pass, PassInfo, PassOptions, Statistic};
use ipu_ir::{Attr, AttrKind, Context, Diagnostic, Op, Trait};
use rustc_hash::FxHashSet;

pub const INFO: PassInfo = PassInfo {
    argument: "symbol-dce",
    name: "SymbolDCE",
    description: "Eliminate dead symbols: erase every private symbol of a symbol table that no live operation \
                  references. Public symbols and everything they reference stay.",
    anchor: None,
    options: &[],
    create,
};

fn create(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(SymbolDce::default()))
}

#[derive(Default)]
struct SymbolDce {
    erased: u64,
}

fn collect_refs(cx: &Context, a: Attr, out: &mut FxHashSet<String>) {
    match cx.attr_kind(a) {
        AttrKind::SymbolRef { root, .. } => {
            out.insert(cx.str(*root).to_string());
        }
        AttrKind::Array(items) => items.iter().for_each(|&i| collect_refs(cx, i, out)),
        AttrKind::Dictionary(e) => e.iter().for_each(|&(_, v)| collect_refs(cx, v, out)),
        _ => {}
    }
}

impl Pass for SymbolDce {
    fn run(&mut self, cx: &mut Context, op: Op) -> Result<(), Diagnostic> {
        if !cx.has_trait(op, Trait::SymbolTable) {
            return Ok(());
        }
        let children = cx.nested_ops(op);
        let is_private = |cx: &Context, o: Op| {
            cx.get_str_attr(o, "sym_name").is_some()
                && cx.get_str_attr(o, "sym_visibility") == Some("private")
        };
        // Live: every non-private child, then whatever live ops reference.
        let mut live: FxHashSet<String> = FxHashSet::default();
        let mut worklist: Vec<Op> = children
            .iter()
            .copied()
            .filter(|&o| !is_private(cx, o))
            .collect();
        let mut visited: FxHashSet<Op> = worklist.iter().copied().collect();
        while let Some(o) = worklist.pop() {
            let mut refs = FxHashSet::default();
            cx.walk_preorder(o, &mut |x| collect_refs(cx, cx.attrs(x), &mut refs));
            for r in refs {
                if live.insert(r.clone()) {
                    if let Some(target) = children
                        .iter()
                        .copied()
                        .find(|&c| cx.get_str_attr(c, "sym_name") == Some(r.as_str()))
                    {
                        if visited.insert(target) {
                            worklist.push(target);
                        }
                    }
                }
            }
        }
        for o in children {
            if is_private(cx, o) && !visited.contains(&o) {
                cx.erase_op(o);
                self.erased += 1;
            }
        }
        Ok(())
    }

    fn statistics(&self) -> Vec<Statistic> {
        vec![Statistic {
            name: "num-dce'd",
            description: "Number of symbols DCE'd",
            value: self.erased,
        }]
    }
}
