// convert-tile-to-exchange refuses, at the op, tile IR it cannot lower for
// the target: here mappings whose blocks reach beyond the target's tiles,
// refused before any block is listed (a grid can have billions of them).
// RUN: ipu-opt --split-input-file --verify-diagnostics --convert-tile-to-exchange %s

module attributes {ipu.target = "test4"} {
  func.func @main(%arg0: tensor<8x32xf16> {ipu.name = "x"}) -> (tensor<8x32xf16> {ipu.name = "y"}) {
    // expected-error@+1 {{'tile.host_input' op has a mapping whose blocks reach tile 4294967294, but target test4 has 4 tiles}}
    %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 4294967295, 1>, tiles = array<i64: 0, 1>}} : tensor<8x32xf16>
    %1 = tile.map %0 {cycles = 146 : i64, fn = #tile.fn<relu>, kernel = "ew_relu_f16_n64", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x32xf16>) -> tensor<8x32xf16>
    tile.host_output %1 {name = "y"} : tensor<8x32xf16>
    return %1 : tensor<8x32xf16>
  }
}

// -----

module attributes {ipu.target = "test4"} {
  func.func @main(%arg0: tensor<8x32xf16> {ipu.name = "x"}) -> (tensor<8x32xf16> {ipu.name = "y"}) {
    %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : tensor<8x32xf16>
    // expected-error@+1 {{'tile.map' op has a mapping whose blocks reach tile 4, but target test4 has 4 tiles}}
    %1 = tile.map %0 {cycles = 146 : i64, fn = #tile.fn<relu>, kernel = "ew_relu_f16_n64", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 1, 1>}} : (tensor<8x32xf16>) -> tensor<8x32xf16>
    tile.host_output %1 {name = "y"} : tensor<8x32xf16>
    return %1 : tensor<8x32xf16>
  }
}

// -----

// A matmul given its rhs transposed whose K block needs K-chunks: the BT
// form of the GEMM loads each bank column by column from B's rows, whole
// K at a time, so it is refused at the op.
module attributes {ipu.target = "test4"} {
  func.func @main(%arg0: tensor<8x1024xf16> {ipu.name = "x"}, %arg1: tensor<32x1024xf16> {ipu.name = "w"}) -> (tensor<8x32xf16> {ipu.name = "y"}) {
    %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}} : tensor<8x1024xf16>
    %1 = tile.host_input %arg1 {mapping = {grid = array<i64: 2, 1>, tiles = array<i64: 0, 1>}} : tensor<32x1024xf16>
    // expected-error@+1 {{'tile.matmul' op reads its rhs transposed ([N, K]), which the GEMM takes only with K in one chunk, but its K block of 1024 needs chunks of 128 (16 columns of 128 fill an AMP bank)}}
    %2 = tile.matmul %0, %1 {cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, partials = f16, plan = array<i64: 1, 2, 1>, rhs_transposed, tiles = array<i64: 0, 1>} : (tensor<8x1024xf16>, tensor<32x1024xf16>) -> tensor<8x32xf16>
    tile.host_output %2 {name = "y"} : tensor<8x32xf16>
    return %2 : tensor<8x32xf16>
  }
}
