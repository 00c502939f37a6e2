//! What the fuzz targets share: the tools' registry, the memory limit every
//! target runs under, resealing a package's checksums, and the generator of
//! small valid `nn` programs for the differential target.

pub mod nn_gen;
pub mod paths;
pub mod reseal;

use std::sync::{Arc, OnceLock};

/// The registry the tools use (all dialects, passes and pipelines), built once.
pub fn registry() -> Arc<ipu_ir::Registry> {
    static R: OnceLock<Arc<ipu_ir::Registry>> = OnceLock::new();
    R.get_or_init(ipu_driver::full_registry).clone()
}

/// The per-tensor limit the fuzz targets run with: the tools' own knob
/// (`IPU_MAX_TENSOR_BYTES`), set low enough that several tensors at the
/// limit stay far below libFuzzer's `-rss_limit_mb`, so a run past that
/// limit is memory the limit failed to bound.
pub const FUZZ_MAX_TENSOR_BYTES: u64 = 64 << 20;

/// Sets the environment the tools read before any target touches it: the
/// tensor limit, and the kernel cache in this crate's target folder when
/// none is given.
pub fn init() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        if std::env::var_os(ipu_reference::limits::MAX_TENSOR_BYTES_VAR).is_none() {
            std::env::set_var(
                ipu_reference::limits::MAX_TENSOR_BYTES_VAR,
                FUZZ_MAX_TENSOR_BYTES.to_string(),
            );
        }
        if std::env::var_os("IPU_KERNEL_CACHE").is_none() {
            let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/target/kernel-cache");
            std::env::set_var("IPU_KERNEL_CACHE", dir);
        }
    });
}
