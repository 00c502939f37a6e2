//! Control flow whose course is known at import: `If` on a known condition
//! is its branch, inlined; `Loop` with a known trip count and known
//! conditions is unrolled (each iteration's body inlined, scan outputs
//! stacked); `Scan` (whose length is a static dimension) is unrolled too.
//! The dialect has no regions, so a condition that depends on runtime
//! values is unsupported.

use ipu_reference::{ElementType, OpKind, Tensor};

use super::super::importer::{
    check_alloc, invalid, norm_axis, unsupported, Importer, NResult, NodeErr,
};
use super::{op, AttrKind as A, Binder, OnnxOp};
use crate::import::ValueId;
use crate::model::{Dim, Graph};

const SCAN_8: &[(&str, A)] = &[
    ("body", A::Graph),
    ("num_scan_inputs", A::Int),
    ("directions", A::Ints),
];
const SCAN_9: &[(&str, A)] = &[
    ("body", A::Graph),
    ("num_scan_inputs", A::Int),
    ("scan_input_axes", A::Ints),
    ("scan_input_directions", A::Ints),
    ("scan_output_axes", A::Ints),
    ("scan_output_directions", A::Ints),
];

pub(super) const OPS: &[OnnxOp] = &[
    op(
        "If",
        1,
        &[("then_branch", A::Graph), ("else_branch", A::Graph)],
        Importer::if_node,
    ),
    op("Loop", 1, &[("body", A::Graph)], Importer::loop_node),
    // Opset 8's form has a batch axis and a sequence-lengths input.
    op("Scan", 8, SCAN_8, Importer::scan_node).until(8),
    op("Scan", 9, SCAN_9, Importer::scan_node),
];

/// The most iterations a `Loop` is unrolled to.
pub const MAX_UNROLLED_ITERATIONS: i64 = 4096;
/// Unrolling stops (unsupported) once the mapped graph has this many ops.
pub const MAX_UNROLLED_OPS: usize = 1 << 20;

impl Importer {
    /// The value of a one-element operand known at import, as an integer
    /// (booleans 0/1). `what` names it in the errors.
    fn known_scalar(&self, id: ValueId, what: &str) -> NResult<i64> {
        let Some(t) = self.consts.get(&id).or_else(|| self.special.get(&id)) else {
            return unsupported(format!(
                "{what} `{}` is not known at import (control flow must be decided at import: the dialect has no regions)",
                self.g.values[id].name
            ));
        };
        if t.numel() != 1 {
            return invalid(format!(
                "{what} must have one element, it has {}",
                t.numel()
            ));
        }
        Ok(if t.dtype().is_float() {
            (t.to_f32_vec()[0] != 0.0) as i64
        } else {
            t.to_i64_vec()[0]
        })
    }

    /// Maps the nodes of subgraph `g` in place: its inputs bound to `args`,
    /// the enclosing graph's values visible by name. Returns the values of
    /// its outputs; the names it defined go out of scope afterwards.
    fn inline_graph(&mut self, g: &Graph, args: &[ValueId], scope: &str) -> NResult<Vec<ValueId>> {
        if g.inputs.len() != args.len() {
            return invalid(format!(
                "the subgraph `{}` takes {} inputs, it is given {}",
                g.name,
                g.inputs.len(),
                args.len()
            ));
        }
        let outer = self.env.clone();
        for (decl, &v) in g.inputs.iter().zip(args) {
            self.env.insert(decl.name.clone(), v);
        }
        for (name, t) in &g.initializers {
            check_alloc(t.shape(), t.dtype())?;
            let id = self.constant(t.clone(), &format!("{scope}/{name}"));
            self.env.insert(name.clone(), id);
        }
        for (i, node) in g.nodes.iter().enumerate() {
            let label = if node.name.is_empty() {
                format!("{scope}/{}_{i}", node.op_type)
            } else {
                format!("{scope}/{}", node.name)
            };
            let context = |m: String| format!("node `{label}` ({}): {m}", node.op_type);
            if node.domain.is_empty() {
                crate::import::check_attributes(node, self.opset)
                    .map_err(|m| NodeErr::Invalid(context(m)))?;
            }
            let start = std::mem::replace(&mut self.node_start, self.g.values.len());
            let r = self.map_node(node, &label);
            self.node_start = start;
            r.map_err(|e| match e {
                NodeErr::Unsupported(m) => NodeErr::Unsupported(context(m)),
                NodeErr::Invalid(m) => NodeErr::Invalid(context(m)),
            })?;
        }
        let outs = g
            .outputs
            .iter()
            .map(|d| {
                self.env.get(&d.name).copied().ok_or_else(|| {
                    NodeErr::Invalid(format!(
                        "output `{}` of the subgraph `{}` is never produced",
                        d.name, g.name
                    ))
                })
            })
            .collect::<NResult<Vec<_>>>()?;
        self.env = outer;
        Ok(outs)
    }

