// convert-tile-to-exchange rebuilds a row op's calls from its operands and
// mapping: a tile op recording another kernel, or cut where the kernels
// cannot go, is refused at the op.
// RUN: ipu-opt --split-input-file --verify-diagnostics --target test16 --convert-tile-to-exchange %s

func.func @stale_kernel(%arg0: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : tensor<8x64xf32>
  // expected-error@+1 {{'tile.softmax' op records kernel 'rows_softmax_f32_r4_c64', but its operands and mapping call for 'rows_softmax_f32_r2_c64'}}
  %1 = tile.softmax %0 {axis = 1 : i64, cycles = 1 : i64, kernel = "rows_softmax_f32_r4_c64", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  tile.host_output %1 {name = "y"} : tensor<8x64xf32>
  return %1 : tensor<8x64xf32>
}

// -----

func.func @uneven_reduced_axis(%arg0: tensor<8x64xf32>) -> tensor<8xf32> {
  %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : tensor<8x64xf32>
  // expected-error@+1 {{'tile.reduce' op cuts reduced axis 1 of 64 into 3 uneven blocks}}
  %1 = tile.reduce %0 {axes = array<i64: 1>, cycles = 1 : i64, grid = array<i64: 4, 3>, kernel = "k", kind = "sum", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 3>}, tiles = array<i64: 0, 1>} : tensor<8x64xf32> -> tensor<8xf32>
  tile.host_output %1 {name = "y"} : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

func.func @layer_norm_rows(%arg0: tensor<8x6xf16>) -> tensor<8x6xf16> {
  %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 8, 1>, tiles = array<i64: 0, 1>}} : tensor<8x6xf16>
  // expected-error@+1 {{'tile.layer_norm' op has rows of 6 f16 elements (12 bytes) on a tile, which are not whole 64-bit granules as the row kernels need}}
  %1 = tile.layer_norm %0 {axis = 1 : i64, cycles = 1 : i64, epsilon = 1.0e-05 : f32, kernel = "k", mapping = {grid = array<i64: 8, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x6xf16>) -> tensor<8x6xf16>
  tile.host_output %1 {name = "y"} : tensor<8x6xf16>
  return %1 : tensor<8x6xf16>
}
