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

// An FP8 value carries the scale its producer gave it; a cast to the same
// FP8 type re-encodes it at the cast's scale (0 here), so neither the
// same-type cast nor the round trip through f16 is an identity (found by the
// differential fuzz target: the device returned the input's encoding).
// CHECK-LABEL: func.func @fp8_rescale_kept
func.func @fp8_rescale_kept(%x: tensor<4xf32>) -> (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) {
  // CHECK-NEXT: %0 = nn.cast %arg0 {saturate, scale = 1 : i64} : tensor<4xf32> -> tensor<4xf8E4M3FN>
  // CHECK-NEXT: %1 = nn.cast %0 {saturate} : tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>
  // CHECK-NEXT: %2 = nn.cast %0 : tensor<4xf8E4M3FN> -> tensor<4xf16>
  // CHECK-NEXT: %3 = nn.cast %2 {saturate} : tensor<4xf16> -> tensor<4xf8E4M3FN>
  // CHECK-NEXT: return %1, %3
  %q = nn.cast %x {saturate, scale = 1} : tensor<4xf32> -> tensor<4xf8E4M3FN>
  %r = nn.cast %q {saturate} : tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>
  %h = nn.cast %q : tensor<4xf8E4M3FN> -> tensor<4xf16>
  %s = nn.cast %h {saturate} : tensor<4xf16> -> tensor<4xf8E4M3FN>
  return %r, %s : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>
}

// A cast that does not widen moves before the layout views it alone reads
// (the view then moves the narrower elements), keeping its attributes and
// each op its location.
// RUN: ipu-opt --canonicalize --mlir-print-debuginfo %s | FileCheck %s --check-prefix=LOC
// CHECK-LABEL: func.func @cast_before_views
func.func @cast_before_views(%x: tensor<4x2x8xf16>) -> (tensor<2x32xf8E4M3FN>, tensor<2x32xf32>, tensor<8x4x2xbf16>, tensor<2x4x8xf16>, tensor<2x4x8xbf16>) {
  // CHECK-NEXT: %0 = nn.cast %arg0 {saturate, scale = -4 : i64} : tensor<4x2x8xf16> -> tensor<4x2x8xf8E4M3FN>
  // CHECK-NEXT: %1 = nn.transpose %0 {permutation = array<i64: 1, 0, 2>} : tensor<4x2x8xf8E4M3FN> -> tensor<2x4x8xf8E4M3FN>
  // CHECK-NEXT: %2 = nn.reshape %1 : tensor<2x4x8xf8E4M3FN> -> tensor<2x32xf8E4M3FN>
  // LOC: nn.cast %arg0 {saturate, scale = -4 : i64} : tensor<4x2x8xf16> -> tensor<4x2x8xf8E4M3FN> loc("cbv.mlir":3:1)
  // LOC-NEXT: nn.transpose %0 {{.*}} loc("cbv.mlir":1:1)
  // LOC-NEXT: nn.reshape %1 {{.*}} loc("cbv.mlir":2:1)
  %t = nn.transpose %x {permutation = array<i64: 1, 0, 2>} : tensor<4x2x8xf16> -> tensor<2x4x8xf16> loc("cbv.mlir":1:1)
  %r = nn.reshape %t : tensor<2x4x8xf16> -> tensor<2x32xf16> loc("cbv.mlir":2:1)
  %c = nn.cast %r {saturate, scale = -4} : tensor<2x32xf16> -> tensor<2x32xf8E4M3FN> loc("cbv.mlir":3:1)
  // A widening cast stays after the view.
  // CHECK-NEXT: %3 = nn.transpose %arg0 {permutation = array<i64: 1, 0, 2>}
  // CHECK-NEXT: %4 = nn.reshape %3 : tensor<2x4x8xf16> -> tensor<2x32xf16>
  // CHECK-NEXT: %5 = nn.cast %4 : tensor<2x32xf16> -> tensor<2x32xf32>
  %t2 = nn.transpose %x {permutation = array<i64: 1, 0, 2>} : tensor<4x2x8xf16> -> tensor<2x4x8xf16>
  %r2 = nn.reshape %t2 : tensor<2x4x8xf16> -> tensor<2x32xf16>
  %w = nn.cast %r2 : tensor<2x32xf16> -> tensor<2x32xf32>
  // A same-width cast moves too; a view something else reads stays.
  // CHECK-NEXT: %6 = nn.cast %arg0 : tensor<4x2x8xf16> -> tensor<4x2x8xbf16>
  // CHECK-NEXT: %7 = nn.transpose %6 {permutation = array<i64: 2, 0, 1>} : tensor<4x2x8xbf16> -> tensor<8x4x2xbf16>
  // CHECK-NEXT: %8 = nn.transpose %arg0 {permutation = array<i64: 1, 0, 2>} : tensor<4x2x8xf16> -> tensor<2x4x8xf16>
  // CHECK-NEXT: %9 = nn.cast %8 : tensor<2x4x8xf16> -> tensor<2x4x8xbf16>
  %t3 = nn.transpose %x {permutation = array<i64: 2, 0, 1>} : tensor<4x2x8xf16> -> tensor<8x4x2xf16>
  %b = nn.cast %t3 : tensor<8x4x2xf16> -> tensor<8x4x2xbf16>
  %t4 = nn.transpose %x {permutation = array<i64: 1, 0, 2>} : tensor<4x2x8xf16> -> tensor<2x4x8xf16>
  %b2 = nn.cast %t4 : tensor<2x4x8xf16> -> tensor<2x4x8xbf16>
  // CHECK-NEXT: return %2, %5, %7, %8, %9
  return %c, %w, %b, %t4, %b2 : tensor<2x32xf8E4M3FN>, tensor<2x32xf32>, tensor<8x4x2xbf16>, tensor<2x4x8xf16>, tensor<2x4x8xbf16>
}
