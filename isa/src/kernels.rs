//! The kernel library: the assembly sources under `kernels/`, specialised by
//! parameters, and a content-addressed cache of the assembled objects.
//!
//! A specialisation is (source, parameter values). Its cache key is the
//! SHA-256 of the source text, the parameters and the assembler version, so
//! a changed source or assembler never reuses a stale object. The cache
//! lives in `~/.cache/ipu-stack/kernels/<sha256>/{kernel.o,kernel.json}`
//! (or under `$IPU_KERNEL_CACHE`); entries are written to a temporary
//! directory and renamed into place, so concurrent builds never see a
//! half-written entry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::Digest;

use crate::asm::{assemble, AsmErrors, Assembled};
use crate::elf::{ElfError, KernelMeta, ObjectFile};

/// Lower-case hex SHA-256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = sha2::Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// One kernel source file.
#[derive(Clone, Copy, Debug)]
pub struct KernelSource {
    pub name: &'static str,
    pub file: &'static str,
    pub text: &'static str,
}

macro_rules! sources {
    ($($name:literal),* $(,)?) => {
        /// Every kernel source of the library.
        pub static SOURCES: &[KernelSource] = &[$(KernelSource {
            name: $name,
            file: concat!("kernels/", $name, ".S"),
            text: include_str!(concat!("../../kernels/", $name, ".S")),
        }),*];
    };
}

sources![
    "gemm_amp",
    "elementwise",
    "rows",
    "cast",
    "fill",
    "copy2d",
    "compare",
    "select",
    "gather",
    "lcopy",
    "partials",
];

/// The source of a kernel by name.
pub fn source(name: &str) -> Option<&'static KernelSource> {
    SOURCES.iter().find(|s| s.name == name)
}

#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error("no kernel source named `{0}`")]
    Unknown(String),
    #[error("{0}")]
    Asm(#[from] AsmErrors),
    #[error("kernel cache at {path}: {err}")]
    Io { path: PathBuf, err: std::io::Error },
    #[error("cached object is damaged: {0}")]
    Elf(#[from] ElfError),
}

/// The name of a specialisation, e.g. `gemm_f16_interleaved_k64_c80_r7_r8_m46`.
pub fn specialised_name(name: &str, params: &BTreeMap<String, i64>) -> String {
    let p = |k: &str| params.get(k).copied().unwrap_or(0);
    if name == "gemm_amp" {
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
        return format!(
            "gemm_{t}_interleaved_k{}{kc}_c{}_r{}_r{}_m{m}{bt}{pre}",
            p("K"),
            p("N"),
            m / 6,
            (m + 5) / 6
        );
    }
    let elem = |code: i64| match code {
        0 => "f32",
        1 => "f16",
        2 => "bf16",
        3 => "f8e4m3fn",
        4 => "f8e5m2",
        5 => "i32",
        6 => "i64",
        _ => "t?",
    };
    // The two-type kernels' TYPE is 0 (f32) or 1 (f16).
    let ty = |code: i64| if code == 1 { "f16" } else { "f32" };
    match name {
        "elementwise" => {
            let op = EW_NAMES
                .iter()
                .find(|(c, _)| *c == p("OP"))
                .map_or("op?", |(_, n)| n);
            return format!("ew_{op}_{}_n{}", ty(p("TYPE")), p("N"));
        }
        "rows" => {
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
            if p("GAMMA") == 1 {
                s.push_str("_scaled");
            }
            if p("BETA") == 1 {
                s.push_str("_biased");
            }
            if p("LOG") == 1 {
                s.push_str("_log");
            }
            if p("EXPS") == 1 {
                s.push_str("_exps");
            }
            if p("ADD") == 1 {
                s.push_str("_add");
            }
            if p("WIDEN") == 1 {
                s.push_str("_wide");
            }
            if p("MUL") == 1 {
                s.push_str(&format!("_mul{:x}", p("MULV")));
            }
            if p("MASK") == 1 {
                s.push_str("_mask");
            }
            if p("CAST") != 0 {
                s.push_str(&format!("_cast_{}", elem(p("CAST"))));
            }
            // The name is a symbol: a negative scale is written m4, not -4.
            match p("SCL") {
                0 => {}
                n if n < 0 => s.push_str(&format!("_sclm{}", -n)),
                n => s.push_str(&format!("_scl{n}")),
            }
            return s;
        }
        "cast" => {
            let sat = if params.get("SAT") == Some(&0) {
                "_nosat"
            } else {
                ""
            };
            return format!(
                "cast_{}_{}{sat}_n{}",
                elem(p("FROM")),
                elem(p("TO")),
                p("N")
            );
        }
        "compare" => {
            return match p("OP") {
                op @ 0..=2 => format!(
                    "cmp_{}_{}_n{}",
                    ["eq", "lt", "gt"][op as usize],
                    ty(p("TYPE")),
                    p("N")
                ),
                op @ 3..=5 => format!("i1_{}_n{}", ["and", "or", "not"][op as usize - 3], p("N")),
                _ => format!("cmp_op?_n{}", p("N")),
            };
        }
        "select" => return format!("select_{}_n{}", ty(p("TYPE")), p("N")),
        "partials" => {
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
                    EW_NAMES
                        .iter()
                        .find(|(c, _)| *c == op)
                        .map_or("act?", |(_, n)| n)
                ),
            };
            let to8 = match p("TO8") {
                0 => String::new(),
                // A symbol: a negative scale's sign spelled `m`.
                t => match p("SCL") {
                    s if s < 0 => format!("_to_{}_sm{}", elem(t), -s),
                    s => format!("_to_{}_s{s}", elem(t)),
                },
            };
            return format!(
                "partials_add_{}_p{}_n{}{bias}{wide}{act}{to8}",
                ty(p("TYPE")),
                p("P"),
                p("N")
            );
        }
        "gather" => {
            return format!(
                "gather_rb{}_d{}_ni{}_p{}_i{}",
                p("RB"),
                p("D"),
                p("NI"),
                p("P"),
                8 * p("IB")
            )
        }
        _ => {}
    }
    let mut s = name.to_string();
    for (k, v) in params {
        s.push_str(&format!("_{}{v}", k.to_lowercase()));
    }
    s
}

