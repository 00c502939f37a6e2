// convert-exchange-to-machine reads only the exchange stage and checks it
// before anything expensive: a hand-edited program whose phases no longer
// deliver what its compute sets read, or that refers to storage a tile does
// not have, is refused with a diagnostic at the op.
// RUN: ipu-opt --verify-diagnostics --split-input-file --convert-exchange-to-machine %s

// A phase that no longer delivers what its compute set reads (the run to tiles 2 and 3 removed).
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
    // expected-error@+1 {{exchange.phase @x0 does not deliver bytes [0, 512) of @s1.operand0 on tile 2, which the next compute set reads}}
    exchange.phase attributes {bytes = 1536 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 0 -> tile 1, 512 B", "tile 1 -> tiles 2..3, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} {
      exchange.move {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 512, 0, 0, 1, 1, 1, 0, 0, 0>], src = @input0}
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

// -----

// A phase that writes bytes twice (a run repeated).
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
    // expected-error@+1 {{writes bytes [0, 512) of @s1.operand0 on tile 1 a second time}}
    exchange.phase attributes {bytes = 1536 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 0 -> tile 1, 512 B", "tile 1 -> tiles 2..3, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} {
      exchange.move {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 512, 0, 0, 1, 1, 1, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 512, 0, 0, 1, 1, 1, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 512, 0, 0, 1, 2, 2, 1, 0, 0>], src = @input0}
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

// -----

// A transfer from a tile that does not hold its source.
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
    // expected-error@+1 {{exchange.phase @x0 reads bytes [0, 512) of @input0 on tile 3, which does not hold them}}
    exchange.phase attributes {bytes = 1536 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 0 -> tile 1, 512 B", "tile 1 -> tiles 2..3, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} {
      exchange.move {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 512, 0, 0, 1, 1, 1, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 3, 0, 0, 0, 512, 0, 0, 1, 2, 2, 1, 0, 0>], src = @input0}
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

// -----

// A vertex on a tile where its buffer is not.
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
    exchange.phase attributes {bytes = 1536 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 0 -> tile 1, 512 B", "tile 1 -> tiles 2..3, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} {
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
    // expected-error@+1 {{compute set s1.reduce refers to @s1.partials_in on tile 2, where it is not}}
    exchange.compute_set attributes {cycles = 514 : i64, label = "tile.matmul reduction", sym_name = "s1.reduce"} {
      exchange.vertex {kernel = "elementwise", name = "ew_add_f32_n128", params = {N = 128 : i64, OP = 0 : i64, TYPE = 0 : i64}, record = [@s1.partials, @s1.partials_in, @s1.partials, 11 : i64, [@s1.partials, 88 : i64], [@s1.partials_in, 88 : i64], [@s1.partials, 88 : i64], 11 : i64, [@s1.partials, 176 : i64], [@s1.partials_in, 176 : i64], [@s1.partials, 176 : i64], 11 : i64, [@s1.partials, 264 : i64], [@s1.partials_in, 264 : i64], [@s1.partials, 264 : i64], 11 : i64, [@s1.partials, 352 : i64], [@s1.partials_in, 352 : i64], [@s1.partials, 352 : i64], 10 : i64, [@s1.partials, 432 : i64], [@s1.partials_in, 432 : i64], [@s1.partials, 432 : i64], 10 : i64], tiles = "0 to 2"}
      exchange.vertex {kernel = "cast", name = "cast_f32_f16_n128", params = {FROM = 0 : i64, N = 128 : i64, TO = 1 : i64}, record = [@s1.partials, @s1.result, 6 : i64, 0 : i64, 0 : i64, [@s1.partials, 96 : i64], [@s1.result, 48 : i64], 6 : i64, 0 : i64, 0 : i64, [@s1.partials, 192 : i64], [@s1.result, 96 : i64], 5 : i64, 0 : i64, 0 : i64, [@s1.partials, 272 : i64], [@s1.result, 136 : i64], 5 : i64, 0 : i64, 0 : i64, [@s1.partials, 352 : i64], [@s1.result, 176 : i64], 5 : i64, 0 : i64, 0 : i64, [@s1.partials, 432 : i64], [@s1.result, 216 : i64], 5 : i64, 0 : i64, 0 : i64], tiles = "0 to 1"}
    }
    exchange.sync
    %0 = exchange.host_output {buffer = @s1.result, mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<8x32xf16>
    return %0 : tensor<8x32xf16>
  }
}

