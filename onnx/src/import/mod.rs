//! Mapping an ONNX graph to a graph of `tensor`-dialect ops ([`OpKind`]).
//!
//! Every value gets a static shape and element type. Nodes whose operands
//! are all constants are folded (evaluated at import time), so the shape
//! arithmetic around `Shape` disappears. Operands that must be static
//! (reshape shapes, slice bounds, axes, ...) must be constants, or graph
//! inputs for which [`ImportOptions::static_inputs`] gives a value (the
//! mapped graph is then specialized to that value).

mod composite;
mod importer;
mod ops;

use std::collections::HashMap;

use ipu_reference::{evaluate, OpKind, Tensor, TensorType};

use crate::error::OnnxError;
use crate::model::{data_type_name, element_type, Dim, Model, ValueKind};
use importer::{Importer, NodeErr};

/// Index of a value in [`MappedGraph::values`].
pub type ValueId = usize;

/// A value of the mapped graph.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueInfo {
    /// ONNX name (or a derived name for values the mapping introduced).
    pub name: String,
    pub ty: TensorType,
}

/// One op of the mapped graph.
#[derive(Clone, Debug, PartialEq)]
pub struct MappedNode {
    pub op: OpKind,
    pub inputs: Vec<ValueId>,
    pub outputs: Vec<ValueId>,
    /// Name of the ONNX node this op came from.
    pub name: String,
}

/// A lowered graph: a topologically ordered sequence of ops with every
/// value's type known. Constants (initializers, folded values) are
/// `OpKind::Constant` nodes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MappedGraph {
    pub values: Vec<ValueInfo>,
    pub inputs: Vec<ValueId>,
    pub outputs: Vec<ValueId>,
    /// The graph's output names, one per `outputs` entry (an output may be
    /// another value under a new name, e.g. an input passed through).
    pub output_names: Vec<String>,
    pub nodes: Vec<MappedNode>,
    /// Default-domain opset of the source model.
    pub opset: i64,
}

/// Import options.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Shapes for graph inputs (overrides the declared shape; required for
    /// inputs with symbolic or unknown dimensions unless `default_dim`).
    pub input_shapes: HashMap<String, Vec<usize>>,
    /// Size used for symbolic/unknown input dimensions not given above.
    pub default_dim: Option<usize>,
    /// Values of graph inputs, used only where an operand must be static.
    pub static_inputs: HashMap<String, Tensor>,
}

/// Read, decode and map an `.onnx` file.
pub fn import_file(
    path: impl AsRef<std::path::Path>,
    opts: &ImportOptions,
) -> Result<MappedGraph, OnnxError> {
    let m = crate::model::read_model(path)?;
    import_model(&m, opts)
}

