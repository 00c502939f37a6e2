//! `intew.S`: arithmetic, comparisons and select of i32 and i64 elements,
//! and the casts between booleans, integers and floats, on the supervisor.

use super::*;

/// Integer and boolean elementwise ops (`OP` of `intew.S`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntOp {
    Add = 0,
    Sub = 1,
    Mul = 2,
    /// Truncating division; a zero divisor faults.
    Div = 3,
    Max = 4,
    Min = 5,
    /// Integer power (the reference's rule for negative exponents).
    Pow = 6,
    /// Comparisons to booleans.
    Eq = 8,
    Lt = 9,
    Gt = 10,
    /// cond ? a : b, cond a boolean.
    Select = 12,
    /// An integer (or boolean) to a boolean: x != 0.
    ToBool = 16,
    /// A boolean to an integer 0 / 1.
    FromBool = 17,
    /// A boolean to a float 0.0 / 1.0 (W 4: f32, 2: f16).
    BoolToFloat = 18,
    /// i32 to i64, sign extended.
    Widen = 19,
    /// i64 to i32, the low 32 bits.
    Narrow = 20,
    /// Boolean reductions: any (ReduceMax), all (ReduceMin).
    Any = 21,
    All = 22,
    /// f32 to an integer (the reference's cast: towards zero, saturating
    /// at the i64 bounds, NaN 0; i32 the low 32 bits).
    FromF32 = 23,
    /// f32 to a boolean (x != 0).
    F32ToBool = 24,
}

const NAMES: &[(i64, &str)] = &[
    (0, "add"),
    (1, "sub"),
    (2, "mul"),
    (3, "div"),
    (4, "max"),
    (5, "min"),
    (6, "pow"),
    (8, "eq"),
    (9, "lt"),
    (10, "gt"),
    (12, "select"),
    (16, "tobool"),
    (17, "frombool"),
    (18, "booltofloat"),
    (19, "widen"),
    (20, "narrow"),
    (21, "any"),
    (22, "all"),
    (23, "fromf32"),
    (24, "f32tobool"),
];

impl KernelSpec {
    /// `op` over n elements, `w` the bytes of its integers (see `intew.S`).
    pub fn intew(op: IntOp, w: usize, n: usize) -> KernelSpec {
        KernelSpec {
            source: "intew",
            entry: "intew",
            params: params_of(&[("OP", op as i64), ("W", w as i64), ("N", n as i64)]),
        }
    }

    /// A boolean reduction (`all`: ReduceMin, else ReduceMax) to
    /// `results` booleans, each of `len` booleans `inner` apart (the
    /// blocks' (outer, len, inner) walk, results = outer x inner).
    pub fn bool_reduce(all: bool, results: usize, len: usize, inner: usize) -> KernelSpec {
        let op = if all { IntOp::All } else { IntOp::Any };
        KernelSpec {
            source: "intew",
            entry: "intew",
            params: params_of(&[
                ("OP", op as i64),
                ("N", results as i64),
                ("L", len as i64),
                ("I", inner as i64),
            ]),
        }
    }
}

/// `int_<op>_w<W>_n<N>`; the reductions `int_<any|all>_n<N>_l<L>_i<I>`.
fn name(params: &Params) -> String {
    let p = |k: &str| param_of(params, k);
    let op = NAMES
        .iter()
        .find(|(c, _)| *c == p("OP"))
        .map_or("op?", |(_, n)| n);
    if matches!(p("OP"), 21 | 22) {
        return format!("int_{op}_n{}_l{}_i{}", p("N"), p("L"), p("I"));
    }
    format!("int_{op}_w{}_n{}", p("W"), p("N"))
}

/// +0 in0, +4 in1 (binary ops, select), +8 in2 (select), +12 out.
fn record_layout(spec: &KernelSpec) -> Result<Layout, String> {
    use Slot::{Addr as A, Zero as Z};
    let op = spec.param("OP");
    Ok(match op {
        12 => (vec![A, A, A, A], 0),
        0..=10 => (vec![A, A, Z, A], 0),
        _ => (vec![A, Z, Z, A], 0),
    })
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout,
    prologue: no_prologue,
};
