// The verifier of a gather view (constant indices): every index inside the
// axis, and the result the input with the axis replaced by the indices.
// RUN: ipu-opt --split-input-file --verify-diagnostics %s

func.func @f(%w: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'tile.view' op cannot gather 2 indices in 0..4 along axis 0 of [4, 3] into [2, 3]}}
  %v = tile.view %w {kind = "gather", axis = 0, indices = array<i64: 1, 4>, mapping = {grid = array<i64: 1, 1>, tiles = array<i64: 0, 1>}} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  return %v : tensor<2x3xf32>
}

// -----

func.func @f(%w: tensor<4x3xf32>) -> tensor<3x3xf32> {
  // expected-error@+1 {{'tile.view' op cannot gather 2 indices in 0..4 along axis 0 of [4, 3] into [3, 3]}}
  %v = tile.view %w {kind = "gather", axis = 0, indices = array<i64: 1, 2>, mapping = {grid = array<i64: 1, 1>, tiles = array<i64: 0, 1>}} : (tensor<4x3xf32>) -> tensor<3x3xf32>
  return %v : tensor<3x3xf32>
}

// -----

func.func @f(%w: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'tile.view' op a gather view needs 'indices'}}
  %v = tile.view %w {kind = "gather", axis = 1, mapping = {grid = array<i64: 1, 1>, tiles = array<i64: 0, 1>}} : (tensor<4x3xf32>) -> tensor<4x2xf32>
  return %v : tensor<4x2xf32>
}

// -----

// A valid one: rows 3 and 0 of a [4, 3] input as a [1, 2, 3] result.
func.func @f(%w: tensor<4x3xf32>) -> tensor<1x2x3xf32> {
  %v = tile.view %w {kind = "gather", axis = 0, indices = array<i64: 3, 0>, mapping = {grid = array<i64: 1, 1, 1>, tiles = array<i64: 0, 1>}} : (tensor<4x3xf32>) -> tensor<1x2x3xf32>
  return %v : tensor<1x2x3xf32>
}
