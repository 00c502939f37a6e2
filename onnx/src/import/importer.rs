//! The importer's state and the helpers the op mappings share.

use std::collections::{HashMap, HashSet};

use ipu_reference::{
    evaluate, infer_type, ElementType, EvalError, OpKind, ReduceKind, Tensor, TensorType,
};

use super::{MappedGraph, MappedNode, ValueId, ValueInfo};
use crate::model::{Attribute, Node};

pub(super) enum NodeErr {
    Unsupported(String),
    Invalid(String),
}

impl From<EvalError> for NodeErr {
    fn from(e: EvalError) -> Self {
        NodeErr::Invalid(e.to_string())
    }
}

pub(super) type NResult<T> = Result<T, NodeErr>;

pub(super) fn invalid<T>(m: impl Into<String>) -> NResult<T> {
    Err(NodeErr::Invalid(m.into()))
}

pub(super) fn unsupported<T>(m: impl Into<String>) -> NResult<T> {
    Err(NodeErr::Unsupported(m.into()))
}

pub(super) fn attr<'a>(n: &'a Node, name: &str) -> Option<&'a Attribute> {
    n.attributes.get(name)
}

pub(super) fn attr_i(n: &Node, name: &str, default: i64) -> NResult<i64> {
    match attr(n, name) {
        None => Ok(default),
        Some(Attribute::Int(v)) => Ok(*v),
        Some(a) => invalid(format!("attribute `{name}` should be an int, got {a:?}")),
    }
}

pub(super) fn attr_f(n: &Node, name: &str, default: f32) -> NResult<f32> {
    match attr(n, name) {
        None => Ok(default),
        Some(Attribute::Float(v)) => Ok(*v),
        Some(Attribute::Int(v)) => Ok(*v as f32),
        Some(a) => invalid(format!("attribute `{name}` should be a float, got {a:?}")),
    }
}

pub(super) fn attr_ints(n: &Node, name: &str) -> NResult<Option<Vec<i64>>> {
    match attr(n, name) {
        None => Ok(None),
        Some(Attribute::Ints(v)) => Ok(Some(v.clone())),
        Some(Attribute::Int(v)) => Ok(Some(vec![*v])),
        Some(a) => invalid(format!("attribute `{name}` should be ints, got {a:?}")),
    }
}

pub(super) fn attr_s(n: &Node, name: &str) -> NResult<Option<String>> {
    match attr(n, name) {
        None => Ok(None),
        Some(Attribute::String(v)) => Ok(Some(String::from_utf8_lossy(v).into_owned())),
        Some(a) => invalid(format!("attribute `{name}` should be a string, got {a:?}")),
    }
}

pub(super) fn norm_axis(a: i64, rank: usize) -> NResult<usize> {
    let r = rank as i64;
    let v = if a < 0 { a + r } else { a };
    if v < 0 || v >= r {
        return invalid(format!("axis {a} out of range for rank {rank}"));
    }
    Ok(v as usize)
}

/// Error unless a tensor of `shape` and `dtype` that the importer builds
/// (a folded constant, a mask, an index table) fits the reference's
/// tensor-size limit ([`ipu_reference::limits`]).
pub(super) fn check_alloc(shape: &[usize], dtype: ElementType) -> NResult<()> {
    ipu_reference::check_tensor_size("import-time constant", shape, dtype)?;
    Ok(())
}

pub(super) fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

pub(super) struct Importer {
    pub(super) g: MappedGraph,
    pub(super) env: HashMap<String, ValueId>,
    pub(super) consts: HashMap<ValueId, Tensor>,
    pub(super) special: HashMap<ValueId, Tensor>,
    /// Graph inputs with a default value (which a caller may override).
    pub(super) defaulted: HashSet<ValueId>,
    pub(super) opset: i64,
    pub(super) counter: usize,
    /// First value id created by the node being mapped.
    pub(super) node_start: ValueId,
    /// The convs mapped so far, by their result (bias added): what a
    /// following `BatchNormalization` folds into.
    pub(super) convs: HashMap<ValueId, ConvRecord>,
    /// The zero `Pad`s of spatial axes mapped so far, by their result: what
    /// a following `Conv` takes into its own pads.
    pub(super) zero_pads: HashMap<ValueId, PadRecord>,
    /// How many times each ONNX value name is read (nodes, subgraphs,
    /// graph outputs).
    pub(super) readers: HashMap<String, usize>,
}

/// A mapped `Conv`: its input, weights, bias and op.
#[derive(Clone, Debug)]
pub(super) struct ConvRecord {
    pub(super) x: ValueId,
    pub(super) w: ValueId,
    pub(super) bias: Option<ValueId>,
    pub(super) kind: OpKind,
}

/// A mapped constant-zero `Pad` of the spatial axes (2..) only: its input
/// and the pads it adds, lows then highs, per spatial axis.
#[derive(Clone, Debug)]
pub(super) struct PadRecord {
    pub(super) x: ValueId,
    pub(super) pads: Vec<usize>,
}

impl Importer {
    pub(super) fn new_value(&mut self, name: &str, ty: TensorType) -> ValueId {
        self.g.values.push(ValueInfo {
            name: name.to_string(),
            ty,
        });
        self.g.values.len() - 1
    }

    pub(super) fn fresh_name(&mut self, base: &str) -> String {
        self.counter += 1;
        format!("{base}.{}", self.counter)
    }

    pub(super) fn ty(&self, id: ValueId) -> &TensorType {
        &self.g.values[id].ty
    }

