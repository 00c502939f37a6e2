// nn -> tile for the row family on the 16-tile test target: each op's
// mapping (rows whole on a tile, or cut over tiles) and the
// exact row-kernel specialisation it calls.
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s

// Whole rows on each tile: the rows are cut over the tiles, the axis is not.
// CHECK-LABEL: func.func @softmax_rows
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.softmax %0 {axis = 1 : i64, cycles = {{[0-9]+}} : i64, kernel = "rows_softmax_f32_r3_c64", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}}
func.func @softmax_rows(%x: tensor<48x64xf32>) -> tensor<48x64xf32> {
  %y = nn.softmax %x {axis = 1 : i64} : tensor<48x64xf32>
  return %y : tensor<48x64xf32>
}

// Two rows of 4096: whole rows would leave 14 tiles idle, so the axis is cut
// 16 ways (each tile's pieces' statistics, combined per row, sent back).
// CHECK-LABEL: func.func @softmax_cut
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 1, 16>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.softmax %0 {axis = 1 : i64, cycles = {{[0-9]+}} : i64, kernel = "rows_softmax_stats_f32_r2_c256_exps", mapping = {grid = array<i64: 1, 16>, tiles = array<i64: 0, 1>}}
func.func @softmax_cut(%x: tensor<2x4096xf32>) -> tensor<2x4096xf32> {
  %y = nn.softmax %x {axis = 1 : i64} : tensor<2x4096xf32>
  return %y : tensor<2x4096xf32>
}

// One row of 1000 f16: cut 10 ways (rows of whole granules).
// CHECK-LABEL: func.func @log_softmax_cut_f16
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 1, 10>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.softmax %0 {axis = 1 : i64, cycles = {{[0-9]+}} : i64, kernel = "rows_softmax_stats_f16_r1_c100", log, mapping = {grid = array<i64: 1, 10>, tiles = array<i64: 0, 1>}}
func.func @log_softmax_cut_f16(%x: tensor<1x1000xf16>) -> tensor<1x1000xf16> {
  %y = nn.log_softmax %x {axis = 1 : i64} : tensor<1x1000xf16>
  return %y : tensor<1x1000xf16>
}

// f16 rows in the kernel's f16 arithmetic (sums in f32).
// CHECK-LABEL: func.func @log_softmax_f16
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 4, 4, 1>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.softmax %0 {axis = 2 : i64, cycles = {{[0-9]+}} : i64, kernel = "rows_log_softmax_f16_r2_c128", log, mapping = {grid = array<i64: 4, 4, 1>, tiles = array<i64: 0, 1>}}
func.func @log_softmax_f16(%x: tensor<4x8x128xf16>) -> tensor<4x8x128xf16> {
  %y = nn.log_softmax %x {axis = 2 : i64} : tensor<4x8x128xf16>
  return %y : tensor<4x8x128xf16>
}

// Along an outer axis: each tile's block is 16 x 4 x 1, rows along axis 0
// whose elements are 4 apart, walked down 2 granule columns (I = 4).
// CHECK-LABEL: func.func @softmax_columns
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 1, 2, 6>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.softmax %0 {axis = 0 : i64, cycles = {{[0-9]+}} : i64, kernel = "rows_softmax_f32_r1_c16_i4", mapping = {grid = array<i64: 1, 2, 6>, tiles = array<i64: 0, 1>}}
func.func @softmax_columns(%x: tensor<16x8x6xf32>) -> tensor<16x8x6xf32> {
  %y = nn.softmax %x {axis = 0 : i64} : tensor<16x8x6xf32>
  return %y : tensor<16x8x6xf32>
}

// The same on f16: cast to f32 around an f32 column kernel.
// CHECK-LABEL: func.func @softmax_columns_f16
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 8, 1, 2>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.softmax %0 {axis = 1 : i64, cycles = {{[0-9]+}} : i64, kernel = "rows_softmax_f32_r1_c16_i4", mapping = {grid = array<i64: 8, 1, 2>, tiles = array<i64: 0, 1>}}
func.func @softmax_columns_f16(%x: tensor<8x16x8xf16>) -> tensor<8x16x8xf16> {
  %y = nn.softmax %x {axis = 1 : i64} : tensor<8x16x8xf16>
  return %y : tensor<8x16x8xf16>
}