/// Names of the elementwise OP codes, for kernel names.
const EW_NAMES: &[(i64, &str)] = &[
    (0, "add"),
    (1, "sub"),
    (2, "mul"),
    (3, "div"),
    (4, "max"),
    (5, "min"),
    (6, "pow"),
    (16, "relu"),
    (17, "gelu"),
    (18, "exp"),
    (19, "tanh"),
    (20, "erf"),
    (21, "rsqrt"),
    (22, "sqrt"),
    (23, "neg"),
    (24, "abs"),
    (25, "sigmoid"),
    (26, "recip"),
    (27, "log"),
    (28, "copy"),
    (29, "gelu_tanh"),
];

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

/// Assembles a library kernel with parameters (no cache).
pub fn assemble_kernel(
    name: &str,
    params: &BTreeMap<String, i64>,
) -> Result<Assembled, KernelError> {
    let src = source(name).ok_or_else(|| KernelError::Unknown(name.to_string()))?;
    let mut a = assemble(src.file, src.text, params)?;
    a.meta.name = specialised_name(name, params);
    a.object.meta = Some(a.meta.clone());
    Ok(a)
}

/// A kernel as the cache returns it.
#[derive(Clone, Debug)]
pub struct CachedKernel {
    pub key: String,
    pub dir: PathBuf,
    pub object: ObjectFile,
    pub meta: KernelMeta,
    /// Whether it came from the cache rather than being assembled now.
    pub hit: bool,
}

/// The content-addressed kernel cache.
#[derive(Clone, Debug)]
pub struct KernelCache {
    pub dir: PathBuf,
}

impl KernelCache {
    /// `$IPU_KERNEL_CACHE`, else `~/.cache/ipu-stack/kernels`.
    pub fn from_env() -> KernelCache {
        if let Some(d) = std::env::var_os("IPU_KERNEL_CACHE") {
            return KernelCache {
                dir: PathBuf::from(d),
            };
        }
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        KernelCache {
            dir: home.join(".cache/ipu-stack/kernels"),
        }
    }

    pub fn new(dir: impl Into<PathBuf>) -> KernelCache {
        KernelCache { dir: dir.into() }
    }

