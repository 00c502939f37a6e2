//! The ONNX op -> dialect op mapping (one arm per ONNX op type).

use ipu_reference::{
    broadcast_shapes, evaluate, normalize_slice, ElementType, GeluApproximation, OpKind, PadMode,
    ReduceKind, ScatterReduction, Tensor,
};

use super::importer::{
    attr, attr_f, attr_i, attr_ints, attr_s, check_alloc, invalid, norm_axis, numel, unsupported,
    Importer, NResult, NodeErr,
};
use super::ValueId;
use crate::model::{data_type_name, element_type, Attribute, Node};

impl Importer {
    pub(super) fn map_node(&mut self, n: &Node, name: &str) -> NResult<()> {
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
                        let total = v.iter().try_fold(0i64, |a, &d| a.checked_add(d));
                        if v.iter().any(|&d| d < 0) || total != Some(dim as i64) {
                            return invalid(format!("split sizes {v:?} do not sum to {dim}"));
                        }
                        v.iter().map(|&d| d as usize).collect()
                    }
                    None => {
                        let k = if opset >= 18 {
                            attr_i(n, "num_outputs", n.outputs.len() as i64)?
                        } else {
                            n.outputs.len() as i64
                        };
                        if k != n.outputs.len() as i64 {
                            return invalid(format!(
                                "num_outputs {k} differs from {} outputs",
                                n.outputs.len()
                            ));
                        }
                        let k = k as usize;
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
                check_alloc(&[rows, cols], ElementType::I64)?;
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
                        check_alloc(&shape, self.ty(y).dtype)?;
                        let z = Tensor::zeros(shape, self.ty(y).dtype);
                        let zn = self.fresh_name(name);
                        y = self.constant(z, &zn);
                    } else if k > 1 << 20 {
                        return invalid(format!("repeat count {k} is too large"));
                    } else if k > 1 {
                        let mut shape = self.ty(y).shape.clone();
                        shape[axis] = shape[axis].saturating_mul(k.min(u32::MAX as i64) as usize);
                        check_alloc(&shape, self.ty(y).dtype)?;
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
            "ScatterElements" | "Scatter" | "ScatterND" => {
                let x = self.req(n, 0)?;
                let rank = self.ty(x).shape.len();
                let reduction = match attr_s(n, "reduction")?.as_deref() {
                    None | Some("none") => ScatterReduction::None,
                    Some("add") => ScatterReduction::Add,
                    Some("mul") => ScatterReduction::Mul,
                    Some("max") => ScatterReduction::Max,
                    Some("min") => ScatterReduction::Min,
                    Some(r) => return unsupported(format!("reduction `{r}`")),
                };
                let op = if n.op_type == "ScatterND" {
                    OpKind::ScatterNd { reduction }
                } else {
                    OpKind::ScatterElements {
                        axis: norm_axis(attr_i(n, "axis", 0)?, rank)?,
                        reduction,
                    }
                };
                let (i, u) = (self.req(n, 1)?, self.req(n, 2)?);
                let y = self.op(op, &[x, i, u], name)?;
                self.bind(n, &[Some(y)])
            }
            "TensorScatter" => {
                let past = self.req(n, 0)?;
                let upd = self.req(n, 1)?;
                let ps = self.ty(past).shape.clone();
                let us = self.ty(upd).shape.clone();
                let rank = ps.len();
                if rank < 2 || us.len() != rank {
                    return invalid("cache and update must have one rank >= 2");
                }
                let axis = norm_axis(attr_i(n, "axis", -2)?, rank)?;
                if axis == 0 {
                    return invalid("axis must not be the batch axis");
                }
                let circular = match attr_s(n, "mode")?.as_deref() {
                    None | Some("linear") => false,
                    Some("circular") => true,
                    Some(m) => return unsupported(format!("mode `{m}`")),
                };
                let mut bshape = vec![1usize; rank];
                bshape[0] = ps[0];
                let start = match self.input(n, 2)? {
                    Some(w) => {
                        let w = self.cast(w, ElementType::I64, name)?;
                        self.reshape(w, bshape, name)?
                    }
                    None => self.scalar(0.0, ElementType::I64, name)?,
                };
                let iota = self.iota(&us, axis, name)?;
                let mut idx = self.op(OpKind::Add, &[start, iota], name)?;
                if circular {
                    let m = self.scalar(ps[axis] as f32, ElementType::I64, name)?;
                    idx = self.op(OpKind::Mod { fmod: false }, &[idx, m], name)?;
                }
                let idx = self.op(OpKind::Broadcast { shape: us.clone() }, &[idx], name)?;
                let y = self.op(
                    OpKind::ScatterElements {
                        axis,
                        reduction: ScatterReduction::None,
                    },
                    &[past, idx, upd],
                    name,
                )?;
                self.bind(n, &[Some(y)])
            }
            "CenterCropPad" => {
                let x = self.req(n, 0)?;
                let sid = self.req(n, 1)?;
                let target = self.static_ints(sid)?;
                let shape = self.ty(x).shape.clone();
                let rank = shape.len();
                let axes: Vec<usize> = match attr_ints(n, "axes")? {
                    Some(a) => a
                        .iter()
                        .map(|&v| norm_axis(v, rank))
                        .collect::<NResult<_>>()?,
                    None => (0..rank).collect(),
                };
                if axes.len() != target.len() || target.iter().any(|&t| t < 0) {
                    return invalid("shape must have one non-negative size per axis");
                }
                // Negative pads crop: centred, the odd element on the right.
                let mut low = vec![0i64; rank];
                let mut high = vec![0i64; rank];
                for (&a, &t) in axes.iter().zip(&target) {
                    let diff = t - shape[a] as i64;
                    if diff >= 0 {
                        low[a] = diff / 2;
                        high[a] = diff - diff / 2;
                    } else {
                        let crop = -diff;
                        low[a] = -(crop / 2);
                        high[a] = -(crop - crop / 2);
                    }
                }
                one(
                    self,
                    OpKind::Pad {
                        low,
                        high,
                        mode: PadMode::Constant,
                        value: 0.0,
                    },
                )
            }
            "Tan" | "Sinh" | "Cosh" | "Asinh" | "Acosh" | "Atanh" => {
                let x = self.req(n, 0)?;
                let dt = self.ty(x).dtype;
                let one_ = self.scalar(1.0, dt, name)?;
                let half = self.scalar(0.5, dt, name)?;
                let y = match n.op_type.as_str() {
                    "Tan" => {
                        let s = self.op(OpKind::Sin, &[x], name)?;
                        let c = self.op(OpKind::Cos, &[x], name)?;
                        self.op(OpKind::Div, &[s, c], name)?
                    }
                    "Sinh" | "Cosh" => {
                        let e = self.op(OpKind::Exp, &[x], name)?;
                        let nx = self.op(OpKind::Neg, &[x], name)?;
                        let en = self.op(OpKind::Exp, &[nx], name)?;
                        let k = if n.op_type == "Sinh" {
                            OpKind::Sub
                        } else {
                            OpKind::Add
                        };
                        let t = self.op(k, &[e, en], name)?;
                        self.op(OpKind::Mul, &[t, half], name)?
                    }
                    "Asinh" | "Acosh" => {
                        let x2 = self.op(OpKind::Mul, &[x, x], name)?;
                        let k = if n.op_type == "Asinh" {
                            OpKind::Add
                        } else {
                            OpKind::Sub
                        };
                        let r = self.op(k, &[x2, one_], name)?;
                        let sq = self.op(OpKind::Sqrt, &[r], name)?;
                        let t = self.op(OpKind::Add, &[x, sq], name)?;
                        self.op(OpKind::Log, &[t], name)?
                    }
                    _ => {
                        let p = self.op(OpKind::Add, &[one_, x], name)?;
                        let q = self.op(OpKind::Sub, &[one_, x], name)?;
                        let d = self.op(OpKind::Div, &[p, q], name)?;
                        let l = self.op(OpKind::Log, &[d], name)?;
                        self.op(OpKind::Mul, &[l, half], name)?
                    }
                };
                self.bind(n, &[Some(y)])
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
                check_alloc(&oshape, ElementType::I64)?;
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
            "GroupNormalization" => {
                let x = self.req(n, 0)?;
                let (scale, bias) = (self.req(n, 1)?, self.req(n, 2)?);
                let ty = self.ty(x).clone();
                let shape = ty.shape.clone();
                if shape.len() < 2 {
                    return invalid("input must have rank >= 2");
                }
                let g = attr_i(n, "num_groups", 0)?;
                let c = shape[1];
                if g <= 0 || c % g as usize != 0 {
                    return invalid(format!("num_groups {g} does not divide {c} channels"));
                }
                let g = g as usize;
                let eps = attr_f(n, "epsilon", 1e-5)?;
                let stash = match attr_i(n, "stash_type", 1)? {
                    1 => ElementType::F32,
                    t => element_type(t as i32).unwrap_or(ElementType::F32),
                };
                let xs = self.cast(x, stash, name)?;
                let grouped = vec![shape[0], g, numel(&shape[1..]) / g];
                let xg = self.reshape(xs, grouped, name)?;
                let ln = self.op(
                    OpKind::LayerNorm {
                        axis: 2,
                        epsilon: eps,
                        has_scale: false,
                        has_bias: false,
                    },
                    &[xg],
                    name,
                )?;
                let y = self.reshape(ln, shape.clone(), name)?;
                let y = self.cast(y, ty.dtype, name)?;
                let mut ps = vec![1usize; shape.len() - 1];
                ps[0] = c;
                if self.ty(scale).numel() != c || self.ty(bias).numel() != c {
                    return unsupported("scale and bias must have one value per channel");
                }
                let sc = self.reshape(scale, ps.clone(), name)?;
                let bi = self.reshape(bias, ps, name)?;
                let y = self.op(OpKind::Mul, &[y, sc], name)?;
                let y = self.op(OpKind::Add, &[y, bi], name)?;
                self.bind(n, &[Some(y)])
            }
            "MeanVarianceNormalization" => {
                let x = self.req(n, 0)?;
                let axes = attr_ints(n, "axes")?.unwrap_or_else(|| vec![0, 2, 3]);
                let mean =
                    self.reduce(x, ReduceKind::Mean, Some(axes.clone()), true, false, name)?;
                let d = self.op(OpKind::Sub, &[x, mean], name)?;
                let d2 = self.op(OpKind::Mul, &[d, d], name)?;
                let var = self.reduce(d2, ReduceKind::Mean, Some(axes), true, false, name)?;
                let sd = self.op(OpKind::Sqrt, &[var], name)?;
                let y = self.op(OpKind::Div, &[d, sd], name)?;
                self.bind(n, &[Some(y)])
            }
            "BitShift" => {
                let (x, s) = (self.req(n, 0)?, self.req(n, 1)?);
                let dt = self.ty(x).dtype;
                if !matches!(
                    dt,
                    ElementType::U8 | ElementType::U16 | ElementType::U32 | ElementType::U64
                ) {
                    return invalid(format!("BitShift needs an unsigned type, got {dt}"));
                }
                let two = self.scalar(2.0, dt, name)?;
                let p = self.op(OpKind::Pow, &[two, s], name)?;
                let y = match attr_s(n, "direction")?.as_deref() {
                    Some("LEFT") => self.op(OpKind::Mul, &[x, p], name)?,
                    Some("RIGHT") => self.op(OpKind::Div, &[x, p], name)?,
                    d => return invalid(format!("direction {d:?}")),
                };
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
                if b <= 0 || b > 1 << 16 {
                    return invalid("blocksize must be in 1..=65536");
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
                            vec![nb, c2, h.saturating_mul(b), w.saturating_mul(b)],
                        )
                    } else {
                        (
                            vec![nb, b, b, c2, h, w],
                            vec![0, 3, 4, 1, 5, 2],
                            vec![nb, c2, h.saturating_mul(b), w.saturating_mul(b)],
                        )
                    }
                } else {
                    if h % b != 0 || w % b != 0 {
                        return invalid("spatial dims not divisible by blocksize");
                    }
                    (
                        vec![nb, c, h / b, b, w / b, b],
                        vec![0, 3, 5, 1, 2, 4],
                        vec![nb, c.saturating_mul(b * b), h / b, w / b],
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
                check_alloc(&s, ElementType::I64)?;
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
            "GatherND" => self.gather_nd(n, name),
            "If" => self.if_node(n, name),
            "Loop" => self.loop_node(n, name),
            "Scan" => self.scan_node(n, name),
            "NonZero" => self.non_zero(n, name),
            "MatMulInteger" => self.matmul_integer(n, name),
            "QLinearMatMul" => self.qlinear_matmul(n, name),
            "Attention" => self.attention(n, name),
            "Einsum" => self.einsum(n, name),
            "NegativeLogLikelihoodLoss" | "SoftmaxCrossEntropyLoss" => self.nll_loss(n, name),
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
            "Sin" => one(self, OpKind::Sin),
            "Cos" => one(self, OpKind::Cos),
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
                check_alloc(&shape, ElementType::I64)?;
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
                if ta.numel() != 1 || tb.numel() != 1 || tc.numel() != 1 {
                    return invalid("start, limit and delta must be scalars");
                }
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
                    check_alloc(&shape, ElementType::I1)?;
                    let t = Tensor::from_bool(shape.clone(), vec![true; numel(&shape)])?;
                    outs[1] = Some(self.constant(t, name));
                }
                self.bind(n, &outs)
            }
            other => unsupported(format!("no mapping for {other}")),
        }
    }
}
