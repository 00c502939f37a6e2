// exchange -> machine for quantized arithmetic (test16): the integer
// matmul of u8 codes by an i8 weight is an f32 GEMM linked beside the
// elementwise, compare and select kernels that quantize (no intew, no
// cast kernel: no u8 or i8 element is on a tile; no abs, reciprocal, neg
// or less: the clamped rounding needs no guard), the i8 weight a load
// stream the host widens to f32 (`host_element = "i8"`). Lowered at 1 and
// 2 threads to the same bytes, and run on the device against the reference,
// with the weight from an RNG of fixed seed, exactly.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: env RAYON_NUM_THREADS=1 ipu-opt --target test16 --ipu-lower-to-machine %s -o %t/1.mlir
// RUN: env RAYON_NUM_THREADS=2 ipu-opt --target test16 --ipu-lower-to-machine %s -o %t/2.mlir
// RUN: cmp %t/1.mlir %t/2.mlir
// RUN: %python -c "import numpy as n; r = n.random.default_rng(3); n.save('%t/w.npy', r.integers(-128, 128, (16, 16)).astype(n.int8)); n.save('%t/x.npy', (r.standard_normal((4, 16)) * 4).astype(n.float32))"
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --input x=%t/x.npy --input w=%t/w.npy 2>/dev/null | FileCheck %s --check-prefix=DEV

// CHECK-NOT: intew
// CHECK-NOT: "cast"
// CHECK: machine.code {{{.*}}kernels = ["main", "cmp_eq_f32_n4", "ew_add_f32_n4", "ew_div_f32_n4", "ew_max_f32_n4", "ew_min_f32_n4", "ew_mul_f32_n16", "ew_sub_f32_n4", "gemm_f32_interleaved_k16_c16_r0_r1_m1", "select_f32_n4"]
// CHECK: machine.host_stream "x" {direction = "input", element = "f32"
// CHECK-NEXT: machine.host_stream "w" {direction = "load", element = "f32", host_element = "i8", {{.*}}shape = array<i64: 16, 16>}
// CHECK-NEXT: machine.host_stream "y" {direction = "output", element = "f32"

// DEV: tiles=16 cycles={{[0-9]+}}
// DEV-NEXT: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// DEV-NEXT: hardwareTest=PASS

func.func @main(%x: tensor<4x16xf32> {ipu.name = "x"}, %w: tensor<16x16xi8> {ipu.name = "w", ipu.weight}) -> (tensor<4x16xf32> {ipu.name = "y"}) {
  %s = nn.constant dense<0.05> : tensor<f32>
  %zp = nn.constant dense<128.0> : tensor<f32>
  %lo = nn.constant dense<0.0> : tensor<f32>
  %hi = nn.constant dense<255.0> : tensor<f32>
  %xs = nn.div %x, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %xr = nn.round %xs : tensor<4x16xf32>
  %xz = nn.add %xr, %zp : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %xc0 = nn.max %xz, %lo : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %xc = nn.min %xc0, %hi : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %q = nn.cast %xc {saturate} : tensor<4x16xf32> -> tensor<4x16xui8>
  %q32 = nn.cast %q {saturate} : tensor<4x16xui8> -> tensor<4x16xi32>
  %z = nn.constant dense<128> : tensor<i32>
  %a = nn.sub %q32, %z : (tensor<4x16xi32>, tensor<i32>) -> tensor<4x16xi32>
  %w32 = nn.cast %w {saturate} : tensor<16x16xi8> -> tensor<16x16xi32>
  %acc = nn.matmul %a, %w32 : (tensor<4x16xi32>, tensor<16x16xi32>) -> tensor<4x16xi32>
  %accf = nn.cast %acc {saturate} : tensor<4x16xi32> -> tensor<4x16xf32>
  %ws = nn.constant dense<0.0123> : tensor<f32>
  %y = nn.mul %accf, %ws : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
