// tile -> exchange on the 16-tile test target: the function becomes the
// bulk-synchronous program. Every value's blocks get a buffer; buffers an
// exchange phase fills for a compute set record the byte ranges it reads.
// Each phase's transfers are derived from the mappings, scheduled and
// verified (its horizon, endpoint lower bound, gap, kind, row size and
// transfer patterns are pinned here) and printed as runs; each compute set
// is its per-tile kernel calls with their state records, tiles making the
// same calls sharing a vertex; every superstep ends with a sync.
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null

// The lhs rows go from the two tiles holding them to the matmul's 16 tiles
// (multicast): tile 0 reads its own block in place.
// The bias is broadcast along the rows: 16-byte slices to the tiles of each
// column block; tile 0 copies its own slice (exchange.copy). The k = 0
// tiles' GEMMs write the result buffer, and the k = 1 partials are added
// into it (no copy). The GEMMs' records are made during x0 (PRE = 2: a
// prologue that reads no buffer, which the phase's lower bound covers).
// CHECK: attributes {exchange.compute_cycles = 1066 : i64, exchange.estimated_cycles = 2397 : i64, exchange.exchange_cycles = 791 : i64, exchange.steps = 6 : i64}
// CHECK: exchange.buffer {bytes = 512 : i64, interleaved, sym_name = "input0", tiles = "0 to 1"}
// CHECK-NEXT: exchange.buffer {bytes = 512 : i64, sym_name = "input1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, sym_name = "input2", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 512 : i64, interleaved, reads = [{ranges = array<i64: 1, 512, 512>, tiles = "1 to 15"}], sym_name = "s1.operand0", tiles = "1 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 256 : i64, interleaved, sym_name = "s1.result", tiles = "0 to 7"}
// CHECK-NEXT: exchange.buffer {bytes = 1088 : i64, interleaved, sym_name = "s1.rhs_f16", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 256 : i64, interleaved, sym_name = "s1.partials", tiles = "8 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 256 : i64, interleaved, sym_name = "s1.partials_in", tiles = "0 to 7"}
// CHECK-NEXT: exchange.buffer {bytes = 32 : i64, interleaved, reads = [{ranges = array<i64: 1, 32, 32>, tiles = "0 to 7"}], sym_name = "s2.operand1", tiles = "0 to 7"}
// CHECK-NEXT: exchange.buffer {bytes = 256 : i64, sym_name = "s2.result", tiles = "0 to 7"}
// CHECK-NEXT: exchange.buffer {bytes = 256 : i64, sym_name = "s3.result", tiles = "0 to 7"}
// CHECK-NEXT: exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}} : tensor<8x64xf16>
// CHECK-NEXT: exchange.host_input %arg1 {buffer = @input1, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : tensor<64x128xf8E4M3FN>
// CHECK-NEXT: exchange.host_input %arg2 {buffer = @input2, mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}} : tensor<128xf16>
// CHECK-NEXT: exchange.phase attributes {bytes = 7680 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 0 -> tiles 1..7, 512 B", "tile 1 -> tiles 8..15, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} {
// CHECK-NEXT: exchange.move {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 512, 0, 0, 1, 7, 1, 1, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 512, 0, 0, 1, 8, 8, 1, 0, 0>], src = @input0}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 64 : i64, cycles = 542 : i64, label = "tile.matmul", sym_name = "s1"} {
// CHECK-NEXT: exchange.vertex {kernel = "cast", name = "cast_f8e4m3fn_f16_n512", params = {FROM = 3 : i64, N = 512 : i64, TO = 1 : i64}, record = [@input1, @s1.rhs_f16, 11 : i64, 0 : i64, 0 : i64, [@input1, 88 : i64], [@s1.rhs_f16, 176 : i64], 11 : i64, 0 : i64, 0 : i64, [@input1, 176 : i64], [@s1.rhs_f16, 352 : i64], 11 : i64, 0 : i64, 0 : i64, [@input1, 264 : i64], [@s1.rhs_f16, 528 : i64], 11 : i64, 0 : i64, 0 : i64, [@input1, 352 : i64], [@s1.rhs_f16, 704 : i64], 10 : i64, 0 : i64, 0 : i64, [@input1, 432 : i64], [@s1.rhs_f16, 864 : i64], 10 : i64, 0 : i64, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "gemm_amp", name = "gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec", params = {K = 32 : i64, M = 8 : i64, N = 16 : i64, PRE = 2 : i64, TYPE = 1 : i64}, record = [@s1.operand0, @s1.rhs_f16, @s1.partials, 0 : i64], scratch = 192 : i64, tiles = "8 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "gemm_amp", name = "gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec", params = {K = 32 : i64, M = 8 : i64, N = 16 : i64, PRE = 2 : i64, TYPE = 1 : i64}, record = [@s1.operand0, @s1.rhs_f16, @s1.result, 0 : i64], scratch = 192 : i64, tiles = "1 to 7"}
// CHECK-NEXT: exchange.vertex {kernel = "gemm_amp", name = "gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec", params = {K = 32 : i64, M = 8 : i64, N = 16 : i64, PRE = 2 : i64, TYPE = 1 : i64}, record = [@input0, @s1.rhs_f16, @s1.result, 0 : i64], scratch = 192 : i64, tiles = "0"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.phase attributes {bytes = 2048 : i64, gap = 7 : i64, horizon = 71 : i64, initial_horizon = 71 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 64 : i64, moves = "partial sums of s1 tile.matmul", patterns = ["tiles 8..15 -> -8, 256 B each (8 transfers)"], row_words = 6 : i64, sym_name = "x1", transfers = 8 : i64} {
// CHECK-NEXT: exchange.move {dst = @s1.partials_in, runs = [array<i64: 1, 0, 0, 0, 0, 8, 8, 1, 0, 0, 256, 1, 0, 1, 1, 0, 0, 0, 0>], src = @s1.partials}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 0 : i64, cycles = 156 : i64, label = "tile.matmul reduction", sym_name = "s1.reduce"} {
// CHECK-NEXT: exchange.vertex {kernel = "partials", name = "partials_add_f16_p1_n128", params = {N = 128 : i64, P = 1 : i64, TYPE = 1 : i64}, record = [@s1.result, @s1.partials_in, @s1.result], tiles = "0 to 7"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// The reduction completes the matmul: a probe names where its result can be
// read after that sync, for `ipu-run --check-ops`.
// CHECK-NEXT: exchange.probe {after = @s1.reduce, buffer = @s1.result, mapping = {grid = array<i64: 1, 8>, tiles = array<i64: 0, 1>}, op = "tile.matmul", source = "{{[0-9]+}}:3", type = tensor<8x128xf16>}
// CHECK-NEXT: exchange.phase attributes {bytes = 240 : i64, gap = 7 : i64, horizon = 15 : i64, initial_horizon = 15 : i64, kind = "compact-streams", local_bytes = 16 : i64, lower_bound = 8 : i64, moves = "operand #1 of s2 tile.map", patterns = ["tiles 1..2 -> -1, 16 B each (2 transfers)", "tiles 3..4 -> -2, 16 B each (2 transfers)", "tiles 5..6 -> -3, 16 B each (2 transfers)", "tiles 7..8 -> -4, 16 B each (2 transfers)", "tiles 9..10 -> -5, 16 B each (2 transfers)", "tiles 11..12 -> -6, 16 B each (2 transfers)", "tiles 13..14 -> -7, 16 B each (2 transfers)", "tile 15 -> tile 7, 16 B"], row_words = 11 : i64, sym_name = "x2", transfers = 15 : i64} {
// CHECK-NEXT: exchange.move {dst = @s2.operand1, runs = [array<i64: 7, 2, 0, 1, 0, 2, 1, 1, 0, 0, 16, 1, -16, 1, 1, 0, 0, 16, 0>, array<i64: 1, 0, 0, 0, 0, 1, 15, 0, 0, 0, 16, 0, 0, 1, 1, 7, 0, 16, 0>], src = @input2}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 32 : i64, cycles = 368 : i64, label = "tile.map add, tile.map gelu", sym_name = "s2"} {
// CHECK-NEXT: exchange.copy {dst = @s2.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 0, 0, 0, 0>], src = @input2}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_add_row_vector_f16_r8_c16", params = {C = 16 : i64, OP = 6 : i64, R = 8 : i64, TYPE = 1 : i64}, record = [@s1.result, 0 : i64, @s2.operand1, 0 : i64, @s2.result], tiles = "0 to 7"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_gelu_f16_n128", params = {N = 128 : i64, OP = 17 : i64, TYPE = 1 : i64}, record = [@s2.result, 0 : i64, @s3.result, 6 : i64, [@s2.result, 48 : i64], 0 : i64, [@s3.result, 48 : i64], 6 : i64, [@s2.result, 96 : i64], 0 : i64, [@s3.result, 96 : i64], 5 : i64, [@s2.result, 136 : i64], 0 : i64, [@s3.result, 136 : i64], 5 : i64, [@s2.result, 176 : i64], 0 : i64, [@s3.result, 176 : i64], 5 : i64, [@s2.result, 216 : i64], 0 : i64, [@s3.result, 216 : i64], 5 : i64], tiles = "0 to 7"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s2, buffer = @s2.result, {{.*}} op = "tile.map", source = "{{[0-9]+}}:3", type = tensor<8x128xf16>}
// CHECK-NEXT: exchange.probe {after = @s2, buffer = @s3.result, {{.*}} op = "tile.map", source = "{{[0-9]+}}:3", type = tensor<8x128xf16>}
// CHECK-NEXT: %0 = exchange.host_output {buffer = @s3.result, mapping = {grid = array<i64: 1, 8>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<8x128xf16>
// CHECK-NEXT: return %0 : tensor<8x128xf16>

// STATS: ConvertTileToExchange
// STATS-NEXT: (S) 3 phases - Exchange phases scheduled
// STATS-NEXT: (S) 25 transfers - Transfers scheduled
// STATS-NEXT: (S) 221 horizon-sum - Sum of phase horizons (cycles)
// STATS-NEXT: (S) 200 lower-bound-sum - Sum of phase endpoint lower bounds (cycles)
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN>, %b1: tensor<128xf16>) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
