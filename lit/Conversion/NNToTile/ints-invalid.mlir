// What the device refuses of 8- and 16-bit integer arithmetic, as a
// diagnostic at the op: a result of such integers (the tiles hold them as
// exact f32 and the host narrows them as it streams them out, exact only
// for a value known to be integers of the result's type: an image,
// quant.rs), and an integer conv whose operands are not bounded.
// RUN: ipu-opt --split-input-file --verify-diagnostics --target test16 --convert-nn-to-tile %s

// A cast of any f32 to ui8: neither integral nor in range is known (the
// cast would truncate and wrap; the host's narrowing refuses both).
func.func @unbounded(%x: tensor<4xf32>) -> tensor<4xui8> {
  %y = nn.cast %x : tensor<4xf32> -> tensor<4xui8>
  // expected-error@+1 {{'func.return' op returns tensor<4xui8> as result #0, which the device cannot give: its elements are not known to be integers of that type (no NaN, none out of range), which the host's narrowing of the tiles' exact f32 needs}}
  return %y : tensor<4xui8>
}

// -----

// Rounded and clamped to [0, 255], but cast to i8: 128..255 wrap.
func.func @out_of_range(%x: tensor<4xf32>) -> tensor<4xi8> {
  %lo = nn.constant dense<0.0> : tensor<f32>
  %hi = nn.constant dense<255.0> : tensor<f32>
  %r = nn.round %x : tensor<4xf32>
  %m = nn.max %r, %lo : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %c = nn.min %m, %hi : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %y = nn.cast %c : tensor<4xf32> -> tensor<4xi8>
  // expected-error@+1 {{'func.return' op returns tensor<4xi8> as result #0, which the device cannot give}}
  return %y : tensor<4xi8>
}

// -----

// An integer conv (ConvInteger's form) runs as the exact f32 conv of its
// operands' images only when their ranges bound each product within 2^24:
// i32 arguments of any value do not.
func.func @unbounded_conv(%x: tensor<1x1x4x4xi32>, %w: tensor<1x1x2x2xi32>) -> tensor<1x1x3x3xi32> {
  // expected-error@+1 {{'nn.conv' op on integers runs as an exact f32 conv only when its operands' ranges are known and each product is at most 2^24 (8- or 16-bit codes less their zero points); these are not}}
  %y = nn.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1} : (tensor<1x1x4x4xi32>, tensor<1x1x2x2xi32>) -> tensor<1x1x3x3xi32>
  return %y : tensor<1x1x3x3xi32>
}

// -----

// A u8 quotient is not the quotient of the images (truncation, and a
// zero divisor): it has none, and the device has no u8 kernel. (Sums,
// differences and products that may wrap are wrapped: wrap.rs,
// lit/Runtime/int-wrap-test16.mlir.)
func.func @quotient(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xf32> {
  // expected-error@+1 {{'nn.div' op on ui8 elements has no kernel (f32, f16, i32 and i64 do)}}
  %s = nn.div %x, %y : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %f = nn.cast %s : tensor<4xui8> -> tensor<4xf32>
  return %f : tensor<4xf32>
}
