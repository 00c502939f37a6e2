// The row family's tile ops check their mappings, axes and operands.
// RUN: ipu-opt --split-input-file --verify-diagnostics %s

func.func @reduce_round_trip(%x: tensor<8x64xf32>) -> tensor<8x1xf32> {
  %y = tile.reduce %x {axes = array<i64: 1>, cycles = 1 : i64, grid = array<i64: 4, 2>, keepdims, kernel = "k", kind = "mean", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 2>}, tiles = array<i64: 0, 1>} : tensor<8x64xf32> -> tensor<8x1xf32>
  return %y : tensor<8x1xf32>
}

// -----

func.func @reduce_result_shape(%x: tensor<8x64xf32>) -> tensor<8x1xf32> {
  // expected-error@+1 {{'tile.reduce' op the result must be the input's element type with shape [8]}}
  %y = tile.reduce %x {axes = array<i64: 1>, cycles = 1 : i64, grid = array<i64: 4, 1>, kernel = "k", kind = "sum", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, tiles = array<i64: 0, 1>} : tensor<8x64xf32> -> tensor<8x1xf32>
  return %y : tensor<8x1xf32>
}

// -----

func.func @reduce_axes(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'tile.reduce' op axes [1, 1] must be sorted, unique and within rank 2, and not empty}}
  %y = tile.reduce %x {axes = array<i64: 1, 1>, cycles = 1 : i64, grid = array<i64: 4, 1>, kernel = "k", kind = "sum", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, tiles = array<i64: 0, 1>} : tensor<8x64xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @reduce_kind(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'tile.reduce' op attribute 'kind' failed to satisfy constraint: reduction kind}}
  %y = tile.reduce %x {axes = array<i64: 1>, cycles = 1 : i64, grid = array<i64: 4, 1>, kernel = "k", kind = "prod", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, tiles = array<i64: 0, 1>} : tensor<8x64xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @reduce_mapping(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'tile.reduce' op the result mapping's grid must be the input grid on the kept axes, [4]}}
  %y = tile.reduce %x {axes = array<i64: 1>, cycles = 1 : i64, grid = array<i64: 4, 2>, kernel = "k", kind = "max", mapping = {grid = array<i64: 2>, tiles = array<i64: 0, 1>}, tiles = array<i64: 0, 1>} : tensor<8x64xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @reduce_tiles(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'tile.reduce' op tiles must be [first, stride]}}
  %y = tile.reduce %x {axes = array<i64: 1>, cycles = 1 : i64, grid = array<i64: 4, 1>, kernel = "k", kind = "min", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, tiles = array<i64: 0>} : tensor<8x64xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @softmax_cut_axis(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error@+1 {{'tile.softmax' op the mapping cuts the axis of 64 into 3 uneven blocks}}
  %y = tile.softmax %x {axis = 1 : i64, cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 4, 3>, tiles = array<i64: 0, 1>}} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @softmax_axis(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error@+1 {{'tile.softmax' op axis 2 is out of range for rank 2}}
  %y = tile.softmax %x {axis = 2 : i64, cycles = 1 : i64, kernel = "k", log, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @layer_norm_params(%x: tensor<8x64xf32>, %g: tensor<32xf32>) -> tensor<8x64xf32> {
  // expected-error@+1 {{'tile.layer_norm' op operand #1 has 32 elements, but the normalized shape [64] has 64}}
  %y = tile.layer_norm %x, %g {axis = 1 : i64, cycles = 1 : i64, epsilon = 1.0e-05 : f32, kernel = "k", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x64xf32>, tensor<32xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @layer_norm_cut(%x: tensor<8x4x16xf32>) -> tensor<8x4x16xf32> {
  // expected-error@+1 {{'tile.layer_norm' op the mapping may cut only the first normalized dimension, and evenly}}
  %y = tile.layer_norm %x {axis = 1 : i64, cycles = 1 : i64, epsilon = 1.0e-05 : f32, kernel = "k", mapping = {grid = array<i64: 4, 1, 2>, tiles = array<i64: 0, 1>}} : (tensor<8x4x16xf32>) -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}

// -----

func.func @softmax_narrows(%x: tensor<8x64xf32>) -> tensor<8x64xf16> {
  // expected-error@+1 {{'tile.softmax' op the result must have the input's element type, or widen f16 to f32}}
  %y = tile.softmax %x {axis = 1 : i64, cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 4, 2>, tiles = array<i64: 0, 1>}} : (tensor<8x64xf32>) -> tensor<8x64xf16>
  return %y : tensor<8x64xf16>
}

// -----

func.func @softmax_row_vector_axis(%x: tensor<8x64xf16>, %v: tensor<8xf32>) -> tensor<8x64xf32> {
  // expected-error@+1 {{'tile.softmax' op operand #1 must be a row vector along the axis, the last, of the result's element type}}
  %y = tile.softmax %x, %v {axis = 0 : i64, cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 2, 4>, tiles = array<i64: 0, 1>}, scale = 0.125 : f16} : (tensor<8x64xf16>, tensor<8xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @softmax_two_vectors(%x: tensor<8x64xf32>, %v: tensor<64xf32>) -> tensor<8x64xf32> {
  // expected-error@+1 {{'tile.softmax' op takes the input and at most a row vector, got 2 of those}}
  %y = tile.softmax %x, %v, %v {axis = 1 : i64, cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 4, 2>, tiles = array<i64: 0, 1>}} : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
