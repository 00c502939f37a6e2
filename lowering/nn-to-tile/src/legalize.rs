//! Rewrites, before distribution, of `nn` ops whose shapes the device
//! kernels cannot take as they are into `nn` ops they can: padding is the
//! compiler's job, not the user's.
//!
//! * A cast to FP8 of a constant that only matmuls read is done first, at
//!   compile time: the constant holds the FP8 codes and the cast's scale
//!   (`fp8.rs`).
//! * Row ops (softmax, log-softmax, sum/max/min/mean reductions) whose
//!   contiguous rows are not whole 64-bit granules read their input padded
//!   along its last dimension with the reduction's identity (-inf, +inf,
//!   0), and their result is sliced back; a mean becomes a sum times 1/C;
//!   a reduction of no elements is the constant it gives.
//! * Layer norm over such rows becomes its definition in those padded
//!   reductions and elementwise ops (in f32).
//! * A float power with an integer exponent casts the exponent first.
//! * A matmul with a rank-1 operand gets a dimension of one, and one whose
//!   K or N no split of the planner can lay out reads operands padded with
//!   zeros to the AMP's K-block and N-block, its result sliced back.
//!
//! Padding is a concat with a constant and slicing a view: both are
//! exchange moves into the reader's layout, never on-tile copies.

use crate::quant;
use crate::window::Window;
use ipu_device::matmul_plan::{plan_matmul, PlanError, ResultEpilogue, TileBudget};
use ipu_dialects::nn::{self, build_op, element_type, op_kind};
use ipu_ir::{Context, Loc, Op, Value};
use ipu_isa::kernels::ElemType;
use ipu_program::elem::value_elem;
use ipu_program::gemm::{k_chunk, GemmMode, N_BLOCK};
use ipu_reference::ops::ReduceKind;
use ipu_reference::{ElementType, OpKind, Tensor};
use ipu_target::Target;
use rustc_hash::FxHashMap;

/// Rewrites the ops of function `f` the device cannot take as they are.
/// Rounding goes last: the quantized arithmetic's rewrites read the
/// integers a `nn.round` makes from the op itself. Returns the casts the
/// host does as it reads a result ([`quant::is_store_cast`]), found before
/// rounding is rewritten, while their operands' ranges still show it.
pub fn legalize(cx: &mut Context, f: Op, target: &Target) -> Vec<Op> {
    crate::fp8::fold_weight_casts(cx, f);
    let dead_before = quant::dead_ops(cx, f);
    let mut images = FxHashMap::default();
    let is_round = |k: &OpKind| matches!(k, OpKind::Round);
    rewrite_each(cx, f, target, &mut images, |k| !is_round(k));
    // 8- and 16-bit results: narrowed from their images by the host.
    let made = quant::return_images(cx, f, &mut images);
    // The integer ops whose readers now read their float images.
    quant::erase_dead(cx, f, &dead_before);
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let stores = cx
        .block_ops_vec(entry)
        .into_iter()
        .filter(|&op| made.contains(&op) || quant::is_store_cast(cx, op))
        .collect();
    rewrite_each(cx, f, target, &mut images, is_round);
    stores
}

/// Rewrites, in program order, the ops of `f` whose kind `pick` takes.
fn rewrite_each(
    cx: &mut Context,
    f: Op,
    target: &Target,
    images: &mut FxHashMap<Value, Value>,
    pick: impl Fn(&OpKind) -> bool,
) {
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    for op in cx.block_ops_vec(entry) {
        // A constant is never rewritten (nor read into a tensor to see so).
        if !cx.name_str(op).starts_with("nn.")
            || cx.results(op).len() != 1
            || nn::Constant::isa(cx, op)
        {
            continue;
        }
        let Some(kind) = op_kind(cx, op).ok().filter(|k| pick(k)) else {
            continue;
        };
        let mut r = Rewriter::new(cx, f, op, images);
        let new = match r.rewrite(&kind, target) {
            Ok(v) => v,
            Err(_) => {
                // A padding that cannot be built (a constant beyond the size
                // limit): the op stays, and its lowering says why it cannot.
                let erased = std::mem::take(&mut r.new_ops);
                images.retain(|_, i| cx.defining_op(*i).is_none_or(|d| !erased.contains(&d)));
                for o in erased.into_iter().rev() {
                    cx.erase_op(o);
                }
                None
            }
        };
        if let Some(v) = new {
            let old = cx.result(op, 0);
            cx.replace_all_uses(old, v);
            cx.erase_op(op);
        }
    }
}

