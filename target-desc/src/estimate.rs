//! One-tile GEMM cycle estimates (D: derived from poplibs' vertex cost formulas).
//!
//! The constants live in the target file so that a new target can change them;
//! this module only evaluates the two loop shapes the formulas take.

use serde::Deserialize;

/// Which block count is the outer loop of the estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoopOrder {
    /// fixed + Kb * (per_outer + Nb * (per_inner + per_row_group * n))
    KOuter,
    /// fixed + Nb * (per_outer + Kb * (per_inner + per_row_group * n))
    NOuter,
}

/// Constants of a one-tile GEMM estimate.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GemmEstimate {
    pub order: LoopOrder,
    pub fixed: u64,
    pub per_outer: u64,
    pub per_inner: u64,
    pub per_row_group: u64,
    pub rows_per_group: u64,
    pub n_block: u64,
    pub k_block: u64,
}

impl GemmEstimate {
    pub(crate) fn validate(&self) -> Result<(), (&'static str, String)> {
        for (f, v) in [
            ("rows_per_group", self.rows_per_group),
            ("n_block", self.n_block),
            ("k_block", self.k_block),
        ] {
            if v == 0 {
                return Err((f, "must be at least 1".into()));
            }
        }
        if self.per_row_group == 0 {
            return Err((
                "per_row_group",
                "must be at least 1 (otherwise cost ignores M)".into(),
            ));
        }
        Ok(())
    }

    /// Estimated cycles of an M x K by K x N product on one tile; 0 if any
    /// dimension is 0 (no vertex runs). Saturates instead of overflowing.
    pub fn cycles(&self, m: u64, k: u64, n: u64) -> u64 {
        if m == 0 || k == 0 || n == 0 {
            return 0;
        }
        let rows = m.div_ceil(self.rows_per_group);
        let nb = n.div_ceil(self.n_block);
        let kb = k.div_ceil(self.k_block);
        let (outer, inner) = match self.order {
            LoopOrder::KOuter => (kb, nb),
            LoopOrder::NOuter => (nb, kb),
        };
        let body = self
            .per_inner
            .saturating_add(self.per_row_group.saturating_mul(rows));
        let per_outer = self.per_outer.saturating_add(inner.saturating_mul(body));
        self.fixed.saturating_add(outer.saturating_mul(per_outer))
    }
}
