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
//!
//! Each kernel source has one module here (`rows.rs` for `kernels/rows.S`)
//! declaring what the rest of the stack knows of it: its parameters (the
//! [`KernelSpec`] constructors and their enums), its cycle-formula and
//! worker-share helpers, how a specialisation is named, its state record
//! word by word ([`record_layout`]) and the supervisor prologue it can
//! split off ([`prologue`]), gathered in one [`KernelDecl`]. Adding a
//! kernel is adding its source, its module and its line in `sources!`
//! (docs/isa.md, "Adding a kernel").

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use sha2::Digest;

use crate::asm::{assemble, AsmErrors, Assembled};
use crate::elf::{ElfError, KernelMeta, ObjectFile};

mod cast;
mod compare;
mod copy2d;
mod elementwise;
mod fill;
mod gather;
mod gemm_amp;
mod intew;
mod lcopy;
mod partials;
mod rows;
mod select;

pub use cast::*;
pub use compare::*;
pub use elementwise::*;
pub use gemm_amp::*;
pub use intew::*;
pub use lcopy::*;
pub use partials::*;
pub use rows::*;

/// Lower-case hex SHA-256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let d = sha2::Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// One kernel source file and its declaration.
#[derive(Clone, Copy, Debug)]
pub struct KernelSource {
    pub name: &'static str,
    pub file: &'static str,
    pub text: &'static str,
    pub decl: &'static KernelDecl,
}

/// What the library declares of one kernel source besides its text (one
/// per module of this folder).
#[derive(Debug)]
pub struct KernelDecl {
    /// The name of a specialisation (a symbol), from its parameters.
    pub name: fn(&Params) -> String,
    /// Its state record, word by word ([`record_layout`]).
    pub record_layout: fn(&KernelSpec) -> Result<Layout, String>,
    /// The supervisor prologue it has split off ([`prologue`]).
    pub prologue: fn(&KernelSpec) -> Option<Prologue>,
}

/// A specialisation's parameter values.
pub type Params = BTreeMap<String, i64>;

/// A state record, word by word, and the zero bytes after it.
pub type Layout = (Vec<Slot>, usize);

macro_rules! sources {
    ($($name:ident),* $(,)?) => {
        /// Every kernel source of the library.
        pub static SOURCES: &[KernelSource] = &[$(KernelSource {
            name: stringify!($name),
            file: concat!("kernels/", stringify!($name), ".S"),
            text: include_str!(concat!("../../../kernels/", stringify!($name), ".S")),
            decl: &$name::DECL,
        }),*];
    };
}

sources![
    gemm_amp,
    elementwise,
    rows,
    cast,
    fill,
    copy2d,
    compare,
    select,
    gather,
    lcopy,
    partials,
    intew,
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
    match source(name) {
        Some(src) => (src.decl.name)(params),
        None => generic_name_of(name, params),
    }
}

fn param_of(params: &Params, k: &str) -> i64 {
    params.get(k).copied().unwrap_or(0)
}

/// The name of an element type code of the kernels (FROM, TO, CAST...).
fn elem_name(code: i64) -> &'static str {
    match code {
        0 => "f32",
        1 => "f16",
        2 => "bf16",
        3 => "f8e4m3fn",
        4 => "f8e5m2",
        5 => "i32",
        6 => "i64",
        _ => "t?",
    }
}

/// The two-type kernels' TYPE is 0 (f32) or 1 (f16).
fn two_type_name(code: i64) -> &'static str {
    if code == 1 {
        "f16"
    } else {
        "f32"
    }
}

/// A kernel without a naming rule of its own: its source name and each
/// parameter, `_<name><value>`.
fn generic_name_of(name: &str, params: &Params) -> String {
    let mut s = name.to_string();
    for (k, v) in params {
        s.push_str(&format!("_{}{v}", k.to_lowercase()));
    }
    s
}

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

impl KernelCache {
    /// [`KernelCache::get`] for a [`KernelSpec`].
    pub fn get_spec(&self, spec: &KernelSpec) -> Result<CachedKernel, KernelError> {
        self.get(spec.source, &spec.params)
    }
}