// -----

// A reference to a buffer no exchange.buffer declares.
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
    exchange.phase attributes {bytes = 1536 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 0 -> tile 1, 512 B", "tile 1 -> tiles 2..3, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} {
      exchange.move {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 512, 0, 0, 1, 1, 1, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 512, 0, 0, 1, 2, 2, 1, 0, 0>], src = @input0}
    }
    exchange.sync
    exchange.compute_set attributes {cycles = 688 : i64, label = "tile.matmul", sym_name = "s1"} {
      exchange.vertex {kernel = "gemm_amp", name = "gemm_f16f32_interleaved_k32_c16_r1_r2_m8", params = {K = 32 : i64, M = 8 : i64, N = 16 : i64, TYPE = 0 : i64}, record = [@s1.operand0, @input1, @s1.partials, 0 : i64], scratch = 240 : i64, tiles = "1 to 3"}
      exchange.vertex {kernel = "gemm_amp", name = "gemm_f16f32_interleaved_k32_c16_r1_r2_m8", params = {K = 32 : i64, M = 8 : i64, N = 16 : i64, TYPE = 0 : i64}, record = [@input0, @input1, @s1.partials, 0 : i64], scratch = 240 : i64, tiles = "0"}
    }
    exchange.sync
    exchange.phase attributes {bytes = 1024 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "partial sums of s1 tile.matmul", patterns = ["tiles 2..3 -> -2, 512 B each (2 transfers)"], row_words = 6 : i64, sym_name = "x1", transfers = 2 : i64} {
      // expected-error@+1 {{'exchange.move' op refers to @nosuch, which no exchange.buffer declares}}
      exchange.move {dst = @s1.partials_in, runs = [array<i64: 1, 0, 0, 0, 0, 2, 2, 1, 0, 0, 512, 1, 0, 1, 1, 0, 0, 0, 0>], src = @nosuch}
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

// -----

// A vertex whose name is not its kernel's specialisation.
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
    exchange.phase attributes {bytes = 1536 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 0 -> tile 1, 512 B", "tile 1 -> tiles 2..3, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} {
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
      // expected-error@+1 {{'exchange.vertex' op is named 'cast_f32_f16_n64', but kernel 'cast' with these params is 'cast_f32_f16_n128'}}
      exchange.vertex {kernel = "cast", name = "cast_f32_f16_n64", params = {FROM = 0 : i64, N = 128 : i64, TO = 1 : i64}, record = [@s1.partials, @s1.result, 6 : i64, 0 : i64, 0 : i64, [@s1.partials, 96 : i64], [@s1.result, 48 : i64], 6 : i64, 0 : i64, 0 : i64, [@s1.partials, 192 : i64], [@s1.result, 96 : i64], 5 : i64, 0 : i64, 0 : i64, [@s1.partials, 272 : i64], [@s1.result, 136 : i64], 5 : i64, 0 : i64, 0 : i64, [@s1.partials, 352 : i64], [@s1.result, 176 : i64], 5 : i64, 0 : i64, 0 : i64, [@s1.partials, 432 : i64], [@s1.result, 216 : i64], 5 : i64, 0 : i64, 0 : i64], tiles = "0 to 1"}
    }
    exchange.sync
    %0 = exchange.host_output {buffer = @s1.result, mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<8x32xf16>
    return %0 : tensor<8x32xf16>
  }
}

// -----

// A superstep not ended by a sync.
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
    exchange.phase attributes {bytes = 1536 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 0 -> tile 1, 512 B", "tile 1 -> tiles 2..3, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} {
      exchange.move {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 512, 0, 0, 1, 1, 1, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 512, 0, 0, 1, 2, 2, 1, 0, 0>], src = @input0}
    }
    exchange.sync
    // expected-error@+1 {{'exchange.compute_set' op is not followed by an exchange.sync; every superstep ends with one}}
    exchange.compute_set attributes {cycles = 688 : i64, label = "tile.matmul", sym_name = "s1"} {
      exchange.vertex {kernel = "gemm_amp", name = "gemm_f16f32_interleaved_k32_c16_r1_r2_m8", params = {K = 32 : i64, M = 8 : i64, N = 16 : i64, TYPE = 0 : i64}, record = [@s1.operand0, @input1, @s1.partials, 0 : i64], scratch = 240 : i64, tiles = "1 to 3"}
      exchange.vertex {kernel = "gemm_amp", name = "gemm_f16f32_interleaved_k32_c16_r1_r2_m8", params = {K = 32 : i64, M = 8 : i64, N = 16 : i64, TYPE = 0 : i64}, record = [@input0, @input1, @s1.partials, 0 : i64], scratch = 240 : i64, tiles = "0"}
    }
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

