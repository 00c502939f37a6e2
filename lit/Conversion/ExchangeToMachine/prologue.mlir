// A GEMM whose weights are loaded with the program has its prologue (the
// workers' records and the first weight block into the AMP's bank) split
// off (PRE = 1) when the exchange before its superstep takes at least as
// long: the code generator runs the prologue right after that phase's
// `exch`, while the phase delivers the activations, and the call itself
// starts at its workers. The second matmul's weights arrive by exchange, so
// only its workers' records (which read no buffer: PRE = 2, `_prerec`) are
// made ahead; its first weight block stays in the call. The local operand
// copies (lcopy; the first matmul's lhs streams in spread over the tiles, a
// quarter of each tile's block on the tile itself) run during x0 and x1
// (the second matmul's two operands in one phase) too, before the
// prologues.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s -o %t/x.mlir
// RUN: FileCheck %s --check-prefix=EXCHANGE < %t/x.mlir
// RUN: ipu-opt --convert-exchange-to-machine %t/x.mlir | FileCheck %s
// RUN: ipu-run --target test16 %s --device-lock %t/device.lock 2>/dev/null | FileCheck %s --check-prefix=DEVICE
// A call that another call of its kernel source precedes in its superstep
// (here one added by hand to the exchange stage) runs its prologue just
// before itself: the other call would replace the AMP's weights.
// RUN: sed '/name = "gemm_f16_interleaved_k128_c16_r2_r3_m16_pre"/i exchange.vertex {kernel = "gemm_amp", name = "gemm_f16_interleaved_k128_c16_r2_r3_m16", params = {K = 128 : i64, M = 16 : i64, N = 16 : i64, TYPE = 1 : i64}, record = [@s1.operand0, @s1.operand1, @s1.result, 0 : i64], scratch = 240 : i64, tiles = "1 to 15"}' %t/x.mlir \
// RUN:   | ipu-opt --convert-exchange-to-machine | FileCheck %s --check-prefix=INLINE

// EXCHANGE: exchange.compute_set attributes {{{.*}}sym_name = "s1"}
// EXCHANGE-NEXT: exchange.copy {dst = @s1.operand0, {{.*}}src = @input0}
// EXCHANGE-NEXT: exchange.vertex {kernel = "gemm_amp", name = "gemm_f16_interleaved_k128_c16_r2_r3_m16_pre", params = {K = 128 : i64, M = 16 : i64, N = 16 : i64, PRE = 1 : i64, TYPE = 1 : i64}
// EXCHANGE: exchange.compute_set attributes {{{.*}}sym_name = "s2"}
// EXCHANGE-NOT: PRE = 1
// EXCHANGE: name = "gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec", params = {K = 64 : i64, M = 16 : i64, N = 16 : i64, PRE = 2 : i64, TYPE = 1 : i64}
// EXCHANGE-NOT: PRE = 1
// EXCHANGE: exchange.sync

// CHECK: program = ["x0: exch, lcopy_a8.lcopy, gemm_f16_interleaved_k128_c16_r2_r3_m16_pre.gemm_amp_pre", "s1: gemm_f16_interleaved_k128_c16_r2_r3_m16_pre.gemm_amp", "x1: exch, lcopy_a8.lcopy, gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec.gemm_amp_pre", "s2: gemm_f16_interleaved_k64_c16_r2_r3_m16_prerec.gemm_amp"]

// DEVICE: tiles=16 cycles={{[0-9]+}}
// DEVICE-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// DEVICE-NEXT: hardwareTest=PASS

// Tiles 1 to 15 call the unsplit kernel first, then the prologue and the
// split one; tile 0 still runs its prologue in x0.
// INLINE-DAG: program = ["x0: exch, lcopy_a8.lcopy", "s1: gemm_f16_interleaved_k128_c16_r2_r3_m16.gemm_amp, gemm_f16_interleaved_k128_c16_r2_r3_m16_pre.gemm_amp_pre, gemm_f16_interleaved_k128_c16_r2_r3_m16_pre.gemm_amp",
// INLINE-DAG: program = ["x0: exch, lcopy_a8.lcopy, gemm_f16_interleaved_k128_c16_r2_r3_m16_pre.gemm_amp_pre", "s1: gemm_f16_interleaved_k128_c16_r2_r3_m16_pre.gemm_amp",
func.func @main(%x: tensor<64x128xf16> {ipu.name = "x"}, %w: tensor<128x64xf16> {ipu.name = "w", ipu.weight}, %v: tensor<64x64xf16> {ipu.name = "v"}) -> (tensor<64x64xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w : (tensor<64x128xf16>, tensor<128x64xf16>) -> tensor<64x64xf16>
  %g = nn.matmul %h, %v : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  return %g : tensor<64x64xf16>
}
