// The code generator schedules every phase again and checks it against
// what the exchange stage recorded: a program whose recorded schedule does
// not match (here an edited horizon) is an error at the phase, not a
// program with a broken exchange.
// RUN: ipu-opt --verify-diagnostics --convert-exchange-to-machine %s

module attributes {ipu.target = "test4"} {
  func.func @main(%arg0: tensor<8x64xf16> {ipu.name = "x"}, %arg1: tensor<64x32xf16> {ipu.name = "w"}) -> (tensor<8x32xf16> {ipu.name = "y"}) {
    %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}} : tensor<8x64xf16>
    %1 = tile.host_input %arg1 {mapping = {grid = array<i64: 2, 2>, tiles = array<i64: 0, 1>}} : tensor<64x32xf16>
    // expected-error@+1 {{'exchange.phase' op records horizon 120, but the code generator's schedule of this phase has horizon 135}}
    exchange.phase %0 {bytes = 1536 : i64, gap = 7 : i64, horizon = 120 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 512 : i64, lower_bound = 128 : i64, moves = "operand #0", patterns = ["tile 0 -> tile 1, 512 B", "tile 1 -> tiles 2..3, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} : tensor<8x64xf16>
    %2 = tile.matmul %0, %1 {cycles = 743 : i64, kernel = "gemm_f16_f32_m8_k32_n16", mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2, 2>, tiles = array<i64: 0, 1>} : (tensor<8x64xf16>, tensor<64x32xf16>) -> tensor<8x32xf16>
    exchange.phase %2 {bytes = 1024 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "partial sums", patterns = ["tiles 2..3 -> -2, 512 B each (2 transfers)"], row_words = 6 : i64, sym_name = "x1", transfers = 2 : i64} : tensor<8x32xf16>
    tile.host_output %2 {name = "y"} : tensor<8x32xf16>
    return %2 : tensor<8x32xf16>
  }
}
