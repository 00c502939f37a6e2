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

func.func @vector(%a: tensor<8xf16>, %b: tensor<8x16xf16>) -> tensor<16xf16> {
  // expected-error@+1 {{'nn.matmul' op is not lowered yet for rank 1 x rank 2 operands (operands of rank 1 are not)}}
  %y = nn.matmul %a, %b : (tensor<8xf16>, tensor<8x16xf16>) -> tensor<16xf16>
  return %y : tensor<16xf16>
}

// -----

func.func @partial_batch(%a: tensor<2x1x4x16xf16>, %b: tensor<1x3x16x16xf16>) -> tensor<2x3x4x16xf16> {
  // expected-error@+1 {{'nn.matmul' op broadcasts batch dimensions [2, 1] against [1, 3] partially, which is not lowered yet}}
  %y = nn.matmul %a, %b : (tensor<2x1x4x16xf16>, tensor<1x3x16x16xf16>) -> tensor<2x3x4x16xf16>
  return %y : tensor<2x3x4x16xf16>
}

// -----

func.func @bf16(%a: tensor<4x16xbf16>, %b: tensor<16x16xbf16>) -> tensor<4x16xbf16> {
  // expected-error@+1 {{'nn.matmul' op a matmul of bf16 x bf16 elements is not lowered yet (f32 x f32, and f16 and f8 operands are)}}
  %y = nn.matmul %a, %b : (tensor<4x16xbf16>, tensor<16x16xbf16>) -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----

// A K split into blocks that are not a multiple of the AMP's K block.
func.func @uneven_k(%x: tensor<8x40xf16>, %w: tensor<40x128xf16>) -> tensor<8x128xf16> {
  // expected-error@+1 {{'nn.matmul' op [8x40] x [40x128] on target test4: no split the code generator can lay out yet: K (40) must split evenly into multiples of 16 and N (128) into multiples of 16}}
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
