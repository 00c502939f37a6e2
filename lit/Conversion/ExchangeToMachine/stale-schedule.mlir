// The code generator schedules every phase's transfers again and checks
// the horizon the exchange stage recorded: a program whose recorded
// schedule does not match (here an edited horizon) is an error at the
// phase, not a program with a broken exchange.
// RUN: ipu-opt --verify-diagnostics --convert-exchange-to-machine %s

module attributes {ipu.target = "test4"} {
  func.func @main(%arg0: tensor<8x64xf16> {ipu.name = "x"}, %arg1: tensor<64x32xf16> {ipu.name = "w"}) -> (tensor<8x32xf16> {ipu.name = "y"}) attributes {exchange.compute_cycles = 1202 : i64, exchange.estimated_cycles = 2212 : i64, exchange.exchange_cycles = 650 : i64, exchange.steps = 4 : i64} {
    exchange.buffer {bytes = 512 : i64, interleaved, sym_name = "input0", tiles = "0 to 1"}
    exchange.buffer {bytes = 1024 : i64, interleaved, sym_name = "input1", tiles = "0 to 3"}
    exchange.buffer {bytes = 512 : i64, interleaved, reads = [{ranges = array<i64: 1, 512, 512>, tiles = "1 to 3"}], sym_name = "s1.operand0", tiles = "1 to 3"}
    exchange.buffer {bytes = 512 : i64, interleaved, sym_name = "s1.partials", tiles = "0 to 3"}
    exchange.buffer {bytes = 512 : i64, interleaved, sym_name = "s1.partials_in", tiles = "0 to 1"}
    exchange.buffer {bytes = 256 : i64, sym_name = "s1.result", tiles = "0 to 1"}
    exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}} : tensor<8x64xf16>
    exchange.host_input %arg1 {buffer = @input1, mapping = {grid = array<i64: 2, 2>, tiles = array<i64: 0, 1>}} : tensor<64x32xf16>
    // expected-error@+1 {{'exchange.phase' op @x0: records horizon 120, but the schedule of its transfers has horizon 135; run convert-tile-to-exchange again after changing the program}}
    exchange.phase attributes {bytes = 1536 : i64, gap = 7 : i64, horizon = 120 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 0 -> tile 1, 512 B", "tile 1 -> tiles 2..3, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} {
      exchange.move {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 512, 0, 0, 1, 1, 1, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 512, 0, 0, 1, 2, 2, 1, 0, 0>], src = @input0}
    }
    exchange.sync
    exchange.compute_set attributes {cycles = 688 : i64, label = "tile.matmul", sym_name = "s1"} {
      exchange.vertex {kernel = "gemm_amp", name = "gemm_f16f32_interleaved_k32_c16_r1_r2_m8", params = {K = 32 : i64, M = 8 : i64, N = 16 : i64, TYPE = 0 : i64}, record = [@s1.operand0, @input1, @s1.partials, 0 : i64], scratch = 240 : i64, tiles = "1 to 3"}
      exchange.vertex {kernel = "gemm_amp", name = "gemm_f16f32_interleaved_k32_c16_r1_r2_m8", params = {K = 32 : i64, M = 8 : i64, N = 16 : i64, TYPE = 0 : i64}, record = [@input0, @input1, @s1.partials, 0 : i64], scratch = 240 : i64, tiles = "0"}
    }
    exchange.sync
    exchange.phase attributes {bytes = 1024 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "partial sums of s1 tile.matmul", patterns = ["tiles 2..3 -> -2, 512 B each (2 transfers)"], row_words = 6 : i64, sym_name = "x1", transfers = 2 : i64} {
      exchange.move {dst = @s1.partials_in, runs = [array<i64: 1, 0, 0, 0, 0, 2, 2, 1, 0, 0, 512, 1, 0, 1, 1, 0, 0, 0, 0>], src = @s1.partials}
    }
    exchange.sync
    exchange.compute_set attributes {cycles = 514 : i64, label = "tile.matmul reduction", sym_name = "s1.reduce"} {
      exchange.vertex {kernel = "elementwise", name = "ew_add_f32_n128", params = {N = 128 : i64, OP = 0 : i64, TYPE = 0 : i64}, record = [@s1.partials, @s1.partials_in, @s1.partials, 11 : i64, [@s1.partials, 88 : i64], [@s1.partials_in, 88 : i64], [@s1.partials, 88 : i64], 11 : i64, [@s1.partials, 176 : i64], [@s1.partials_in, 176 : i64], [@s1.partials, 176 : i64], 11 : i64, [@s1.partials, 264 : i64], [@s1.partials_in, 264 : i64], [@s1.partials, 264 : i64], 11 : i64, [@s1.partials, 352 : i64], [@s1.partials_in, 352 : i64], [@s1.partials, 352 : i64], 10 : i64, [@s1.partials, 432 : i64], [@s1.partials_in, 432 : i64], [@s1.partials, 432 : i64], 10 : i64], tiles = "0 to 1"}
      exchange.vertex {kernel = "cast", name = "cast_f32_f16_n128", params = {FROM = 0 : i64, N = 128 : i64, TO = 1 : i64}, record = [@s1.partials, @s1.result, 6 : i64, 0 : i64, 0 : i64, [@s1.partials, 96 : i64], [@s1.result, 48 : i64], 6 : i64, 0 : i64, 0 : i64, [@s1.partials, 192 : i64], [@s1.result, 96 : i64], 5 : i64, 0 : i64, 0 : i64, [@s1.partials, 272 : i64], [@s1.result, 136 : i64], 5 : i64, 0 : i64, 0 : i64, [@s1.partials, 352 : i64], [@s1.result, 176 : i64], 5 : i64, 0 : i64, 0 : i64, [@s1.partials, 432 : i64], [@s1.result, 216 : i64], 5 : i64, 0 : i64, 0 : i64], tiles = "0 to 1"}
    }
    exchange.sync
    %0 = exchange.host_output {buffer = @s1.result, mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<8x32xf16>
    return %0 : tensor<8x32xf16>
  }
}
