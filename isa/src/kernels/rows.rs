//! `rows.S`: the row family (reductions, softmax, layer norm, row-vector
//! broadcasts) over whole rows on a tile, and the three passes of a row op
//! cut over tiles (statistics, their combination, the last pass).

use super::*;

/// Row operations (`OP` of `rows.S`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowOp {
    /// out = SCALE * sum over C.
    Sum = 0,
    Max = 1,
    Min = 2,
    Softmax = 3,
    LogSoftmax = 4,
    /// (x - mean) * rstd [* gamma] [+ beta] over each row.
    LayerNorm = 5,
    /// y[r][c] = x[r][c] + v[c] (a bias).
    AddRowVector = 6,
    /// y[r][c] = x[r][c] * v[c].
    MulRowVector = 7,
    /// Softmax of rows cut over tiles: per-piece [max, sum exp] pairs,
    SoftmaxStats = 8,
    /// their combination per row,
    SoftmaxCombine = 9,
    /// and each piece normalised.
    SoftmaxApply = 10,
    /// Layer norm of rows cut over tiles: per-piece [mean, var] pairs,
    LayerNormStats = 11,
    /// their combination per row into [mean, rstd],
    LayerNormCombine = 12,
    /// and each piece normalised (with its scale and bias columns).
    LayerNormApply = 13,
}

/// How `rows.S` walks an R x C block: along contiguous rows, or down the
/// columns of an R x C x `inner` block whose rows of `inner` elements are
/// `pitch` elements apart (f32 only; see the kernel's header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowWalk {
    Rows,
    Columns { inner: usize, pitch: usize },
}

/// Names of the row OP codes, for kernel names.
const ROW_NAMES: &[&str] = &[
    "sum",
    "max",
    "min",
    "softmax",
    "log_softmax",
    "layer_norm",
    "add_row_vector",
    "mul_row_vector",
    "softmax_stats",
    "softmax_combine",
    "softmax_apply",
    "ln_stats",
    "ln_combine",
    "ln_apply",
];

