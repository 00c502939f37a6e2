// Quantized graphs on the device (test16), against the reference: the
// forms onnxruntime's quantizers write, as the importer composes them.
// A dynamic quantization (global max/min, scale and zero point, rounding
// half to even) feeding an integer matmul by an i8 weight (a parameter,
// widened to f32 by the host at load) with K = 1100, split in three f32
// matmuls whose sums stay exact (1100 * 255 * 128 > 2^24); the i32 result
// scaled to f32; a QuantizeLinear / DequantizeLinear pair on it (u8,
// per tensor) and a rounding of halves of both signs, -0 and 2^23 + 1
// (an input: a constant's would be folded at compile time).
// No u8, i8 or integer matmul reaches the tiles: every code is an f32.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as n; r = n.random.default_rng(5); n.save('%t/w.npy', r.integers(-128, 128, (1100, 24)).astype(n.int8)); n.save('%t/x.npy', (r.standard_normal((4, 1100)) * 2.5).astype(n.float32))"
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --input x=%t/x.npy --input w=%t/w.npy --print-outputs 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK: r: tensor<10xf32> = [2, -2, 0, -0, -0, 0, 8388609, -4, 4, 2]
// CHECK: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// TILE: tile.host_input %arg1 {{.*}}resident} : tensor<1100x24xi8> -> tensor<1100x24xf32>
// TILE-NOT: i8>
// TILE-COUNT-3: tile.matmul {{.*}} -> tensor<4x{{[0-9]+}}xf32>
// TILE-NOT: i8>
// TILE-NOT: tile.matmul

func.func @main(%x: tensor<4x1100xf32> {ipu.name = "x"}, %w: tensor<1100x24xi8> {ipu.name = "w", ipu.weight}, %halves: tensor<10xf32> {ipu.name = "halves", ipu.default = dense<[2.5, -2.5, 0.5, -0.5, -0.0, 0.0, 8388609.0, -3.5, 4.4999995, 1.5000001]> : tensor<10xf32>}) -> (tensor<4x24xf32> {ipu.name = "y"}, tensor<10xf32> {ipu.name = "r"}) {
  %zero = nn.constant dense<0.0> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %q255 = nn.constant dense<255.0> : tensor<f32>
  %mx0 = nn.reduce_max %x {axes = array<i64: 0, 1>} : tensor<4x1100xf32> -> tensor<f32>
  %mn0 = nn.reduce_min %x {axes = array<i64: 0, 1>} : tensor<4x1100xf32> -> tensor<f32>
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
  %xs = nn.div %x, %s : (tensor<4x1100xf32>, tensor<f32>) -> tensor<4x1100xf32>
  %xr = nn.round %xs : tensor<4x1100xf32>
  %xz = nn.add %xr, %zf : (tensor<4x1100xf32>, tensor<f32>) -> tensor<4x1100xf32>
  %xc0 = nn.max %xz, %zero : (tensor<4x1100xf32>, tensor<f32>) -> tensor<4x1100xf32>
  %xc = nn.min %xc0, %q255 : (tensor<4x1100xf32>, tensor<f32>) -> tensor<4x1100xf32>
  %q = nn.cast %xc {saturate} : tensor<4x1100xf32> -> tensor<4x1100xui8>
  %q32 = nn.cast %q {saturate} : tensor<4x1100xui8> -> tensor<4x1100xi32>
  %z32 = nn.cast %z {saturate} : tensor<ui8> -> tensor<i32>
  %a = nn.sub %q32, %z32 : (tensor<4x1100xi32>, tensor<i32>) -> tensor<4x1100xi32>
  %w32 = nn.cast %w {saturate} : tensor<1100x24xi8> -> tensor<1100x24xi32>
  %acc = nn.matmul %a, %w32 : (tensor<4x1100xi32>, tensor<1100x24xi32>) -> tensor<4x24xi32>
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
  %r = nn.round %halves : tensor<10xf32>
  return %y, %r : tensor<4x24xf32>, tensor<10xf32>
}
