//! The model's floor (`ipu_driver::floor`) against hand computations from
//! the target figures, for one matmul, one softmax and one layer norm; a
//! called layer's floor against the same layers written inline.
//!
//! test16 (`targets/test16.toml`): 16 tiles; 2 f32 lanes per vector
//! instruction; AMP f32 -> f32 at 16 MACs per cycle; each tile receives
//! 4 B per cycle, a supertile pair 8 B per cycle of data both tiles hear;
//! an exchange phase costs 100 fixed cycles, a sync 90.

use ipu_driver::floor::{floor, Floor};
use ipu_target::Target;

fn floor_of(text: &str, target: &str) -> Floor {
    let registry = ipu_driver::full_registry();
    let loaded = ipu_driver::load::load_text(
        &registry,
        "floor.mlir",
        text.into(),
        std::path::Path::new("."),
        false,
    )
    .unwrap_or_else(|_| panic!("the test model does not load"));
    let f = ipu_driver::load::entry_function(&loaded.cx, loaded.module, None).unwrap();
    let target = Target::load(target).unwrap();
    floor(&loaded.cx, f, &target).unwrap()
}

/// (compute, exchange, phases) of every op.
fn parts(fl: &Floor) -> Vec<(u64, u64, u32)> {
    fl.ops
        .iter()
        .map(|o| (o.compute, o.exchange, o.phases))
        .collect()
}

#[test]
fn a_matmul_after_a_relu() {
    let fl = floor_of(
        "func.func @main(%x: tensor<4x64xf32>, %w: tensor<64x16xf32>) -> tensor<4x16xf32> {
  %a = nn.relu %x : tensor<4x64xf32>
  %y = nn.matmul %a, %w : (tensor<4x64xf32>, tensor<64x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}",
        "test16",
    );
    // relu: 256 f32 elements, 2 lanes x 16 tiles per cycle: 8 cycles, no
    // exchange (its operand can be laid out as it is read).
    //
    // matmul, M=4 K=64 N=16: 4*16*64 = 4096 MACs at 16 per tile cycle on 16
    // tiles: 16 cycles. The weight %w is an argument: copied where needed
    // for free, so M splits 4 ways for free; the other 16/4 = 4 ways must
    // split N (each tile of a row of the grid needs the relu's A: 1024 B
    // = 4x64 f32 per extra copy) or K (each output's partial sums move:
    // 256 B = 4x16 f32 per extra split):
    //   N 4 ways: 3 x 1024 = 3072 B over 16 tiles at 8 B/cycle = 24 cycles,
    //             + 100 fixed + 90 sync = 214;
    //   K 4 ways: 3 x 256 = 768 B over 16 tiles at 4 B/cycle = 12 cycles,
    //             + 100 + 90 = 202;
    //   both: their bytes are least with N 1 way (256 x 4 = 1024 x 1): K.
    // The least is 202, one phase.
    assert_eq!(parts(&fl), vec![(8, 0, 0), (16, 202, 1)]);
    // The chain: relu then matmul.
    assert_eq!(fl.cycles, 8 + 16 + 202);
}

#[test]
fn a_called_layer_counts_once_per_call_chained_from_its_operand() {
    // Two calls of one layer (relu, then a matmul with the call's own
    // weight) are the floor of the two layers written inline: each op's
    // part per call, one chain through both.
    let inline = floor_of(
        "func.func @main(%x: tensor<4x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>) -> tensor<4x64xf32> {
  %a1 = nn.relu %x : tensor<4x64xf32>
  %y1 = nn.matmul %a1, %w1 : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  %a2 = nn.relu %y1 : tensor<4x64xf32>
  %y2 = nn.matmul %a2, %w2 : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  return %y2 : tensor<4x64xf32>
}",
        "test16",
    );
    let called = floor_of(
        "func.func private @layer(%x: tensor<4x64xf32>, %w: tensor<64x64xf32>) -> tensor<4x64xf32> {
  %a = nn.relu %x : tensor<4x64xf32>
  %y = nn.matmul %a, %w : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}