impl KernelSpec {
    /// A row operation on r rows of c elements with its defaults (a
    /// reduction to `ty`, layer norm with `eps` and neither scale nor bias).
    pub fn rows(op: RowOp, ty: ElemType, r: usize, c: usize, eps: f32) -> KernelSpec {
        match op {
            RowOp::LayerNorm => KernelSpec::layer_norm(ty, r, c, eps, false, false),
            RowOp::Sum | RowOp::Max | RowOp::Min => {
                KernelSpec::row_reduce(op, ty, ty, r, c, RowWalk::Rows, None)
            }
            _ => KernelSpec::row_op(op, ty, r, c, RowWalk::Rows),
        }
    }
    fn row_op(op: RowOp, ty: ElemType, r: usize, c: usize, walk: RowWalk) -> KernelSpec {
        let mut p = params_of(&[
            ("OP", op as i64),
            ("TYPE", type_code(ty)),
            ("R", r as i64),
            ("C", c as i64),
        ]);
        if let RowWalk::Columns { inner, pitch } = walk {
            p.insert("I".into(), inner as i64);
            p.insert("IP".into(), pitch as i64);
        }
        KernelSpec {
            source: "rows",
            entry: "rows",
            params: p,
        }
    }
    /// Sum, max or min of `ty` elements along C into `out` elements, times
    /// `scale` for a sum (a mean's 1 / count).
    pub fn row_reduce(
        op: RowOp,
        ty: ElemType,
        out: ElemType,
        r: usize,
        c: usize,
        walk: RowWalk,
        scale: Option<f32>,
    ) -> KernelSpec {
        let mut s = KernelSpec::row_op(op, ty, r, c, walk);
        s.params.insert("OUT".into(), type_code(out));
        if let Some(x) = scale {
            s.params.insert("SCALE".into(), x.to_bits() as i64);
        }
        s
    }
    /// Softmax (or log-softmax) along C.
    pub fn softmax(log: bool, ty: ElemType, r: usize, c: usize, walk: RowWalk) -> KernelSpec {
        let op = if log {
            RowOp::LogSoftmax
        } else {
            RowOp::Softmax
        };
        KernelSpec::row_op(op, ty, r, c, walk)
    }
    /// Softmax of rows cut over tiles, step 1: each row piece's maximum
    /// m and sum of exponentials, as f32 pairs; with `exps`, each element's
    /// exp(x - m) stored too (for [`KernelSpec::softmax_apply`]'s `exps`).
    pub fn softmax_stats(ty: ElemType, r: usize, c: usize, exps: bool) -> KernelSpec {
        let mut s = KernelSpec::row_op(RowOp::SoftmaxStats, ty, r, c, RowWalk::Rows);
        if exps {
            s.params.insert("EXPS".into(), 1);
        }
        s
    }
    /// Step 1 taking in what comes before the softmax (`rows.S` WIDEN,
    /// MUL, MASK; an f32 statistics kernel): its rows t = widen(x * mul) +
    /// v stored (the record's +12), the statistics of t.
    pub fn with_prologue(&self, pre: &StatsPrologue) -> KernelSpec {
        let mut s = self.clone();
        if pre.widen {
            s.params.insert("WIDEN".into(), 1);
        }
        if let Some(m) = pre.mul {
            s.params.insert("MUL".into(), 1);
            s.params.insert("MULV".into(), i64::from(m.to_bits()));
        }
        if pre.mask {
            s.params.insert("MASK".into(), 1);
        }
        s
    }
    /// Whether this statistics kernel takes a prologue ([`Self::with_prologue`]).
    pub fn has_stats_prologue(&self) -> bool {
        ["WIDEN", "MUL", "MASK"]
            .iter()
            .any(|k| self.params.get(*k) == Some(&1))
    }
    /// Step 2: the pairs of `groups` pieces of r rows combined into each
    /// row's [max, 1 / sum] (or [max + log sum, -] for log-softmax).
    pub fn softmax_combine(log: bool, r: usize, groups: usize) -> KernelSpec {
        let mut s = KernelSpec::row_op(
            RowOp::SoftmaxCombine,
            ElemType::F32,
            r,
            groups,
            RowWalk::Rows,
        );
        s.params.insert("LOG".into(), log as i64);
        s
    }
    /// A combining kernel (softmax or layer norm) over `r` of the rows of
    /// groups `pitch` rows apart: a share of the rows of a longer combine.
    pub fn combine_share(&self, r: usize, pitch: usize) -> KernelSpec {
        let mut s = self.clone();
        s.params.insert("R".into(), r as i64);
        s.params.insert("GP".into(), pitch as i64);
        s
    }
    /// A combining kernel (softmax or layer norm) with each row's groups
    /// cut into `parts` equal parts combined by as many workers, then each
    /// row's partial pairs merged by one (`P`; the partial pairs at +4).
    /// `parts` must divide the groups, at most six workers in all.
    pub fn combine_parts(&self, parts: usize) -> KernelSpec {
        let mut s = self.clone();
        if parts > 1 {
            s.params.insert("P".into(), parts as i64);
            if self.params.get("OP") == Some(&(RowOp::LayerNormCombine as i64)) {
                let groups = self.params.get("C").copied().unwrap_or(1).max(1) as usize;
                let inv = |n: usize| (1.0f32 / n.max(1) as f32).to_bits() as i64;
                s.params.insert("INV_Q".into(), inv(groups / parts));
                s.params.insert("INV_P".into(), inv(parts));
            }
        }
        s
    }
    /// A cut row op's last pass (softmax_apply from f32 exponentials,
    /// ln_apply of f32 rows) writing its result cast to `to` (FP8 at
    /// power-of-two `scale`) as a cast after it would (`CAST`, `SCL`).
    pub fn with_cast(&self, to: ElemType, scale: i32) -> KernelSpec {
        let mut s = self.clone();
        s.params.insert("CAST".into(), to as i64);
        if scale != 0 {
            s.params.insert("SCL".into(), i64::from(scale));
        }
        s
    }
    /// Step 3: each piece of the rows normalised by its row's pair; with
    /// `exps` (softmax, not log-softmax), from step 1's stored exponentials
    /// and the piece's own pairs: one multiply per element.
    pub fn softmax_apply(log: bool, exps: bool, ty: ElemType, r: usize, c: usize) -> KernelSpec {
        let mut s = KernelSpec::row_op(RowOp::SoftmaxApply, ty, r, c, RowWalk::Rows);
        s.params.insert("LOG".into(), log as i64);
        if exps {
            s.params.insert("EXPS".into(), 1);
        }
        s
    }
    /// Layer norm of rows cut over tiles, step 1: each row piece's mean and
    /// biased variance, as f32 pairs.
    pub fn ln_stats(ty: ElemType, r: usize, c: usize) -> KernelSpec {
        let mut s = KernelSpec::row_op(RowOp::LayerNormStats, ty, r, c, RowWalk::Rows);
        s.params
            .insert("INV_C".into(), (1.0f32 / c.max(1) as f32).to_bits() as i64);
        s
    }
    /// Step 1 of f32 rows that are the sum of two blocks, added in its
    /// first pass and stored as the elementwise add would (`ADD`).
    pub fn ln_stats_add(r: usize, c: usize) -> KernelSpec {
        let mut s = KernelSpec::ln_stats(ElemType::F32, r, c);
        s.params.insert("ADD".into(), 1);
        s
    }
    /// Step 2: the pairs of `groups` equal pieces of r rows combined into
    /// each row's [mean, 1 / sqrt(var + eps)].
    pub fn ln_combine(r: usize, groups: usize, eps: f32) -> KernelSpec {
        let mut s = KernelSpec::row_op(
            RowOp::LayerNormCombine,
            ElemType::F32,
            r,
            groups,
            RowWalk::Rows,
        );
        let p = &mut s.params;
        p.insert(
            "INV_C".into(),
            (1.0f32 / groups.max(1) as f32).to_bits() as i64,
        );
        p.insert("EPS".into(), eps.to_bits() as i64);
        s
    }
    /// Step 3: each piece normalised by its row's pair, with the piece's
    /// columns of the scale and bias when asked.
    pub fn ln_apply(ty: ElemType, r: usize, c: usize, gamma: bool, beta: bool) -> KernelSpec {
        let mut s = KernelSpec::row_op(RowOp::LayerNormApply, ty, r, c, RowWalk::Rows);
        s.params.insert("GAMMA".into(), gamma as i64);
        s.params.insert("BETA".into(), beta as i64);
        s
    }
    /// Layer norm of r rows of c elements, with a scale (gamma) and a bias
    /// (beta) row when asked.
    pub fn layer_norm(
        ty: ElemType,
        r: usize,
        c: usize,
        eps: f32,
        gamma: bool,
        beta: bool,
    ) -> KernelSpec {
        let mut s = KernelSpec::row_op(RowOp::LayerNorm, ty, r, c, RowWalk::Rows);
        let p = &mut s.params;
        p.insert("INV_C".into(), (1.0f32 / c.max(1) as f32).to_bits() as i64);
        p.insert("EPS".into(), eps.to_bits() as i64);
        p.insert("GAMMA".into(), gamma as i64);
        p.insert("BETA".into(), beta as i64);
        s
    }
}