    /// The cache key of a specialisation.
    pub fn key(name: &str, text: &str, params: &BTreeMap<String, i64>) -> String {
        let mut h = sha2::Sha256::new();
        h.update(b"ipu-as ");
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(b"\0");
        h.update(name.as_bytes());
        h.update(b"\0");
        h.update(text.as_bytes());
        for (k, v) in params {
            h.update(format!("\0{k}={v}").as_bytes());
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Returns the specialisation, assembling and storing it on a miss.
    pub fn get(
        &self,
        name: &str,
        params: &BTreeMap<String, i64>,
    ) -> Result<CachedKernel, KernelError> {
        let src = source(name).ok_or_else(|| KernelError::Unknown(name.to_string()))?;
        let key = Self::key(name, src.text, params);
        let dir = self.dir.join(&key);
        let io = |path: &Path, err| KernelError::Io {
            path: path.to_path_buf(),
            err,
        };
        if let (Ok(elf), Ok(json)) = (
            std::fs::read(dir.join("kernel.o")),
            std::fs::read(dir.join("kernel.json")),
        ) {
            if let (Ok(object), Ok(meta)) = (
                ObjectFile::from_elf(&elf),
                serde_json::from_slice::<KernelMeta>(&json),
            ) {
                return Ok(CachedKernel {
                    key,
                    dir,
                    object,
                    meta,
                    hit: true,
                });
            }
        }
        if dir.exists() {
            // A damaged or partial entry: replace it.
            let _ = std::fs::remove_dir_all(&dir);
        }
        let a = assemble_kernel(name, params)?;
        std::fs::create_dir_all(&self.dir).map_err(|e| io(&self.dir, e))?;
        // Write into a private temporary directory, then rename it into place.
        let tmp = self.dir.join(format!(
            ".tmp-{key}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(|e| io(&tmp, e))?;
        std::fs::write(tmp.join("kernel.o"), a.elf_bytes()).map_err(|e| io(&tmp, e))?;
        let json = serde_json::to_vec_pretty(&a.meta).unwrap_or_default();
        std::fs::write(tmp.join("kernel.json"), json).map_err(|e| io(&tmp, e))?;
        match std::fs::rename(&tmp, &dir) {
            Ok(()) => {}
            Err(_) if dir.join("kernel.json").exists() => {
                // Another build stored the same entry first; theirs is identical.
                let _ = std::fs::remove_dir_all(&tmp);
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&tmp);
                return Err(io(&dir, e));
            }
        }
        Ok(CachedKernel {
            key,
            dir,
            object: a.object,
            meta: a.meta,
            hit: false,
        })
    }
}

/// Element types of the kernel library (their parameter codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    F32 = 0,
    F16 = 1,
    Bf16 = 2,
    F8E4M3FN = 3,
    F8E5M2 = 4,
}

impl ElemType {
    pub fn bytes(self) -> usize {
        match self {
            ElemType::F32 => 4,
            ElemType::F16 | ElemType::Bf16 => 2,
            _ => 1,
        }
    }
}

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

/// Elementwise operations (`OP` of `elementwise.S`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EwOp {
    Add = 0,
    Sub = 1,
    Mul = 2,
    Div = 3,
    Max = 4,
    Min = 5,
    /// pow(x, y), IEEE 754 (negative bases with integral exponents signed).
    Pow = 6,
    Relu = 16,
    Gelu = 17,
    Exp = 18,
    Tanh = 19,
    Erf = 20,
    Rsqrt = 21,
    Sqrt = 22,
    Neg = 23,
    Abs = 24,
    Sigmoid = 25,
    Recip = 26,
    Log = 27,
    Copy = 28,
    /// GELU's tanh form.
    GeluTanh = 29,
}

impl EwOp {
    pub fn is_binary(self) -> bool {
        (self as i64) < 16
    }
}

/// Comparisons and boolean logic (`OP` of `compare.S`): results are one
/// byte 0/1 per element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// x == y (f32, f16; NaN compares false).
    Eq = 0,
    /// x < y.
    Lt = 1,
    /// x > y.
    Gt = 2,
    /// Boolean and, or, not.
    And = 3,
    Or = 4,
    Not = 5,
}