// -----

// A buffer on a tile the target does not have.
module attributes {ipu.target = "test4"} {
  func.func @main(%arg0: tensor<8x64xf16> {ipu.name = "x"}, %arg1: tensor<64x32xf16> {ipu.name = "w"}) -> (tensor<8x32xf16> {ipu.name = "y"}) attributes {exchange.compute_cycles = 1202 : i64, exchange.estimated_cycles = 2212 : i64, exchange.exchange_cycles = 650 : i64, exchange.steps = 4 : i64} {
    exchange.buffer {bytes = 512 : i64, interleaved, sym_name = "input0", tiles = "0 to 1"}
    exchange.buffer {bytes = 1024 : i64, interleaved, sym_name = "input1", tiles = "0 to 3"}
    exchange.buffer {bytes = 512 : i64, interleaved, reads = [{ranges = array<i64: 1, 512, 512>, tiles = "1 to 3"}], sym_name = "s1.operand0", tiles = "1 to 3"}
    // expected-error@+1 {{buffer @s1.partials is on tile 9, but target test4 has 4 tiles}}
    exchange.buffer {bytes = 512 : i64, interleaved, sym_name = "s1.partials", tiles = "0 to 3, 9"}
    exchange.buffer {bytes = 512 : i64, interleaved, sym_name = "s1.partials_in", tiles = "0 to 1"}
    exchange.buffer {bytes = 256 : i64, sym_name = "s1.result", tiles = "0 to 1"}
    exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}} : tensor<8x64xf16>
    exchange.host_input %arg1 {buffer = @input1, mapping = {grid = array<i64: 2, 2>, tiles = array<i64: 0, 1>}} : tensor<64x32xf16>
    exchange.phase attributes {bytes = 1536 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 0 -> tile 1, 512 B", "tile 1 -> tiles 2..3, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} {
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

// -----

// A tile-stage op is not lowered by the machine stage.
module attributes {ipu.target = "test4"} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{'tile.host_input' op is not an exchange-stage op; convert-exchange-to-machine reads only the exchange dialect}}
    %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 1>, tiles = array<i64: 0, 1>}} : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// A tile set of billions of tiles is refused before it is listed.
