//! ONNX ops mapped to compositions of many dialect ops: `Attention`,
//! `RotaryEmbedding`, the losses and `Einsum`.

use ipu_reference::{ElementType, OpKind, PadMode, ReduceKind, Tensor};

use super::super::importer::{check_alloc, invalid, unsupported, Importer, NResult, NodeErr};
use super::{op, AttrKind as A, Binder, OnnxOp};
use crate::import::ValueId;
use crate::model::element_type;

const ATTENTION: &[(&str, A)] = &[
    ("q_num_heads", A::Int),
    ("kv_num_heads", A::Int),
    ("scale", A::Float),
    ("softcap", A::Float),
    ("is_causal", A::Int),
    ("softmax_precision", A::Int),
    ("qk_matmul_output_mode", A::Int),
];
const ROTARY: &[(&str, A)] = &[
    ("num_heads", A::Int),
    ("rotary_embedding_dim", A::Int),
    ("interleaved", A::Int),
];
const LOSS: &[(&str, A)] = &[("ignore_index", A::Int), ("reduction", A::String)];

pub(super) const OPS: &[OnnxOp] = &[
    op("Attention", 23, ATTENTION, Importer::attention),
    op("RotaryEmbedding", 23, ROTARY, Importer::rotary),
    op("NegativeLogLikelihoodLoss", 12, LOSS, Importer::nll_loss),
    op("SoftmaxCrossEntropyLoss", 12, LOSS, Importer::nll_loss),
    op("Einsum", 12, &[("equation", A::String)], Importer::einsum),
];

