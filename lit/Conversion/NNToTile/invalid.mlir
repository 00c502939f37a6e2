// What convert-nn-to-tile cannot do yet, or cannot fit, is a diagnostic at the op.
// RUN: ipu-opt --split-input-file --verify-diagnostics --target test4 --convert-nn-to-tile %s
// RUN: not ipu-opt --convert-nn-to-tile %s 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: not ipu-opt --target nosuch --convert-nn-to-tile %s 2>&1 | FileCheck %s --check-prefix=BADTARGET
// RUN: not ipu-opt --target test16 --ipu-lower-to-machine %S/Inputs/huge-relu.mlir 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: 'nn.relu' op does not fit: [99999999999, 32] over a [16, 1] grid needs 800000000000 bytes per tile for its blocks, but a tile of test16 has 540672 for data
// HUGE-NEXT: huge-relu.mlir:4:3

// NOTARGET: error: no target: give --target NAME|FILE, or the pass option target=NAME
// BADTARGET: error: target 'nosuch':

func.func @prod(%x: tensor<4x8xf16>) -> tensor<4xf16> {
  // expected-error@+1 {{'nn.reduce_prod' op is not lowered to the tile dialect yet}}
  %y = nn.reduce_prod %x {axes = array<i64: 1>} : tensor<4x8xf16> -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

func.func @too_big(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf16> {
  // expected-error@+1 {{'nn.matmul' op [4096x4096] x [4096x4096] on target test4: does not fit: the smallest plan needs}}
  %y = nn.matmul %a, %b : (tensor<4096x4096xf16>, tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  return %y : tensor<4096x4096xf16>
}

// -----

func.func @bf16(%a: tensor<4x16xbf16>, %b: tensor<16x16xbf16>) -> tensor<4x16xbf16> {
  // expected-error@+1 {{'nn.matmul' op a matmul of bf16 x bf16 elements is not lowered yet (f32 x f32, and f16 and f8 operands are)}}
  %y = nn.matmul %a, %b : (tensor<4x16xbf16>, tensor<16x16xbf16>) -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----

// A block too big for a tile is refused before anything runs in time
// proportional to the tensor (no exchange is scheduled for it).
func.func @huge(%x: tensor<99999999999x32xf16>) -> tensor<99999999999x32xf16> {
  // expected-error@+1 {{'nn.relu' op does not fit: [99999999999, 32] over a [4, 1] grid needs 3200000000000 bytes per tile for its blocks, but a tile of test4 has 540672 for data}}
  %y = nn.relu %x : tensor<99999999999x32xf16>
  return %y : tensor<99999999999x32xf16>
}

// -----

func.func @too_big_block(%x: tensor<4x200000xf32>) -> tensor<4x200000xf32> {
  // expected-error@+1 {{'nn.relu' op does not fit: [4, 200000] over a [4, 1] grid needs 1600000 bytes per tile}}
  %y = nn.relu %x : tensor<4x200000xf32>
  return %y : tensor<4x200000xf32>
}

// -----

// Softmax keeps each row whole on a tile (reductions cut rows; see
// Conversion/NNToTile/rows.mlir).
func.func @row_too_long(%x: tensor<2x200000xf32>) -> tensor<2x200000xf32> {
  // expected-error@+1 {{'nn.softmax' op does not fit: [2, 200000] over a [2, 1] grid needs 1600000 bytes per tile, but a tile of test4 has 540672 for data (its rows are not cut over tiles yet)}}
  %y = nn.softmax %x {axis = 1 : i64} : tensor<2x200000xf32>
  return %y : tensor<2x200000xf32>
}

// -----

// Layer norm's scale and bias have the normalized shape's elements, and its
// input's element type.
func.func @scale_broadcast(%x: tensor<4x8xf32>, %g: tensor<1xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'nn.layer_norm' op has a scale broadcast from 1 to the 8 elements of the normalized shape, which is not lowered yet (a scale with as many elements is)}}
  %y = nn.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @scale_type(%x: tensor<4x8xf16>, %g: tensor<8xf32>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'nn.layer_norm' op has a scale of another element type than its input, which is not lowered yet}}
  %y = nn.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<4x8xf16>, tensor<8xf32>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

// Reductions of integers or bf16 have no kernel.
func.func @int_sum(%x: tensor<4x8xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'nn.reduce_sum' op on i32 elements has no row kernel (f32 and f16 do)}}
  %y = nn.reduce_sum %x {axes = array<i64: 1>} : tensor<4x8xi32> -> tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @bf16_max(%x: tensor<4x8xbf16>) -> tensor<4xbf16> {
  // expected-error@+1 {{'nn.reduce_max' op on bf16 elements has no row kernel (f32 and f16 do)}}
  %y = nn.reduce_max %x {axes = array<i64: 1>} : tensor<4x8xbf16> -> tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// -----

// A reduction too big for the tiles is refused before anything runs in time
// proportional to the tensor.
func.func @huge_reduce(%x: tensor<99999999999x32xf16>) -> tensor<32xf16> {
  // expected-error@+1 {{'nn.reduce_max' op does not fit: [99999999999, 32] over a [1, 4] grid needs 1600000000000 bytes per tile, but a tile of test4 has 540672 for data}}
  %y = nn.reduce_max %x {axes = array<i64: 0>} : tensor<99999999999x32xf16> -> tensor<32xf16>
  return %y : tensor<32xf16>
}
