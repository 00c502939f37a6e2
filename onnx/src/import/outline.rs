//! Repeated layers found in a mapped graph (`ImportOptions::outline_layers`),
//! for [`crate::emit::emit_graph`] to write as one function called per
//! layer.
//!
//! Exporters name each node after the module that made it
//! (`/encoder/layer.3/attention/self/query/MatMul` for torch's TorchScript
//! exporter), so the nodes of a repeated block share a scope with a number
//! in it. Nodes are grouped by the numbered scope (the first path component
//! ending in `.<k>` or `_<k>` that is not the node's own name) that covers
//! the most nodes; a node without a scope joins the layer of its readers
//! when they all belong to one (the FP8 cast of a weight, named after the
//! weight). Each layer is checked against the first, node by node: the same
//! op with the same attributes, operands and result types, each operand the
//! same kind of thing (a value of the layer made by the node at the same
//! position, an input from outside the layers in the same argument
//! position, or a constant in the same parameter position). A layer that
//! differs in anything, reads a value another layer makes other than
//! through its inputs, or hands more than one value out stays inline, so an
//! outlined program computes exactly what the graph does.
//!
//! A constant position whose constants are equal in every layer is a
//! constant of the function; one that differs (a layer's weights) is a
//! parameter (`ipu.weight`), each call passing its layer's constant. The
//! FP8 casts of a parameter (`--weights-precision`) may differ only in
//! their power-of-two scale: every layer's cast at that position takes the
//! largest (no weight saturates; a layer with smaller weights rounds its
//! smallest ones a little coarser).

use std::collections::{HashMap, HashSet};

use ipu_reference::OpKind;

use super::{MappedGraph, ValueId};

/// What an operand of a layer's node is, the same in every outlined layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// Result `1` of the layer's node at position `0`.
    Node(usize, usize),
    /// The layer's activation argument with this index.
    Input(usize),
    /// The layer's constant with this index ([`Outline::fixed`] says
    /// whether it is one constant of the function or a parameter).
    Const(usize),
}

/// Layers outlined: one function, one call per layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outline {
    /// Per layer, in program order: its nodes (indices in
    /// [`MappedGraph::nodes`]), position by position alike.
    pub nodes: Vec<Vec<usize>>,
    /// Per node position, each operand.
    pub operands: Vec<Vec<Operand>>,
    /// Per layer, the values passed to its activation arguments.
    pub inputs: Vec<Vec<ValueId>>,
    /// Per layer, its constants (values of `Constant` nodes), by index.
    pub consts: Vec<Vec<ValueId>>,
    /// Per constant index: equal in every layer (a constant of the
    /// function), else a parameter.
    pub fixed: Vec<bool>,
    /// The node position and result the layer hands out.
    pub output: (usize, usize),
    /// The numbered scope the layers came from (`/encoder/layer.`).
    pub scope: String,
}

/// The numbered scope of node name `name`: (the scope up to its number,
/// the number).
fn scope_of(name: &str) -> Option<(&str, u64)> {
    if !name.starts_with('/') {
        return None;
    }
    let mut end = 0;
    let parts: Vec<&str> = name.split('/').collect();
    // The last component is the node's own name, not a scope.
    for part in &parts[..parts.len().saturating_sub(1)] {
        end += part.len() + 1;
        let digits = part.len() - part.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let head = &part[..part.len() - digits];
        if digits > 0 && (head.ends_with('.') || head.ends_with('_')) && head.len() > 1 {
            let k = part[part.len() - digits..].parse().ok()?;
            return Some((&name[..end - 1 - digits], k));
        }
    }
    None
}