    /// `If(cond)` with `cond` known at import: the taken branch, inlined.
    pub(super) fn if_node(&mut self, n: &Binder) -> NResult<()> {
        let name = n.name;
        let c = self.req(n, 0)?;
        let key = if self.known_scalar(c, "the condition")? != 0 {
            "then_branch"
        } else {
            "else_branch"
        };
        let g = n.attr_graph(key)?;
        if !g.inputs.is_empty() {
            return invalid(format!("the {key} has inputs"));
        }
        let outs = self.inline_graph(g, &[], &format!("{name}/{key}"))?;
        if outs.len() != n.outputs.len() {
            return invalid(format!(
                "the {key} has {} outputs, the node {}",
                outs.len(),
                n.outputs.len()
            ));
        }
        let outs: Vec<Option<ValueId>> = outs.into_iter().map(Some).collect();
        self.bind(n, &outs)
    }

    /// `Loop(M?, cond?, v_initial...)` unrolled: while `i < M` and `cond`,
    /// the body maps `(i, cond, v...)` to `(cond, v..., scan...)`; the
    /// results are the last `v`s and each scan output's values stacked on
    /// a new first axis. `M` and every condition must be known at import.
    pub(super) fn loop_node(&mut self, n: &Binder) -> NResult<()> {
        let name = n.name;
        let trip = match self.input(n, 0)? {
            Some(m) => Some(self.known_scalar(m, "the trip count")?),
            None => None,
        };
        let cond_in = self.input(n, 1)?;
        let mut go = match cond_in {
            Some(c) => self.known_scalar(c, "the condition")? != 0,
            None => true,
        };
        if trip.is_none() && cond_in.is_none() {
            return unsupported("a Loop with neither a trip count nor a condition does not end");
        }
        let mut carried = (2..n.inputs.len())
            .map(|i| self.req(n, i))
            .collect::<NResult<Vec<_>>>()?;
        let body = n.attr_graph("body")?;
        let nc = carried.len();
        if body.inputs.len() != nc + 2 || body.outputs.len() < nc + 1 {
            return invalid(format!(
                "the body takes {} inputs and gives {} outputs; a loop of {nc} carried values needs {} inputs and at least {} outputs",
                body.inputs.len(),
                body.outputs.len(),
                nc + 2,
                nc + 1
            ));
        }
        let nscan = body.outputs.len() - 1 - nc;
        if n.outputs.len() > nc + nscan {
            return invalid(format!(
                "{} outputs, the body gives {}",
                n.outputs.len(),
                nc + nscan
            ));
        }
        let mut cond = match cond_in {
            Some(c) => c,
            None => {
                let t = Tensor::from_bool(vec![], vec![true])?;
                let c = self.fresh_name(name);
                self.constant(t, &c)
            }
        };
        let mut scans: Vec<Vec<ValueId>> = vec![Vec::new(); nscan];
        let mut i = 0i64;
        while go && trip.is_none_or(|m| i < m) {
            if i >= MAX_UNROLLED_ITERATIONS {
                return unsupported(format!(
                    "more than {MAX_UNROLLED_ITERATIONS} iterations to unroll"
                ));
            }
            if self.g.nodes.len() > MAX_UNROLLED_OPS {
                return unsupported(format!(
                    "unrolling makes more than {MAX_UNROLLED_OPS} ops (at iteration {i})"
                ));
            }
            let c = self.fresh_name(name);
            let iter = self.constant(Tensor::scalar_i64(i), &c);
            let mut args = vec![iter, cond];
            args.extend(&carried);
            let outs = self.inline_graph(body, &args, &format!("{name}/iteration{i}"))?;
            cond = outs[0];
            // Without a condition input the body's condition is ignored.
            if cond_in.is_some() {
                go = self.known_scalar(cond, "the body's condition")? != 0;
            }
            carried = outs[1..=nc].to_vec();
            for (s, &v) in scans.iter_mut().zip(&outs[nc + 1..]) {
                s.push(v);
            }
            i += 1;
        }
        let mut results: Vec<Option<ValueId>> = carried.into_iter().map(Some).collect();
        for (k, values) in scans.iter().enumerate() {
            let stacked = if values.is_empty() {
                self.empty_scan(&body.outputs[nc + 1 + k], name)?
            } else {
                let mut rows = Vec::with_capacity(values.len());
                for &v in values {
                    let mut shape = vec![1];
                    shape.extend_from_slice(&self.ty(v).shape);
                    rows.push(self.reshape(v, shape, name)?);
                }
                if rows.len() == 1 {
                    rows[0]
                } else {
                    self.op(OpKind::Concat { axis: 0 }, &rows, name)?
                }
            };
            results.push(Some(stacked));
        }
        results.truncate(n.outputs.len());
        self.bind(n, &results)
    }

