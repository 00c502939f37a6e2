// nn -> tile for quantized arithmetic (test16), as the ONNX importer
// composes DynamicQuantizeLinear, MatMulInteger and a QuantizeLinear /
// DequantizeLinear pair: no u8, i8 or integer matmul reaches the tiles.
// The codes are f32: a quantization clamp(round(v) + z, lo, hi) cast to u8
// is clamp((v + 1.5 * 2^23) - (1.5 * 2^23 - z), lo, hi) with NaN made 0
// (the add rounds half to even; beyond 2^22 the clamp decides), the i8
// weight is widened to f32 by the host at load (`resident ... -> f32`), and
// the i32 matmul (K = 40: 40 * 255 * 128 <= 2^24, one f32 matmul) is a
// tile.matmul of f32 whose result the scale multiplies directly. The scalar
// zero point's own nn.round (no clamp after it) is |x| + 2^23 - 2^23 with
// the sign of 1/x put back, and x itself from 2^23 on.
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null

// CHECK-NOT: ui8
// CHECK-NOT: i32>
// CHECK: %1 = tile.host_input %arg1 {{.*}}, resident} : tensor<40x24xi8> -> tensor<40x24xf32>
// The max and min over both axes: each row's first, then the rows'.
// CHECK: tile.reduce %0 {axes = array<i64: 1>, {{.*}}kind = "max"{{.*}} : tensor<4x40xf32> -> tensor<4xf32>
// CHECK-NEXT: tile.reduce %{{.*}} {axes = array<i64: 0>, {{.*}}kind = "max"{{.*}} : tensor<4xf32> -> tensor<f32>
// The zero point, round(clamp(-min / scale, 0, 255)), by the guarded
// rounding:
// CHECK: tile.constant {{.*}} dense<8388608.0> : tensor<f32>
// CHECK: tile.map {{.*}}fn = #tile.fn<reciprocal>{{.*}} -> tensor<f32>
// CHECK: tile.select {{.*}} -> tensor<f32>
// CHECK: %[[ZP:[0-9]+]] = tile.select {{.*}} -> tensor<f32>
// x / scale, rounded, plus the zero point, clamped to [0, 255] (the splats
// at the result's shape and mapping, 0 shared by the clamp and the select);
// the offset 1.5 * 2^23 - zero point is a scalar sub, the zero point being
// computed:
// CHECK-NEXT: %[[XS:[0-9]+]] = tile.map %0, %{{[0-9]+}} {{.*}}fn = #tile.fn<div>{{.*}} -> tensor<4x40xf32>
// CHECK-NEXT: %[[R:[0-9]+]] = tile.constant {{.*}} dense<12582912.0> : tensor<f32>
// CHECK-NEXT: %[[RB:[0-9]+]] = tile.constant {{.*}} dense<12582912.0> : tensor<4x40xf32>
// CHECK-NEXT: %[[UP:[0-9]+]] = tile.map %[[XS]], %[[RB]] {{.*}}fn = #tile.fn<add>
// CHECK-NEXT: %[[OFF:[0-9]+]] = tile.map %[[R]], %[[ZP]] {{.*}}fn = #tile.fn<sub>{{.*}} -> tensor<f32>
// CHECK-NEXT: %[[XZ:[0-9]+]] = tile.map %[[UP]], %[[OFF]] {{.*}}fn = #tile.fn<sub>{{.*}} -> tensor<4x40xf32>
// CHECK-NEXT: %[[ZERO:[0-9]+]] = tile.constant {{.*}} dense<0.0> : tensor<4x40xf32>
// CHECK-NEXT: %[[XM:[0-9]+]] = tile.map %[[XZ]], %[[ZERO]] {{.*}}fn = #tile.fn<max>
// CHECK-NEXT: tile.constant {{.*}} dense<255.0> : tensor<4x40xf32>
// CHECK-NEXT: %[[XC:[0-9]+]] = tile.map %[[XM]], %{{[0-9]+}} {{.*}}fn = #tile.fn<min>
// CHECK-NEXT: %[[NUM:[0-9]+]] = tile.predicate %[[XC]], %[[XC]] {{.*}}fn = #tile.fn<equal>
// CHECK-NEXT: %[[Q:[0-9]+]] = tile.select %[[NUM]], %[[XC]], %[[ZERO]]
// minus the zero point (an image the same way), times the weight as f32:
// CHECK: %[[AC:[0-9]+]] = tile.map %[[Q]], %{{[0-9]+}} {{.*}}fn = #tile.fn<sub>{{.*}} -> tensor<4x40xf32>
// CHECK-NEXT: tile.constant {{.*}} dense<0.0> : tensor<40x8xf32>
// CHECK-NEXT: %[[W:[0-9]+]] = tile.view %1, %{{[0-9]+}} {axis = 1 : i64, kind = "concat"
// CHECK-NEXT: %[[M:[0-9]+]] = tile.matmul %[[AC]], %[[W]] {{{.*}}kernel = "gemm_f32_{{.*}} : (tensor<4x40xf32>, tensor<40x32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT: %[[MS:[0-9]+]] = tile.view %[[M]] {{.*}}kind = "slice"
// CHECK: tile.map %[[MS]], %{{[0-9]+}} {{.*}}fn = #tile.fn<mul>{{.*}} -> tensor<4x24xf32>
// CHECK-NOT: tile.matmul
// The requantization to u8 and back (a constant zero point of 128: the
// offset is the constant 1.5 * 2^23 - 128), six ops and the division:
// CHECK: %[[HS:[0-9]+]] = tile.map %{{[0-9]+}}, %{{[0-9]+}} {{.*}}fn = #tile.fn<div>{{.*}} -> tensor<4x24xf32>
// CHECK-NEXT: %[[HR:[0-9]+]] = tile.constant {{.*}} dense<12582912.0> : tensor<4x24xf32>
// CHECK-NEXT: %[[HU:[0-9]+]] = tile.map %[[HS]], %[[HR]] {{.*}}fn = #tile.fn<add>
// CHECK-NEXT: %[[HO:[0-9]+]] = tile.constant {{.*}} dense<12582784.0> : tensor<4x24xf32>
// CHECK-NEXT: %[[HZ:[0-9]+]] = tile.map %[[HU]], %[[HO]] {{.*}}fn = #tile.fn<sub>
// CHECK-NEXT: %[[HZERO:[0-9]+]] = tile.constant {{.*}} dense<0.0> : tensor<4x24xf32>
// CHECK-NEXT: %[[HM:[0-9]+]] = tile.map %[[HZ]], %[[HZERO]] {{.*}}fn = #tile.fn<max>
// CHECK-NEXT: tile.constant {{.*}} dense<255.0> : tensor<4x24xf32>
// CHECK-NEXT: %[[HC:[0-9]+]] = tile.map %[[HM]], %{{[0-9]+}} {{.*}}fn = #tile.fn<min>
// CHECK-NEXT: %[[HN:[0-9]+]] = tile.predicate %[[HC]], %[[HC]] {{.*}}fn = #tile.fn<equal>
// CHECK-NEXT: %[[HQ:[0-9]+]] = tile.select %[[HN]], %[[HC]], %[[HZERO]]
// CHECK-NEXT: tile.constant {{.*}} dense<128.0> : tensor<4x24xf32>
// CHECK-NEXT: %[[HD:[0-9]+]] = tile.map %[[HQ]], %{{[0-9]+}} {{.*}}fn = #tile.fn<sub>
// CHECK-NEXT: %[[Y:[0-9]+]] = tile.map %[[HD]], %{{[0-9]+}} {{.*}}fn = #tile.fn<mul>
// CHECK-NEXT: tile.host_output %[[Y]] {name = "y"} : tensor<4x24xf32>

