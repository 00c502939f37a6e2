//! Quantized arithmetic as exact float arithmetic the device has.
//!
//! The importer composes ONNX's quantized ops from `nn` ops on 8-bit codes
//! and i32 accumulators; the device has no kernels for u8 and i8 elements,
//! and no integer matmul. Every such integer is small, so it is held
//! instead as an f32 of the same value (its *image*), exact while
//! |x| <= 2^24:
//!
//! * [`int_range`]: what a value's elements are known to be, integers (or
//!   NaN) in [lo, hi], from element types, constants, rounding, clamps,
//!   sums and matmuls; it bounds every step below.
//! * `image`: the f32 image of an integer value: a code cast from a float
//!   is that float (NaN and -0 made 0 as the cast makes them), a parameter
//!   widened by the host at load, a constant converted now, sums and views
//!   of images.
//! * An integer matmul is f32 matmuls of its operands' images on the AMP:
//!   with `p` the largest product of the operands' ranges, each matmul
//!   takes at most 2^24 / p of K, so every partial sum is an exact integer
//!   in whatever order the tiles add; the chunks' results, cast to the
//!   integer type, are added there (a bound that is not met leaves the op
//!   to the device's "not lowered" diagnostic). An integer conv is the
//!   conv of its operands' images (`window.rs`), its GEMM split alike.
//! * A result of 8- or 16-bit integers is its image cast back, which the
//!   lowering folds into the result's output stream: the host narrows it.
//! * An 8- or 16-bit sum, difference, negation or product that may leave
//!   its type wraps as ONNX's does (`wrap.rs`).
//! * A cast of an integer value with an image to f32 is its image; a
//!   comparison of two 8- or 16-bit integers one of their images.
//! * A quantization, `clamp(round(v) + z, lo, hi)` cast to an integer type
//!   that holds the clamp ([`SaturatedRound`]; QuantizeLinear and the
//!   requantizations write it), has the image `clamp((v + 1.5 * 2^23) -
//!   (1.5 * 2^23 - z), lo, hi)`, NaN made 0: the add rounds half to even
//!   where it matters and the clamp takes the rest, so the rounding needs
//!   none of the guards below (six ops where the parts separately take
//!   fifteen: the rounding nine, the add, the clamp two, the code's -0 and
//!   NaN three).
//! * `nn.round` (half to even, ONNX's): `(|x| + 2^23) - 2^23` is |x| rounded
//!   by f32 addition, which rounds half to even; the sign is put back from
//!   `1 / x < 0` (true for -0 too), and |x| >= 2^23 (or NaN) is x itself.
//!
//! The integer ops these rewrites leave unused are erased after legalizing
//! ([`erase_dead`]).

use crate::legalize::Rewriter;
use crate::window::Window;
use ipu_dialects::nn::{self, element_type, op_kind};
use ipu_ir::{Context, Op, Value};
use ipu_reference::{ElementType, OpKind, Tensor};
use ipu_target::Target;
use rustc_hash::FxHashMap;

/// Integers of magnitude up to this are exact in f32.
const F32_EXACT: f64 = 16_777_216.0;
/// The largest constant whose elements a range is read from.
const SCANNED: usize = 1 << 24;
/// How far back through producers a range is derived.
const DEPTH: u32 = 24;

/// What a value's elements are known to be: in `[lo, hi]` (infinite
/// bounds allowing the infinities), or NaN when `nan`; integers when `int`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct IntRange {
    pub lo: f64,
    pub hi: f64,
    pub nan: bool,
    pub int: bool,
}

impl IntRange {
    /// Nothing known.
    const ANY: IntRange = IntRange {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
        nan: true,
        int: false,
    };

    fn new(lo: f64, hi: f64) -> IntRange {
        IntRange {
            lo,
            hi,
            nan: false,
            int: true,
        }
    }

    /// The values of integer type `t`.
    pub(crate) fn of_type(t: ElementType) -> Option<IntRange> {
        use ElementType::*;
        let bits = t.bit_width() as i32;
        Some(match t {
            I1 => IntRange::new(0.0, 1.0),
            U8 | U16 | U32 | U64 | U4 | U2 => IntRange::new(0.0, 2f64.powi(bits) - 1.0),
            I8 | I16 | I32 | I64 | I4 | I2 => {
                IntRange::new(-(2f64.powi(bits - 1)), 2f64.powi(bits - 1) - 1.0)
            }
            _ => return None,
        })
    }

    pub fn abs_max(self) -> f64 {
        self.lo.abs().max(self.hi.abs())
    }

    fn finite(self) -> bool {
        self.lo.is_finite() && self.hi.is_finite()
    }

    /// Whether every value of `self` is one of `o`.
    fn within(self, o: IntRange) -> bool {
        self.lo >= o.lo && self.hi <= o.hi && (o.nan || !self.nan) && (self.int || !o.int)
    }

    fn union(self, o: IntRange) -> IntRange {
        IntRange {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
            nan: self.nan || o.nan,
            int: self.int && o.int,
        }
    }

    /// The result of `f` on the bounds, monotone in each operand (the
    /// extremes are at the corners); NaN when a corner is.
    fn corners(self, o: IntRange, f: impl Fn(f64, f64) -> f64) -> IntRange {
        let c = [
            f(self.lo, o.lo),
            f(self.lo, o.hi),
            f(self.hi, o.lo),
            f(self.hi, o.hi),
        ];
        IntRange {
            lo: c.iter().copied().fold(f64::INFINITY, f64::min),
            hi: c.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            nan: self.nan || o.nan || c.iter().any(|x| x.is_nan()),
            int: self.int && o.int,
        }
    }
}

