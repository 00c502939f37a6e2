//! `compare.S`: comparisons of f32 or f16 values and boolean logic, one
//! byte 0/1 per element.

use super::*;

/// Comparisons and boolean logic (`OP` of `compare.S`): results are one
/// byte 0/1 per element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// x == y (f32, f16; NaN compares false).
    Eq = 0,
    /// x < y.
    Lt = 1,
    /// x > y.
    Gt = 2,
    /// Boolean and, or, not.
    And = 3,
    Or = 4,
    Not = 5,
}

impl CompareOp {
    pub fn is_binary(self) -> bool {
        self != CompareOp::Not
    }
    /// Whether it compares values (rather than combining booleans).
    pub fn is_comparison(self) -> bool {
        (self as i64) < 3
    }
}

impl KernelSpec {
    /// out = op(in0[, in1]) over n elements: a comparison of f32 or f16
    /// values (`ty`), or boolean logic (`ty` ignored).
    pub fn compare(op: CompareOp, ty: ElemType, n: usize) -> KernelSpec {
        let t = if ty == ElemType::F16 && op.is_comparison() {
            1
        } else {
            0
        };
        KernelSpec {
            source: "compare",
            entry: "compare",
            params: params_of(&[("OP", op as i64), ("TYPE", t), ("N", n as i64)]),
        }
    }
}

/// `cmp_<op>_<type>_n<N>`, or `i1_<op>_n<N>` for boolean logic.
fn name(params: &Params) -> String {
    let p = |k: &str| param_of(params, k);
    match p("OP") {
        op @ 0..=2 => format!(
            "cmp_{}_{}_n{}",
            ["eq", "lt", "gt"][op as usize],
            two_type_name(p("TYPE")),
            p("N")
        ),
        op @ 3..=5 => format!("i1_{}_n{}", ["and", "or", "not"][op as usize - 3], p("N")),
        _ => format!("cmp_op?_n{}", p("N")),
    }
}

/// +0 x, +4 y (binary ops; both with paired loads), +8 out.
fn record_layout(spec: &KernelSpec) -> Result<Layout, String> {
    use Slot::{Addr as A, Wide as W, Zero as Z};
    let binary = spec.param("OP") != CompareOp::Not as i64;
    Ok((if binary { vec![W, W, A] } else { vec![A, Z, A] }, 0))
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout,
    prologue: no_prologue,
};
