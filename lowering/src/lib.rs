//! The lowerings between the compiler's stages, one crate per stage under
//! `lowering/`, and this thin crate that registers their passes and the
//! named pipelines made of them. It re-exports the stage crates under
//! their module names, so users name one crate:
//!
//! - [`exchange_schedule`] (`ipu-exchange-schedule`): turns an exchange
//!   phase (tile-to-tile transfers) into a cycle-exact, verified schedule;
//! - [`program`] (`ipu-program`): the bulk-synchronous program of the
//!   exchange stage (data, its `exchange`-dialect form, its checks), kernel
//!   state records, and the shared pieces [`target`], [`geometry`],
//!   [`gemm`], [`elem`];
//! - [`device`] (`ipu-device`): how each op family reaches the device
//!   (mapping, kernel, cost, supersteps through the `ProgramBuilder` trait);
//! - [`nn_to_tile`] (`ipu-nn-to-tile`): `convert-nn-to-tile`;
//! - [`tile_to_exchange`] (`ipu-tile-to-exchange`): `convert-tile-to-exchange`;
//! - [`exchange_to_machine`] (`ipu-exchange-to-machine`):
//!   `convert-exchange-to-machine`, the package of the machine stage.
//!
//! Crate graph (acyclic): exchange-schedule <- program <- device <-
//! {nn-to-tile, tile-to-exchange}; exchange-to-machine depends on program
//! and exchange-schedule only.

pub use ipu_device as device;
pub use ipu_exchange_schedule as exchange_schedule;
pub use ipu_exchange_to_machine as exchange_to_machine;
pub use ipu_nn_to_tile as nn_to_tile;
pub use ipu_program as program;
pub use ipu_program::{elem, gemm, geometry, target};
pub use ipu_tile_to_exchange as tile_to_exchange;

use ipu_ir::Registry;

/// Registers the lowering passes and the named pipelines made of them.
pub fn register_lowering_passes(registry: &mut Registry) {
    use ipu_ir::pass::PipelineInfo;
    registry.register_pipeline(PipelineInfo {
        argument: "ipu-lower-to-tile",
        description: "Lower nn to the tile dialect (canonicalize and fuse written-out GELU into nn.gelu first; \
                      to keep written-out GELU ops as they round, run \
                      builtin.module(canonicalize,convert-nn-to-tile) instead).",
        pipeline: "builtin.module(canonicalize,nn-fuse-gelu,convert-nn-to-tile)",
    });
    registry.register_pipeline(PipelineInfo {
        argument: "ipu-lower-to-exchange",
        description: "Lower nn through tile to the exchange dialect.",
        pipeline: "builtin.module(ipu-lower-to-tile,convert-tile-to-exchange)",
    });
    registry.register_pipeline(PipelineInfo {
        argument: "ipu-lower-to-machine",
        description: "Lower nn through tile and exchange to the machine dialect: every tile's program, tables and \
                      storage, as the package `ipu-translate --to-ipuexe` writes.",
        pipeline: "builtin.module(ipu-lower-to-exchange,convert-exchange-to-machine)",
    });
    registry.register_pass(nn_to_tile::INFO);
    registry.register_pass(tile_to_exchange::INFO);
    registry.register_pass(exchange_to_machine::INFO);
}
