//! The lowerings between the compiler's stages, and what they need:
//!
//! - [`nn_to_tile`]: `convert-nn-to-tile`, distributing `nn` ops over tiles
//!   (the matmul planner lives in [`nn_to_tile::plan`]);
//! - [`exchange_schedule`]: turns an exchange phase (tile-to-tile transfers)
//!   into a cycle-exact, verified schedule, for `tile -> exchange`.

pub mod exchange_schedule;
pub mod nn_to_tile;

use ipu_ir::Registry;

/// Registers the lowering passes.
pub fn register_lowering_passes(registry: &mut Registry) {
    registry.register_pass(nn_to_tile::INFO);
}