fn elem(cx: &Context, v: Value) -> Option<ElementType> {
    let (_, e) = cx.tensor_parts(cx.value_type(v))?;
    element_type(cx, e)
}

fn is_int(t: ElementType) -> bool {
    t.is_integer() && t != ElementType::I1
}

/// The range of a constant's elements.
fn constant_range(cx: &Context, d: Op) -> IntRange {
    let Some(c) = nn::constant_tensor(cx, d)
        .ok()
        .filter(|c| c.numel() <= SCANNED)
    else {
        return IntRange::ANY;
    };
    let mut r = IntRange::new(f64::INFINITY, f64::NEG_INFINITY);
    for x in c.to_f32_vec() {
        if x.is_nan() {
            r.nan = true;
            continue;
        }
        r.int &= x.fract() == 0.0 || x.is_infinite();
        r.lo = r.lo.min(x as f64);
        r.hi = r.hi.max(x as f64);
    }
    if r.lo > r.hi {
        (r.lo, r.hi) = (0.0, 0.0);
    }
    r
}

/// What the elements of `v` are known to be, when they are known to be
/// integers (or NaN). Integer-typed values are at least their type's range.
pub(crate) fn int_range(cx: &Context, v: Value) -> Option<IntRange> {
    Some(range_at(cx, v, DEPTH, &mut FxHashMap::default())).filter(|r| r.int)
}

/// Each value's range once per query (a range found with less depth left
/// is as sound, only less precise), so shared operands cost nothing more.
type Memo = FxHashMap<Value, IntRange>;

fn range_at(cx: &Context, v: Value, depth: u32, memo: &mut Memo) -> IntRange {
    if let Some(&r) = memo.get(&v) {
        return r;
    }
    let r = range_uncached(cx, v, depth, memo);
    memo.insert(v, r);
    r
}

fn range_uncached(cx: &Context, v: Value, depth: u32, memo: &mut Memo) -> IntRange {
    let Some(t) = elem(cx, v) else {
        return IntRange::ANY;
    };
    let typed = IntRange::of_type(t);
    let Some(d) = cx.defining_op(v).filter(|_| depth > 0) else {
        return typed.unwrap_or(IntRange::ANY);
    };
    let derived = if nn::Constant::isa(cx, d) {
        // An 8- or 16-bit constant's type bounds it well enough.
        match typed {
            Some(ty) if ty.abs_max() <= F32_EXACT => ty,
            _ => constant_range(cx, d),
        }
    } else {
        derived_range(cx, d, depth - 1, memo)
    };
    match typed {
        Some(ty) if !derived.within(ty) => ty,
        _ => derived,
    }
}

fn derived_range(cx: &Context, d: Op, depth: u32, memo: &mut Memo) -> IntRange {
    let Ok(kind) = op_kind(cx, d) else {
        return IntRange::ANY;
    };
    let mut r = |i: usize| range_at(cx, cx.operand(d, i), depth, memo);
    match kind {
        OpKind::Cast { to, scale: 0, .. } => {
            let x = r(0);
            if to.is_integer() {
                // Towards zero; NaN casts to 0. Beyond the type it wraps
                // (then: the type's range, taken by the caller).
                let x = IntRange {
                    lo: x.lo.trunc(),
                    hi: x.hi.trunc(),
                    nan: false,
                    int: true,
                };
                if r(0).nan {
                    x.union(IntRange::new(0.0, 0.0))
                } else {
                    x
                }
            } else if exact_in(to).is_some_and(|e| x.abs_max() <= e) {
                x
            } else {
                IntRange::ANY
            }
        }
        OpKind::Round => {
            let x = r(0);
            IntRange {
                lo: x.lo.round(),
                hi: x.hi.round(),
                int: true,
                ..x
            }
        }
        OpKind::Add => r(0).corners(r(1), |a, b| a + b),
        OpKind::Sub => r(0).corners(r(1), |a, b| a - b),
        OpKind::Mul => r(0).corners(r(1), |a, b| a * b),
        OpKind::Max => r(0).corners(r(1), f64::max),
        OpKind::Min => r(0).corners(r(1), f64::min),
        OpKind::Neg => {
            let x = r(0);
            IntRange {
                lo: -x.hi,
                hi: -x.lo,
                ..x
            }
        }
        OpKind::Select => {
            // `x == x ? x : y` (how an image drops NaN): never x's NaN.
            let (c, a) = (cx.operand(d, 0), cx.operand(d, 1));
            let not_nan = cx.defining_op(c).is_some_and(|e| {
                matches!(op_kind(cx, e), Ok(OpKind::Equal))
                    && cx.operand(e, 0) == a
                    && cx.operand(e, 1) == a
            });
            let x = r(1);
            let x = IntRange {
                nan: x.nan && !not_nan,
                ..x
            };
            x.union(r(2))
        }
        OpKind::Reshape { .. }
        | OpKind::Transpose { .. }
        | OpKind::Broadcast { .. }
        | OpKind::Slice { .. }
        | OpKind::Gather { .. } => r(0),
        OpKind::Concat { .. } => (1..cx.operands(d).len()).fold(r(0), |u, i| u.union(r(i))),
        OpKind::MatMul | OpKind::Conv { .. } => {
            let (a, b) = (r(0), r(1));
            // The terms of each sum: K, or a conv's C/g times its taps.
            let k = if matches!(kind, OpKind::MatMul) {
                let s = cx.value_shape(cx.operand(d, 0));
                s.last().copied().unwrap_or(1).max(0) as f64
            } else {
                let s = cx.value_shape(cx.operand(d, 1));
                s.iter().skip(1).map(|&x| x.max(0) as f64).product()
            };
            let m = k * a.abs_max() * b.abs_max();
            IntRange {
                lo: -m,
                hi: m,
                nan: a.nan || b.nan || !a.finite() || !b.finite(),
                int: a.int && b.int,
            }
        }
        _ => IntRange::ANY,
    }
}