/// The cycles of a specialisation: its `.cycles` formula evaluated with its
/// parameters, from the kernel cache (`$IPU_KERNEL_CACHE`), memoised for
/// the process.
pub fn cycles(spec: &KernelSpec) -> Result<u64, String> {
    static MEMO: OnceLock<Mutex<HashMap<KernelSpec, u64>>> = OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    if let Some(&c) = memo.lock().ok().as_ref().and_then(|m| m.get(spec)) {
        return Ok(c);
    }
    let k = KernelCache::from_env()
        .get_spec(spec)
        .map_err(|e| format!("kernel {}: {e}", spec.name()))?;
    let c = k
        .meta
        .cycles
        .ok_or_else(|| format!("kernel {} declares no .cycles formula", spec.name()))?;
    let c =
        u64::try_from(c).map_err(|_| format!("kernel {} has negative cycles {c}", spec.name()))?;
    if let Ok(mut m) = memo.lock() {
        m.insert(spec.clone(), c);
    }
    Ok(c)
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

/// Worker contexts every kernel of the library divides its work over (a
/// target must declare as many: `threads.worker_contexts`).
pub const WORKER_CONTEXTS: u32 = 6;

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

impl KernelSpec {
    /// The specialised kernel name.
    pub fn name(&self) -> String {
        specialised_name(self.source, &self.params)
    }
    /// Assembles it (no cache).
    pub fn assemble(&self) -> Result<Assembled, KernelError> {
        assemble_kernel(self.source, &self.params)
    }
    /// A parameter's value (0 when not given).
    pub fn param(&self, name: &str) -> i64 {
        param_of(&self.params, name)
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

/// What one word of a state record holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// A buffer's address on the calling tile.
    Addr,
    /// A buffer the kernel reads with paired 64-bit loads (`ld2x64`,
    /// `ld2st64`, `ldxw`, `wld`): it must be in the interleaved region.
    Wide,
    /// Unused by this specialisation: 0.
    Zero,
    /// A value (a scale).
    Value,
}

/// The state record of a call of `spec`, word by word, and the zero bytes
/// after it, as its source's declaration lays it out: what every record
/// constructor builds, and what a record read back from the exchange stage
/// is checked against.
pub fn record_layout(spec: &KernelSpec) -> Result<Layout, String> {
    match source(spec.source) {
        Some(src) => (src.decl.record_layout)(spec),
        None => Err(format!(
            "kernel source {} has no record layout",
            spec.source
        )),
    }
}

/// Supervisor work a kernel call can do before its superstep: `entry`, run
/// with the call's own record, may run during the exchange phase before
/// the call's compute set (the code generator puts it after that phase's
/// `exch`), so the phase hides it. It reads only the buffers of record
/// words `reads` and the kernel's own unit state (another call of the same
/// kernel source in between would disturb it). A specialisation has it
/// split off when its `PRE` parameter is not 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prologue {
    pub entry: &'static str,
    pub reads: &'static [usize],
}

/// The prologue `spec` has split off, as its source declares it (only
/// `gemm_amp` has one).
pub fn prologue(spec: &KernelSpec) -> Option<Prologue> {
    source(spec.source).and_then(|src| (src.decl.prologue)(spec))
}

/// Cycles of `spec`'s split-off prologue (none: 0): what splitting it off
/// takes off the kernel's own cycle formula.
pub fn prologue_cycles(spec: &KernelSpec) -> Result<u64, String> {
    if prologue(spec).is_none() {
        return Ok(0);
    }
    let mut whole = spec.clone();
    whole.params.insert("PRE".into(), 0);
    Ok(cycles(&whole)?.saturating_sub(cycles(spec)?))
}

/// The specialisations of `spec` with a prologue split off ([`prologue`]
/// has one for them), the one that splits off most first, each with its
/// prologue's cycles (what splitting it takes off the call's own formula).
/// None for a specialisation that has one split off already.
pub fn prologue_splits(spec: &KernelSpec) -> Result<Vec<(KernelSpec, u64)>, String> {
    if prologue(spec).is_some() {
        return Ok(Vec::new());
    }
    let splits: Vec<KernelSpec> = [1, 2]
        .into_iter()
        .map(|level| {
            let mut pre = spec.clone();
            pre.params.insert("PRE".into(), level);
            pre
        })
        .filter(|pre| prologue(pre).is_some())
        .collect();
    if splits.is_empty() {
        return Ok(Vec::new());
    }
    let whole = cycles(spec)?;
    splits
        .into_iter()
        .map(|pre| {
            let rest = cycles(&pre)?;
            Ok((pre, whole.saturating_sub(rest)))
        })
        .collect()
}

/// The prologue of a kernel that cannot split one off.
fn no_prologue(_: &KernelSpec) -> Option<Prologue> {
    None
}

/// The record layout of a kernel the exchange stage never calls.
fn no_record_layout(spec: &KernelSpec) -> Result<Layout, String> {
    Err(format!(
        "kernel source {} has no record layout",
        spec.source
    ))
}
