//! `elementwise.S`: out = op(in0[, in1]) over n elements of f32 or f16,
//! one record per worker.

use super::*;

/// Elementwise operations (`OP` of `elementwise.S`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EwOp {
    Add = 0,
    Sub = 1,
    Mul = 2,
    Div = 3,
    Max = 4,
    Min = 5,
    /// pow(x, y), IEEE 754 (negative bases with integral exponents signed).
    Pow = 6,
    Relu = 16,
    Gelu = 17,
    Exp = 18,
    Tanh = 19,
    Erf = 20,
    Rsqrt = 21,
    Sqrt = 22,
    Neg = 23,
    Abs = 24,
    Sigmoid = 25,
    Recip = 26,
    Log = 27,
    Copy = 28,
    /// GELU's tanh form.
    GeluTanh = 29,
}

impl EwOp {
    pub fn is_binary(self) -> bool {
        (self as i64) < 16
    }
}

/// Names of the elementwise OP codes, for kernel names.
pub(super) const EW_NAMES: &[(i64, &str)] = &[
    (0, "add"),
    (1, "sub"),
    (2, "mul"),
    (3, "div"),
    (4, "max"),
    (5, "min"),
    (6, "pow"),
    (16, "relu"),
    (17, "gelu"),
    (18, "exp"),
    (19, "tanh"),
    (20, "erf"),
    (21, "rsqrt"),
    (22, "sqrt"),
    (23, "neg"),
    (24, "abs"),
    (25, "sigmoid"),
    (26, "recip"),
    (27, "log"),
    (28, "copy"),
    (29, "gelu_tanh"),
];

impl KernelSpec {
    /// out = op(in0[, in1]) over n elements of f32 or f16.
    pub fn elementwise(op: EwOp, ty: ElemType, n: usize) -> KernelSpec {
        let t = if ty == ElemType::F16 { 1 } else { 0 };
        KernelSpec {
            source: "elementwise",
            entry: "elementwise",
            params: params_of(&[("OP", op as i64), ("TYPE", t), ("N", n as i64)]),
        }
    }
}

/// The words of each worker's record of `elementwise.S` (TYPE `ty`: 0 f32,
/// 1 f16; N `n`): the byte offset of its first granule from the call's
/// buffers (0 for a worker without granules), and its granules.
pub fn elementwise_parts(ty: i64, n: u64) -> [(u64, u32); 6] {
    let eb = if ty == 1 { 2 } else { 4 };
    worker_shares((n * eb).div_ceil(8)).map(|(first, count)| (first * 8, count as u32))
}

/// An `elementwise.S` state of absolute addresses (a test's call): per
/// worker its in0, in1 (0 for unary ops), out and granules.
pub fn elementwise_state(ty: i64, n: u64, in0: u32, in1: Option<u32>, out: u32) -> Vec<u32> {
    elementwise_parts(ty, n)
        .iter()
        .flat_map(|&(o, c)| {
            [
                in0 + o as u32,
                in1.map_or(0, |a| a + o as u32),
                out + o as u32,
                c,
            ]
        })
        .collect()
}

/// `ew_<op>_<type>_n<N>`.
fn name(params: &Params) -> String {
    let p = |k: &str| param_of(params, k);
    let op = EW_NAMES
        .iter()
        .find(|(c, _)| *c == p("OP"))
        .map_or("op?", |(_, n)| n);
    format!("ew_{op}_{}_n{}", two_type_name(p("TYPE")), p("N"))
}

/// Per worker: in0, in1 (binary ops), out, its granules. Binary kernels
/// stream both inputs with paired loads; unary ones use ld64.
fn record_layout(spec: &KernelSpec) -> Result<Layout, String> {
    use Slot::{Addr as A, Value as V, Wide as W, Zero as Z};
    let words = if spec.param("OP") < 16 {
        [W, W, A, V].repeat(6)
    } else {
        [A, Z, A, V].repeat(6)
    };
    Ok((words, 0))
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout,
    prologue: no_prologue,
};
