// ConvInteger on the device (test16), as the importer composes it: u8 /
// i8 operands cast to i32 less their zero points (the input's one value,
// the weights' one per output channel), convolved exactly in i32. The
// tiles have no integer conv: the conv is one of the operands' f32 images
// (exact integers), its GEMM split in K so every partial sum stays exact
// (the centred input is in [-131, 124], the centred weights in [-255, 255]:
// K = 64 * 9 = 576 > 2^24 / (131 * 255) = 502, so two f32 matmuls, added
// in i32); a depthwise conv is a sum of products in f32 (9 taps, exact).
// The i8 weights are parameters the host widens at load, the u8 input
// an input it widens as it streams it in; no u8 or i8 reaches the tiles.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as n; r = n.random.default_rng(7); n.save('%t/x.npy', r.integers(0, 256, (1, 64, 5, 5)).astype(n.uint8)); n.save('%t/w.npy', r.integers(-128, 128, (4, 64, 3, 3)).astype(n.int8)); n.save('%t/d.npy', r.integers(-128, 128, (4, 1, 3, 3)).astype(n.int8))"
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --input x=%t/x.npy --input w=%t/w.npy --input d=%t/d.npy 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// TILE: tile.host_input %arg0 {{.*}} : tensor<1x64x5x5xui8> -> tensor<1x64x5x5xf32>
// TILE: tile.host_input %arg1 {{.*}}resident} : tensor<4x64x3x3xi8> -> tensor<4x64x3x3xf32>
// TILE: tile.host_input %arg2 {{.*}}resident} : tensor<4x1x3x3xi8> -> tensor<4x1x3x3xf32>
// TILE-NOT: i8>
// TILE-COUNT-2: tile.matmul {{.*}} : (tensor<4x288xf32>, tensor<288x{{[0-9]+}}xf32>) -> tensor<4x{{[0-9]+}}xf32>
// TILE-NOT: tile.matmul

func.func @main(%x: tensor<1x64x5x5xui8> {ipu.name = "x"}, %w: tensor<4x64x3x3xi8> {ipu.name = "w", ipu.weight}, %d: tensor<4x1x3x3xi8> {ipu.name = "d", ipu.weight}) -> (tensor<1x4x5x5xi32> {ipu.name = "y"}, tensor<1x4x3x3xi32> {ipu.name = "z"}) {
  %zx = nn.constant dense<131> : tensor<ui8>
  %zw = nn.constant dense<[[[[-128]]], [[[0]]], [[[3]]], [[[127]]]]> : tensor<4x1x1x1xi8>
  %x32 = nn.cast %x : tensor<1x64x5x5xui8> -> tensor<1x64x5x5xi32>
  %zx32 = nn.cast %zx : tensor<ui8> -> tensor<i32>
  %xc = nn.sub %x32, %zx32 : (tensor<1x64x5x5xi32>, tensor<i32>) -> tensor<1x64x5x5xi32>
  %w32 = nn.cast %w : tensor<4x64x3x3xi8> -> tensor<4x64x3x3xi32>
  %zw32 = nn.cast %zw : tensor<4x1x1x1xi8> -> tensor<4x1x1x1xi32>
  %wc = nn.sub %w32, %zw32 : (tensor<4x64x3x3xi32>, tensor<4x1x1x1xi32>) -> tensor<4x64x3x3xi32>
  %y = nn.conv %xc, %wc {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1} : (tensor<1x64x5x5xi32>, tensor<4x64x3x3xi32>) -> tensor<1x4x5x5xi32>
  %x4 = nn.slice %xc {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 1, 4, 5, 5>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x64x5x5xi32> -> tensor<1x4x5x5xi32>
  %d32 = nn.cast %d : tensor<4x1x3x3xi8> -> tensor<4x1x3x3xi32>
  %z = nn.conv %x4, %d32 {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 4} : (tensor<1x4x5x5xi32>, tensor<4x1x3x3xi32>) -> tensor<1x4x3x3xi32>
  return %y, %z : tensor<1x4x5x5xi32>, tensor<1x4x3x3xi32>
}
