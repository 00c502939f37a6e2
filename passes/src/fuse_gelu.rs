//! `nn-fuse-gelu`: recognises GELU written out as elementwise `nn` ops, as
//! model exports emit it, and replaces each such chain with one `nn.gelu`.
//!
//! Forms, `x` one value throughout and every constant a scalar or splat:
//! - tanh: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, `x^3` as
//!   `nn.pow x, 3` or a product of three `x` (GPT-2-style exports);
//! - erf: `0.5 x (1 + erf(x / sqrt 2))`, the division also as a product
//!   with `1/sqrt 2` (BERT-style exports).
//!
//! The three outer factors may be multiplied in any grouping and order, the
//! half also as a division by 2; every add and mul matches either operand
//! order. A constant matches when it lies within one unit in the last place
//! of its element type of the exact value, so a value rounded to f16 or
//! written with fewer digits still matches and a different one does not.
//! Every op of the chain but the last must have the chain as its only user
//! and every value of it must have `x`'s type, so the rewrite drops nothing
//! another op reads and changes no shape.

use ipu_dialects::nn::{self, Add, Constant, Div, Erf, Mul, Pow, Tanh};
use ipu_ir::accessors::OpView;
use ipu_ir::pass::{Pass, PassInfo, PassOptions, Statistic};
use ipu_ir::{Block, Context, Diagnostic, Op, Type, Value};
use ipu_reference::{ElementType, GeluApproximation, OpKind};
use rustc_hash::FxHashMap;

pub const INFO: PassInfo = PassInfo {
    argument: "nn-fuse-gelu",
    name: "FuseGelu",
    description: "Fuse GELU written out as elementwise nn ops into one nn.gelu: the tanh form \
                  0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))) becomes nn.gelu {approximate = \"tanh\"}, the \
                  erf form 0.5x(1 + erf(x/sqrt 2)) nn.gelu; any operand order and grouping of the product, \
                  scalar or splat constants within an ulp of the exact values, only where the intermediates \
                  have no other users. Numerics: nn.gelu evaluates the whole function in f64 and rounds once \
                  to the element type, where the written-out ops round after every step, so f16/bf16 results \
                  can differ from the unfused program's by a few ulps. The lowering pipelines run it before \
                  convert-nn-to-tile; to keep the written-out ops, run the stages without it.",
    anchor: None,
    options: &[],
    create,
};

fn create(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(FuseGelu::default()))
}

#[derive(Default)]
struct FuseGelu {
    fused_tanh: u64,
    fused_erf: u64,
}

impl Pass for FuseGelu {
    fn run(&mut self, cx: &mut Context, root: Op) -> Result<(), Diagnostic> {
        // Definitions come before uses, so the first op that completes a
        // chain is its last multiplication.
        let mut ops = Vec::new();
        cx.walk_preorder(root, &mut |o| ops.push(o));
        for op in ops {
            if cx.is_erased(op) || !(Mul::isa(cx, op) || Div::isa(cx, op)) {
                continue;
            }
            let Some(m) = match_gelu(cx, op) else {
                continue;
            };
            rewrite(cx, op, &m)?;
            match m.approximate {
                GeluApproximation::Tanh => self.fused_tanh += 1,
                GeluApproximation::None => self.fused_erf += 1,
            }
        }
        Ok(())
    }

    fn statistics(&self) -> Vec<Statistic> {
        vec![
            Statistic {
                name: "num-fused-tanh",
                description: "Number of tanh-form GELU chains fused",
                value: self.fused_tanh,
            },
            Statistic {
                name: "num-fused-erf",
                description: "Number of erf-form GELU chains fused",
                value: self.fused_erf,
            },
        ]
    }
}

/// A matched chain: its input, its form, and what it is made of.
struct Match {
    x: Value,
    approximate: GeluApproximation,
    /// The chain's ops, the last multiplication included.
    ops: Vec<Op>,
    /// The constants it reads (erased with it when nothing else reads them).
    constants: Vec<Op>,
}

/// One leaf of the outer product.
#[derive(Clone, Copy, PartialEq)]
enum Factor {
    Value(Value),
    /// A division by 2.
    Half,
}

