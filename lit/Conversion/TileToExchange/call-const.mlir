// A callee's parameters (arguments marked ipu.weight) bound to constants of
// the caller, as the ONNX importer gives a layer's weights (initializers
// are constants), on the 16-tile test target. In the tile stage @main
// keeps each constant that only calls' parameters read as a tile.constant
// passed to the call; in the exchange stage it is no buffer of @main: each
// exchange.call carries the constant's elements in its `args`, and the
// machine stage loads them with the image into that call's copies of
// @layer's operand buffers (two calls may pass one constant: %b1). The
// package of the printed exchange stage, read back, is byte-identical to
// the one-shot pipeline's; lit/Runtime/call-const-test16.mlir runs it.
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s --check-prefix=TILE
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | ipu-opt --mlir-print-op-generic | ipu-opt | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | ipu-translate --to-ipuexe - -o %t/one.ipuexe
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s -o %t/exchange.mlir
// RUN: ipu-opt --convert-exchange-to-machine %t/exchange.mlir | ipu-translate --to-ipuexe - -o %t/split.ipuexe
// RUN: cmp %t/one.ipuexe %t/split.ipuexe
// The calls share one frame and run @layer as one subroutine.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | FileCheck %s --check-prefix=MACHINE

// TILE-LABEL: func.func @main(
// TILE-NEXT: %0 = tile.host_input %arg0
// TILE-NEXT: %1 = tile.constant {mapping = {{.*}}} dense<{{\[\[}}-0.265625, {{.*}} : tensor<16x16xf32>
// TILE-NEXT: %2 = tile.constant {mapping = {{.*}}} dense<[0.046875, {{.*}} : tensor<16xf32>
// TILE-NEXT: %3 = tile.constant {mapping = {{.*}}} dense<{{\[\[}}-0.0625, {{.*}} : tensor<16x16xf32>
// TILE-NEXT: %4 = call @layer(%0, %1, %2)
// TILE-NEXT: %5 = call @layer(%4, %3, %2)

// CHECK-LABEL: func.func private @layer(
// CHECK: exchange.host_input %arg1 {load, placements = [{buffer = @s1.operand1,
// CHECK-NEXT: exchange.host_input %arg2 {load, placements = [{buffer = @s2.operand1,
// CHECK-LABEL: func.func @main(
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, sym_name = "input0", tiles = "0 to 7"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, sym_name = "call0.result0", tiles = "0 to 7"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, sym_name = "call1.result0", tiles = "0 to 7"}
// CHECK-NEXT: exchange.host_input %arg0 {buffer = @input0
// CHECK-NEXT: exchange.call @layer() {args = [@input0, dense<{{\[\[}}-0.265625, {{.*}}{{\]\]}}> : tensor<16x16xf32>, dense<[0.046875, {{.*}}]> : tensor<16xf32>], results = [@call0.result0], source = "{{[0-9]+}}:3"} : () -> ()
// CHECK-NEXT: exchange.call @layer() {args = [@call0.result0, dense<{{\[\[}}-0.0625, {{.*}}{{\]\]}}> : tensor<16x16xf32>, dense<[0.046875, {{.*}}]> : tensor<16xf32>], results = [@call1.result0], source = "{{[0-9]+}}:3"} : () -> ()
// CHECK-NEXT: exchange.host_output {buffer = @call1.result0
// CHECK-NOT: exchange.constant

// MACHINE: program = ["layer0.args: main.memcpy", "layer0.s1 (call_0): gemm{{.*}}", "layer0.results: main.memcpy", "layer1.s1 (call_0): gemm{{.*}}", "layer1.results: main.memcpy"]

