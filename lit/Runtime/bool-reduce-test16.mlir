// Boolean reductions on the device (test16), against the reference: ONNX
// ReduceMax (any) and ReduceMin (all) of booleans, along the last axis,
// down the first, over two runs of axes (two intew calls, the first into a
// scratch buffer) and over every axis. The cut is along kept axes only:
// each result's booleans lie on one tile, reduced by intew.S on the
// supervisor.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s --check-prefix=TILE
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCH
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --print-outputs 2>/dev/null | FileCheck %s
// TILE: tile.reduce %0 {axes = array<i64: 1>, cycles = 83 : i64, grid = array<i64: 2, 1>, keepdims, kernel = "int_any_n1_l9_i1", kind = "max"
// TILE: tile.reduce %0 {axes = array<i64: 0>, cycles = 34 : i64, grid = array<i64: 1, 9>, kernel = "int_all_n1_l2_i1", kind = "min"
// TILE: tile.reduce %1 {axes = array<i64: 0, 2>, cycles = 390 : i64, grid = array<i64: 1, 6, 1>, keepdims, kernel = "int_any_n4_l10_i1", kind = "max"
// TILE: tile.reduce %1 {axes = array<i64: 1>, cycles = 230 : i64, grid = array<i64: 1, 1, 10>, kernel = "int_all_n4_l6_i1", kind = "min"
// TILE: tile.reduce %1 {axes = array<i64: 0, 1, 2>, cycles = 1700 : i64, grid = array<i64: 1, 1, 1>, kernel = "int_all_n1_l240_i1", kind = "min"
// EXCH: exchange.vertex {kernel = "intew", name = "int_any_n4_l10_i1", params = {I = 1 : i64, L = 10 : i64, N = 4 : i64, OP = 21 : i64}, record = [@input1, 0 : i64, 0 : i64, @s3.rows0]
// EXCH-NEXT: exchange.vertex {kernel = "intew", name = "int_any_n1_l4_i1", params = {I = 1 : i64, L = 4 : i64, N = 1 : i64, OP = 21 : i64}, record = [@s3.rows0, 0 : i64, 0 : i64, @s3.result]
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-DAG: any: tensor<2x1xi1> = [1, 1]
// CHECK-DAG: all: tensor<9xi1> = [1, 0, 0, 0, 0, 0, 0, 0, 1]
// CHECK: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS

func.func @main(%c: tensor<2x9xi1> {ipu.name = "c", ipu.default = dense<[[true, false, false, true, false, true, false, true, true], [true, true, true, false, true, false, false, false, true]]> : tensor<2x9xi1>},
    %b: tensor<4x6x10xi1> {ipu.name = "b"}) -> (tensor<2x1xi1> {ipu.name = "any"}, tensor<9xi1> {ipu.name = "all"}, tensor<1x6x1xi1> {ipu.name = "any3"}, tensor<4x10xi1> {ipu.name = "all3"}, tensor<i1> {ipu.name = "all_axes"}) {
  %any = nn.reduce_max %c {axes = array<i64: 1>, keepdims} : tensor<2x9xi1> -> tensor<2x1xi1>
  %all = nn.reduce_min %c {axes = array<i64: 0>} : tensor<2x9xi1> -> tensor<9xi1>
  %a3 = nn.reduce_max %b {axes = array<i64: 0, 2>, keepdims} : tensor<4x6x10xi1> -> tensor<1x6x1xi1>
  %m3 = nn.reduce_min %b {axes = array<i64: 1>} : tensor<4x6x10xi1> -> tensor<4x10xi1>
  %all3 = nn.reduce_min %b {axes = array<i64: 0, 1, 2>} : tensor<4x6x10xi1> -> tensor<i1>
  return %any, %all, %a3, %m3, %all3 : tensor<2x1xi1>, tensor<9xi1>, tensor<1x6x1xi1>, tensor<4x10xi1>, tensor<i1>
}
