//! Mapping an ONNX graph to a graph of `tensor`-dialect ops ([`OpKind`]).
//!
//! Every value gets a static shape and element type. Nodes whose operands
//! are all constants are folded (evaluated at import time), so the shape
//! arithmetic around `Shape` disappears. Operands that must be static
//! (reshape shapes, slice bounds, axes, ...) must be constants, or graph
//! inputs for which [`ImportOptions::static_inputs`] gives a value (the
//! mapped graph is then specialized to that value).
//!
//! The model is checked as onnxruntime checks it: each node's attributes
//! against the operator's schema at the model's opset (`schema.rs`,
//! generated from the pinned onnx package), no attribute twice, every value
//! written once, declared output element types, and an opset this importer
//! knows. An initializer with the name of a graph input is that input's
//! default value (IR version 4 on; before, it is a constant), so the input
//! stays an input.

mod importer;
mod ops;
pub mod outline;
pub mod precision;
mod schema;

use std::collections::{HashMap, HashSet};

use ipu_reference::{evaluate, OpKind, Tensor, TensorType};

use crate::error::OnnxError;
use crate::model::{data_type_name, element_type, Dim, Model, Node, ValueKind};
use importer::{Importer, NodeErr};
pub use ops::supports;
pub use precision::{WeightsPrecision, WEIGHTS_PRECISIONS};

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
    /// One per `inputs` entry: the input's default value, when an
    /// initializer of the same name gives one (IR version 4 and later: the
    /// caller may still feed the input, as onnxruntime allows).
    pub input_defaults: Vec<Option<Tensor>>,
    /// What the model declares that the import does not confirm (a graph
    /// output's declared shape), one line each, naming the value.
    pub warnings: Vec<String>,
    /// Repeated layers to emit, each class as one function called per
    /// layer ([`ImportOptions::outline_layers`]).
    pub outlines: Vec<outline::Outline>,
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
    /// The element type matmul weights are held in (`precision.rs`).
    pub weights_precision: WeightsPrecision,
    /// Emit the exporter's repeated layers as one function called per
    /// layer (`outline.rs`); off, every node is emitted inline.
    pub outline_layers: bool,
}

