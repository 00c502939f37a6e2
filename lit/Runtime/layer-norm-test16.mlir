// Layer norm on the 16-tile test target, checked against the reference:
// without scale and bias, with a scale, with both (each tile receives the
// whole scale and bias), over the last axis and over the last two, f32 and
// f16, on inputs offset by 20 (the statistics are taken about the mean).
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
func.func @main(%x0: tensor<16x2x96xf32> {ipu.name = "x"}, %g: tensor<96xf32> {ipu.name = "g"}, %b: tensor<2x96xf32> {ipu.name = "b"}, %g2: tensor<2x96xf32> {ipu.name = "g2"}, %h0: tensor<24x64xf16> {ipu.name = "h"}, %hg: tensor<64xf16> {ipu.name = "hg"}, %hb: tensor<64xf16> {ipu.name = "hb"}) -> (tensor<16x2x96xf32> {ipu.name = "plain"}, tensor<16x2x96xf32> {ipu.name = "scaled"}, tensor<16x2x96xf32> {ipu.name = "affine"}, tensor<24x64xf16> {ipu.name = "h_plain"}, tensor<24x64xf16> {ipu.name = "h_affine"}) {
  %k = nn.constant dense<20.0> : tensor<16x2x96xf32>
  %x = nn.add %x0, %k : (tensor<16x2x96xf32>, tensor<16x2x96xf32>) -> tensor<16x2x96xf32>
  %kh = nn.constant dense<20.0> : tensor<24x64xf16>
  %h = nn.add %h0, %kh : (tensor<24x64xf16>, tensor<24x64xf16>) -> tensor<24x64xf16>
  %p = nn.layer_norm %x {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<16x2x96xf32>) -> tensor<16x2x96xf32>
  %s = nn.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<16x2x96xf32>, tensor<96xf32>) -> tensor<16x2x96xf32>
  %a = nn.layer_norm %x, %g2, %b {axis = 1 : i64, epsilon = 1.0e-03 : f32} : (tensor<16x2x96xf32>, tensor<2x96xf32>, tensor<2x96xf32>) -> tensor<16x2x96xf32>
  %hp = nn.layer_norm %h {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<24x64xf16>) -> tensor<24x64xf16>
  %ha = nn.layer_norm %h, %hg, %hb {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<24x64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<24x64xf16>
  return %p, %s, %a, %hp, %ha : tensor<16x2x96xf32>, tensor<16x2x96xf32>, tensor<16x2x96xf32>, tensor<24x64xf16>, tensor<24x64xf16>
}
