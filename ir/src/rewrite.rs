//! Pattern rewriting: the [`RewritePattern`] interface and a greedy driver
//! that folds ops, applies patterns and removes dead ops until nothing
//! changes (or an iteration limit is reached), like MLIR's
//! `applyPatternsGreedily`.

use crate::context::{Context, Op, OperationState, Value};
use crate::opdef::{FoldResult, FoldValue, Trait};
use crate::types::Attr;
use rustc_hash::FxHashMap;

/// Records what a pattern changed, so the driver revisits the affected ops.
pub struct Rewriter<'a> {
    pub cx: &'a mut Context,
    touched: Vec<Op>,
}

impl<'a> Rewriter<'a> {
    pub fn new(cx: &'a mut Context) -> Self {
        Rewriter {
            cx,
            touched: Vec::new(),
        }
    }
    /// Creates an op right before `before`.
    pub fn create_op_before(&mut self, before: Op, st: OperationState) -> Op {
        let op = self.cx.create_op(st);
        self.cx.insert_op_before(before, op);
        self.touched.push(op);
        op
    }
    /// Replaces the results of `op` with `values` and erases it.
    pub fn replace_op(&mut self, op: Op, values: &[Value]) {
        for &v in values {
            if let Some(d) = self.cx.defining_op(v) {
                self.touched.push(d);
            }
        }
        self.note_operands(op);
        self.cx.replace_op(op, values);
        for &v in values {
            self.touched.extend(self.cx.uses(v).iter().map(|u| u.op));
        }
    }
    pub fn erase_op(&mut self, op: Op) {
        self.note_operands(op);
        self.cx.erase_op(op);
    }
    /// Notes that `op` was modified in place.
    pub fn modified(&mut self, op: Op) {
        self.touched.push(op);
        for r in self.cx.results(op) {
            self.touched.extend(self.cx.uses(r).iter().map(|u| u.op));
        }
    }
    fn note_operands(&mut self, op: Op) {
        for &v in self.cx.operands(op) {
            if let Some(d) = self.cx.defining_op(v) {
                self.touched.push(d);
            }
        }
    }
}

pub trait RewritePattern {
    /// The op name this pattern matches, or `None` for any op.
    fn root(&self) -> Option<&'static str>;
    fn name(&self) -> &'static str;
    fn benefit(&self) -> u16 {
        1
    }
    /// Rewrites `op` if it matches; returns whether anything changed.
    fn match_and_rewrite(&self, rw: &mut Rewriter<'_>, op: Op) -> bool;
}

/// Patterns indexed by root op name, highest benefit first.
#[derive(Default)]
pub struct PatternSet {
    by_root: FxHashMap<&'static str, Vec<Box<dyn RewritePattern>>>,
    any: Vec<Box<dyn RewritePattern>>,
}

impl PatternSet {
    pub fn add(&mut self, p: Box<dyn RewritePattern>) {
        match p.root() {
            Some(r) => {
                let v = self.by_root.entry(r).or_default();
                v.push(p);
                v.sort_by_key(|p| std::cmp::Reverse(p.benefit()));
            }
            None => self.any.push(p),
        }
    }
    /// Every canonicalization pattern of every registered op.
    pub fn canonicalization(registry: &crate::opdef::Registry) -> Self {
        let mut s = PatternSet::default();
        for def in registry.ops() {
            if let Some(f) = def.canonicalization_patterns {
                for p in f() {
                    s.add(p);
                }
            }
        }
        s
    }
    fn for_op(&self, name: &str) -> impl Iterator<Item = &dyn RewritePattern> {
        self.by_root
            .get(name)
            .into_iter()
            .flatten()
            .chain(self.any.iter())
            .map(|b| b.as_ref())
    }
}

#[derive(Clone, Copy, Debug)]
pub struct GreedyConfig {
    pub max_iterations: u32,
    pub top_down: bool,
    pub fold: bool,
}

impl Default for GreedyConfig {
    fn default() -> Self {
        GreedyConfig {
            max_iterations: 10,
            top_down: true,
            fold: true,
        }
    }
}

/// What the driver did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RewriteStats {
    pub changed: bool,
    pub converged: bool,
    pub folded: u64,
    pub rewritten: u64,
    pub erased_dead: u64,
}

/// The constant an op-defining value holds, if its op is constant-like.
pub fn constant_value(cx: &Context, v: Value) -> Option<Attr> {
    let d = cx.defining_op(v)?;
    if cx.has_trait(d, Trait::ConstantLike) {
        cx.get_attr(d, "value")
    } else {
        None
    }
}

