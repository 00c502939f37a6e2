//! Repeated layers found in a mapped graph (`ImportOptions::outline_layers`),
//! for [`crate::emit::emit_graph`] to write as one function per kind of
//! layer, called per layer.
//!
//! Exporters name each node after the module that made it
//! (`/encoder/layer.3/attention/self/query/MatMul` for torch's TorchScript
//! exporter, `/resnet/encoder/stages.1/layers.2/layer.0/convolution/Conv`
//! for a ResNet), so the nodes of a repeated block share a scope with a
//! number in it. Every numbered scope (a path component ending in `.<k>` or
//! `_<k>` that is not the node's own name) is searched, outermost first:
//! its nodes are grouped by the number; a node without a scope joins the
//! layer of its readers when they all belong to one (the FP8 cast of a
//! weight, named after the weight). The layers of a scope fall into
//! classes of identical layers, each checked against its class's first,
//! node by node: the same op with the same attributes, operands and result
//! types, each operand the same kind of thing (a value of the layer made by
//! the node at the same position, an input from outside the layer in the
//! same argument position, or a constant in the same parameter position).
//! Each class of two or more layers is one function; a layer alike to no
//! other, that reads a value another layer makes other than through its
//! inputs, or hands more than one value out stays inline, and the scopes
//! inside it are searched in turn (a ResNet stage's first layer, with its
//! downsampling shortcut, differs from the stage's others, which are
//! alike). So an outlined program computes exactly what the graph does.
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
    /// The numbered scope the layers came from (`/encoder/layer.`); layers
    /// of one scope may form several outlines, one per class.
    pub scope: String,
}

/// The numbered scopes of node name `name`, outermost first: (the scope
/// up to its number, the number), one per path component ending in `.<k>`
/// or `_<k>` other than the node's own name.
fn scopes_of(name: &str) -> Vec<(&str, u64)> {
    let mut out = Vec::new();
    if !name.starts_with('/') {
        return out;
    }
    let mut end = 0;
    let parts: Vec<&str> = name.split('/').collect();
    // The last component is the node's own name, not a scope.
    for part in &parts[..parts.len().saturating_sub(1)] {
        end += part.len() + 1;
        let digits = part.len() - part.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let head = &part[..part.len() - digits];
        if digits > 0 && (head.ends_with('.') || head.ends_with('_')) && head.len() > 1 {
            if let Ok(k) = part[part.len() - digits..].parse() {
                out.push((&name[..end - 1 - digits], k));
            }
        }
    }
    out
}

/// The graph's use lists, shared by every scope's search.
struct Uses {
    writer: HashMap<ValueId, usize>,
    readers: Vec<Vec<usize>>,
    outputs: HashSet<ValueId>,
}

/// The repeated layers of `g` to outline: for each numbered scope, outermost
/// first, its numbered siblings (`/stages.0/layers.1/`, `/stages.0/layers.2/`,
/// ...) grouped into classes of identical layers, each class of two or more
/// one [`Outline`]. Nodes a class takes are not looked at again for the
/// scopes inside it, so a stage whose layers differ is searched layer by
/// layer, and a model may have several functions.
pub fn find(g: &MappedGraph) -> Vec<Outline> {
    let is_const = |n: usize| matches!(g.nodes[n].op, OpKind::Constant(_));
    let mut uses = Uses {
        writer: HashMap::new(),
        readers: vec![Vec::new(); g.values.len()],
        outputs: g.outputs.iter().copied().collect(),
    };
    for (i, n) in g.nodes.iter().enumerate() {
        for &o in &n.outputs {
            uses.writer.insert(o, i);
        }
        for &v in &n.inputs {
            uses.readers[v].push(i);
        }
    }
    let scopes: Vec<Vec<(&str, u64)>> = (0..g.nodes.len())
        .map(|i| match is_const(i) {
            true => Vec::new(),
            false => scopes_of(&g.nodes[i].name),
        })
        .collect();
    // Every numbered scope, outermost first, then in order of first use.
    let mut order: Vec<(usize, &str)> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for s in &scopes {
        for (depth, &(scope, _)) in s.iter().enumerate() {
            if seen.insert(scope) {
                order.push((depth, scope));
            }
        }
    }
    order.sort_by_key(|&(depth, _)| depth);
    let mut taken = vec![false; g.nodes.len()];
    let mut found = Vec::new();
    for (_, scope) in order {
        let layer: Vec<Option<u64>> = (0..g.nodes.len())
            .map(|i| match taken[i] {
                true => None,
                false => scopes[i].iter().find(|s| s.0 == scope).map(|s| s.1),
            })
            .collect();
        for o in classes(
            g,
            &uses,
            join_constant_nodes(g, &uses, layer, &taken),
            scope,
        ) {
            for &n in o.nodes.iter().flatten() {
                taken[n] = true;
            }
            found.push(o);
        }
    }
    found
}

