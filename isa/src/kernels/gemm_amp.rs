//! `gemm_amp.S`: C = A x B on the AMP, K whole or in chunks, B as it lies
//! or transposed; its worker records and first weight block can be split
//! off as a supervisor prologue.

use super::*;

/// The GEMM modes of the AMP (`TYPE` of `gemm_amp.S`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GemmType {
    /// f16 inputs, f32 partials (32 MACs/cycle/tile).
    F16F32 = 0,
    /// f16 inputs, f16 partials (64 MACs/cycle/tile).
    F16F16 = 1,
    /// f8E4M3FN inputs, f16 outputs, scaled (128 MACs/cycle/tile).
    F8E4M3FN = 2,
    /// f8E5M2 inputs, f16 outputs, scaled (128 MACs/cycle/tile).
    F8E5M2 = 3,
    /// f32 inputs, f32 partials (16 MACs/cycle/tile).
    F32F32 = 4,
}

/// Bytes of the GEMM kernel's worker records (one per worker, which the
/// kernel fills in itself), after its state words (A, B, C, scale, and T
/// when it has an accumulator: [`KernelSpec::gemm_accumulator_bytes`]).
pub const GEMM_WORKER_RECORD_BYTES: usize = WORKER_CONTEXTS as usize * 40;

impl KernelSpec {
    /// C[M][N] = A[M][K] x B[N/16][K][16] on the AMP (K x 16 weights must
    /// fit one 4 KiB bank; see [`KernelSpec::gemm_chunked`] otherwise).
    pub fn gemm(ty: GemmType, m: usize, k: usize, n: usize) -> KernelSpec {
        KernelSpec {
            source: "gemm_amp",
            entry: "gemm_amp",
            params: params_of(&[
                ("TYPE", ty as i64),
                ("M", m as i64),
                ("K", k as i64),
                ("N", n as i64),
            ]),
        }
    }
    /// The same with K processed in chunks of `kc` (A stored as K/kc chunks
    /// of M x kc, B as N/16 x K/kc blocks of kc x 16); chunks after the
    /// first add to C (through the accumulator T with more than 16
    /// columns: [`KernelSpec::gemm_accumulator_bytes`]).
    pub fn gemm_chunked(ty: GemmType, m: usize, k: usize, kc: usize, n: usize) -> KernelSpec {
        let mut s = KernelSpec::gemm(ty, m, k, n);
        s.params.insert("KC".into(), kc as i64);
        s
    }
    /// Bytes of the accumulator T a `gemm_amp` specialisation reads and
    /// writes beside C (M x 16 partials and 8 bytes of slack, in the
    /// interleaved region; its address is the state's fifth word), when it
    /// has one: K in chunks and more than one 16-column block.
    pub fn gemm_accumulator_bytes(&self) -> Option<usize> {
        let p = |k: &str| self.params.get(k).copied().unwrap_or(0);
        if self.source != "gemm_amp" {
            return None;
        }
        let (k, kc, n, m) = (p("K"), p("KC"), p("N"), p("M"));
        let chunked = kc > 0 && kc < k;
        let pb = if matches!(p("TYPE"), 0 | 4) { 4 } else { 2 };
        (chunked && n > 16).then(|| (m * 16 * pb + 8) as usize)
    }

    /// Whether this `gemm_amp` specialisation may hand its AMP's shadow
    /// bank to the next GEMM on its tile (`NXT`: its workers load that
    /// GEMM's first block, which then starts with `HAVE`): one weight
    /// block, whose workers load the next one as they go (`OVERLAP`).
    pub fn gemm_prefetches(&self) -> bool {
        let p = |k: &str| self.params.get(k).copied().unwrap_or(0);
        if self.source != "gemm_amp" {
            return false;
        }
        let (k, n, m) = (p("K"), p("N"), p("M"));
        let kc = if p("KC") == 0 { k } else { p("KC") };
        let (kpi, ppi, eb) = match p("TYPE") {
            0 => (2, 2, 2),
            1 => (4, 4, 2),
            2 | 3 => (8, 4, 1),
            _ => (1, 2, 4),
        };
        if kc <= 0 || m <= 0 || k != kc || n != 16 {
            return false;
        }
        let words = kc * 16 * eb / 8;
        let wpr = (words + m - 1) / m;
        wpr <= kc / kpi - 16 / ppi
    }
}

/// `gemm_<type>_interleaved_k<K>[_kc<KC>]_c<N>_r<M/6>_r<ceil(M/6)>_m<M>[_bt][_have][_nxt][_pre]`.
fn name(params: &Params) -> String {
    let p = |k: &str| param_of(params, k);
    let t = match p("TYPE") {
        0 => "f16f32",
        1 => "f16",
        2 => "f8e4",
        3 => "f8e5",
        _ => "f32",
    };
    let m = p("M");
    let kc = match p("KC") {
        0 => String::new(),
        kc if kc == p("K") => String::new(),
        kc => format!("_kc{kc}"),
    };
    let pre = match p("PRE") {
        1 => "_pre",
        2 => "_prerec",
        _ => "",
    };
    let bt = if p("BT") == 1 { "_bt" } else { "" };
    let chain = match (p("NXT"), p("HAVE")) {
        (1, 1) => "_have_nxt",
        (1, _) => "_nxt",
        (_, 1) => "_have",
        _ => "",
    };
    format!(
        "gemm_{t}_interleaved_k{}{kc}_c{}_r{}_r{}_m{m}{bt}{chain}{pre}",
        p("K"),
        p("N"),
        m / 6,
        (m + 5) / 6
    )
}

/// +0 A, +4 B (through ldxw/wld), +8 C (read back with ld2x64 only to add
/// K-chunks), +12 the FP8 scale, +16 the accumulator T when it has one;
/// then the worker records the kernel fills in itself.
fn record_layout(spec: &KernelSpec) -> Result<Layout, String> {
    use Slot::{Addr as A, Value as V, Wide as W};
    let chunked = spec.param("KC") > 0 && spec.param("KC") < spec.param("K");
    let c = if chunked { W } else { A };
    let mut words = vec![W, W, c, V];
    if spec.gemm_accumulator_bytes().is_some() {
        words.push(W);
    }
    if spec.param("NXT") == 1 {
        words.push(W);
    }
    Ok((words, GEMM_WORKER_RECORD_BYTES))
}

/// The worker records and, with PRE = 1, the first weight block (which
/// reads B, word 1, into the AMP's bank); with PRE = 2 the records alone,
/// which read no buffer.
fn prologue(spec: &KernelSpec) -> Option<Prologue> {
    match spec.param("PRE") {
        1 if spec.param("HAVE") == 1 => None,
        1 => Some(Prologue {
            entry: "gemm_amp_pre",
            reads: &[1],
        }),
        2 => Some(Prologue {
            entry: "gemm_amp_pre",
            reads: &[],
        }),
        _ => None,
    }
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout,
    prologue,
};
