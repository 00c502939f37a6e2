// An MLP of odd sizes as torch.onnx.export writes nn.Linear -> GELU
// (approximate='none') -> nn.Linear (3x37 -> 53 -> 19) and ipu-onnx imports
// it: the biases are constants added as rows of 53 and 19 f32 (rows the
// row-vector kernel does not take: no whole 64-bit granules), GELU is
// x * (erf(x / sqrt 2) + 1) * 0.5 with rank-0 constants. Every constant the
// kernels read at the result's shape is one at that shape, loaded with the
// image (the bias rows used to stay at their shape and the exchange could
// not broadcast them: "operand #0 has no tile mapping"). On ipu21 against
// the reference.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target ipu21 --convert-nn-to-tile %s | FileCheck %s --check-prefix=TILE
// RUN: ipu-run %s --target ipu21 --device-lock %t/device.lock 2>/dev/null | FileCheck %s

// TILE: tile.constant {mapping = {{.*}}} dense<{{\[\[}}0.204, {{.*}}> : tensor<3x53xf32>
// TILE-NEXT: fn = #tile.fn<add>, kernel = "ew_add_f32_n{{[0-9]+}}"
// TILE-NEXT: tile.constant {mapping = {{.*}}} dense<1.4142135> : tensor<3x53xf32>
// TILE-NEXT: fn = #tile.fn<div>, kernel = "ew_div_f32_n{{[0-9]+}}"
// TILE-NEXT: fn = #tile.fn<erf>
// TILE-NEXT: tile.constant {mapping = {{.*}}} dense<1.0> : tensor<3x53xf32>
// TILE-NEXT: fn = #tile.fn<add>
// TILE-NEXT: fn = #tile.fn<mul>
// TILE-NEXT: tile.constant {mapping = {{.*}}} dense<0.5> : tensor<3x53xf32>
// TILE: tile.constant {mapping = {{.*}}} dense<{{\[\[}}0.058, {{.*}}> : tensor<3x19xf32>
// TILE-NEXT: fn = #tile.fn<add>, kernel = "ew_add_f32_n{{[0-9]+}}"
// CHECK: tiles=1472 cycles={{[0-9]+}}
// CHECK: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS

func.func @main(%x: tensor<3x37xf32> {ipu.name = "x"}, %w1: tensor<37x53xf32> {ipu.name = "w1"}, %w2: tensor<53x19xf32> {ipu.name = "w2"}) -> (tensor<3x19xf32> {ipu.name = "y"}) {
  %b1 = nn.constant dense<[0.204, -0.256, 0.042, -0.057, -0.045, -0.022, -0.202, -0.023, -0.087, 0.332, 0.023, -0.035, -0.028, -0.067, -0.106, -0.039, 0.048, -0.024, 0.096, -0.020, 0.002, 0.155, 0.055, -0.051, -0.018, 0.054, 0.194, -0.027, -0.024, 0.100, -0.089, -0.029, 0.088, 0.058, 0.009, 0.067, -0.283, 0.102, -0.096, -0.167, 0.028, 0.070, -0.044, -0.108, 0.003, -0.005, 0.141, 0.075, 0.019, 0.111, -0.021, -0.093, 0.058]> : tensor<53xf32>
  %b2 = nn.constant dense<[0.058, -0.021, -0.078, 0.023, -0.249, 0.069, 0.049, -0.164, 0.006, -0.096, 0.076, -0.203, -0.091, 0.071, 0.116, -0.216, -0.050, 0.033, -0.061]> : tensor<19xf32>
  %mm1 = nn.matmul %x, %w1 : (tensor<3x37xf32>, tensor<37x53xf32>) -> tensor<3x53xf32>
  %h = nn.add %b1, %mm1 : (tensor<53xf32>, tensor<3x53xf32>) -> tensor<3x53xf32>
  %sqrt2 = nn.constant dense<1.41421354> : tensor<f32>
  %d = nn.div %h, %sqrt2 : (tensor<3x53xf32>, tensor<f32>) -> tensor<3x53xf32>
  %e = nn.erf %d : tensor<3x53xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %e1 = nn.add %e, %one : (tensor<3x53xf32>, tensor<f32>) -> tensor<3x53xf32>
  %m = nn.mul %h, %e1 : (tensor<3x53xf32>, tensor<3x53xf32>) -> tensor<3x53xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %g = nn.mul %m, %half : (tensor<3x53xf32>, tensor<f32>) -> tensor<3x53xf32>
  %mm2 = nn.matmul %g, %w2 : (tensor<3x53xf32>, tensor<53x19xf32>) -> tensor<3x19xf32>
  %y = nn.add %b2, %mm2 : (tensor<19xf32>, tensor<3x19xf32>) -> tensor<3x19xf32>
  return %y : tensor<3x19xf32>
}
