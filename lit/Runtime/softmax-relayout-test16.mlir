// Softmaxes re-laid out from their producer's layout on the 16-tile test
// target, checked against the reference: from a matmul's 16-column blocks
// to whole rows on every tile, and from its 2 x 8 blocks (81 rows of 16)
// to whole rows on tiles 1..15 (the layout placed to end at the last tile);
// and 2 x 8 blocks of 33 rows of 48 kept as they lie, the rows cut 8 ways
// (the statistics keep their exponentials for the last pass).
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s --check-prefix=MAP
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --output-dir %t 2>%t/err > %t/verdict
// RUN: FileCheck %s < %t/verdict
// RUN: FileCheck %s --check-prefix=ERR < %t/err

// MAP: tile.softmax {{.*}}kernel = "rows_softmax_f32_r6_c256", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}}
// MAP: tile.softmax {{.*}}kernel = "rows_softmax_f32_r11_c128", mapping = {grid = array<i64: 15, 1>, tiles = array<i64: 1, 1>}}
// MAP: tile.softmax {{.*}}kernel = "rows_softmax_stats_f32_r33_c48_exps", mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}}
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// ERR-DAG: compared with the reference output=all_tiles
// ERR-DAG: compared with the reference output=at_end
// ERR-DAG: compared with the reference output=cut
func.func @main(%a: tensor<96x32xf32> {ipu.name = "a"}, %b: tensor<32x256xf32> {ipu.name = "b"}, %c: tensor<66x32xf32> {ipu.name = "c"}, %d: tensor<32x128xf32> {ipu.name = "d"}, %e: tensor<32x384xf32> {ipu.name = "e"}, %f: tensor<162x32xf32> {ipu.name = "f"}) -> (tensor<96x256xf32> {ipu.name = "all_tiles"}, tensor<162x128xf32> {ipu.name = "at_end"}, tensor<66x384xf32> {ipu.name = "cut"}) {
  %s = nn.matmul %a, %b : (tensor<96x32xf32>, tensor<32x256xf32>) -> tensor<96x256xf32>
  %y = nn.softmax %s {axis = 1 : i64} : tensor<96x256xf32>
  %t = nn.matmul %f, %d : (tensor<162x32xf32>, tensor<32x128xf32>) -> tensor<162x128xf32>
  %z = nn.softmax %t {axis = 1 : i64} : tensor<162x128xf32>
  %u = nn.matmul %c, %e : (tensor<66x32xf32>, tensor<32x384xf32>) -> tensor<66x384xf32>
  %w = nn.softmax %u {axis = 1 : i64} : tensor<66x384xf32>
  return %y, %z, %w : tensor<96x256xf32>, tensor<162x128xf32>, tensor<66x384xf32>
}
