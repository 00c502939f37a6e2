//! The lowerings between the compiler's stages, and what they share:
//!
//! - [`device`]: how each op family reaches the device (mapping, kernel,
//!   cost, state record), the one interface the conversions dispatch through;
//! - [`nn_to_tile`]: `convert-nn-to-tile`, distributing `nn` ops over tiles;
//! - [`tile_to_exchange`]: `convert-tile-to-exchange`, building the
//!   bulk-synchronous [`program`] (buffers, scheduled exchange phases,
//!   compute sets of kernel calls) and writing it in the exchange dialect;
//! - [`exchange_to_machine`]: `convert-exchange-to-machine`, every tile's
//!   program, tables and storage, linked, as the package of the machine stage;
//! - [`exchange_schedule`]: turns an exchange phase (tile-to-tile transfers)
//!   into a cycle-exact, verified schedule;
//! - shared pieces: [`target`] (which machine a module is compiled for),
//!   [`geometry`] (blocks, rectangles, runs), [`gemm`] (the AMP GEMM's
//!   rules), [`elem`] (element-type conversions).

pub mod device;
pub mod elem;
pub mod exchange_schedule;
pub mod exchange_to_machine;
pub mod gemm;
pub mod geometry;
pub mod nn_to_tile;
pub mod program;
pub mod target;
pub mod tile_to_exchange;

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