impl CompareOp {
    pub fn is_binary(self) -> bool {
        self != CompareOp::Not
    }
    /// Whether it compares values (rather than combining booleans).
    pub fn is_comparison(self) -> bool {
        (self as i64) < 3
    }
}

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

/// Worker contexts every kernel of the library divides its work over (a
/// target must declare as many: `threads.worker_contexts`).
pub const WORKER_CONTEXTS: u32 = 6;

/// Bytes of the GEMM kernel's worker records (one per worker, which the
/// kernel fills in itself), after its state words (A, B, C, scale, and T
/// when it has an accumulator: [`KernelSpec::gemm_accumulator_bytes`]).
pub const GEMM_WORKER_RECORD_BYTES: usize = WORKER_CONTEXTS as usize * 40;

/// One specialisation of a library kernel: its source, entry and parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelSpec {
    pub source: &'static str,
    pub entry: &'static str,
    pub params: BTreeMap<String, i64>,
}

/// `TYPE` of the two-type kernels: 0 f32, 1 f16.
fn type_code(ty: ElemType) -> i64 {
    (ty == ElemType::F16) as i64
}

fn params_of(p: &[(&str, i64)]) -> BTreeMap<String, i64> {
    p.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

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
    /// out = op(in0[, in1]) over n elements of f32 or f16.
    pub fn elementwise(op: EwOp, ty: ElemType, n: usize) -> KernelSpec {
        let t = if ty == ElemType::F16 { 1 } else { 0 };
        KernelSpec {
            source: "elementwise",
            entry: "elementwise",
            params: params_of(&[("OP", op as i64), ("TYPE", t), ("N", n as i64)]),
        }
    }
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
    /// out = op(in0[, in1]) over n elements: a comparison of f32 or f16
    /// values (`ty`), or boolean logic (`ty` ignored).
    pub fn compare(op: CompareOp, ty: ElemType, n: usize) -> KernelSpec {
        let t = if ty == ElemType::F16 && op.is_comparison() {
            1
        } else {
            0
        };
        KernelSpec {
            source: "compare",
            entry: "compare",
            params: params_of(&[("OP", op as i64), ("TYPE", t), ("N", n as i64)]),
        }
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
    /// out = cond ? a : b over n elements of f32 or f16.
    pub fn select(ty: ElemType, n: usize) -> KernelSpec {
        let t = if ty == ElemType::F16 { 1 } else { 0 };
        KernelSpec {
            source: "select",
            entry: "select",
            params: params_of(&[("TYPE", t), ("N", n as i64)]),
        }
    }
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
    /// n elements from one type to another.
    pub fn cast(from: ElemType, to: ElemType, n: usize) -> KernelSpec {
        KernelSpec {
            source: "cast",
            entry: "cast",
            params: params_of(&[("FROM", from as i64), ("TO", to as i64), ("N", n as i64)]),
        }
    }
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
    /// Fill `granules` 64-bit granules with a 32-bit pattern.
    pub fn fill(granules: usize, value: u32) -> KernelSpec {
        KernelSpec {
            source: "fill",
            entry: "fill",
            params: params_of(&[("G", granules as i64), ("VALUE", value as i64)]),
        }
    }
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
    /// `lcopy.S` for words of `align` bytes: the code is the same whatever
    /// the copy's shape, which its record carries ([`LocalCopy`]).
    pub fn lcopy(align: u32) -> KernelSpec {
        KernelSpec {
            source: "lcopy",
            entry: "lcopy",
            params: params_of(&[("A", align as i64)]),
        }
    }
    /// `lcopy.S` transposing 2 x 2 blocks of 2-byte elements (T = 1).
    pub fn lcopy_pairs() -> KernelSpec {
        let mut s = KernelSpec::lcopy(2);
        s.params.insert("T".into(), 1);
        s
    }
    /// The specialised kernel name.
    pub fn name(&self) -> String {
        specialised_name(self.source, &self.params)
    }
    /// Assembles it (no cache).
    pub fn assemble(&self) -> Result<Assembled, KernelError> {
        assemble_kernel(self.source, &self.params)
    }
}

impl KernelCache {
    /// [`KernelCache::get`] for a [`KernelSpec`].
    pub fn get_spec(&self, spec: &KernelSpec) -> Result<CachedKernel, KernelError> {
        self.get(spec.source, &spec.params)
    }
}

/// One stepped group of local transfers as `lcopy.S` copies it: `repeat`
/// rows of `count` transfers of `words` words of `align` bytes, transfer
/// (r, c) at source `r * rsrc_step + c * src_step` and destination
/// `r * rdst_step + c * dst_step` from the group's first. With `pairs`,
/// a transposition of 2-byte elements: transfer (r, c) is the 2 x 2 block
/// of rows 2r, 2r + 1 (adjacent in the source) and columns 2c, 2c + 1
/// (adjacent in the destination); `src_step` steps one column and
/// `dst_step` is the odd row's destination offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LocalCopy {
    pub pairs: bool,
    pub align: u32,
    pub count: u32,
    pub words: u32,
    pub repeat: u32,
    pub src_step: i64,
    pub dst_step: i64,
    pub rsrc_step: i64,
    pub rdst_step: i64,
}

