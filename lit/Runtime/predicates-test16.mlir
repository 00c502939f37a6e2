// Comparisons, boolean logic and select on the device (test16), against the
// reference: f32 and f16, NaN (compares false, and is selected as a value),
// infinities and signed zeros among the inputs; numpy broadcasting of a row,
// a column, a scalar and a batch; odd sizes (3x4x5, 2x3x7, split unevenly
// over the tiles). Booleans are bytes 0/1, in host streams as on the tiles.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --print-outputs 2>/dev/null | FileCheck %s
// The exchange stage printed and read back lowers to the same package.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | ipu-translate --to-ipuexe - -o %t/one.ipuexe
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s -o %t/exchange.mlir
// RUN: ipu-opt --convert-exchange-to-machine %t/exchange.mlir | ipu-translate --to-ipuexe - -o %t/split.ipuexe
// RUN: cmp %t/one.ipuexe %t/split.ipuexe
// CHECK: tiles=16 cycles={{[0-9]+}}
// NaN is unequal to itself; -0 equals +0.
// CHECK-DAG: self_eq: tensor<2x3x7xi1> = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0]
// CHECK-DAG: col_nan_lt: tensor<3x4x5xi1> = [0, 0, 0, 0, 0,
// CHECK: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
func.func @main(
    %a: tensor<3x4x5xf32> {ipu.name = "a", ipu.default = dense<[[[1.0, 2.655, 2.0, 0.5, -1.506], [0x7F800000, 0.5, -0.715, 0.0, 0.0], [0x7F800000, 1.594, 0xFF800000, -2.5, 0x7F800000], [0x7FC00000, 0.0, -2.005, 1.0, 0.235]], [[0.0, 0.0, 2.362, 1.0, 0x7F800000], [1.0, -2.5, -2.5, 1.0, 1.0], [-0.116, 0.5, 0x7F800000, 0x7FC00000, -0.854], [2.0, -0.803, 0x7FC00000, 0x7F800000, 0.0]], [[0.0, 2.652, 1.0, -1.495, -2.5], [1.0, -2.78, -2.453, -2.5, 0x7F800000], [2.0, 1.0, 0xFF800000, -0.0, -2.031], [-2.5, -1.0, -2.5, -0.0, -1.0]]]> : tensor<3x4x5xf32>},
    %b: tensor<4x1xf32> {ipu.name = "b", ipu.default = dense<[[0x7FC00000], [-0.995], [-2.5], [0.782]]> : tensor<4x1xf32>},
    %r: tensor<5xf32> {ipu.name = "r", ipu.default = dense<[-2.36, 0x7F800000, -1.0, 0.5, 0.722]> : tensor<5xf32>},
    %s: tensor<f32> {ipu.name = "s", ipu.default = dense<1.0> : tensor<f32>},
    %h: tensor<2x3x7xf16> {ipu.name = "h", ipu.default = dense<[[[2.0, 0.5, 1.0, -0.0, 0x7C00, 2.0, 0.76], [1.0, 0.5, 2.0, -0.83, 1.65, 0x7E00, -0.82], [-0.0, -1.41, 1.3, -0.96, 0x7E00, -0.0, -0.0]], [[2.0, 1.0, 1.0, -1.0, 0x7C00, 1.13, 2.74], [2.0, -1.81, 0.5, 0xFC00, -1.0, -2.5, -1.0], [2.0, 0.82, 0x7E00, -2.5, 0x7C00, 0x7C00, 0x7E00]]]> : tensor<2x3x7xf16>},
    %hb: tensor<1x3x1xf16> {ipu.name = "hb", ipu.default = dense<[[[0.5], [-0.0], [0x7E00]]]> : tensor<1x3x1xf16>},
    %m: tensor<4x5xi1> {ipu.name = "m", ipu.default = dense<[[false, true, true, false, false], [false, false, true, true, true], [false, true, false, false, false], [false, true, false, true, false]]> : tensor<4x5xi1>})
    -> (tensor<3x4x5xi1> {ipu.name = "row_eq"}, tensor<3x4x5xi1> {ipu.name = "col_nan_lt"},
        tensor<3x4x5xi1> {ipu.name = "scalar_gt"}, tensor<2x3x7xi1> {ipu.name = "h_lt"},
        tensor<2x3x7xi1> {ipu.name = "self_eq"}, tensor<2x3x7xi1> {ipu.name = "h_gt"},
        tensor<3x4x5xi1> {ipu.name = "and"}, tensor<3x4x5xi1> {ipu.name = "or"},
        tensor<3x4x5xi1> {ipu.name = "not"}, tensor<3x4x5xf32> {ipu.name = "sel_row"},
        tensor<2x3x7xf16> {ipu.name = "sel_h"}, tensor<3x4x5xf32> {ipu.name = "sel_batch"},
        tensor<3x4x5xf32> {ipu.name = "masked"}) {
  %row_eq = nn.equal %a, %r : (tensor<3x4x5xf32>, tensor<5xf32>) -> tensor<3x4x5xi1>
  %col_lt = nn.less %a, %b : (tensor<3x4x5xf32>, tensor<4x1xf32>) -> tensor<3x4x5xi1>
  %scalar_gt = nn.greater %a, %s : (tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x4x5xi1>
  %h_lt = nn.less %h, %hb : (tensor<2x3x7xf16>, tensor<1x3x1xf16>) -> tensor<2x3x7xi1>
  %self_eq = nn.equal %h, %h : (tensor<2x3x7xf16>, tensor<2x3x7xf16>) -> tensor<2x3x7xi1>
  %h_gt = nn.greater %hb, %h : (tensor<1x3x1xf16>, tensor<2x3x7xf16>) -> tensor<2x3x7xi1>
  %and = nn.and %row_eq, %col_lt : (tensor<3x4x5xi1>, tensor<3x4x5xi1>) -> tensor<3x4x5xi1>
  %or = nn.or %scalar_gt, %m : (tensor<3x4x5xi1>, tensor<4x5xi1>) -> tensor<3x4x5xi1>
  %not = nn.not %col_lt : tensor<3x4x5xi1>
  %sel_row = nn.select %col_lt, %a, %r : (tensor<3x4x5xi1>, tensor<3x4x5xf32>, tensor<5xf32>) -> tensor<3x4x5xf32>
  %sel_h = nn.select %h_lt, %hb, %h : (tensor<2x3x7xi1>, tensor<1x3x1xf16>, tensor<2x3x7xf16>) -> tensor<2x3x7xf16>
  %sel_batch = nn.select %m, %a, %s : (tensor<4x5xi1>, tensor<3x4x5xf32>, tensor<f32>) -> tensor<3x4x5xf32>
  %ninf = nn.constant dense<0xFF800000> : tensor<f32>
  %masked = nn.select %m, %ninf, %a : (tensor<4x5xi1>, tensor<f32>, tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  return %row_eq, %col_lt, %scalar_gt, %h_lt, %self_eq, %h_gt, %and, %or, %not, %sel_row, %sel_h, %sel_batch, %masked
      : tensor<3x4x5xi1>, tensor<3x4x5xi1>, tensor<3x4x5xi1>, tensor<2x3x7xi1>, tensor<2x3x7xi1>, tensor<2x3x7xi1>,
        tensor<3x4x5xi1>, tensor<3x4x5xi1>, tensor<3x4x5xi1>, tensor<3x4x5xf32>, tensor<2x3x7xf16>, tensor<3x4x5xf32>,
        tensor<3x4x5xf32>
}