func.func @main(%x: tensor<4x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>) -> tensor<4x64xf32> {
  %y1 = func.call @layer(%x, %w1) : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  %y2 = func.call @layer(%y1, %w2) : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  return %y2 : tensor<4x64xf32>
}",
        "test16",
    );
    assert_eq!(parts(&called), parts(&inline));
    assert_eq!(called.cycles, inline.cycles);
    assert!(inline.cycles > 0 && inline.ops.len() == 4);
}

#[test]
fn independent_ops_are_not_summed() {
    // Two relus on separate arguments and their sum: the chain is one relu
    // (8 cycles, as above) then the add (8), not both relus.
    let fl = floor_of(
        "func.func @main(%x: tensor<4x64xf32>, %z: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %a = nn.relu %x : tensor<4x64xf32>
  %b = nn.relu %z : tensor<4x64xf32>
  %c = nn.add %a, %b : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return %c : tensor<4x64xf32>
}",
        "test16",
    );
    assert_eq!(fl.cycles, 16);
}

#[test]
fn a_softmax_with_fewer_rows_than_tiles() {
    let fl = floor_of(
        "func.func @main(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %s = nn.softmax %x {axis = 1} : tensor<4x64xf32>
  return %s : tensor<4x64xf32>
}",
        "test16",
    );
    // Vector work: 256 f32 / (2 lanes x 16 tiles) = 8 cycles. 4 rows on 16
    // tiles: each row split 4 ways, so the row maximum and then the row sum
    // are combined between tiles: two phases, each at least one 4-byte value
    // per tile (1 cycle at 4 B/cycle) + 100 fixed + 90 sync = 191.
    assert_eq!(parts(&fl), vec![(8, 2 * 191, 2)]);
    assert_eq!(fl.cycles, 8 + 382);
}

#[test]
fn a_layer_norm_with_fewer_rows_than_tiles() {
    let fl = floor_of(
        "func.func @main(%x: tensor<4x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<4x64xf32> {
  %y = nn.layer_norm %x, %g, %b {axis = 1, epsilon = 1.0e-05 : f32} : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}",
        "test16",
    );
    // Vector work: 8 cycles as above. One phase: the row's sum and sum of
    // squares together, 8 B per tile (2 cycles) + 100 + 90 = 192.
    assert_eq!(parts(&fl), vec![(8, 192, 1)]);
    assert_eq!(fl.cycles, 200);
}

#[test]
fn the_blocks_softmax_on_ipu21_moves_nothing() {
    // ipu21: 1472 tiles, 2 f32 lanes. 12 x 256 = 3072 rows >= 1472 tiles:
    // whole rows per tile, no exchange; 786432 f32 / (2 x 1472) = 267.1,
    // so 268 cycles.
    let fl = floor_of(
        "func.func @main(%x: tensor<12x256x256xf32>) -> tensor<12x256x256xf32> {
  %s = nn.softmax %x {axis = 2} : tensor<12x256x256xf32>
  return %s : tensor<12x256x256xf32>
}",
        "ipu21",
    );
    assert_eq!(parts(&fl), vec![(268, 0, 0)]);
}

#[test]
fn a_model_after_lowering_has_no_floor() {
    let registry = ipu_driver::full_registry();
    let loaded = ipu_driver::load::load_text(
        &registry,
        "tile.mlir",
        "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tile.map %x {cycles = 10 : i64, fn = #tile.fn<relu>, kernel = \"k\", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}"
        .into(),
        std::path::Path::new("."),
        false,
    );
    let Ok(l) = loaded else {
        panic!("the tile-stage model does not load");
    };
    // A tile-stage op is not a model op: no floor, and no panic.
    let f = ipu_driver::load::entry_function(&l.cx, l.module, None).unwrap();
    let t = Target::load("test16").unwrap();
    let e = floor(&l.cx, f, &t).unwrap_err();
    assert!(e.contains("nn ops"), "{e}");
}