/// The largest of 8, 4, 2, 1 that divides every value.
pub fn copy_alignment(values: &[i64]) -> u32 {
    let mut a = 8u32;
    for &v in values {
        while v.rem_euclid(i64::from(a)) != 0 {
            a /= 2;
        }
    }
    a
}

impl LocalCopy {
    /// The group of `count` transfers of `len` bytes (source and destination
    /// stepping by `src_step`, `dst_step`), `repeat` times (stepping by
    /// `rsrc_step`, `rdst_step`), from buffer offsets `src_off`, `dst_off`
    /// of 8-aligned buffers; `None` when a figure does not fit the record
    /// (each worker's part is kept in 16-bit fields).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        count: i64,
        len: i64,
        src_step: i64,
        dst_step: i64,
        repeat: i64,
        rsrc_step: i64,
        rdst_step: i64,
        offsets: (i64, i64),
    ) -> Option<LocalCopy> {
        let align = copy_alignment(&[
            offsets.0, offsets.1, len, src_step, dst_step, rsrc_step, rdst_step,
        ]);
        let fits = |v: i64| v.unsigned_abs() < 1 << 30;
        let positive = |v: i64| v > 0 && fits(v);
        let ok = positive(count)
            && positive(len)
            && positive(repeat)
            && fits(count.checked_mul(repeat)?)
            && [src_step, dst_step, rsrc_step, rdst_step]
                .iter()
                .all(|&s| fits(s));
        // A transposition of 2-byte elements, the destination contiguous
        // along a row (as given or with the two loops swapped): 2 x 2 blocks.
        let pair_form = |count: i64, ss: i64, ds: i64, repeat: i64, rs: i64, rd: i64| {
            let four = |v: i64| v % 4 == 0;
            (align == 2
                && len == 2
                && ds == 2
                && rs == 2
                && count % 2 == 0
                && repeat % 2 == 0
                && four(offsets.0)
                && four(offsets.1)
                && four(ss)
                && four(rd))
            .then_some(LocalCopy {
                pairs: true,
                align,
                count: (count / 2) as u32,
                words: 1,
                repeat: (repeat / 2) as u32,
                src_step: ss,
                dst_step: rd,
                rsrc_step: 2 * rs,
                rdst_step: 2 * rd,
            })
        };
        let pairs = ok
            .then(|| {
                pair_form(count, src_step, dst_step, repeat, rsrc_step, rdst_step)
                    .or_else(|| pair_form(repeat, rsrc_step, rdst_step, count, src_step, dst_step))
            })
            .flatten();
        let copy = pairs.or_else(|| {
            ok.then(|| LocalCopy {
                pairs: false,
                align,
                count: count as u32,
                words: (len / i64::from(align)) as u32,
                repeat: repeat as u32,
                src_step,
                dst_step,
                rsrc_step,
                rdst_step,
            })
        })?;
        let half = |v: u64| v < 1 << 16;
        copy.parts()
            .iter()
            .all(|p| half(p.row) && half(p.first) && half(p.transfers) && half(p.words))
            .then_some(copy)
    }

    /// How a one-word transfer walks (the cycle formula's WALK): 1 when the
    /// destination steps by one word, 2 when the source does, else 0.
    pub fn walk(&self) -> u64 {
        let a = i64::from(self.align);
        if self.pairs {
            return 0;
        }
        match self.words {
            1 if self.dst_step == a => 1,
            1 if self.src_step == a => 2,
            _ => 0,
        }
    }

    /// Worker issues per transfer of `w` words (as `lcopy.S` counts them).
    fn per_transfer(&self, w: u64) -> u64 {
        match (w, self.align) {
            _ if self.pairs => 6,
            (1, _) if self.walk() > 0 => 3,
            (1, _) => 4,
            (w, 8) => 6 + w,
            (w, _) => 5 + 2 * w,
        }
    }

    /// Each worker's part. The words of each transfer are split when that
    /// keeps the busiest worker shorter than splitting the transfers.
    pub fn parts(&self) -> Vec<CopyPart> {
        let n = u64::from(WORKER_CONTEXTS);
        let t = u64::from(self.count) * u64::from(self.repeat);
        let w = u64::from(self.words);
        let by_transfers = t.div_ceil(n) * self.per_transfer(w);
        let by_words = t * self.per_transfer(w.div_ceil(n));
        let count = u64::from(self.count);
        (0..n)
            .map(|k| {
                let (tlo, tn, wlo, wn) = if w >= n && by_words < by_transfers {
                    (
                        0,
                        t,
                        k * (w / n) + k.min(w % n),
                        w / n + u64::from(k < w % n),
                    )
                } else {
                    (
                        k * (t / n) + k.min(t % n),
                        t / n + u64::from(k < t % n),
                        0,
                        w,
                    )
                };
                let tn = if wn == 0 { 0 } else { tn };
                CopyPart {
                    row: tlo / count,
                    first: tlo % count,
                    transfers: tn,
                    words: wn,
                    offset: wlo * u64::from(self.align),
                }
            })
            .collect()
    }

    /// The busiest worker's transfers, words per transfer and rows touched
    /// (the cycle formula's TN, WN, SEGS): the worker with the most issues,
    /// counted as `lcopy.S` does (a row some 15 issues).
    pub fn busiest(&self) -> (u64, u64, u64) {
        let mut best = (0, 1, 0, 0);
        for p in self.parts() {
            if p.transfers > 0 {
                let segs = (p.first + p.transfers - 1) / u64::from(self.count) + 1;
                let issues = p.transfers * self.per_transfer(p.words) + 15 * segs;
                if issues > best.3 {
                    best = (p.transfers, p.words, segs, issues);
                }
            }
        }
        (best.0, best.1, best.2)
    }

    /// The specialisation to link: the code depends on the alignment only.
    pub fn spec(&self) -> KernelSpec {
        if self.pairs {
            KernelSpec::lcopy_pairs()
        } else {
            KernelSpec::lcopy(self.align)
        }
    }

    /// The specialisation whose cycle formula is this copy's cost (the same
    /// code; TN, WN, SEGS and WALK enter only the formula).
    pub fn cost_spec(&self) -> KernelSpec {
        let (tn, wn, segs) = self.busiest();
        let mut s = self.spec();
        s.params.insert("TN".into(), tn as i64);
        s.params.insert("WN".into(), wn.max(1) as i64);
        s.params.insert("SEGS".into(), segs as i64);
        s.params.insert("WALK".into(), self.walk() as i64);
        s
    }

    /// The record, word by word (`lcopy.S`'s header): COUNT, the four
    /// steps (two's complement), then per worker the source and destination
    /// of its first row (with its words' byte offset), its first transfer
    /// in that row and its transfers (16 bits each), and its words.
    pub fn record(&self) -> Vec<RecordWord> {
        let mut v = vec![
            RecordWord::Val(self.count),
            RecordWord::Val(self.src_step as u32),
            RecordWord::Val(self.dst_step as u32),
            RecordWord::Val(self.rsrc_step as u32),
            RecordWord::Val(self.rdst_step as u32),
        ];
        for p in self.parts() {
            let (row, off) = (p.row as i64, p.offset as i64);
            v.push(RecordWord::Src(row * self.rsrc_step + off));
            v.push(RecordWord::Dst(row * self.rdst_step + off));
            v.push(RecordWord::Val((p.first | p.transfers << 16) as u32));
            v.push(RecordWord::Val(p.words as u32));
        }
        v
    }
}

