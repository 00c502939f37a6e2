//! The verifier: structural rules (operand/result/attribute/region
//! declarations, terminators, dominance, isolation, symbol uniqueness) and
//! each op's own verifier. The first failure is reported as a diagnostic at
//! the failing op, with notes pointing at related places.

use crate::context::{Block, Context, Op, Region, Value, ValueDef};
use crate::diag::Diagnostic;
use crate::format::operand_group;
use crate::opdef::{Arity, OpDef, Trait};
use crate::printer::{attr_to_string, type_to_string};
use rustc_hash::FxHashMap;

/// Verifies `root` and everything nested in it.
pub fn verify(cx: &Context, root: Op) -> Result<(), Diagnostic> {
    let mut v = Verifier {
        cx,
        order: vec![0; cx.op_capacity()],
        doms: FxHashMap::default(),
    };
    v.number_ops(root);
    v.verify_op(root)
}

struct Verifier<'a> {
    cx: &'a Context,
    /// Position of each op within its block.
    order: Vec<u32>,
    doms: FxHashMap<Region, Dominators>,
}

pub fn op_error(cx: &Context, op: Op, msg: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::error(cx.op_loc(op), format!("'{}' op {msg}", cx.name_str(op)))
}

impl Verifier<'_> {
    fn number_ops(&mut self, root: Op) {
        let cx = self.cx;
        cx.walk_preorder(root, &mut |op| {
            for r in cx.regions(op) {
                for &b in cx.region_blocks(r) {
                    for (i, o) in cx.block_ops(b).enumerate() {
                        self.order[o.index()] = i as u32;
                    }
                }
            }
        });
    }

    fn verify_op(&mut self, root: Op) -> Result<(), Diagnostic> {
        // Iterative pre-order walk: deep nesting must not overflow the stack.
        let mut stack = vec![root];
        while let Some(op) = stack.pop() {
            self.verify_one(op)?;
            let cx = self.cx;
            for r in cx.regions(op).rev() {
                for &b in cx.region_blocks(r).iter().rev() {
                    let ops: Vec<Op> = cx.block_ops(b).collect();
                    stack.extend(ops.into_iter().rev());
                }
            }
        }
        Ok(())
    }

    fn verify_one(&mut self, op: Op) -> Result<(), Diagnostic> {
        let cx = self.cx;
        // Operands: defined, dominating, visible.
        for (i, &v) in cx.operands(op).iter().enumerate() {
            self.check_operand(op, i, v)?;
        }
        for &s in cx.successors(op) {
            let same_region = cx.block_parent_region(s)
                == cx.parent_block(op).and_then(|b| cx.block_parent_region(b));
            if !same_region {
                return Err(op_error(
                    cx,
                    op,
                    "reference to block defined in another region",
                ));
            }
        }
        let def = cx.def(op);
        if let Some(def) = def {
            self.verify_declared(op, def)?;
        }
        // Blocks need terminators unless the op says otherwise (unregistered ops may be anything).
        let needs_terminator = def.is_some_and(|d| !d.has_trait(Trait::NoTerminator));
        for r in cx.regions(op) {
            for &b in cx.region_blocks(r) {
                self.verify_block(op, b, needs_terminator)?;
            }
        }
        if let Some(def) = def {
            if def.has_trait(Trait::IsolatedFromAbove) {
                self.verify_isolation(op)?;
            }
            if def.has_trait(Trait::SymbolTable) {
                self.verify_symbol_table(op)?;
            }
            if let Some(f) = def.verify {
                f(cx, op)?;
            }
        }
        Ok(())
    }

    fn verify_block(&self, parent: Op, b: Block, needs_terminator: bool) -> Result<(), Diagnostic> {
        let cx = self.cx;
        for o in cx.block_ops(b) {
            if cx.has_trait(o, Trait::Terminator) && cx.next_op(o).is_some() {
                return Err(op_error(
                    cx,
                    o,
                    "must be the last operation in the parent block",
                ));
            }
        }
        if !needs_terminator {
            return Ok(());
        }
        match cx.last_op(b) {
            None => Err(op_error(cx, parent, "empty block: expect at least a terminator")),
            Some(last) if cx.is_registered(last) && !cx.has_trait(last, Trait::Terminator) => {
                Err(op_error(cx, last, "block with no terminator: the last operation of this block is not a terminator")
                    .with_note(cx.op_loc(parent), "in a region of this operation"))
            }
            _ => Ok(()),
        }
    }

    fn check_operand(&mut self, user: Op, i: usize, v: Value) -> Result<(), Diagnostic> {
        let cx = self.cx;
        let def_block = match cx.value_def(v) {
            ValueDef::Result(d, _) => {
                if cx.is_erased(d) || cx.name_str(d) == "builtin.unresolved_forward_reference" {
                    return Err(op_error(
                        cx,
                        user,
                        format!("operand #{i} refers to a value that no longer exists"),
                    ));
                }
                cx.parent_block(d)
            }
            ValueDef::BlockArg(b, _) => Some(b),
        };
        let not_dominated = || {
            let mut d = op_error(cx, user, format!("operand #{i} does not dominate this use"));
            if let Some(def) = cx.defining_op(v) {
                d = d.with_note(cx.op_loc(def), "operand defined here");
            }
            d
        };
        let Some(def_block) = def_block else {
            return Err(not_dominated());
        };
        let Some(def_region) = cx.block_parent_region(def_block) else {
            return Err(not_dominated());
        };
        // Climb from the user to its ancestor in the defining region.
        let mut a = user;
        loop {
            let Some(ab) = cx.parent_block(a) else {
                return Err(not_dominated());
            };
            if cx.block_parent_region(ab) == Some(def_region) {
                break;
            }
            match cx.parent_op(a) {
                Some(p) => a = p,
                None => return Err(not_dominated()),
            }
        }
        // Graph regions impose no order.
        let graph = cx
            .region_parent_op(def_region)
            .is_none_or(|p| !cx.is_registered(p) || cx.has_trait(p, Trait::GraphRegion));
        if graph {
            return Ok(());
        }
        let ab = cx.parent_block(a).expect("checked above");
        if ab == def_block {
            if let ValueDef::Result(d, _) = cx.value_def(v) {
                if d == a || self.order[d.index()] >= self.order[a.index()] {
                    return Err(not_dominated());
                }
            }
            return Ok(());
        }
        let doms = self
            .doms
            .entry(def_region)
            .or_insert_with(|| Dominators::compute(cx, def_region));
        if doms.dominates(def_block, ab) {
            Ok(())
        } else {
            Err(not_dominated())
        }
    }

    fn verify_declared(&self, op: Op, def: &OpDef) -> Result<(), Diagnostic> {
        let cx = self.cx;
        // Counts.
        let singles = def
            .operands
            .iter()
            .filter(|o| o.arity == Arity::Single)
            .count();
        let flexible = def.operands.len() - singles;
        let n = cx.operands(op).len();
        let optional_only = def.operands.iter().all(|o| o.arity != Arity::Variadic);
        if (flexible == 0 && n != singles)
            || n < singles
            || (flexible > 0 && optional_only && n > singles + flexible)
        {
            let expected = if flexible == 0 {
                format!("{singles}")
            } else {
                format!("at least {singles}")
            };
            return Err(op_error(
                cx,
                op,
                format!("expected {expected} operands, but found {n}"),
            ));
        }
        let rs = def
            .results
            .iter()
            .filter(|o| o.arity == Arity::Single)
            .count();
        let rflex = def.results.len() - rs;
        let nr = cx.num_results(op);
        if (rflex == 0 && nr != rs) || nr < rs {
            return Err(op_error(
                cx,
                op,
                format!("expected {rs} results, but found {nr}"),
            ));
        }
        // Type constraints.
        for (gi, g) in def.operands.iter().enumerate() {
            for v in operand_group(cx, op, def, gi) {
                let t = cx.value_type(v);
                if !(g.constraint.check)(cx, t) {
                    let idx = cx.operands(op).iter().position(|&x| x == v).unwrap_or(0);
                    return Err(op_error(
                        cx,
                        op,
                        format!(
                            "operand #{idx} must be {}, but got '{}'",
                            g.constraint.description,
                            type_to_string(cx, t)
                        ),
                    ));
                }
            }
        }
        if rflex == 0 {
            for (i, (g, t)) in def.results.iter().zip(cx.result_types(op)).enumerate() {
                if !(g.constraint.check)(cx, t) {
                    return Err(op_error(
                        cx,
                        op,
                        format!(
                            "result #{i} must be {}, but got '{}'",
                            g.constraint.description,
                            type_to_string(cx, t)
                        ),
                    ));
                }
            }
        }
        // Attributes.
        for a in def.attributes {
            match cx.get_attr(op, a.name) {
                None if !a.optional => {
                    return Err(op_error(cx, op, format!("requires attribute '{}'", a.name)));
                }
                Some(v) if !(a.constraint.check)(cx, v) => {
                    return Err(op_error(
                        cx,
                        op,
                        format!(
                            "attribute '{}' failed to satisfy constraint: {} (got {})",
                            a.name,
                            a.constraint.description,
                            attr_to_string(cx, v)
                        ),
                    ));
                }
                _ => {}
            }
        }
        // Regions.
        let fixed_regions = def.regions.iter().all(|r| r.arity == Arity::Single);
        if fixed_regions && cx.num_regions(op) != def.regions.len() {
            return Err(op_error(
                cx,
                op,
                format!(
                    "requires {} region(s), but found {}",
                    def.regions.len(),
                    cx.num_regions(op)
                ),
            ));
        }
        for (i, (rd, r)) in def.regions.iter().zip(cx.regions(op)).enumerate() {
            if rd.single_block && cx.region_blocks(r).len() > 1 {
                return Err(op_error(
                    cx,
                    op,
                    format!("expects region #{i} to have 0 or 1 blocks"),
                ));
            }
        }
        if def.has_trait(Trait::SameOperandsAndResultType) {
            let mut tys = cx.operand_types(op).chain(cx.result_types(op));
            if let Some(first) = tys.next() {
                if tys.any(|t| t != first) {
                    return Err(op_error(
                        cx,
                        op,
                        "requires the same type for all operands and results",
                    ));
                }
            }
        }
        if def.has_trait(Trait::SameOperandsAndResultElementType) {
            let elem = |t| cx.tensor_parts(t).map(|(_, e)| e).unwrap_or(t);
            let mut tys = cx.operand_types(op).chain(cx.result_types(op)).map(elem);
            if let Some(first) = tys.next() {
                if tys.any(|t| t != first) {
                    return Err(op_error(
                        cx,
                        op,
                        "requires the same element type for all operands and results",
                    ));
                }
            }
        }
        if def.has_trait(Trait::Symbol) && cx.get_str_attr(op, "sym_name").is_none() {
            return Err(op_error(cx, op, "requires string attribute 'sym_name'"));
        }
        Ok(())
    }

    fn verify_isolation(&self, op: Op) -> Result<(), Diagnostic> {
        let cx = self.cx;
        let mut err = None;
        for r in cx.regions(op) {
            for &b in cx.region_blocks(r) {
                for inner in cx.block_ops(b) {
                    cx.walk_preorder(inner, &mut |o| {
                        if err.is_some() {
                            return;
                        }
                        for &v in cx.operands(o) {
                            let inside = match cx.value_def(v) {
                                ValueDef::Result(d, _) => cx.is_ancestor(op, d) && d != op,
                                ValueDef::BlockArg(blk, _) => cx
                                    .block_parent_op(blk)
                                    .is_some_and(|p| cx.is_ancestor(op, p)),
                            };
                            if !inside {
                                err = Some(
                                    op_error(cx, o, "using value defined outside the region")
                                        .with_note(
                                            cx.op_loc(op),
                                            "required by region isolation constraints",
                                        ),
                                );
                                return;
                            }
                        }
                    });
                }
            }
        }
        err.map_or(Ok(()), Err)
    }

    fn verify_symbol_table(&self, op: Op) -> Result<(), Diagnostic> {
        let cx = self.cx;
        let mut seen: FxHashMap<&str, Op> = FxHashMap::default();
        for o in cx.nested_ops(op) {
            if let Some(name) = cx.get_str_attr(o, "sym_name") {
                if let Some(&prev) = seen.get(name) {
                    return Err(Diagnostic::error(
                        cx.op_loc(o),
                        format!("redefinition of symbol named '{name}'"),
                    )
                    .with_note(cx.op_loc(prev), "see existing symbol definition here"));
                }
                seen.insert(name, o);
            }
        }
        Ok(())
    }
}

