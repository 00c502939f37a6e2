//! Mapping an ONNX graph to a graph of `tensor`-dialect ops ([`OpKind`]).
//!
//! Every value gets a static shape and element type. Nodes whose operands
//! are all constants are folded (evaluated at import time), so the shape
//! arithmetic around `Shape` disappears. Operands that must be static
//! (reshape shapes, slice bounds, axes, ...) must be constants, or graph
//! inputs for which [`ImportOptions::static_inputs`] gives a value (the
//! mapped graph is then specialized to that value).

use std::collections::HashMap;

use ipu_reference::{
    broadcast_shapes, evaluate, infer_type, normalize_slice, ElementType, EvalError,
    GeluApproximation, OpKind, PadMode, ReduceKind, Tensor, TensorType,
};

use crate::error::OnnxError;
use crate::model::{data_type_name, element_type, Attribute, Dim, Model, Node, ValueKind};

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

enum NodeErr {
    Unsupported(String),
    Invalid(String),
}

impl From<EvalError> for NodeErr {
    fn from(e: EvalError) -> Self {
        NodeErr::Invalid(e.to_string())
    }
}

type NResult<T> = Result<T, NodeErr>;

fn invalid<T>(m: impl Into<String>) -> NResult<T> {
    Err(NodeErr::Invalid(m.into()))
}

fn unsupported<T>(m: impl Into<String>) -> NResult<T> {
    Err(NodeErr::Unsupported(m.into()))
}

fn attr<'a>(n: &'a Node, name: &str) -> Option<&'a Attribute> {
    n.attributes.get(name)
}

fn attr_i(n: &Node, name: &str, default: i64) -> NResult<i64> {
    match attr(n, name) {
        None => Ok(default),
        Some(Attribute::Int(v)) => Ok(*v),
        Some(a) => invalid(format!("attribute `{name}` should be an int, got {a:?}")),
    }
}

fn attr_f(n: &Node, name: &str, default: f32) -> NResult<f32> {
    match attr(n, name) {
        None => Ok(default),
        Some(Attribute::Float(v)) => Ok(*v),
        Some(Attribute::Int(v)) => Ok(*v as f32),
        Some(a) => invalid(format!("attribute `{name}` should be a float, got {a:?}")),
    }
}

fn attr_ints(n: &Node, name: &str) -> NResult<Option<Vec<i64>>> {
    match attr(n, name) {
        None => Ok(None),
        Some(Attribute::Ints(v)) => Ok(Some(v.clone())),
        Some(Attribute::Int(v)) => Ok(Some(vec![*v])),
        Some(a) => invalid(format!("attribute `{name}` should be ints, got {a:?}")),
    }
}

fn attr_s(n: &Node, name: &str) -> NResult<Option<String>> {
    match attr(n, name) {
        None => Ok(None),
        Some(Attribute::String(v)) => Ok(Some(String::from_utf8_lossy(v).into_owned())),
        Some(a) => invalid(format!("attribute `{name}` should be a string, got {a:?}")),
    }
}

