//! `gather.S`: a local lookup of rows by run-time indices.

use super::*;

impl KernelSpec {
    /// out[p][k] = data[p][indices[k]] for `pre` x `indices` rows of
    /// `row_bytes` bytes, from `rows` rows of data per p, with indices of
    /// `index_bytes` (4 or 8) bytes.
    pub fn gather(
        row_bytes: usize,
        rows: usize,
        indices: usize,
        pre: usize,
        index_bytes: usize,
    ) -> KernelSpec {
        KernelSpec {
            source: "gather",
            entry: "gather",
            params: params_of(&[
                ("RB", row_bytes as i64),
                ("D", rows as i64),
                ("NI", indices as i64),
                ("P", pre as i64),
                ("IB", index_bytes as i64),
            ]),
        }
    }
}

/// `gather_rb<RB>_d<D>_ni<NI>_p<P>_i<index bits>`.
fn name(params: &Params) -> String {
    let p = |k: &str| param_of(params, k);
    format!(
        "gather_rb{}_d{}_ni{}_p{}_i{}",
        p("RB"),
        p("D"),
        p("NI"),
        p("P"),
        8 * p("IB")
    )
}

/// +0 data, +4 indices, +8 out.
fn record_layout(_: &KernelSpec) -> Result<Layout, String> {
    Ok((vec![Slot::Addr; 3], 0))
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout,
    prologue: no_prologue,
};
