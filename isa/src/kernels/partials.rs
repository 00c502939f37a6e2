//! `partials.S`: split-K partial sums added in one pass, and its
//! row-vector form (a bias after the last partial, an f32 widening, an
//! activation, an FP8 store).

use super::*;

/// The most partial sums one `partials` call adds (its P) when the share's
/// partials lie close enough together ([`partials_max`]).
pub const PARTIALS_MAX: usize = 32;
/// The most partial sums of the row-split row-vector form (`GRAN` 0: rows
/// over the workers, each unrolled).
pub const PARTIALS_ROWS_MAX: usize = 6;
/// The most granules per row of the row-split row-vector form.
pub const PARTIALS_BIAS_ROW_GRANULES: usize = 16;
/// The most partial sums of the row-split form when it widens its f16
/// result or stores it as FP8.
pub const PARTIALS_WIDEN_MAX: usize = 5;

/// The most partial sums one `partials` call of the granule form (without
/// a bias, or `GRAN` 1) adds over `n` elements of `ty`: its seven group
/// pointers each step through up to PG partials a share apart with 15-bit
/// offsets (`partials.S`), at most [`PARTIALS_MAX`].
pub fn partials_max(ty: ElemType, n: usize) -> usize {
    let gb = (n * ty.bytes()).div_ceil(8) * 8;
    let pg = if gb <= 16383 {
        1 + 16392 / gb.max(8)
    } else {
        1
    };
    PARTIALS_MAX.min(1 + 7 * pg)
}

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
    /// split-K partial sums (1 to [`partials_max`]) added into c in one pass.
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

/// What the row-vector form of `partials` does after the bias: the f32
/// widening, an activation (GELU or its tanh form), an FP8 copy at a scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartialsPost {
    pub wide: PartialsWide,
    pub act: Option<EwOp>,
    pub to8: Option<(ElemType, i32)>,
}

impl PartialsPost {
    /// The bias alone.
    pub const NONE: PartialsPost = PartialsPost {
        wide: PartialsWide::None,
        act: None,
        to8: None,
    };
}

impl KernelSpec {
    /// The `partials` call adding `partials` partial sums of `n` elements
    /// of `ty` in rows of `cols` with a row vector after them and `post`,
    /// when a form of the kernel takes it: of the row-split form (rows of
    /// up to [`PARTIALS_BIAS_ROW_GRANULES`] granules, up to
    /// [`PARTIALS_ROWS_MAX`] partials) and the granule form (any rows, up
    /// to [`partials_max`]), the one of fewer cycles.
    pub fn partials_row_vector(
        ty: ElemType,
        n: usize,
        partials: usize,
        cols: usize,
        post: PartialsPost,
    ) -> Option<KernelSpec> {
        let eb = ty.bytes();
        let extra = post.wide != PartialsWide::None || post.act.is_some() || post.to8.is_some();
        let both = post.wide != PartialsWide::None && (post.act.is_some() || post.to8.is_some());
        if cols == 0
            || !(cols * eb).is_multiple_of(8)
            || !n.is_multiple_of(cols)
            || partials == 0
            || (extra && ty != ElemType::F16)
            || both
        {
            return None;
        }
        let spec = |gran: bool| {
            let mut s = if post.act.is_some() || post.to8.is_some() {
                KernelSpec::partials_bias_post(n, partials, cols, post.act, post.to8)
            } else {
                KernelSpec::partials_bias(ty, n, partials, cols, post.wide)
            };
            if gran {
                s.params.insert("GRAN".into(), 1);
            }
            s
        };
        let rows_max = if post.wide != PartialsWide::None || post.to8.is_some() {
            PARTIALS_WIDEN_MAX
        } else {
            PARTIALS_ROWS_MAX
        };
        let rows = (cols * eb / 8 <= PARTIALS_BIAS_ROW_GRANULES && partials <= rows_max)
            .then(|| spec(false));
        let grans = (partials <= partials_max(ty, n)).then(|| spec(true));
        [rows, grans]
            .into_iter()
            .flatten()
            .filter_map(|s| cycles(&s).ok().map(|c| (c, s)))
            .min_by_key(|(c, _)| *c)
            .map(|(_, s)| s)
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
    let gran = if p("GRAN") == 1 { "_gsplit" } else { "" };
    format!(
        "partials_add_{}_p{}_n{}{bias}{gran}{wide}{act}{to8}",
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
