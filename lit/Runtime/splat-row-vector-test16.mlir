// A splat constant row vector (every bias of a freshly initialised layer:
// `dense<0.0> : tensor<96xf32>`) added to and multiplied with a matrix.
// convert-nn-to-tile reads it as a constant of the result's shape, in place,
// so the kernel it records is the elementwise one that
// convert-tile-to-exchange then finds (it used to record the row-vector
// kernel and the next stage refused the op). Checked on the device against
// the reference.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s --check-prefix=TILE
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock | FileCheck %s --check-prefix=DEV

// TILE: tile.constant
// TILE: fn = #tile.fn<add>, kernel = "ew_add_f32_n{{[0-9]+}}"
// TILE: fn = #tile.fn<mul>, kernel = "ew_mul_f32_n{{[0-9]+}}"
// TILE-NOT: rows_{{add|mul}}_row_vector
// DEV: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// DEV: hardwareTest=PASS

func.func @main(%x: tensor<16x96xf32>) -> tensor<16x96xf32> {
  %zero = nn.constant dense<0.0> : tensor<96xf32>
  %half = nn.constant dense<0.5> : tensor<1x96xf32>
  %a = nn.add %x, %zero : (tensor<16x96xf32>, tensor<96xf32>) -> tensor<16x96xf32>
  %y = nn.mul %half, %a : (tensor<1x96xf32>, tensor<16x96xf32>) -> tensor<16x96xf32>
  return %y : tensor<16x96xf32>
}