/// `1.5 * 2^23`: for |v| < 2^22, `v + ROUNDER` lies in [2^23, 2^24), where
/// f32 holds exactly the integers, so the addition rounds v half to even
/// (ROUNDER is even) and subtracting it again is exact.
const ROUNDER: f32 = 12_582_912.0;

/// The bound on the clamp and the zero point of a [`SaturatedRound`]:
/// small enough that the rounding above needs no guard (see
/// [`Rewriter::saturated_round_image`]).
const SATURATED_BOUND: f64 = 2_097_152.0;

/// `clamp(round(v) + z, lo, hi)` of f32 `v` (`z` absent: 0), as
/// QuantizeLinear and the requantizations compose it: a min of a max (or a
/// max of a min) of single-element constants `lo <= hi`, integers of at
/// most 2^21 (neither -0), over an optional add of an integer `z` of at
/// most 2^21 (or NaN) to `nn.round` of `v`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SaturatedRound {
    pub v: Value,
    pub z: Option<Value>,
    pub lo: f32,
    pub hi: f32,
}

impl SaturatedRound {
    /// Whether integer type `to` holds every value of the clamp (and the
    /// 0 of NaN), so a cast to it keeps them.
    fn fits(&self, to: ElementType) -> bool {
        IntRange::of_type(to).is_some_and(|t| {
            IntRange::new(f64::from(self.lo.min(0.0)), f64::from(self.hi.max(0.0))).within(t)
        })
    }
}

/// The value of a single-element f32 constant.
fn scalar_constant(cx: &Context, v: Value) -> Option<f32> {
    let d = cx.defining_op(v).filter(|&d| nn::Constant::isa(cx, d))?;
    if elem(cx, v) != Some(ElementType::F32) || cx.value_shape(v).iter().product::<i64>() != 1 {
        return None;
    }
    let c = nn::constant_tensor(cx, d).ok()?;
    c.to_f32_vec().first().copied()
}

/// For binary op `d` of `kind` with one operand a single-element f32
/// constant: the other operand and the constant.
fn with_scalar(cx: &Context, d: Op, kind: fn(&OpKind) -> bool) -> Option<(Value, f32)> {
    if !op_kind_is(cx, d, kind) || cx.operands(d).len() != 2 {
        return None;
    }
    let (a, b) = (cx.operand(d, 0), cx.operand(d, 1));
    match (scalar_constant(cx, a), scalar_constant(cx, b)) {
        (_, Some(c)) => Some((a, c)),
        (Some(c), None) => Some((b, c)),
        _ => None,
    }
}

/// Whether `d` is an `nn` op whose kind `kind` takes (constants are not
/// read: their kind would copy their data).
fn op_kind_is(cx: &Context, d: Op, kind: fn(&OpKind) -> bool) -> bool {
    !nn::Constant::isa(cx, d) && op_kind(cx, d).is_ok_and(|k| kind(&k))
}

/// `x` as a [`SaturatedRound`], when it is one.
pub(crate) fn saturated_round(cx: &Context, x: Value) -> Option<SaturatedRound> {
    let is_min = |k: &OpKind| matches!(k, OpKind::Min);
    let is_max = |k: &OpKind| matches!(k, OpKind::Max);
    let outer = cx.defining_op(x)?;
    let (inner, lo, hi) = if let Some((y, hi)) = with_scalar(cx, outer, is_min) {
        let (inner, lo) = with_scalar(cx, cx.defining_op(y)?, is_max)?;
        (inner, lo, hi)
    } else {
        let (y, lo) = with_scalar(cx, outer, is_max)?;
        let (inner, hi) = with_scalar(cx, cx.defining_op(y)?, is_min)?;
        (inner, lo, hi)
    };
    let small = |c: f32| c.fract() == 0.0 && f64::from(c.abs()) <= SATURATED_BOUND;
    if !(small(lo) && small(hi) && lo <= hi) || lo.to_bits() == (-0f32).to_bits() {
        return None;
    }
    if hi.to_bits() == (-0f32).to_bits() {
        return None;
    }
    let mut d = cx.defining_op(inner)?;
    let mut z = None;
    if op_kind_is(cx, d, |k| matches!(k, OpKind::Add)) {
        let (a, b) = (cx.operand(d, 0), cx.operand(d, 1));
        let rounded = |v: Value| {
            cx.defining_op(v)
                .filter(|&r| op_kind_is(cx, r, |k| matches!(k, OpKind::Round)))
        };
        let (r, zv) = match (rounded(a), rounded(b)) {
            (Some(r), _) => (r, b),
            (None, Some(r)) => (r, a),
            _ => return None,
        };
        let zr = int_range(cx, zv)?;
        if zr.abs_max() > SATURATED_BOUND || elem(cx, zv) != Some(ElementType::F32) {
            return None;
        }
        (d, z) = (r, Some(zv));
    }
    if !op_kind_is(cx, d, |k| matches!(k, OpKind::Round)) {
        return None;
    }
    let v = cx.operand(d, 0);
    (elem(cx, v) == Some(ElementType::F32)).then_some(SaturatedRound { v, z, lo, hi })
}