    pub(super) fn constant(&mut self, t: Tensor, name: &str) -> ValueId {
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
    pub(super) fn op(&mut self, op: OpKind, inputs: &[ValueId], name: &str) -> NResult<ValueId> {
        let types: Vec<TensorType> = inputs.iter().map(|&i| self.ty(i).clone()).collect();
        let ty = infer_type(&op, &types)?;
        let vname = self.fresh_name(name);
        if !inputs.is_empty() && inputs.iter().all(|i| self.consts.contains_key(i)) {
            let args: Vec<&Tensor> = inputs.iter().map(|i| &self.consts[i]).collect();
            let t = evaluate(&op, &args)?;
            return Ok(self.constant(t, &vname));
        }
        // Small results computed only from constants and specialized
        // inputs are known too (shape arithmetic on a shape fed as a graph
        // input, a loop's trip count), so later static operands can use them.
        let known = ty.numel() <= 4096
            && !inputs.is_empty()
            && inputs
                .iter()
                .all(|i| self.consts.contains_key(i) || self.special.contains_key(i));
        let value = if known {
            let args: Vec<&Tensor> = inputs
                .iter()
                .filter_map(|i| self.consts.get(i).or_else(|| self.special.get(i)))
                .collect();
            evaluate(&op, &args).ok()
        } else {
            None
        };
        let id = self.new_value(&vname, ty);
        self.g.nodes.push(MappedNode {
            op,
            inputs: inputs.to_vec(),
            outputs: vec![id],
            name: name.to_string(),
        });
        if let Some(t) = value {
            self.special.insert(id, t);
        }
        Ok(id)
    }

    /// Records a conv's result `y` for a `BatchNormalization` to fold.
    pub(super) fn note_conv(
        &mut self,
        y: ValueId,
        x: ValueId,
        w: ValueId,
        bias: Option<ValueId>,
        kind: OpKind,
    ) {
        self.convs.insert(y, ConvRecord { x, w, bias, kind });
    }

    pub(super) fn scalar(&mut self, v: f32, ty: ElementType, name: &str) -> NResult<ValueId> {
        let t = if ty.is_float() {
            Tensor::from_f32(vec![], ty, vec![v])?
        } else {
            Tensor::from_i64(vec![], ty, vec![v as i64])?
        };
        let n = self.fresh_name(name);
        Ok(self.constant(t, &n))
    }

    pub(super) fn cast(&mut self, id: ValueId, to: ElementType, name: &str) -> NResult<ValueId> {
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

    pub(super) fn input(&self, n: &Node, i: usize) -> NResult<Option<ValueId>> {
        match n.inputs.get(i) {
            None => Ok(None),
            Some(s) if s.is_empty() => Ok(None),
            Some(s) => match self.env.get(s) {
                Some(&id) => Ok(Some(id)),
                None => invalid(format!("input `{s}` is not defined before use")),
            },
        }
    }

    pub(super) fn req(&self, n: &Node, i: usize) -> NResult<ValueId> {
        self.input(n, i)?
            .map_or_else(|| invalid(format!("missing required input {i}")), Ok)
    }

    pub(super) fn static_tensor(&self, id: ValueId) -> NResult<&Tensor> {
        match self.consts.get(&id).or_else(|| self.special.get(&id)) {
            Some(t) => Ok(t),
            None if self.defaulted.contains(&id) => unsupported(format!(
                "operand `{}` must be a constant, but it is a graph input whose initializer is only its default (a caller may feed another value)",
                self.g.values[id].name
            )),
            None => unsupported(format!(
                "operand `{}` must be a constant (dynamic shapes/axes are not supported)",
                self.g.values[id].name
            )),
        }
    }

    pub(super) fn static_ints(&self, id: ValueId) -> NResult<Vec<i64>> {
        let t = self.static_tensor(id)?;
        if t.dtype().is_float() {
            return invalid(format!(
                "operand `{}` must be integers",
                self.g.values[id].name
            ));
        }
        Ok(t.to_i64_vec())
    }

    pub(super) fn bind(&mut self, n: &Node, outs: &[Option<ValueId>]) -> NResult<()> {
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

    pub(super) fn wants_output(n: &Node, i: usize) -> bool {
        n.outputs.get(i).is_some_and(|s| !s.is_empty())
    }

    pub(super) fn binary_fold(&mut self, op: OpKind, n: &Node, name: &str) -> NResult<ValueId> {
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

    /// Input `i` as static integers, if given.
    pub(super) fn static_ints_input(&self, n: &Node, i: usize) -> NResult<Option<Vec<i64>>> {
        match self.input(n, i)? {
            Some(id) => Ok(Some(self.static_ints(id)?)),
            None => Ok(None),
        }
    }

    pub(super) fn reduce(
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

    pub(super) fn reshape(
        &mut self,
        x: ValueId,
        shape: Vec<usize>,
        name: &str,
    ) -> NResult<ValueId> {
        if self.ty(x).shape == shape {
            return Ok(x);
        }
        self.op(OpKind::Reshape { shape }, &[x], name)
    }

    /// A quantization parameter (scale or zero point) shaped to broadcast
    /// against `xshape`: scalar, per-axis (1-D along `axis`), or blocked
    /// (`block_size` > 0: repeated along `axis`).
    pub(super) fn qparam(
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
            check_alloc(&[dim], ElementType::I64)?;
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
    pub(super) fn iota(&mut self, shape: &[usize], axis: usize, name: &str) -> NResult<ValueId> {
        let mut s = vec![1usize; shape.len()];
        s[axis] = shape[axis];
        check_alloc(&s, ElementType::I64)?;
        let t = Tensor::from_i64(s, ElementType::I64, (0..shape[axis] as i64).collect())?;
        let n = self.fresh_name(name);
        Ok(self.constant(t, &n))
    }
}
