// nn -> tile for integers and booleans (test16): the attention mask as
// exporters compute it (i64 -> i1 -> f32, multiplied into a float), an i32
// add of a broadcast row (position ids), and a select of i64 values with a
// rank-0 constant (a splat constant at the result's shape). Every integer
// op records an `intew` kernel (int_<op>_w<bytes>_n<elements>) on the
// mapping of its operand, so chains of them exchange nothing.
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null

// CHECK: %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : tensor<2x24xi64>
// CHECK-NEXT: %1 = tile.host_input %arg1 {mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : tensor<2x24xf32>
// CHECK-NEXT: %2 = tile.host_input %arg2 {mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : tensor<2x24xi32>
// CHECK-NEXT: %3 = tile.host_input %arg3 {mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}} : tensor<24xi32>
// CHECK-NEXT: %4 = tile.map %0 {cycles = 39 : i64, fn = #tile.fn<cast>, kernel = "int_tobool_w8_n3", mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : (tensor<2x24xi64>) -> tensor<2x24xi1>
// CHECK-NEXT: %5 = tile.map %4 {cycles = 30 : i64, fn = #tile.fn<cast>, kernel = "int_booltofloat_w4_n3", mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : (tensor<2x24xi1>) -> tensor<2x24xf32>
// CHECK-NEXT: %6 = tile.map %1, %5 {cycles = 74 : i64, fn = #tile.fn<mul>, kernel = "ew_mul_f32_n4", mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : (tensor<2x24xf32>, tensor<2x24xf32>) -> tensor<2x24xf32>
// CHECK-NEXT: %7 = tile.map %2, %3 {cycles = 30 : i64, fn = #tile.fn<add>, kernel = "int_add_w4_n3", mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : (tensor<2x24xi32>, tensor<24xi32>) -> tensor<2x24xi32>
// CHECK-NEXT: %8 = tile.constant {mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} dense<0> : tensor<2x24xi64>
// CHECK-NEXT: %9 = tile.select %4, %0, %8 {cycles = 51 : i64, kernel = "int_select_w8_n3", mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : (tensor<2x24xi1>, tensor<2x24xi64>, tensor<2x24xi64>) -> tensor<2x24xi64>
// CHECK-NEXT: tile.host_output %6 {name = "result0"} : tensor<2x24xf32>
// CHECK-NEXT: tile.host_output %7 {name = "result1"} : tensor<2x24xi32>
// CHECK-NEXT: tile.host_output %9 {name = "result2"} : tensor<2x24xi64>
// CHECK-NEXT: return %6, %7, %9 : tensor<2x24xf32>, tensor<2x24xi32>, tensor<2x24xi64>

func.func @main(%mask: tensor<2x24xi64>, %x: tensor<2x24xf32>, %ids: tensor<2x24xi32>, %shift: tensor<24xi32>) -> (tensor<2x24xf32>, tensor<2x24xi32>, tensor<2x24xi64>) {
  %m = nn.cast %mask : tensor<2x24xi64> -> tensor<2x24xi1>
  %mf = nn.cast %m : tensor<2x24xi1> -> tensor<2x24xf32>
  %xm = nn.mul %x, %mf : (tensor<2x24xf32>, tensor<2x24xf32>) -> tensor<2x24xf32>
  %pos = nn.add %ids, %shift : (tensor<2x24xi32>, tensor<24xi32>) -> tensor<2x24xi32>
  %zero = nn.constant dense<0> : tensor<i64>
  %sel = nn.select %m, %mask, %zero : (tensor<2x24xi1>, tensor<2x24xi64>, tensor<i64>) -> tensor<2x24xi64>
  return %xm, %pos, %sel : tensor<2x24xf32>, tensor<2x24xi32>, tensor<2x24xi64>
}
