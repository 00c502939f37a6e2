// Padded shapes on the simulated device (test16) against the reference
// interpreter: row ops over rows that are not whole 64-bit granules, layer
// norm over them (as its definition), matmuls with K and N no multiple of the
// AMP blocks (f32 and f16) and a rank-1 operand.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>/dev/null | FileCheck %s
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
func.func @main(%a: tensor<7xf16>, %b: tensor<7x3xf16>, %x: tensor<9x13xf32>, %w: tensor<13x5xf32>, %r: tensor<3x5xf32>, %h: tensor<4x6xf16>, %g: tensor<5xf32>, %u: tensor<6x1xf32>) -> (tensor<3xf16>, tensor<9x5xf32>, tensor<3x5xf32>, tensor<4x6xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3x5xf32>, tensor<6xf32>) {
  %y0 = nn.matmul %a, %b : (tensor<7xf16>, tensor<7x3xf16>) -> tensor<3xf16>
  %y1 = nn.matmul %x, %w : (tensor<9x13xf32>, tensor<13x5xf32>) -> tensor<9x5xf32>
  %y2 = nn.softmax %r {axis = 1 : i64} : tensor<3x5xf32>
  %y3 = nn.log_softmax %h {axis = 1 : i64} : tensor<4x6xf16>
  %y4 = nn.reduce_mean %r {axes = array<i64: 1>} : tensor<3x5xf32> -> tensor<3xf32>
  %y5 = nn.reduce_max %r {axes = array<i64: 1>} : tensor<3x5xf32> -> tensor<3xf32>
  %y6 = nn.layer_norm %r, %g {axis = 1, epsilon = 1.0e-5 : f32} : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %y7 = nn.reduce_sum %u {axes = array<i64: 1>} : tensor<6x1xf32> -> tensor<6xf32>
  return %y0, %y1, %y2, %y3, %y4, %y5, %y6, %y7 : tensor<3xf16>, tensor<9x5xf32>, tensor<3x5xf32>, tensor<4x6xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3x5xf32>, tensor<6xf32>
}