/// The integer types the tiles hold as exact floats and the host narrows
/// a result back to (`tile.host_output` with a result).
pub(crate) fn host_narrowed(t: ElementType) -> bool {
    matches!(
        t,
        ElementType::U8 | ElementType::I8 | ElementType::U16 | ElementType::I16
    )
}

/// Whether `op` is a cast the host does as it reads a result: an
/// `nn.cast` without a scale of f32 to 8- or 16-bit integers, only
/// returned, whose operand is known to hold integers of that type, never
/// NaN, so the host's narrowing (which refuses any other value) is exact
/// and is the cast.
pub(crate) fn is_store_cast(cx: &Context, op: Op) -> bool {
    let Some(cast) = nn::Cast::cast(cx, op) else {
        return false;
    };
    if cast.scale(cx).is_some_and(|s| s != 0) {
        return false;
    }
    let (x, y) = (cx.operand(op, 0), cx.result(op, 0));
    let (Some(ElementType::F32), Some(t)) = (elem(cx, x), elem(cx, y)) else {
        return false;
    };
    let returned = matches!(cx.uses(y), [u] if ipu_dialects::func::Return::isa(cx, u.op));
    let fits = |r: IntRange| {
        IntRange::of_type(t).is_some_and(|ty| r.within(IntRange { nan: false, ..ty }))
    };
    host_narrowed(t) && returned && int_range(cx, x).is_some_and(fits)
}

/// Each result of `f` of 8- or 16-bit integers with an f32 image returned
/// as the host's narrowing of that image (`nn.cast %image : f32 -> ui8`,
/// which the lowering folds into the result's `tile.host_output`); a
/// result without one stays as it was, for the lowering to refuse.
///
/// Returns the casts it made: each narrows the exact image of a value of
/// the integer type it casts to, so the host's narrowing is exact by
/// construction (the image's own ops, a quantization's rounding among
/// them, need not show it to the range analysis).
pub(crate) fn return_images(
    cx: &mut Context,
    f: Op,
    images: &mut FxHashMap<Value, Value>,
) -> Vec<Op> {
    let mut made = Vec::new();
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let Some(ret) = cx
        .last_op(entry)
        .filter(|&o| ipu_dialects::func::Return::isa(cx, o))
    else {
        return made;
    };
    for i in 0..cx.operands(ret).len() {
        let v = cx.operand(ret, i);
        let Some(t) = elem(cx, v).filter(|&t| host_narrowed(t)) else {
            continue;
        };
        if cx.defining_op(v).is_some_and(|d| is_store_cast(cx, d)) {
            continue;
        }
        let mut r = Rewriter::new(cx, f, ret, images);
        let Ok(Some(img)) = r.image(v) else {
            continue;
        };
        if let Ok(y) = r.emit(cast_to(t), &[img]) {
            cx.set_operand(ret, i, y);
            made.extend(cx.defining_op(y));
        }
    }
    made
}

/// The largest magnitude to which every integer is exact in float `t`.
fn exact_in(t: ElementType) -> Option<f64> {
    match t {
        ElementType::F32 => Some(F32_EXACT),
        ElementType::F16 => Some(2048.0),
        ElementType::BF16 => Some(256.0),
        _ => None,
    }
}

/// Erases the `nn` ops of `f`'s body that have results, none used, and
/// are not in `dead_before` (dead in the input, left as they were).
pub(crate) fn erase_dead(cx: &mut Context, f: Op, dead_before: &[Op]) {
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    for op in cx.block_ops_vec(entry).into_iter().rev() {
        if unused(cx, op) && cx.name_str(op).starts_with("nn.") && !dead_before.contains(&op) {
            cx.erase_op(op);
        }
    }
}

/// The ops of `f`'s body with results, none used.
pub(crate) fn dead_ops(cx: &Context, f: Op) -> Vec<Op> {
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    cx.block_ops_vec(entry)
        .into_iter()
        .filter(|&op| unused(cx, op))
        .collect()
}

/// Whether `op` has results and none is used.
fn unused(cx: &Context, op: Op) -> bool {
    cx.results(op).len() > 0 && cx.results(op).all(|r| !cx.has_uses(r))
}

/// A plain cast to `to` (no FP8 scale, no saturation).
pub(crate) fn cast_to(to: ElementType) -> OpKind {
    OpKind::Cast {
        to,
        saturate: false,
        scale: 0,
    }
}

