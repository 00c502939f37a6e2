// Every tensor op in its custom form, round-tripped byte for byte.
// RUN: ipu-opt %s > %t && ipu-opt %t | diff %t -
// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt --mlir-print-op-generic %s | ipu-opt | diff %t -

// CHECK-LABEL: func.func @ops
func.func @ops(%x: tensor<2x4xf16>, %w: tensor<4x3xf8E4M3FN>, %i: tensor<5xi32>, %c: tensor<2x3xi1>, %e: tensor<10x3xf32>) {
  // CHECK: nn.constant dense<0.5> : tensor<3xf16>
  %b = nn.constant dense<0.5> : tensor<3xf16>
  // CHECK: nn.matmul %arg0, %arg1 : (tensor<2x4xf16>, tensor<4x3xf8E4M3FN>) -> tensor<2x3xf16>
  %h = nn.matmul %x, %w : (tensor<2x4xf16>, tensor<4x3xf8E4M3FN>) -> tensor<2x3xf16>
  // CHECK: nn.add %1, %0 : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  %a = nn.add %h, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  %s = nn.sub %a, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  %m = nn.mul %s, %a : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %d = nn.div %m, %a : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %mx = nn.max %d, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  %mn = nn.min %mx, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  %p = nn.pow %mn, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  // CHECK: nn.less {{.*}} -> tensor<2x3xi1>
  %lt = nn.less %p, %a : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xi1>
  %an = nn.and %lt, %c : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %nt = nn.not %an : tensor<2x3xi1>
  // CHECK: nn.select {{.*}} : (tensor<2x3xi1>, tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %sel = nn.select %nt, %p, %a : (tensor<2x3xi1>, tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %u1 = nn.exp %sel : tensor<2x3xf16>
  %u2 = nn.tanh %u1 : tensor<2x3xf16>
  %u3 = nn.erf %u2 : tensor<2x3xf16>
  %u4 = nn.relu %u3 : tensor<2x3xf16>
  // CHECK: nn.gelu %{{.*}} {approximate = "tanh"} : tensor<2x3xf16>
  %u5 = nn.gelu %u4 {approximate = "tanh"} : tensor<2x3xf16>
  // CHECK: nn.softmax %{{.*}} {axis = 1 : i64} : tensor<2x3xf16>
  %sm = nn.softmax %u5 {axis = 1} : tensor<2x3xf16>
  %g = nn.constant dense<1.0> : tensor<3xf16>
  // CHECK: nn.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  %ln = nn.layer_norm %sm, %g, %b {axis = 1, epsilon = 1.0e-5 : f32} : (tensor<2x3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  // CHECK: nn.reduce_sum %{{.*}} {axes = array<i64: 1>, keepdims} : tensor<2x3xf16> -> tensor<2x1xf16>
  %r = nn.reduce_sum %ln {axes = array<i64: 1>, keepdims} : tensor<2x3xf16> -> tensor<2x1xf16>
  %rm = nn.reduce_max %ln {axes = array<i64: 0, 1>} : tensor<2x3xf16> -> tensor<f16>
  // CHECK: nn.transpose %{{.*}} {permutation = array<i64: 1, 0>} : tensor<2x3xf16> -> tensor<3x2xf16>
  %t = nn.transpose %ln {permutation = array<i64: 1, 0>} : tensor<2x3xf16> -> tensor<3x2xf16>
  %rs = nn.reshape %t : tensor<3x2xf16> -> tensor<6xf16>
  %bc = nn.broadcast %rm : tensor<f16> -> tensor<2x6xf16>
  // CHECK: nn.slice %{{.*}} {ends = array<i64: 6>, starts = array<i64: 1>, steps = array<i64: 2>} : tensor<6xf16> -> tensor<3xf16>
  %sl = nn.slice %rs {starts = array<i64: 1>, ends = array<i64: 6>, steps = array<i64: 2>} : tensor<6xf16> -> tensor<3xf16>
  // CHECK: nn.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<3xf16>, tensor<3xf16>) -> tensor<6xf16>
  %cc = nn.concat %sl, %b {axis = 0} : (tensor<3xf16>, tensor<3xf16>) -> tensor<6xf16>
  // CHECK: nn.gather %arg4[%arg2] {axis = 0 : i64} : (tensor<10x3xf32>, tensor<5xi32>) -> tensor<5x3xf32>
  %ge = nn.gather %e[%i] {axis = 0} : (tensor<10x3xf32>, tensor<5xi32>) -> tensor<5x3xf32>
  // CHECK: nn.cast %{{.*}} {saturate, scale = -2 : i64} : tensor<5x3xf32> -> tensor<5x3xf8E5M2>
  %q = nn.cast %ge {saturate, scale = -2} : tensor<5x3xf32> -> tensor<5x3xf8E5M2>
  test.print %bc, %cc, %q, %r : tensor<2x6xf16>, tensor<6xf16>, tensor<5x3xf8E5M2>, tensor<2x1xf16>
  return
}

// CHECK-LABEL: func.func @more_ops
func.func @more_ops(%x: tensor<2x3xf32>, %i: tensor<2x3xi64>) {
  // CHECK: nn.floor %arg0 : tensor<2x3xf32>
  %0 = nn.floor %x : tensor<2x3xf32>
  %1 = nn.ceil %0 : tensor<2x3xf32>
  %2 = nn.round %1 : tensor<2x3xf32>
  // CHECK: nn.mod %{{.*}}, %{{.*}} {fmod} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = nn.mod %2, %x {fmod} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: nn.argmax %{{.*}} {axis = 1 : i64, keepdims} : tensor<2x3xf32> -> tensor<2x1xi64>
  %4 = nn.argmax %3 {axis = 1, keepdims} : tensor<2x3xf32> -> tensor<2x1xi64>
  %5 = nn.argmin %3 {axis = 0, select_last_index} : tensor<2x3xf32> -> tensor<3xi64>
  // CHECK: nn.cumsum %{{.*}} {axis = 1 : i64, exclusive, reverse} : tensor<2x3xf32>
  %6 = nn.cumsum %3 {axis = 1, exclusive, reverse} : tensor<2x3xf32>
  %7 = nn.cumprod %6 {axis = 0} : tensor<2x3xf32>
  // CHECK: nn.pad %{{.*}} {high = array<i64: 0, 2>, low = array<i64: 1, 0>, mode = "reflect"} : tensor<2x3xf32> -> tensor<3x5xf32>
  %8 = nn.pad %7 {low = array<i64: 1, 0>, high = array<i64: 0, 2>, mode = "reflect"} : tensor<2x3xf32> -> tensor<3x5xf32>
  // CHECK: nn.gather_elements %arg0[%arg1] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  %9 = nn.gather_elements %x[%i] {axis = 1} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  // CHECK: nn.topk %{{.*}} {axis = 1 : i64, k = 2 : i64, largest} : tensor<2x3xf32> -> tensor<2x2xi64>
  %10 = nn.topk %9 {axis = 1, k = 2, largest} : tensor<2x3xf32> -> tensor<2x2xi64>
  test.print %4, %5, %8, %10 : tensor<2x1xi64>, tensor<3xi64>, tensor<3x5xf32>, tensor<2x2xi64>
  return
}
