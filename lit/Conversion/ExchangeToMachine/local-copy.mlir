// Local operand copies run on the workers: the matmul's rhs is a transpose
// view, and the part of it each diagonal tile already holds is a stepped
// group of 2-byte transfers (exchange.copy). The machine stage gives that
// group to the workers' lcopy kernel, 2 x 2 blocks at a time (T = 1), not
// one supervisor memcpy per element, and the exchange stage's estimate of
// the compute set uses lcopy's cycle formula. The lhs streams in with its
// rows spread over all 16 tiles: the quarter of its block each tile holds
// is a local copy of 8-byte words (lcopy_a8).
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCH
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --output-dir %t 2>/dev/null | FileCheck %s --check-prefix=VERDICT

// EXCH: exchange.compute_set attributes {bound = 256 : i64, cycles = 1846 : i64, label = "tile.matmul", sym_name = "s1"}
// EXCH-NEXT: exchange.copy {dst = @s1.operand0, runs = [array<i64: 4, 4, 0, 4, 0, 4, 0, 1, 0, 0, 512, 1, 512, 1, 1, 0, 0, 0, 0>], src = @input0}
// EXCH-NEXT: exchange.copy {dst = @s1.operand1, runs = [array<i64: 64, 0, 2, 0, 32, 4, 0, 0, 0, 128, 2, 0, 2, 1, 1, 0, 0, 0, 0>

// The GEMM's records (its prologue, which reads no buffer) are made during
// x1; so are the local copies, which x1 does not disturb (it neither
// captures into their source nor sends from their destination): they run
// while the phase delivers the remote part, and s1 is the GEMM alone.
// CHECK: machine.code {{.*}} kernels = ["main", "gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec", "lcopy_a8"], program = ["x0: exch", "x1: exch, lcopy_a8.lcopy, gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec.gemm_amp_pre", "s1: gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec.gemm_amp"], tiles = "1 to 4, 6 to 9, 11 to 14"}
// CHECK: machine.code {{.*}} kernels = ["main", "gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec", "lcopy_a2_t1", "lcopy_a8"], program = ["x0: exch", "x1: exch, lcopy_a8.lcopy, lcopy_a2_t1.lcopy, gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec.gemm_amp_pre", "s1: gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec.gemm_amp"], tiles = "0 to 15 step 5"}
// CHECK-NOT: memcpy

// VERDICT: tiles=16 cycles=2673
// VERDICT: numericalTest=PASS
// VERDICT: hardwareTest=PASS

func.func @main(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %bt = nn.transpose %b {permutation = array<i64: 1, 0>} : tensor<64x64xf16> -> tensor<64x64xf16>
  %c = nn.matmul %a, %bt : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  return %c : tensor<64x64xf16>
}