impl Importer {
    /// ONNX `Attention` (opset 23/24) composed from dialect ops, following
    /// the operator's function body: optional KV-cache concat, GQA head
    /// repetition, sqrt(scale) on Q and K, softcap, mask/causal bias,
    /// softmax (in `softmax_precision`), and the optional QK output.
    pub(super) fn attention(&mut self, n: &Binder) -> NResult<()> {
        let name = n.name;
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
                let qh = n.attr_i("q_num_heads", 0)?;
                let kvh = n.attr_i("kv_num_heads", 0)?;
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
        let past_len = past_k.map_or(0, |p| self.ty(p).shape.get(2).copied().unwrap_or(0));
        let qs = self.ty(q4).shape.clone();
        let ks = self.ty(pk).shape.clone();
        let vs = self.ty(pv).shape.clone();
        if qs.len() != 4 || ks.len() != 4 || vs.len() != 4 {
            return invalid("Q, K and V must all be 3-D or all 4-D");
        }
        if ks[0] != qs[0] || vs[0] != qs[0] || vs[1] != ks[1] || vs[2] != ks[2] || ks[3] != qs[3] {
            return invalid(format!("inconsistent Q/K/V shapes {qs:?}, {ks:?}, {vs:?}"));
        }
        check_alloc(&[qs[2], ks[2]], ElementType::I64)?;
        check_alloc(&[qs[0], ks[2]], ElementType::I64)?;
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
        let scale = match n.attr("scale")? {
            Some(_) => n.attr_f("scale", 1.0)?,
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
        let softcap = n.attr_f("softcap", 0.0)?;
        if softcap > 0.0 {
            let c = self.scalar(softcap, dt, name)?;
            let d = self.op(OpKind::Div, &[qk, c], name)?;
            let t = self.op(OpKind::Tanh, &[d], name)?;
            qk = self.op(OpKind::Mul, &[t, c], name)?;
        }
        stages.push(qk);
        let bias = self.attention_bias(n, [mask, nonpad], [b, sq, total, past_len], dt)?;
        if let Some(bv) = bias {
            qk = self.op(OpKind::Add, &[qk, bv], name)?;
        }
        stages.push(qk);
        let sm_ty = match n.attr_i("softmax_precision", 0)? as i32 {
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
        let mode = n.attr_i("qk_matmul_output_mode", 0)?;
        let qk_out = match stages.get(mode as usize) {
            Some(&v) => v,
            None => return invalid(format!("qk_matmul_output_mode {mode}")),
        };
        self.bind(n, &[Some(y), Some(pk), Some(pv), Some(qk_out)])
    }

    /// The additive bias of `Attention`'s scores: the mask (a boolean one
    /// as 0/-inf; padded with -inf to the total length), the causal mask
    /// (offset by the cached length) and the `nonpad_kv_seqlen` mask,
    /// summed; `None` without any.
    fn attention_bias(
        &mut self,
        n: &Binder,
        [mask, nonpad]: [Option<ValueId>; 2],
        [b, sq, total, past_len]: [usize; 4],
        dt: ElementType,
    ) -> NResult<Option<ValueId>> {
        let name = n.name;
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
        if n.attr_i("is_causal", 0)? != 0 {
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
        Ok(bias)
    }

    /// ONNX `RotaryEmbedding` (opset 23) composed from dialect ops.
    pub(super) fn rotary(&mut self, n: &Binder) -> NResult<()> {
        let name = n.name;
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
                let h = n.attr_i("num_heads", 0)?;
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
        let rot = match n.attr_i("rotary_embedding_dim", 0)? {
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
        let interleaved = n.attr_i("interleaved", 0)? != 0;
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

    /// `NegativeLogLikelihoodLoss` and `SoftmaxCrossEntropyLoss`
    /// (= log_softmax over axis 1, then NLL), with class weights,
    /// `ignore_index` and none/sum/mean reduction.
    pub(super) fn nll_loss(&mut self, n: &Binder) -> NResult<()> {
        let name = n.name;
        let x = self.req(n, 0)?;
        let target = self.req(n, 1)?;
        let weight = self.input(n, 2)?;
        let xt = self.ty(x).clone();
        if xt.shape.len() < 2 {
            return invalid("input must have rank >= 2");
        }
        let sce = n.op_type == "SoftmaxCrossEntropyLoss";
        let logp = if sce {
            self.op(OpKind::LogSoftmax { axis: 1 }, &[x], name)?
        } else {
            x
        };
        let tshape = self.ty(target).shape.clone();
        if tshape.len() + 1 != xt.shape.len() {
            return invalid("target must have the input's rank minus one");
        }
        let t = self.cast(target, ElementType::I64, name)?;
        let ignore = match n.attr("ignore_index")? {
            Some(_) => Some(n.attr_i("ignore_index", 0)?),
            None => None,
        };
        let valid = match ignore {
            Some(ig) => {
                let igv = self.scalar(ig as f32, ElementType::I64, name)?;
                let eq = self.op(OpKind::Equal, &[t, igv], name)?;
                Some(self.op(OpKind::Not, &[eq], name)?)
            }
            None => None,
        };
        let t_safe = match valid {
            Some(v) => {
                let z = self.scalar(0.0, ElementType::I64, name)?;
                self.op(OpKind::Select, &[v, t, z], name)?
            }
            None => t,
        };
        let mut ushape = tshape.clone();
        ushape.insert(1, 1);
        let tu = self.reshape(t_safe, ushape, name)?;
        let g = self.op(OpKind::GatherElements { axis: 1 }, &[logp, tu], name)?;
        let g = self.reshape(g, tshape.clone(), name)?;
        let mut loss = self.op(OpKind::Neg, &[g], name)?;
        let dt = xt.dtype;
        let mut w = match weight {
            Some(wv) => Some(self.op(OpKind::Gather { axis: 0 }, &[wv, t_safe], name)?),
            None => None,
        };
        if let Some(v) = valid {
            let one = self.scalar(1.0, dt, name)?;
            let zero = self.scalar(0.0, dt, name)?;
            let base = match w {
                Some(w0) => w0,
                None => self.op(
                    OpKind::Broadcast {
                        shape: tshape.clone(),
                    },
                    &[one],
                    name,
                )?,
            };
            w = Some(self.op(OpKind::Select, &[v, base, zero], name)?);
        }
        if let Some(wv) = w {
            loss = self.op(OpKind::Mul, &[loss, wv], name)?;
        }
        let all: Vec<i64> = (0..tshape.len() as i64).collect();
        let y = match n.attr_s("reduction")?.as_deref().unwrap_or("mean") {
            "none" => loss,
            "sum" => self.reduce(loss, ReduceKind::Sum, Some(all), false, false, name)?,
            "mean" => {
                let s =
                    self.reduce(loss, ReduceKind::Sum, Some(all.clone()), false, false, name)?;
                match w {
                    Some(wv) => {
                        let ws = self.reduce(wv, ReduceKind::Sum, Some(all), false, false, name)?;
                        self.op(OpKind::Div, &[s, ws], name)?
                    }
                    None => {
                        let cnt = self.scalar(tshape.iter().product::<usize>() as f32, dt, name)?;
                        self.op(OpKind::Div, &[s, cnt], name)?
                    }
                }
            }
            r => return unsupported(format!("reduction `{r}`")),
        };
        let outs = if sce {
            vec![Some(y), Some(logp)]
        } else {
            vec![Some(y)]
        };
        self.bind(n, &outs)
    }

    /// `Einsum` with one or two operands: diagonals (repeated labels),
    /// summed-out labels, then one batched matmul between transposes and
    /// reshapes. Ellipsis dims are supported; batch dims must agree.
    pub(super) fn einsum(&mut self, n: &Binder) -> NResult<()> {
        let name = n.name;
        let eq: String = n
            .attr_s("equation")?
            .ok_or(NodeErr::Invalid("missing equation".into()))?
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let ins = (0..n.inputs.len())
            .map(|i| self.req(n, i))
            .collect::<NResult<Vec<_>>>()?;
        if ins.is_empty() || ins.len() > 2 {
            return unsupported(format!("Einsum with {} operands", ins.len()));
        }
        let (lhs, rhs) = match eq.split_once("->") {
            Some((l, r)) => (l.to_string(), Some(r.to_string())),
            None => (eq.clone(), None),
        };
        let terms: Vec<&str> = lhs.split(',').collect();
        if terms.len() != ins.len() {
            return invalid(format!("equation `{eq}` has {} terms", terms.len()));
        }
        // Ellipsis dims get the placeholder labels '0', '1', ... (digits are
        // not valid einsum labels), right-aligned across operands.
        let letters = |t: &str| t.replace("...", "").chars().count();
        let mut ell = 0usize;
        for (t, &v) in terms.iter().zip(&ins) {
            let r = self.ty(v).shape.len();
            if t.contains("...") {
                ell = ell.max(r.saturating_sub(letters(t)));
            }
        }
        if ell > 10 {
            return unsupported("more than 10 ellipsis dimensions");
        }
        let ph: Vec<char> = (0..ell).map(|i| (b'0' + i as u8) as char).collect();
        let expand = |t: &str, rank: usize| -> NResult<Vec<char>> {
            let mut out = Vec::new();
            for (i, part) in t.split("...").enumerate() {
                if i == 1 {
                    let e = rank.saturating_sub(letters(t));
                    out.extend_from_slice(&ph[ell - e..]);
                } else if i > 1 {
                    return invalid("more than one ellipsis in a term");
                }
                for c in part.chars() {
                    if !c.is_ascii_alphabetic() {
                        return invalid(format!("bad label `{c}`"));
                    }
                    out.push(c);
                }
            }
            if out.len() != rank {
                return invalid(format!("term `{t}` does not match rank {rank}"));
            }
            Ok(out)
        };
        let mut ops: Vec<(ValueId, Vec<char>)> = Vec::new();
        for (t, &v) in terms.iter().zip(&ins) {
            let r = self.ty(v).shape.len();
            ops.push((v, expand(t, r)?));
        }
        let out_labels: Vec<char> = match &rhs {
            Some(r) => {
                let mut o = Vec::new();
                for (i, part) in r.split("...").enumerate() {
                    if i == 1 {
                        o.extend_from_slice(&ph);
                    } else if i > 1 {
                        return invalid("more than one ellipsis in the output");
                    }
                    o.extend(part.chars());
                }
                o
            }
            None => {
                let mut once: Vec<char> = Vec::new();
                let all: Vec<char> = ops.iter().flat_map(|(_, l)| l.clone()).collect();
                for &c in &all {
                    if c.is_ascii_alphabetic() && all.iter().filter(|&&d| d == c).count() == 1 {
                        once.push(c);
                    }
                }
                once.sort_unstable();
                let mut o = ph.clone();
                o.extend(once);
                o
            }
        };
        self.einsum_diagonals(&mut ops, name)?;
        // Sum out labels used by no other operand and not in the output.
        for k in 0..ops.len() {
            let others: Vec<char> = ops
                .iter()
                .enumerate()
                .filter(|(o, _)| *o != k)
                .flat_map(|(_, (_, l))| l.clone())
                .collect();
            let (v, labels) = ops[k].clone();
            let axes: Vec<i64> = labels
                .iter()
                .enumerate()
                .filter(|(_, c)| !out_labels.contains(c) && !others.contains(c))
                .map(|(a, _)| a as i64)
                .collect();
            if !axes.is_empty() {
                let y = self.reduce(v, ReduceKind::Sum, Some(axes.clone()), false, false, name)?;
                let nl = labels
                    .iter()
                    .enumerate()
                    .filter(|(a, _)| !axes.contains(&(*a as i64)))
                    .map(|(_, &c)| c)
                    .collect();
                ops[k] = (y, nl);
            }
        }
        let (y, labels) = if ops.len() == 1 {
            ops[0].clone()
        } else {
            self.einsum_contract(ops[0].clone(), ops[1].clone(), &out_labels, name)?
        };
        if labels.len() != out_labels.len() || !out_labels.iter().all(|c| labels.contains(c)) {
            return invalid(format!("output labels of `{eq}` do not match"));
        }
        let perm: Vec<usize> = out_labels
            .iter()
            .filter_map(|c| labels.iter().position(|x| x == c))
            .collect();
        let y = if perm.iter().enumerate().all(|(i, &p)| i == p) {
            y
        } else {
            self.op(OpKind::Transpose { perm }, &[y], name)?
        };
        self.bind(n, &[Some(y)])
    }

    /// Takes the diagonal of every label an operand repeats (`ii`): the
    /// two axes moved last, flattened, and sliced with stride `d + 1`.
    fn einsum_diagonals(&mut self, ops: &mut [(ValueId, Vec<char>)], name: &str) -> NResult<()> {
        for (v, labels) in ops.iter_mut() {
            while let Some((i, j)) = (0..labels.len()).find_map(|i| {
                (i + 1..labels.len())
                    .find(|&j| labels[j] == labels[i])
                    .map(|j| (i, j))
            }) {
                let shape = self.ty(*v).shape.clone();
                if shape[i] != shape[j] {
                    return invalid("repeated label with different sizes");
                }
                let r = shape.len();
                let mut perm: Vec<usize> = (0..r).filter(|&a| a != i && a != j).collect();
                perm.push(i);
                perm.push(j);
                let t = self.op(OpKind::Transpose { perm: perm.clone() }, &[*v], name)?;
                let d = shape[i];
                let mut flat: Vec<usize> = perm[..r - 2].iter().map(|&a| shape[a]).collect();
                flat.push(d * d);
                let f = self.reshape(t, flat.clone(), name)?;
                let rr = flat.len();
                let mut starts = vec![0i64; rr];
                let mut ends: Vec<i64> = flat.iter().map(|&x| x as i64).collect();
                let mut steps = vec![1i64; rr];
                starts[rr - 1] = 0;
                ends[rr - 1] = (d * d) as i64;
                steps[rr - 1] = d as i64 + 1;
                *v = self.op(
                    OpKind::Slice {
                        starts,
                        ends,
                        steps,
                    },
                    &[f],
                    name,
                )?;
                let mut nl: Vec<char> = perm[..r - 2].iter().map(|&a| labels[a]).collect();
                nl.push(labels[i]);
                *labels = nl;
            }
        }
        Ok(())
    }

    /// The product of two einsum operands as one batched matmul: each
    /// arranged as `[batch, free, contracted]`, the result reshaped to
    /// `batch ++ left ++ right` (its labels returned).
    fn einsum_contract(
        &mut self,
        (a, la): (ValueId, Vec<char>),
        (b, lb): (ValueId, Vec<char>),
        out_labels: &[char],
        name: &str,
    ) -> NResult<(ValueId, Vec<char>)> {
        let size_of = |s: &Self, v: ValueId, labels: &[char], c: char| -> usize {
            labels
                .iter()
                .position(|&l| l == c)
                .map_or(1, |p| s.ty(v).shape[p])
        };
        let batch: Vec<char> = la
            .iter()
            .copied()
            .filter(|c| lb.contains(c) && out_labels.contains(c))
            .collect();
        let contr: Vec<char> = la
            .iter()
            .copied()
            .filter(|c| lb.contains(c) && !out_labels.contains(c))
            .collect();
        let left: Vec<char> = la.iter().copied().filter(|c| !lb.contains(c)).collect();
        let right: Vec<char> = lb.iter().copied().filter(|c| !la.contains(c)).collect();
        for &c in batch.iter().chain(&contr) {
            if size_of(self, a, &la, c) != size_of(self, b, &lb, c) {
                return unsupported("broadcasting einsum dimensions");
            }
        }
        let arrange =
            |s: &mut Self, v: ValueId, l: &[char], groups: [&[char]; 3]| -> NResult<ValueId> {
                let perm: Vec<usize> = groups
                    .iter()
                    .flat_map(|g| g.iter())
                    .filter_map(|c| l.iter().position(|x| x == c))
                    .collect();
                let t = s.op(OpKind::Transpose { perm }, &[v], name)?;
                let dims: Vec<usize> = groups
                    .iter()
                    .map(|g| g.iter().map(|&c| size_of(s, v, l, c)).product())
                    .collect();
                s.reshape(t, dims, name)
            };
        let a3 = arrange(self, a, &la, [&batch, &left, &contr])?;
        let b3 = arrange(self, b, &lb, [&batch, &contr, &right])?;
        let m = self.op(OpKind::MatMul, &[a3, b3], name)?;
        let mut dims: Vec<usize> = batch.iter().map(|&c| size_of(self, a, &la, c)).collect();
        dims.extend(left.iter().map(|&c| size_of(self, a, &la, c)));
        dims.extend(right.iter().map(|&c| size_of(self, b, &lb, c)));
        let y = self.reshape(m, dims, name)?;
        let mut l = batch.clone();
        l.extend(left);
        l.extend(right);
        Ok((y, l))
    }
}