/// How the worker kernels split `units` work units over the six workers:
/// worker `w` takes `units / 6`, one more when `w < units % 6`, right after
/// the units of the workers before it. Returns (first unit, units) each; a
/// worker without units starts at 0, so the pointers of its record stay in
/// the call's buffers.
pub fn worker_shares(units: u64) -> [(u64, u64); 6] {
    let (lo, rem) = (units / 6, units % 6);
    std::array::from_fn(|w| {
        let w = w as u64;
        let count = lo + u64::from(w < rem);
        let first = if count == 0 { 0 } else { w * lo + w.min(rem) };
        (first, count)
    })
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

/// `cast.S`'s element bytes of a FROM / TO code (0 f32, 1 f16, 2 bf16,
/// 3 f8E4M3FN, 4 f8E5M2, 5 i32, 6 i64).
fn cast_elem_bytes(code: i64) -> u64 {
    match code {
        0 | 5 => 4,
        1 | 2 => 2,
        3 | 4 => 1,
        _ => 8,
    }
}

/// `cast.S`'s group: the elements one loop turn converts (8 when either
/// side is FP8, 2 from integers and for f32 -> f32, else 4).
pub fn cast_group(from: i64, to: i64) -> u64 {
    let fp8 = |c: i64| (3..=4).contains(&c);
    if fp8(from) || fp8(to) {
        8
    } else if from >= 5 || (from == 0 && to == 0) {
        2
    } else {
        4
    }
}

/// The words of each worker's record of `cast.S` (FROM `from`, TO `to`,
/// N `n`): the byte offsets of its first input and output group from the
/// call's input and output (0 for a worker without groups, which reads
/// nothing), and its groups.
pub fn cast_parts(from: i64, to: i64, n: u64) -> [(u64, u64, u32); 6] {
    let g = cast_group(from, to);
    let (ib, ob) = (cast_elem_bytes(from), cast_elem_bytes(to));
    worker_shares(n.div_ceil(g))
        .map(|(first, count)| (first * g * ib, first * g * ob, count as u32))
}

/// A `cast.S` state of absolute addresses (a test's or a tool's call):
/// per worker its input, output, groups, scale and output scale.
pub fn cast_state(
    from: i64,
    to: i64,
    n: u64,
    input: u32,
    out: u32,
    scale: i32,
    out_scale: i32,
) -> Vec<u32> {
    cast_parts(from, to, n)
        .iter()
        .flat_map(|&(i, o, c)| {
            [
                input + i as u32,
                out + o as u32,
                c,
                scale as u32,
                out_scale as u32,
            ]
        })
        .collect()
}

/// The words of each worker's record of `elementwise.S` (TYPE `ty`: 0 f32,
/// 1 f16; N `n`): the byte offset of its first granule from the call's
/// buffers (0 for a worker without granules), and its granules.
pub fn elementwise_parts(ty: i64, n: u64) -> [(u64, u32); 6] {
    let eb = if ty == 1 { 2 } else { 4 };
    worker_shares((n * eb).div_ceil(8)).map(|(first, count)| (first * 8, count as u32))
}

/// An `elementwise.S` state of absolute addresses (a test's call): per
/// worker its in0, in1 (0 for unary ops), out and granules.
pub fn elementwise_state(ty: i64, n: u64, in0: u32, in1: Option<u32>, out: u32) -> Vec<u32> {
    elementwise_parts(ty, n)
        .iter()
        .flat_map(|&(o, c)| {
            [
                in0 + o as u32,
                in1.map_or(0, |a| a + o as u32),
                out + o as u32,
                c,
            ]
        })
        .collect()
}

/// One word of a [`LocalCopy`]'s record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordWord {
    /// The address this many bytes from the group's first source.
    Src(i64),
    /// The address this many bytes from the group's first destination.
    Dst(i64),
    Val(u32),
}

/// One worker's part of a [`LocalCopy`]: `transfers` transfers from
/// (`row`, `first`) on, of each the `words` words from byte `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyPart {
    pub row: u64,
    pub first: u64,
    pub transfers: u64,
    pub words: u64,
    pub offset: u64,
}
