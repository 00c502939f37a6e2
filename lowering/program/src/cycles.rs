//! [`kernel_cycles`]: what one call of a kernel costs, from the kernel's own
//! `.cycles` formula. The one cost model of compute: planning, the exchange
//! stage's estimates and the machine stage's records all ask it.

use ipu_isa::kernels::{KernelCache, KernelSpec};
use rustc_hash::FxHashMap;
use std::sync::{Mutex, OnceLock};

/// Cycles of one call of a kernel specialisation: the `.cycles` formula
/// its source declares, evaluated by the assembler for its parameters
/// (assembled once per process, through the kernel cache).
pub fn kernel_cycles(spec: &KernelSpec) -> Result<u64, String> {
    static MEMO: OnceLock<Mutex<FxHashMap<KernelSpec, u64>>> = OnceLock::new();
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