/// The layers of `g` to outline, when at least two match.
pub fn find(g: &MappedGraph) -> Option<Outline> {
    let is_const = |n: usize| matches!(g.nodes[n].op, OpKind::Constant(_));
    // The scope covering the most nodes.
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        if let (false, Some((s, _))) = (is_const(i), scope_of(&n.name)) {
            *count.entry(s).or_default() += 1;
        }
    }
    let scope = count
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(s, _)| s.to_string())?;
    let mut layer: Vec<Option<u64>> = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| match scope_of(&n.name) {
            Some((s, k)) if s == scope && !is_const(i) => Some(k),
            _ => None,
        })
        .collect();
    let mut writer: HashMap<ValueId, usize> = HashMap::new();
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); g.values.len()];
    for (i, n) in g.nodes.iter().enumerate() {
        for &o in &n.outputs {
            writer.insert(o, i);
        }
        for &v in &n.inputs {
            readers[v].push(i);
        }
    }
    let outputs: HashSet<ValueId> = g.outputs.iter().copied().collect();
    // A node without a scope, made from constants, joins its readers' layer.
    for i in (0..g.nodes.len()).rev() {
        let n = &g.nodes[i];
        if layer[i].is_some() || is_const(i) || n.outputs.iter().any(|o| outputs.contains(o)) {
            continue;
        }
        if !n
            .inputs
            .iter()
            .all(|v| writer.get(v).is_some_and(|&w| is_const(w)))
        {
            continue;
        }
        let ks: HashSet<Option<u64>> = n
            .outputs
            .iter()
            .flat_map(|&o| readers[o].iter().map(|&r| layer[r]))
            .collect();
        if let [Some(k)] = ks.into_iter().collect::<Vec<_>>()[..] {
            layer[i] = Some(k);
        }
    }
    let mut by_layer: Vec<(u64, Vec<usize>)> = Vec::new();
    for (i, k) in layer.iter().enumerate() {
        let Some(k) = *k else { continue };
        match by_layer.iter_mut().find(|(x, _)| *x == k) {
            Some((_, v)) => v.push(i),
            None => by_layer.push((k, vec![i])),
        }
    }
    let shapes: Vec<Option<Shape>> = by_layer
        .iter()
        .map(|(_, nodes)| Shape::of(g, nodes, &writer, &readers, &outputs))
        .collect();
    let first = shapes.first()?.as_ref()?;
    let mut out = Outline {
        operands: first.operands.clone(),
        output: first.output,
        scope,
        ..Outline::default()
    };
    for ((_, nodes), shape) in by_layer.iter().zip(&shapes) {
        match shape {
            Some(s) if s.matches(first, g, nodes, &by_layer[0].1) => {
                out.nodes.push(nodes.clone());
                out.inputs.push(s.inputs.clone());
                out.consts.push(s.consts.clone());
            }
            _ => {}
        }
    }
    if out.nodes.len() < 2 {
        return None;
    }
    out.fixed = (0..first.consts.len())
        .map(|c| {
            let v0 = match &g.nodes[writer[&out.consts[0][c]]].op {
                OpKind::Constant(t) => t,
                _ => unreachable!("a constant operand is a constant node's value"),
            };
            out.consts
                .iter()
                .all(|cs| matches!(&g.nodes[writer[&cs[c]]].op, OpKind::Constant(t) if t == v0))
        })
        .collect();
    Some(out)
}

/// One layer's operands classified, when it can be a call.
#[derive(Clone, Debug)]
struct Shape {
    operands: Vec<Vec<Operand>>,
    inputs: Vec<ValueId>,
    consts: Vec<ValueId>,
    output: (usize, usize),
}

