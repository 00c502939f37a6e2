//! Generic passes built on the IR core: `canonicalize`, `cse`, `symbol-dce`,
//! the `nn` rewrite `nn-fuse-gelu`, and the test utility
//! `test-emit-diagnostics`.

pub mod canonicalize;
pub mod cse;
pub mod fuse_gelu;
pub mod symbol_dce;
pub mod test_diagnostics;

use ipu_ir::Registry;

/// Registers the generic passes.
pub fn register_generic_passes(registry: &mut Registry) {
    registry.register_pass(canonicalize::INFO);
    registry.register_pass(cse::INFO);
    registry.register_pass(fuse_gelu::INFO);
    registry.register_pass(symbol_dce::INFO);
    registry.register_pass(test_diagnostics::INFO);
}
