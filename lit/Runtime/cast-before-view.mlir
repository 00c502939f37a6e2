// A narrowing cast after layout views of a matmul's result is moved before
// them (canonicalize's cast-before-view): the cast follows the matmul's
// layout, and the next matmul's exchange reads it through the views, one f8
// byte an element instead of f16 and no exchange of the cast's own.
// --check-ops still checks the cast, exactly, on the device's input: its
// probe, at the views' input shape, is read through the same views.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE
// RUN: ipu-run --target test16 %s --check-ops --device-lock %t/device.lock 2>/dev/null | FileCheck %s

// TILE: tile.map %{{[0-9]+}} {{{.*}}fn = #tile.fn<cast>, {{.*}}scale = -2 : i64} : (tensor<2x16x32xf16>) -> tensor<2x16x32xf8E4M3FN>
// TILE-NEXT: tile.view %{{[0-9]+}} {kind = "transpose", {{.*}} -> tensor<16x2x32xf8E4M3FN>
// TILE-NEXT: tile.view %{{[0-9]+}} {kind = "reshape", {{.*}} -> tensor<16x64xf8E4M3FN>

// CHECK: numericalTest=PASS
// CHECK: hardwareTest=PASS
// CHECK: 4  nn.cast {{.*}}tensor<16x64xf8E4M3FN> {{.*}} ok  saturated=0 underflowedToZero=0
// CHECK-NEXT: 5  nn.matmul {{.*}} ok
// CHECK: checked 2 of 5 ops on the device's values (3 not stored)
// CHECK: every checked op is within its tolerance
func.func @main(%x: tensor<2x16x32xf16> {ipu.name = "x"}, %w: tensor<32x32xf16> {ipu.name = "w", ipu.weight}, %w2: tensor<64x32xf8E4M3FN> {ipu.name = "w2", ipu.weight}) -> (tensor<16x32xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w : (tensor<2x16x32xf16>, tensor<32x32xf16>) -> tensor<2x16x32xf16>
  %t = nn.transpose %h {permutation = array<i64: 1, 0, 2>} : tensor<2x16x32xf16> -> tensor<16x2x32xf16>
  %r = nn.reshape %t : tensor<16x2x32xf16> -> tensor<16x64xf16>
  %c = nn.cast %r {saturate, scale = -2} : tensor<16x64xf16> -> tensor<16x64xf8E4M3FN>
  %y = nn.matmul %c, %w2 : (tensor<16x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>) -> tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}
