// Softmax and log-softmax on the 16-tile test target, checked against the
// reference: along rows (the last axis, walked contiguously) and along
// another axis (walked down the columns of each tile's block; f16 blocks
// are cast to f32 on the tile around the kernel), f32 and f16, on inputs
// scaled to [-8, 8); and rows cut over tiles (2 x 4096 f32, 4 x 2048 f16:
// each piece's statistics, combined per row and sent back; a softmax cut
// keeps each piece's exponentials from its statistics and scales them,
// f32 and f16 (4 x 2048 scaled to [-8, 8)); 20 x 4096 f32:
// 5 rows on each of 4 tiles, whose combining the 4 share 2, 2, 1 and 0;
// its input as given). The run is the
// same, cycle for cycle and bit for bit, with one thread or two.
// RUN: rm -rf %t && mkdir -p %t/1 %t/2
// RUN: env RAYON_NUM_THREADS=1 ipu-run %s --target test16 --device-lock %t/device.lock --output-dir %t/1 --profile %t/1/profile.json 2>%t/err > %t/1/verdict
// RUN: env RAYON_NUM_THREADS=2 ipu-run %s --target test16 --device-lock %t/device.lock --output-dir %t/2 --profile %t/2/profile.json 2>/dev/null > %t/2/verdict
// RUN: FileCheck %s < %t/1/verdict
// RUN: FileCheck %s --check-prefix=ERR < %t/err
// RUN: cmp %t/1/cut.npy %t/2/cut.npy
// RUN: cmp %t/1/h_log_cut.npy %t/2/h_log_cut.npy
// RUN: cmp %t/1/h_cut.npy %t/2/h_cut.npy
// RUN: cmp %t/1/profile.json %t/2/profile.json

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// ERR-DAG: compared with the reference output=rows
// ERR-DAG: compared with the reference output=columns
// ERR-DAG: compared with the reference output=log_rows
// ERR-DAG: compared with the reference output=log_columns
// ERR-DAG: compared with the reference output=h_rows
// ERR-DAG: compared with the reference output=h_columns
// ERR-DAG: compared with the reference output=h_log
// ERR-DAG: compared with the reference output=cut
// ERR-DAG: compared with the reference output=h_log_cut
// ERR-DAG: compared with the reference output=shared
// ERR-DAG: compared with the reference output=h_cut
func.func @main(%x0: tensor<12x64xf32> {ipu.name = "x"}, %h0: tensor<8x4x32xf16> {ipu.name = "h"}, %w0: tensor<2x4096xf32> {ipu.name = "w"}, %v: tensor<4x2048xf16> {ipu.name = "v"}, %u0: tensor<20x4096xf32> {ipu.name = "u"}) -> (tensor<12x64xf32> {ipu.name = "rows"}, tensor<12x64xf32> {ipu.name = "columns"}, tensor<12x64xf32> {ipu.name = "log_rows"}, tensor<12x64xf32> {ipu.name = "log_columns"}, tensor<8x4x32xf16> {ipu.name = "h_rows"}, tensor<8x4x32xf16> {ipu.name = "h_columns"}, tensor<8x4x32xf16> {ipu.name = "h_log"}, tensor<2x4096xf32> {ipu.name = "cut"}, tensor<4x2048xf16> {ipu.name = "h_log_cut"}, tensor<20x4096xf32> {ipu.name = "shared"}, tensor<4x2048xf16> {ipu.name = "h_cut"}) {
  %k = nn.constant dense<8.0> : tensor<12x64xf32>
  %x = nn.mul %x0, %k : (tensor<12x64xf32>, tensor<12x64xf32>) -> tensor<12x64xf32>
  %kh = nn.constant dense<8.0> : tensor<8x4x32xf16>
  %h = nn.mul %h0, %kh : (tensor<8x4x32xf16>, tensor<8x4x32xf16>) -> tensor<8x4x32xf16>
  %a = nn.softmax %x {axis = 1 : i64} : tensor<12x64xf32>
  %b = nn.softmax %x {axis = 0 : i64} : tensor<12x64xf32>
  %c = nn.log_softmax %x {axis = 1 : i64} : tensor<12x64xf32>
  %d = nn.log_softmax %x {axis = 0 : i64} : tensor<12x64xf32>
  %e = nn.softmax %h {axis = 2 : i64} : tensor<8x4x32xf16>
  %f = nn.softmax %h {axis = 1 : i64} : tensor<8x4x32xf16>
  %g = nn.log_softmax %h {axis = 2 : i64} : tensor<8x4x32xf16>
  %kw = nn.constant dense<8.0> : tensor<2x4096xf32>
  %w = nn.mul %w0, %kw : (tensor<2x4096xf32>, tensor<2x4096xf32>) -> tensor<2x4096xf32>
  %i = nn.softmax %w {axis = 1 : i64} : tensor<2x4096xf32>
  %j = nn.log_softmax %v {axis = 1 : i64} : tensor<4x2048xf16>
  %l = nn.softmax %u0 {axis = 1 : i64} : tensor<20x4096xf32>
  %kv = nn.constant dense<8.0> : tensor<4x2048xf16>
  %hv = nn.mul %v, %kv : (tensor<4x2048xf16>, tensor<4x2048xf16>) -> tensor<4x2048xf16>
  %n = nn.softmax %hv {axis = 1 : i64} : tensor<4x2048xf16>
  return %a, %b, %c, %d, %e, %f, %g, %i, %j, %l, %n : tensor<12x64xf32>, tensor<12x64xf32>, tensor<12x64xf32>, tensor<12x64xf32>, tensor<8x4x32xf16>, tensor<8x4x32xf16>, tensor<8x4x32xf16>, tensor<2x4096xf32>, tensor<4x2048xf16>, tensor<20x4096xf32>, tensor<4x2048xf16>
}
