// ConvTranspose on the device (test16), against the reference: a conv of
// the input with stride - 1 zeros between its elements (a concat with a
// zero constant, views), by the weights with their channel axes swapped
// per group and flipped (a gather by reversed positions, a view); low
// pads past the kernel's span crop the stuffed input (nn-to-tile/src/
// window.rs). Strided with output padding and two groups, pads past the
// span, a dilated 1-D one, and a depthwise one.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.e-]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// TILE-NOT: conv_transpose
// TILE: tile.matmul

func.func @main(%x: tensor<1x4x3x3xf32>, %t: tensor<4x3x3x3xf32>, %s: tensor<2x2x5xf32>, %k: tensor<2x3x2xf32>, %d: tensor<4x1x2x2xf32>) -> (tensor<1x6x8x8xf32>, tensor<1x3x3x5xf32>, tensor<2x3x10xf32>, tensor<1x4x6x6xf32>) {
  %0 = nn.conv_transpose %x, %t {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 1, 1>, group = 2} : (tensor<1x4x3x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x8x8xf32>
  %1 = nn.conv_transpose %x, %t {strides = array<i64: 3, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 3, 1, 3, 1>, output_padding = array<i64: 0, 0>, group = 1} : (tensor<1x4x3x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x3x5xf32>
  %2 = nn.conv_transpose %s, %k {strides = array<i64: 2>, dilations = array<i64: 2>, pads = array<i64: 1, 1>, output_padding = array<i64: 1>, group = 1} : (tensor<2x2x5xf32>, tensor<2x3x2xf32>) -> tensor<2x3x10xf32>
  %3 = nn.conv_transpose %x, %d {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>, group = 4} : (tensor<1x4x3x3xf32>, tensor<4x1x2x2xf32>) -> tensor<1x4x6x6xf32>
  return %0, %1, %2, %3 : tensor<1x6x8x8xf32>, tensor<1x3x3x5xf32>, tensor<2x3x10xf32>, tensor<1x4x6x6xf32>
}
