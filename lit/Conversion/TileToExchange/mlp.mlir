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

// The lhs rows arrive spread over the tiles (64 bytes each, so no tile
// sends a whole block): each goes to the matmul tiles of its block
// (multicast); tiles read their own piece in place (exchange.copy). With K
// split in two, every tile's GEMM writes its partials, and each of a
// block's two K tiles adds up half its rows: the other tile's half arrives
// (x1) and one partials call per tile adds it to its own half (at its K
// index's offset, 128 bytes for k = 1) into the result, the (2 x 2) x 8
// grid. The bias is broadcast along the rows: 16-byte slices to the tiles
// of each column block; tile 0 copies its own slice (exchange.copy). The
// GEMMs' records are made during x0 (PRE = 2: a prologue that reads no
// buffer, which the phase's lower bound covers).
// CHECK: attributes {exchange.compute_cycles = 1058 : i64, exchange.estimated_cycles = 2294 : i64, exchange.exchange_cycles = 696 : i64, exchange.steps = 6 : i64} {
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, sym_name = "input0", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 512 : i64, sym_name = "input1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, sym_name = "input2", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 512 : i64, interleaved, reads = [{ranges = array<i64: 1, 512, 512>, tiles = "0 to 15"}], sym_name = "s1.operand0", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 1088 : i64, interleaved, sym_name = "s1.rhs_f16", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 256 : i64, interleaved, sym_name = "s1.partials", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, interleaved, sym_name = "s1.partials_in", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, interleaved, sym_name = "s1.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 32 : i64, interleaved, reads = [{ranges = array<i64: 1, 32, 32>, tiles = "0 to 15"}], sym_name = "s2.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, sym_name = "s2.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, sym_name = "s3.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 8, 2>, tiles = array<i64: 0, 1>}} : tensor<8x64xf16>
// CHECK-NEXT: exchange.host_input %arg1 {buffer = @input1, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : tensor<64x128xf8E4M3FN>
// CHECK-NEXT: exchange.host_input %arg2 {buffer = @input2, mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}} : tensor<128xf16>
// CHECK-NEXT: exchange.phase attributes {bytes = 7680 : i64, gap = 8 : i64, horizon = 72 : i64, initial_horizon = 137 : i64, kind = "paired", local_bytes = 512 : i64, lower_bound = 64 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 2 -> tiles {0..1, 3..7}, 64 B", "tile 4 -> tiles {0..3, 5..7}, 64 B", "tile 6 -> tiles {0..5, 7}, 64 B", "tiles 8..14 step 2 -> tiles 0..7, 64 B each (4 transfers)", "tile 0 -> tiles 1..7, 64 B", "tiles 1..7 step 2 -> tiles 8..15, 64 B each (4 transfers)", "tile 9 -> tiles {8, 10..15}, 64 B", "tile 11 -> tiles {8..10, 12..15}, 64 B", "... 2 more groups (2 transfers)"], row_words = 36 : i64, sym_name = "x0", transfers = 16 : i64} {
// CHECK-NEXT: exchange.move {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 2, 0, 0, 0, 64, 0, 0, 2, 2, 0, 1, 64, 0, 5, 3, 1, 64, 0>, array<i64: 1, 0, 0, 0, 0, 1, 4, 0, 0, 0, 64, 0, 0, 2, 4, 0, 1, 128, 0, 3, 5, 1, 128, 0>, array<i64: 1, 0, 0, 0, 0, 1, 6, 0, 0, 0, 64, 0, 0, 2, 6, 0, 1, 192, 0, 1, 7, 0, 192, 0>, array<i64: 1, 0, 0, 0, 0, 4, 8, 2, 0, 0, 64, 0, 64, 1, 8, 0, 1, 256, 0>, array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 64, 0, 0, 1, 7, 1, 1, 0, 0>, array<i64: 1, 0, 0, 0, 0, 4, 1, 2, 0, 0, 64, 0, 64, 1, 8, 8, 1, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 9, 0, 0, 0, 64, 0, 0, 2, 2, 8, 2, 256, 0, 5, 11, 1, 256, 0>, array<i64: 1, 0, 0, 0, 0, 1, 11, 0, 0, 0, 64, 0, 0, 2, 3, 8, 1, 320, 0, 4, 12, 1, 320, 0>, array<i64: 1, 0, 0, 0, 0, 1, 13, 0, 0, 0, 64, 0, 0, 2, 5, 8, 1, 384, 0, 2, 14, 1, 384, 0>, array<i64: 1, 0, 0, 0, 0, 1, 15, 0, 0, 0, 64, 0, 0, 1, 7, 8, 1, 448, 0>], src = @input0}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 64 : i64, cycles = 657 : i64, label = "tile.matmul", sym_name = "s1"} {
// CHECK-NEXT: exchange.copy {dst = @s1.operand0, runs = [array<i64: 2, 9, 0, 9, 256, 4, 0, 2, 0, 0, 64, 2, 64, 1, 1, 0, 0, 0, 0>], src = @input0}
// CHECK-NEXT: exchange.vertex {kernel = "cast", name = "cast_f8e4m3fn_f16_n512", params = {FROM = 3 : i64, N = 512 : i64, TO = 1 : i64}, record = [@input1, @s1.rhs_f16, 11 : i64, 0 : i64, 0 : i64, [@input1, 88 : i64], [@s1.rhs_f16, 176 : i64], 11 : i64, 0 : i64, 0 : i64, [@input1, 176 : i64], [@s1.rhs_f16, 352 : i64], 11 : i64, 0 : i64, 0 : i64, [@input1, 264 : i64], [@s1.rhs_f16, 528 : i64], 11 : i64, 0 : i64, 0 : i64, [@input1, 352 : i64], [@s1.rhs_f16, 704 : i64], 10 : i64, 0 : i64, 0 : i64, [@input1, 432 : i64], [@s1.rhs_f16, 864 : i64], 10 : i64, 0 : i64, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "gemm_amp", name = "gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec", params = {K = 32 : i64, M = 8 : i64, N = 16 : i64, PRE = 2 : i64, TYPE = 1 : i64}, record = [@s1.operand0, @s1.rhs_f16, @s1.partials, 0 : i64], scratch = 240 : i64, tiles = "0 to 15"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.phase attributes {bytes = 2048 : i64, gap = 7 : i64, horizon = 39 : i64, initial_horizon = 39 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 32 : i64, moves = "partial sums of s1 tile.matmul", patterns = ["tiles 0..7 -> +8, 128 B each (8 transfers)", "tiles 8..15 -> -8, 128 B each (8 transfers)"], row_words = 9 : i64, sym_name = "x1", transfers = 16 : i64} {
// CHECK-NEXT: exchange.move {dst = @s1.partials_in, runs = [array<i64: 8, 1, 0, 1, 0, 2, 0, 8, 128, -128, 128, -8, 0, 1, 1, 8, 0, 0, 0>], src = @s1.partials}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 0 : i64, cycles = 129 : i64, label = "tile.matmul reduction", sym_name = "s1.reduce"} {
// CHECK-NEXT: exchange.vertex {kernel = "partials", name = "partials_add_f16_p1_n64", params = {N = 64 : i64, P = 1 : i64, TYPE = 1 : i64}, record = [@s1.partials, @s1.partials_in, @s1.result], tiles = "0 to 7"}
// CHECK-NEXT: exchange.vertex {kernel = "partials", name = "partials_add_f16_p1_n64", params = {N = 64 : i64, P = 1 : i64, TYPE = 1 : i64}, record = {{\[\[}}@s1.partials, 128 : i64], @s1.partials_in, @s1.result], tiles = "8 to 15"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// The reduction completes the matmul: a probe names where its result can be
// read after that sync, for `ipu-run --check-ops`.
// CHECK-NEXT: exchange.probe {after = @s1.reduce, buffer = @s1.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, op = "tile.matmul", source = "{{[0-9]+}}:3", type = tensor<8x128xf16>}
// CHECK-NEXT: exchange.phase attributes {bytes = 480 : i64, gap = 7 : i64, horizon = 15 : i64, initial_horizon = 15 : i64, kind = "compact-streams", local_bytes = 32 : i64, lower_bound = 8 : i64, moves = "operand #1 of s2 tile.map", patterns = ["tiles 1..2 -> {-1, +7}, 16 B each (2 transfers)", "tiles 3..4 -> {-2, +6}, 16 B each (2 transfers)", "tiles 5..6 -> {-3, +5}, 16 B each (2 transfers)", "tiles 7..8 -> {-4, +4}, 16 B each (2 transfers)", "tiles 9..10 -> {-5, +3}, 16 B each (2 transfers)", "tiles 11..12 -> {-6, +2}, 16 B each (2 transfers)", "tiles 13..14 -> {-7, +1}, 16 B each (2 transfers)", "tile 15 -> tile 7, 16 B", "... 1 more groups (1 transfers)"], row_words = 14 : i64, sym_name = "x2", transfers = 16 : i64} {
// CHECK-NEXT: exchange.move {dst = @s2.operand1, runs = [array<i64: 7, 2, 0, 1, 0, 2, 1, 1, 0, 0, 16, 1, -16, 1, 2, 0, 8, 16, 0>, array<i64: 1, 0, 0, 0, 0, 2, 15, -15, 0, 0, 16, 1, -16, 1, 1, 7, 0, 16, 0>], src = @input2}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 32 : i64, cycles = 272 : i64, label = "tile.map add, tile.map gelu", sym_name = "s2"} {
// CHECK-NEXT: exchange.copy {dst = @s2.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 2, 0, 15, 0, 0, 16, 15, 16, 1, 1, 0, 0, 0, 0>], src = @input2}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_add_row_vector_f16_r4_c16", params = {C = 16 : i64, OP = 6 : i64, R = 4 : i64, TYPE = 1 : i64}, record = [@s1.result, 0 : i64, @s2.operand1, 0 : i64, @s2.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_gelu_f16_n64", params = {N = 64 : i64, OP = 17 : i64, TYPE = 1 : i64}, record = [@s2.result, 0 : i64, @s3.result, 3 : i64, [@s2.result, 24 : i64], 0 : i64, [@s3.result, 24 : i64], 3 : i64, [@s2.result, 48 : i64], 0 : i64, [@s3.result, 48 : i64], 3 : i64, [@s2.result, 72 : i64], 0 : i64, [@s3.result, 72 : i64], 3 : i64, [@s2.result, 96 : i64], 0 : i64, [@s3.result, 96 : i64], 2 : i64, [@s2.result, 112 : i64], 0 : i64, [@s3.result, 112 : i64], 2 : i64], tiles = "0 to 15"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s2, buffer = @s2.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "{{[0-9]+}}:3", type = tensor<8x128xf16>}
// CHECK-NEXT: exchange.probe {after = @s2, buffer = @s3.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "{{[0-9]+}}:3", type = tensor<8x128xf16>}
// CHECK-NEXT: %0 = exchange.host_output {buffer = @s3.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<8x128xf16>
// CHECK-NEXT: return %0 : tensor<8x128xf16>

// STATS: ConvertTileToExchange
// STATS-NEXT: (S) 3 phases - Exchange phases scheduled
// STATS-NEXT: (S) 48 transfers - Transfers scheduled
// STATS-NEXT: (S) 126 horizon-sum - Sum of phase horizons (cycles)
// STATS-NEXT: (S) 104 lower-bound-sum - Sum of phase endpoint lower bounds (cycles)
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN>, %b1: tensor<128xf16>) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