struct Matcher<'a> {
    cx: &'a Context,
    block: Option<Block>,
    /// The type of the chain's result, which every value in it must have.
    ty: Type,
    ops: Vec<Op>,
    constants: Vec<Op>,
}

fn match_gelu(cx: &Context, root: Op) -> Option<Match> {
    if cx.num_results(root) != 1 || cx.operands(root).len() != 2 {
        return None;
    }
    let ty = cx.value_type(cx.result(root, 0));
    let (_, elem) = cx.tensor_parts(ty)?;
    if !matches!(
        nn::element_type(cx, elem)?,
        ElementType::F32 | ElementType::F16 | ElementType::BF16 | ElementType::F64
    ) {
        return None;
    }
    let mut m = Matcher {
        cx,
        block: cx.parent_block(root),
        ty,
        ops: vec![root],
        constants: Vec::new(),
    };
    let mut leaves = Vec::new();
    m.product_node(root, &mut leaves)?;
    if leaves.len() != 3 {
        return None;
    }
    // Which leaf is the half, which the `1 + t` and which `x`.
    for (h, a, x) in [
        (0, 1, 2),
        (0, 2, 1),
        (1, 0, 2),
        (1, 2, 0),
        (2, 0, 1),
        (2, 1, 0),
    ] {
        let mark = m.mark();
        let Factor::Value(xv) = leaves[x] else {
            continue;
        };
        let Factor::Value(av) = leaves[a] else {
            continue;
        };
        if cx.value_type(xv) != ty || !m.is_half(leaves[h]) {
            m.reset(mark);
            continue;
        }
        if let Some(approximate) = m.one_plus_t(av, xv) {
            return Some(Match {
                x: xv,
                approximate,
                ops: m.ops,
                constants: m.constants,
            });
        }
        m.reset(mark);
    }
    None
}

