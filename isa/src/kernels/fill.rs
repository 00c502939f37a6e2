//! `fill.S`: 64-bit granules filled with a 32-bit pattern (the code
//! generator's own calls; no state record of the exchange stage).

use super::*;

impl KernelSpec {
    /// Fill `granules` 64-bit granules with a 32-bit pattern.
    pub fn fill(granules: usize, value: u32) -> KernelSpec {
        KernelSpec {
            source: "fill",
            entry: "fill",
            params: params_of(&[("G", granules as i64), ("VALUE", value as i64)]),
        }
    }
}

/// `fill` and each parameter (`_<name><value>`).
fn name(params: &Params) -> String {
    generic_name_of("fill", params)
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout: no_record_layout,
    prologue: no_prologue,
};
