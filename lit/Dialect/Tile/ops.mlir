// The tile dialect in its custom form, round-tripped byte for byte, and in
// its generic form (read back to the same IR): every op, every #tile.fn.
// RUN: ipu-opt %s > %t && ipu-opt %t | diff %t -
// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt --mlir-print-op-generic %s > %t.generic && ipu-opt %t.generic | diff %t -
// RUN: FileCheck %s --check-prefix=GENERIC < %t.generic

// CHECK-LABEL: func.func @stage
// CHECK: %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : tensor<8x32xf16>
// CHECK: %1 = tile.host_input %arg1 {mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 2>}} : tensor<32x32xf8E4M3FN>
// CHECK: %2 = tile.constant {mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} dense<0.5> : tensor<32xf16>
// CHECK: %3 = tile.matmul %0, %1 {cycles = 480 : i64, kernel = "gemm_f16f32_interleaved_k16_c16_r1_r2_m8", mapping = {grid = array<i64: 2, 2>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2, 2>, tiles = array<i64: 0, 1>} : (tensor<8x32xf16>, tensor<32x32xf8E4M3FN>) -> tensor<8x32xf16>
// CHECK: tile.map %3, %2 {cycles = 300 : i64, fn = #tile.fn<add>, kernel = "rows_add_row_vector_f16_r2_c32", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
// CHECK: tile.host_output %{{[0-9]+}} {name = "y"} : tensor<8x32xf16>
// GENERIC: "tile.matmul"(%0, %1) <{cycles = 480 : i64, kernel = "gemm_f16f32_interleaved_k16_c16_r1_r2_m8", mapping = {grid = array<i64: 2, 2>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2, 2>, tiles = array<i64: 0, 1>}> : (tensor<8x32xf16>, tensor<32x32xf8E4M3FN>) -> tensor<8x32xf16>
// GENERIC: "tile.host_output"(%{{[0-9]+}}) <{name = "y"}> : (tensor<8x32xf16>) -> ()
func.func @stage(%x: tensor<8x32xf16> {ipu.name = "x"}, %w: tensor<32x32xf8E4M3FN> {ipu.name = "w"}) -> (tensor<8x32xf16> {ipu.name = "y"}) {
  %a = tile.host_input %x {mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : tensor<8x32xf16>
  %b = tile.host_input %w {mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 2>}} : tensor<32x32xf8E4M3FN>
  %c = tile.constant {mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} dense<0.5> : tensor<32xf16>
  %h = tile.matmul %a, %b {cycles = 480 : i64, kernel = "gemm_f16f32_interleaved_k16_c16_r1_r2_m8", mapping = {grid = array<i64: 2, 2>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2, 2>, tiles = array<i64: 0, 1>} : (tensor<8x32xf16>, tensor<32x32xf8E4M3FN>) -> tensor<8x32xf16>
  %s = tile.map %h, %c {cycles = 300 : i64, fn = #tile.fn<add>, kernel = "rows_add_row_vector_f16_r2_c32", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
  tile.host_output %s {name = "y"} : tensor<8x32xf16>
  return %s : tensor<8x32xf16>
}

// A batched matmul given its rhs transposed ([B, N, K]): the result is
// [B, M, N], N from the rhs's second dimension.
// CHECK-LABEL: func.func @transposed
// CHECK: tile.matmul %arg0, %arg1 {{{.*}}plan = array<i64: 2, 1, 1, 1>, rhs_transposed, tiles = array<i64: 0, 1>} : (tensor<2x16x32xf16>, tensor<2x8x32xf16>) -> tensor<2x16x8xf16>
// GENERIC: "tile.matmul"(%arg0, %arg1) <{{{.*}}rhs_transposed, tiles = array<i64: 0, 1>}>
func.func @transposed(%q: tensor<2x16x32xf16>, %k: tensor<2x8x32xf16>) -> tensor<2x16x8xf16> {
  %s = tile.matmul %q, %k {cycles = 446 : i64, kernel = "gemm_f16_interleaved_k32_c16_r1_r2_m8_bt", mapping = {grid = array<i64: 2, 1, 1>, tiles = array<i64: 0, 1>}, partials = f16, plan = array<i64: 2, 1, 1, 1>, rhs_transposed, tiles = array<i64: 0, 1>} : (tensor<2x16x32xf16>, tensor<2x8x32xf16>) -> tensor<2x16x8xf16>
  return %s : tensor<2x16x8xf16>
}

// A parameter loaded widened: the host's type, then the tiles' one.
// CHECK-LABEL: func.func @loaded
// CHECK: %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 2>}, resident} : tensor<32x32xf8E4M3FN> -> tensor<32x32xf16>
// CHECK: %1 = tile.host_input %arg1 {mapping = {grid = array<i64: 2>, tiles = array<i64: 0, 1>}, resident} : tensor<32xbf16> -> tensor<32xf32>
// GENERIC: "tile.host_input"(%arg0) <{mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 2>}, resident}> : (tensor<32x32xf8E4M3FN>) -> tensor<32x32xf16>
func.func @loaded(%w: tensor<32x32xf8E4M3FN> {ipu.weight}, %b: tensor<32xbf16> {ipu.weight}) -> (tensor<32x32xf16>, tensor<32xf32>) {
  %a = tile.host_input %w {mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 2>}, resident} : tensor<32x32xf8E4M3FN> -> tensor<32x32xf16>
  %c = tile.host_input %b {mapping = {grid = array<i64: 2>, tiles = array<i64: 0, 1>}, resident} : tensor<32xbf16> -> tensor<32xf32>
  return %a, %c : tensor<32x32xf16>, tensor<32xf32>
}

// Every function of tile.map (MapFn): the unary ones, the binary ones (same
// shapes), and cast.
// CHECK-LABEL: func.func @functions
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<relu>, kernel = "k_relu", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<gelu>, kernel = "k_gelu", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<exp>, kernel = "k_exp", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<tanh>, kernel = "k_tanh", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<erf>, kernel = "k_erf", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<rsqrt>, kernel = "k_rsqrt", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<sqrt>, kernel = "k_sqrt", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<neg>, kernel = "k_neg", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<abs>, kernel = "k_abs", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<sigmoid>, kernel = "k_sigmoid", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<reciprocal>, kernel = "k_reciprocal", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<log>, kernel = "k_log", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<copy>, kernel = "k_copy", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0, %arg1 {cycles = 1 : i64, fn = #tile.fn<add>, kernel = "k_add", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0, %arg1 {cycles = 1 : i64, fn = #tile.fn<sub>, kernel = "k_sub", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0, %arg1 {cycles = 1 : i64, fn = #tile.fn<mul>, kernel = "k_mul", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0, %arg1 {cycles = 1 : i64, fn = #tile.fn<div>, kernel = "k_div", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0, %arg1 {cycles = 1 : i64, fn = #tile.fn<max>, kernel = "k_max", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0, %arg1 {cycles = 1 : i64, fn = #tile.fn<min>, kernel = "k_min", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: tile.map %arg0 {cycles = 1 : i64, fn = #tile.fn<cast>, kernel = "k_cast", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf16>
func.func @functions(%x: tensor<8x3xf32>, %y: tensor<8x3xf32>) {
  %relu = tile.map %x {cycles = 1 : i64, fn = #tile.fn<relu>, kernel = "k_relu", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %gelu = tile.map %x {cycles = 1 : i64, fn = #tile.fn<gelu>, kernel = "k_gelu", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %exp = tile.map %x {cycles = 1 : i64, fn = #tile.fn<exp>, kernel = "k_exp", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %tanh = tile.map %x {cycles = 1 : i64, fn = #tile.fn<tanh>, kernel = "k_tanh", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %erf = tile.map %x {cycles = 1 : i64, fn = #tile.fn<erf>, kernel = "k_erf", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %rsqrt = tile.map %x {cycles = 1 : i64, fn = #tile.fn<rsqrt>, kernel = "k_rsqrt", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %sqrt = tile.map %x {cycles = 1 : i64, fn = #tile.fn<sqrt>, kernel = "k_sqrt", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %neg = tile.map %x {cycles = 1 : i64, fn = #tile.fn<neg>, kernel = "k_neg", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %abs = tile.map %x {cycles = 1 : i64, fn = #tile.fn<abs>, kernel = "k_abs", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %sigmoid = tile.map %x {cycles = 1 : i64, fn = #tile.fn<sigmoid>, kernel = "k_sigmoid", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %reciprocal = tile.map %x {cycles = 1 : i64, fn = #tile.fn<reciprocal>, kernel = "k_reciprocal", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %log = tile.map %x {cycles = 1 : i64, fn = #tile.fn<log>, kernel = "k_log", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %copy = tile.map %x {cycles = 1 : i64, fn = #tile.fn<copy>, kernel = "k_copy", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %add = tile.map %x, %y {cycles = 1 : i64, fn = #tile.fn<add>, kernel = "k_add", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  %sub = tile.map %x, %y {cycles = 1 : i64, fn = #tile.fn<sub>, kernel = "k_sub", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  %mul = tile.map %x, %y {cycles = 1 : i64, fn = #tile.fn<mul>, kernel = "k_mul", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  %div = tile.map %x, %y {cycles = 1 : i64, fn = #tile.fn<div>, kernel = "k_div", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  %max = tile.map %x, %y {cycles = 1 : i64, fn = #tile.fn<max>, kernel = "k_max", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  %min = tile.map %x, %y {cycles = 1 : i64, fn = #tile.fn<min>, kernel = "k_min", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  %cast = tile.map %x {cycles = 1 : i64, fn = #tile.fn<cast>, kernel = "k_cast", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x3xf32>) -> tensor<8x3xf16>
  return
}

// A softmax taking in the ops before it: f16 scores times a scale, widened,
// plus a row vector (operand #1).
// CHECK-LABEL: func.func @softmax_prologue
// CHECK: %0 = tile.softmax %arg0, %arg1 {axis = 1 : i64, cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 2, 4>, tiles = array<i64: 0, 1>}, scale = 0.125 : f16} : (tensor<8x64xf16>, tensor<64xf32>) -> tensor<8x64xf32>
// CHECK: %1 = tile.softmax %arg2 {axis = 1 : i64, cycles = 1 : i64, kernel = "k", log, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x64xf32>) -> tensor<8x64xf32>
// GENERIC: "tile.softmax"(%arg0, %arg1) <{axis = 1 : i64, cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 2, 4>, tiles = array<i64: 0, 1>}, scale = 0.125 : f16}> : (tensor<8x64xf16>, tensor<64xf32>) -> tensor<8x64xf32>
func.func @softmax_prologue(%x: tensor<8x64xf16>, %v: tensor<64xf32>, %z: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %y = tile.softmax %x, %v {axis = 1 : i64, cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 2, 4>, tiles = array<i64: 0, 1>}, scale = 0.125 : f16} : (tensor<8x64xf16>, tensor<64xf32>) -> tensor<8x64xf32>
  %l = tile.softmax %z {axis = 1 : i64, cycles = 1 : i64, kernel = "k", log, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y, %l : tensor<8x64xf32>, tensor<8x64xf32>
}
