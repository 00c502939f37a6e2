// Layout ops on the device: a transpose read by an add and a reshape read by
// a relu cost no superstep (their readers receive the elements straight from
// the input's blocks); a column vector broadcast by a mul is delivered
// expanded; a concat and a negative-step slice streamed to the host are
// stored by an exchange phase. Every result is checked against the reference.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCHANGE
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// The transpose and the reshape are read in place of a stored value (the
// add's two operands arrive in one phase): the first compute sets are the
// add and the relu.
// EXCHANGE: exchange.phase attributes {{{.*}}moves = "operand #0 of s1 tile.map, operand #1 of s1 tile.map"
// EXCHANGE: exchange.compute_set attributes {{{.*}}label = "tile.map add", sym_name = "s1"}
// EXCHANGE: exchange.phase attributes {{{.*}}moves = "operand #0 of s2 tile.map"
// EXCHANGE: exchange.compute_set attributes {{{.*}}label = "tile.map relu", sym_name = "s2"}
// EXCHANGE: moves = "output3 of tile.host_output"
// EXCHANGE: moves = "output4 of tile.host_output"
func.func @main(%x: tensor<6x10xf32> {ipu.name = "x"}, %y: tensor<10x6xf32> {ipu.name = "y"}, %c: tensor<6x1xf32> {ipu.name = "c"}) -> (tensor<10x6xf32> {ipu.name = "t"}, tensor<3x20xf32> {ipu.name = "r"}, tensor<6x10xf32> {ipu.name = "b"}, tensor<12x10xf32> {ipu.name = "k"}, tensor<3x5xf32> {ipu.name = "s"}) {
  %xt = nn.transpose %x {permutation = array<i64: 1, 0>} : tensor<6x10xf32> -> tensor<10x6xf32>
  %t = nn.add %xt, %y : (tensor<10x6xf32>, tensor<10x6xf32>) -> tensor<10x6xf32>
  %r0 = nn.reshape %x : tensor<6x10xf32> -> tensor<3x20xf32>
  %r = nn.relu %r0 : tensor<3x20xf32>
  %b = nn.mul %x, %c : (tensor<6x10xf32>, tensor<6x1xf32>) -> tensor<6x10xf32>
  %k = nn.concat %x, %b {axis = 0} : (tensor<6x10xf32>, tensor<6x10xf32>) -> tensor<12x10xf32>
  %s = nn.slice %x {starts = array<i64: 1, 9>, ends = array<i64: 6, 0>, steps = array<i64: 2, -2>} : tensor<6x10xf32> -> tensor<3x5xf32>
  return %t, %r, %b, %k, %s : tensor<10x6xf32>, tensor<3x20xf32>, tensor<6x10xf32>, tensor<12x10xf32>, tensor<3x5xf32>
}
