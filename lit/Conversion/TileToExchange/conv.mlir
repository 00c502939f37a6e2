// tile -> exchange for a conv and a max pool (test16), each phase's
// horizon and endpoint lower bound pinned: the matmul's operands arrive
// straight from the input's blocks through the pad, slice, reshape and
// concat views (the stacked [C*K, O] operand exists only as the matmul
// tiles' shares of it; a stride-2 slice moves single elements), and the
// max pool's slices arrive at its maps' blocks the same way.
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null
// Pinned with scripts/pin-exchange-checks.py THIS -- ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange

// CHECK: attributes {exchange.compute_cycles = 1092 : i64, exchange.estimated_cycles = 3549 : i64, exchange.exchange_cycles = 1377 : i64, exchange.steps = 12 : i64}
// CHECK: exchange.buffer {bytes = 24 : i64, sym_name = "input0", tiles = "0 to 11"}
// CHECK-NEXT: exchange.buffer {bytes = 24 : i64, sym_name = "input1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 4 : i64, sym_name = "const0", tiles = "0 to 11"}
// CHECK-NEXT: exchange.buffer {bytes = 4 : i64, sym_name = "const1", tiles = "0 to 13"}
// CHECK-NEXT: exchange.buffer {bytes = 8 : i64, sym_name = "const2", tiles = "0 to 11"}
// CHECK-NEXT: exchange.buffer {bytes = 36 : i64, sym_name = "const3", tiles = "0 to 5"}
// CHECK-NEXT: exchange.buffer {bytes = 56 : i64, sym_name = "const4", tiles = "0 to 11"}
// CHECK-NEXT: exchange.buffer {bytes = 96 : i64, interleaved, reads = [{ranges = array<i64: 1, 96, 96>, tiles = "0 to 2"}, {ranges = array<i64: 1, 32, 32>, tiles = "3 to 5"}], sym_name = "s1.operand0", tiles = "0 to 5"}
// CHECK-NEXT: exchange.buffer {bytes = 536 : i64, interleaved, reads = [{ranges = array<i64: 1, 512, 512>, tiles = "0 to 5"}], sym_name = "s1.operand1", tiles = "0 to 5"}
// CHECK-NEXT: exchange.buffer {bytes = 192 : i64, interleaved, sym_name = "s1.partials", tiles = "0 to 5"}
// CHECK-NEXT: exchange.buffer {bytes = 128 : i64, interleaved, sym_name = "s1.partials_in", tiles = "0 to 3"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, sym_name = "s1.result", tiles = "0 to 3"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, interleaved, reads = [{ranges = array<i64: 1, 12, 12>, tiles = "0 to 5"}], sym_name = "s2.operand0", tiles = "0 to 5"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, interleaved, reads = [{ranges = array<i64: 1, 12, 12>, tiles = "0 to 5"}], sym_name = "s2.operand1", tiles = "0 to 5"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, interleaved, sym_name = "s2.result", tiles = "0 to 5"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, interleaved, reads = [{ranges = array<i64: 1, 12, 12>, tiles = "0 to 5"}], sym_name = "s3.operand1", tiles = "0 to 5"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, interleaved, sym_name = "s3.result", tiles = "0 to 5"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, interleaved, reads = [{ranges = array<i64: 1, 12, 12>, tiles = "0 to 5"}], sym_name = "s4.operand1", tiles = "0 to 5"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, sym_name = "s4.result", tiles = "0 to 5"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, sym_name = "output0", tiles = "0 to 11"}
// CHECK-NEXT: exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 1, 2, 6, 1>, tiles = array<i64: 0, 1>}} : tensor<1x2x6x6xf32>
// CHECK-NEXT: exchange.host_input %arg1 {buffer = @input1, mapping = {grid = array<i64: 4, 2, 2, 1>, tiles = array<i64: 0, 1>}} : tensor<4x2x3x3xf32>
// CHECK-NEXT: exchange.constant {buffer = @const0, mapping = {grid = array<i64: 1, 2, 1, 6>, tiles = array<i64: 0, 1>}, value = dense<0.0> : tensor<1x2x1x6xf32>}
// CHECK-NEXT: exchange.constant {buffer = @const1, mapping = {grid = array<i64: 1, 2, 7, 1>, tiles = array<i64: 0, 1>}, value = dense<0.0> : tensor<1x2x7x1xf32>}
// CHECK-NEXT: exchange.constant {buffer = @const2, mapping = {grid = array<i64: 4, 3>, tiles = array<i64: 0, 1>}, value = dense<0.0> : tensor<4x6xf32>}
// CHECK-NEXT: exchange.constant {buffer = @const3, mapping = {grid = array<i64: 6, 1>, tiles = array<i64: 0, 1>}, value = dense<0.0> : tensor<6x9xf32>}
// CHECK-NEXT: exchange.constant {buffer = @const4, mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}, value = dense<0.0> : tensor<24x7xf32>}
// CHECK-NEXT: exchange.phase attributes {bytes = 3064 : i64, gap = 6 : i64, horizon = 149 : i64, initial_horizon = 168 : i64, kind = "paired", local_bytes = 392 : i64, lower_bound = 143 : i64, moves = "operand #0 of s1 tile.matmul, operand #1 of s1 tile.matmul", patterns = ["tiles {1, 3} -> -1, 8 B each (3 transfers)", "tiles {4, 8} -> tile 0, 24 B each (2 transfers)", "tiles {5, 7, 10} -> -5, 8 B each (4 transfers)", "tiles {9, 11} -> -9, 8 B each (2 transfers)", "tiles {10, 12} -> -9, 24 B each (2 transfers)", "tiles {13, 15} -> -10, 8 B each (2 transfers)", "tiles {2, 6} -> tile 1, 24 B each (2 transfers)", "tiles 3..11 step 2 -> tile 1, 4 B each (5 transfers)", "... 33 more groups (139 transfers)"], row_words = 305 : i64, sym_name = "x0", transfers = 161 : i64} {
// CHECK-NEXT: exchange.move {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 8, 0, 0, 1, 1, 0, 0, 24, 0>, array<i64: 1, 0, 0, 0, 0, 1, 4, 0, 0, 0, 24, 0, 0, 1, 1, 0, 0, 32, 0>, array<i64: 1, 0, 0, 0, 0, 1, 5, 0, 0, 0, 8, 0, 0, 1, 1, 0, 0, 56, 0>, array<i64: 1, 0, 0, 0, 0, 1, 8, 0, 0, 0, 24, 0, 0, 1, 1, 0, 0, 64, 0>, array<i64: 1, 0, 0, 0, 0, 1, 9, 0, 0, 0, 8, 0, 0, 1, 1, 0, 0, 88, 0>, array<i64: 1, 0, 0, 0, 0, 1, 12, 0, 0, 0, 24, 0, 0, 1, 1, 3, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 13, 0, 0, 0, 8, 0, 0, 1, 1, 3, 0, 24, 0>, array<i64: 1, 0, 0, 0, 0, 1, 2, 0, 0, 0, 24, 0, 0, 1, 1, 1, 0, 4, 0>, array<i64: 1, 0, 0, 0, 0, 2, 3, 2, 0, 8, 4, 0, 4, 1, 1, 1, 0, 28, 0>, array<i64: 1, 0, 0, 0, 0, 1, 6, 0, 0, 0, 24, 0, 0, 1, 1, 1, 0, 36, 0>, array<i64: 1, 0, 0, 0, 0, 2, 7, 2, 0, 8, 4, 0, 4, 1, 1, 1, 0, 60, 0>, array<i64: 1, 0, 0, 0, 0, 1, 10, 0, 0, 0, 24, 0, 0, 1, 1, 1, 0, 68, 0>, array<i64: 1, 0, 0, 0, 0, 2, 11, 2, 0, 8, 4, 3, -92, 1, 1, 1, 0, 92, 0>, array<i64: 1, 0, 0, 0, 0, 1, 14, 0, 0, 0, 24, 0, 0, 1, 1, 4, 0, 4, 0>, array<i64: 1, 0, 0, 0, 0, 1, 15, 0, 0, 0, 4, 0, 0, 1, 1, 4, 0, 28, 0>, array<i64: 1, 0, 0, 0, 0, 3, 3, 4, 4, 0, 8, 0, 32, 1, 1, 2, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 15, 0, 4, 0, 8, 0, 0, 1, 1, 5, 0, 0, 0>], src = @input1}
// CHECK-NEXT: exchange.move {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 2, 0, 1, 0, 0, 8, 0, 8, 1, 1, 2, 0, 8, 0>, array<i64: 2, 3, 0, 0, 32, 3, 3, 1, 0, 0, 8, 0, 8, 1, 1, 2, 0, 40, 0>, array<i64: 1, 0, 0, 0, 0, 3, 9, 1, 0, 0, 8, 0, 8, 1, 1, 5, 0, 8, 0>], src = @const2}
// CHECK-NEXT: exchange.move {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 2, 2, 2, 0, 0, 4, 0, 12, 2, 2, 0, 0, 12, 372, 2, 3, 0, 12, 372>, array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 4, 0, 0, 1, 2, 0, 3, 192, 0>, array<i64: 1, 0, 0, 0, 0, 1, 3, 0, 0, 0, 4, 0, 0, 1, 1, 0, 0, 204, 0>, array<i64: 1, 0, 0, 0, 0, 2, 5, 1, 0, 0, 4, 0, 192, 1, 2, 0, 3, 216, 0>, array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 4, 0, 0, 1, 1, 3, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 7, 0, 0, 0, 4, 0, 0, 1, 2, 1, 3, 64, 0>, array<i64: 1, 0, 0, 0, 0, 2, 9, 2, 0, 0, 4, 0, 12, 2, 2, 1, 0, 76, 372, 2, 4, 0, 76, 372>, array<i64: 1, 0, 0, 0, 0, 3, 8, 2, 0, 0, 4, 0, 12, 1, 2, 1, 3, 256, 0>, array<i64: 1, 0, 0, 0, 0, 1, 13, 0, 0, 0, 4, 0, 0, 1, 2, 1, 3, 472, 0>], src = @const1}
// CHECK-NEXT: exchange.move {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 4, 0, 0, 2, 2, 0, 0, 4, 124, 2, 3, 0, 4, 124>, array<i64: 1, 0, 0, 0, 0, 1, 3, 0, 0, 0, 4, 0, 0, 1, 2, 0, 0, 8, 124>, array<i64: 1, 0, 0, 0, 0, 2, 2, 2, 0, 0, 4, 0, 4, 1, 2, 0, 3, 68, 0>, array<i64: 1, 0, 0, 0, 0, 1, 5, 0, 0, 0, 4, 0, 0, 1, 2, 0, 3, 136, 0>, array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 4, 0, 0, 1, 1, 3, 0, 64, 0>, array<i64: 1, 0, 0, 0, 0, 2, 7, 2, 0, 0, 4, 0, 4, 2, 2, 1, 0, 68, 124, 2, 4, 0, 68, 124>, array<i64: 1, 0, 0, 0, 0, 3, 6, 2, 0, 0, 4, 0, 4, 1, 2, 1, 3, 128, 0>, array<i64: 1, 0, 0, 0, 0, 1, 11, 0, 0, 0, 4, 0, 0, 1, 2, 1, 3, 200, 0>], src = @const0}
// CHECK-NEXT: exchange.move {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 2, 1, 0, 4, 8, 4, 0, 4, 4, 2, 0, 0, 16, 124, 2, 0, 3, 388, -372, 2, 3, 0, 140, 248, 1, 4, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 2, 3, 0, 4, 8, 4, 0, 4, 3, 2, 0, 0, 28, 124, 2, 0, 1, 400, -388, 1, 4, 0, 12, 0>, array<i64: 1, 0, 0, 0, 0, 3, 1, 0, 0, 8, 4, 0, 4, 2, 2, 0, 0, 76, 372, 2, 3, 0, 76, 372>, array<i64: 1, 0, 0, 0, 0, 3, 3, 0, 0, 8, 4, 0, 4, 1, 2, 0, 0, 88, 372>, array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 20, 0, 4, 0, 0, 2, 2, 0, 3, 148, 0, 1, 4, 0, 8, 0>, array<i64: 1, 0, 0, 0, 0, 1, 3, 0, 20, 0, 4, 0, 0, 2, 2, 0, 1, 160, -140, 1, 4, 0, 20, 0>, array<i64: 2, 2, 0, 0, 12, 2, 2, 0, 4, 8, 4, 0, 4, 2, 2, 0, 0, 208, 124, 2, 3, 0, 208, 124>, array<i64: 2, 2, 0, 0, 12, 3, 2, 0, 0, 8, 4, 0, 4, 1, 2, 0, 3, 268, 0>, array<i64: 1, 0, 0, 0, 0, 2, 2, 2, 20, 0, 4, 0, 12, 1, 2, 0, 3, 340, 0>, array<i64: 1, 0, 0, 0, 0, 2, 5, 0, 4, 8, 4, 0, 4, 2, 2, 0, 3, 412, 0, 2, 1, 3, 24, 0>, array<i64: 1, 0, 0, 0, 0, 3, 5, 0, 0, 8, 4, 0, 4, 1, 2, 0, 3, 472, 0>, array<i64: 1, 0, 0, 0, 0, 2, 0, 0, 4, 8, 4, 0, 4, 1, 2, 3, 0, 196, 124>, array<i64: 1, 0, 0, 0, 0, 3, 0, 0, 0, 8, 4, 0, 4, 1, 1, 3, 0, 256, 0>, array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 20, 0, 4, 0, 0, 1, 1, 3, 0, 328, 0>, array<i64: 1, 0, 0, 0, 0, 1, 5, 0, 20, 0, 4, 0, 0, 1, 2, 1, 3, 32, 0>, array<i64: 2, 2, 0, 0, 12, 2, 7, 0, 4, 8, 4, 0, 4, 4, 2, 1, 0, 80, 124, 2, 1, 3, 452, -372, 2, 4, 0, 204, 248, 2, 2, 3, 64, 0>, array<i64: 2, 2, 0, 0, 12, 3, 7, 0, 0, 8, 4, 0, 4, 2, 2, 1, 3, 140, 0, 2, 2, 3, 0, 0>, array<i64: 1, 0, 0, 0, 0, 2, 7, 2, 20, 0, 4, 0, 12, 2, 2, 1, 3, 212, 0, 2, 2, 3, 72, 0>, array<i64: 3, 2, 0, 0, 12, 2, 6, 0, 4, 8, 4, 0, 4, 2, 2, 1, 0, 260, 124, 2, 4, 0, 260, 124>, array<i64: 3, 2, 0, 0, 12, 3, 6, 0, 0, 8, 4, 0, 4, 1, 2, 1, 3, 320, 0>, array<i64: 1, 0, 0, 0, 0, 3, 6, 2, 20, 0, 4, 0, 12, 1, 2, 1, 3, 392, 0>, array<i64: 1, 0, 0, 0, 0, 2, 11, 0, 4, 8, 4, 0, 4, 2, 2, 1, 3, 476, 0, 2, 2, 3, 88, 0>, array<i64: 1, 0, 0, 0, 0, 3, 11, 0, 0, 8, 4, 0, 4, 1, 2, 2, 3, 24, 0>, array<i64: 1, 0, 0, 0, 0, 1, 11, 0, 20, 0, 4, 0, 0, 1, 2, 2, 3, 96, 0>], src = @input0}
// CHECK-NEXT: exchange.move {dst = @s1.operand1, runs = [array<i64: 2, 1, 0, 0, 128, 2, 1, 0, 0, 28, 28, 0, 64, 1, 2, 0, 3, 164, 0>, array<i64: 2, -3, 0, 3, -384, 2, 3, 0, 0, 28, 28, 0, 64, 1, 1, 0, 0, 420, 0>, array<i64: 1, 0, 0, 0, 0, 2, 4, 0, 0, 28, 28, 0, 64, 1, 1, 1, 0, 36, 0>, array<i64: 3, 1, 0, 0, 128, 2, 5, 0, 0, 28, 28, 0, 64, 1, 2, 1, 3, 164, 0>, array<i64: 4, 1, 0, 0, 128, 2, 8, 0, 0, 28, 28, 0, 64, 1, 2, 2, 3, 36, 0>], src = @const4}
// CHECK-NEXT: exchange.move {dst = @s1.operand1, runs = [array<i64: 2, 3, 0, 0, 192, 2, 0, 1, 0, 0, 36, 0, 64, 1, 2, 2, 3, 128, 0>, array<i64: 1, 0, 0, 0, 0, 2, 5, -3, 0, 0, 36, 3, -192, 1, 1, 2, 0, 448, 0>], src = @const3}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 6 : i64, cycles = 597 : i64, label = "tile.matmul", sym_name = "s1"} {
// CHECK-NEXT: exchange.copy {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 24, 0, 0, 1, 1, 0, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 8, 0, 4, 0, 0, 1, 1, 1, 0, 0, 0>], src = @input1}
// CHECK-NEXT: exchange.copy {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 2, 0, 0, 0, 8, 0, 0, 1, 1, 2, 0, 24, 0>], src = @const2}
// CHECK-NEXT: exchange.copy {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 2, 0, 3, 0, 0, 4, 3, 204, 1, 1, 0, 0, 0, 0>], src = @const1}
// CHECK-NEXT: exchange.copy {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 2, 0, 3, 0, 0, 4, 3, -56, 1, 1, 0, 0, 64, 0>, array<i64: 1, 0, 0, 0, 0, 1, 3, 0, 0, 0, 4, 0, 0, 1, 1, 3, 0, 132, 0>], src = @const0}
// CHECK-NEXT: exchange.copy {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 2, 0, 0, 4, 8, 4, 0, 4, 1, 1, 0, 0, 196, 0>, array<i64: 2, 0, 4, 0, 64, 3, 0, 0, 0, 8, 4, 0, 4, 1, 1, 0, 0, 256, 0>, array<i64: 1, 0, 0, 0, 0, 2, 3, 0, 4, 8, 4, 0, 4, 1, 1, 3, 0, 28, 0>, array<i64: 2, 0, 4, 0, 64, 3, 3, 0, 0, 8, 4, 0, 4, 1, 1, 3, 0, 88, 0>, array<i64: 1, 0, 0, 0, 0, 2, 3, 0, 4, 8, 4, 0, 4, 1, 1, 3, 0, 400, 0>, array<i64: 2, -2, 4, -2, -460, 3, 3, 0, 0, 8, 4, 0, 4, 1, 1, 3, 0, 460, 0>], src = @input0}
// CHECK-NEXT: exchange.copy {dst = @s1.operand1, runs = [array<i64: 2, 3, 0, 3, 384, 2, 0, 0, 0, 28, 28, 0, 64, 1, 1, 0, 0, 36, 0>, array<i64: 1, 0, 0, 0, 0, 2, 4, 0, 0, 28, 28, 0, 64, 1, 1, 4, 0, 36, 0>], src = @const4}
// CHECK-NEXT: exchange.copy {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 2, 2, 3, 0, 0, 36, 3, 192, 1, 1, 2, 0, 256, 0>], src = @const3}
// CHECK-NEXT: exchange.vertex {kernel = "gemm_amp", name = "gemm_f32_interleaved_k8_c16_r0_r1_m3_prerec", params = {K = 8 : i64, M = 3 : i64, N = 16 : i64, PRE = 2 : i64, TYPE = 4 : i64}, record = [@s1.operand0, @s1.operand1, @s1.partials, 0 : i64], scratch = 240 : i64, tiles = "0 to 5"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.phase attributes {bytes = 512 : i64, gap = 7 : i64, horizon = 39 : i64, initial_horizon = 39 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 32 : i64, moves = "partial sums of s1 tile.matmul", patterns = ["tiles 0..1 -> +1, 64 B each (2 transfers)", "tile 0 -> tile 2, 64 B", "tiles {1..2, 4} -> -1, 64 B each (3 transfers)", "tiles {2, 5} -> -2, 64 B each (2 transfers)"], row_words = 14 : i64, sym_name = "x1", transfers = 8 : i64} {
// CHECK-NEXT: exchange.move {dst = @s1.partials_in, runs = [array<i64: 1, 0, 0, 0, 0, 2, 0, 0, 64, 64, 64, 1, 0, 1, 1, 1, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 2, 1, 0, 0, 128, 64, 2, 64, 1, 1, 0, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 2, 2, 0, 0, 64, 64, 1, 0, 1, 1, 0, 0, 64, 0>, array<i64: 1, 0, 0, 0, 0, 2, 4, 1, 0, 0, 64, 0, 64, 1, 1, 3, 0, 0, 0>], src = @s1.partials}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 0 : i64, cycles = 145 : i64, label = "tile.matmul reduction", sym_name = "s1.reduce"} {
// CHECK-NEXT: exchange.vertex {kernel = "partials", name = "partials_add_f32_p2_n16", params = {N = 16 : i64, P = 2 : i64, TYPE = 0 : i64}, record = [@s1.partials, @s1.partials_in, @s1.result], tiles = "0, 3"}
// CHECK-NEXT: exchange.vertex {kernel = "partials", name = "partials_add_f32_p2_n16", params = {N = 16 : i64, P = 2 : i64, TYPE = 0 : i64}, record = {{\[\[}}@s1.partials, 64 : i64], @s1.partials_in, @s1.result], tiles = "1"}
// CHECK-NEXT: exchange.vertex {kernel = "partials", name = "partials_add_f32_p2_n16", params = {N = 16 : i64, P = 2 : i64, TYPE = 0 : i64}, record = {{\[\[}}@s1.partials, 128 : i64], @s1.partials_in, @s1.result], tiles = "2"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s1.reduce, buffer = @s1.result, mapping = {grid = array<i64: 6, 1>, tiles = array<i64: 0, 1>}, op = "tile.matmul", source = "114:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.phase attributes {bytes = 120 : i64, gap = 7 : i64, horizon = 13 : i64, initial_horizon = 13 : i64, kind = "compact-streams", local_bytes = 24 : i64, lower_bound = 6 : i64, moves = "operand #0 of s2 tile.map, operand #1 of s2 tile.map", patterns = ["tile 2 -> tile 1, 4 B each (6 transfers)", "tile 4 -> tile 2, 4 B each (6 transfers)", "tile 6 -> tile 3, 4 B each (6 transfers)", "tile 8 -> tile 4, 4 B each (6 transfers)", "tile 10 -> tile 5, 4 B each (6 transfers)"], row_words = 27 : i64, sym_name = "x2", transfers = 30 : i64} {
// CHECK-NEXT: exchange.move {dst = @s2.operand0, runs = [array<i64: 5, 2, 0, 1, 0, 3, 2, 0, 0, 8, 4, 0, 4, 1, 1, 1, 0, 0, 0>], src = @input0}
// CHECK-NEXT: exchange.move {dst = @s2.operand1, runs = [array<i64: 5, 2, 0, 1, 0, 3, 2, 0, 4, 8, 4, 0, 4, 1, 1, 1, 0, 0, 0>], src = @input0}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 1 : i64, cycles = 170 : i64, label = "tile.map max", sym_name = "s2"} {
// CHECK-NEXT: exchange.copy {dst = @s2.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 3, 0, 0, 0, 8, 4, 0, 4, 1, 1, 0, 0, 0, 0>], src = @input0}
// CHECK-NEXT: exchange.copy {dst = @s2.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 3, 0, 0, 4, 8, 4, 0, 4, 1, 1, 0, 0, 0, 0>], src = @input0}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_max_f32_n4", params = {N = 4 : i64, OP = 4 : i64, TYPE = 0 : i64}, record = [@s2.operand0, @s2.operand1, @s2.result, 1 : i64, [@s2.operand0, 8 : i64], [@s2.operand1, 8 : i64], [@s2.result, 8 : i64], 1 : i64, @s2.operand0, @s2.operand1, @s2.result, 0 : i64, @s2.operand0, @s2.operand1, @s2.result, 0 : i64, @s2.operand0, @s2.operand1, @s2.result, 0 : i64, @s2.operand0, @s2.operand1, @s2.result, 0 : i64], tiles = "0 to 5"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s2, buffer = @s2.result, mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "115:3", type = tensor<1x2x3x3xf32>}
// CHECK-NEXT: exchange.phase attributes {bytes = 72 : i64, gap = 7 : i64, horizon = 10 : i64, initial_horizon = 10 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 3 : i64, moves = "operand #1 of s3 tile.map", patterns = ["tile 1 -> tile 0, 4 B each (3 transfers)", "tile 3 -> tile 1, 4 B each (3 transfers)", "tile 5 -> tile 2, 4 B each (3 transfers)", "tile 7 -> tile 3, 4 B each (3 transfers)", "tile 9 -> tile 4, 4 B each (3 transfers)", "tile 11 -> tile 5, 4 B each (3 transfers)"], row_words = 15 : i64, sym_name = "x3", transfers = 18 : i64} {
// CHECK-NEXT: exchange.move {dst = @s3.operand1, runs = [array<i64: 6, 2, 0, 1, 0, 3, 1, 0, 0, 8, 4, 0, 4, 1, 1, 0, 0, 0, 0>], src = @input0}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 1 : i64, cycles = 74 : i64, label = "tile.map max", sym_name = "s3"} {
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_max_f32_n4", params = {N = 4 : i64, OP = 4 : i64, TYPE = 0 : i64}, record = [@s2.result, @s3.operand1, @s3.result, 1 : i64, [@s2.result, 8 : i64], [@s3.operand1, 8 : i64], [@s3.result, 8 : i64], 1 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64], tiles = "0 to 5"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s3, buffer = @s3.result, mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "115:3", type = tensor<1x2x3x3xf32>}
// CHECK-NEXT: exchange.phase attributes {bytes = 72 : i64, gap = 7 : i64, horizon = 10 : i64, initial_horizon = 10 : i64, kind = "reused", local_bytes = 0 : i64, lower_bound = 3 : i64, moves = "operand #1 of s4 tile.map", patterns = ["tile 1 -> tile 0, 4 B each (3 transfers)", "tile 3 -> tile 1, 4 B each (3 transfers)", "tile 5 -> tile 2, 4 B each (3 transfers)", "tile 7 -> tile 3, 4 B each (3 transfers)", "tile 9 -> tile 4, 4 B each (3 transfers)", "tile 11 -> tile 5, 4 B each (3 transfers)"], row_words = 15 : i64, sym_name = "x4", transfers = 18 : i64} {
// CHECK-NEXT: exchange.move {dst = @s4.operand1, runs = [array<i64: 6, 2, 0, 1, 0, 3, 1, 0, 4, 8, 4, 0, 4, 1, 1, 0, 0, 0, 0>], src = @input0}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 1 : i64, cycles = 74 : i64, label = "tile.map max", sym_name = "s4"} {
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_max_f32_n4", params = {N = 4 : i64, OP = 4 : i64, TYPE = 0 : i64}, record = [@s3.result, @s4.operand1, @s4.result, 1 : i64, [@s3.result, 8 : i64], [@s4.operand1, 8 : i64], [@s4.result, 8 : i64], 1 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64], tiles = "0 to 5"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s4, buffer = @s4.result, mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "115:3", type = tensor<1x2x3x3xf32>}
// CHECK-NEXT: exchange.phase attributes {bytes = 132 : i64, gap = 7 : i64, horizon = 16 : i64, initial_horizon = 16 : i64, kind = "compact-streams", local_bytes = 12 : i64, lower_bound = 9 : i64, moves = "output0 of tile.host_output", patterns = ["tile 0 -> tile 1, 12 B", "tiles 0..1 -> +2, 12 B each (2 transfers)", "tile 1 -> tile 4, 12 B", "tiles 1..2 -> +4, 12 B each (2 transfers)", "tile 2 -> tile 7, 12 B", "tiles 2..3 -> +6, 12 B each (2 transfers)", "tile 3 -> tile 10, 12 B", "tile 3 -> tile 11, 12 B"], row_words = 9 : i64, sym_name = "x5", transfers = 11 : i64} {
// CHECK-NEXT: exchange.move {dst = @output0, runs = [array<i64: 1, 0, 0, 0, 0, 2, 0, 0, 12, 12, 12, 1, 0, 1, 1, 1, 0, 0, 0>, array<i64: 3, 1, 0, 3, 0, 3, 1, 0, 0, 12, 12, 1, 0, 1, 1, 3, 0, 0, 0>], src = @s1.result}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 0 : i64, cycles = 32 : i64, label = "local copies", sym_name = "s5.copies"} {
// CHECK-NEXT: exchange.copy {dst = @output0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 12, 0, 0, 1, 1, 0, 0, 0, 0>], src = @s1.result}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: %0 = exchange.host_output {buffer = @output0, mapping = {grid = array<i64: 1, 4, 3, 1>, tiles = array<i64: 0, 1>}, name = "result0"} : tensor<1x4x3x3xf32>
// CHECK-NEXT: %1 = exchange.host_output {buffer = @s4.result, mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, name = "result1"} : tensor<1x2x3x3xf32>
// CHECK-NEXT: return %0, %1 : tensor<1x4x3x3xf32>, tensor<1x2x3x3xf32>

func.func @main(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> (tensor<1x4x3x3xf32>, tensor<1x2x3x3xf32>) {
  %0 = nn.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  %1 = nn.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
  return %0, %1 : tensor<1x4x3x3xf32>, tensor<1x2x3x3xf32>
}