fn norm_axis(a: i64, rank: usize) -> NResult<usize> {
    let r = rank as i64;
    let v = if a < 0 { a + r } else { a };
    if v < 0 || v >= r {
        return invalid(format!("axis {a} out of range for rank {rank}"));
    }
    Ok(v as usize)
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
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

struct Importer {
    g: MappedGraph,
    env: HashMap<String, ValueId>,
    consts: HashMap<ValueId, Tensor>,
    special: HashMap<ValueId, Tensor>,
    opset: i64,
    counter: usize,
    /// First value id created by the node being mapped.
    node_start: ValueId,
}

impl Importer {
    fn new_value(&mut self, name: &str, ty: TensorType) -> ValueId {
        self.g.values.push(ValueInfo {
            name: name.to_string(),
            ty,
        });
        self.g.values.len() - 1
    }

    fn fresh_name(&mut self, base: &str) -> String {
        self.counter += 1;
        format!("{base}.{}", self.counter)
    }

    fn ty(&self, id: ValueId) -> &TensorType {
        &self.g.values[id].ty
    }

    fn constant(&mut self, t: Tensor, name: &str) -> ValueId {
        let id = self.new_value(name, t.ty());
        self.g.nodes.push(MappedNode {
            op: OpKind::Constant(t.clone()),
            inputs: vec![],
            outputs: vec![id],
            name: name.to_string(),
        });
        self.consts.insert(id, t);
        id
    }

    /// Emit `op`, folding it if every operand is constant.
    fn op(&mut self, op: OpKind, inputs: &[ValueId], name: &str) -> NResult<ValueId> {
        let types: Vec<TensorType> = inputs.iter().map(|&i| self.ty(i).clone()).collect();
        let ty = infer_type(&op, &types)?;
        let vname = self.fresh_name(name);
        if !inputs.is_empty() && inputs.iter().all(|i| self.consts.contains_key(i)) {
            let args: Vec<&Tensor> = inputs.iter().map(|i| &self.consts[i]).collect();
            let t = evaluate(&op, &args)?;
            return Ok(self.constant(t, &vname));
        }
        let id = self.new_value(&vname, ty);
        self.g.nodes.push(MappedNode {
            op,
            inputs: inputs.to_vec(),
            outputs: vec![id],
            name: name.to_string(),
        });
        Ok(id)
    }

    fn scalar(&mut self, v: f32, ty: ElementType, name: &str) -> NResult<ValueId> {
        let t = if ty.is_float() {
            Tensor::from_f32(vec![], ty, vec![v])?
        } else {
            Tensor::from_i64(vec![], ty, vec![v as i64])?
        };
        let n = self.fresh_name(name);
        Ok(self.constant(t, &n))
    }

    fn cast(&mut self, id: ValueId, to: ElementType, name: &str) -> NResult<ValueId> {
        if self.ty(id).dtype == to {
            return Ok(id);
        }
        self.op(
            OpKind::Cast {
                to,
                saturate: true,
                scale: 0,
            },
            &[id],
            name,
        )
    }

    fn input(&self, n: &Node, i: usize) -> NResult<Option<ValueId>> {
        match n.inputs.get(i) {
            None => Ok(None),
            Some(s) if s.is_empty() => Ok(None),
            Some(s) => match self.env.get(s) {
                Some(&id) => Ok(Some(id)),
                None => invalid(format!("input `{s}` is not defined before use")),
            },
        }
    }

    fn req(&self, n: &Node, i: usize) -> NResult<ValueId> {
        self.input(n, i)?
            .map_or_else(|| invalid(format!("missing required input {i}")), Ok)
    }

    fn static_tensor(&self, id: ValueId) -> NResult<&Tensor> {
        match self.consts.get(&id).or_else(|| self.special.get(&id)) {
            Some(t) => Ok(t),
            None => unsupported(format!(
                "operand `{}` must be a constant (dynamic shapes/axes are not supported)",
                self.g.values[id].name
            )),
        }
    }

    fn static_ints(&self, id: ValueId) -> NResult<Vec<i64>> {
        let t = self.static_tensor(id)?;
        if t.dtype().is_float() {
            return invalid(format!(
                "operand `{}` must be integers",
                self.g.values[id].name
            ));
        }
        Ok(t.to_i64_vec())
    }

    fn bind(&mut self, n: &Node, outs: &[Option<ValueId>]) -> NResult<()> {
        for (i, name) in n.outputs.iter().enumerate() {
            if name.is_empty() {
                continue;
            }
            match outs.get(i).copied().flatten() {
                Some(id) => {
                    // Values this node created take the ONNX output name.
                    if id >= self.node_start {
                        self.g.values[id].name = name.clone();
                    }
                    self.env.insert(name.clone(), id);
                }
                None => return unsupported(format!("output {i} (`{name}`) is not produced")),
            }
        }
        Ok(())
    }

    fn wants_output(n: &Node, i: usize) -> bool {
        n.outputs.get(i).is_some_and(|s| !s.is_empty())
    }

    fn binary_fold(&mut self, op: OpKind, n: &Node, name: &str) -> NResult<ValueId> {
        if n.inputs.is_empty() {
            return invalid("needs at least one input");
        }
        let mut acc = self.req(n, 0)?;
        for i in 1..n.inputs.len() {
            let b = self.req(n, i)?;
            acc = self.op(op.clone(), &[acc, b], name)?;
        }
        Ok(acc)
    }

    fn reduce_axes(&self, n: &Node, from_input: bool) -> NResult<Option<Vec<i64>>> {
        if from_input {
            match self.input(n, 1)? {
                Some(id) => Ok(Some(self.static_ints(id)?)),
                None => Ok(None),
            }
        } else {
            attr_ints(n, "axes")
        }
    }

    fn reduce(
        &mut self,
        x: ValueId,
        kind: ReduceKind,
        axes: Option<Vec<i64>>,
        keepdims: bool,
        noop_empty: bool,
        name: &str,
    ) -> NResult<ValueId> {
        let rank = self.ty(x).shape.len();
        let axes: Vec<usize> = match axes {
            Some(a) if !a.is_empty() => {
                let mut v = a
                    .iter()
                    .map(|&a| norm_axis(a, rank))
                    .collect::<NResult<Vec<_>>>()?;
                v.sort_unstable();
                v.dedup();
                v
            }
            _ if noop_empty => return Ok(x),
            _ => (0..rank).collect(),
        };
        self.op(
            OpKind::Reduce {
                kind,
                axes,
                keepdims,
            },
            &[x],
            name,
        )
    }

    fn reshape(&mut self, x: ValueId, shape: Vec<usize>, name: &str) -> NResult<ValueId> {
        if self.ty(x).shape == shape {
            return Ok(x);
        }
        self.op(OpKind::Reshape { shape }, &[x], name)
    }

    /// Elementwise activations composed from dialect ops.
    fn activation(
        &mut self,
        n: &Node,
        x: ValueId,
        dt: ElementType,
        name: &str,
    ) -> NResult<ValueId> {
        let zero = self.scalar(0.0, dt, name)?;
        let one_ = self.scalar(1.0, dt, name)?;
        let y = match n.op_type.as_str() {
            "LeakyRelu" | "PRelu" => {
                let slope = if n.op_type == "PRelu" {
                    self.req(n, 1)?
                } else {
                    self.scalar(attr_f(n, "alpha", 0.01)?, dt, name)?
                };
                let neg = self.op(OpKind::Less, &[x, zero], name)?;
                let sx = self.op(OpKind::Mul, &[x, slope], name)?;
                self.op(OpKind::Select, &[neg, sx, x], name)?
            }
            "Elu" | "Selu" | "Celu" => {
                let (alpha, gamma) = match n.op_type.as_str() {
                    "Elu" => (attr_f(n, "alpha", 1.0)?, 1.0),
                    "Celu" => (attr_f(n, "alpha", 1.0)?, 1.0),
                    _ => (
                        attr_f(n, "alpha", 1.673_263_2)?,
                        attr_f(n, "gamma", 1.050_701)?,
                    ),
                };
                let a = self.scalar(alpha, dt, name)?;
                let arg = if n.op_type == "Celu" {
                    self.op(OpKind::Div, &[x, a], name)?
                } else {
                    x
                };
                let e = self.op(OpKind::Exp, &[arg], name)?;
                let em1 = self.op(OpKind::Sub, &[e, one_], name)?;
                let neg_branch = self.op(OpKind::Mul, &[em1, a], name)?;
                let pos = self.op(OpKind::Greater, &[x, zero], name)?;
                let y = self.op(OpKind::Select, &[pos, x, neg_branch], name)?;
                if gamma != 1.0 {
                    let g = self.scalar(gamma, dt, name)?;
                    self.op(OpKind::Mul, &[y, g], name)?
                } else {
                    y
                }
            }
            "ThresholdedRelu" => {
                let a = self.scalar(attr_f(n, "alpha", 1.0)?, dt, name)?;
                let gt = self.op(OpKind::Greater, &[x, a], name)?;
                self.op(OpKind::Select, &[gt, x, zero], name)?
            }
            "HardSigmoid" | "HardSwish" => {
                let (al, be) = if n.op_type == "HardSwish" {
                    (1.0 / 6.0, 0.5)
                } else {
                    (attr_f(n, "alpha", 0.2)?, attr_f(n, "beta", 0.5)?)
                };
                let a = self.scalar(al, dt, name)?;
                let b = self.scalar(be, dt, name)?;
                let ax = self.op(OpKind::Mul, &[x, a], name)?;
                let axb = self.op(OpKind::Add, &[ax, b], name)?;
                let lo = self.op(OpKind::Max, &[axb, zero], name)?;
                let hs = self.op(OpKind::Min, &[lo, one_], name)?;
                if n.op_type == "HardSwish" {
                    self.op(OpKind::Mul, &[x, hs], name)?
                } else {
                    hs
                }
            }
            "Softplus" | "Mish" => {
                let e = self.op(OpKind::Exp, &[x], name)?;
                let e1 = self.op(OpKind::Add, &[e, one_], name)?;
                let sp = self.op(OpKind::Log, &[e1], name)?;
                if n.op_type == "Mish" {
                    let t = self.op(OpKind::Tanh, &[sp], name)?;
                    self.op(OpKind::Mul, &[x, t], name)?
                } else {
                    sp
                }
            }
            "Softsign" => {
                let a = self.op(OpKind::Abs, &[x], name)?;
                let a1 = self.op(OpKind::Add, &[a, one_], name)?;
                self.op(OpKind::Div, &[x, a1], name)?
            }
            "Sign" => {
                let m1 = self.scalar(-1.0, dt, name)?;
                let gt = self.op(OpKind::Greater, &[x, zero], name)?;
                let lt = self.op(OpKind::Less, &[x, zero], name)?;
                // Zero (and NaN) pass through unchanged.
                let inner = self.op(OpKind::Select, &[lt, m1, x], name)?;
                self.op(OpKind::Select, &[gt, one_, inner], name)?
            }
            "IsNaN" => {
                let eq = self.op(OpKind::Equal, &[x, x], name)?;
                self.op(OpKind::Not, &[eq], name)?
            }
            "IsInf" => {
                let pos = attr_i(n, "detect_positive", 1)? != 0;
                let neg = attr_i(n, "detect_negative", 1)? != 0;
                let pinf = self.scalar(f32::INFINITY, dt, name)?;
                let ninf = self.scalar(f32::NEG_INFINITY, dt, name)?;
                let p = self.op(OpKind::Equal, &[x, pinf], name)?;
                let q = self.op(OpKind::Equal, &[x, ninf], name)?;
                match (pos, neg) {
                    (true, true) => self.op(OpKind::Or, &[p, q], name)?,
                    (true, false) => p,
                    (false, true) => q,
                    (false, false) => {
                        let f = self.op(OpKind::Equal, &[x, x], name)?;
                        let t = self.op(OpKind::Not, &[f], name)?;
                        self.op(OpKind::And, &[f, t], name)?
                    }
                }
            }
            other => return unsupported(format!("no mapping for {other}")),
        };
        Ok(y)
    }

    /// A quantization parameter (scale or zero point) shaped to broadcast
    /// against `xshape`: scalar, per-axis (1-D along `axis`), or blocked
    /// (`block_size` > 0: repeated along `axis`).
    fn qparam(
        &mut self,
        p: ValueId,
        xshape: &[usize],
        axis: Option<usize>,
        block: i64,
        name: &str,
    ) -> NResult<ValueId> {
        let pshape = self.ty(p).shape.clone();
        let Some(axis) = axis else {
            return self.reshape(p, vec![], name);
        };
        if block > 0 {
            let dim = xshape[axis];
            if pshape.len() != xshape.len() {
                return invalid("blocked scale must have the rank of the input");
            }
            let idx: Vec<i64> = (0..dim as i64).map(|j| j / block).collect();
            if idx.last().is_some_and(|&l| l as usize >= pshape[axis]) {
                return invalid("blocked scale is too short for the input");
            }
            let t = Tensor::from_i64(vec![dim], ElementType::I64, idx)?;
            let iname = self.fresh_name(name);
            let ids = self.constant(t, &iname);
            return self.op(OpKind::Gather { axis }, &[p, ids], name);
        }
        let c: usize = pshape.iter().product();
        if c != xshape[axis] {
            return invalid(format!(
                "per-axis parameter has {c} values, axis {axis} has {}",
                xshape[axis]
            ));
        }
        let mut shape = vec![1usize; xshape.len() - axis];
        shape[0] = c;
        self.reshape(p, shape, name)
    }

    /// Constant i64 tensor holding each position's index along `axis`,
    /// shaped `[1, .., shape[axis], .., 1]`.
    fn iota(&mut self, shape: &[usize], axis: usize, name: &str) -> NResult<ValueId> {
        let mut s = vec![1usize; shape.len()];
        s[axis] = shape[axis];
        let t = Tensor::from_i64(s, ElementType::I64, (0..shape[axis] as i64).collect())?;
        let n = self.fresh_name(name);
        Ok(self.constant(t, &n))
    }

    /// ONNX `Attention` (opset 23/24) composed from dialect ops, following
    /// the operator's function body: optional KV-cache concat, GQA head
    /// repetition, sqrt(scale) on Q and K, softcap, mask/causal bias,
    /// softmax (in `softmax_precision`), and the optional QK output.
    fn attention(&mut self, n: &Node, name: &str) -> NResult<()> {
        let (q, k, v) = (self.req(n, 0)?, self.req(n, 1)?, self.req(n, 2)?);
        let mask = self.input(n, 3)?;
        let (past_k, past_v) = (self.input(n, 4)?, self.input(n, 5)?);
        let nonpad = self.input(n, 6)?;
        let dt = self.ty(q).dtype;
        let rank = self.ty(q).shape.len();
        let to_heads = |s: &mut Self, x: ValueId, heads: i64| -> NResult<ValueId> {
            let sh = s.ty(x).shape.clone();
            if heads <= 0 || sh[2] % heads as usize != 0 {
                return invalid(
                    "3-D inputs need q_num_heads/kv_num_heads dividing the hidden size",
                );
            }
            let h = heads as usize;
            let r = s.reshape(x, vec![sh[0], sh[1], h, sh[2] / h], name)?;
            s.op(
                OpKind::Transpose {
                    perm: vec![0, 2, 1, 3],
                },
                &[r],
                name,
            )
        };
        let (q4, k4, v4) = match rank {
            4 => (q, k, v),
            3 => {
                let qh = attr_i(n, "q_num_heads", 0)?;
                let kvh = attr_i(n, "kv_num_heads", 0)?;
                (
                    to_heads(self, q, qh)?,
                    to_heads(self, k, kvh)?,
                    to_heads(self, v, kvh)?,
                )
            }
            _ => return invalid("Q must be 3-D or 4-D"),
        };
        let pk = match past_k {
            Some(p) => self.op(OpKind::Concat { axis: 2 }, &[p, k4], name)?,
            None => k4,
        };
        let pv = match past_v {
            Some(p) => self.op(OpKind::Concat { axis: 2 }, &[p, v4], name)?,
            None => v4,
        };
        let past_len = past_k.map_or(0, |p| self.ty(p).shape[2]);
        let qs = self.ty(q4).shape.clone();
        let ks = self.ty(pk).shape.clone();
        let vs = self.ty(pv).shape.clone();
        let (b, qh, sq, hd) = (qs[0], qs[1], qs[2], qs[3]);
        let (kvh, total) = (ks[1], ks[2]);
        if kvh == 0 || qh % kvh != 0 {
            return invalid(format!(
                "{qh} query heads are not a multiple of {kvh} kv heads"
            ));
        }
        let g = qh / kvh;
        let expand = |s: &mut Self, x: ValueId, d: usize| -> NResult<ValueId> {
            if g == 1 {
                return Ok(x);
            }
            let r = s.reshape(x, vec![b, kvh, 1, total, d], name)?;
            let e = s.op(
                OpKind::Broadcast {
                    shape: vec![b, kvh, g, total, d],
                },
                &[r],
                name,
            )?;
            s.reshape(e, vec![b, qh, total, d], name)
        };
        let ke = expand(self, pk, ks[3])?;
        let ve = expand(self, pv, vs[3])?;
        let scale = match attr(n, "scale") {
            Some(_) => attr_f(n, "scale", 1.0)?,
            None => 1.0 / (hd as f32).sqrt(),
        };
        let sqs = self.scalar(scale.sqrt(), dt, name)?;
        let kt = self.op(
            OpKind::Transpose {
                perm: vec![0, 1, 3, 2],
            },
            &[ke],
            name,
        )?;
        let qsc = self.op(OpKind::Mul, &[q4, sqs], name)?;
        let ksc = self.op(OpKind::Mul, &[kt, sqs], name)?;
        let mut qk = self.op(OpKind::MatMul, &[qsc, ksc], name)?;
        let mut stages = vec![qk];
        let softcap = attr_f(n, "softcap", 0.0)?;
        if softcap > 0.0 {
            let c = self.scalar(softcap, dt, name)?;
            let d = self.op(OpKind::Div, &[qk, c], name)?;
            let t = self.op(OpKind::Tanh, &[d], name)?;
            qk = self.op(OpKind::Mul, &[t, c], name)?;
        }
        stages.push(qk);
        let ninf = self.scalar(f32::NEG_INFINITY, dt, name)?;
        let zero = self.scalar(0.0, dt, name)?;
        let mut bias: Option<ValueId> = None;
        if let Some(m) = mask {
            let mut mb = if self.ty(m).dtype == ElementType::I1 {
                self.op(OpKind::Select, &[m, zero, ninf], name)?
            } else {
                self.cast(m, dt, name)?
            };
            let msh = self.ty(mb).shape.clone();
            let last = msh.last().copied().unwrap_or(total);
            if last < total {
                let r = msh.len();
                let mut high = vec![0i64; r];
                high[r - 1] = (total - last) as i64;
                mb = self.op(
                    OpKind::Pad {
                        low: vec![0; r],
                        high,
                        mode: PadMode::Constant,
                        value: f64::NEG_INFINITY,
                    },
                    &[mb],
                    name,
                )?;
            }
            bias = Some(mb);
        }
        let mut add_bias = |s: &mut Self, t: Tensor| -> NResult<()> {
            let cn = s.fresh_name(name);
            let c = s.constant(t, &cn);
            let c = s.cast(c, dt, name)?;
            bias = Some(match bias {
                Some(b0) => s.op(OpKind::Add, &[b0, c], name)?,
                None => c,
            });
            Ok(())
        };
        if attr_i(n, "is_causal", 0)? != 0 {
            let tri: Vec<f32> = (0..sq * total)
                .map(|e| {
                    if e % total > e / total + past_len {
                        f32::NEG_INFINITY
                    } else {
                        0.0
                    }
                })
                .collect();
            add_bias(
                self,
                Tensor::from_f32(vec![sq, total], ElementType::F32, tri)?,
            )?;
        }
        if let Some(np) = nonpad {
            let lens = self.static_ints(np)?;
            if lens.len() != b {
                return invalid("nonpad_kv_seqlen must have batch_size entries");
            }
            let m: Vec<f32> = (0..b * total)
                .map(|e| {
                    if (e % total) as i64 >= lens[e / total] {
                        f32::NEG_INFINITY
                    } else {
                        0.0
                    }
                })
                .collect();
            add_bias(
                self,
                Tensor::from_f32(vec![b, 1, 1, total], ElementType::F32, m)?,
            )?;
        }
        if let Some(bv) = bias {
            qk = self.op(OpKind::Add, &[qk, bv], name)?;
        }
        stages.push(qk);
        let sm_ty = match attr_i(n, "softmax_precision", 0)? as i32 {
            0 => dt,
            t => element_type(t).unwrap_or(dt),
        };
        let qc = self.cast(qk, sm_ty, name)?;
        let p = self.op(OpKind::Softmax { axis: 3 }, &[qc], name)?;
        let p = self.cast(p, dt, name)?;
        stages.push(p);
        let mut y = self.op(OpKind::MatMul, &[p, ve], name)?;
        if rank == 3 {
            let t = self.op(
                OpKind::Transpose {
                    perm: vec![0, 2, 1, 3],
                },
                &[y],
                name,
            )?;
            y = self.reshape(t, vec![b, sq, qh * vs[3]], name)?;
        }
        let mode = attr_i(n, "qk_matmul_output_mode", 0)?;
        let qk_out = match stages.get(mode as usize) {
            Some(&v) => v,
            None => return invalid(format!("qk_matmul_output_mode {mode}")),
        };
        self.bind(n, &[Some(y), Some(pk), Some(pv), Some(qk_out)])
    }

    /// ONNX `RotaryEmbedding` (opset 23) composed from dialect ops.
    fn rotary(&mut self, n: &Node, name: &str) -> NResult<()> {
        let x = self.req(n, 0)?;
        let (cos, sin) = (self.req(n, 1)?, self.req(n, 2)?);
        let pos = self.input(n, 3)?;
        let xs = self.ty(x).shape.clone();
        let x4 = match xs.len() {
            4 => self.op(
                OpKind::Transpose {
                    perm: vec![0, 2, 1, 3],
                },
                &[x],
                name,
            )?,
            3 => {
                let h = attr_i(n, "num_heads", 0)?;
                if h <= 0 || xs[2] % h as usize != 0 {
                    return invalid("3-D input needs num_heads dividing the hidden size");
                }
                let h = h as usize;
                self.reshape(x, vec![xs[0], xs[1], h, xs[2] / h], name)?
            }
            _ => return invalid("input must be 3-D or 4-D"),
        };
        let s4 = self.ty(x4).shape.clone();
        let hd = s4[3];
        let rot = match attr_i(n, "rotary_embedding_dim", 0)? {
            0 => hd,
            r if r > 0 && (r as usize) <= hd && r % 2 == 0 => r as usize,
            r => return invalid(format!("rotary_embedding_dim {r}")),
        };
        let half = rot / 2;
        let (mut c, mut si) = (cos, sin);
        if let Some(p) = pos {
            c = self.op(OpKind::Gather { axis: 0 }, &[c, p], name)?;
            si = self.op(OpKind::Gather { axis: 0 }, &[si, p], name)?;
        }
        for v in [&mut c, &mut si] {
            let sh = self.ty(*v).shape.clone();
            if sh.len() != 3 || sh[2] != half {
                return invalid(format!("cos/sin cache shape {sh:?} does not match {half}"));
            }
            *v = self.reshape(*v, vec![sh[0], sh[1], 1, half], name)?;
        }
        let slice = |s: &mut Self, v: ValueId, start: usize, end: usize, step: usize| {
            let sh = s.ty(v).shape.clone();
            let r = sh.len();
            let mut starts = vec![0i64; r];
            let mut ends: Vec<i64> = sh.iter().map(|&d| d as i64).collect();
            let mut steps = vec![1i64; r];
            starts[r - 1] = start as i64;
            ends[r - 1] = end as i64;
            steps[r - 1] = step as i64;
            s.op(
                OpKind::Slice {
                    starts,
                    ends,
                    steps,
                },
                &[v],
                name,
            )
        };
        let xr = slice(self, x4, 0, rot, 1)?;
        let interleaved = attr_i(n, "interleaved", 0)? != 0;
        let (x1, x2) = if interleaved {
            (slice(self, xr, 0, rot, 2)?, slice(self, xr, 1, rot, 2)?)
        } else {
            (slice(self, xr, 0, half, 1)?, slice(self, xr, half, rot, 1)?)
        };
        let cx1 = self.op(OpKind::Mul, &[c, x1], name)?;
        let sx2 = self.op(OpKind::Mul, &[si, x2], name)?;
        let sx1 = self.op(OpKind::Mul, &[si, x1], name)?;
        let cx2 = self.op(OpKind::Mul, &[c, x2], name)?;
        let real = self.op(OpKind::Sub, &[cx1, sx2], name)?;
        let imag = self.op(OpKind::Add, &[sx1, cx2], name)?;
        let rotated = if interleaved {
            let mut e = s4.clone();
            e[3] = half;
            e.push(1);
            let re = self.reshape(real, e.clone(), name)?;
            let im = self.reshape(imag, e, name)?;
            let cat = self.op(OpKind::Concat { axis: 4 }, &[re, im], name)?;
            let mut back = s4.clone();
            back[3] = rot;
            self.reshape(cat, back, name)?
        } else {
            self.op(OpKind::Concat { axis: 3 }, &[real, imag], name)?
        };
        let out4 = if rot < hd {
            let pass = slice(self, x4, rot, hd, 1)?;
            self.op(OpKind::Concat { axis: 3 }, &[rotated, pass], name)?
        } else {
            rotated
        };
        let y = if xs.len() == 4 {
            self.op(
                OpKind::Transpose {
                    perm: vec![0, 2, 1, 3],
                },
                &[out4],
                name,
            )?
        } else {
            self.reshape(out4, xs, name)?
        };
        self.bind(n, &[Some(y)])
    }

    fn map_node(&mut self, n: &Node, name: &str) -> NResult<()> {
        if !n.domain.is_empty() {
            return unsupported(format!("domain `{}` is not supported", n.domain));
        }
        let opset = self.opset;
        let one = |s: &mut Self, op: OpKind| -> NResult<()> {
            let x = s.req(n, 0)?;
            let y = s.op(op, &[x], name)?;
            s.bind(n, &[Some(y)])
        };
        let two = |s: &mut Self, op: OpKind| -> NResult<()> {
            let a = s.req(n, 0)?;
            let b = s.req(n, 1)?;
            let y = s.op(op, &[a, b], name)?;
            s.bind(n, &[Some(y)])
        };
        match n.op_type.as_str() {
            "Identity" => {
                let x = self.req(n, 0)?;
                self.bind(n, &[Some(x)])
            }
            "Constant" => {
                let t = if let Some(Attribute::Tensor(t)) = attr(n, "value") {
                    t.clone()
                } else if let Some(Attribute::Float(v)) = attr(n, "value_float") {
                    Tensor::scalar_f32(*v)
                } else if let Some(Attribute::Floats(v)) = attr(n, "value_floats") {
                    Tensor::from_f32(vec![v.len()], ElementType::F32, v.clone())?
                } else if let Some(Attribute::Int(v)) = attr(n, "value_int") {
                    Tensor::scalar_i64(*v)
                } else if let Some(Attribute::Ints(v)) = attr(n, "value_ints") {
                    Tensor::from_i64(vec![v.len()], ElementType::I64, v.clone())?
                } else {
                    let kinds: Vec<&String> = n.attributes.keys().collect();
                    return unsupported(format!("Constant with attributes {kinds:?}"));
                };
                let id = self.constant(t, name);
                self.bind(n, &[Some(id)])
            }
            "MatMul" => two(self, OpKind::MatMul),
            "Add" => two(self, OpKind::Add),
            "Sub" => two(self, OpKind::Sub),
            "Mul" => two(self, OpKind::Mul),
            "Div" => two(self, OpKind::Div),
            "Pow" => two(self, OpKind::Pow),
            "Equal" => two(self, OpKind::Equal),
            "Less" => two(self, OpKind::Less),
            "Greater" => two(self, OpKind::Greater),
            "And" => two(self, OpKind::And),
            "Or" => two(self, OpKind::Or),
            "LessOrEqual" | "GreaterOrEqual" => {
                let (a, b) = (self.req(n, 0)?, self.req(n, 1)?);
                let strict = if n.op_type == "LessOrEqual" {
                    OpKind::Less
                } else {
                    OpKind::Greater
                };
                let s = self.op(strict, &[a, b], name)?;
                let e = self.op(OpKind::Equal, &[a, b], name)?;
                let y = self.op(OpKind::Or, &[s, e], name)?;
                self.bind(n, &[Some(y)])
            }
            "Xor" => {
                let (a, b) = (self.req(n, 0)?, self.req(n, 1)?);
                let e = self.op(OpKind::Equal, &[a, b], name)?;
                let y = self.op(OpKind::Not, &[e], name)?;
                self.bind(n, &[Some(y)])
            }
            "Max" | "Min" | "Sum" | "Mean" => {
                let op = match n.op_type.as_str() {
                    "Max" => OpKind::Max,
                    "Min" => OpKind::Min,
                    _ => OpKind::Add,
                };
                let mut y = self.binary_fold(op, n, name)?;
                if n.op_type == "Mean" {
                    let dt = self.ty(y).dtype;
                    let c = self.scalar(n.inputs.len() as f32, dt, name)?;
                    y = self.op(OpKind::Div, &[y, c], name)?;
                }
                self.bind(n, &[Some(y)])
            }
            "Clip" => {
                let mut y = self.req(n, 0)?;
                let dt = self.ty(y).dtype;
                let (lo, hi) = if opset >= 11 {
                    (self.input(n, 1)?, self.input(n, 2)?)
                } else {
                    let lo = match attr(n, "min") {
                        Some(_) => Some(self.scalar(attr_f(n, "min", 0.0)?, dt, name)?),
                        None => None,
                    };
                    let hi = match attr(n, "max") {
                        Some(_) => Some(self.scalar(attr_f(n, "max", 0.0)?, dt, name)?),
                        None => None,
                    };
                    (lo, hi)
                };
                if let Some(lo) = lo {
                    y = self.op(OpKind::Max, &[y, lo], name)?;
                }
                if let Some(hi) = hi {
                    y = self.op(OpKind::Min, &[y, hi], name)?;
                }
                self.bind(n, &[Some(y)])
            }
            "Mod" => {
                let fmod = attr_i(n, "fmod", 0)? != 0;
                two(self, OpKind::Mod { fmod })
            }
            "Floor" => one(self, OpKind::Floor),
            "Ceil" => one(self, OpKind::Ceil),
            "Round" => one(self, OpKind::Round),
            "ArgMax" | "ArgMin" => {
                let x = self.req(n, 0)?;
                let rank = self.ty(x).shape.len();
                let axis = norm_axis(attr_i(n, "axis", 0)?, rank)?;
                let keepdims = attr_i(n, "keepdims", 1)? != 0;
                let select_last_index = attr_i(n, "select_last_index", 0)? != 0;
                let op = if n.op_type == "ArgMax" {
                    OpKind::ArgMax {
                        axis,
                        keepdims,
                        select_last_index,
                    }
                } else {
                    OpKind::ArgMin {
                        axis,
                        keepdims,
                        select_last_index,
                    }
                };
                one(self, op)
            }
            "CumSum" | "CumProd" => {
                let x = self.req(n, 0)?;
                let a = self.req(n, 1)?;
                let rank = self.ty(x).shape.len();
                let axis = match self.static_ints(a)?.as_slice() {
                    [v] => norm_axis(*v, rank)?,
                    _ => return invalid("axis must be a scalar"),
                };
                let (exclusive, reverse) = (
                    attr_i(n, "exclusive", 0)? != 0,
                    attr_i(n, "reverse", 0)? != 0,
                );
                let op = if n.op_type == "CumSum" {
                    OpKind::CumSum {
                        axis,
                        exclusive,
                        reverse,
                    }
                } else {
                    OpKind::CumProd {
                        axis,
                        exclusive,
                        reverse,
                    }
                };
                let y = self.op(op, &[x], name)?;
                self.bind(n, &[Some(y)])
            }
            "Split" => {
                let x = self.req(n, 0)?;
                let shape = self.ty(x).shape.clone();
                let axis = norm_axis(attr_i(n, "axis", 0)?, shape.len())?;
                let dim = shape[axis];
                let sizes = if opset >= 13 {
                    match self.input(n, 1)? {
                        Some(id) => Some(self.static_ints(id)?),
                        None => None,
                    }
                } else {
                    attr_ints(n, "split")?
                };
                let sizes: Vec<usize> = match sizes {
                    Some(v) => {
                        if v.iter().any(|&d| d < 0) || v.iter().sum::<i64>() != dim as i64 {
                            return invalid(format!("split sizes {v:?} do not sum to {dim}"));
                        }
                        v.iter().map(|&d| d as usize).collect()
                    }
                    None => {
                        let k = if opset >= 18 {
                            attr_i(n, "num_outputs", n.outputs.len() as i64)? as usize
                        } else {
                            n.outputs.len()
                        };
                        if k == 0 {
                            return invalid("no outputs");
                        }
                        let chunk = dim.div_ceil(k);
                        if opset < 18 && dim % k != 0 {
                            return invalid(format!("{dim} does not split evenly into {k}"));
                        }
                        (0..k)
                            .map(|i| chunk.min(dim.saturating_sub(i * chunk)))
                            .collect()
                    }
                };
                let mut outs = Vec::with_capacity(sizes.len());
                let mut at = 0usize;
                for sz in sizes {
                    let mut starts = vec![0i64; shape.len()];
                    let mut ends: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
                    starts[axis] = at as i64;
                    ends[axis] = (at + sz) as i64;
                    let steps = vec![1i64; shape.len()];
                    outs.push(Some(self.op(
                        OpKind::Slice {
                            starts,
                            ends,
                            steps,
                        },
                        &[x],
                        name,
                    )?));
                    at += sz;
                }
                self.bind(n, &outs)
            }
            "Trilu" => {
                let x = self.req(n, 0)?;
                let ty = self.ty(x).clone();
                let r = ty.shape.len();
                if r < 2 {
                    return invalid("input must have rank >= 2");
                }
                let k = match self.input(n, 1)? {
                    Some(id) => self.static_ints(id)?.first().copied().unwrap_or(0),
                    None => 0,
                };
                let upper = attr_i(n, "upper", 1)? != 0;
                let (rows, cols) = (ty.shape[r - 2], ty.shape[r - 1]);
                let mask: Vec<bool> = (0..rows * cols)
                    .map(|e| {
                        let d = (e % cols) as i64 - (e / cols) as i64;
                        if upper {
                            d >= k
                        } else {
                            d <= k
                        }
                    })
                    .collect();
                let m = Tensor::from_bool(vec![rows, cols], mask)?;
                let mname = self.fresh_name(name);
                let m = self.constant(m, &mname);
                let zero = self.scalar(0.0, ty.dtype, name)?;
                let y = self.op(OpKind::Select, &[m, x, zero], name)?;
                self.bind(n, &[Some(y)])
            }
            "Tile" => {
                let x = self.req(n, 0)?;
                let r = self.req(n, 1)?;
                let reps = self.static_ints(r)?;
                let rank = self.ty(x).shape.len();
                if reps.len() != rank || reps.iter().any(|&v| v < 0) {
                    return invalid(format!("repeats {reps:?} do not match rank {rank}"));
                }
                let mut y = x;
                for (axis, &k) in reps.iter().enumerate() {
                    if k == 0 {
                        let mut shape = self.ty(y).shape.clone();
                        shape[axis] = 0;
                        let z = Tensor::zeros(shape, self.ty(y).dtype);
                        let zn = self.fresh_name(name);
                        y = self.constant(z, &zn);
                    } else if k > 1 {
                        let parts = vec![y; k as usize];
                        y = self.op(OpKind::Concat { axis }, &parts, name)?;
                    }
                }
                self.bind(n, &[Some(y)])
            }
            "LeakyRelu" | "Elu" | "Selu" | "ThresholdedRelu" | "HardSigmoid" | "HardSwish"
            | "Softplus" | "Softsign" | "Sign" | "IsNaN" | "IsInf" | "Mish" | "PRelu" | "Celu" => {
                let x = self.req(n, 0)?;
                let dt = self.ty(x).dtype;
                let y = self.activation(n, x, dt, name)?;
                self.bind(n, &[Some(y)])
            }
            "RMSNormalization" => {
                let x = self.req(n, 0)?;
                let scale = self.req(n, 1)?;
                let ty = self.ty(x).clone();
                let rank = ty.shape.len();
                let axis = norm_axis(attr_i(n, "axis", -1)?, rank)?;
                let eps = attr_f(n, "epsilon", 1e-5)?;
                let stash = match attr_i(n, "stash_type", 1)? {
                    1 => ElementType::F32,
                    t => element_type(t as i32).unwrap_or(ElementType::F32),
                };
                let xs = self.cast(x, stash, name)?;
                let sq = self.op(OpKind::Mul, &[xs, xs], name)?;
                let axes: Vec<i64> = (axis as i64..rank as i64).collect();
                let ms = self.reduce(sq, ReduceKind::Mean, Some(axes), true, false, name)?;
                let e = self.scalar(eps, stash, name)?;
                let me = self.op(OpKind::Add, &[ms, e], name)?;
                let inv = self.op(OpKind::Rsqrt, &[me], name)?;
                let normed = self.op(OpKind::Mul, &[xs, inv], name)?;
                let normed = self.cast(normed, ty.dtype, name)?;
                let y = self.op(OpKind::Mul, &[normed, scale], name)?;
                self.bind(n, &[Some(y)])
            }
            "BatchNormalization" => {
                if attr_i(n, "training_mode", 0)? != 0 || n.outputs.len() > 1 {
                    return unsupported("training mode");
                }
                let x = self.req(n, 0)?;
                let shape = self.ty(x).shape.clone();
                if shape.len() < 2 {
                    return invalid("input must have rank >= 2");
                }
                let eps = attr_f(n, "epsilon", 1e-5)?;
                let mut params = Vec::with_capacity(4);
                for i in 1..5 {
                    let p = self.req(n, i)?;
                    let c = self.ty(p).numel();
                    let mut ps = vec![1usize; shape.len() - 1];
                    ps[0] = c;
                    params.push(self.reshape(p, ps, name)?);
                }
                let (scale, bias, mean, var) = (params[0], params[1], params[2], params[3]);
                let dt = self.ty(var).dtype;
                let e = self.scalar(eps, dt, name)?;
                let ve = self.op(OpKind::Add, &[var, e], name)?;
                let inv = self.op(OpKind::Rsqrt, &[ve], name)?;
                let d = self.op(OpKind::Sub, &[x, mean], name)?;
                let d = self.op(OpKind::Mul, &[d, inv], name)?;
                let d = self.op(OpKind::Mul, &[d, scale], name)?;
                let y = self.op(OpKind::Add, &[d, bias], name)?;
                self.bind(n, &[Some(y)])
            }
            "QuantizeLinear" | "DequantizeLinear" => {
                let x = self.req(n, 0)?;
                let scale = self.req(n, 1)?;
                let zp = self.input(n, 2)?;
                let quant = n.op_type == "QuantizeLinear";
                let xshape = self.ty(x).shape.clone();
                let rank = xshape.len();
                let block = attr_i(n, "block_size", 0)?;
                let axis = if self.ty(scale).shape.iter().product::<usize>() > 1 || block > 0 {
                    Some(norm_axis(attr_i(n, "axis", 1)?, rank)?)
                } else {
                    None
                };
                let scale_b = self.qparam(scale, &xshape, axis, block, name)?;
                let zp_b = match zp {
                    Some(z) => Some(self.qparam(z, &xshape, axis, block, name)?),
                    None => None,
                };
                let y = if quant {
                    let dt_attr = attr_i(n, "output_dtype", 0)? as i32;
                    let to = if dt_attr != 0 {
                        element_type(dt_attr).ok_or_else(|| {
                            NodeErr::Unsupported(format!("output type {}", data_type_name(dt_attr)))
                        })?
                    } else if let Some(z) = zp {
                        self.ty(z).dtype
                    } else {
                        ElementType::U8
                    };
                    let xf = self.cast(x, ElementType::F32, name)?;
                    let sf = self.cast(scale_b, ElementType::F32, name)?;
                    let mut q = self.op(OpKind::Div, &[xf, sf], name)?;
                    if to.is_float() {
                        // A (zero) float zero point still turns -0 into +0.
                        if let Some(z) = zp_b {
                            let zf = self.cast(z, ElementType::F32, name)?;
                            q = self.op(OpKind::Add, &[q, zf], name)?;
                        }
                        let saturate = attr_i(n, "saturate", 1)? != 0;
                        self.op(
                            OpKind::Cast {
                                to,
                                saturate,
                                scale: 0,
                            },
                            &[q],
                            name,
                        )?
                    } else {
                        let mut q = self.op(OpKind::Round, &[q], name)?;
                        if let Some(z) = zp_b {
                            let zf = self.cast(z, ElementType::F32, name)?;
                            q = self.op(OpKind::Add, &[q, zf], name)?;
                        }
                        let (lo, hi) = match to {
                            ElementType::U8 => (0.0, 255.0),
                            ElementType::I8 => (-128.0, 127.0),
                            ElementType::U16 => (0.0, 65535.0),
                            ElementType::I16 => (-32768.0, 32767.0),
                            ElementType::U4 => (0.0, 15.0),
                            ElementType::I4 => (-8.0, 7.0),
                            ElementType::U2 => (0.0, 3.0),
                            ElementType::I2 => (-2.0, 1.0),
                            t => return unsupported(format!("quantize to {t}")),
                        };
                        let lo = self.scalar(lo, ElementType::F32, name)?;
                        let hi = self.scalar(hi, ElementType::F32, name)?;
                        let q = self.op(OpKind::Max, &[q, lo], name)?;
                        let q = self.op(OpKind::Min, &[q, hi], name)?;
                        self.cast(q, to, name)?
                    }
                } else {
                    let out_ty = self.ty(scale).dtype;
                    let mut xf = self.cast(x, ElementType::F32, name)?;
                    if let Some(z) = zp_b {
                        let zf = self.cast(z, ElementType::F32, name)?;
                        xf = self.op(OpKind::Sub, &[xf, zf], name)?;
                    }
                    let sf = self.cast(scale_b, ElementType::F32, name)?;
                    let y = self.op(OpKind::Mul, &[xf, sf], name)?;
                    self.cast(y, out_ty, name)?
                };
                self.bind(n, &[Some(y)])
            }
            "DynamicQuantizeLinear" => {
                let x = self.req(n, 0)?;
                let rank = self.ty(x).shape.len();
                let all: Vec<i64> = (0..rank as i64).collect();
                let zero = self.scalar(0.0, ElementType::F32, name)?;
                let q255 = self.scalar(255.0, ElementType::F32, name)?;
                let mx = self.reduce(x, ReduceKind::Max, Some(all.clone()), false, false, name)?;
                let mn = self.reduce(x, ReduceKind::Min, Some(all), false, false, name)?;
                let mx = self.op(OpKind::Max, &[mx, zero], name)?;
                let mn = self.op(OpKind::Min, &[mn, zero], name)?;
                let range = self.op(OpKind::Sub, &[mx, mn], name)?;
                let scale = self.op(OpKind::Div, &[range, q255], name)?;
                let clamp = |s: &mut Self, v: ValueId| -> NResult<ValueId> {
                    let v = s.op(OpKind::Max, &[v, zero], name)?;
                    let v = s.op(OpKind::Min, &[v, q255], name)?;
                    s.cast(v, ElementType::U8, name)
                };
                let neg = self.op(OpKind::Div, &[mn, scale], name)?;
                let neg = self.op(OpKind::Sub, &[zero, neg], name)?;
                let zpf = self.op(OpKind::Round, &[neg], name)?;
                let zp = clamp(self, zpf)?;
                let q = self.op(OpKind::Div, &[x, scale], name)?;
                let q = self.op(OpKind::Round, &[q], name)?;
                let q = self.op(OpKind::Add, &[q, zpf], name)?;
                let y = clamp(self, q)?;
                self.bind(n, &[Some(y), Some(scale), Some(zp)])
            }
            "Pad" => {
                let x = self.req(n, 0)?;
                let shape = self.ty(x).shape.clone();
                let rank = shape.len();
                let (pads, value, axes) = if opset >= 11 {
                    let p = self.req(n, 1)?;
                    let pads = self.static_ints(p)?;
                    let value = match self.input(n, 2)? {
                        Some(v) => {
                            let t = self.static_tensor(v)?;
                            match t.data() {
                                ipu_reference::TensorData::F32(d) => {
                                    d.first().copied().unwrap_or(0.0) as f64
                                }
                                ipu_reference::TensorData::I64(d) => {
                                    d.first().copied().unwrap_or(0) as f64
                                }
                            }
                        }
                        None => 0.0,
                    };
                    let axes = match self.input(n, 3)? {
                        Some(a) => Some(self.static_ints(a)?),
                        None => None,
                    };
                    (pads, value, axes)
                } else {
                    (
                        attr_ints(n, "pads")?.unwrap_or_default(),
                        attr_f(n, "value", 0.0)? as f64,
                        None,
                    )
                };
                let axes: Vec<usize> = match axes {
                    Some(a) => a
                        .iter()
                        .map(|&v| norm_axis(v, rank))
                        .collect::<NResult<_>>()?,
                    None => (0..rank).collect(),
                };
                if pads.len() != 2 * axes.len() {
                    return invalid(format!("pads {pads:?} do not match {} axes", axes.len()));
                }
                let mut low = vec![0i64; rank];
                let mut high = vec![0i64; rank];
                for (i, &a) in axes.iter().enumerate() {
                    low[a] = pads[i];
                    high[a] = pads[i + axes.len()];
                }
                let mode = match attr_s(n, "mode")?.as_deref() {
                    None | Some("constant") => PadMode::Constant,
                    Some("reflect") => PadMode::Reflect,
                    Some("edge") => PadMode::Edge,
                    Some("wrap") => PadMode::Wrap,
                    Some(m) => return unsupported(format!("pad mode `{m}`")),
                };
                one(
                    self,
                    OpKind::Pad {
                        low,
                        high,
                        mode,
                        value,
                    },
                )
            }
            "GatherElements" => {
                let x = self.req(n, 0)?;
                let rank = self.ty(x).shape.len();
                let axis = norm_axis(attr_i(n, "axis", 0)?, rank)?;
                two(self, OpKind::GatherElements { axis })
            }
            "TopK" => {
                let x = self.req(n, 0)?;
                let rank = self.ty(x).shape.len();
                let axis = norm_axis(attr_i(n, "axis", -1)?, rank)?;
                let k = if opset >= 10 {
                    let kid = self.req(n, 1)?;
                    self.static_ints(kid)?.first().copied().unwrap_or(-1)
                } else {
                    attr_i(n, "k", -1)?
                };
                if k < 0 {
                    return invalid("k must be non-negative");
                }
                let largest = attr_i(n, "largest", 1)? != 0;
                let idx = self.op(
                    OpKind::TopK {
                        axis,
                        k: k as usize,
                        largest,
                    },
                    &[x],
                    name,
                )?;
                let vals = self.op(OpKind::GatherElements { axis }, &[x, idx], name)?;
                self.bind(n, &[Some(vals), Some(idx)])
            }
            "Hardmax" => {
                let x = self.req(n, 0)?;
                let ty = self.ty(x).clone();
                let rank = ty.shape.len();
                let (src, axis) = if opset >= 13 {
                    (x, norm_axis(attr_i(n, "axis", -1)?, rank)?)
                } else {
                    let a = attr_i(n, "axis", 1)?;
                    let a = if a < 0 { a + rank as i64 } else { a };
                    if a < 0 || a > rank as i64 {
                        return invalid(format!("axis {a} out of range"));
                    }
                    let a = a as usize;
                    let flat = vec![numel(&ty.shape[..a]), numel(&ty.shape[a..])];
                    (self.reshape(x, flat, name)?, 1)
                };
                let sshape = self.ty(src).shape.clone();
                let am = self.op(
                    OpKind::ArgMax {
                        axis,
                        keepdims: true,
                        select_last_index: false,
                    },
                    &[src],
                    name,
                )?;
                let iota = self.iota(&sshape, axis, name)?;
                let eq = self.op(OpKind::Equal, &[iota, am], name)?;
                let y = self.cast(eq, ty.dtype, name)?;
                let y = self.reshape(y, ty.shape, name)?;
                self.bind(n, &[Some(y)])
            }
            "LpNormalization" => {
                let x = self.req(n, 0)?;
                let rank = self.ty(x).shape.len();
                let axis = norm_axis(attr_i(n, "axis", -1)?, rank)? as i64;
                let p = attr_i(n, "p", 2)?;
                let norm = match p {
                    1 => {
                        let a = self.op(OpKind::Abs, &[x], name)?;
                        self.reduce(a, ReduceKind::Sum, Some(vec![axis]), true, false, name)?
                    }
                    2 => {
                        let sq = self.op(OpKind::Mul, &[x, x], name)?;
                        let s =
                            self.reduce(sq, ReduceKind::Sum, Some(vec![axis]), true, false, name)?;
                        self.op(OpKind::Sqrt, &[s], name)?
                    }
                    _ => return invalid(format!("p = {p}")),
                };
                // A zero norm gives zero (not NaN), like the ONNX reference.
                let dt = self.ty(x).dtype;
                let zero = self.scalar(0.0, dt, name)?;
                let is0 = self.op(OpKind::Equal, &[norm, zero], name)?;
                let q = self.op(OpKind::Div, &[x, norm], name)?;
                let y = self.op(OpKind::Select, &[is0, zero, q], name)?;
                self.bind(n, &[Some(y)])
            }
            "OneHot" => {
                let idx = self.req(n, 0)?;
                let depth = self.req(n, 1)?;
                let values = self.req(n, 2)?;
                let d = self.static_tensor(depth)?.to_f32_vec();
                let depth = match d.as_slice() {
                    [v] if *v >= 0.0 => *v as i64,
                    _ => return invalid("depth must be a non-negative scalar"),
                };
                let ishape = self.ty(idx).shape.clone();
                let r = ishape.len() + 1;
                let axis = norm_axis(attr_i(n, "axis", -1)?, r)?;
                let idx = self.cast(idx, ElementType::I64, name)?;
                let zero = self.scalar(0.0, ElementType::I64, name)?;
                let dep = self.scalar(depth as f32, ElementType::I64, name)?;
                let neg = self.op(OpKind::Less, &[idx, zero], name)?;
                let wrapped = self.op(OpKind::Add, &[idx, dep], name)?;
                let idx = self.op(OpKind::Select, &[neg, wrapped, idx], name)?;
                let mut ushape = ishape.clone();
                ushape.insert(axis, 1);
                let idx = self.reshape(idx, ushape.clone(), name)?;
                let mut oshape = ishape;
                oshape.insert(axis, depth as usize);
                let iota = self.iota(&oshape, axis, name)?;
                let hit = self.op(OpKind::Equal, &[iota, idx], name)?;
                let vt = self.ty(values).clone();
                if vt.numel() != 2 {
                    return invalid("values must have two elements");
                }
                let flat = self.reshape(values, vec![2], name)?;
                let mk = |s: &mut Self, i: i64| -> NResult<ValueId> {
                    let v = s.op(
                        OpKind::Slice {
                            starts: vec![i],
                            ends: vec![i + 1],
                            steps: vec![1],
                        },
                        &[flat],
                        name,
                    )?;
                    s.reshape(v, vec![], name)
                };
                let off = mk(self, 0)?;
                let on = mk(self, 1)?;
                let y = self.op(OpKind::Select, &[hit, on, off], name)?;
                self.bind(n, &[Some(y)])
            }
            "Swish" => {
                let x = self.req(n, 0)?;
                let dt = self.ty(x).dtype;
                let a = self.scalar(attr_f(n, "alpha", 1.0)?, dt, name)?;
                let ax = self.op(OpKind::Mul, &[x, a], name)?;
                let sg = self.op(OpKind::Sigmoid, &[ax], name)?;
                let y = self.op(OpKind::Mul, &[x, sg], name)?;
                self.bind(n, &[Some(y)])
            }
            "GlobalAveragePool" | "GlobalMaxPool" => {
                let x = self.req(n, 0)?;
                let rank = self.ty(x).shape.len();
                let kind = if n.op_type == "GlobalMaxPool" {
                    ReduceKind::Max
                } else {
                    ReduceKind::Mean
                };
                let axes: Vec<i64> = (2..rank as i64).collect();
                let y = self.reduce(x, kind, Some(axes), true, true, name)?;
                self.bind(n, &[Some(y)])
            }
            "InstanceNormalization" => {
                let x = self.req(n, 0)?;
                let (scale, bias) = (self.req(n, 1)?, self.req(n, 2)?);
                let shape = self.ty(x).shape.clone();
                let rank = shape.len();
                if rank < 3 {
                    return invalid("input must have rank >= 3");
                }
                let eps = attr_f(n, "epsilon", 1e-5)?;
                let flat = vec![shape[0] * shape[1], numel(&shape[2..])];
                let xf = self.reshape(x, flat, name)?;
                let ln = self.op(
                    OpKind::LayerNorm {
                        axis: 1,
                        epsilon: eps,
                        has_scale: false,
                        has_bias: false,
                    },
                    &[xf],
                    name,
                )?;
                let y = self.reshape(ln, shape.clone(), name)?;
                let mut ps = vec![1usize; rank - 1];
                ps[0] = shape[1];
                let s = self.reshape(scale, ps.clone(), name)?;
                let b = self.reshape(bias, ps, name)?;
                let y = self.op(OpKind::Mul, &[y, s], name)?;
                let y = self.op(OpKind::Add, &[y, b], name)?;
                self.bind(n, &[Some(y)])
            }
            "DepthToSpace" | "SpaceToDepth" => {
                let x = self.req(n, 0)?;
                let s = self.ty(x).shape.clone();
                if s.len() != 4 {
                    return invalid("input must be 4-D");
                }
                let b = attr_i(n, "blocksize", 0)?;
                if b <= 0 {
                    return invalid("blocksize must be positive");
                }
                let b = b as usize;
                let (nb, c, h, w) = (s[0], s[1], s[2], s[3]);
                let (r1, perm, r2) = if n.op_type == "DepthToSpace" {
                    if c % (b * b) != 0 {
                        return invalid("channels not divisible by blocksize^2");
                    }
                    let c2 = c / (b * b);
                    if attr_s(n, "mode")?.as_deref() == Some("CRD") {
                        (
                            vec![nb, c2, b, b, h, w],
                            vec![0, 1, 4, 2, 5, 3],
                            vec![nb, c2, h * b, w * b],
                        )
                    } else {
                        (
                            vec![nb, b, b, c2, h, w],
                            vec![0, 3, 4, 1, 5, 2],
                            vec![nb, c2, h * b, w * b],
                        )
                    }
                } else {
                    if h % b != 0 || w % b != 0 {
                        return invalid("spatial dims not divisible by blocksize");
                    }
                    (
                        vec![nb, c, h / b, b, w / b, b],
                        vec![0, 3, 5, 1, 2, 4],
                        vec![nb, c * b * b, h / b, w / b],
                    )
                };
                let y = self.reshape(x, r1, name)?;
                let y = self.op(OpKind::Transpose { perm }, &[y], name)?;
                let y = self.reshape(y, r2, name)?;
                self.bind(n, &[Some(y)])
            }
            "EyeLike" => {
                let x = self.req(n, 0)?;
                let s = self.ty(x).shape.clone();
                if s.len() != 2 {
                    return invalid("input must be 2-D");
                }
                let dt = match attr_i(n, "dtype", 0)? as i32 {
                    0 => self.ty(x).dtype,
                    d => element_type(d).ok_or_else(|| {
                        NodeErr::Unsupported(format!("dtype {}", data_type_name(d)))
                    })?,
                };
                let k = attr_i(n, "k", 0)?;
                let v: Vec<i64> = (0..s[0] * s[1])
                    .map(|e| ((e % s[1]) as i64 - (e / s[1]) as i64 == k) as i64)
                    .collect();
                let t = Tensor::from_i64(s, dt, v)?;
                let id = self.constant(t, name);
                self.bind(n, &[Some(id)])
            }
            "Shrink" => {
                let x = self.req(n, 0)?;
                let dt = self.ty(x).dtype;
                let l = attr_f(n, "lambd", 0.5)?;
                let b = attr_f(n, "bias", 0.0)?;
                let pl = self.scalar(l, dt, name)?;
                let nl = self.scalar(-l, dt, name)?;
                let bv = self.scalar(b, dt, name)?;
                let zero = self.scalar(0.0, dt, name)?;
                let lo = self.op(OpKind::Less, &[x, nl], name)?;
                let hi = self.op(OpKind::Greater, &[x, pl], name)?;
                let xp = self.op(OpKind::Add, &[x, bv], name)?;
                let xm = self.op(OpKind::Sub, &[x, bv], name)?;
                let inner = self.op(OpKind::Select, &[hi, xm, zero], name)?;
                let y = self.op(OpKind::Select, &[lo, xp, inner], name)?;
                self.bind(n, &[Some(y)])
            }
            "Attention" => self.attention(n, name),
            "RotaryEmbedding" => self.rotary(n, name),
            "Not" => one(self, OpKind::Not),
            "Neg" => one(self, OpKind::Neg),
            "Abs" => one(self, OpKind::Abs),
            "Exp" => one(self, OpKind::Exp),
            "Log" => one(self, OpKind::Log),
            "Sqrt" => one(self, OpKind::Sqrt),
            "Reciprocal" => one(self, OpKind::Reciprocal),
            "Tanh" => one(self, OpKind::Tanh),
            "Erf" => one(self, OpKind::Erf),
            "Sigmoid" => one(self, OpKind::Sigmoid),
            "Relu" => one(self, OpKind::Relu),
            "Gelu" => {
                let approximate = match attr_s(n, "approximate")?.as_deref() {
                    None | Some("none") => GeluApproximation::None,
                    Some("tanh") => GeluApproximation::Tanh,
                    Some(o) => return invalid(format!("unknown approximate `{o}`")),
                };
                one(self, OpKind::Gelu { approximate })
            }
            "Gemm" => {
                let (mut a, mut b) = (self.req(n, 0)?, self.req(n, 1)?);
                let c = self.input(n, 2)?;
                let alpha = attr_f(n, "alpha", 1.0)?;
                let beta = attr_f(n, "beta", 1.0)?;
                for (v, flag) in [(&mut a, "transA"), (&mut b, "transB")] {
                    if attr_i(n, flag, 0)? != 0 {
                        if self.ty(*v).shape.len() != 2 {
                            return invalid("Gemm operands must be 2-D");
                        }
                        *v = self.op(OpKind::Transpose { perm: vec![1, 0] }, &[*v], name)?;
                    }
                }
                let mut y = self.op(OpKind::MatMul, &[a, b], name)?;
                let dt = self.ty(y).dtype;
                if alpha != 1.0 {
                    let s = self.scalar(alpha, dt, name)?;
                    y = self.op(OpKind::Mul, &[y, s], name)?;
                }
                if let Some(mut c) = c {
                    if beta != 1.0 {
                        let s = self.scalar(beta, dt, name)?;
                        c = self.op(OpKind::Mul, &[c, s], name)?;
                    }
                    y = self.op(OpKind::Add, &[y, c], name)?;
                }
                self.bind(n, &[Some(y)])
            }
            "Softmax" | "LogSoftmax" => {
                let x = self.req(n, 0)?;
                let shape = self.ty(x).shape.clone();
                let rank = shape.len();
                let log = n.op_type == "LogSoftmax";
                let mk = |axis| {
                    if log {
                        OpKind::LogSoftmax { axis }
                    } else {
                        OpKind::Softmax { axis }
                    }
                };
                let y = if opset >= 13 {
                    let axis = norm_axis(attr_i(n, "axis", -1)?, rank)?;
                    self.op(mk(axis), &[x], name)?
                } else {
                    // Opset < 13: coerce to 2-D at `axis`, normalize rows.
                    let axis = if rank == 0 {
                        0
                    } else {
                        let a = attr_i(n, "axis", 1)?;
                        let a = if a < 0 { a + rank as i64 } else { a };
                        if a < 0 || a > rank as i64 {
                            return invalid(format!("axis {a} out of range"));
                        }
                        a as usize
                    };
                    let flat = vec![numel(&shape[..axis]), numel(&shape[axis..])];
                    let f = self.reshape(x, flat, name)?;
                    let s = self.op(mk(1), &[f], name)?;
                    self.reshape(s, shape, name)?
                };
                self.bind(n, &[Some(y)])
            }
            "LayerNormalization" => {
                let x = self.req(n, 0)?;
                let scale = self.input(n, 1)?;
                let bias = self.input(n, 2)?;
                let rank = self.ty(x).shape.len();
                let axis = norm_axis(attr_i(n, "axis", -1)?, rank)?;
                let eps = attr_f(n, "epsilon", 1e-5)?;
                let mut ins = vec![x];
                ins.extend(scale);
                ins.extend(bias);
                let y = self.op(
                    OpKind::LayerNorm {
                        axis,
                        epsilon: eps,
                        has_scale: scale.is_some(),
                        has_bias: bias.is_some(),
                    },
                    &ins,
                    name,
                )?;
                let (want_mean, want_inv) = (Self::wants_output(n, 1), Self::wants_output(n, 2));
                let mut outs = vec![Some(y), None, None];
                if want_mean || want_inv {
                    let stash = match attr_i(n, "stash_type", 1)? {
                        1 => ElementType::F32,
                        t => element_type(t as i32).unwrap_or(ElementType::F32),
                    };
                    let xs = self.cast(x, stash, name)?;
                    let axes: Vec<i64> = (axis as i64..rank as i64).collect();
                    let mean =
                        self.reduce(xs, ReduceKind::Mean, Some(axes.clone()), true, false, name)?;
                    let d = self.op(OpKind::Sub, &[xs, mean], name)?;
                    let d2 = self.op(OpKind::Mul, &[d, d], name)?;
                    let var = self.reduce(d2, ReduceKind::Mean, Some(axes), true, false, name)?;
                    let e = self.scalar(eps, stash, name)?;
                    let ve = self.op(OpKind::Add, &[var, e], name)?;
                    let inv = self.op(OpKind::Rsqrt, &[ve], name)?;
                    outs[1] = Some(mean);
                    outs[2] = Some(inv);
                }
                self.bind(n, &outs)
            }
            "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd"
            | "ReduceSumSquare" | "ReduceL1" | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" => {
                let x = self.req(n, 0)?;
                let from_input = if n.op_type == "ReduceSum" {
                    opset >= 13
                } else {
                    opset >= 18
                };
                let axes = self.reduce_axes(n, from_input)?;
                let keep = attr_i(n, "keepdims", 1)? != 0;
                let noop = attr_i(n, "noop_with_empty_axes", 0)? != 0;
                let y = match n.op_type.as_str() {
                    "ReduceMean" => self.reduce(x, ReduceKind::Mean, axes, keep, noop, name)?,
                    "ReduceSum" => self.reduce(x, ReduceKind::Sum, axes, keep, noop, name)?,
                    "ReduceMax" => self.reduce(x, ReduceKind::Max, axes, keep, noop, name)?,
                    "ReduceMin" => self.reduce(x, ReduceKind::Min, axes, keep, noop, name)?,
                    "ReduceProd" => self.reduce(x, ReduceKind::Prod, axes, keep, noop, name)?,
                    "ReduceSumSquare" => {
                        let sq = self.op(OpKind::Mul, &[x, x], name)?;
                        self.reduce(sq, ReduceKind::Sum, axes, keep, noop, name)?
                    }
                    "ReduceL1" => {
                        let a = self.op(OpKind::Abs, &[x], name)?;
                        self.reduce(a, ReduceKind::Sum, axes, keep, noop, name)?
                    }
                    "ReduceL2" => {
                        let sq = self.op(OpKind::Mul, &[x, x], name)?;
                        let s = self.reduce(sq, ReduceKind::Sum, axes, keep, noop, name)?;
                        self.op(OpKind::Sqrt, &[s], name)?
                    }
                    "ReduceLogSum" => {
                        let s = self.reduce(x, ReduceKind::Sum, axes, keep, noop, name)?;
                        self.op(OpKind::Log, &[s], name)?
                    }
                    _ => {
                        let e = self.op(OpKind::Exp, &[x], name)?;
                        let s = self.reduce(e, ReduceKind::Sum, axes, keep, noop, name)?;
                        self.op(OpKind::Log, &[s], name)?
                    }
                };
                self.bind(n, &[Some(y)])
            }
            "Transpose" => {
                let x = self.req(n, 0)?;
                let rank = self.ty(x).shape.len();
                let perm = match attr_ints(n, "perm")? {
                    Some(p) => p
                        .iter()
                        .map(|&a| norm_axis(a, rank))
                        .collect::<NResult<Vec<_>>>()?,
                    None => (0..rank).rev().collect(),
                };
                one(self, OpKind::Transpose { perm })
            }
            "Reshape" => {
                let x = self.req(n, 0)?;
                let spec = if opset >= 5 {
                    let s = self.req(n, 1)?;
                    self.static_ints(s)?
                } else {
                    attr_ints(n, "shape")?.unwrap_or_default()
                };
                let allowzero = attr_i(n, "allowzero", 0)? != 0;
                let in_shape = self.ty(x).shape.clone();
                let mut shape = Vec::with_capacity(spec.len());
                let mut infer = None;
                for (i, &d) in spec.iter().enumerate() {
                    shape.push(match d {
                        0 if !allowzero => match in_shape.get(i) {
                            Some(&v) => v,
                            None => return invalid("0 in shape beyond input rank"),
                        },
                        -1 => {
                            if infer.replace(i).is_some() {
                                return invalid("more than one -1 in shape");
                            }
                            1
                        }
                        d if d < 0 => return invalid(format!("invalid dimension {d}")),
                        d => d as usize,
                    });
                }
                if let Some(i) = infer {
                    let known = numel(&shape);
                    let total = numel(&in_shape);
                    if known == 0 || total % known != 0 {
                        return invalid(format!("cannot reshape {in_shape:?} to {spec:?}"));
                    }
                    shape[i] = total / known;
                }
                let y = self.op(OpKind::Reshape { shape }, &[x], name)?;
                self.bind(n, &[Some(y)])
            }
            "Flatten" => {
                let x = self.req(n, 0)?;
                let shape = self.ty(x).shape.clone();
                let r = shape.len() as i64;
                let a = attr_i(n, "axis", 1)?;
                let a = if a < 0 { a + r } else { a };
                if a < 0 || a > r {
                    return invalid(format!("axis {a} out of range"));
                }
                let a = a as usize;
                let y = self.reshape(x, vec![numel(&shape[..a]), numel(&shape[a..])], name)?;
                self.bind(n, &[Some(y)])
            }
            "Unsqueeze" | "Squeeze" => {
                let x = self.req(n, 0)?;
                let axes = if opset >= 13 {
                    match self.input(n, 1)? {
                        Some(a) => Some(self.static_ints(a)?),
                        None => None,
                    }
                } else {
                    attr_ints(n, "axes")?
                };
                let shape = self.ty(x).shape.clone();
                let out = if n.op_type == "Unsqueeze" {
                    let axes = axes.ok_or(NodeErr::Invalid("Unsqueeze needs axes".into()))?;
                    let r = shape.len() + axes.len();
                    let mut norm = axes
                        .iter()
                        .map(|&a| norm_axis(a, r))
                        .collect::<NResult<Vec<_>>>()?;
                    norm.sort_unstable();
                    if norm.windows(2).any(|w| w[0] == w[1]) {
                        return invalid("repeated axis");
                    }
                    let mut it = shape.iter();
                    (0..r)
                        .map(|i| {
                            if norm.contains(&i) {
                                1
                            } else {
                                it.next().copied().unwrap_or(1)
                            }
                        })
                        .collect()
                } else {
                    match axes {
                        None => shape.iter().copied().filter(|&d| d != 1).collect(),
                        Some(a) => {
                            let norm = a
                                .iter()
                                .map(|&a| norm_axis(a, shape.len()))
                                .collect::<NResult<Vec<_>>>()?;
                            for &a in &norm {
                                if shape[a] != 1 {
                                    return invalid(format!(
                                        "cannot squeeze axis {a} of size {}",
                                        shape[a]
                                    ));
                                }
                            }
                            shape
                                .iter()
                                .enumerate()
                                .filter(|(i, _)| !norm.contains(i))
                                .map(|(_, &d)| d)
                                .collect()
                        }
                    }
                };
                let y = self.op(OpKind::Reshape { shape: out }, &[x], name)?;
                self.bind(n, &[Some(y)])
            }
            "Concat" => {
                let ins = (0..n.inputs.len())
                    .map(|i| self.req(n, i))
                    .collect::<NResult<Vec<_>>>()?;
                if ins.is_empty() {
                    return invalid("no inputs");
                }
                let rank = self.ty(ins[0]).shape.len();
                let axis = norm_axis(attr_i(n, "axis", 0)?, rank)?;
                let y = self.op(OpKind::Concat { axis }, &ins, name)?;
                self.bind(n, &[Some(y)])
            }
            "Slice" => {
                let x = self.req(n, 0)?;
                let shape = self.ty(x).shape.clone();
                let rank = shape.len();
                let (starts, ends, axes, steps) = if opset >= 10 {
                    let get = |s: &Self, i: usize| -> NResult<Option<Vec<i64>>> {
                        match s.input(n, i)? {
                            Some(id) => Ok(Some(s.static_ints(id)?)),
                            None => Ok(None),
                        }
                    };
                    (
                        get(self, 1)?.unwrap_or_default(),
                        get(self, 2)?.unwrap_or_default(),
                        get(self, 3)?,
                        get(self, 4)?,
                    )
                } else {
                    (
                        attr_ints(n, "starts")?.unwrap_or_default(),
                        attr_ints(n, "ends")?.unwrap_or_default(),
                        attr_ints(n, "axes")?,
                        None,
                    )
                };
                let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
                let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
                if ends.len() != starts.len()
                    || axes.len() != starts.len()
                    || steps.len() != starts.len()
                {
                    return invalid("starts, ends, axes and steps differ in length");
                }
                let mut st: Vec<i64> = vec![0; rank];
                let mut en: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
                let mut sp: Vec<i64> = vec![1; rank];
                let mut seen = vec![false; rank];
                for i in 0..starts.len() {
                    let a = norm_axis(axes[i], rank)?;
                    if std::mem::replace(&mut seen[a], true) {
                        return invalid("repeated axis");
                    }
                    if steps[i] == 0 {
                        return invalid("step 0");
                    }
                    let (s, e) = normalize_slice(starts[i], ends[i], steps[i], shape[a]);
                    st[a] = s;
                    en[a] = e;
                    sp[a] = steps[i];
                }
                one(
                    self,
                    OpKind::Slice {
                        starts: st,
                        ends: en,
                        steps: sp,
                    },
                )
            }
            "Gather" => {
                let x = self.req(n, 0)?;
                let rank = self.ty(x).shape.len();
                let axis = norm_axis(attr_i(n, "axis", 0)?, rank)?;
                two(self, OpKind::Gather { axis })
            }
            "Cast" | "CastLike" => {
                let x = self.req(n, 0)?;
                let to = if n.op_type == "Cast" {
                    let dt = attr_i(n, "to", 0)? as i32;
                    match element_type(dt) {
                        Some(t) => t,
                        None => {
                            return unsupported(format!("cast to {} ({dt})", data_type_name(dt)))
                        }
                    }
                } else {
                    let t = self.req(n, 1)?;
                    self.ty(t).dtype
                };
                let saturate = attr_i(n, "saturate", 1)? != 0;
                if let Some(mode) = attr_s(n, "round_mode")? {
                    if mode != "up" && to == ElementType::F8E8M0FNU {
                        return unsupported(format!("round_mode `{mode}` (only \"up\")"));
                    }
                }
                let y = self.op(
                    OpKind::Cast {
                        to,
                        saturate,
                        scale: 0,
                    },
                    &[x],
                    name,
                )?;
                self.bind(n, &[Some(y)])
            }
            "Where" => {
                let (c, a, b) = (self.req(n, 0)?, self.req(n, 1)?, self.req(n, 2)?);
                let y = self.op(OpKind::Select, &[c, a, b], name)?;
                self.bind(n, &[Some(y)])
            }
            "Expand" => {
                let x = self.req(n, 0)?;
                let s = self.req(n, 1)?;
                let spec = self.static_ints(s)?;
                if spec.iter().any(|&d| d < 0) {
                    return invalid("negative dimension");
                }
                let spec: Vec<usize> = spec.iter().map(|&d| d as usize).collect();
                let shape = broadcast_shapes(&self.ty(x).shape, &spec).ok_or_else(|| {
                    NodeErr::Invalid(format!("cannot expand {:?} to {spec:?}", self.ty(x).shape))
                })?;
                one(self, OpKind::Broadcast { shape })
            }
            "Shape" => {
                let x = self.req(n, 0)?;
                let shape = self.ty(x).shape.clone();
                let r = shape.len() as i64;
                let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
                let s = clampi(attr_i(n, "start", 0)?);
                let e = clampi(attr_i(n, "end", r)?);
                let dims: Vec<i64> = if s < e {
                    shape[s..e].iter().map(|&d| d as i64).collect()
                } else {
                    vec![]
                };
                let t = Tensor::from_i64(vec![dims.len()], ElementType::I64, dims)?;
                let id = self.constant(t, name);
                self.bind(n, &[Some(id)])
            }
            "Size" => {
                let x = self.req(n, 0)?;
                let t = Tensor::scalar_i64(self.ty(x).numel() as i64);
                let id = self.constant(t, name);
                self.bind(n, &[Some(id)])
            }
            "ConstantOfShape" => {
                let s = self.req(n, 0)?;
                let dims = self.static_ints(s)?;
                if dims.iter().any(|&d| d < 0) {
                    return invalid("negative dimension");
                }
                let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
                let value = match attr(n, "value") {
                    Some(Attribute::Tensor(t)) if t.numel() == 1 => t.clone(),
                    None => Tensor::scalar_f32(0.0),
                    Some(_) => return invalid("value must be a one-element tensor"),
                };
                let v = value.reshaped(vec![])?;
                let t = evaluate(&OpKind::Broadcast { shape }, &[&v])?;
                let id = self.constant(t, name);
                self.bind(n, &[Some(id)])
            }
            "Range" => {
                let (a, b, c) = (self.req(n, 0)?, self.req(n, 1)?, self.req(n, 2)?);
                let (ta, tb, tc) = (
                    self.static_tensor(a)?.clone(),
                    self.static_tensor(b)?.clone(),
                    self.static_tensor(c)?.clone(),
                );
                let dt = ta.dtype();
                let t = if dt.is_float() {
                    let (s, l, d) = (
                        ta.to_f32_vec()[0] as f64,
                        tb.to_f32_vec()[0] as f64,
                        tc.to_f32_vec()[0] as f64,
                    );
                    let cnt = ((l - s) / d).ceil().max(0.0);
                    if !cnt.is_finite() || cnt > 1e8 {
                        return invalid("range too large");
                    }
                    let v = (0..cnt as usize)
                        .map(|i| (s + i as f64 * d) as f32)
                        .collect::<Vec<_>>();
                    Tensor::from_f32(vec![v.len()], dt, v)?
                } else {
                    let (s, l, d) = (ta.to_i64_vec()[0], tb.to_i64_vec()[0], tc.to_i64_vec()[0]);
                    if d == 0 {
                        return invalid("delta 0");
                    }
                    let cnt =
                        ((l as i128 - s as i128) + d as i128 - d.signum() as i128) / d as i128;
                    if cnt > 100_000_000 {
                        return invalid("range too large");
                    }
                    let v: Vec<i64> = (0..cnt.max(0) as i64).map(|i| s + i * d).collect();
                    Tensor::from_i64(vec![v.len()], dt, v)?
                };
                if ta.numel() != 1 || tb.numel() != 1 || tc.numel() != 1 {
                    return invalid("start, limit and delta must be scalars");
                }
                let id = self.constant(t, name);
                self.bind(n, &[Some(id)])
            }
            "Dropout" => {
                let x = self.req(n, 0)?;
                if let Some(tm) = self.input(n, 2)? {
                    if self.static_ints(tm)?.first().copied().unwrap_or(0) != 0 {
                        return unsupported("training mode");
                    }
                }
                let mut outs = vec![Some(x), None];
                if Self::wants_output(n, 1) {
                    let shape = self.ty(x).shape.clone();
                    let t = Tensor::from_bool(shape.clone(), vec![true; numel(&shape)])?;
                    outs[1] = Some(self.constant(t, name));
                }
                self.bind(n, &outs)
            }
            other => unsupported(format!("no mapping for {other}")),
        }
    }
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
                    let t = evaluate(op, &args).map_err(|source| OnnxError::Eval {
                        node: n.name.clone(),
                        source,
                    })?;
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
        self.outputs
            .iter()
            .map(|&o| match std::mem::replace(&mut slots[o], Slot::Empty) {
                Slot::Owned(t) => Ok(t),
                Slot::Borrowed(t) => Ok(t.clone()),
                Slot::Empty => {
                    // The same value may be listed twice as an output.
                    Err(OnnxError::Invalid(format!(
                        "output `{}` was not computed",
                        self.values[o].name
                    )))
                }
            })
            .collect()
    }
}