/// What a cut softmax's statistics pass does to its rows x first (`rows.S`
/// WIDEN, MUL, MASK), each step rounded as the op it replaces: t =
/// widen(x * mul) + v, x f16 widened exactly to f32 (`widen`), multiplied
/// in x's type (`mul`), v a row vector of f32 (`mask`, the record's +4).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StatsPrologue {
    pub widen: bool,
    pub mul: Option<f32>,
    pub mask: bool,
}

impl StatsPrologue {
    /// Whether it does anything.
    pub fn any(&self) -> bool {
        self.widen || self.mul.is_some() || self.mask
    }
}

/// Whether a `rows.S` call of `OP` takes one record per worker: a cut row
/// op's statistics and last pass (softmax_stats, softmax_apply, ln_stats,
/// ln_apply).
pub fn rows_per_worker(op: i64) -> bool {
    [
        RowOp::SoftmaxStats,
        RowOp::SoftmaxApply,
        RowOp::LayerNormStats,
        RowOp::LayerNormApply,
    ]
    .iter()
    .any(|&o| o as i64 == op)
}

/// The records of a `rows.S` call taking one per worker
/// ([`rows_per_worker`]; rows of whole granules): for each worker the
/// byte offsets its first row adds to the call's five words (+0 x or the
/// exponentials, +4 the rows' pairs or the added operand (a prologue's
/// row vector: none), +8 the exponentials, the piece's own pairs or the
/// sum, +12 a prologue's t, +16 out), and its rows (the rows split as
/// [`worker_shares`] splits units).
pub fn rows_parts(params: &BTreeMap<String, i64>) -> [([u64; 5], u32); 6] {
    let p = |k: &str| params.get(k).copied().unwrap_or(0);
    let (op, r, c) = (p("OP"), p("R").max(0) as u64, p("C").max(0) as u64);
    let row = c * (4 - 2 * p("TYPE").clamp(0, 1)) as u64;
    // The cast result's row: f16 half the f32 row, FP8 a quarter.
    let out_row = match p("CAST") {
        1 => row / 2,
        3 | 4 => row / 4,
        _ => row,
    };
    worker_shares(r).map(|(first, rows)| {
        let (x, pair) = (first * row, first * 8);
        let words = if op == RowOp::SoftmaxStats as i64 {
            // A prologue's x may be f16 (WIDEN), its t and exponentials f32.
            let x_in = if p("WIDEN") == 1 { first * c * 2 } else { x };
            [x_in, 0, x, x, pair]
        } else if op == RowOp::SoftmaxApply as i64 {
            [x, pair, pair, 0, first * out_row]
        } else if op == RowOp::LayerNormStats as i64 {
            [x, x, x, 0, pair]
        } else {
            [x, pair, 0, 0, first * out_row]
        };
        (words, rows as u32)
    })
}

