// QuantizeLinear / DequantizeLinear pairs as quantize_static writes them
// (constant scale and zero point), on the device (test16) against the
// reference: u8 with zero point 3, i8 with zero point -5 (its add and
// clamp written the other way round), and i8 with a scale and zero point
// per row. The inputs hold halves of both signs (round half to even), -0,
// values past the clamp up to 1e30 and the infinities, and a NaN (its code
// is 0). The expected values are ONNX's (numpy: x / s rounded half to
// even, plus z, clipped, NaN made 0, minus z, times s).
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --print-outputs 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-DAG: u8: tensor<16xf32> = [1, -1, 0, 0, 0, 0, 126, -1.5, 126, -1.5, 126, -1.5, -1.5, 126, 126, -1.5]
// CHECK-DAG: i8: tensor<16xf32> = [1.25, -1.25, 0.25, -0.25, 0, 0, 33, -30.75, 33, -30.75, 33, -30.75, 1.25, 33, 33, -1.75]
// CHECK-DAG: rows: tensor<2x8xf32> = [1, -1, 0, 0, 0, 0, 62, -65.5, 33, -30.75, 33, -30.75, 1.25, 33, 33, -1.75]
// CHECK: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// Each per-tensor pair: the division, the rounding add, the offset sub
// (1.5 * 2^23 - z, one constant), the clamp, NaN made 0, then z and s.
// TILE-NOT: tile.map {{.*}}fn = #tile.fn<abs>{{.*}} -> tensor<16xf32>
// TILE: %[[V:[0-9]+]] = tile.map %0, %{{[0-9]+}} {{.*}}fn = #tile.fn<div>{{.*}} -> tensor<16xf32>
// TILE-NEXT: tile.constant {{.*}}dense<12582912.0> : tensor<16xf32>
// TILE-NEXT: %[[U:[0-9]+]] = tile.map %[[V]], %{{[0-9]+}} {{.*}}fn = #tile.fn<add>
// TILE-NEXT: tile.constant {{.*}}dense<12582909.0> : tensor<16xf32>
// TILE-NEXT: %[[D:[0-9]+]] = tile.map %[[U]], %{{[0-9]+}} {{.*}}fn = #tile.fn<sub>
// TILE-NEXT: tile.constant {{.*}}dense<0.0> : tensor<16xf32>
// TILE-NEXT: %[[LO:[0-9]+]] = tile.map %[[D]], %{{[0-9]+}} {{.*}}fn = #tile.fn<max>
// TILE-NEXT: tile.constant {{.*}}dense<255.0> : tensor<16xf32>
// TILE-NEXT: %[[C:[0-9]+]] = tile.map %[[LO]], %{{[0-9]+}} {{.*}}fn = #tile.fn<min>
// TILE-NEXT: %[[N:[0-9]+]] = tile.predicate %[[C]], %[[C]] {{.*}}fn = #tile.fn<equal>
// TILE-NEXT: %[[Q:[0-9]+]] = tile.select %[[N]], %[[C]], %{{[0-9]+}}
// TILE-NEXT: tile.constant {{.*}}dense<3.0> : tensor<16xf32>
// TILE-NEXT: %[[Z:[0-9]+]] = tile.map %[[Q]], %{{[0-9]+}} {{.*}}fn = #tile.fn<sub>
// TILE-NEXT: tile.map %[[Z]], %{{[0-9]+}} {{.*}}fn = #tile.fn<mul>
// TILE: tile.constant {{.*}}dense<12582917.0> : tensor<16xf32>
// TILE: tile.constant {{.*}}dense<-128.0> : tensor<16xf32>
// TILE: tile.constant {{.*}}dense<127.0> : tensor<16xf32>
// The per-row pair: its offsets 1.5 * 2^23 - z a constant too (expanded
// to the result's block at compile time, as every broadcast constant is).
// TILE: tile.constant {{.*}}dense<{{\[}}[12582909.0, {{.*}}], [12582917.0, {{.*}}]]> : tensor<2x8xf32>
// TILE-NOT: tile.map {{.*}}fn = #tile.fn<abs>
// TILE-NOT: ui8
// TILE-NOT: xi8

func.func @main(%x: tensor<16xf32> {ipu.name = "x", ipu.default = dense<[1.25, -1.25, 0.25, -0.25, -0.0, 0.0, 2097152.0, -2097152.0, 1.0e30, -1.0e30, 0x7F800000, 0xFF800000, 0x7FC00000, 126.25, 127.75, -1.75]> : tensor<16xf32>}) -> (tensor<16xf32> {ipu.name = "u8"}, tensor<16xf32> {ipu.name = "i8"}, tensor<2x8xf32> {ipu.name = "rows"}) {
  %s = nn.constant dense<0.5> : tensor<f32>
  %z = nn.constant dense<3.0> : tensor<f32>
  %lo = nn.constant dense<0.0> : tensor<f32>
  %hi = nn.constant dense<255.0> : tensor<f32>
  %v = nn.div %x, %s : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %r = nn.round %v : tensor<16xf32>
  %a = nn.add %r, %z : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %c0 = nn.max %a, %lo : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %c = nn.min %c0, %hi : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %q = nn.cast %c {saturate} : tensor<16xf32> -> tensor<16xui8>
  %qf = nn.cast %q {saturate} : tensor<16xui8> -> tensor<16xf32>
  %z2 = nn.constant dense<3.0> : tensor<f32>
  %d = nn.sub %qf, %z2 : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %y = nn.mul %d, %s : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %s8 = nn.constant dense<0.25> : tensor<f32>
  %z8 = nn.constant dense<-5.0> : tensor<f32>
  %lo8 = nn.constant dense<-128.0> : tensor<f32>
  %hi8 = nn.constant dense<127.0> : tensor<f32>
  %v8 = nn.div %x, %s8 : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %r8 = nn.round %v8 : tensor<16xf32>
  %a8 = nn.add %z8, %r8 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %c80 = nn.min %a8, %hi8 : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %c8 = nn.max %c80, %lo8 : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %q8 = nn.cast %c8 {saturate} : tensor<16xf32> -> tensor<16xi8>
  %q8f = nn.cast %q8 {saturate} : tensor<16xi8> -> tensor<16xf32>
  %d8 = nn.sub %q8f, %z8 : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %y8 = nn.mul %d8, %s8 : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %x2 = nn.reshape %x : tensor<16xf32> -> tensor<2x8xf32>
  %sr = nn.constant dense<[[0.5], [0.25]]> : tensor<2x1xf32>
  %zr = nn.constant dense<[[3.0], [-5.0]]> : tensor<2x1xf32>
  %vr = nn.div %x2, %sr : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %rr = nn.round %vr : tensor<2x8xf32>
  %ar = nn.add %rr, %zr : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %cr0 = nn.max %ar, %lo8 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %cr = nn.min %cr0, %hi8 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %qr = nn.cast %cr {saturate} : tensor<2x8xf32> -> tensor<2x8xi8>
  %qrf = nn.cast %qr {saturate} : tensor<2x8xi8> -> tensor<2x8xf32>
  %dr = nn.sub %qrf, %zr : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %yr = nn.mul %dr, %sr : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  return %y, %y8, %yr : tensor<16xf32>, tensor<16xf32>, tensor<2x8xf32>
}
