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
//! An exporter that names nodes by op alone (torch's dynamo exporter:
//! `node_MatMul_48`, `node_gelu`) still names the parameters by module
//! (`encoder.layer.3.attention.self.query.bias`): such a node takes the
//! numbered scopes of the dotted name of an initializer it reads (a number
//! that ends the name is not a scope). A node with neither kind of name
//! (the matmul by a weight the exporter transposed into `val_49`, a
//! softmax) joins the layer whose anchors (the nodes with scopes) it lies
//! between; one between two layers starts the later if it reads a weight
//! (a constant of more than one element), else ends the earlier
//! ([`join_nodes`] gives the rules). A node that reads a module's parameter
//! without a number (`embeddings.LayerNorm.weight`) belongs to no layer.
//!
//! A constant position whose constants are equal in every layer is a
//! constant of the function; one that differs (a layer's weights) is a
//! parameter (`ipu.weight`), each call passing its layer's constant. The
//! FP8 casts of a parameter (`--weights-precision`) may differ only in
//! their power-of-two scale: every layer's cast at that position takes the
//! largest (no weight saturates; a layer with smaller weights rounds its
//! smallest ones a little coarser).

use std::collections::{BTreeSet, HashMap, HashSet};

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

/// The numbered scopes of a parameter's dotted name, outermost first, as
/// [`scopes_of`] gives a node's: `enc.layer.3.attn.bias` is in
/// (`enc.layer.`, 3). A number that ends the name is not a scope.
fn dotted_scopes(name: &str) -> Vec<(&str, u64)> {
    let mut out = Vec::new();
    let parts: Vec<&str> = name.split('.').collect();
    let mut start = 0;
    for (i, part) in parts.iter().enumerate() {
        let numbered = !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        if i > 0 && i + 1 < parts.len() && numbered {
            if let Ok(k) = part.parse() {
                out.push((&name[..start], k));
            }
        }
        start += part.len() + 1;
    }
    out
}

