// Reductions on the 16-tile test target, checked against the reference:
// sum, mean, max and min along rows and down columns, over two axes that
// are not adjacent, over every axis, with and without keepdims, f32 and
// f16; the rows of 2 x 4096 and the 64 x 32 -> scalar mean are cut over
// tiles (partials gathered and combined on the result's tiles).
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>%t/err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t/err

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// ERR-DAG: compared with the reference output=sum_rows
// ERR-DAG: compared with the reference output=mean_columns
// ERR-DAG: compared with the reference output=max_outer
// ERR-DAG: compared with the reference output=min_rows
// ERR-DAG: compared with the reference output=sum_split
// ERR-DAG: compared with the reference output=mean_all
// ERR-DAG: compared with the reference output=max_columns
func.func @main(%x: tensor<32x64xf32> {ipu.name = "x"}, %y: tensor<6x8x10xf32> {ipu.name = "y"}, %h: tensor<64x32xf16> {ipu.name = "h"}, %w: tensor<2x4096xf32> {ipu.name = "w"}) -> (tensor<32xf32> {ipu.name = "sum_rows"}, tensor<1x64xf32> {ipu.name = "mean_columns"}, tensor<1x8x1xf32> {ipu.name = "max_outer"}, tensor<64xf16> {ipu.name = "min_rows"}, tensor<2xf32> {ipu.name = "sum_split"}, tensor<f16> {ipu.name = "mean_all"}, tensor<32xf16> {ipu.name = "max_columns"}) {
  %a = nn.reduce_sum %x {axes = array<i64: 1>} : tensor<32x64xf32> -> tensor<32xf32>
  %b = nn.reduce_mean %x {axes = array<i64: 0>, keepdims} : tensor<32x64xf32> -> tensor<1x64xf32>
  %c = nn.reduce_max %y {axes = array<i64: 0, 2>, keepdims} : tensor<6x8x10xf32> -> tensor<1x8x1xf32>
  %d = nn.reduce_min %h {axes = array<i64: 1>} : tensor<64x32xf16> -> tensor<64xf16>
  %e = nn.reduce_sum %w {axes = array<i64: 1>} : tensor<2x4096xf32> -> tensor<2xf32>
  %f = nn.reduce_mean %h {axes = array<i64: 0, 1>} : tensor<64x32xf16> -> tensor<f16>
  %g = nn.reduce_max %h {axes = array<i64: 0>} : tensor<64x32xf16> -> tensor<32xf16>
  return %a, %b, %c, %d, %e, %f, %g : tensor<32xf32>, tensor<1x64xf32>, tensor<1x8x1xf32>, tensor<64xf16>, tensor<2xf32>, tensor<f16>, tensor<32xf16>
}