/// Map a decoded model.
pub fn import_model(model: &Model, opts: &ImportOptions) -> Result<MappedGraph, OnnxError> {
    let opset = model.default_opset();
    let mut im = Importer {
        g: MappedGraph {
            opset,
            ..Default::default()
        },
        env: HashMap::new(),
        consts: HashMap::new(),
        special: HashMap::new(),
        opset,
        counter: 0,
        node_start: 0,
    };
    let graph = &model.graph;
    for (name, t) in &graph.initializers {
        let id = im.constant(t.clone(), name);
        im.env.insert(name.clone(), id);
    }
    for decl in &graph.inputs {
        if im.env.contains_key(&decl.name) {
            continue; // an initializer (IR < 4 lists them as inputs too)
        }
        let input_err = |m: String| OnnxError::Input {
            name: decl.name.clone(),
            message: m,
        };
        if !matches!(decl.kind, ValueKind::Tensor | ValueKind::Unknown) {
            return Err(OnnxError::Unsupported {
                op_type: "graph input".into(),
                node: decl.name.clone(),
                opset,
                reason: format!("{:?}-typed values are not supported", decl.kind),
            });
        }
        let dtype = element_type(decl.data_type).ok_or_else(|| {
            input_err(format!(
                "unsupported data type {} ({})",
                data_type_name(decl.data_type),
                decl.data_type
            ))
        })?;
        let shape = if let Some(s) = opts.input_shapes.get(&decl.name) {
            s.clone()
        } else {
            let dims = decl
                .dims
                .as_ref()
                .ok_or_else(|| input_err("rank unknown; give its shape".into()))?;
            dims.iter()
                .map(|d| match d {
                    Dim::Known(n) => Ok(*n),
                    _ => opts.default_dim.ok_or_else(|| {
                        input_err(format!(
                            "dimension {d:?} is not static; give the input shape"
                        ))
                    }),
                })
                .collect::<Result<Vec<_>, _>>()?
        };
        let fits = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .is_some_and(|n| n <= ipu_reference::ops::MAX_ELEMENTS);
        if !fits {
            return Err(input_err(format!("shape {shape:?} is too large")));
        }
        let id = im.new_value(&decl.name, TensorType::new(shape, dtype));
        im.g.inputs.push(id);
        im.env.insert(decl.name.clone(), id);
        if let Some(t) = opts.static_inputs.get(&decl.name) {
            if t.ty() != im.g.values[id].ty {
                return Err(input_err(format!(
                    "static value has type {}, input is {}",
                    t.ty(),
                    im.g.values[id].ty
                )));
            }
            im.special.insert(id, t.clone());
        }
    }
    for (i, node) in graph.nodes.iter().enumerate() {
        let name = if node.name.is_empty() {
            format!("{}_{i}", node.op_type)
        } else {
            node.name.clone()
        };
        im.node_start = im.g.values.len();
        im.map_node(node, &name).map_err(|e| match e {
            NodeErr::Unsupported(reason) => OnnxError::Unsupported {
                op_type: node.op_type.clone(),
                node: name.clone(),
                opset,
                reason,
            },
            NodeErr::Invalid(message) => OnnxError::Node {
                op_type: node.op_type.clone(),
                node: name.clone(),
                opset,
                message,
            },
        })?;
    }
    for decl in &graph.outputs {
        let id = *im.env.get(&decl.name).ok_or_else(|| {
            OnnxError::Invalid(format!("graph output `{}` is never produced", decl.name))
        })?;
        im.g.outputs.push(id);
        im.g.output_names.push(decl.name.clone());
    }
    let mut g = im.g;
    eliminate_dead_nodes(&mut g);
    Ok(g)
}

fn eliminate_dead_nodes(g: &mut MappedGraph) {
    let mut live = vec![false; g.values.len()];
    for &o in &g.outputs {
        live[o] = true;
    }
    let mut keep = vec![false; g.nodes.len()];
    for (i, n) in g.nodes.iter().enumerate().rev() {
        if n.outputs.iter().any(|&o| live[o]) {
            keep[i] = true;
            for &v in &n.inputs {
                live[v] = true;
            }
        }
    }
    let mut i = 0;
    g.nodes.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    // Renumber the remaining values densely: inputs, then node results.
    let mut map = vec![usize::MAX; g.values.len()];
    let mut values = Vec::new();
    let mut take = |v: usize, map: &mut Vec<usize>| {
        if map[v] == usize::MAX {
            map[v] = values.len();
            values.push(g.values[v].clone());
        }
    };
    for &v in &g.inputs {
        take(v, &mut map);
    }
    for n in &g.nodes {
        for &v in &n.outputs {
            take(v, &mut map);
        }
    }
    for &v in &g.outputs {
        take(v, &mut map);
    }
    for v in g.inputs.iter_mut().chain(g.outputs.iter_mut()) {
        *v = map[*v];
    }
    for n in &mut g.nodes {
        for v in n.inputs.iter_mut().chain(n.outputs.iter_mut()) {
            *v = map[*v];
        }
    }
    g.values = values;
}

/// A readable listing (one op per line, MLIR-like), for debugging and
/// snapshot tests. Not the `tensor` dialect's syntax.
impl std::fmt::Display for MappedGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let args: Vec<String> = self
            .inputs
            .iter()
            .map(|&i| format!("%{i}: {}", self.values[i].ty))
            .collect();
        let rets: Vec<String> = self
            .outputs
            .iter()
            .map(|&o| self.values[o].ty.to_string())
            .collect();
        writeln!(f, "graph({}) -> ({}) {{", args.join(", "), rets.join(", "))?;
        for n in &self.nodes {
            let outs: Vec<String> = n.outputs.iter().map(|o| format!("%{o}")).collect();
            let ins: Vec<String> = n.inputs.iter().map(|i| format!("%{i}")).collect();
            let attrs = n.op.attributes();
            let ty = n
                .outputs
                .first()
                .map(|&o| self.values[o].ty.to_string())
                .unwrap_or_default();
            write!(f, "  {} = {}", outs.join(", "), n.op.name())?;
            if !ins.is_empty() {
                write!(f, " {}", ins.join(", "))?;
            }
            if !attrs.is_empty() {
                write!(f, " {attrs}")?;
            }
            writeln!(f, " : {ty}  // {}", n.name)?;
        }
        let outs: Vec<String> = self.outputs.iter().map(|o| format!("%{o}")).collect();
        writeln!(f, "  return {}", outs.join(", "))?;
        write!(f, "}}")
    }
}

