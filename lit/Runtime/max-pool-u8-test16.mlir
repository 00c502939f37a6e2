// MaxPool of u8 on the device (test16), against the reference: the tiles
// hold the u8 input as exact f32 (the host widens it as it streams it in),
// the pool is the max of the window slices of that image padded with
// -inf (exact), and the host narrows the result as it streams it out.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as n; r = n.random.default_rng(3); n.save('%t/x.npy', r.integers(0, 256, (1, 2, 7, 6)).astype(n.uint8))"
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --input x=%t/x.npy 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// TILE: tile.host_input %arg0 {{.*}} : tensor<1x2x7x6xui8> -> tensor<1x2x7x6xf32>
// TILE: tile.map {{.*}}fn = #tile.fn<max>
// TILE: tile.host_output {{.*}} : tensor<1x2x4x3xf32> -> tensor<1x2x4x3xui8>

func.func @main(%x: tensor<1x2x7x6xui8> {ipu.name = "x"}) -> tensor<1x2x4x3xui8> {
  %y = nn.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x7x6xui8> -> tensor<1x2x4x3xui8>
  return %y : tensor<1x2x4x3xui8>
}
