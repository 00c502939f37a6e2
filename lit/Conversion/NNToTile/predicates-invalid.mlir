// What the device lowerings of comparisons, select, pow and gather refuse,
// as a diagnostic at the op.
// RUN: ipu-opt --split-input-file --verify-diagnostics --target test16 --convert-nn-to-tile %s

// i32 and i64 comparisons have a kernel (intew); 8- and 16-bit integers
// are compared as their exact f32 images (quant.rs); a u32 has no image
// (beyond 2^24) and no kernel.
func.func @u32_compare(%a: tensor<4xui32>, %b: tensor<4xui32>) -> tensor<4xi1> {
  // expected-error@+1 {{'nn.less' op on ui32 elements has no kernel (f32, f16, i32 and i64 do)}}
  %y = nn.less %a, %b : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  return %y : tensor<4xi1>
}

// -----

func.func @f16_to_int_cast(%a: tensor<4xf16>) -> tensor<4xi32> {
  // expected-error@+1 {{'nn.cast' op casts tensor<4xf16> to tensor<4xi32>: casts to integers have a kernel from f32 only (cast to f32 first)}}
  %y = nn.cast %a : tensor<4xf16> -> tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @bool_sum(%a: tensor<4x8xi1>) -> tensor<4xi1> {
  // expected-error@+1 {{'nn.reduce_sum' op takes the sum of booleans, which has no kernel (max and min do)}}
  %y = nn.reduce_sum %a {axes = array<i64: 1>} : tensor<4x8xi1> -> tensor<4xi1>
  return %y : tensor<4xi1>
}

// -----

func.func @bf16_select(%c: tensor<4xi1>, %a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error@+1 {{'nn.select' op on bf16 values has no kernel (f32 and f16 do)}}
  %y = nn.select %c, %a, %b : (tensor<4xi1>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// -----

// A constant exponent converts only when no value changes: 0.1 is not an f16.
func.func @pow_inexact_exponent(%x: tensor<8xf16>) -> tensor<8xf16> {
  %e = nn.constant dense<0.1> : tensor<f32>
  // expected-error@+1 {{'nn.pow' op has a constant operand of type tensor<f32> whose values f16 does not hold exactly}}
  %y = nn.pow %x, %e : (tensor<8xf16>, tensor<f32>) -> tensor<8xf16>
  return %y : tensor<8xf16>
}

// -----

func.func @gather_constant_out_of_range(%w: tensor<10x4xf32>) -> tensor<2x4xf32> {
  %i = nn.constant dense<[3, -11]> : tensor<2xi64>
  // expected-error@+1 {{'nn.gather' op has index -11 out of range for axis 0 of size 10}}
  %y = nn.gather %w[%i] {axis = 0} : (tensor<10x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @gather_i16_indices(%w: tensor<10x4xf32>, %i: tensor<3xi16>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.gather' op has indices of type tensor<3xi16>; the device gathers with i64 or i32 indices}}
  %y = nn.gather %w[%i] {axis = 0} : (tensor<10x4xf32>, tensor<3xi16>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// Every tile holds all rows of its slice of the table: 3 million rows of
// one f32 column each do not fit.
func.func @gather_too_big(%w: tensor<3000000x16xf32>, %i: tensor<3xi64>) -> tensor<3x16xf32> {
  // expected-error@+1 {{'nn.gather' op does not fit: each tile holds all 3000000 rows of its slice of the data (12000000 bytes)}}
  %y = nn.gather %w[%i] {axis = 0} : (tensor<3000000x16xf32>, tensor<3xi64>) -> tensor<3x16xf32>
  return %y : tensor<3x16xf32>
}