/// The scopes of node `i`, whose name tells none, from the initializers it
/// alone reads: those of the first with a numbered dotted name, or none if
/// two disagree; and whether it reads a dotted name with no number (a
/// module's parameter outside every numbered scope).
fn param_scopes<'g>(
    g: &'g MappedGraph,
    uses: &Uses,
    params: &HashSet<&str>,
    i: usize,
) -> (Vec<(&'g str, u64)>, bool) {
    let mut found: Option<Vec<(&str, u64)>> = None;
    let mut pinned = false;
    for v in &g.nodes[i].inputs {
        let Some(&w) = uses.writer.get(v) else {
            continue;
        };
        let name = g.nodes[w].name.as_str();
        if !matches!(g.nodes[w].op, OpKind::Constant(_)) || !params.contains(name) {
            continue;
        }
        // A parameter several nodes read (tied, or equal ones the exporter
        // stored once under the first one's name) tells no node's scope.
        if uses.readers[*v].len() > 1 {
            continue;
        }
        let s = dotted_scopes(name);
        if s.is_empty() {
            pinned |= name.contains('.');
            continue;
        }
        match &found {
            None => found = Some(s),
            Some(f) if *f == s => {}
            Some(_) => return (Vec::new(), true),
        }
    }
    (found.unwrap_or_default(), pinned)
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
/// `params` are the initializers' names, read for nodes whose own names
/// tell no scope.
pub fn find(g: &MappedGraph, params: &HashSet<&str>) -> Vec<Outline> {
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
    // Per node, its scopes, and whether it may join its readers' layer.
    let mut free = vec![false; g.nodes.len()];
    let scopes: Vec<Vec<(&str, u64)>> = (0..g.nodes.len())
        .map(|i| match is_const(i) {
            true => Vec::new(),
            false if g.nodes[i].name.starts_with('/') => scopes_of(&g.nodes[i].name),
            false => {
                let (s, pinned) = param_scopes(g, &uses, params, i);
                free[i] = s.is_empty() && !pinned;
                s
            }
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
        for o in classes(g, &uses, join_nodes(g, &uses, layer, &taken, &free), scope) {
            for &n in o.nodes.iter().flatten() {
                taken[n] = true;
            }
            found.push(o);
        }
    }
    found
}

/// `layer` (per node, its number in the scope searched) with the nodes
/// outside every layer joined to one where the graph tells which. The
/// nodes with a number are the anchors; a `free` node (its name and
/// parameters tell no scope):
///
/// * on a path from an anchor of one layer only to an anchor of the same
///   layer is in it (a softmax between a layer's query bias and its output
///   projection's);
/// * with anchors of later layers below it starts the first of them if
///   it reads a weight (a constant with two or more axes longer than one:
///   a layer's first matmul), else, if it is below anchors of earlier
///   layers, ends the last of them (a bias, residual add or activation
///   after a layer's last parameter);
/// * that reads values of one layer (made by it, or read by it: its
///   inputs) and no weight, one at least made by the layer, ends it (the
///   last layer's residual add and activation).
///
/// Last, a free node below some anchor, or that reads a weight (a layer's
/// first matmul, above every anchor), or a node made from constants only
/// (the FP8 cast of a weight, named after the weight) joins its readers'
/// layer when they all belong to one, taken from the graph's end.
fn join_nodes(
    g: &MappedGraph,
    uses: &Uses,
    mut layer: Vec<Option<u64>>,
    taken: &[bool],
    free: &[bool],
) -> Vec<Option<u64>> {
    let is_const = |n: usize| matches!(g.nodes[n].op, OpKind::Constant(_));
    let is_output = |i: usize| g.nodes[i].outputs.iter().any(|o| uses.outputs.contains(o));
    let open = |layer: &[Option<u64>], i: usize| layer[i].is_none() && !taken[i] && !is_output(i);
    let weight = |w: usize| match &g.nodes[w].op {
        OpKind::Constant(t) => t.shape().iter().filter(|&&d| d > 1).count() >= 2,
        _ => false,
    };
    let reads_weight = |i: usize| {
        (g.nodes[i].inputs.iter()).any(|v| uses.writer.get(v).is_some_and(|&w| weight(w)))
    };
    if !free.iter().any(|&f| f) {
        return join_readers(g, uses, layer, taken, free, &[]);
    }
    let (above, below) = anchor_reach(g, uses, &layer);
    for i in 0..g.nodes.len() {
        if !free[i] || !open(&layer, i) {
            continue;
        }
        let both: Vec<u64> = above[i].intersection(&below[i]).copied().collect();
        layer[i] = match (&both[..], above[i].last(), below[i].first()) {
            ([k], _, _) => Some(*k),
            ([], Some(_), Some(&next)) if reads_weight(i) => Some(next),
            ([], Some(&prev), Some(_)) => Some(prev),
            _ => None,
        };
    }
    for i in 0..g.nodes.len() {
        if !free[i] || !open(&layer, i) || reads_weight(i) {
            continue;
        }
        // The latest layer that made one of its values and made or reads
        // each of the others.
        let values: Vec<usize> = (g.nodes[i].inputs.iter())
            .filter(|v| !uses.writer.get(v).is_some_and(|&w| is_const(w)))
            .copied()
            .collect();
        let made_by = |v: usize| uses.writer.get(&v).and_then(|&w| layer[w]);
        let in_layer = |v: usize, k: u64| {
            made_by(v) == Some(k) || uses.readers[v].iter().any(|&r| layer[r] == Some(k))
        };
        layer[i] = values
            .iter()
            .filter_map(|&v| made_by(v))
            .filter(|&k| values.iter().all(|&v| in_layer(v, k)))
            .max();
    }
    // Above every anchor only a layer's first matmul (it reads a weight)
    // joins its readers: not a stem before the layers.
    let may_join: Vec<bool> = (0..g.nodes.len())
        .map(|i| !above[i].is_empty() || reads_weight(i))
        .collect();
    join_readers(g, uses, layer, taken, free, &may_join)
}

/// `layer` with each node made from constants only, or `free` and marked
/// in `may_join`, given its readers' layer when they all belong to one,
/// taken from the graph's end.
fn join_readers(
    g: &MappedGraph,
    uses: &Uses,
    mut layer: Vec<Option<u64>>,
    taken: &[bool],
    free: &[bool],
    may_join: &[bool],
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
        let joins_free = free[i] && may_join.get(i).copied().unwrap_or(false);
        if !joins_free
            && !n
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

/// Per node, the numbers of the anchors (nodes with a number in `layer`)
/// on a path to it, and of those on a path from it, itself included.
#[allow(clippy::type_complexity)]
fn anchor_reach(
    g: &MappedGraph,
    uses: &Uses,
    layer: &[Option<u64>],
) -> (Vec<BTreeSet<u64>>, Vec<BTreeSet<u64>>) {
    let n = g.nodes.len();
    let own = |i: usize| layer[i].into_iter().collect::<BTreeSet<u64>>();
    let mut above: Vec<BTreeSet<u64>> = Vec::with_capacity(n);
    for i in 0..n {
        let mut s = own(i);
        for v in &g.nodes[i].inputs {
            if let Some(&w) = uses.writer.get(v) {
                s.extend(above[w].iter().copied());
            }
        }
        above.push(s);
    }
    let mut below: Vec<BTreeSet<u64>> = vec![BTreeSet::new(); n];
    for i in (0..n).rev() {
        let mut s = own(i);
        for &o in &g.nodes[i].outputs {
            for &r in &uses.readers[o] {
                s.extend(below[r].iter().copied());
            }
        }
        below[i] = s;
    }
    (above, below)
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
