// nn-fuse-gelu in the lowering pipeline: ipu-lower-to-tile (and so
// ipu-lower-to-machine and ipu-run) fuses written-out GELU before
// convert-nn-to-tile, one kernel call where there were eight; running the
// stages by hand without the pass keeps the written-out ops and their
// rounding at every step. On the device the fused program stays within
// tolerance of the reference of the written-out one.
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=FUSED
// RUN: ipu-opt --target test16 --pass-pipeline='builtin.module(canonicalize,convert-nn-to-tile)' %s | FileCheck %s --check-prefix=KEEP
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --check-ops 2>/dev/null | FileCheck %s --check-prefix=DEVICE

// FUSED: tile.map %{{[0-9]+}} {{{.*}}fn = #tile.fn<gelu_tanh>
// FUSED-NOT: tile.map
// FUSED: tile.host_output

// KEEP: fn = #tile.fn<pow>
// KEEP: fn = #tile.fn<tanh>
// KEEP-NOT: gelu
// KEEP: tile.host_output

// DEVICE: numericalTest=PASS
// DEVICE-NEXT: hardwareTest=PASS
// DEVICE: nn.tanh {{.*}}fuse-gelu-pipeline.mlir:[[@LINE+14]]:3 {{.*}} fused into a later op
// DEVICE: nn.mul {{.*}}fuse-gelu-pipeline.mlir:[[@LINE+16]]:3 {{.*}} ok
// DEVICE: checked 1 of 8 ops on the device's values (7 not stored, 7 of them fused into a later op)
// DEVICE: every checked op is within its tolerance
func.func @main(%x: tensor<16x48xf16> {ipu.name = "x", ipu.random = [-6.0, 6.0]}) -> (tensor<16x48xf16> {ipu.name = "y"}) {
  %c3 = nn.constant dense<3.0> : tensor<f16>
  %ck = nn.constant dense<0.044715> : tensor<f16>
  %cs = nn.constant dense<0.7978845608> : tensor<f16>
  %ch = nn.constant dense<0.5> : tensor<f16>
  %c1 = nn.constant dense<1.0> : tensor<f16>
  %x3 = nn.pow %x, %c3 : (tensor<16x48xf16>, tensor<f16>) -> tensor<16x48xf16>
  %x3s = nn.mul %x3, %ck : (tensor<16x48xf16>, tensor<f16>) -> tensor<16x48xf16>
  %in = nn.add %x, %x3s : (tensor<16x48xf16>, tensor<16x48xf16>) -> tensor<16x48xf16>
  %in2 = nn.mul %in, %cs : (tensor<16x48xf16>, tensor<f16>) -> tensor<16x48xf16>
  %t = nn.tanh %in2 : tensor<16x48xf16>
  %t1 = nn.add %t, %c1 : (tensor<16x48xf16>, tensor<f16>) -> tensor<16x48xf16>
  %hx = nn.mul %x, %ch : (tensor<16x48xf16>, tensor<f16>) -> tensor<16x48xf16>
  %g = nn.mul %hx, %t1 : (tensor<16x48xf16>, tensor<16x48xf16>) -> tensor<16x48xf16>
  return %g : tensor<16x48xf16>
}