pub(crate) struct Rewriter<'a> {
    pub(crate) cx: &'a mut Context,
    /// The function rewritten.
    f: Op,
    /// New ops go before this one.
    pub(crate) at: Op,
    loc: Loc,
    /// The ops inserted so far, erased again when the rewrite fails.
    new_ops: Vec<Op>,
    /// The f32 images of integer values built so far (`quant.rs`).
    pub(crate) images: &'a mut FxHashMap<Value, Value>,
}

/// Bytes of a device element of `t` (0 for types the row kernels lack).
fn row_bytes(t: ElementType) -> usize {
    match t {
        ElementType::F32 => 4,
        ElementType::F16 => 2,
        _ => 0,
    }
}

/// The smallest `p >= 0` with `outer * (len + p) * eb` a multiple of 8.
fn granule_pad(outer: usize, len: usize, eb: usize) -> usize {
    (0..8)
        .find(|p| (outer * (len + p) * eb).is_multiple_of(8))
        .unwrap_or(0)
}

impl<'a> Rewriter<'a> {
    /// A rewriter of `f` that inserts its ops before `at`.
    pub(crate) fn new(
        cx: &'a mut Context,
        f: Op,
        at: Op,
        images: &'a mut FxHashMap<Value, Value>,
    ) -> Rewriter<'a> {
        let loc = cx.op_loc(at);
        Rewriter {
            cx,
            f,
            at,
            loc,
            new_ops: Vec::new(),
            images,
        }
    }

    pub(crate) fn emit(&mut self, kind: OpKind, operands: &[Value]) -> Result<Value, String> {
        let o = build_op(self.cx, &kind, operands, self.loc)?;
        self.cx.insert_op_before(self.at, o);
        self.new_ops.push(o);
        Ok(self.cx.result(o, 0))
    }

    pub(crate) fn shape(&self, v: Value) -> Vec<usize> {
        self.cx
            .value_shape(v)
            .iter()
            .map(|&d| d.max(0) as usize)
            .collect()
    }

    pub(crate) fn elem(&self, v: Value) -> Option<ElementType> {
        let (_, e) = self.cx.tensor_parts(self.cx.value_type(v))?;
        element_type(self.cx, e)
    }

    pub(crate) fn operand(&self, i: usize) -> Value {
        self.cx.operand(self.at, i)
    }

    /// A constant of `shape` holding `value` in element type `t`.
    pub(crate) fn fill(
        &mut self,
        shape: Vec<usize>,
        t: ElementType,
        value: f32,
    ) -> Result<Value, String> {
        ipu_reference::check_tensor_size("a padding constant", &shape, t)
            .map_err(|e| e.to_string())?;
        let n = shape.iter().product();
        let c = Tensor::from_f32(shape, t, vec![value; n]).map_err(|e| e.to_string())?;
        self.emit(OpKind::Constant(c), &[])
    }

    /// `v` padded with `p` elements of `value` at the end of dimension `axis`.
    pub(crate) fn pad(
        &mut self,
        v: Value,
        axis: usize,
        p: usize,
        value: f32,
    ) -> Result<Value, String> {
        if p == 0 {
            return Ok(v);
        }
        let mut s = self.shape(v);
        s[axis] = p;
        let t = self
            .elem(v)
            .ok_or("has an element type without a constant form")?;
        let c = self.fill(s, t, value)?;
        self.emit(OpKind::Concat { axis }, &[v, c])
    }

    /// The first `n` elements of `v` along `axis`.
    pub(crate) fn unpad(&mut self, v: Value, axis: usize, n: usize) -> Result<Value, String> {
        let s = self.shape(v);
        if s[axis] == n {
            return Ok(v);
        }
        let r = s.len();
        let mut ends: Vec<i64> = s.iter().map(|&d| d as i64).collect();
        ends[axis] = n as i64;
        self.emit(
            OpKind::Slice {
                starts: vec![0; r],
                ends,
                steps: vec![1; r],
            },
            &[v],
        )
    }

    fn rewrite(&mut self, kind: &OpKind, target: &Target) -> Result<Option<Value>, String> {
        match kind {
            OpKind::Softmax { axis } | OpKind::LogSoftmax { axis } => {
                let x = self.operand(0);
                let s = self.shape(x);
                let eb = self.elem(x).map_or(0, row_bytes);
                if eb == 0 || *axis + 1 != s.len() || (s[*axis] * eb).is_multiple_of(8) {
                    return Ok(None);
                }
                let p = granule_pad(1, s[*axis], eb);
                let xp = self.pad(x, *axis, p, f32::NEG_INFINITY)?;
                let y = self.emit(kind.clone(), &[xp])?;
                self.unpad(y, *axis, s[*axis]).map(Some)
            }
            OpKind::Reduce { .. } if self.shape(self.operand(0)).contains(&0) => {
                // Over no elements: the reduction's value for an empty set
                // (or an empty result), known at compile time.
                let x = self.operand(0);
                let t = self.elem(x).ok_or("has no element type")?;
                let empty = Tensor::zeros(self.shape(x), t);
                let c = ipu_reference::evaluate(kind, &[&empty]).map_err(|e| e.to_string())?;
                self.emit(OpKind::Constant(c), &[]).map(Some)
            }
            OpKind::Reduce {
                kind: rk,
                axes,
                keepdims,
            } => self.reduce(*rk, axes, *keepdims),
            OpKind::Pow => {
                // An integer exponent of a float power, in the base's type.
                // (A constant one is converted at compile time by the map.)
                let (x, y) = (self.operand(0), self.operand(1));
                let constant = self
                    .cx
                    .defining_op(y)
                    .is_some_and(|d| nn::Constant::isa(self.cx, d));
                match (self.elem(x), self.elem(y)) {
                    (Some(tx), Some(ty)) if tx.is_float() && ty.is_integer() && !constant => {
                        let yf = self.emit(
                            OpKind::Cast {
                                to: tx,
                                saturate: false,
                                scale: 0,
                            },
                            &[y],
                        )?;
                        self.emit(OpKind::Pow, &[x, yf]).map(Some)
                    }
                    _ => Ok(None),
                }
            }
            OpKind::LayerNorm {
                axis,
                epsilon,
                has_scale,
                has_bias,
            } => self.layer_norm(*axis, *epsilon, *has_scale, *has_bias),
            OpKind::MatMul => self.matmul(target),
            OpKind::Round => self.round(),
            OpKind::Cast { to, scale: 0, .. } => self.int_cast(*to),
            OpKind::Equal | OpKind::Less | OpKind::Greater => self.int_compare(kind),
            OpKind::Conv {
                strides,
                dilations,
                pads,
                group,
            } => {
                let kernel = self.shape(self.operand(1)).split_off(2);
                self.conv(
                    &Window::new(kernel, strides, dilations, pads),
                    *group,
                    target,
                )
            }
            OpKind::ConvTranspose {
                strides,
                dilations,
                pads,
                group,
                ..
            } => self.conv_transpose((strides, dilations, pads), *group, target),
            OpKind::Resize { .. } => self.resize(kind),
            OpKind::MaxPool {
                kernel,
                strides,
                dilations,
                pads,
                indices: false,
                ..
            } => self.max_pool(&Window::new(kernel.clone(), strides, dilations, pads)),
            OpKind::AvgPool {
                kernel,
                strides,
                dilations,
                pads,
                count_include_pad,
                ..
            } => self.avg_pool(
                &Window::new(kernel.clone(), strides, dilations, pads),
                *count_include_pad,
            ),
            _ => Ok(None),
        }
    }

    /// The padding a reduction of `x` over `axes` needs along the last
    /// dimension: `None` when its rows are whole granules already (or it
    /// reduces no trailing run of dimensions).
    fn reduce_pad(&self, x: Value, axes: &[usize]) -> Option<usize> {
        let s = self.shape(x);
        let r = s.len();
        let eb = self.elem(x).map_or(0, row_bytes);
        if eb == 0 || r == 0 || !axes.contains(&(r - 1)) || s.contains(&0) {
            return None;
        }
        // The trailing run of reduced dimensions is one contiguous row.
        let mut lo = r - 1;
        while lo > 0 && axes.contains(&(lo - 1)) {
            lo -= 1;
        }
        let outer: usize = s[lo..r - 1].iter().product();
        let len = s[r - 1];
        (!(outer * len * eb).is_multiple_of(8)).then(|| granule_pad(outer, len, eb))
    }

    fn reduce(
        &mut self,
        rk: ReduceKind,
        axes: &[usize],
        keepdims: bool,
    ) -> Result<Option<Value>, String> {
        let x = self.operand(0);
        let s = self.shape(x);
        let float = self.elem(x).map_or(0, row_bytes) > 0;
        if matches!(rk, ReduceKind::Max | ReduceKind::Min)
            && float
            && s.len() >= 2
            && axes.len() == s.len()
        {
            // Over every axis of floats (a dynamic quantization's range): each row's
            // on the tiles holding it first, so the whole tensor is not
            // gathered on one tile; exact in any order.
            let rows = self.reduce_of(x, rk, &[s.len() - 1], keepdims)?;
            let rest: Vec<usize> = (0..s.len() - 1).collect();
            return self.reduce_of(rows, rk, &rest, keepdims).map(Some);
        }
        if rk == ReduceKind::Prod || self.reduce_pad(x, axes).is_none() {
            return Ok(None);
        }
        self.reduce_of(x, rk, axes, keepdims).map(Some)
    }

    /// The reduction of `x` over `axes`, padded when its rows need it.
    fn reduce_of(
        &mut self,
        x: Value,
        rk: ReduceKind,
        axes: &[usize],
        keepdims: bool,
    ) -> Result<Value, String> {
        let plain = |kind| OpKind::Reduce {
            kind,
            axes: axes.to_vec(),
            keepdims,
        };
        let Some(p) = self.reduce_pad(x, axes) else {
            return self.emit(plain(rk), &[x]);
        };
        let s = self.shape(x);
        let (identity, as_kind) = match rk {
            ReduceKind::Max => (f32::NEG_INFINITY, ReduceKind::Max),
            ReduceKind::Min => (f32::INFINITY, ReduceKind::Min),
            _ => (0.0, ReduceKind::Sum),
        };
        let xp = self.pad(x, s.len() - 1, p, identity)?;
        let y = self.emit(plain(as_kind), &[xp])?;
        if rk != ReduceKind::Mean {
            return Ok(y);
        }
        let count: usize = axes.iter().map(|&a| s[a]).product();
        let t = self.elem(x).ok_or("has no element type")?;
        let inv = self.fill(vec![], t, 1.0 / count as f32)?;
        self.emit(OpKind::Mul, &[y, inv])
    }

    /// Layer norm over rows that are not whole granules, as its
    /// definition: mean and biased variance by padded sums times 1/C.
    fn layer_norm(
        &mut self,
        axis: usize,
        epsilon: f32,
        has_scale: bool,
        has_bias: bool,
    ) -> Result<Option<Value>, String> {
        let x = self.operand(0);
        let s = self.shape(x);
        let axes: Vec<usize> = (axis..s.len()).collect();
        if self.reduce_pad(x, &axes).is_none() {
            return Ok(None);
        }
        let t = self.elem(x).ok_or("has no element type")?;
        let f32_of = |r: &mut Self, v: Value| -> Result<Value, String> {
            if r.elem(v) == Some(ElementType::F32) {
                return Ok(v);
            }
            r.emit(
                OpKind::Cast {
                    to: ElementType::F32,
                    saturate: false,
                    scale: 0,
                },
                &[v],
            )
        };
        let xf = f32_of(self, x)?;
        let sum = |r: &mut Self, v: Value| r.reduce_of(v, ReduceKind::Mean, &axes, true);
        let mean = sum(self, xf)?;
        let d = self.emit(OpKind::Sub, &[xf, mean])?;
        let d2 = self.emit(OpKind::Mul, &[d, d])?;
        let var = sum(self, d2)?;
        let eps = self.fill(vec![], ElementType::F32, epsilon)?;
        let ve = self.emit(OpKind::Add, &[var, eps])?;
        let rstd = self.emit(OpKind::Rsqrt, &[ve])?;
        let mut y = self.emit(OpKind::Mul, &[d, rstd])?;
        let mut next = 1;
        for (has, k) in [(has_scale, OpKind::Mul), (has_bias, OpKind::Add)] {
            if has {
                let p = self.operand(next);
                next += 1;
                let pf = f32_of(self, p)?;
                y = self.emit(k, &[y, pf])?;
            }
        }
        if t != ElementType::F32 {
            y = self.emit(crate::quant::cast_to(t), &[y])?;
        }
        Ok(Some(y))
    }

    /// Points the matmul at its operands as its mode reads them where that
    /// costs no work per run: an FP8 parameter the mode reads as f16 (or
    /// f32) is cast exactly, a cast the host does at load
    /// (`is_load_cast`), and an FP8 constant is converted now; FP8 weights
    /// with a scale (`fp8.rs`) stay FP8, half the bytes. The matmuls
    /// reading such an operand share it when every reader of it reads it so;
    /// otherwise each widens it on the tiles.
    fn widen_resident_operands(&mut self) -> Result<(), String> {
        for i in 0..2 {
            let v = self.operand(i);
            // FP8 weights folded with their scale stay FP8: the matmul
            // widens them as it reads them (`fp8.rs`).
            if crate::fp8::value_scale(self.cx, self.f, v).is_some() {
                continue;
            }
            let Some(to) = widening_of(self.cx, self.at, i) else {
                continue;
            };
            let everyone = self
                .cx
                .uses(v)
                .iter()
                .all(|u| widening_of(self.cx, u.op, u.index as usize) == Some(to));
            if !everyone {
                continue;
            }
            let cast = OpKind::Cast {
                to,
                saturate: false,
                scale: 0,
            };
            let widened = match self.cx.defining_op(v) {
                None if super::is_parameter(self.cx, self.f, v) => {
                    build_op(self.cx, &cast, &[v], self.loc)?
                }
                Some(d) if nn::Constant::isa(self.cx, d) => {
                    let c = ipu_dialects::nn::constant_tensor(self.cx, d)?;
                    let w = ipu_reference::evaluate(&cast, &[&c]).map_err(|e| e.to_string())?;
                    build_op(self.cx, &OpKind::Constant(w), &[], self.cx.op_loc(d))?
                }
                _ => continue,
            };
            // Kept whatever the rest of the rewrite does: the matmuls read
            // it. Before this matmul, the first reader: the others follow.
            self.cx.insert_op_before(self.at, widened);
            let w = self.cx.result(widened, 0);
            for u in self.cx.uses(v).to_vec() {
                if u.op != widened {
                    self.cx.set_operand(u.op, u.index as usize, w);
                }
            }
            if let Some(d) = self
                .cx
                .defining_op(v)
                .filter(|&d| !self.cx.has_uses(self.cx.result(d, 0)))
            {
                self.cx.erase_op(d);
            }
        }
        Ok(())
    }

    fn matmul(&mut self, target: &Target) -> Result<Option<Value>, String> {
        if self.elem(self.operand(0)).is_some_and(|t| t.is_integer()) {
            return self.integer_matmul(target);
        }
        self.widen_resident_operands()?;
        let (a, b) = (self.operand(0), self.operand(1));
        let (sa, sb) = (self.shape(a), self.shape(b));
        if sa.is_empty() || sb.is_empty() {
            return Ok(None);
        }
        let e = |v| value_elem(self.cx, v);
        let (Some(ea), Some(eb), Some(er)) = (e(a), e(b), e(self.cx.result(self.at, 0))) else {
            return Ok(None);
        };
        let Ok(mode) = GemmMode::select(ea, eb, er) else {
            return Ok(None);
        };
        let Some(k_block) = mode.k_block(target) else {
            return Ok(None);
        };
        if sa.len() == 1 || sb.len() == 1 {
            // A dimension of one where the operand has none, dropped after.
            let a2 = if sa.len() == 1 {
                self.emit(
                    OpKind::Reshape {
                        shape: vec![1, sa[0]],
                    },
                    &[a],
                )?
            } else {
                a
            };
            let b2 = if sb.len() == 1 {
                self.emit(
                    OpKind::Reshape {
                        shape: vec![sb[0], 1],
                    },
                    &[b],
                )?
            } else {
                b
            };
            let out = self.shape(self.cx.result(self.at, 0));
            let y = self.padded_matmul(a2, b2, target, mode, k_block, [ea, eb, er])?;
            return self.emit(OpKind::Reshape { shape: out }, &[y]).map(Some);
        }
        if let Some((a2, b2)) = self.full_batches(a, b)? {
            return self.legal_matmul(a2, b2, target).map(Some);
        }
        let (k, n) = (sa[sa.len() - 1], sb[sb.len() - 1]);
        let m: usize = sa[..sa.len() - 1].iter().product();
        match plan_matmul(
            target,
            target.tiles() as u64,
            m as u64,
            k as u64,
            n as u64,
            mode,
            [ea, eb, er],
            &TileBudget::ALONE,
            &ResultEpilogue::NONE,
        ) {
            Err(PlanError::Unsupported(_)) => {}
            _ => return Ok(None),
        }
        self.padded_matmul(a, b, target, mode, k_block, [ea, eb, er])
            .map(Some)
    }

    /// `a x b` as a new `nn.matmul`, itself legalized in turn.
    pub(crate) fn legal_matmul(
        &mut self,
        a: Value,
        b: Value,
        target: &Target,
    ) -> Result<Value, String> {
        let y = self.emit(OpKind::MatMul, &[a, b])?;
        let (at, product) = (self.at, self.cx.defining_op(y).expect("just built"));
        self.at = product;
        let padded = self.matmul(target);
        self.at = at;
        Ok(match padded? {
            Some(p) => {
                // The padded product replaces the plain one.
                self.new_ops.retain(|&o| o != product);
                self.cx.erase_op(product);
                p
            }
            None => y,
        })
    }

    /// Operands whose batch dimensions broadcast against each other only
    /// partially (`[3, 1]` against `[1, 2]`), broadcast to the full batch:
    /// the matmul takes batches each side has whole or not at all.
    fn full_batches(&mut self, a: Value, b: Value) -> Result<Option<(Value, Value)>, String> {
        let (sa, sb) = (self.shape(a), self.shape(b));
        let (ba, bb) = (&sa[..sa.len() - 2], &sb[..sb.len() - 2]);
        if ba.is_empty() || bb.is_empty() {
            return Ok(None);
        }
        let r = ba.len().max(bb.len());
        let lift = |s: &[usize]| -> Vec<usize> {
            let mut v = vec![1; r - s.len()];
            v.extend_from_slice(s);
            v
        };
        let (pa, pb) = (lift(ba), lift(bb));
        let full: Vec<usize> = pa.iter().zip(&pb).map(|(&x, &y)| x.max(y)).collect();
        let whole_or_none = |p: &[usize]| p == full.as_slice() || p.iter().all(|&d| d == 1);
        if whole_or_none(&pa) && whole_or_none(&pb) {
            return Ok(None);
        }
        let mut to = |v: Value, s: &[usize]| -> Result<Value, String> {
            let mut shape = full.clone();
            shape.extend_from_slice(&s[s.len() - 2..]);
            self.emit(OpKind::Broadcast { shape }, &[v])
        };
        let a2 = to(a, &sa)?;
        let b2 = to(b, &sb)?;
        Ok(Some((a2, b2)))
    }

    /// `a x b` with K and N padded with zeros as far as the planner needs.
    fn padded_matmul(
        &mut self,
        a: Value,
        b: Value,
        target: &Target,
        mode: GemmMode,
        k_block: u64,
        elems: [ElemType; 3],
    ) -> Result<Value, String> {
        let (sa, sb) = (self.shape(a), self.shape(b));
        let (ra, rb) = (sa.len(), sb.len());
        let (k, n) = (sa[ra - 1] as u64, sb[rb - 1] as u64);
        let m: u64 = sa[..ra - 1].iter().product::<usize>() as u64;
        let np = n.div_ceil(N_BLOCK) * N_BLOCK;
        let tiles = target.tiles() as u64;
        // K to the K-block, or further to the K-chunk when a block needs
        // chunks; the first the planner can lay out.
        let mut kp = k.div_ceil(k_block) * k_block;
        if matches!(
            plan_matmul(
                target,
                tiles,
                m,
                kp,
                np,
                mode,
                elems,
                &TileBudget::ALONE,
                &ResultEpilogue::NONE,
            ),
            Err(PlanError::Unsupported(_))
        ) {
            if let Some(kc) = k_chunk(kp, mode.input_bytes()) {
                kp = k.div_ceil(kc) * kc;
            }
        }
        let a2 = self.pad(a, ra - 1, (kp - k) as usize, 0.0)?;
        let b1 = self.pad(b, rb - 2, (kp - k) as usize, 0.0)?;
        let b2 = self.pad(b1, rb - 1, (np - n) as usize, 0.0)?;
        let y = self.emit(OpKind::MatMul, &[a2, b2])?;
        let r = self.shape(y).len();
        self.unpad(y, r - 1, n as usize)
    }
}

