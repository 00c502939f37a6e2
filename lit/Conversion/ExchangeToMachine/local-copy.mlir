// Local operand copies run on the workers: the matmul's lhs is a transpose
// view (a transposed rhs would go to the GEMM's BT form instead, which reads
// B^T as it lies), and the part of it each tile already holds is a stepped
// group of 2-byte transfers (exchange.copy). The machine stage gives that
// group to the workers' lcopy kernel, 2 x 2 blocks at a time (T = 1), not
// one supervisor memcpy per element, and the exchange stage's estimate of
// the compute set uses lcopy's cycle formula. The rhs column block held by
// tiles 0 to 3 is read where it lies (@input1), with no copy at all.
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCH
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --output-dir %t 2>/dev/null | FileCheck %s --check-prefix=VERDICT

// EXCH: exchange.compute_set attributes {bound = 256 : i64, cycles = 871 : i64, label = "tile.matmul", sym_name = "s1"}
// EXCH-NEXT: exchange.copy {dst = @s1.operand0, runs = [array<i64: 16, 0, 2, 0, 128, 4, 0, 0, 0, 128, 2, 0, 2, 1, 1, 0, 0, 0, 0>, array<i64: 16, 0, 2, 0, 128, 4, 1, 0, 0, 128, 2, 0, 2, 1, 1, 1, 0, 8, 0>
// EXCH: record = [@s1.operand0, @input1, @s1.result, 0 : i64], scratch = 240 : i64, tiles = "0 to 3"

// The GEMM's records (its prologue, which reads no buffer) are made during
// x0 (both operands' phase); so are the local copies, which x0 does not
// disturb (it neither captures into their source nor sends from their
// destination): they run while the phase delivers the remote part, and s1
// is the GEMM alone.
// CHECK: machine.code {{.*}} kernels = ["main", "gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec", "lcopy_a2_t1"], program = ["x0: exch, lcopy_a2_t1.lcopy, gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec.gemm_amp_pre", "s1: gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec.gemm_amp"], tiles = "0 to 15"}
// CHECK-NOT: memcpy

// VERDICT: tiles=16 cycles=1837
// VERDICT: numericalTest=PASS
// VERDICT: hardwareTest=PASS

func.func @main(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %at = nn.transpose %a {permutation = array<i64: 1, 0>} : tensor<64x64xf16> -> tensor<64x64xf16>
  %c = nn.matmul %at, %b : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  return %c : tensor<64x64xf16>
}