func.func @main(%x: tensor<4x40xf32> {ipu.name = "x"}, %w: tensor<40x24xi8> {ipu.name = "w", ipu.weight}) -> (tensor<4x24xf32> {ipu.name = "y"}) {
  %zero = nn.constant dense<0.0> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %q255 = nn.constant dense<255.0> : tensor<f32>
  %mx0 = nn.reduce_max %x {axes = array<i64: 0, 1>} : tensor<4x40xf32> -> tensor<f32>
  %mn0 = nn.reduce_min %x {axes = array<i64: 0, 1>} : tensor<4x40xf32> -> tensor<f32>
  %mx = nn.max %mx0, %zero : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %mn = nn.min %mn0, %zero : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %range = nn.sub %mx, %mn : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %s0 = nn.div %range, %q255 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %empty = nn.equal %mx, %mn : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %s = nn.select %empty, %one, %s0 : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  %nm = nn.div %mn, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %nz = nn.sub %zero, %nm : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %zc0 = nn.max %nz, %zero : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %zc = nn.min %zc0, %q255 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %zf = nn.round %zc : tensor<f32>
  %z = nn.cast %zf {saturate} : tensor<f32> -> tensor<ui8>
  %xs = nn.div %x, %s : (tensor<4x40xf32>, tensor<f32>) -> tensor<4x40xf32>
  %xr = nn.round %xs : tensor<4x40xf32>
  %xz = nn.add %xr, %zf : (tensor<4x40xf32>, tensor<f32>) -> tensor<4x40xf32>
  %xc0 = nn.max %xz, %zero : (tensor<4x40xf32>, tensor<f32>) -> tensor<4x40xf32>
  %xc = nn.min %xc0, %q255 : (tensor<4x40xf32>, tensor<f32>) -> tensor<4x40xf32>
  %q = nn.cast %xc {saturate} : tensor<4x40xf32> -> tensor<4x40xui8>
  %q32 = nn.cast %q {saturate} : tensor<4x40xui8> -> tensor<4x40xi32>
  %z32 = nn.cast %z {saturate} : tensor<ui8> -> tensor<i32>
  %a = nn.sub %q32, %z32 : (tensor<4x40xi32>, tensor<i32>) -> tensor<4x40xi32>
  %w32 = nn.cast %w {saturate} : tensor<40x24xi8> -> tensor<40x24xi32>
  %acc = nn.matmul %a, %w32 : (tensor<4x40xi32>, tensor<40x24xi32>) -> tensor<4x24xi32>
  %accf = nn.cast %acc {saturate} : tensor<4x24xi32> -> tensor<4x24xf32>
  %ws = nn.constant dense<0.0123> : tensor<f32>
  %sc = nn.mul %s, %ws : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %h = nn.mul %accf, %sc : (tensor<4x24xf32>, tensor<f32>) -> tensor<4x24xf32>
  %ys = nn.constant dense<0.5> : tensor<f32>
  %yz = nn.constant dense<128.0> : tensor<f32>
  %hs = nn.div %h, %ys : (tensor<4x24xf32>, tensor<f32>) -> tensor<4x24xf32>
  %hr = nn.round %hs : tensor<4x24xf32>
  %hz = nn.add %hr, %yz : (tensor<4x24xf32>, tensor<f32>) -> tensor<4x24xf32>
  %hc0 = nn.max %hz, %zero : (tensor<4x24xf32>, tensor<f32>) -> tensor<4x24xf32>
  %hc = nn.min %hc0, %q255 : (tensor<4x24xf32>, tensor<f32>) -> tensor<4x24xf32>
  %hq = nn.cast %hc {saturate} : tensor<4x24xf32> -> tensor<4x24xui8>
  %hf = nn.cast %hq {saturate} : tensor<4x24xui8> -> tensor<4x24xf32>
  %hd = nn.sub %hf, %yz : (tensor<4x24xf32>, tensor<f32>) -> tensor<4x24xf32>
  %y = nn.mul %hd, %ys : (tensor<4x24xf32>, tensor<f32>) -> tensor<4x24xf32>
  return %y : tensor<4x24xf32>
}
