// A layer called twice (outlined: lowered once, each call with its own
// parameters) runs on the 16-tile test target and matches the reference.
// The machine stage expands each call; the callee's probes are keyed at
// each call (`op location at call location`), so --check-ops checks every
// op of every call on the device's values, and the FP8 casts of computed
// values in the callee anchor the verdict once per call.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --check-ops 2>%t/err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t/err

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK: numericalTest=PASS
// CHECK: hardwareTest=PASS
// CHECK: nn.matmul  {{.*}}call-test16.mlir:27:3 at {{.*}}call-test16.mlir:39:3 {{.*}} ok
// CHECK-NEXT: nn.add {{.*}} ok
// CHECK-NEXT: nn.cast {{.*}}tensor<8x64xf8E4M3FN> {{.*}} ok
// CHECK-NEXT: nn.cast {{.*}} ok
// CHECK-NEXT: nn.matmul  {{.*}}call-test16.mlir:27:3 at {{.*}}call-test16.mlir:40:3 {{.*}} ok
// CHECK-NEXT: nn.add {{.*}} ok
// CHECK-NEXT: nn.cast {{.*}}tensor<8x64xf8E4M3FN> {{.*}} ok
// CHECK-NEXT: nn.cast {{.*}} ok
// CHECK: checked 8 of 8 ops on the device's values
// CHECK: every checked op is within its tolerance
// ERR: FP8 casts of computed values anchored to the device's values anchored=2 of=2

func.func private @layer(%x: tensor<8x64xf16> {ipu.name = "x"}, %w: tensor<64x64xf8E4M3FN> {ipu.name = "w", ipu.weight}, %b: tensor<64xf16> {ipu.name = "b", ipu.weight}) -> (tensor<8x64xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w : (tensor<8x64xf16>, tensor<64x64xf8E4M3FN>) -> tensor<8x64xf16>
  %hb = nn.add %h, %b : (tensor<8x64xf16>, tensor<64xf16>) -> tensor<8x64xf16>
  %g8 = nn.cast %hb {saturate, scale = -2} : tensor<8x64xf16> -> tensor<8x64xf8E4M3FN>
  %y = nn.cast %g8 : tensor<8x64xf8E4M3FN> -> tensor<8x64xf16>
  return %y : tensor<8x64xf16>
}
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"},
    %w1: tensor<64x64xf8E4M3FN> {ipu.name = "w1", ipu.weight, ipu.random = [-0.2, 0.2]},
    %b1: tensor<64xf16> {ipu.name = "b1", ipu.weight},
    %w2: tensor<64x64xf8E4M3FN> {ipu.name = "w2", ipu.weight, ipu.random = [-0.2, 0.2]},
    %b2: tensor<64xf16> {ipu.name = "b2", ipu.weight})
    -> (tensor<8x64xf16> {ipu.name = "y"}) {
  %y1 = func.call @layer(%x, %w1, %b1) : (tensor<8x64xf16>, tensor<64x64xf8E4M3FN>, tensor<64xf16>) -> tensor<8x64xf16>
  %y2 = func.call @layer(%y1, %w2, %b2) : (tensor<8x64xf16>, tensor<64x64xf8E4M3FN>, tensor<64xf16>) -> tensor<8x64xf16>
  return %y2 : tensor<8x64xf16>
}
