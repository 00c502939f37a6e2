// Values no consumer asks a layout of are spread over the tiles, outer
// dimensions first; the last dimension of a matrix (or higher rank) is cut
// only into a number of blocks that divides it, as the elementwise kernels
// need (3x37 on 16 tiles: 3 x 1, not 3 x 5), while a vector's last blocks
// may be short (1000 over 16).
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s

// CHECK: tile.host_input %arg0 {mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}} : tensor<1000xf16>
// CHECK: tile.host_input %arg1 {mapping = {grid = array<i64: 3, 1>, tiles = array<i64: 0, 1>}} : tensor<3x37xf16>
// CHECK: tile.host_input %arg2 {mapping = {grid = array<i64: 8, 2>, tiles = array<i64: 0, 1>}} : tensor<8x6xf16>
// CHECK: tile.host_input %arg3 {mapping = {grid = array<i64: 2, 3, 1>, tiles = array<i64: 0, 1>}} : tensor<2x3x5xf16>
// CHECK: tile.map %0 {{.*}}kernel = "ew_relu_f16_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}}
// CHECK: tile.map %1 {{.*}}kernel = "ew_relu_f16_n40", mapping = {grid = array<i64: 3, 1>, tiles = array<i64: 0, 1>}}
// CHECK: tile.map %2 {{.*}}kernel = "ew_relu_f16_n4", mapping = {grid = array<i64: 8, 2>, tiles = array<i64: 0, 1>}}
// CHECK: tile.map %3 {{.*}}kernel = "ew_relu_f16_n8", mapping = {grid = array<i64: 2, 3, 1>, tiles = array<i64: 0, 1>}}
func.func @main(%a: tensor<1000xf16>, %b: tensor<3x37xf16>, %c: tensor<8x6xf16>, %d: tensor<2x3x5xf16>)
    -> (tensor<1000xf16>, tensor<3x37xf16>, tensor<8x6xf16>, tensor<2x3x5xf16>) {
  %ra = nn.relu %a : tensor<1000xf16>
  %rb = nn.relu %b : tensor<3x37xf16>
  %rc = nn.relu %c : tensor<8x6xf16>
  %rd = nn.relu %d : tensor<2x3x5xf16>
  return %ra, %rb, %rc, %rd : tensor<1000xf16>, tensor<3x37xf16>, tensor<8x6xf16>, tensor<2x3x5xf16>
}