// Two rows per tile would keep four of the six workers idle: 16 rows per
// tile with the rows cut 8 ways is cheaper by the cycle formulas; the scale
// and bias are cut like the first rows' pieces.
// CHECK-LABEL: func.func @layer_norm
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.host_input %arg1 {mapping = {grid = array<i64: 8>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.host_input %arg2 {mapping = {grid = array<i64: 8>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.layer_norm %0, %1, %2 {axis = 1 : i64, cycles = {{[0-9]+}} : i64, epsilon = 1.0e-5 : f32, kernel = "rows_ln_stats_f16_r16_c96", mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}}
func.func @layer_norm(%x: tensor<32x768xf16>, %g: tensor<768xf16>, %b: tensor<768xf16>) -> tensor<32x768xf16> {
  %y = nn.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<32x768xf16>, tensor<768xf16>, tensor<768xf16>) -> tensor<32x768xf16>
  return %y : tensor<32x768xf16>
}

// Rows of 4096 cut 16 ways, the scale and bias cut like them (each tile's
// columns are where its piece is).
// CHECK-LABEL: func.func @layer_norm_cut
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 1, 16>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.host_input %arg1 {mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.host_input %arg2 {mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.layer_norm %0, %1, %2 {axis = 1 : i64, cycles = {{[0-9]+}} : i64, epsilon = 1.0e-5 : f32, kernel = "rows_ln_stats_f32_r2_c256", mapping = {grid = array<i64: 1, 16>, tiles = array<i64: 0, 1>}}
func.func @layer_norm_cut(%x: tensor<2x4096xf32>, %g: tensor<4096xf32>, %b: tensor<4096xf32>) -> tensor<2x4096xf32> {
  %y = nn.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<2x4096xf32>
  return %y : tensor<2x4096xf32>
}

// Over the last two axes: rows of 4 x 16 elements.
// CHECK-LABEL: func.func @layer_norm_plain
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 8, 1, 1>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.layer_norm %0 {axis = 1 : i64, cycles = {{[0-9]+}} : i64, epsilon = 1.0e-5 : f32, kernel = "rows_layer_norm_f32_r1_c64_eps3727c5ac", mapping = {grid = array<i64: 8, 1, 1>, tiles = array<i64: 0, 1>}}
func.func @layer_norm_plain(%x: tensor<8x4x16xf32>) -> tensor<8x4x16xf32> {
  %y = nn.layer_norm %x {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<8x4x16xf32>) -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}

// CHECK-LABEL: func.func @sum_rows
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.reduce %0 {axes = array<i64: 1>, cycles = {{[0-9]+}} : i64, grid = array<i64: 16, 1>, kernel = "rows_sum_f32_r4_c32", kind = "sum", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}, tiles = array<i64: 0, 1>}
func.func @sum_rows(%x: tensor<64x32xf32>) -> tensor<64xf32> {
  %y = nn.reduce_sum %x {axes = array<i64: 1>} : tensor<64x32xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// A mean: the sum scaled by 1/32 (0x3d000000) in the kernel.
// CHECK-LABEL: func.func @mean_keepdims
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.reduce %0 {axes = array<i64: 1>, cycles = {{[0-9]+}} : i64, grid = array<i64: 16, 1>, keepdims, kernel = "rows_sum_f16_r1_c32_x3d000000", kind = "mean", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}, tiles = array<i64: 0, 1>}
func.func @mean_keepdims(%x: tensor<16x32xf16>) -> tensor<16x1xf16> {
  %y = nn.reduce_mean %x {axes = array<i64: 1>, keepdims} : tensor<16x32xf16> -> tensor<16x1xf16>
  return %y : tensor<16x1xf16>
}

// Axes 0 and 2 are not adjacent: one call per run of reduced axes, innermost first.
// CHECK-LABEL: func.func @max_two_axes
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 1, 8, 1>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.reduce %0 {axes = array<i64: 0, 2>, cycles = {{[0-9]+}} : i64, grid = array<i64: 1, 8, 1>, kernel = "rows_max_f32_r6_c10", kind = "max", mapping = {grid = array<i64: 8>, tiles = array<i64: 0, 1>}, tiles = array<i64: 0, 1>}
func.func @max_two_axes(%x: tensor<6x8x10xf32>) -> tensor<8xf32> {
  %y = nn.reduce_max %x {axes = array<i64: 0, 2>} : tensor<6x8x10xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// Axis 0 with the kept axis cut completely: each tile's block is a
// contiguous column, reduced as a row.
// CHECK-LABEL: func.func @min_columns
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 1, 16>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.reduce %0 {axes = array<i64: 0>, cycles = {{[0-9]+}} : i64, grid = array<i64: 1, 16>, kernel = "rows_min_f32_r1_c32", kind = "min", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}, tiles = array<i64: 0, 1>}
func.func @min_columns(%x: tensor<32x16xf32>) -> tensor<16xf32> {
  %y = nn.reduce_min %x {axes = array<i64: 0>} : tensor<32x16xf32> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// Two rows of 4096: cut 16 ways along the reduced axis (partials
// combined on tile 0).
// CHECK-LABEL: func.func @sum_split
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 1, 16>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.reduce %0 {axes = array<i64: 1>, cycles = {{[0-9]+}} : i64, grid = array<i64: 1, 16>, kernel = "rows_sum_f32_r2_c256", kind = "sum", mapping = {grid = array<i64: 1>, tiles = array<i64: 0, 16>}, tiles = array<i64: 0, 1>}
func.func @sum_split(%x: tensor<2x4096xf32>) -> tensor<2xf32> {
  %y = nn.reduce_sum %x {axes = array<i64: 1>} : tensor<2x4096xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// Every axis: a rank-0 result on tile 0, the input cut along axis 0.
// CHECK-LABEL: func.func @mean_all_f16
// CHECK: %{{[0-9]+}} = tile.host_input %arg0 {mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.reduce %0 {axes = array<i64: 0, 1>, cycles = {{[0-9]+}} : i64, grid = array<i64: 16, 1>, kernel = "rows_sum_f16_to_f32_r1_c128", kind = "mean", mapping = {grid = array<i64>, tiles = array<i64: 0, 16>}, tiles = array<i64: 0, 1>}
func.func @mean_all_f16(%x: tensor<64x32xf16>) -> tensor<f16> {
  %y = nn.reduce_mean %x {axes = array<i64: 0, 1>} : tensor<64x32xf16> -> tensor<f16>
  return %y : tensor<f16>
}

// A softmax whose producer cuts its rows finely (the matmul's 16-column
// blocks, 96 rows each: one row piece per worker turn, 16 pieces to
// combine per row) is re-laid out to whole rows: the kernels' saving
// outweighs the re-layout the plan charges it. (With 64 rows the cut,
// its combine in parts on six workers, is cheaper and stays.)
// CHECK-LABEL: func.func @softmax_relaid_out
// CHECK: %{{[0-9]+}} = tile.matmul %0, %1 {{{.*}}mapping = {grid = array<i64: 1, 16>, tiles = array<i64: 0, 1>}
// CHECK: %{{[0-9]+}} = tile.softmax %2 {axis = 1 : i64, cycles = {{[0-9]+}} : i64, kernel = "rows_softmax_f32_r6_c256", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}}
func.func @softmax_relaid_out(%a: tensor<96x32xf32>, %b: tensor<32x256xf32>) -> tensor<96x256xf32> {
  %s = nn.matmul %a, %b : (tensor<96x32xf32>, tensor<32x256xf32>) -> tensor<96x256xf32>
  %y = nn.softmax %s {axis = 1 : i64} : tensor<96x256xf32>
  return %y : tensor<96x256xf32>
}

// From the matmul's 2 x 8 blocks (81 rows of 16) to whole rows on 15
// tiles, placed to end at the last tile (tiles 1..15): there fewer of its
// rows stay on their producer's tile, to be copied before the kernel, than
// at tile 0. (With 66 rows, 33 a block, the cut kept as it lies is now
// cheaper.)
// CHECK-LABEL: func.func @softmax_relaid_out_at_end
// CHECK: %{{[0-9]+}} = tile.matmul %0, %1 {{{.*}}mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}
// CHECK: %{{[0-9]+}} = tile.softmax %2 {axis = 1 : i64, cycles = {{[0-9]+}} : i64, kernel = "rows_softmax_f32_r11_c128", mapping = {grid = array<i64: 15, 1>, tiles = array<i64: 1, 1>}}
func.func @softmax_relaid_out_at_end(%a: tensor<162x32xf32>, %b: tensor<32x128xf32>) -> tensor<162x128xf32> {
  %s = nn.matmul %a, %b : (tensor<162x32xf32>, tensor<32x128xf32>) -> tensor<162x128xf32>
  %y = nn.softmax %s {axis = 1 : i64} : tensor<162x128xf32>
  return %y : tensor<162x128xf32>
}

// The matmul's 2 x 8 blocks of 33 rows of 48 stay where they are, the rows
// cut 8 ways: the statistics keep their exponentials, so the last pass is
// one multiply per element, and the cut beats whole rows of 384 on 14
// tiles and the re-layout they need.
// CHECK-LABEL: func.func @softmax_keeps_producer_cut
// CHECK: %{{[0-9]+}} = tile.matmul %0, %1 {{{.*}}mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}
// CHECK: %{{[0-9]+}} = tile.softmax %2 {axis = 1 : i64, cycles = 6246 : i64, kernel = "rows_softmax_stats_f32_r33_c48_exps", mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}}
func.func @softmax_keeps_producer_cut(%a: tensor<66x32xf32>, %b: tensor<32x384xf32>) -> tensor<66x384xf32> {
  %s = nn.matmul %a, %b : (tensor<66x32xf32>, tensor<32x384xf32>) -> tensor<66x384xf32>
  %y = nn.softmax %s {axis = 1 : i64} : tensor<66x384xf32>
  return %y : tensor<66x384xf32>
}

// A producer that gives whole rows (the exp follows its input's 16 x 1
// blocks): the softmax takes its layout, nothing moves.
// CHECK-LABEL: func.func @softmax_keeps_producer_rows
// CHECK: %{{[0-9]+}} = tile.map %0 {{{.*}}mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}}
// CHECK: %{{[0-9]+}} = tile.softmax %1 {axis = 1 : i64, cycles = {{[0-9]+}} : i64, kernel = "rows_softmax_f32_r3_c64", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}}
func.func @softmax_keeps_producer_rows(%x: tensor<48x64xf32>) -> tensor<48x64xf32> {
  %e = nn.exp %x : tensor<48x64xf32>
  %y = nn.softmax %e {axis = 1 : i64} : tensor<48x64xf32>
  return %y : tensor<48x64xf32>
}