/// The element type `op`, an `nn.matmul`, reads its FP8 operand `i` as,
/// when its AMP mode reads another (f16, or f32): an exact widening.
fn widening_of(cx: &Context, op: Op, i: usize) -> Option<ElementType> {
    if !nn::MatMul::isa(cx, op) || i > 1 {
        return None;
    }
    let e = |v| value_elem(cx, v);
    let (ea, eb, er) = (
        e(cx.operand(op, 0))?,
        e(cx.operand(op, 1))?,
        e(cx.result(op, 0))?,
    );
    let mode = GemmMode::select(ea, eb, er).ok()?;
    let ev = if i == 0 { ea } else { eb };
    if ev == mode.input || !ipu_program::elem::is_f8(ev) {
        return None;
    }
    match mode.input {
        ElemType::F16 => Some(ElementType::F16),
        ElemType::F32 => Some(ElementType::F32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::granule_pad;

    #[test]
    fn granule_pads_are_the_smallest_that_fill_granules() {
        assert_eq!(granule_pad(1, 5, 4), 1);
        assert_eq!(granule_pad(3, 5, 4), 1);
        assert_eq!(granule_pad(1, 5, 2), 3);
        assert_eq!(granule_pad(2, 5, 2), 1);
        assert_eq!(granule_pad(1, 8, 4), 0);
    }
}