impl Matcher<'_> {
    fn mark(&self) -> (usize, usize) {
        (self.ops.len(), self.constants.len())
    }
    fn reset(&mut self, (o, c): (usize, usize)) {
        self.ops.truncate(o);
        self.constants.truncate(c);
    }

    /// The op defining `v` when it is a `V` op of the chain: in the same
    /// block, of the chain's type, read only once.
    fn inner<V: OpView>(&mut self, v: Value) -> Option<V> {
        let d = self.cx.defining_op(v)?;
        let view = V::cast(self.cx, d)?;
        let ok = self.cx.parent_block(d) == self.block
            && self.cx.num_results(d) == 1
            && self.cx.value_type(v) == self.ty
            && self.cx.uses(v).len() == 1;
        ok.then(|| {
            self.ops.push(d);
            view
        })
    }

    /// Whether `v` is a constant every element of which is `exact` within
    /// an ulp of its element type (`exact` itself for integers).
    fn is_constant(&mut self, v: Value, exact: f64) -> bool {
        let Some(d) = self.cx.defining_op(v) else {
            return false;
        };
        if !Constant::isa(self.cx, d) {
            return false;
        }
        let Ok(t) = nn::constant_tensor(self.cx, d) else {
            return false;
        };
        let dtype = t.dtype();
        let ok = t.numel() > 0
            && t.to_f32_vec().iter().all(|&c| {
                if dtype.is_float() {
                    within_ulp(c as f64, exact, dtype)
                } else {
                    c as f64 == exact
                }
            });
        if ok && !self.constants.contains(&d) {
            self.constants.push(d);
        }
        ok
    }

    fn is_half(&mut self, f: Factor) -> bool {
        match f {
            Factor::Half => true,
            Factor::Value(v) => self.is_constant(v, 0.5),
        }
    }

    /// Flattens the product `op` heads into `leaves`: multiplications of
    /// the chain are opened, a division by 2 is a half.
    fn product_node(&mut self, op: Op, leaves: &mut Vec<Factor>) -> Option<()> {
        let cx = self.cx;
        if let Some(mul) = Mul::cast(cx, op) {
            self.product(mul.lhs(cx), leaves)?;
            self.product(mul.rhs(cx), leaves)
        } else if let Some(div) = Div::cast(cx, op).filter(|d| self.is_constant(d.rhs(cx), 2.0)) {
            leaves.push(Factor::Half);
            self.product(div.lhs(cx), leaves)
        } else {
            None
        }
    }

    fn product(&mut self, v: Value, leaves: &mut Vec<Factor>) -> Option<()> {
        if leaves.len() >= 3 {
            return None;
        }
        let mark = self.mark();
        let node = match self.inner::<Mul>(v) {
            Some(mul) => Some(mul.op()),
            None => self.inner::<Div>(v).map(Div::op),
        };
        if let Some(d) = node {
            if self.product_node(d, leaves).is_some() {
                return Some(());
            }
            self.reset(mark);
            return None;
        }
        leaves.push(Factor::Value(v));
        Some(())
    }

    /// Matches `1 + t(x)`, either order; the form of `t` is the answer.
    fn one_plus_t(&mut self, v: Value, x: Value) -> Option<GeluApproximation> {
        let add = self.inner::<Add>(v)?;
        let (a, b) = (add.lhs(self.cx), add.rhs(self.cx));
        for (one, t) in [(a, b), (b, a)] {
            let mark = self.mark();
            if self.is_constant(one, 1.0) {
                if let Some(form) = self.t(t, x) {
                    return Some(form);
                }
            }
            self.reset(mark);
        }
        None
    }

    /// Matches `tanh(sqrt(2/pi) (x + 0.044715 x^3))` or `erf(x / sqrt 2)`.
    fn t(&mut self, v: Value, x: Value) -> Option<GeluApproximation> {
        let mark = self.mark();
        if let Some(th) = self.inner::<Tanh>(v) {
            if self.tanh_argument(th.input(self.cx), x) {
                return Some(GeluApproximation::Tanh);
            }
            self.reset(mark);
            return None;
        }
        let e = self.inner::<Erf>(v)?;
        if self.erf_argument(e.input(self.cx), x) {
            return Some(GeluApproximation::None);
        }
        self.reset(mark);
        None
    }

    /// `x / sqrt 2` or `x * (1/sqrt 2)`, either order.
    fn erf_argument(&mut self, v: Value, x: Value) -> bool {
        let mark = self.mark();
        if let Some(d) = self.inner::<Div>(v) {
            let (a, b) = (d.lhs(self.cx), d.rhs(self.cx));
            if a == x && self.is_constant(b, std::f64::consts::SQRT_2) {
                return true;
            }
            self.reset(mark);
            return false;
        }
        self.scaled(v, std::f64::consts::FRAC_1_SQRT_2, |_, w| w == x)
    }

    /// `sqrt(2/pi) (x + 0.044715 x^3)`, every product and sum either order.
    fn tanh_argument(&mut self, v: Value, x: Value) -> bool {
        let sqrt_2_over_pi = (2.0 / std::f64::consts::PI).sqrt();
        self.scaled(v, sqrt_2_over_pi, |m, w| {
            let Some(add) = m.inner::<Add>(w) else {
                return false;
            };
            let (a, b) = (add.lhs(m.cx), add.rhs(m.cx));
            for (xx, cubic) in [(a, b), (b, a)] {
                if xx == x {
                    let mark = m.mark();
                    if m.scaled(cubic, 0.044715, |m, c| m.is_cube(c, x)) {
                        return true;
                    }
                    m.reset(mark);
                }
            }
            false
        })
    }

    /// `c * w` or `w * c` with `c` the constant `exact` and `w` as `rest` says.
    fn scaled(&mut self, v: Value, exact: f64, rest: impl Fn(&mut Self, Value) -> bool) -> bool {
        let mark = self.mark();
        let Some(mul) = self.inner::<Mul>(v) else {
            return false;
        };
        let (a, b) = (mul.lhs(self.cx), mul.rhs(self.cx));
        for (c, w) in [(a, b), (b, a)] {
            let inner = self.mark();
            if self.is_constant(c, exact) && rest(self, w) {
                return true;
            }
            self.reset(inner);
        }
        self.reset(mark);
        false
    }

    /// `x^3`: `nn.pow x, 3`, or three `x` multiplied in any grouping.
    fn is_cube(&mut self, v: Value, x: Value) -> bool {
        let mark = self.mark();
        if let Some(p) = self.inner::<Pow>(v) {
            let (a, b) = (p.lhs(self.cx), p.rhs(self.cx));
            if a == x && self.is_constant_exactly(b, 3.0) {
                return true;
            }
            self.reset(mark);
            return false;
        }
        let mut n = 0;
        if self.count_x(v, x, &mut n) && n == 3 {
            return true;
        }
        self.reset(mark);
        false
    }

    /// Counts the `x` leaves of a product of the chain; false if another leaf.
    fn count_x(&mut self, v: Value, x: Value, n: &mut u32) -> bool {
        if v == x {
            *n += 1;
            return *n <= 3;
        }
        match self.inner::<Mul>(v) {
            Some(m) => {
                let (a, b) = (m.lhs(self.cx), m.rhs(self.cx));
                self.count_x(a, x, n) && self.count_x(b, x, n)
            }
            None => false,
        }
    }

    /// Whether `v` is a constant of exactly `value` in every element.
    fn is_constant_exactly(&mut self, v: Value, value: f64) -> bool {
        let Some(d) = self.cx.defining_op(v) else {
            return false;
        };
        let ok = Constant::isa(self.cx, d)
            && nn::constant_tensor(self.cx, d)
                .is_ok_and(|t| t.numel() > 0 && t.to_f32_vec().iter().all(|&c| c as f64 == value));
        if ok && !self.constants.contains(&d) {
            self.constants.push(d);
        }
        ok
    }
}

