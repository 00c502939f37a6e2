// nn -> tile on the 16-tile test target: the matmul is planned (M x N x K
// grid; with K split in two, each K tile holds half of its block's rows of
// the result: the (M * K) x N grid), elementwise ops follow their
// producer, arguments stream in laid out for their consumer (the lhs's rows
// spread over the tiles, so no one tile sends a whole block), results out.
// Every tile op records the exact kernel specialisation the machine stage
// calls and its cycles by that kernel's own cycle formula.
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s
// RUN: ipu-opt --convert-nn-to-tile='target=test16' %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | ipu-opt | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null

// CHECK: module attributes {ipu.target = "test16"}
// CHECK: %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 8, 2>, tiles = array<i64: 0, 1>}} : tensor<8x64xf16>
// CHECK: %1 = tile.host_input %arg1 {mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : tensor<64x128xf8E4M3FN>
// CHECK: %3 = tile.matmul %0, %1 {cycles = 424 : i64, kernel = "gemm_f16_interleaved_k32_c16_r1_r2_m8", mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, partials = f16, plan = array<i64: 1, 8, 2>, tiles = array<i64: 0, 1>}
// The bias is a row vector added to every row of each block: the rows kernel.
// CHECK: %4 = tile.map %3, %2 {cycles = 122 : i64, fn = #tile.fn<add>, kernel = "rows_add_row_vector_f16_r4_c16", mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}}
// CHECK: %5 = tile.map %4 {cycles = 110 : i64, fn = #tile.fn<gelu>, kernel = "ew_gelu_f16_n64"
// CHECK: tile.host_output %5 {name = "y"} : tensor<8x128xf16>
// CHECK: return %5
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN>, %b1: tensor<128xf16>) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