func.func private @layer(%x: tensor<8x16xf32> {ipu.name = "x"}, %w: tensor<16x16xf32> {ipu.name = "w", ipu.weight}, %b: tensor<16xf32> {ipu.name = "b", ipu.weight}) -> (tensor<8x16xf32> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %hb = nn.add %h, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %y = nn.tanh %hb : tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
func.func @main(%x: tensor<8x16xf32> {ipu.name = "x"}) -> (tensor<8x16xf32> {ipu.name = "y"}) {
  %w1 = nn.constant dense<[[-0.265625, 0.046875, -0.125, 0.109375, 0.125, -0.4375, -0.484375, 0.34375, -0.234375, -0.265625, 0.5, -0.03125, 0.34375, -0.03125, 0.140625, -0.34375], [0.140625, 0.375, 0.015625, 0.234375, 0.171875, -0.4375, 0.265625, 0.09375, -0.203125, -0.46875, 0.359375, -0.03125, 0.21875, 0.375, 0.21875, 0.421875], [-0.109375, 0.296875, -0.0625, 0.4375, 0.375, -0.40625, -0.359375, -0.28125, 0.46875, -0.0625, 0.125, -0.203125, 0.0, -0.109375, -0.15625, 0.078125], [0.078125, 0.40625, 0.1875, 0.421875, 0.359375, 0.484375, 0.171875, -0.34375, 0.359375, 0.46875, 0.40625, 0.0625, 0.21875, -0.28125, 0.328125, 0.078125], [-0.21875, -0.4375, 0.359375, 0.484375, -0.40625, 0.296875, -0.09375, -0.34375, -0.203125, 0.265625, 0.375, -0.453125, 0.109375, -0.453125, 0.21875, -0.171875], [0.375, 0.484375, 0.0, 0.5, -0.1875, -0.421875, 0.09375, -0.46875, -0.296875, -0.09375, 0.109375, -0.34375, -0.453125, 0.375, -0.1875, 0.453125], [0.390625, -0.125, -0.046875, 0.015625, 0.140625, 0.09375, 0.0625, 0.125, 0.4375, 0.0, -0.0625, 0.21875, -0.265625, -0.203125, 0.484375, 0.015625], [0.046875, -0.484375, -0.078125, 0.078125, -0.484375, 0.109375, 0.125, -0.4375, 0.125, -0.03125, 0.171875, -0.140625, 0.203125, 0.234375, -0.484375, -0.4375], [0.171875, 0.46875, -0.25, -0.046875, 0.09375, -0.1875, -0.140625, -0.1875, -0.125, 0.09375, -0.203125, -0.125, 0.265625, -0.46875, 0.0625, 0.234375], [-0.1875, -0.28125, 0.296875, -0.265625, -0.3125, -0.0625, 0.203125, -0.390625, -0.171875, -0.171875, 0.328125, -0.0625, 0.359375, -0.328125, -0.15625, 0.15625], [0.390625, -0.046875, -0.28125, -0.375, 0.03125, -0.3125, 0.3125, 0.34375, -0.3125, -0.21875, 0.3125, 0.140625, 0.3125, -0.15625, -0.375, -0.203125], [0.296875, -0.234375, -0.15625, -0.078125, -0.078125, -0.09375, 0.421875, -0.34375, -0.5, 0.4375, 0.375, 0.484375, -0.0625, 0.453125, 0.421875, -0.28125], [0.25, 0.34375, 0.15625, 0.015625, -0.21875, -0.15625, -0.265625, -0.4375, 0.09375, -0.21875, 0.3125, -0.453125, 0.40625, 0.1875, 0.421875, 0.390625], [0.40625, 0.078125, -0.484375, 0.25, -0.328125, -0.203125, 0.15625, 0.03125, -0.09375, 0.4375, 0.109375, -0.15625, -0.25, 0.359375, -0.015625, 0.28125], [-0.140625, -0.296875, 0.03125, 0.3125, -0.328125, 0.296875, 0.421875, 0.3125, 0.328125, -0.5, 0.125, 0.359375, -0.453125, -0.234375, -0.234375, 0.03125], [-0.078125, -0.03125, 0.28125, -0.5, -0.4375, -0.375, -0.375, -0.4375, 0.46875, 0.359375, -0.40625, 0.0, -0.1875, -0.1875, -0.15625, 0.140625]]> : tensor<16x16xf32>
  %b1 = nn.constant dense<[0.046875, -0.0625, -0.15625, -0.078125, -0.1875, 0.03125, 0.109375, -0.0625, -0.203125, -0.15625, -0.0625, 0.046875, 0.140625, -0.0625, 0.15625, 0.0625]> : tensor<16xf32>
  %w2 = nn.constant dense<[[-0.0625, -0.125, 0.0, 0.203125, -0.078125, 0.1875, -0.046875, -0.25, 0.03125, 0.1875, -0.421875, -0.078125, -0.078125, 0.375, 0.4375, -0.125], [0.390625, 0.296875, -0.234375, -0.03125, -0.375, 0.3125, 0.15625, 0.390625, 0.296875, 0.171875, 0.234375, 0.0625, -0.390625, 0.09375, -0.5, -0.359375], [0.28125, -0.453125, -0.40625, -0.40625, 0.375, -0.328125, -0.46875, 0.34375, -0.375, 0.34375, 0.171875, 0.34375, 0.453125, 0.078125, 0.296875, -0.46875], [0.265625, 0.015625, 0.21875, -0.390625, 0.25, 0.4375, -0.4375, -0.171875, 0.0625, 0.328125, -0.265625, -0.3125, -0.25, 0.109375, 0.25, -0.109375], [-0.125, -0.109375, -0.15625, -0.078125, -0.421875, 0.0, 0.46875, -0.09375, 0.25, -0.34375, 0.1875, 0.25, 0.171875, 0.015625, -0.015625, 0.140625], [0.390625, -0.34375, -0.40625, 0.25, 0.421875, 0.015625, -0.0625, 0.21875, -0.3125, -0.234375, -0.296875, 0.078125, -0.1875, -0.265625, 0.1875, 0.453125], [-0.203125, 0.203125, -0.09375, 0.359375, 0.078125, -0.234375, -0.28125, -0.484375, -0.015625, -0.125, -0.328125, -0.140625, -0.171875, 0.28125, -0.359375, 0.484375], [-0.015625, 0.09375, -0.03125, 0.328125, 0.328125, 0.0625, -0.015625, 0.21875, 0.359375, -0.09375, 0.234375, 0.453125, -0.03125, -0.265625, -0.265625, 0.21875], [0.171875, 0.453125, 0.359375, -0.265625, -0.3125, -0.234375, -0.3125, 0.203125, 0.359375, 0.40625, -0.25, 0.359375, -0.1875, -0.078125, 0.234375, -0.421875], [-0.40625, 0.328125, -0.203125, -0.140625, 0.078125, 0.171875, -0.5, -0.171875, -0.0625, -0.015625, -0.296875, 0.078125, 0.453125, -0.109375, 0.046875, -0.375], [-0.21875, 0.171875, -0.390625, 0.390625, 0.40625, -0.40625, 0.4375, -0.125, 0.265625, 0.25, -0.203125, 0.171875, 0.15625, 0.3125, -0.234375, 0.25], [0.46875, 0.171875, 0.03125, -0.390625, 0.0, -0.140625, 0.21875, 0.171875, 0.0625, -0.3125, 0.140625, 0.125, -0.328125, 0.390625, 0.15625, -0.375], [0.4375, -0.359375, -0.171875, 0.21875, 0.09375, 0.0625, 0.140625, -0.046875, -0.1875, -0.328125, -0.4375, 0.21875, 0.25, 0.046875, 0.234375, -0.140625], [-0.234375, -0.109375, 0.375, -0.453125, 0.0, -0.25, 0.265625, -0.140625, -0.171875, -0.09375, 0.046875, 0.265625, -0.140625, 0.34375, -0.390625, -0.234375], [-0.40625, -0.390625, 0.28125, 0.234375, -0.3125, -0.3125, -0.078125, 0.25, 0.3125, 0.25, 0.09375, -0.359375, -0.109375, -0.3125, 0.03125, 0.0625], [-0.296875, -0.25, 0.28125, -0.46875, 0.296875, 0.390625, 0.453125, -0.109375, 0.046875, 0.078125, 0.140625, 0.484375, 0.1875, -0.203125, 0.359375, -0.015625]]> : tensor<16x16xf32>
  %y1 = func.call @layer(%x, %w1, %b1) : (tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %y2 = func.call @layer(%y1, %w2, %b1) : (tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %y2 : tensor<8x16xf32>
}
