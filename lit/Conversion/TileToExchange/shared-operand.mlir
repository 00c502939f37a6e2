// Two ops reading the same value in the same blocks and layout share one
// delivery: q and k (the same plan over x's rows) read the buffer the
// exchange filled for q (@s2.operand0), so k needs no exchange of its own,
// and with nothing to exchange its GEMM joins q's compute set. v (N = 32,
// another plan) wants other blocks: x is exchanged again for it.
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run --target test16 %s --device-lock %t/device.lock 2>/dev/null | FileCheck %s --check-prefix=DEVICE

// CHECK: exchange.phase attributes {{.*}}moves = "operand #0 of s2 tile.matmul"
// CHECK-NOT: exchange.phase
// CHECK: exchange.compute_set attributes {{.*}}label = "tile.matmul, tile.matmul", sym_name = "s2"}
// CHECK-NEXT: exchange.copy {dst = @s2.operand0, {{.*}}src = @s1.result}
// CHECK-NEXT: exchange.vertex {kernel = "gemm_amp", {{.*}}record = [@s2.operand0, @s2.operand1, @s2.result, 0 : i64]
// CHECK-NEXT: exchange.vertex {kernel = "gemm_amp", {{.*}}record = [@s2.operand0, @s3.operand1, @s3.result, 0 : i64]
// CHECK-NOT: operand #0 of s3
// CHECK: exchange.phase attributes {{.*}}moves = "operand #0 of s4 tile.matmul"
// CHECK: exchange.vertex {kernel = "gemm_amp", {{.*}}record = [@s4.operand0, @s4.operand1, @s4.result, 0 : i64]

// DEVICE: tiles=16 cycles={{[0-9]+}}
// DEVICE-NEXT: numericalTest=PASS
// DEVICE-NEXT: hardwareTest=PASS
func.func @main(%x: tensor<16x64xf16> {ipu.name = "x"}, %wq: tensor<64x64xf16> {ipu.name = "wq", ipu.weight}, %wk: tensor<64x64xf16> {ipu.name = "wk", ipu.weight}, %wv: tensor<64x32xf16> {ipu.name = "wv", ipu.weight}) -> (tensor<16x64xf16> {ipu.name = "q"}, tensor<16x64xf16> {ipu.name = "k"}, tensor<16x32xf16> {ipu.name = "v"}) {
  %xr = nn.relu %x : tensor<16x64xf16>
  %q = nn.matmul %xr, %wq : (tensor<16x64xf16>, tensor<64x64xf16>) -> tensor<16x64xf16>
  %k = nn.matmul %xr, %wk : (tensor<16x64xf16>, tensor<64x64xf16>) -> tensor<16x64xf16>
  %v = nn.matmul %xr, %wv : (tensor<16x64xf16>, tensor<64x32xf16>) -> tensor<16x32xf16>
  return %q, %k, %v : tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x32xf16>
}