    /// A scan output of a loop that ran no iteration: `[0, dims...]` of the
    /// body output's declared type.
    fn empty_scan(&mut self, decl: &crate::model::ValueDecl, name: &str) -> NResult<ValueId> {
        let dt = crate::model::element_type(decl.data_type);
        let dims = decl.dims.as_ref().and_then(|d| {
            d.iter()
                .map(|x| match x {
                    Dim::Known(k) => Some(*k),
                    _ => None,
                })
                .collect::<Option<Vec<usize>>>()
        });
        let (Some(dt), Some(dims)) = (dt, dims) else {
            return unsupported(format!(
                "the loop ran no iteration and the body does not declare the type of its scan output `{}`",
                decl.name
            ));
        };
        let mut shape = vec![0];
        shape.extend(dims);
        let t = if dt.is_float() {
            Tensor::from_f32(shape, dt, vec![])?
        } else if dt == ElementType::I1 {
            Tensor::from_bool(shape, vec![])?
        } else {
            Tensor::from_i64(shape, dt, vec![])?
        };
        let c = self.fresh_name(name);
        Ok(self.constant(t, &c))
    }
}

/// A `Scan`'s per-input and per-output axes and directions (opset 9 on).
struct ScanLayout {
    input_axes: Vec<i64>,
    input_reverse: Vec<bool>,
    output_axes: Vec<i64>,
    output_reverse: Vec<bool>,
}

impl Importer {
    /// `values` (one per step, each of one shape) stacked on a new axis
    /// `axis` (negative: from the end of the result's rank).
    fn stack(&mut self, values: &[ValueId], axis: i64, name: &str) -> NResult<ValueId> {
        let shape = self.ty(values[0]).shape.clone();
        let axis = norm_axis(axis, shape.len() + 1)?;
        let mut one = shape.clone();
        one.insert(axis, 1);
        let mut rows = Vec::with_capacity(values.len());
        for &v in values {
            if self.ty(v).shape != shape {
                return unsupported(format!(
                    "a scan output changes shape between steps ({:?} then {:?})",
                    shape,
                    self.ty(v).shape
                ));
            }
            rows.push(self.reshape(v, one.clone(), name)?);
        }
        if rows.len() == 1 {
            return Ok(rows[0]);
        }
        self.op(OpKind::Concat { axis }, &rows, name)
    }