module attributes {ipu.target = "test4"} {
  func.func @main(%arg0: tensor<8x32xf16> {ipu.name = "x"}) -> (tensor<8x32xf16> {ipu.name = "y"}) attributes {exchange.compute_cycles = 558 : i64, exchange.estimated_cycles = 1034 : i64, exchange.exchange_cycles = 206 : i64, exchange.steps = 3 : i64} {
    // expected-error@+1 {{'exchange.buffer' op tiles: the run from tile 0 goes beyond the 1048576 tiles a package can hold}}
    exchange.buffer {bytes = 128 : i64, sym_name = "input0", tiles = "0 to 4000000000"}
    exchange.buffer {bytes = 16 : i64, sym_name = "const0", tiles = "0 to 3"}
    exchange.buffer {bytes = 64 : i64, interleaved, reads = [{ranges = array<i64: 1, 64, 64>, tiles = "0 to 3"}], sym_name = "s1.operand1", tiles = "0 to 3"}
    exchange.buffer {bytes = 128 : i64, sym_name = "s1.result", tiles = "0 to 3"}
    exchange.buffer {bytes = 128 : i64, sym_name = "s2.result", tiles = "0 to 3"}
    exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : tensor<8x32xf16>
    exchange.constant {buffer = @const0, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, value = dense<0.5> : tensor<32xf16>}
    exchange.phase attributes {bytes = 192 : i64, gap = 8 : i64, horizon = 16 : i64, initial_horizon = 25 : i64, kind = "paired", local_bytes = 64 : i64, lower_bound = 8 : i64, moves = "operand #1 of s1 tile.map", patterns = ["tile 1 -> tiles {0, 2..3}, 16 B", "tile 2 -> tiles {0..1, 3}, 16 B", "tile 3 -> tiles 0..2, 16 B", "tile 0 -> tiles 1..3, 16 B"], row_words = 17 : i64, sym_name = "x0", transfers = 4 : i64} {
      exchange.move {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 16, 0, 0, 2, 2, 0, 2, 16, 0, 1, 3, 0, 16, 0>, array<i64: 1, 0, 0, 0, 0, 1, 2, 0, 0, 0, 16, 0, 0, 2, 2, 0, 1, 32, 0, 1, 3, 0, 32, 0>, array<i64: 1, 0, 0, 0, 0, 2, 3, -3, 0, 0, 16, 1, -48, 1, 3, 0, 1, 48, 0>], src = @const0}
    }
    exchange.sync
    exchange.compute_set attributes {cycles = 412 : i64, label = "tile.map add", sym_name = "s1"} {
      exchange.copy {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 4, 0, 1, 0, 0, 16, 1, 16, 1, 1, 0, 0, 0, 0>], src = @const0}
      exchange.vertex {kernel = "rows", name = "rows_add_row_vector_f16_r2_c32", params = {C = 32 : i64, OP = 6 : i64, R = 2 : i64, TYPE = 1 : i64}, record = [@input0, 0 : i64, @s1.operand1, 0 : i64, @s1.result], tiles = "0 to 3"}
    }
    exchange.sync
    exchange.compute_set attributes {cycles = 146 : i64, label = "tile.map relu", sym_name = "s2"} {
      exchange.vertex {kernel = "elementwise", name = "ew_relu_f16_n64", params = {N = 64 : i64, OP = 16 : i64, TYPE = 1 : i64}, record = [@s1.result, 0 : i64, @s2.result, 3 : i64, [@s1.result, 24 : i64], 0 : i64, [@s2.result, 24 : i64], 3 : i64, [@s1.result, 48 : i64], 0 : i64, [@s2.result, 48 : i64], 3 : i64, [@s1.result, 72 : i64], 0 : i64, [@s2.result, 72 : i64], 3 : i64, [@s1.result, 96 : i64], 0 : i64, [@s2.result, 96 : i64], 2 : i64, [@s1.result, 112 : i64], 0 : i64, [@s2.result, 112 : i64], 2 : i64], tiles = "0 to 3"}
    }
    exchange.sync
    %0 = exchange.host_output {buffer = @s2.result, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<8x32xf16>
    return %0 : tensor<8x32xf16>
  }
}

// -----

// A mapping of billions of (mostly empty) blocks is refused before they are listed.
module attributes {ipu.target = "test4"} {
  func.func @main(%arg0: tensor<8x32xf16> {ipu.name = "x"}) -> (tensor<8x32xf16> {ipu.name = "y"}) attributes {exchange.compute_cycles = 558 : i64, exchange.estimated_cycles = 1034 : i64, exchange.exchange_cycles = 206 : i64, exchange.steps = 3 : i64} {
    exchange.buffer {bytes = 128 : i64, sym_name = "input0", tiles = "0 to 3"}
    exchange.buffer {bytes = 16 : i64, sym_name = "const0", tiles = "0 to 3"}
    exchange.buffer {bytes = 64 : i64, interleaved, reads = [{ranges = array<i64: 1, 64, 64>, tiles = "0 to 3"}], sym_name = "s1.operand1", tiles = "0 to 3"}
    exchange.buffer {bytes = 128 : i64, sym_name = "s1.result", tiles = "0 to 3"}
    exchange.buffer {bytes = 128 : i64, sym_name = "s2.result", tiles = "0 to 3"}
    exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : tensor<8x32xf16>
    exchange.constant {buffer = @const0, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, value = dense<0.5> : tensor<32xf16>}
    exchange.phase attributes {bytes = 192 : i64, gap = 8 : i64, horizon = 16 : i64, initial_horizon = 25 : i64, kind = "paired", local_bytes = 64 : i64, lower_bound = 8 : i64, moves = "operand #1 of s1 tile.map", patterns = ["tile 1 -> tiles {0, 2..3}, 16 B", "tile 2 -> tiles {0..1, 3}, 16 B", "tile 3 -> tiles 0..2, 16 B", "tile 0 -> tiles 1..3, 16 B"], row_words = 17 : i64, sym_name = "x0", transfers = 4 : i64} {
      exchange.move {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 16, 0, 0, 2, 2, 0, 2, 16, 0, 1, 3, 0, 16, 0>, array<i64: 1, 0, 0, 0, 0, 1, 2, 0, 0, 0, 16, 0, 0, 2, 2, 0, 1, 32, 0, 1, 3, 0, 32, 0>, array<i64: 1, 0, 0, 0, 0, 2, 3, -3, 0, 0, 16, 1, -48, 1, 3, 0, 1, 48, 0>], src = @const0}
    }
    exchange.sync
    exchange.compute_set attributes {cycles = 412 : i64, label = "tile.map add", sym_name = "s1"} {
      exchange.copy {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 4, 0, 1, 0, 0, 16, 1, 16, 1, 1, 0, 0, 0, 0>], src = @const0}
      exchange.vertex {kernel = "rows", name = "rows_add_row_vector_f16_r2_c32", params = {C = 32 : i64, OP = 6 : i64, R = 2 : i64, TYPE = 1 : i64}, record = [@input0, 0 : i64, @s1.operand1, 0 : i64, @s1.result], tiles = "0 to 3"}
    }
    exchange.sync
    exchange.compute_set attributes {cycles = 146 : i64, label = "tile.map relu", sym_name = "s2"} {
      exchange.vertex {kernel = "elementwise", name = "ew_relu_f16_n64", params = {N = 64 : i64, OP = 16 : i64, TYPE = 1 : i64}, record = [@s1.result, 0 : i64, @s2.result, 3 : i64, [@s1.result, 24 : i64], 0 : i64, [@s2.result, 24 : i64], 3 : i64, [@s1.result, 48 : i64], 0 : i64, [@s2.result, 48 : i64], 3 : i64, [@s1.result, 72 : i64], 0 : i64, [@s2.result, 72 : i64], 3 : i64, [@s1.result, 96 : i64], 0 : i64, [@s2.result, 96 : i64], 2 : i64, [@s1.result, 112 : i64], 0 : i64, [@s2.result, 112 : i64], 2 : i64], tiles = "0 to 3"}
    }
    exchange.sync
    // expected-error@+1 {{has a mapping whose blocks reach tile 4294967294, but target test4 has 4 tiles}}
    %0 = exchange.host_output {buffer = @s2.result, mapping = {grid = array<i64: 4294967295, 1>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<8x32xf16>
    return %0 : tensor<8x32xf16>
  }
}

