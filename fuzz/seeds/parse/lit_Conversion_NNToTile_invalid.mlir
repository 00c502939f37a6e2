// What convert-nn-to-tile cannot do yet, or cannot fit, is a diagnostic at the op.
// RUN: ipu-opt --split-input-file --verify-diagnostics --target test4 --convert-nn-to-tile %s
// RUN: not ipu-opt --convert-nn-to-tile %s 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: not ipu-opt --target nosuch --convert-nn-to-tile %s 2>&1 | FileCheck %s --check-prefix=BADTARGET

// NOTARGET: error: no target: give --target NAME|FILE, or the pass option target=NAME
// BADTARGET: error: target 'nosuch':

func.func @softmax(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'nn.softmax' op is not lowered to the tile dialect yet}}
  %y = nn.softmax %x {axis = 1} : tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

func.func @too_big(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf16> {
  // expected-error@+1 {{'nn.matmul' op [4096x4096] x [4096x4096] on target test4: does not fit: the smallest plan needs}}
  %y = nn.matmul %a, %b : (tensor<4096x4096xf16>, tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  return %y : tensor<4096x4096xf16>
}

// -----

func.func @batched(%a: tensor<2x4x8xf16>, %b: tensor<8x4xf16>) -> tensor<2x4x4xf16> {
  // expected-error@+1 {{'nn.matmul' op is not lowered yet for rank 3 x rank 2 operands (2-D matmuls are)}}
  %y = nn.matmul %a, %b : (tensor<2x4x8xf16>, tensor<8x4xf16>) -> tensor<2x4x4xf16>
  return %y : tensor<2x4x4xf16>
}

// -----

func.func @f32(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'nn.matmul' op a matmul of f32 x f32 elements is not lowered yet (f16 and f8 operands are)}}
  %y = nn.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// A K split into blocks that are not a multiple of the AMP's K block.
func.func @uneven_k(%x: tensor<8x40xf16>, %w: tensor<40x128xf16>) -> tensor<8x128xf16> {
  // expected-error@+1 {{'nn.matmul' op is planned as 1x4x1 blocks of 8x40x32: the code generator needs K split evenly into multiples of 16 and N split evenly into multiples of 16}}
  %y = nn.matmul %x, %w : (tensor<8x40xf16>, tensor<40x128xf16>) -> tensor<8x128xf16>
  return %y : tensor<8x128xf16>
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