impl MappedGraph {
    /// Number of `Constant` nodes and total constant elements.
    pub fn constant_stats(&self) -> (usize, usize) {
        self.nodes
            .iter()
            .filter_map(|n| match &n.op {
                OpKind::Constant(t) => Some(t.numel()),
                _ => None,
            })
            .fold((0, 0), |(c, e), n| (c + 1, e + n))
    }

    /// Execute the graph with the reference evaluator.
    pub fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>, OnnxError> {
        self.run_with(inputs, |_, _| {})
    }

    /// [`MappedGraph::run`], calling `on_node` after each evaluated node
    /// with the time it took (for profiles).
    pub fn run_with(
        &self,
        inputs: &[Tensor],
        mut on_node: impl FnMut(&MappedNode, std::time::Duration),
    ) -> Result<Vec<Tensor>, OnnxError> {
        if inputs.len() != self.inputs.len() {
            return Err(OnnxError::Invalid(format!(
                "graph has {} inputs, {} given",
                self.inputs.len(),
                inputs.len()
            )));
        }
        enum Slot<'a> {
            Empty,
            Borrowed(&'a Tensor),
            Owned(Tensor),
        }
        let mut slots: Vec<Slot> = (0..self.values.len()).map(|_| Slot::Empty).collect();
        for (&id, t) in self.inputs.iter().zip(inputs) {
            let want = &self.values[id].ty;
            if &t.ty() != want {
                return Err(OnnxError::Input {
                    name: self.values[id].name.clone(),
                    message: format!("expected {want}, got {}", t.ty()),
                });
            }
            slots[id] = Slot::Borrowed(t);
        }
        let mut last_use = vec![usize::MAX; self.values.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            for &v in &n.inputs {
                last_use[v] = i;
            }
        }
        for &o in &self.outputs {
            last_use[o] = usize::MAX;
        }
        for (i, n) in self.nodes.iter().enumerate() {
            let out = match &n.op {
                OpKind::Constant(t) => Slot::Borrowed(t),
                op => {
                    let mut args = Vec::with_capacity(n.inputs.len());
                    for &v in &n.inputs {
                        match &slots[v] {
                            Slot::Borrowed(t) => args.push(*t),
                            Slot::Owned(t) => args.push(t),
                            Slot::Empty => {
                                return Err(OnnxError::Invalid(format!(
                                    "node `{}` reads `{}` before it is computed",
                                    n.name, self.values[v].name
                                )))
                            }
                        }
                    }
                    let start = std::time::Instant::now();
                    let t = evaluate(op, &args).map_err(|source| OnnxError::Eval {
                        node: n.name.clone(),
                        source,
                    })?;
                    on_node(n, start.elapsed());
                    Slot::Owned(t)
                }
            };
            if let Some(&o) = n.outputs.first() {
                slots[o] = out;
            }
            for &v in &n.inputs {
                if last_use[v] == i {
                    slots[v] = Slot::Empty;
                }
            }
        }
        let mut results = Vec::with_capacity(self.outputs.len());
        for (i, &o) in self.outputs.iter().enumerate() {
            // A value listed again later is cloned, the last use is moved.
            let again = self.outputs[i + 1..].contains(&o);
            let slot = if again {
                match &slots[o] {
                    Slot::Borrowed(t) => Slot::Borrowed(t),
                    Slot::Owned(t) => Slot::Owned(t.clone()),
                    Slot::Empty => Slot::Empty,
                }
            } else {
                std::mem::replace(&mut slots[o], Slot::Empty)
            };
            let t = match slot {
                Slot::Owned(t) => t,
                Slot::Borrowed(t) => t.clone(),
                Slot::Empty => {
                    return Err(OnnxError::Invalid(format!(
                        "output `{}` was not computed",
                        self.values[o].name
                    )))
                }
            };
            results.push(t);
        }
        Ok(results)
    }
}