/// Dominator tree of one region's CFG (Cooper, Harvey and Kennedy's iterative algorithm).
struct Dominators {
    index: FxHashMap<Block, usize>,
    /// Immediate dominator by reverse-postorder number; `usize::MAX` for unreachable.
    idom: Vec<usize>,
    rpo_number: Vec<usize>,
}

impl Dominators {
    fn compute(cx: &Context, r: Region) -> Dominators {
        let blocks = cx.region_blocks(r);
        let index: FxHashMap<Block, usize> =
            blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let succs: Vec<Vec<usize>> = blocks
            .iter()
            .map(|&b| {
                cx.last_op(b)
                    .map(|t| {
                        cx.successors(t)
                            .iter()
                            .filter_map(|s| index.get(s).copied())
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect();
        let n = blocks.len();
        // Reverse postorder from the entry block.
        let mut post = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        if n > 0 {
            let mut stack = vec![(0usize, 0usize)];
            seen[0] = true;
            while let Some(&mut (b, ref mut k)) = stack.last_mut() {
                if *k < succs[b].len() {
                    let s = succs[b][*k];
                    *k += 1;
                    if !seen[s] {
                        seen[s] = true;
                        stack.push((s, 0));
                    }
                } else {
                    post.push(b);
                    stack.pop();
                }
            }
        }
        let rpo: Vec<usize> = post.iter().rev().copied().collect();
        let mut rpo_number = vec![usize::MAX; n];
        for (i, &b) in rpo.iter().enumerate() {
            rpo_number[b] = i;
        }
        let mut preds = vec![Vec::new(); n];
        for (b, ss) in succs.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        let mut idom = vec![usize::MAX; n];
        if n > 0 {
            idom[0] = 0;
        }
        let mut changed = true;
        while changed {
            changed = false;
            for &b in rpo.iter().skip(1) {
                let mut new = usize::MAX;
                for &p in &preds[b] {
                    if idom[p] == usize::MAX {
                        continue;
                    }
                    new = if new == usize::MAX {
                        p
                    } else {
                        intersect(&idom, &rpo_number, p, new)
                    };
                }
                if new != idom[b] {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        Dominators {
            index,
            idom,
            rpo_number,
        }
    }

    fn dominates(&self, a: Block, b: Block) -> bool {
        let (Some(&a), Some(&b)) = (self.index.get(&a), self.index.get(&b)) else {
            return false;
        };
        if self.rpo_number[b] == usize::MAX {
            return true; // uses in unreachable blocks are not checked
        }
        let mut x = b;
        loop {
            if x == a {
                return true;
            }
            let d = self.idom[x];
            if d == x || d == usize::MAX {
                return false;
            }
            x = d;
        }
    }
}

fn intersect(idom: &[usize], rpo: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while rpo[a] > rpo[b] {
            a = idom[a];
        }
        while rpo[b] > rpo[a] {
            b = idom[b];
        }
    }
    a
}