fn is_trivially_dead(cx: &Context, op: Op) -> bool {
    cx.has_trait(op, Trait::Pure)
        && !cx.has_trait(op, Trait::Terminator)
        && cx.results(op).all(|r| !cx.has_uses(r))
}

/// Applies folds and patterns to every op nested under `root` until a fixpoint.
pub fn apply_patterns_greedily(
    cx: &mut Context,
    root: Op,
    patterns: &PatternSet,
    config: GreedyConfig,
) -> RewriteStats {
    let mut stats = RewriteStats::default();
    for _ in 0..config.max_iterations.max(1) {
        let mut ops = Vec::new();
        for r in cx.regions(root) {
            for &b in cx.region_blocks(r) {
                for o in cx.block_ops(b) {
                    if config.top_down {
                        cx.walk_preorder(o, &mut |x| ops.push(x));
                    } else {
                        ops.extend(cx.collect_postorder(o));
                    }
                }
            }
        }
        ops.reverse(); // used as a stack
        let mut on_list = vec![false; cx.op_capacity()];
        for &o in &ops {
            on_list[o.index()] = true;
        }
        let mut changed = false;
        while let Some(op) = ops.pop() {
            if op.index() < on_list.len() {
                on_list[op.index()] = false;
            }
            if cx.is_erased(op) || cx.parent_block(op).is_none() || !cx.is_ancestor(root, op) {
                continue;
            }
            let mut touched: Vec<Op> = Vec::new();
            if is_trivially_dead(cx, op) {
                touched.extend(cx.operands(op).iter().filter_map(|&v| cx.defining_op(v)));
                cx.erase_op(op);
                stats.erased_dead += 1;
                changed = true;
            } else if config.fold && try_fold(cx, op, &mut touched) {
                stats.folded += 1;
                changed = true;
            } else {
                let name = cx.name_str(op).to_string();
                for p in patterns.for_op(&name) {
                    let mut rw = Rewriter::new(cx);
                    if p.match_and_rewrite(&mut rw, op) {
                        touched.append(&mut rw.touched);
                        stats.rewritten += 1;
                        changed = true;
                        tracing::trace!(pattern = p.name(), "pattern applied");
                        break;
                    }
                }
            }
            for t in touched {
                if t.index() >= on_list.len() {
                    on_list.resize(cx.op_capacity(), false);
                }
                if !on_list[t.index()] && !cx.is_erased(t) {
                    on_list[t.index()] = true;
                    ops.push(t);
                }
            }
        }
        stats.changed |= changed;
        if !changed {
            stats.converged = true;
            break;
        }
    }
    stats
}

fn try_fold(cx: &mut Context, op: Op, touched: &mut Vec<Op>) -> bool {
    let Some(def) = cx.def(op) else { return false };
    let Some(fold) = def.fold else { return false };
    if def.has_trait(Trait::ConstantLike) {
        return false;
    }
    let consts: Vec<Option<Attr>> = cx
        .operands(op)
        .iter()
        .map(|&v| constant_value(cx, v))
        .collect();
    match fold(cx, op, &consts) {
        FoldResult::None => false,
        FoldResult::InPlace => {
            touched.push(op);
            for r in cx.results(op) {
                touched.extend(cx.uses(r).iter().map(|u| u.op));
            }
            true
        }
        FoldResult::Replace(values) => {
            let results: Vec<Value> = cx.results(op).collect();
            if values.len() != results.len() {
                return false;
            }
            let dialect = def.dialect();
            let materialize = cx
                .registry()
                .dialect(dialect)
                .and_then(|d| d.materialize_constant);
            let mut new_values = Vec::with_capacity(values.len());
            let mut created = Vec::new();
            for (fv, &r) in values.iter().zip(&results) {
                match *fv {
                    FoldValue::Value(v) => new_values.push(v),
                    FoldValue::Constant(a) => {
                        let ty = cx.value_type(r);
                        let loc = cx.op_loc(op);
                        let Some(c) = materialize.and_then(|m| m(cx, a, ty, loc)) else {
                            for c in created {
                                cx.erase_op(c);
                            }
                            return false;
                        };
                        cx.insert_op_before(op, c);
                        created.push(c);
                        new_values.push(cx.result(c, 0));
                    }
                }
            }
            touched.extend(cx.operands(op).iter().filter_map(|&v| cx.defining_op(v)));
            cx.replace_op(op, &new_values);
            touched.extend(created.iter().copied());
            for &v in &new_values {
                touched.extend(cx.uses(v).iter().map(|u| u.op));
            }
            true
        }
    }
}