/// The newest default-domain opset the importer knows.
pub const MAX_OPSET: i64 = schema::MAX_OPSET;

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
    if !(1..=MAX_OPSET).contains(&opset) {
        return Err(OnnxError::Invalid(format!(
            "the model imports opset {opset} of the default domain; this importer knows opsets 1 to {} (onnx {})",
            MAX_OPSET,
            schema::ONNX_VERSION
        )));
    }
    let missing = unsupported_ops(model);
    if !missing.is_empty() {
        return Err(OnnxError::UnsupportedOps(missing));
    }
    let mut im = Importer {
        g: MappedGraph {
            opset,
            ..Default::default()
        },
        env: HashMap::new(),
        consts: HashMap::new(),
        special: HashMap::new(),
        defaulted: HashSet::new(),
        opset,
        counter: 0,
        node_start: 0,
        convs: HashMap::new(),
        zero_pads: HashMap::new(),
        readers: readers(&model.graph),
    };
    let graph = &model.graph;
    // Who writes each value, for the one-writer rule.
    let mut writer: HashMap<&str, String> = HashMap::new();
    let input_names: HashSet<&str> = graph.inputs.iter().map(|d| d.name.as_str()).collect();
    // onnxruntime lets a caller override an initializer that is also a graph
    // input from IR version 4 on (Graph::CanOverrideInitializer).
    let overridable = model.ir_version >= 4;
    let mut defaults: HashMap<&str, &Tensor> = HashMap::new();
    for (name, t) in &graph.initializers {
        if writer.insert(name, "an initializer".into()).is_some() {
            return Err(OnnxError::Invalid(format!(
                "initializer `{name}` is given more than once"
            )));
        }
        if overridable && input_names.contains(name.as_str()) {
            defaults.insert(name, t);
            continue;
        }
        let id = im.constant(t.clone(), name);
        im.env.insert(name.clone(), id);
    }
    check_input_shapes(opts, graph, &input_names)?;
    let mut declared: HashSet<&str> = HashSet::new();
    for decl in &graph.inputs {
        if !declared.insert(&decl.name) {
            return Err(OnnxError::Invalid(format!(
                "graph input `{}` is declared more than once",
                decl.name
            )));
        }
        if im.env.contains_key(&decl.name) {
            continue; // an initializer (IR < 4 lists them as inputs too)
        }
        writer.insert(&decl.name, "a graph input".into());
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
        let default = defaults.get(decl.name.as_str()).copied();
        let dtype = match (element_type(decl.data_type), default) {
            (Some(t), _) => t,
            (None, Some(d)) if decl.data_type == 0 => d.dtype(),
            _ => {
                return Err(input_err(format!(
                    "unsupported data type {} ({})",
                    data_type_name(decl.data_type),
                    decl.data_type
                )))
            }
        };
        let shape = if let Some(s) = opts.input_shapes.get(&decl.name) {
            s.clone()
        } else if let (Some(d), None) = (default, &decl.dims) {
            d.shape().to_vec()
        } else {
            let dims = decl
                .dims
                .as_ref()
                .ok_or_else(|| input_err("rank unknown; give its shape".into()))?;
            dims.iter()
                .enumerate()
                .map(|(i, d)| match d {
                    Dim::Known(n) => Ok(*n),
                    // A dimension the default value fixes.
                    _ if default.is_some_and(|t| t.rank() == dims.len()) => {
                        Ok(default.map_or(0, |t| t.shape()[i]))
                    }
                    Dim::Negative(_) => opts.default_dim.ok_or_else(|| {
                        input_err(format!(
                            "dimension {i} is {d}, which is not a size; give the input shape"
                        ))
                    }),
                    _ => opts.default_dim.ok_or_else(|| {
                        input_err(format!(
                            "dimension {i} ({d}) is not static; give the input shape"
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
        let ty = TensorType::new(shape, dtype);
        let default = match default {
            Some(t) if t.ty() == ty => Some(t.clone()),
            Some(t) if opts.input_shapes.contains_key(&decl.name) => {
                im.g.warnings.push(format!(
                    "graph input `{}`: its default value (the initializer) is {}, but the input is given as {ty}: it has no default",
                    decl.name,
                    t.ty()
                ));
                None
            }
            Some(t) => {
                return Err(input_err(format!(
                    "its initializer (the default value) is {}, but the input is declared {ty}",
                    t.ty()
                )))
            }
            None => None,
        };
        let id = im.new_value(&decl.name, ty);
        im.g.inputs.push(id);
        if default.is_some() {
            im.defaulted.insert(id);
        }
        im.g.input_defaults.push(default);
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
        let name = node_name(node, i);
        let node_err = |message: String| OnnxError::Node {
            op_type: node.op_type.clone(),
            node: name.clone(),
            opset,
            message,
        };
        for out in node.outputs.iter().filter(|o| !o.is_empty()) {
            if let Some(w) = writer.insert(out, format!("node `{name}`")) {
                return Err(node_err(format!(
                    "output `{out}` is already written by {w}; every value has one writer"
                )));
            }
        }
        if node.domain.is_empty() {
            check_attributes(node, opset).map_err(node_err)?;
        }
        im.node_start = im.g.values.len();
        im.map_node(node, &name).map_err(|e| match e {
            NodeErr::Unsupported(reason) => OnnxError::Unsupported {
                op_type: node.op_type.clone(),
                node: name.clone(),
                opset,
                reason,
            },
            NodeErr::Invalid(message) => node_err(message),
        })?;
    }
    for decl in &graph.outputs {
        let id = *im.env.get(&decl.name).ok_or_else(|| {
            OnnxError::Invalid(format!("graph output `{}` is never produced", decl.name))
        })?;
        check_output(decl, &im.g.values[id].ty, &mut im.g.warnings)?;
        im.g.outputs.push(id);
        im.g.output_names.push(decl.name.clone());
    }
    Ok(finish(im.g, opts, &graph.initializers))
}

/// The mapped graph's last steps: weights in the requested precision,
/// dead nodes removed and values renumbered, repeated layers found
/// (the `initializers`' names may tell a layer's scope).
fn finish(
    mut g: MappedGraph,
    opts: &ImportOptions,
    initializers: &[(String, Tensor)],
) -> MappedGraph {
    precision::convert_weights(&mut g, opts.weights_precision);
    eliminate_dead_nodes(&mut g);
    if opts.outline_layers {
        let params: HashSet<&str> = initializers.iter().map(|(n, _)| n.as_str()).collect();
        let outlines = outline::find(&g, &params);
        for o in &outlines {
            outline::unify_scales(&mut g, o);
        }
        g.outlines = outlines;
    }
    g
}

/// Every op type of the model (subgraphs included) the importer has no
/// mapping for at the model's opset of its domain, in order of first
/// appearance, each with its first node and its count. Found from the
/// node list alone, before any initializer is copied or node mapped.
pub fn unsupported_ops(model: &Model) -> Vec<crate::error::UnsupportedOp> {
    fn walk(
        model: &Model,
        graph: &crate::model::Graph,
        found: &mut Vec<crate::error::UnsupportedOp>,
    ) {
        for (i, node) in graph.nodes.iter().enumerate() {
            let opset = if node.domain.is_empty() {
                model.default_opset()
            } else {
                model.opsets.get(&node.domain).copied().unwrap_or(0)
            };
            if !supports(&node.domain, &node.op_type, opset) {
                let known = found
                    .iter_mut()
                    .find(|o| o.domain == node.domain && o.op_type == node.op_type);
                match known {
                    Some(o) => o.count += 1,
                    None => found.push(crate::error::UnsupportedOp {
                        domain: node.domain.clone(),
                        op_type: node.op_type.clone(),
                        opset,
                        first_node: node_name(node, i),
                        count: 1,
                    }),
                }
            }
            let mut keys: Vec<&String> = node.attributes.keys().collect();
            keys.sort_unstable();
            for k in keys {
                if let crate::model::Attribute::Graph(g) = &node.attributes[k] {
                    walk(model, g, found);
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(model, &model.graph, &mut found);
    found
}

/// How many times each value name is read: by a node (subgraphs
/// included) or as a graph output.
fn readers(graph: &crate::model::Graph) -> HashMap<String, usize> {
    fn walk(g: &crate::model::Graph, count: &mut HashMap<String, usize>) {
        for n in &g.nodes {
            for i in n.inputs.iter().filter(|i| !i.is_empty()) {
                *count.entry(i.clone()).or_default() += 1;
            }
            for a in n.attributes.values() {
                if let crate::model::Attribute::Graph(sub) = a {
                    walk(sub, count);
                }
            }
        }
        for o in &g.outputs {
            *count.entry(o.name.clone()).or_default() += 1;
        }
    }
    let mut count = HashMap::new();
    walk(graph, &mut count);
    count
}

/// A node's name in diagnostics: its own, or `{op_type}_{index}`.
fn node_name(node: &Node, index: usize) -> String {
    if node.name.is_empty() {
        format!("{}_{index}", node.op_type)
    } else {
        node.name.clone()
    }
}

/// Error unless every attribute of `node` is one its operator has at `opset`.
fn check_attributes(node: &Node, opset: i64) -> Result<(), String> {
    let Some((since, known)) = operator_attributes(&node.op_type, opset) else {
        return Ok(()); // not an ONNX operator: the mapping says so
    };
    let mut unknown: Vec<&str> = node
        .attributes
        .keys()
        .map(String::as_str)
        .filter(|a| !known.contains(a))
        .collect();
    unknown.sort_unstable();
    match unknown.first() {
        None => Ok(()),
        Some(a) => Err(format!(
            "`{a}` is not an attribute of {}-{since} (it has {})",
            node.op_type,
            if known.is_empty() {
                "none".to_string()
            } else {
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )),
    }
}

/// The version of `op_type` in force at `opset` and its attribute names
/// (the oldest version when the op is newer than the opset); `None` for an
/// op the default domain does not have. From the operator schemas of the
/// pinned onnx package (`schema.rs`).
pub fn operator_attributes(op_type: &str, opset: i64) -> Option<(i64, &'static [&'static str])> {
    let table = schema::ATTRIBUTES;
    let first = table.partition_point(|(n, _, _)| *n < op_type);
    let versions = table[first..].iter().take_while(|(n, _, _)| *n == op_type);
    let mut found = None;
    for &(_, since, attrs) in versions {
        if found.is_none() || since <= opset {
            found = Some((since, attrs));
        }
    }
    found
}

/// Error if a graph output's declared element type is not the computed
/// one; a warning (in `warnings`) if its declared shape differs.
fn check_output(
    decl: &crate::model::ValueDecl,
    ty: &TensorType,
    warnings: &mut Vec<String>,
) -> Result<(), OnnxError> {
    let err = |message: String| OnnxError::Output {
        name: decl.name.clone(),
        message,
    };
    if decl.kind != ValueKind::Tensor {
        return Ok(());
    }
    if decl.data_type != 0 && element_type(decl.data_type) != Some(ty.dtype) {
        return Err(err(format!(
            "declared element type {}, but the graph computes {} ({})",
            data_type_name(decl.data_type),
            data_type_name(crate::model::onnx_data_type(ty.dtype)),
            ty.dtype
        )));
    }
    let Some(dims) = &decl.dims else {
        return Ok(());
    };
    let agrees = dims.len() == ty.shape.len()
        && dims.iter().zip(&ty.shape).all(|(d, &n)| match d {
            Dim::Known(k) => *k == n,
            Dim::Negative(_) => false,
            Dim::Symbolic(_) | Dim::Unknown => true,
        });
    if !agrees {
        let shown: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
        warnings.push(format!(
            "graph output `{}` is declared [{}], but the graph computes {ty}",
            decl.name,
            shown.join(", ")
        ));
    }
    Ok(())
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

/// A shape given for a name the graph does not take is a typo the user
/// should hear of, not a silent no-op.
fn check_input_shapes(
    opts: &ImportOptions,
    graph: &crate::model::Graph,
    input_names: &HashSet<&str>,
) -> Result<(), OnnxError> {
    let mut unknown: Vec<&str> = opts
        .input_shapes
        .keys()
        .map(String::as_str)
        .filter(|n| !input_names.contains(n))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort_unstable();
    let mut names: Vec<&str> = graph.inputs.iter().map(|d| d.name.as_str()).collect();
    names.sort_unstable();
    Err(OnnxError::Input {
        name: unknown.join("`, `"),
        message: format!(
            "a shape is given, but the graph has no such input (its inputs: {})",
            names.join(", ")
        ),
    })
}
