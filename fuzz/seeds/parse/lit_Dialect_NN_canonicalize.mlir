// Canonicalization of tensor ops: constant folding through the reference
// numerics, identities, cast and transpose and reshape chains.
// RUN: ipu-opt --canonicalize %s | FileCheck %s

// CHECK-LABEL: func.func @fold
func.func @fold() -> tensor<2x2xf32> {
  // CHECK-NEXT: %0 = nn.constant dense<{{\[}}[4.0, 6.0], [4.0, 6.0]]> : tensor<2x2xf32>
  // CHECK-NEXT: return %0
  %a = nn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = nn.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %t = nn.transpose %a {permutation = array<i64: 1, 0>} : tensor<2x2xf32> -> tensor<2x2xf32>
  %s = nn.add %t, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %r = nn.reduce_sum %s {axes = array<i64: 0>, keepdims} : tensor<2x2xf32> -> tensor<1x2xf32>
  %bc = nn.broadcast %r : tensor<1x2xf32> -> tensor<2x2xf32>
  %h = nn.mul %bc, %bc : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %sq = nn.sqrt %h : tensor<2x2xf32>
  // transpose(a) + b = [[4, 7], [5, 8]]; column sums [9, 15]... halved below.
  %half = nn.constant dense<[0.444444448, 0.4]> : tensor<2xf32>
  %out = nn.mul %sq, %half : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %out : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @identities
func.func @identities(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: return %arg0
  %0 = nn.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = nn.transpose %0 {permutation = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = nn.cast %1 : tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = nn.broadcast %2 : tensor<2x3xf32> -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @chains
func.func @chains(%x: tensor<2x3x4xf16>) -> (tensor<4x2x3xf16>, tensor<24xf16>, tensor<2x3x4xf16>) {
  // CHECK-NEXT: %0 = nn.transpose %arg0 {permutation = array<i64: 2, 0, 1>} : tensor<2x3x4xf16> -> tensor<4x2x3xf16>
  %t1 = nn.transpose %x {permutation = array<i64: 1, 2, 0>} : tensor<2x3x4xf16> -> tensor<3x4x2xf16>
  %t2 = nn.transpose %t1 {permutation = array<i64: 1, 2, 0>} : tensor<3x4x2xf16> -> tensor<4x2x3xf16>
  // CHECK-NEXT: %1 = nn.reshape %arg0 : tensor<2x3x4xf16> -> tensor<24xf16>
  %r1 = nn.reshape %x : tensor<2x3x4xf16> -> tensor<6x4xf16>
  %r2 = nn.reshape %r1 : tensor<6x4xf16> -> tensor<24xf16>
  // f16 -> f32 -> f16 loses nothing: the casts disappear.
  %c1 = nn.cast %x : tensor<2x3x4xf16> -> tensor<2x3x4xf32>
  %c2 = nn.cast %c1 : tensor<2x3x4xf32> -> tensor<2x3x4xf16>
  // CHECK-NEXT: return %0, %1, %arg0
  return %t2, %r2, %c2 : tensor<4x2x3xf16>, tensor<24xf16>, tensor<2x3x4xf16>
}

// CHECK-LABEL: func.func @lossy_chain_kept
func.func @lossy_chain_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  // f32 -> f16 -> f32 rounds: both casts stay.
  // CHECK-NEXT: nn.cast %arg0 : tensor<4xf32> -> tensor<4xf16>
  // CHECK-NEXT: nn.cast
  %c1 = nn.cast %x : tensor<4xf32> -> tensor<4xf16>
  %c2 = nn.cast %c1 : tensor<4xf16> -> tensor<4xf32>
  return %c2 : tensor<4xf32>
}