impl Rewriter<'_> {
    /// `nn.round` of f32 or f16 as f32 arithmetic (see the module's notes).
    pub(crate) fn round(&mut self) -> Result<Option<Value>, String> {
        let x = self.operand(0);
        let t = self.elem(x).ok_or("has no element type")?;
        if !matches!(t, ElementType::F32 | ElementType::F16) {
            return Ok(None);
        }
        let xf = if t == ElementType::F32 {
            x
        } else {
            self.emit(cast_to(ElementType::F32), &[x])?
        };
        let a = self.emit(OpKind::Abs, &[xf])?;
        let c = self.fill(vec![], ElementType::F32, 8_388_608.0)?;
        let up = self.emit(OpKind::Add, &[a, c])?;
        let rounded = self.emit(OpKind::Sub, &[up, c])?;
        let inv = self.emit(OpKind::Reciprocal, &[xf])?;
        let zero = self.fill(vec![], ElementType::F32, 0.0)?;
        let negative = self.emit(OpKind::Less, &[inv, zero])?;
        let minus = self.emit(OpKind::Neg, &[rounded])?;
        let signed = self.emit(OpKind::Select, &[negative, minus, rounded])?;
        let small = self.emit(OpKind::Less, &[a, c])?;
        let y = self.emit(OpKind::Select, &[small, signed, xf])?;
        if t == ElementType::F32 {
            Ok(Some(y))
        } else {
            self.emit(cast_to(t), &[y]).map(Some)
        }
    }

    /// A cast of an integer the device has no kernels for (u8, i8, ...),
    /// or of any integer with an image, to f32 (or f16): from its image.
    pub(crate) fn int_cast(&mut self, to: ElementType) -> Result<Option<Value>, String> {
        let x = self.operand(0);
        let Some(from) = self.elem(x).filter(|&t| is_int(t)) else {
            return Ok(None);
        };
        let native = matches!(from, ElementType::I32 | ElementType::I64);
        if native && (to.is_integer() || !self.images.contains_key(&x)) {
            return Ok(None);
        }
        let Some(img) = self.image(x)? else {
            return Ok(None);
        };
        match to {
            ElementType::F32 => Ok(Some(img)),
            t if t.is_float() => self.emit(cast_to(t), &[img]).map(Some),
            ElementType::I32 | ElementType::I64 => {
                // The integer holds the image's values: its image.
                let y = self.emit(cast_to(to), &[img])?;
                self.images.insert(y, img);
                Ok(Some(y))
            }
            _ => Ok(None),
        }
    }

    /// A comparison (`kind`) of two integers the device has no kernels for
    /// (u8, i8, u16, i16): the same comparison of their images, which
    /// order and equal as the integers do.
    pub(crate) fn int_compare(&mut self, kind: &OpKind) -> Result<Option<Value>, String> {
        let (a, b) = (self.operand(0), self.operand(1));
        let small = |t: ElementType| is_int(t) && !matches!(t, ElementType::I32 | ElementType::I64);
        if !self.elem(a).is_some_and(small) || !self.elem(b).is_some_and(small) {
            return Ok(None);
        }
        let (Some(ia), Some(ib)) = (self.image(a)?, self.image(b)?) else {
            return Ok(None);
        };
        self.emit(kind.clone(), &[ia, ib]).map(Some)
    }

    /// The f32 image of integer value `v` (see the module's notes), built
    /// before the op being rewritten; None when its range is unknown or
    /// beyond 2^24.
    pub(crate) fn image(&mut self, v: Value) -> Result<Option<Value>, String> {
        if let Some(&i) = self.images.get(&v) {
            return Ok(Some(i));
        }
        let Some(t) = self.elem(v).filter(|&t| is_int(t)) else {
            return Ok(None);
        };
        if int_range(self.cx, v).is_none_or(|r| r.abs_max() > F32_EXACT) {
            return Ok(None);
        }
        let native = matches!(t, ElementType::I32 | ElementType::I64);
        let img = match self.cx.defining_op(v) {
            // An argument: widened by the host (at load, or as it streams
            // an input in), or an i32 / i64 one cast on the tiles.
            None => self.emit(cast_to(ElementType::F32), &[v])?,
            Some(d) if nn::Constant::isa(self.cx, d) => {
                let c = nn::constant_tensor(self.cx, d)?;
                let f = ipu_reference::evaluate(&cast_to(ElementType::F32), &[&c])
                    .map_err(|e| e.to_string())?;
                self.emit(OpKind::Constant(f), &[])?
            }
            Some(d) => match self.image_of_op(d)? {
                Some(i) => i,
                None if native => self.emit(cast_to(ElementType::F32), &[v])?,
                None => return Ok(None),
            },
        };
        self.images.insert(v, img);
        Ok(Some(img))
    }

    /// The images of `values`, when each has one.
    fn images_of(&mut self, values: &[Value]) -> Result<Option<Vec<Value>>, String> {
        let mut images = Vec::with_capacity(values.len());
        for &v in values {
            match self.image(v)? {
                Some(i) => images.push(i),
                None => return Ok(None),
            }
        }
        Ok(Some(images))
    }

    /// The image of `d`'s result built from its operands, where `d` is an
    /// op the images follow.
    fn image_of_op(&mut self, d: Op) -> Result<Option<Value>, String> {
        let kind = op_kind(self.cx, d)?;
        let operands = self.cx.operands(d).to_vec();
        match kind {
            OpKind::Cast { scale: 0, .. } => {
                let x = operands[0];
                let from = self.elem(x).ok_or("has no element type")?;
                if is_int(from) {
                    return self.image(x);
                }
                let to = self.elem(self.cx.result(d, 0)).ok_or("no element type")?;
                if let Some(q) = saturated_round(self.cx, x).filter(|q| q.fits(to)) {
                    return self.saturated_round_image(&q).map(Some);
                }
                let (Some(r), true) = (int_range(self.cx, x), from.is_float()) else {
                    return Ok(None);
                };
                if !IntRange::of_type(to).is_some_and(|ty| IntRange { nan: false, ..r }.within(ty))
                {
                    return Ok(None);
                }
                self.cleaned(x, from, r).map(Some)
            }
            OpKind::Add | OpKind::Sub | OpKind::Mul | OpKind::Neg if !self.never_wraps(d) => {
                // Wraps (`wrap.rs`): the exact result reduced into the type.
                let Some(images) = self.images_of(&operands)? else {
                    return Ok(None);
                };
                let exact = derived_range(self.cx, d, DEPTH, &mut Memo::default());
                self.wrapped_image(d, kind, &images, exact)
            }
            OpKind::Add
            | OpKind::Sub
            | OpKind::Mul
            | OpKind::Max
            | OpKind::Min
            | OpKind::Neg
            | OpKind::Reshape { .. }
            | OpKind::Transpose { .. }
            | OpKind::Broadcast { .. }
            | OpKind::Slice { .. }
            | OpKind::Concat { .. } => match self.images_of(&operands)? {
                Some(images) => self.emit(kind, &images).map(Some),
                None => Ok(None),
            },
            OpKind::Gather { .. } => {
                // The table's image, looked up at the same indices.
                let Some(table) = self.image(operands[0])? else {
                    return Ok(None);
                };
                self.emit(kind, &[table, operands[1]]).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// The f32 image of the integer cast of [`SaturatedRound`] `q`:
    /// `clamp((v + R) - (R - z), lo, hi)`, NaN (of v or z) made 0, with `R` =
    /// [`ROUNDER`]. For |v| < 2^22 the add rounds v half to even and the
    /// subtraction (of integers below 2^24) is exact; from 2^22 on, either
    /// way, the sum is beyond the clamp's bound on that side as round(v) + z
    /// is. A difference never gives -0, nor does the clamp of one.
    pub(crate) fn saturated_round_image(&mut self, q: &SaturatedRound) -> Result<Value, String> {
        let r = self.fill(vec![], ElementType::F32, ROUNDER)?;
        let up = self.emit(OpKind::Add, &[q.v, r])?;
        let offset = match q.z {
            None => r,
            Some(z) => match self.cx.defining_op(z) {
                // Exact: z is an integer of at most 2^21.
                Some(d) if nn::Constant::isa(self.cx, d) => {
                    let c = nn::constant_tensor(self.cx, d)?;
                    let offset = c.to_f32_vec().iter().map(|z| ROUNDER - z).collect();
                    let t = Tensor::from_f32(c.shape().to_vec(), ElementType::F32, offset)
                        .map_err(|e| e.to_string())?;
                    self.emit(OpKind::Constant(t), &[])?
                }
                _ => self.emit(OpKind::Sub, &[r, z])?,
            },
        };
        let y = self.emit(OpKind::Sub, &[up, offset])?;
        let lo = self.fill(vec![], ElementType::F32, q.lo)?;
        let hi = self.fill(vec![], ElementType::F32, q.hi)?;
        let y = self.emit(OpKind::Max, &[y, lo])?;
        let y = self.emit(OpKind::Min, &[y, hi])?;
        let mut memo = Memo::default();
        let mut nan = |v: Value| range_at(self.cx, v, DEPTH, &mut memo).nan;
        if !nan(q.v) && !q.z.is_some_and(nan) {
            return Ok(y);
        }
        let number = self.emit(OpKind::Equal, &[y, y])?;
        let zero = self.fill(vec![], ElementType::F32, 0.0)?;
        self.emit(OpKind::Select, &[number, y, zero])
    }

    /// Whether integer op `d`'s exact result is known to be within its
    /// type: only then is it the same op on its operands' images (a u8
    /// sum beyond 255 wraps, its images' sum does not).
    fn never_wraps(&self, d: Op) -> bool {
        let Some(ty) = elem(self.cx, self.cx.result(d, 0)).and_then(IntRange::of_type) else {
            return false;
        };
        let r = derived_range(self.cx, d, DEPTH, &mut Memo::default());
        IntRange { nan: false, ..r }.within(ty) && !r.nan
    }

    /// Float `x` (integers within the cast's type, or NaN) as the f32 its
    /// integer cast holds: NaN made 0, -0 made +0.
    fn cleaned(&mut self, x: Value, from: ElementType, r: IntRange) -> Result<Value, String> {
        let mut y = if from == ElementType::F32 {
            x
        } else {
            self.emit(cast_to(ElementType::F32), &[x])?
        };
        if r.lo <= 0.0 && r.hi >= 0.0 {
            let zero = self.fill(vec![], ElementType::F32, 0.0)?;
            y = self.emit(OpKind::Add, &[y, zero])?;
        }
        if r.nan {
            let zero = self.fill(vec![], ElementType::F32, 0.0)?;
            let number = self.emit(OpKind::Equal, &[y, y])?;
            y = self.emit(OpKind::Select, &[number, y, zero])?;
        }
        Ok(y)
    }

    /// An integer matmul as exact f32 matmuls (see the module's notes);
    /// None when its operands' ranges do not bound its sums.
    pub(crate) fn integer_matmul(&mut self, target: &Target) -> Result<Option<Value>, String> {
        let (a, b) = (self.operand(0), self.operand(1));
        let result = self.cx.result(self.at, 0);
        let Some(t) = self.elem(result).filter(|&t| is_int(t)) else {
            return Ok(None);
        };
        let Some(p) = self.product_bound(a, b) else {
            return Ok(None);
        };
        let (sa, sb) = (self.shape(a), self.shape(b));
        if sa.is_empty() || sb.is_empty() {
            return Ok(None);
        }
        let (Some(ia), Some(ib)) = (self.image(a)?, self.image(b)?) else {
            return Ok(None);
        };
        self.exact_matmul(ia, ib, p, t, target).map(Some)
    }

    /// The largest magnitude of a product of an element of `a` by one of
    /// `b`, integers both, when it is exact in f32.
    fn product_bound(&self, a: Value, b: Value) -> Option<f64> {
        let (ra, rb) = (int_range(self.cx, a)?, int_range(self.cx, b)?);
        Some(ra.abs_max() * rb.abs_max()).filter(|&p| p <= F32_EXACT)
    }

    /// The integer matmul (type `t`) of images `ia` by `ib`, whose
    /// products are at most `p`: f32 matmuls of K chunks whose sums stay
    /// exact, each cast to `t`, added there.
    fn exact_matmul(
        &mut self,
        ia: Value,
        ib: Value,
        p: f64,
        t: ElementType,
        target: &Target,
    ) -> Result<Value, String> {
        let (sa, sb) = (self.shape(ia), self.shape(ib));
        let k = sa[sa.len() - 1];
        let k_max = if p == 0.0 {
            k
        } else {
            ((F32_EXACT / p) as usize).clamp(1, k.max(1))
        };
        let chunks = k.div_ceil(k_max).max(1);
        let size = k.div_ceil(chunks);
        let kb = sb.len().saturating_sub(2);
        let mut sum: Option<Value> = None;
        for c in 0..chunks {
            let (lo, hi) = (c * size, ((c + 1) * size).min(k));
            let (ac, bc) = if chunks == 1 {
                (ia, ib)
            } else {
                (
                    self.slice_axis(ia, sa.len() - 1, lo, hi)?,
                    self.slice_axis(ib, kb, lo, hi)?,
                )
            };
            let m = self.legal_matmul(ac, bc, target)?;
            let y = self.emit(cast_to(t), &[m])?;
            if chunks == 1 {
                self.images.insert(y, m);
            }
            sum = Some(match sum {
                None => y,
                Some(s) => self.emit(OpKind::Add, &[s, y])?,
            });
        }
        sum.ok_or_else(|| "has no K chunks".to_string())
    }

    /// An integer `nn.conv` (result type `t`) as the conv of its operands'
    /// f32 images: its GEMM by [`Self::exact_matmul`], a depthwise one's
    /// sum of products in f32 when the whole window's sum stays exact;
    /// None when the operands' ranges do not bound its sums.
    pub(crate) fn integer_conv(
        &mut self,
        w: &Window,
        group: usize,
        shapes: (&[usize], &[usize]),
        t: ElementType,
        target: &Target,
    ) -> Result<Option<Value>, String> {
        let (x, wt) = (self.operand(0), self.operand(1));
        let Some(p) = self.product_bound(x, wt) else {
            return Ok(None);
        };
        let (sx, sy) = shapes;
        let (cg, mg) = (sx[1] / group, sy[1] / group);
        let taps: usize = self.shape(wt)[2..].iter().product();
        if group > 1 && cg == 1 && mg == 1 && taps as f64 * p > F32_EXACT {
            return Ok(None);
        }
        let (Some(ix), Some(iw)) = (self.image(x)?, self.image(wt)?) else {
            return Ok(None);
        };
        let mut exact = |r: &mut Self, a: Value, b: Value| r.exact_matmul(a, b, p, t, target);
        let y = self.conv_of(ix, iw, w, group, shapes, &mut exact)?;
        if self.elem(y) == Some(t) {
            return Ok(Some(y));
        }
        // Depthwise: the f32 sum is the image of its cast.
        let c = self.emit(cast_to(t), &[y])?;
        self.images.insert(c, y);
        Ok(Some(c))
    }

    fn slice_axis(&mut self, v: Value, axis: usize, lo: usize, hi: usize) -> Result<Value, String> {
        let s = self.shape(v);
        let mut starts = vec![0; s.len()];
        let mut ends: Vec<i64> = s.iter().map(|&d| d as i64).collect();
        starts[axis] = lo as i64;
        ends[axis] = hi as i64;
        self.emit(
            OpKind::Slice {
                starts,
                ends,
                steps: vec![1; s.len()],
            },
            &[v],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{IntRange, ROUNDER, SATURATED_BOUND};
    use ipu_ir::{Context, Op, Registry};
    use ipu_reference::ElementType;
    use std::sync::Arc;

    /// IEEE 754-2019 maximum (`max`) or minimum (NaN if either is; +0
    /// above -0), as the reference's `nn.max` / `nn.min` and the device's.
    fn extreme(a: f32, b: f32, max: bool) -> f32 {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else if a == b {
            if a.is_sign_negative() == max {
                b
            } else {
                a
            }
        } else if max {
            a.max(b)
        } else {
            a.min(b)
        }
    }

    fn maximum(a: f32, b: f32) -> f32 {
        extreme(a, b, true)
    }

    fn minimum(a: f32, b: f32) -> f32 {
        extreme(a, b, false)
    }

    /// The code QuantizeLinear's parts give: clamp(round(v) + z, lo, hi)
    /// cast to an integer (NaN to 0), as an f32.
    fn composed(v: f32, z: f32, lo: f32, hi: f32) -> f32 {
        let c = minimum(maximum(v.round_ties_even() + z, lo), hi);
        if c.is_nan() {
            0.0
        } else {
            c + 0.0
        }
    }

    /// The image the rewrite builds, op by op in f32.
    fn image(v: f32, z: f32, lo: f32, hi: f32) -> f32 {
        let c = minimum(maximum((v + ROUNDER) - (ROUNDER - z), lo), hi);
        // The select on `equal(c, c)`: false for NaN only.
        if c.is_nan() {
            0.0
        } else {
            c
        }
    }

    #[test]
    fn saturated_round_image_is_the_composed_code_bit_for_bit() {
        let mut v: Vec<f32> = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            254.5,
            255.5,
            256.5,
            -128.5,
            -127.5,
            0.49999997,
            -0.49999997,
            4_194_303.5,
            4_194_304.0,
            -4_194_304.0,
            4_194_305.0,
            8_388_609.0,
            -8_388_609.0,
            16_777_216.0,
            3.0e38,
            -3.0e38,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            1.0e-45,
        ];
        // Every half in [-300, 300] and a deterministic spread of bit patterns.
        v.extend((-600..=600).map(|i| i as f32 / 2.0));
        let mut x: u32 = 0x9E37_79B9;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            v.push(f32::from_bits(x));
            v.push(f32::from_bits(x) / 1.0e36);
        }
        let b = SATURATED_BOUND as f32;
        let zs = [0.0, 3.0, -5.0, 128.0, -0.0, b, -b];
        let clamps = [
            (0.0, 255.0),
            (-128.0, 127.0),
            (0.0, 65_535.0),
            (-b, b),
            (7.0, 7.0),
        ];
        for &z in &zs {
            for &(lo, hi) in &clamps {
                for &x in &v {
                    let (want, got) = (composed(x, z, lo, hi), image(x, z, lo, hi));
                    assert_eq!(want.to_bits(), got.to_bits(), "v {x:e} z {z} [{lo}, {hi}]");
                }
            }
        }
    }

    fn legalized(body: &str) -> (Context, Op) {
        let mut r = Registry::new();
        ipu_dialects::register_all_dialects(&mut r);
        let mut cx = Context::new(Arc::new(r));
        let src = format!("func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {{\n{body}\n}}\n");
        let m = ipu_ir::parser::parse_source(&mut cx, "q.mlir", &src).expect("parses");
        let f = cx
            .nested_ops(m)
            .into_iter()
            .find(|&o| ipu_dialects::func::Func::isa(&cx, o))
            .expect("a function");
        let target = ipu_target::Target::builtin("test16")
            .expect("built in")
            .expect("valid");
        crate::legalize::legalize(&mut cx, f, &target);
        (cx, f)
    }

    fn op_names(cx: &Context, f: Op) -> Vec<String> {
        let entry = cx.entry_block(cx.region(f, 0)).expect("a body");
        cx.block_ops_vec(entry)
            .into_iter()
            .map(|o| cx.name_str(o).to_string())
            .filter(|n| n != "nn.constant")
            .collect()
    }

    const PAIR: &str = "
  %s = nn.constant dense<0.5> : tensor<f32>
  %z = nn.constant dense<ZP> : tensor<f32>
  %lo = nn.constant dense<LO> : tensor<f32>
  %hi = nn.constant dense<255.0> : tensor<f32>
  %v = nn.div %x, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %r = nn.round %v : tensor<8xf32>
  %a = nn.add %r, %z : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %c0 = nn.max %a, %lo : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %c = nn.min %c0, %hi : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %q = nn.cast %c {saturate} : tensor<8xf32> -> tensor<8xui8>
  %qf = nn.cast %q {saturate} : tensor<8xui8> -> tensor<8xf32>
  %d = nn.sub %qf, %z : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %y = nn.mul %d, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %y : tensor<8xf32>";

    #[test]
    fn a_qdq_pair_is_nine_ops() {
        let (cx, f) = legalized(&PAIR.replace("ZP", "3.0").replace("LO", "0.0"));
        let want = [
            "nn.div",
            "nn.add",
            "nn.sub",
            "nn.max",
            "nn.min",
            "nn.equal",
            "nn.select",
            "nn.sub",
            "nn.mul",
            "func.return",
        ];
        assert_eq!(op_names(&cx, f), want);
    }

    #[test]
    fn a_clamp_the_rounding_does_not_bound_keeps_the_guarded_round() {
        // A zero point that is no integer, and a clamp past 2^21: the
        // general rounding (its |x| and 1/x) stays.
        for (zp, lo) in [("0.5", "0.0"), ("3.0", "-4194304.0")] {
            let (cx, f) = legalized(&PAIR.replace("ZP", zp).replace("LO", lo));
            let names = op_names(&cx, f);
            assert!(names.iter().any(|n| n == "nn.abs"), "{zp} {lo}: {names:?}");
            assert!(
                names.iter().any(|n| n == "nn.reciprocal"),
                "{zp} {lo}: {names:?}"
            );
        }
    }

    #[test]
    fn ranges_of_types_and_corners() {
        let u8r = IntRange::of_type(ElementType::U8).unwrap();
        assert_eq!((u8r.lo, u8r.hi), (0.0, 255.0));
        let i8r = IntRange::of_type(ElementType::I8).unwrap();
        assert_eq!((i8r.lo, i8r.hi), (-128.0, 127.0));
        let d = u8r.corners(u8r, |a, b| a - b);
        assert_eq!((d.lo, d.hi, d.nan), (-255.0, 255.0, false));
        assert!(d.within(IntRange::of_type(ElementType::I16).unwrap()));
        assert!(!d.within(u8r));
        let inf = IntRange::new(f64::NEG_INFINITY, f64::INFINITY);
        assert!(inf.corners(inf, |a, b| a + b).nan);
    }
}
