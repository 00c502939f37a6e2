// Layer norm on the 16-tile test target, checked against the reference:
// without scale and bias, with a scale, with both (each tile receives the
// whole scale and bias), over the last axis and over the last two, f32 and
// f16, on inputs offset by 20 (the statistics are taken about the mean);
// and rows cut over tiles (2 x 4096 f32 and 2 x 8 x 256 f16 with scale and
// bias: each piece's mean and variance, combined per row and sent back,
// each tile normalising its piece with its columns of the scale and bias).
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>%t/err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t/err

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// ERR-DAG: compared with the reference output=plain
// ERR-DAG: compared with the reference output=scaled
// ERR-DAG: compared with the reference output=affine
// ERR-DAG: compared with the reference output=h_plain
// ERR-DAG: compared with the reference output=h_affine
// ERR-DAG: compared with the reference output=cut
// ERR-DAG: compared with the reference output=h_cut
func.func @main(%x0: tensor<16x2x96xf32> {ipu.name = "x"}, %g: tensor<96xf32> {ipu.name = "g"}, %b: tensor<2x96xf32> {ipu.name = "b"}, %g2: tensor<2x96xf32> {ipu.name = "g2"}, %h0: tensor<24x64xf16> {ipu.name = "h"}, %hg: tensor<64xf16> {ipu.name = "hg"}, %hb: tensor<64xf16> {ipu.name = "hb"}, %w: tensor<2x4096xf32> {ipu.name = "w"}, %wg: tensor<4096xf32> {ipu.name = "wg"}, %wb: tensor<4096xf32> {ipu.name = "wb"}, %v: tensor<2x8x256xf16> {ipu.name = "v"}, %vg: tensor<8x256xf16> {ipu.name = "vg"}, %vb: tensor<8x256xf16> {ipu.name = "vb"}) -> (tensor<16x2x96xf32> {ipu.name = "plain"}, tensor<16x2x96xf32> {ipu.name = "scaled"}, tensor<16x2x96xf32> {ipu.name = "affine"}, tensor<24x64xf16> {ipu.name = "h_plain"}, tensor<24x64xf16> {ipu.name = "h_affine"}, tensor<2x4096xf32> {ipu.name = "cut"}, tensor<2x8x256xf16> {ipu.name = "h_cut"}) {
  %k = nn.constant dense<20.0> : tensor<16x2x96xf32>
  %x = nn.add %x0, %k : (tensor<16x2x96xf32>, tensor<16x2x96xf32>) -> tensor<16x2x96xf32>
  %kh = nn.constant dense<20.0> : tensor<24x64xf16>
  %h = nn.add %h0, %kh : (tensor<24x64xf16>, tensor<24x64xf16>) -> tensor<24x64xf16>
  %p = nn.layer_norm %x {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<16x2x96xf32>) -> tensor<16x2x96xf32>
  %s = nn.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<16x2x96xf32>, tensor<96xf32>) -> tensor<16x2x96xf32>
  %a = nn.layer_norm %x, %g2, %b {axis = 1 : i64, epsilon = 1.0e-03 : f32} : (tensor<16x2x96xf32>, tensor<2x96xf32>, tensor<2x96xf32>) -> tensor<16x2x96xf32>
  %hp = nn.layer_norm %h {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<24x64xf16>) -> tensor<24x64xf16>
  %ha = nn.layer_norm %h, %hg, %hb {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<24x64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<24x64xf16>
  %c = nn.layer_norm %w, %wg, %wb {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<2x4096xf32>
  %hc = nn.layer_norm %v, %vg, %vb {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x256xf16>, tensor<8x256xf16>, tensor<8x256xf16>) -> tensor<2x8x256xf16>
  return %p, %s, %a, %hp, %ha, %c, %hc : tensor<16x2x96xf32>, tensor<16x2x96xf32>, tensor<16x2x96xf32>, tensor<24x64xf16>, tensor<24x64xf16>, tensor<2x4096xf32>, tensor<2x8x256xf16>
}
