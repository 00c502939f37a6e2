// Matmul forms on the device: a batch of attention scores q x k^T (rank 4,
// k transposed by a view; the GEMM takes B transposed (its BT form, the AMP
// banks loaded column by column), so k's blocks are delivered as they lie:
// no transpose anywhere), and a batched lhs times shared
// weights (the rows of all batches times one weight matrix); plus f32 x f32
// on the AMP's f32 mode, with K chunked (256 per tile, 64 per AMP bank) over
// two 16-column blocks, so the K-chunks add up in the GEMM's accumulator T.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>/dev/null | FileCheck %s
// RUN: ipu-run %S/Inputs/matmul-f32.mlir --target test4 --device-lock %t/device.lock 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s --check-prefix=TILE
// RUN: ipu-opt --target test4 --convert-nn-to-tile %S/Inputs/matmul-f32.mlir | FileCheck %s --check-prefix=F32
// CHECK: tiles={{[0-9]+}} cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// Six products of [16x32] x [32x16], one group of tiles each; the
// matmul reads k itself (rhs_transposed, the `_bt` kernel): the transpose
// view is gone.
// TILE-NOT: kind = "transpose"
// TILE: tile.view %{{.*}} {kind = "reshape"{{.*}} -> tensor<6x16x32xf16>
// TILE: tile.view %{{.*}} {kind = "reshape"{{.*}} -> tensor<6x16x32xf16>
// TILE: tile.matmul {{.*}}kernel = "gemm_f16_interleaved_k32_c16_r1_r2_m8_bt"{{.*}}plan = array<i64: 6, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>, rhs_transposed{{.*}} : (tensor<6x16x32xf16>, tensor<6x16x32xf16>) -> tensor<6x16x16xf16>
// TILE: tile.view %{{.*}} {kind = "reshape"{{.*}} -> tensor<2x3x16x16xf16>
// The rows of both batches against the shared weights: one 2-D product.
// TILE: tile.matmul {{.*}} : (tensor<32x64xf16>, tensor<64x32xf16>) -> tensor<32x32xf16>
// F32: tile.matmul {{.*}}kernel = "gemm_f32_interleaved_k256_kc64_c32_r2_r3_m16"
func.func @main(%q: tensor<2x3x16x32xf16> {ipu.name = "q"}, %k: tensor<2x3x16x32xf16> {ipu.name = "k"}, %x: tensor<2x16x64xf16> {ipu.name = "x"}, %w: tensor<64x32xf16> {ipu.name = "w"}) -> (tensor<2x3x16x16xf16> {ipu.name = "s"}, tensor<2x16x32xf16> {ipu.name = "y"}) {
  %kt = nn.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : tensor<2x3x16x32xf16> -> tensor<2x3x32x16xf16>
  %s = nn.matmul %q, %kt : (tensor<2x3x16x32xf16>, tensor<2x3x32x16xf16>) -> tensor<2x3x16x16xf16>
  %y = nn.matmul %x, %w : (tensor<2x16x64xf16>, tensor<64x32xf16>) -> tensor<2x16x32xf16>
  return %s, %y : tensor<2x3x16x16xf16>, tensor<2x16x32xf16>
}
