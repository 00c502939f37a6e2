//! `copy2d.S`: rows of 64-bit granules between strided layouts.

use super::*;

impl KernelSpec {
    /// Copy `blocks` x `rows` rows of `granules` 64-bit granules between
    /// strided layouts (strides in bytes).
    pub fn copy2d(
        blocks: usize,
        rows: usize,
        granules: usize,
        src: (usize, usize),
        dst: (usize, usize),
    ) -> KernelSpec {
        KernelSpec {
            source: "copy2d",
            entry: "copy2d",
            params: params_of(&[
                ("BLOCKS", blocks as i64),
                ("R", rows as i64),
                ("G", granules as i64),
                ("SRC_ROW", src.0 as i64),
                ("SRC_BLOCK", src.1 as i64),
                ("DST_ROW", dst.0 as i64),
                ("DST_BLOCK", dst.1 as i64),
            ]),
        }
    }
}

/// +0 src, +4 dst.
fn record_layout(_: &KernelSpec) -> Result<Layout, String> {
    Ok((vec![Slot::Addr; 2], 0))
}

/// `copy2d` and each parameter (`_<name><value>`).
fn name(params: &Params) -> String {
    generic_name_of("copy2d", params)
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout,
    prologue: no_prologue,
};
