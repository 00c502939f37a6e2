//! `select.S`: out = cond ? a : b over n elements of f32 or f16.

use super::*;

impl KernelSpec {
    /// out = cond ? a : b over n elements of f32 or f16.
    pub fn select(ty: ElemType, n: usize) -> KernelSpec {
        let t = if ty == ElemType::F16 { 1 } else { 0 };
        KernelSpec {
            source: "select",
            entry: "select",
            params: params_of(&[("TYPE", t), ("N", n as i64)]),
        }
    }
}

/// `select_<type>_n<N>`.
fn name(params: &Params) -> String {
    let p = |k: &str| param_of(params, k);
    format!("select_{}_n{}", two_type_name(p("TYPE")), p("N"))
}

/// +0 cond, +4 a and +8 b (paired loads), +12 out.
fn record_layout(_: &KernelSpec) -> Result<Layout, String> {
    use Slot::{Addr as A, Wide as W};
    Ok((vec![A, W, W, A], 0))
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout,
    prologue: no_prologue,
};
