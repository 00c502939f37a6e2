//! `partials.S`: split-K partial sums added in one pass, and its
//! row-vector form (a bias after the last partial, an f32 widening, an
//! activation, an FP8 store).

use super::*;

/// The most partial sums one `partials` call adds (its P).
pub const PARTIALS_MAX: usize = 6;
/// The most granules per row of the row-vector form of `partials` (a
/// bias added after the last partial).
pub const PARTIALS_BIAS_ROW_GRANULES: usize = 16;
/// The most partial sums of that form when it widens its f16 result.
pub const PARTIALS_WIDEN_MAX: usize = 5;

/// What the row-vector form of `partials` writes (`WIDE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialsWide {
    /// The sum in its own type, at +8.
    None = 0,
    /// The f16 sum at +8 and its exact f32 widening at +16.
    Both = 1,
    /// Only the f32 widening, at +8.
    Only = 2,
}

impl KernelSpec {
    /// out = c + p1 + ... + pP over n elements of f32 or f16: `partials`
    /// split-K partial sums (1 to 6) added into c in one pass.
    pub fn partials(ty: ElemType, n: usize, partials: usize) -> KernelSpec {
        let t = if ty == ElemType::F16 { 1 } else { 0 };
        KernelSpec {
            source: "partials",
            entry: "partials",
            params: params_of(&[("TYPE", t), ("N", n as i64), ("P", partials as i64)]),
        }
    }
    /// The same over rows of `cols` columns with a row vector (a bias)
    /// added after the last partial, and with `wide` 1 or 2 the f16 result
    /// widened exactly to f32 (1: besides the f16 result, 2: instead).
    pub fn partials_bias(
        ty: ElemType,
        n: usize,
        partials: usize,
        cols: usize,
        wide: PartialsWide,
    ) -> KernelSpec {
        let mut s = KernelSpec::partials(ty, n, partials);
        s.params.insert("C".into(), cols as i64);
        if wide != PartialsWide::None {
            s.params.insert("WIDE".into(), wide as i64);
        }
        s
    }
    /// [`KernelSpec::partials_bias`] (f16, no widening) with its result
    /// through an activation (`act`: GELU or its tanh form) and/or stored
    /// as FP8 (`to8`, at `scale`, saturating): one pass instead of the
    /// elementwise and cast kernels after it.
    pub fn partials_bias_post(
        n: usize,
        partials: usize,
        cols: usize,
        act: Option<EwOp>,
        to8: Option<(ElemType, i32)>,
    ) -> KernelSpec {
        let mut s = KernelSpec::partials_bias(ElemType::F16, n, partials, cols, PartialsWide::None);
        if let Some(op) = act {
            s.params.insert("ACT".into(), op as i64);
        }
        if let Some((e, scale)) = to8 {
            s.params.insert("TO8".into(), e as i64);
            s.params.insert("SCL".into(), scale as i64);
        }
        s
    }
}

/// `partials_add_<type>_p<P>_n<N>` and the row-vector form's suffixes.
fn name(params: &Params) -> String {
    let p = |k: &str| param_of(params, k);
    let bias = match p("C") {
        0 => String::new(),
        c => format!("_bias{c}"),
    };
    let wide = ["", "_and_f32", "_to_f32"]
        .get(p("WIDE") as usize)
        .copied()
        .unwrap_or("_wide?");
    let act = match p("ACT") {
        0 => String::new(),
        op => format!(
            "_{}",
            super::elementwise::EW_NAMES
                .iter()
                .find(|(c, _)| *c == op)
                .map_or("act?", |(_, n)| n)
        ),
    };
    let to8 = match p("TO8") {
        0 => String::new(),
        // A symbol: a negative scale's sign spelled `m`.
        t => match p("SCL") {
            s if s < 0 => format!("_to_{}_sm{}", elem_name(t), -s),
            s => format!("_to_{}_s{s}", elem_name(t)),
        },
    };
    format!(
        "partials_add_{}_p{}_n{}{bias}{wide}{act}{to8}",
        two_type_name(p("TYPE")),
        p("P"),
        p("N")
    )
}

/// c and the partials with paired loads; out may be c; the row-vector form
/// adds the bias (ld64) and the f32 out (WIDE 1; FP8 with TO8).
fn record_layout(spec: &KernelSpec) -> Result<Layout, String> {
    use Slot::{Addr as A, Wide as W, Zero as Z};
    if spec.param("C") > 0 || spec.param("WIDE") > 0 {
        let wide = if spec.param("WIDE") == 1 || spec.param("TO8") > 0 {
            A
        } else {
            Z
        };
        return Ok((vec![W, W, A, A, wide], 0));
    }
    Ok((vec![W, W, A], 0))
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout,
    prologue: no_prologue,
};
