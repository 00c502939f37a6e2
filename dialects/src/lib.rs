//! The dialects of the IPU compiler: `func`, `tensor` (what a model is), and
//! the `test` dialect (ops for exercising the IR core in lit tests); the
//! `tile`, `exchange` and `machine` dialects join them.

pub mod exchange;
pub mod func;
pub mod interpret;
pub mod machine;
pub mod nn;
pub mod test_dialect;
pub mod tile;

use ipu_ir::Registry;

/// Registers every dialect of the project.
pub fn register_all_dialects(registry: &mut Registry) {
    registry.register_dialect(&func::FUNC_DIALECT);
    registry.register_dialect(&nn::NN_DIALECT);
    registry.register_dialect(&test_dialect::TEST_DIALECT);
    registry.register_dialect(&tile::TILE_DIALECT);
    registry.register_dialect(&exchange::EXCHANGE_DIALECT);
    registry.register_dialect(&machine::MACHINE_DIALECT);
}