/// `layer` (per node, its number in the scope searched) with each node
/// made from constants only and outside every layer given its readers'
/// layer when they all belong to one (the FP8 cast of a weight, named after
/// the weight).
fn join_constant_nodes(
    g: &MappedGraph,
    uses: &Uses,
    mut layer: Vec<Option<u64>>,
    taken: &[bool],
) -> Vec<Option<u64>> {
    let is_const = |n: usize| matches!(g.nodes[n].op, OpKind::Constant(_));
    for i in (0..g.nodes.len()).rev() {
        let n = &g.nodes[i];
        if layer[i].is_some()
            || taken[i]
            || is_const(i)
            || n.outputs.iter().any(|o| uses.outputs.contains(o))
        {
            continue;
        }
        if !n
            .inputs
            .iter()
            .all(|v| uses.writer.get(v).is_some_and(|&w| is_const(w)))
        {
            continue;
        }
        let ks: HashSet<Option<u64>> = n
            .outputs
            .iter()
            .flat_map(|&o| uses.readers[o].iter().map(|&r| layer[r]))
            .collect();
        if let [Some(k)] = ks.into_iter().collect::<Vec<_>>()[..] {
            layer[i] = Some(k);
        }
    }
    layer
}

/// The layers of one scope (`layer`: per node, its number) grouped into
/// classes of identical layers, in order of each class's first layer;
/// each class of two or more layers is an [`Outline`].
fn classes(g: &MappedGraph, uses: &Uses, layer: Vec<Option<u64>>, scope: &str) -> Vec<Outline> {
    let mut by_layer: Vec<(u64, Vec<usize>)> = Vec::new();
    for (i, k) in layer.iter().enumerate() {
        let Some(k) = *k else { continue };
        match by_layer.iter_mut().find(|(x, _)| *x == k) {
            Some((_, v)) => v.push(i),
            None => by_layer.push((k, vec![i])),
        }
    }
    // Per class: its first layer's shape and nodes, then every member.
    let mut classes: Vec<(Shape, Vec<usize>, Outline)> = Vec::new();
    for (_, nodes) in &by_layer {
        let Some(s) = Shape::of(g, nodes, &uses.writer, &uses.readers, &uses.outputs) else {
            continue;
        };
        let class = match classes
            .iter_mut()
            .find(|(first, nodes0, _)| s.matches(first, g, nodes, nodes0))
        {
            Some((_, _, o)) => o,
            None => {
                let o = Outline {
                    operands: s.operands.clone(),
                    output: s.output,
                    scope: scope.to_string(),
                    ..Outline::default()
                };
                classes.push((s.clone(), nodes.clone(), o));
                &mut classes.last_mut().expect("just pushed").2
            }
        };
        class.nodes.push(nodes.clone());
        class.inputs.push(s.inputs);
        class.consts.push(s.consts);
    }
    let mut out = Vec::new();
    for (_, _, mut o) in classes {
        if o.nodes.len() < 2 {
            continue;
        }
        let constant = |v: ValueId| match &g.nodes[uses.writer[&v]].op {
            OpKind::Constant(t) => t,
            _ => unreachable!("a constant operand is a constant node's value"),
        };
        o.fixed = (0..o.consts[0].len())
            .map(|c| {
                let v0 = constant(o.consts[0][c]);
                o.consts.iter().all(|cs| constant(cs[c]) == v0)
            })
            .collect();
        out.push(o);
    }
    out
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