// -----

// A buffer the GEMM streams with paired loads (its weights) not flagged
// `interleaved`: placement could put it where those loads fault. (Checked
// at the compute set, before the phases' deliveries, so the first case's
// short phase is not reported here.)
module attributes {ipu.target = "test4"} {
  func.func @main(%arg0: tensor<8x64xf16> {ipu.name = "x"}, %arg1: tensor<64x32xf16> {ipu.name = "w"}) -> (tensor<8x32xf16> {ipu.name = "y"}) attributes {exchange.compute_cycles = 1202 : i64, exchange.estimated_cycles = 2212 : i64, exchange.exchange_cycles = 650 : i64, exchange.steps = 4 : i64} {
    exchange.buffer {bytes = 512 : i64, interleaved, sym_name = "input0", tiles = "0 to 1"}
    exchange.buffer {bytes = 1024 : i64, sym_name = "input1", tiles = "0 to 3"}
    exchange.buffer {bytes = 512 : i64, interleaved, reads = [{ranges = array<i64: 1, 512, 512>, tiles = "1 to 3"}], sym_name = "s1.operand0", tiles = "1 to 3"}
    exchange.buffer {bytes = 512 : i64, interleaved, sym_name = "s1.partials", tiles = "0 to 3"}
    exchange.buffer {bytes = 512 : i64, interleaved, sym_name = "s1.partials_in", tiles = "0 to 1"}
    exchange.buffer {bytes = 256 : i64, sym_name = "s1.result", tiles = "0 to 1"}
    exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}} : tensor<8x64xf16>
    exchange.host_input %arg1 {buffer = @input1, mapping = {grid = array<i64: 2, 2>, tiles = array<i64: 0, 1>}} : tensor<64x32xf16>
    exchange.phase attributes {bytes = 1536 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "operand #0 of s1 tile.matmul", patterns = ["tile 0 -> tile 1, 512 B", "tile 1 -> tiles 2..3, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} {
      exchange.move {dst = @s1.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 512, 0, 0, 1, 1, 1, 0, 0, 0>], src = @input0}
    }
    exchange.sync
    // expected-error@+1 {{compute set s1: gemm_f16f32_interleaved_k32_c16_r1_r2_m8 reads @input1 (record word 1) with paired 64-bit loads, but @input1 is not `interleaved`}}
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
