//! `cse`: common subexpression elimination. Two side-effect-free ops with
//! the same name, operands, attributes and result types compute the same
//! values; the later one is replaced by the earlier when the earlier
//! dominates it. Scopes follow the region tree: a block sees the ops before
//! it in its own block and in its enclosing blocks (not across isolated ops).

use ipu_ir::pass::{Pass, PassInfo, PassOptions, Statistic};
use ipu_ir::{Attr, Block, Context, Diagnostic, Op, OpName, Trait, Type, Value};
use rustc_hash::FxHashMap;

pub const INFO: PassInfo = PassInfo {
    argument: "cse",
    name: "CSE",
    description: "Eliminate common sub-expressions: replace a side-effect-free operation by an identical one that \
                  dominates it, and erase the duplicate.",
    anchor: None,
    options: &[],
    create,
};

fn create(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(Cse::default()))
}

#[derive(Default)]
struct Cse {
    num_cse: u64,
    num_dce: u64,
}

#[derive(Hash, PartialEq, Eq)]
struct Key {
    name: OpName,
    attrs: Attr,
    operands: Vec<Value>,
    results: Vec<Type>,
}

impl Pass for Cse {
    fn run(&mut self, cx: &mut Context, op: Op) -> Result<(), Diagnostic> {
        let mut scopes: Vec<FxHashMap<Key, Op>> = Vec::new();
        for r in cx.regions(op).collect::<Vec<_>>() {
            for b in cx.region_blocks(r).to_vec() {
                self.block(cx, b, &mut scopes);
            }
        }
        Ok(())
    }

    fn statistics(&self) -> Vec<Statistic> {
        vec![
            Statistic {
                name: "num-cse'd",
                description: "Number of operations CSE'd",
                value: self.num_cse,
            },
            Statistic {
                name: "num-dce'd",
                description: "Number of operations DCE'd",
                value: self.num_dce,
            },
        ]
    }
}

impl Cse {
    fn block(&mut self, cx: &mut Context, b: Block, scopes: &mut Vec<FxHashMap<Key, Op>>) {
        scopes.push(FxHashMap::default());
        for op in cx.block_ops_vec(b) {
            if cx.is_erased(op) {
                continue;
            }
            // Nested regions: a fresh scope stack when isolated, else inherit.
            if cx.num_regions(op) > 0 {
                let isolated = cx.has_trait(op, Trait::IsolatedFromAbove);
                let mut fresh = Vec::new();
                let inner = if isolated { &mut fresh } else { &mut *scopes };
                for r in cx.regions(op).collect::<Vec<_>>() {
                    // Only single-block regions inherit the enclosing scope soundly.
                    for nb in cx.region_blocks(r).to_vec() {
                        self.block(cx, nb, inner);
                    }
                }
            }
            let eligible =
                cx.has_trait(op, Trait::Pure) && cx.num_regions(op) == 0 && cx.num_results(op) > 0;
            if !eligible {
                continue;
            }
            if cx.results(op).all(|r| !cx.has_uses(r)) && !cx.has_trait(op, Trait::Terminator) {
                cx.erase_op(op);
                self.num_dce += 1;
                continue;
            }
            let key = Key {
                name: cx.name(op),
                attrs: cx.attrs(op),
                operands: cx.operands(op).to_vec(),
                results: cx.result_types(op).collect(),
            };
            let existing = scopes.iter().rev().find_map(|s| s.get(&key).copied());
            match existing {
                Some(prev) => {
                    let vals: Vec<Value> = cx.results(prev).collect();
                    // Keep the location information of both.
                    let fused = cx.fused_loc(vec![cx.op_loc(prev), cx.op_loc(op)]);
                    cx.set_op_loc(prev, fused);
                    cx.replace_op(op, &vals);
                    self.num_cse += 1;
                }
                None => {
                    scopes.last_mut().expect("scope").insert(key, op);
                }
            }
        }
        scopes.pop();
    }
}