    /// One scan (opset 9 semantics) unrolled: each step `t` takes slice `t`
    /// (from the end for a reversed input) of every scan input along its
    /// axis, maps `(states..., slices...)` to `(states..., outputs...)`;
    /// returns the last states and the stacked outputs.
    fn scan_steps(
        &mut self,
        body: &Graph,
        mut states: Vec<ValueId>,
        inputs: &[ValueId],
        layout: &ScanLayout,
        scope: &str,
        name: &str,
    ) -> NResult<Vec<ValueId>> {
        let ns = states.len();
        if body.inputs.len() != ns + inputs.len() || body.outputs.len() < ns {
            return invalid(format!(
                "the body takes {} inputs and gives {} outputs, for {ns} states and {} scan inputs",
                body.inputs.len(),
                body.outputs.len(),
                inputs.len()
            ));
        }
        let nout = body.outputs.len() - ns;
        let mut axes = Vec::with_capacity(inputs.len());
        let mut len = None;
        for (k, &x) in inputs.iter().enumerate() {
            let shape = self.ty(x).shape.clone();
            let a = norm_axis(*layout.input_axes.get(k).unwrap_or(&0), shape.len())?;
            match len {
                Some(l) if l != shape[a] => {
                    return invalid(format!(
                        "scan inputs of different lengths ({l} and {})",
                        shape[a]
                    ))
                }
                _ => len = Some(shape[a]),
            }
            axes.push(a);
        }
        let len = len.unwrap_or(0);
        if len as i64 > MAX_UNROLLED_ITERATIONS {
            return unsupported(format!(
                "a scan of {len} steps (at most {MAX_UNROLLED_ITERATIONS} are unrolled)"
            ));
        }
        let mut outputs: Vec<Vec<ValueId>> = vec![Vec::new(); nout];
        for t in 0..len {
            if self.g.nodes.len() > MAX_UNROLLED_OPS {
                return unsupported(format!(
                    "unrolling makes more than {MAX_UNROLLED_OPS} ops (at step {t})"
                ));
            }
            let mut args = states.clone();
            for (k, &x) in inputs.iter().enumerate() {
                let at = if layout.input_reverse.get(k).copied().unwrap_or(false) {
                    len - 1 - t
                } else {
                    t
                };
                let c = self.fresh_name(name);
                let index = self.constant(Tensor::scalar_i64(at as i64), &c);
                args.push(self.op(OpKind::Gather { axis: axes[k] }, &[x, index], name)?);
            }
            let outs = self.inline_graph(body, &args, &format!("{scope}/step{t}"))?;
            states = outs[..ns].to_vec();
            for (o, &v) in outputs.iter_mut().zip(&outs[ns..]) {
                o.push(v);
            }
        }
        let mut results = states;
        for (k, mut values) in outputs.into_iter().enumerate() {
            if values.is_empty() {
                return unsupported("a scan of no steps (its outputs' shapes are unknown)");
            }
            if layout.output_reverse.get(k).copied().unwrap_or(false) {
                values.reverse();
            }
            let axis = *layout.output_axes.get(k).unwrap_or(&0);
            results.push(self.stack(&values, axis, name)?);
        }
        Ok(results)
    }

