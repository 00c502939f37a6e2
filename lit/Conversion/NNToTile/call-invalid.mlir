// Calls convert-nn-to-tile does not lower are a diagnostic at the call: a
// callee's parameter (ipu.weight) passed a value that is neither a
// parameter of the caller nor a constant, a constant that something other
// than calls' parameters reads, a call with more than one result, and recursion.
// RUN: ipu-opt --split-input-file --verify-diagnostics --target test4 --convert-nn-to-tile %s

func.func private @scale(%x: tensor<4x8xf16>, %w: tensor<8xf16> {ipu.weight}) -> tensor<4x8xf16> {
  %y = nn.mul %x, %w : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}
func.func @main(%x: tensor<4x8xf16>, %w: tensor<8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'func.call' op passes operand #1 to a parameter of @scale: it must be a parameter of the caller (an argument marked ipu.weight) or a constant, that only calls' parameters read}}
  %y = func.call @scale(%x, %w) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

func.func private @scale(%x: tensor<4x8xf16>, %w: tensor<8xf16> {ipu.weight}) -> tensor<4x8xf16> {
  %y = nn.mul %x, %w : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}
func.func @main(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %w = nn.constant dense<2.0> : tensor<8xf16>
  // expected-error@+1 {{'func.call' op passes operand #1 to a parameter of @scale: it must be a parameter of the caller (an argument marked ipu.weight) or a constant, that only calls' parameters read}}
  %y = func.call @scale(%x, %w) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %z = nn.add %y, %w : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %z : tensor<4x8xf16>
}

// -----

func.func private @two(%x: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>) {
  %y = nn.relu %x : tensor<4x8xf16>
  %z = nn.neg %x : tensor<4x8xf16>
  return %y, %z : tensor<4x8xf16>, tensor<4x8xf16>
}
func.func @main(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'func.call' op has 2 results; a call is lowered to the device with exactly one}}
  %y:2 = func.call @two(%x) : (tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>)
  return %y#0 : tensor<4x8xf16>
}

// -----

func.func private @loop(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'func.call' op calls @loop, which calls back: recursion is not lowered to the device}}
  %y = func.call @loop(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}