/// Whether `c` is within one unit in the last place of `dtype` at `exact`.
/// The reference holds f64 tensors as f32, so f64 gets f32's precision.
fn within_ulp(c: f64, exact: f64, dtype: ElementType) -> bool {
    let fraction_bits = match dtype {
        ElementType::F16 => 10,
        ElementType::BF16 => 7,
        ElementType::F32 | ElementType::F64 => 23,
        _ => return false,
    };
    let ulp = 2f64.powi(exact.abs().log2().floor() as i32 - fraction_bits);
    (c - exact).abs() <= ulp
}

fn rewrite(cx: &mut Context, root: Op, m: &Match) -> Result<(), Diagnostic> {
    // Locations in program order, so the fused location reads as the source.
    let position: FxHashMap<Op, usize> = match cx.parent_block(root) {
        Some(b) => cx.block_ops(b).enumerate().map(|(i, o)| (o, i)).collect(),
        None => FxHashMap::default(),
    };
    let mut ops = m.ops.clone();
    ops.sort_by_key(|o| position.get(o).copied().unwrap_or(usize::MAX));
    let locs = ops.iter().map(|&o| cx.op_loc(o)).collect();
    let loc = cx.fused_loc(locs);
    let gelu = nn::build_op(
        cx,
        &OpKind::Gelu {
            approximate: m.approximate,
        },
        &[m.x],
        loc,
    )
    .map_err(|e| Diagnostic::error(loc, format!("nn-fuse-gelu: {e}")))?;
    cx.insert_op_before(root, gelu);
    cx.replace_all_uses(cx.result(root, 0), cx.result(gelu, 0));
    // Users before what they read: the chain is a tree within one block.
    for &o in ops.iter().rev() {
        cx.erase_op(o);
    }
    for &c in &m.constants {
        if !cx.is_erased(c) && !cx.has_uses(cx.result(c, 0)) {
            cx.erase_op(c);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::within_ulp;
    use ipu_reference::{round_to_type, ElementType};

    #[test]
    fn a_constant_matches_within_an_ulp_of_its_type() {
        let s = (2.0 / std::f64::consts::PI).sqrt();
        for t in [ElementType::F16, ElementType::BF16, ElementType::F32] {
            // The exact value rounded to the type.
            let r = round_to_type(s as f32, t) as f64;
            assert!(within_ulp(r, s, t), "{t:?}");
        }
        // Fewer digits than f32 holds, still within an f32 ulp.
        assert!(within_ulp(0.797_884_6, s, ElementType::F32));
        // Another constant: beyond an ulp in each type.
        assert!(!within_ulp(0.7978, s, ElementType::F32));
        assert!(!within_ulp(
            0.7,
            std::f64::consts::FRAC_1_SQRT_2,
            ElementType::F16
        ));
        assert!(!within_ulp(0.045, 0.044715, ElementType::F16));
        // FP8 and integer types are never matched by rounding.
        assert!(!within_ulp(0.5, 0.5, ElementType::F8E4M3FN));
        assert!(!within_ulp(1.0, 1.0, ElementType::I32));
    }
}