    /// `Scan`: from opset 9, `(states..., scan inputs...)` with per-input
    /// axes and directions; opset 8, `(sequence_lens, states..., scan
    /// inputs...)` with a batch dimension first (each batch scanned along
    /// axis 1), every sequence its full length.
    pub(super) fn scan_node(&mut self, n: &Binder) -> NResult<()> {
        let name = n.name;
        let body = n.attr_graph("body")?;
        let m = n.attr_i("num_scan_inputs", -1)?;
        let dirs = |key: &str| -> NResult<Vec<bool>> {
            Ok(n.attr_ints(key)?
                .unwrap_or_default()
                .iter()
                .map(|&d| d != 0)
                .collect())
        };
        let first = if n.opset < 9 { 1 } else { 0 };
        let operands = (first..n.inputs.len())
            .map(|i| self.req(n, i))
            .collect::<NResult<Vec<_>>>()?;
        if m < 1 || m as usize > operands.len() {
            return invalid(format!(
                "num_scan_inputs {m} must be in [1, {}] (the operands)",
                operands.len()
            ));
        }
        let ns = operands.len() - m as usize;
        let (states, inputs) = operands.split_at(ns);
        let results = if n.opset >= 9 {
            let layout = ScanLayout {
                input_axes: n.attr_ints("scan_input_axes")?.unwrap_or_default(),
                input_reverse: dirs("scan_input_directions")?,
                output_axes: n.attr_ints("scan_output_axes")?.unwrap_or_default(),
                output_reverse: dirs("scan_output_directions")?,
            };
            self.scan_steps(body, states.to_vec(), inputs, &layout, name, name)?
        } else {
            self.scan_batched(n, body, states, inputs, dirs("directions")?, name)?
        };
        if n.outputs.len() > results.len() {
            return invalid(format!(
                "{} outputs, the body gives {}",
                n.outputs.len(),
                results.len()
            ));
        }
        let results: Vec<Option<ValueId>> = results.into_iter().map(Some).collect();
        self.bind(n, &results)
    }

    /// Opset 8's `Scan`: batch `b` of every operand scanned on its own
    /// (axis 1 of the operands is the sequence), the results restacked.
    fn scan_batched(
        &mut self,
        n: &Binder,
        body: &Graph,
        states: &[ValueId],
        inputs: &[ValueId],
        reverse: Vec<bool>,
        name: &str,
    ) -> NResult<Vec<ValueId>> {
        let all = states.iter().chain(inputs);
        let batch = match all.clone().next() {
            Some(&v) if !self.ty(v).shape.is_empty() => self.ty(v).shape[0],
            _ => return invalid("operands need a batch dimension"),
        };
        if all
            .clone()
            .any(|&v| self.ty(v).shape.first() != Some(&batch))
        {
            return invalid("the operands' batch dimensions differ");
        }
        if let Some(lens) = self.input(n, 0)? {
            let Some(t) = self.consts.get(&lens).or_else(|| self.special.get(&lens)) else {
                return unsupported("sequence_lens not known at import");
            };
            let full = inputs
                .first()
                .and_then(|&x| self.ty(x).shape.get(1).copied());
            if t.to_i64_vec().iter().any(|&l| Some(l as usize) != full) {
                return unsupported("sequences shorter than the scan inputs");
            }
        }
        let layout = ScanLayout {
            input_axes: vec![0; inputs.len()],
            input_reverse: reverse,
            output_axes: Vec::new(),
            output_reverse: Vec::new(),
        };
        let mut per_batch: Vec<Vec<ValueId>> = Vec::with_capacity(batch);
        for b in 0..batch {
            let c = self.fresh_name(name);
            let index = self.constant(Tensor::scalar_i64(b as i64), &c);
            let pick =
                |s: &mut Self, v: ValueId| s.op(OpKind::Gather { axis: 0 }, &[v, index], name);
            let st = states
                .iter()
                .map(|&v| pick(self, v))
                .collect::<NResult<Vec<_>>>()?;
            let xs = inputs
                .iter()
                .map(|&v| pick(self, v))
                .collect::<NResult<Vec<_>>>()?;
            let scope = format!("{name}/batch{b}");
            per_batch.push(self.scan_steps(body, st, &xs, &layout, &scope, name)?);
        }
        let count = per_batch.first().map_or(0, Vec::len);
        let mut results = Vec::with_capacity(count);
        for k in 0..count {
            let values: Vec<ValueId> = per_batch.iter().map(|r| r[k]).collect();
            results.push(self.stack(&values, 0, name)?);
        }
        Ok(results)
    }
}
