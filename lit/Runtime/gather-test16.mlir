// Gather on the device (test16), against the reference. Indices known only
// at run time (i64 and i32, negative ones counting from the end) are looked
// up locally: the table is split over the tiles by its other dimensions,
// every tile receives all the indices, and a gather kernel copies its slice
// of each row. Constant indices (position ids, a negative one, a scalar)
// are views of the table: no kernel, the rows move in the exchange that
// feeds their reader.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCHANGE
// The exchange stage printed and read back lowers to the same package.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | ipu-translate --to-ipuexe - -o %t/one.ipuexe
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s -o %t/exchange.mlir
// RUN: ipu-opt --convert-exchange-to-machine %t/exchange.mlir | ipu-translate --to-ipuexe - -o %t/split.ipuexe
// RUN: cmp %t/one.ipuexe %t/split.ipuexe
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// The indices go to every tile the table's blocks are on (the table is laid
// out for the gather as it streams in); the position rows are read by the
// add straight from the table's blocks, with no compute set of their own.
// EXCHANGE: moves = "operand #1 of s1 tile.gather"
// EXCHANGE: label = "tile.gather", sym_name = "s1"
// EXCHANGE-NOT: exchange.compute_set
// EXCHANGE: moves = "operand #1 of s2 tile.map"
// EXCHANGE: label = "tile.map add", sym_name = "s2"
// EXCHANGE: label = "tile.gather", sym_name = "s3"
// EXCHANGE: label = "tile.gather", sym_name = "s4"
// EXCHANGE-NOT: label = "tile.gather"
func.func @main(
    %w: tensor<11x6xf32> {ipu.name = "w"},
    %ids: tensor<2x5xi64> {ipu.name = "ids", ipu.default = dense<[[0, 10, -1, 3, -11], [7, 7, 2, -4, 5]]> : tensor<2x5xi64>},
    %pos: tensor<5x6xf32> {ipu.name = "pos"},
    %t: tensor<3x8xf32> {ipu.name = "t"},
    %cols: tensor<7xi32> {ipu.name = "cols", ipu.default = dense<[7, -8, 0, 3, -1, 3, 5]> : tensor<7xi32>},
    %wh: tensor<9x5xf16> {ipu.name = "wh"},
    %idh: tensor<2x2xi32> {ipu.name = "idh", ipu.default = dense<[[8, -9], [4, 4]]> : tensor<2x2xi32>})
    -> (tensor<2x5x6xf32> {ipu.name = "emb"}, tensor<3x7xf32> {ipu.name = "picked"},
        tensor<2x2x5xf16> {ipu.name = "emb_h"}, tensor<2x6xf32> {ipu.name = "ends"},
        tensor<6xf32> {ipu.name = "row3"}) {
  %e = nn.gather %w[%ids] {axis = 0} : (tensor<11x6xf32>, tensor<2x5xi64>) -> tensor<2x5x6xf32>
  %range = nn.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
  %p = nn.gather %pos[%range] {axis = 0} : (tensor<5x6xf32>, tensor<5xi64>) -> tensor<5x6xf32>
  %emb = nn.add %e, %p : (tensor<2x5x6xf32>, tensor<5x6xf32>) -> tensor<2x5x6xf32>
  %picked = nn.gather %t[%cols] {axis = 1} : (tensor<3x8xf32>, tensor<7xi32>) -> tensor<3x7xf32>
  %eh = nn.gather %wh[%idh] {axis = 0} : (tensor<9x5xf16>, tensor<2x2xi32>) -> tensor<2x2x5xf16>
  %two = nn.constant dense<[-1, 0]> : tensor<2xi64>
  %ends = nn.gather %w[%two] {axis = 0} : (tensor<11x6xf32>, tensor<2xi64>) -> tensor<2x6xf32>
  %three = nn.constant dense<3> : tensor<i32>
  %row3 = nn.gather %w[%three] {axis = 0} : (tensor<11x6xf32>, tensor<i32>) -> tensor<6xf32>
  return %emb, %picked, %eh, %ends, %row3 : tensor<2x5x6xf32>, tensor<3x7xf32>, tensor<2x2x5xf16>, tensor<2x6xf32>, tensor<6xf32>
}
