// tile -> exchange for the row family on the 16-tile test target (each
// phase's horizon and endpoint lower bound pinned):
// * the sum of 2 x 512 is cut 16 ways along its rows: each tile sums its
//   2 x 32 piece into f32 partials (tile 0 into its gathering buffer in
//   place), one phase gathers the other 15 onto tile 0, and a combining
//   compute set adds the 16 partials up (rows_sum ... _i2: down 2 columns);
// * softmax of the same input takes that layout as it lies, its rows cut
//   16 ways: each tile's pieces' [max, sum exp] pairs (in the superstep of
//   the sum's combining, which needs no exchange first), each row's pairs
//   gathered onto the tile its share of the 2 rows falls to (tiles 0 and 1,
//   a phase), combined there (each row's 16 pairs in 4 parts on 4 workers,
//   then merged: `_parts4`), each combined row multicast to the other
//   tiles (a phase), and each piece normalised: the statistics wrote each
//   piece's exponentials into the result, which the last pass scales in
//   place by the row's exp(m - M) / S, m the piece's own max (its pair in
//   the gathered pairs);
// * layer norm's scale and bias each go from the tile holding them to all
//   the row tiles in one multicast, tile 0 reading its own in place.
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null

// CHECK: attributes {exchange.compute_cycles = 3149 : i64, exchange.estimated_cycles = 5158 : i64, exchange.exchange_cycles = 1109 : i64, exchange.steps = 10 : i64}
// CHECK: exchange.buffer {bytes = 256 : i64, sym_name = "input0", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, sym_name = "input1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, sym_name = "input2", tiles = "0"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, sym_name = "input3", tiles = "0"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, sym_name = "s1.partials_in", tiles = "0"}
// CHECK-NEXT: exchange.buffer {bytes = 8 : i64, sym_name = "s1.partials", tiles = "1 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 8 : i64, sym_name = "s1.result", tiles = "0"}
// CHECK-NEXT: exchange.buffer {bytes = 256 : i64, sym_name = "s2.stats_in", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, sym_name = "s2.row_stats", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 256 : i64, sym_name = "s2.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 32 : i64, sym_name = "s2.partial_stats", tiles = "0 to 1"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, reads = [{ranges = array<i64: 1, 128, 128>, tiles = "1 to 15"}], sym_name = "s3.operand1", tiles = "1 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, reads = [{ranges = array<i64: 1, 128, 128>, tiles = "1 to 15"}], sym_name = "s3.operand2", tiles = "1 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, sym_name = "s3.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 1, 16>, tiles = array<i64: 0, 1>}} : tensor<2x512xf32>
// CHECK-NEXT: exchange.host_input %arg1 {buffer = @input1, mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}} : tensor<16x64xf16>
// CHECK-NEXT: exchange.host_input %arg2 {buffer = @input2, mapping = {grid = array<i64: 1>, tiles = array<i64: 0, 1>}} : tensor<64xf16>
// CHECK-NEXT: exchange.host_input %arg3 {buffer = @input3, mapping = {grid = array<i64: 1>, tiles = array<i64: 0, 1>}} : tensor<64xf16>
// CHECK-NEXT: exchange.compute_set attributes {bound = 32 : i64, cycles = 218 : i64, label = "tile.reduce sum", sym_name = "s1"} {
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_sum_f32_r2_c32", params = {C = 32 : i64, OP = 0 : i64, OUT = 0 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, 0 : i64, 0 : i64, @s1.partials], tiles = "1 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_sum_f32_r2_c32", params = {C = 32 : i64, OP = 0 : i64, OUT = 0 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, 0 : i64, 0 : i64, @s1.partials_in], tiles = "0"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.phase attributes {bytes = 120 : i64, gap = 6 : i64, horizon = 36 : i64, initial_horizon = 37 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 30 : i64, moves = "partials of s1 tile.reduce", patterns = ["tiles 1..15 -> tile 0, 8 B each (15 transfers)"], row_words = 34 : i64, sym_name = "x0", transfers = 15 : i64} {
// CHECK-NEXT: exchange.move {dst = @s1.partials_in, runs = [array<i64: 1, 0, 0, 0, 0, 15, 1, 1, 0, 0, 8, 0, 8, 1, 1, 0, 0, 8, 0>], src = @s1.partials}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 32 : i64, cycles = 952 : i64, label = "tile.reduce sum combine, tile.softmax statistics", sym_name = "s1.combine"} {
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_sum_f32_r1_c16_i2", params = {C = 16 : i64, I = 2 : i64, IP = 2 : i64, OP = 0 : i64, OUT = 0 : i64, R = 1 : i64, TYPE = 0 : i64}, record = [@s1.partials_in, 0 : i64, 0 : i64, 0 : i64, @s1.result], tiles = "0"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, @s2.stats_in], tiles = "0"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 16 : i64]], tiles = "1"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 32 : i64]], tiles = "2"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 48 : i64]], tiles = "3"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 64 : i64]], tiles = "4"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 80 : i64]], tiles = "5"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 96 : i64]], tiles = "6"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 112 : i64]], tiles = "7"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 128 : i64]], tiles = "8"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 144 : i64]], tiles = "9"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 160 : i64]], tiles = "10"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 176 : i64]], tiles = "11"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 192 : i64]], tiles = "12"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 208 : i64]], tiles = "13"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 224 : i64]], tiles = "14"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_stats_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, OP = 8 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@input0, 0 : i64, @s2.result, 0 : i64, [@s2.stats_in, 240 : i64]], tiles = "15"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s1.combine, buffer = @s1.result, {{.*}} op = "tile.reduce", source = "{{[0-9]+}}:3", type = tensor<2xf32>}
// CHECK-NEXT: exchange.phase attributes {bytes = 240 : i64, gap = 6 : i64, horizon = 36 : i64, initial_horizon = 37 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 30 : i64, moves = "row statistics of s2 tile.softmax", patterns = ["tile 0 -> tile 1, 8 B", "tiles 1..2 -> -1, 8 B each (2 transfers)", "tiles 2..3 -> -2, 8 B each (2 transfers)", "tiles 3..4 -> -3, 8 B each (2 transfers)", "tiles 4..5 -> -4, 8 B each (2 transfers)", "tiles 5..6 -> -5, 8 B each (2 transfers)", "tiles 6..7 -> -6, 8 B each (2 transfers)", "tiles 7..8 -> -7, 8 B each (2 transfers)", "... 8 more groups (15 transfers)"], row_words = 79 : i64, sym_name = "x1", transfers = 30 : i64} {
// CHECK-NEXT: exchange.move {dst = @s2.stats_in, runs = [array<i64: 1, 0, 0, 0, 0, 2, 0, 1, 8, 8, 8, -1, 8, 1, 1, 1, 0, 8, 0>, array<i64: 14, 1, 16, 0, 16, 2, 2, 0, 32, 8, 8, 1, 8, 1, 1, 0, 0, 32, 0>], src = @s2.stats_in}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 0 : i64, cycles = 397 : i64, label = "tile.softmax combine", sym_name = "s2.combine"} {
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_combine_f32_r1_c16_gp2_parts4", params = {C = 16 : i64, GP = 2 : i64, LOG = 0 : i64, OP = 9 : i64, P = 4 : i64, R = 1 : i64, TYPE = 0 : i64}, record = [@s2.stats_in, @s2.partial_stats, 0 : i64, 0 : i64, @s2.row_stats], tiles = "0"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_combine_f32_r1_c16_gp2_parts4", params = {C = 16 : i64, GP = 2 : i64, LOG = 0 : i64, OP = 9 : i64, P = 4 : i64, R = 1 : i64, TYPE = 0 : i64}, record = {{\[\[}}@s2.stats_in, 8 : i64], @s2.partial_stats, 0 : i64, 0 : i64, [@s2.row_stats, 8 : i64]], tiles = "1"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.phase attributes {bytes = 240 : i64, gap = 7 : i64, horizon = 9 : i64, initial_horizon = 11 : i64, kind = "paired", local_bytes = 0 : i64, lower_bound = 2 : i64, moves = "combined row statistics of s2 tile.softmax", patterns = ["tile 0 -> tiles 1..15, 8 B", "tile 1 -> tiles {0, 2..15}, 8 B"], row_words = 9 : i64, sym_name = "x2", transfers = 2 : i64} {
// CHECK-NEXT: exchange.move {dst = @s2.row_stats, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 8, 0, 0, 1, 15, 1, 1, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 8, 0, 8, 0, 0, 2, 2, 0, 2, 8, 0, 13, 3, 1, 8, 0>], src = @s2.row_stats}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 0 : i64, cycles = 260 : i64, label = "tile.softmax", sym_name = "s2.apply"} {
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, @s2.stats_in, 0 : i64, @s2.result], tiles = "0"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 16 : i64], 0 : i64, @s2.result], tiles = "1"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 32 : i64], 0 : i64, @s2.result], tiles = "2"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 48 : i64], 0 : i64, @s2.result], tiles = "3"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 64 : i64], 0 : i64, @s2.result], tiles = "4"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 80 : i64], 0 : i64, @s2.result], tiles = "5"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 96 : i64], 0 : i64, @s2.result], tiles = "6"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 112 : i64], 0 : i64, @s2.result], tiles = "7"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 128 : i64], 0 : i64, @s2.result], tiles = "8"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 144 : i64], 0 : i64, @s2.result], tiles = "9"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 160 : i64], 0 : i64, @s2.result], tiles = "10"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 176 : i64], 0 : i64, @s2.result], tiles = "11"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 192 : i64], 0 : i64, @s2.result], tiles = "12"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 208 : i64], 0 : i64, @s2.result], tiles = "13"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 224 : i64], 0 : i64, @s2.result], tiles = "14"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_softmax_apply_f32_r2_c32_exps", params = {C = 32 : i64, EXPS = 1 : i64, LOG = 0 : i64, OP = 10 : i64, R = 2 : i64, TYPE = 0 : i64}, record = [@s2.result, @s2.row_stats, [@s2.stats_in, 240 : i64], 0 : i64, @s2.result], tiles = "15"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s2.apply, buffer = @s2.result, {{.*}} op = "tile.softmax", source = "{{[0-9]+}}:3", type = tensor<2x512xf32>}
// CHECK-NEXT: exchange.phase attributes {bytes = 1920 : i64, gap = 7 : i64, horizon = 39 : i64, initial_horizon = 39 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 32 : i64, moves = "operand #1 of s3 tile.layer_norm", patterns = ["tile 0 -> tiles 1..15, 128 B"], row_words = 6 : i64, sym_name = "x3", transfers = 1 : i64} {
// CHECK-NEXT: exchange.move {dst = @s3.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 128, 0, 0, 1, 15, 1, 1, 0, 0>], src = @input2}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.phase attributes {bytes = 1920 : i64, gap = 7 : i64, horizon = 39 : i64, initial_horizon = 39 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 32 : i64, moves = "operand #2 of s3 tile.layer_norm", patterns = ["tile 0 -> tiles 1..15, 128 B"], row_words = 6 : i64, sym_name = "x4", transfers = 1 : i64} {
// CHECK-NEXT: exchange.move {dst = @s3.operand2, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 128, 0, 0, 1, 15, 1, 1, 0, 0>], src = @input3}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 16 : i64, cycles = 1322 : i64, label = "tile.layer_norm", sym_name = "s3"} {
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_layer_norm_f16_r1_c64_eps3727c5ac_scaled_biased", params = {BETA = 1 : i64, C = 64 : i64, EPS = 925353388 : i64, GAMMA = 1 : i64, INV_C = 1015021568 : i64, OP = 5 : i64, R = 1 : i64, TYPE = 1 : i64}, record = [@input1, 0 : i64, @s3.operand1, @s3.operand2, @s3.result], tiles = "1 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_layer_norm_f16_r1_c64_eps3727c5ac_scaled_biased", params = {BETA = 1 : i64, C = 64 : i64, EPS = 925353388 : i64, GAMMA = 1 : i64, INV_C = 1015021568 : i64, OP = 5 : i64, R = 1 : i64, TYPE = 1 : i64}, record = [@input1, 0 : i64, @input2, @input3, @s3.result], tiles = "0"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s3, buffer = @s3.result, {{.*}} op = "tile.layer_norm", source = "{{[0-9]+}}:3", type = tensor<16x64xf16>}
// CHECK-NEXT: %0 = exchange.host_output {buffer = @s1.result, mapping = {grid = array<i64: 1>, tiles = array<i64: 0, 16>}, name = "s"} : tensor<2xf32>
// CHECK-NEXT: %1 = exchange.host_output {buffer = @s2.result, mapping = {grid = array<i64: 1, 16>, tiles = array<i64: 0, 1>}, name = "p"} : tensor<2x512xf32>
// CHECK-NEXT: %2 = exchange.host_output {buffer = @s3.result, mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}, name = "n"} : tensor<16x64xf16>
// CHECK-NEXT: return %0, %1, %2 : tensor<2xf32>, tensor<2x512xf32>, tensor<16x64xf16>

// STATS: ConvertTileToExchange
// STATS-NEXT: (S) 5 phases - Exchange phases scheduled
// STATS-NEXT: (S) 49 transfers - Transfers scheduled
// STATS-NEXT: (S) 159 horizon-sum - Sum of phase horizons (cycles)
// STATS-NEXT: (S) 126 lower-bound-sum - Sum of phase endpoint lower bounds (cycles)
func.func @main(%x: tensor<2x512xf32> {ipu.name = "x"}, %h: tensor<16x64xf16> {ipu.name = "h"}, %g: tensor<64xf16> {ipu.name = "g"}, %b: tensor<64xf16> {ipu.name = "b"}) -> (tensor<2xf32> {ipu.name = "s"}, tensor<2x512xf32> {ipu.name = "p"}, tensor<16x64xf16> {ipu.name = "n"}) {
  %s = nn.reduce_sum %x {axes = array<i64: 1>} : tensor<2x512xf32> -> tensor<2xf32>
  %p = nn.softmax %x {axis = 1 : i64} : tensor<2x512xf32>
  %n = nn.layer_norm %h, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<16x64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<16x64xf16>
  return %s, %p, %n : tensor<2xf32>, tensor<2x512xf32>, tensor<16x64xf16>
}
