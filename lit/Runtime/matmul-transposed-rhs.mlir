// A matmul whose rhs is a transpose view (x w^T, w stored [N, K]). Where
// the plan's K block fits one AMP bank load (test16: K cut over tiles, 64
// a tile), the GEMM takes w as it lies, its BT form (`rhs_transposed`, the
// `_bt` kernel, the banks loaded column by column); where it needs
// K-chunks (test4: 256 a tile, chunks of 128), the BT form cannot take it
// and w's transpose is delivered by the exchange as before. Both run and
// match the reference.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=BT
// RUN: ipu-opt --target test4 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=CHUNKED
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --output-dir %t 2>/dev/null | FileCheck %s
// RUN: ipu-run %s --target test4 --device-lock %t/device.lock --output-dir %t 2>/dev/null | FileCheck %s
// BT-NOT: kind = "transpose"
// BT: tile.matmul {{.*}}kernel = "gemm_f16_interleaved_k64_c16_r2_r3_m16_bt"{{.*}}, rhs_transposed, {{.*}} : (tensor<16x512xf16>, tensor<32x512xf16>) -> tensor<16x32xf16>
// CHUNKED: tile.view %{{.*}} {kind = "transpose"
// CHUNKED-NOT: rhs_transposed
// CHUNKED: tile.matmul {{.*}}kernel = "gemm_f16_interleaved_k256_kc128_c16_r2_r3_m16"{{.*}} : (tensor<16x512xf16>, tensor<512x32xf16>) -> tensor<16x32xf16>
// CHUNKED-NOT: rhs_transposed
// CHECK: numericalTest=PASS
// CHECK: hardwareTest=PASS
func.func @main(%x: tensor<16x512xf16> {ipu.name = "x"}, %w: tensor<32x512xf16> {ipu.name = "w"}) -> (tensor<16x32xf16> {ipu.name = "y"}) {
  %wt = nn.transpose %w {permutation = array<i64: 1, 0>} : tensor<32x512xf16> -> tensor<512x32xf16>
  %y = nn.matmul %x, %wt : (tensor<16x512xf16>, tensor<512x32xf16>) -> tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}