/// `rows_<op>_<type>[_to_<out>]_r<R>_c<C>` and a suffix per parameter that
/// changes the code.
fn name(params: &Params) -> String {
    let p = |k: &str| param_of(params, k);
    let ty = two_type_name;
    let op = ROW_NAMES.get(p("OP") as usize).copied().unwrap_or("op?");
    let mut s = format!("rows_{op}_{}", ty(p("TYPE")));
    if params.contains_key("OUT") && p("OUT") != p("TYPE") {
        s.push_str(&format!("_to_{}", ty(p("OUT"))));
    }
    s.push_str(&format!("_r{}_c{}", p("R"), p("C")));
    if params.contains_key("I") {
        s.push_str(&format!("_i{}", p("I")));
    }
    if params.contains_key("IP") && p("IP") != p("I") {
        s.push_str(&format!("_p{}", p("IP")));
    }
    if params.contains_key("GP") && p("GP") != p("R") {
        s.push_str(&format!("_gp{}", p("GP")));
    }
    if p("P") > 1 {
        s.push_str(&format!("_parts{}", p("P")));
    }
    if params.contains_key("SCALE") {
        s.push_str(&format!("_x{:x}", p("SCALE")));
    }
    if params.contains_key("EPS") {
        s.push_str(&format!("_eps{:x}", p("EPS")));
    }
    for (flag, suffix) in [
        ("GAMMA", "_scaled"),
        ("BETA", "_biased"),
        ("LOG", "_log"),
        ("EXPS", "_exps"),
        ("ADD", "_add"),
        ("WIDEN", "_wide"),
    ] {
        if p(flag) == 1 {
            s.push_str(suffix);
        }
    }
    if p("MUL") == 1 {
        s.push_str(&format!("_mul{:x}", p("MULV")));
    }
    if p("MASK") == 1 {
        s.push_str("_mask");
    }
    if p("CAST") != 0 {
        s.push_str(&format!("_cast_{}", elem_name(p("CAST"))));
    }
    // The name is a symbol: a negative scale is written m4, not -4.
    match p("SCL") {
        0 => {}
        n if n < 0 => s.push_str(&format!("_sclm{}", -n)),
        n => s.push_str(&format!("_scl{n}")),
    }
    s
}

/// Five words (+0 x, +4, +8, +12, +16 out; what the middle three hold
/// depends on OP), per worker with its rows for a cut row op's statistics
/// and last pass ([`rows_per_worker`]).
fn record_layout(spec: &KernelSpec) -> Result<Layout, String> {
    use Slot::{Addr as A, Value as V, Wide as W, Zero as Z};
    let op = spec.param("OP");
    let opt = |name: &str| if spec.param(name) == 1 { A } else { Z };
    let r = |o: RowOp| op == o as i64;
    let words = if r(RowOp::AddRowVector) || r(RowOp::MulRowVector) {
        vec![W, Z, W, Z, A]
    } else if r(RowOp::SoftmaxApply) {
        vec![A, A, opt("EXPS"), Z, A]
    } else if r(RowOp::SoftmaxStats) {
        // A prologue's row vector at +4 (with f32 x, both read with
        // paired loads), its t stored at +12.
        let pre = spec.has_stats_prologue();
        let paired = spec.param("MASK") == 1 && spec.param("WIDEN") == 0;
        let (x, v) = if paired { (W, W) } else { (A, opt("MASK")) };
        vec![x, v, opt("EXPS"), if pre { A } else { Z }, A]
    } else if r(RowOp::LayerNormApply) {
        vec![A, A, opt("GAMMA"), opt("BETA"), A]
    } else if r(RowOp::LayerNorm) {
        vec![A, Z, opt("GAMMA"), opt("BETA"), A]
    } else if r(RowOp::SoftmaxCombine) || r(RowOp::LayerNormCombine) {
        // In parts (P > 1): +4 the rows' partial pairs.
        let parts = if spec.param("P") > 1 { A } else { Z };
        vec![A, parts, Z, Z, A]
    } else if r(RowOp::LayerNormStats) && spec.param("ADD") == 1 {
        // x and y with paired loads, s = x + y stored.
        vec![W, W, A, Z, A]
    } else if op <= RowOp::LogSoftmax as i64 || r(RowOp::LayerNormStats) {
        vec![A, Z, Z, Z, A]
    } else {
        return Err(format!("rows OP {op} has no record layout"));
    };
    // A cut row op's statistics and last pass: per worker, its rows.
    let words = if rows_per_worker(op) {
        [words, vec![V]].concat().repeat(6)
    } else {
        words
    };
    Ok((words, 0))
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout,
    prologue: no_prologue,
};
