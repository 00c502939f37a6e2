// nn -> tile for comparisons, boolean logic, select, pow, gelu's tanh form
// and gather on the 16-tile test target: the kernel each op calls, pinned.
// Comparisons and logic are tile.predicate (compare.S), selects tile.select
// (select.S); broadcast operands are read at the result's blocks (a splat
// constant becomes a constant of the result's shape); pow and the tanh gelu
// are elementwise kernels. A gather with run-time indices is tile.gather:
// the table is laid out by its other dimensions only (the whole axis on
// every tile), the output's blocks on the same tiles. With constant indices
// it is a view of kind gather (no kernel), negative indices resolved.
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCHANGE

// CHECK: %[[W:.*]] = tile.host_input %arg5 {mapping = {grid = array<i64: 1, 16>, tiles = array<i64: 0, 1>}} : tensor<50x16xf16>
// CHECK: %[[EQ:.*]] = tile.predicate %0, %1 {cycles = {{[0-9]+}} : i64, fn = #tile.fn<equal>, kernel = "cmp_eq_f32_n3", mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}} : (tensor<4x12xf32>, tensor<12xf32>) -> tensor<4x12xi1>
// CHECK: %[[GT:.*]] = tile.predicate %2, %3 {{{.*}}fn = #tile.fn<greater>, kernel = "cmp_gt_f16_n3"{{.*}} : (tensor<4x12xf16>, tensor<4x1xf16>) -> tensor<4x12xi1>
// CHECK: tile.predicate %[[EQ]], %4 {{{.*}}fn = #tile.fn<and>, kernel = "i1_and_n3"
// CHECK: tile.predicate %[[GT]] {{{.*}}fn = #tile.fn<not>, kernel = "i1_not_n3"
// CHECK: %[[NINF:.*]] = tile.constant {mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}} dense<0xFF800000> : tensor<4x12xf32>
// CHECK: tile.select %4, %0, %[[NINF]] {{{.*}}kernel = "select_f32_n3"{{.*}} : (tensor<4x12xi1>, tensor<4x12xf32>, tensor<4x12xf32>) -> tensor<4x12xf32>
// CHECK: tile.select %[[GT]], %3, %2 {{{.*}}kernel = "select_f16_n3"{{.*}} : (tensor<4x12xi1>, tensor<4x1xf16>, tensor<4x12xf16>) -> tensor<4x12xf16>
// The i64 exponent 3 becomes an f32 constant of the result's shape.
// CHECK: %[[THREE:.*]] = tile.constant {{{.*}}} dense<3.0> : tensor<4x12xf32>
// CHECK: tile.map %0, %[[THREE]] {{{.*}}fn = #tile.fn<pow>, kernel = "ew_pow_f32_n4"
// CHECK: tile.map %2 {{{.*}}fn = #tile.fn<gelu_tanh>, kernel = "ew_gelu_tanh_f16_n4"
// CHECK: tile.gather %[[W]], %6 {axis = 0 : i64, cycles = {{[0-9]+}} : i64, data_mapping = {grid = array<i64: 1, 16>, tiles = array<i64: 0, 1>}, kernel = "gather_rb2_d50_ni21_p1_i64", mapping = {grid = array<i64: 1, 1, 16>, tiles = array<i64: 0, 1>}} : (tensor<50x16xf16>, tensor<3x7xi64>) -> tensor<3x7x16xf16>
// CHECK: tile.view %[[W]] {axis = 0 : i64, indices = array<i64: 49, 4>, kind = "gather", mapping = {{.*}}} : (tensor<50x16xf16>) -> tensor<2x16xf16>

// EXCHANGE: exchange.compute_set attributes {{{.*}}label = "tile.predicate equal"
// EXCHANGE: exchange.vertex {kernel = "compare", name = "cmp_eq_f32_n3", params = {N = 3 : i64, OP = 0 : i64, TYPE = 0 : i64}, record = [@input0, @s1.operand1, @s1.result], tiles = "0 to 15"}
// EXCHANGE: exchange.vertex {kernel = "select", name = "select_f32_n3", params = {N = 3 : i64, TYPE = 0 : i64}
// EXCHANGE: exchange.compute_set attributes {{{.*}}label = "tile.gather"
// EXCHANGE: exchange.vertex {kernel = "gather", name = "gather_rb2_d50_ni21_p1_i64", params = {D = 50 : i64, IB = 8 : i64, NI = 21 : i64, P = 1 : i64, RB = 2 : i64}
func.func @main(%x: tensor<4x12xf32> {ipu.name = "x"}, %r: tensor<12xf32> {ipu.name = "r"}, %h: tensor<4x12xf16> {ipu.name = "h"}, %c: tensor<4x1xf16> {ipu.name = "c"}, %m: tensor<4x12xi1> {ipu.name = "m"}, %w: tensor<50x16xf16> {ipu.name = "w"}, %ids: tensor<3x7xi64> {ipu.name = "ids"}) -> (tensor<4x12xi1>, tensor<4x12xi1>, tensor<4x12xi1>, tensor<4x12xi1>, tensor<4x12xf32>, tensor<4x12xf16>, tensor<4x12xf32>, tensor<4x12xf16>, tensor<3x7x16xf16>, tensor<2x16xf16>) {
  %eq = nn.equal %x, %r : (tensor<4x12xf32>, tensor<12xf32>) -> tensor<4x12xi1>
  %gt = nn.greater %h, %c : (tensor<4x12xf16>, tensor<4x1xf16>) -> tensor<4x12xi1>
  %and = nn.and %eq, %m : (tensor<4x12xi1>, tensor<4x12xi1>) -> tensor<4x12xi1>
  %not = nn.not %gt : tensor<4x12xi1>
  %ninf = nn.constant dense<0xFF800000> : tensor<f32>
  %sel = nn.select %m, %x, %ninf : (tensor<4x12xi1>, tensor<4x12xf32>, tensor<f32>) -> tensor<4x12xf32>
  %selh = nn.select %gt, %c, %h : (tensor<4x12xi1>, tensor<4x1xf16>, tensor<4x12xf16>) -> tensor<4x12xf16>
  %three = nn.constant dense<3> : tensor<i64>
  %cube = nn.pow %x, %three : (tensor<4x12xf32>, tensor<i64>) -> tensor<4x12xf32>
  %gt2 = nn.gelu %h {approximate = "tanh"} : tensor<4x12xf16>
  %e = nn.gather %w[%ids] {axis = 0} : (tensor<50x16xf16>, tensor<3x7xi64>) -> tensor<3x7x16xf16>
  %k = nn.constant dense<[-1, 4]> : tensor<2xi32>
  %rows = nn.gather %w[%k] {axis = 0} : (tensor<50x16xf16>, tensor<2xi32>) -> tensor<2x16xf16>
  return %eq, %gt, %and, %not, %sel, %selh, %cube, %gt2, %e, %rows : tensor<4x12xi1>, tensor<4x12xi1>, tensor<4x12xi1>, tensor<4x12xi1>, tensor<4x12xf32>, tensor<4x12xf16>, tensor<4x12xf32>, tensor<4x12xf16>, tensor<3x7x16xf16>, tensor<2x16xf16>
}