impl Shape {
    fn of(
        g: &MappedGraph,
        nodes: &[usize],
        writer: &HashMap<ValueId, usize>,
        readers: &[Vec<usize>],
        outputs: &HashSet<ValueId>,
    ) -> Option<Shape> {
        let pos: HashMap<usize, usize> = nodes.iter().enumerate().map(|(p, &n)| (n, p)).collect();
        let mut s = Shape {
            operands: Vec::with_capacity(nodes.len()),
            inputs: Vec::new(),
            consts: Vec::new(),
            output: (0, 0),
        };
        let slot = |list: &mut Vec<ValueId>, v| match list.iter().position(|&x| x == v) {
            Some(i) => i,
            None => {
                list.push(v);
                list.len() - 1
            }
        };
        for &n in nodes {
            let mut ops = Vec::new();
            for &v in &g.nodes[n].inputs {
                let w = writer.get(&v).copied();
                ops.push(match w {
                    Some(w) if pos.contains_key(&w) => {
                        let r = g.nodes[w].outputs.iter().position(|&o| o == v)?;
                        Operand::Node(pos[&w], r)
                    }
                    Some(w) if matches!(g.nodes[w].op, OpKind::Constant(_)) => {
                        Operand::Const(slot(&mut s.consts, v))
                    }
                    _ => Operand::Input(slot(&mut s.inputs, v)),
                });
            }
            s.operands.push(ops);
        }
        // Exactly one value leaves the layer, after its last node.
        let last = *nodes.last()?;
        let mut out = Vec::new();
        for (p, &n) in nodes.iter().enumerate() {
            for (r, &o) in g.nodes[n].outputs.iter().enumerate() {
                let outside: Vec<usize> = readers[o]
                    .iter()
                    .copied()
                    .filter(|x| !pos.contains_key(x))
                    .collect();
                if outside.iter().any(|&x| x < last) {
                    return None;
                }
                if !outside.is_empty() || outputs.contains(&o) {
                    out.push((p, r));
                }
            }
        }
        match out[..] {
            [o] => s.output = o,
            _ => return None,
        }
        Some(s)
    }

    /// Whether this layer (`nodes`) is the first layer (`first`,
    /// `nodes0`) with other inputs and constants.
    fn matches(&self, first: &Shape, g: &MappedGraph, nodes: &[usize], nodes0: &[usize]) -> bool {
        if self.operands != first.operands
            || self.output != first.output
            || self.inputs.len() != first.inputs.len()
            || self.consts.len() != first.consts.len()
        {
            return false;
        }
        let ty = |v: ValueId| &g.values[v].ty;
        let same_values =
            |a: &[ValueId], b: &[ValueId]| a.iter().zip(b).all(|(&x, &y)| ty(x) == ty(y));
        if !same_values(&self.inputs, &first.inputs) || !same_values(&self.consts, &first.consts) {
            return false;
        }
        nodes.iter().zip(nodes0).enumerate().all(|(p, (&n, &n0))| {
            let (a, b) = (&g.nodes[n], &g.nodes[n0]);
            a.outputs.len() == b.outputs.len()
                && a.outputs
                    .iter()
                    .zip(&b.outputs)
                    .all(|(&x, &y)| ty(x) == ty(y))
                && same_op(&a.op, &b.op, &first.operands[p])
        })
    }
}

/// Equal ops; the FP8 casts of a constant may differ in scale.
fn same_op(a: &OpKind, b: &OpKind, operands: &[Operand]) -> bool {
    match (a, b, operands) {
        (
            OpKind::Cast { to, saturate, .. },
            OpKind::Cast {
                to: t0,
                saturate: s0,
                ..
            },
            [Operand::Const(_)],
        ) => to == t0 && saturate == s0,
        _ => a == b,
    }
}

/// Gives each position's FP8 casts of a parameter the largest of their
/// scales, so the layers' functions are one.
pub fn unify_scales(g: &mut MappedGraph, o: &Outline) {
    for (p, ops) in o.operands.iter().enumerate() {
        let scales: Vec<i32> = o
            .nodes
            .iter()
            .filter_map(|ns| match (&g.nodes[ns[p]].op, &ops[..]) {
                (OpKind::Cast { scale, .. }, [Operand::Const(_)]) => Some(*scale),
                _ => None,
            })
            .collect();
        let Some(&max) = scales.iter().max() else {
            continue;
        };
        for ns in &o.nodes {
            if let OpKind::Cast { scale, .. } = &mut g.nodes[ns[p]].op {
                *scale = max;
            }
        }
    }
}
