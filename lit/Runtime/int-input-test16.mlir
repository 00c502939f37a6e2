// 8-bit integer inputs of a quantized graph on the device: a u8 and an i8
// input, dequantized, and the u8 one compared with a u8 constant. The tiles have no u8 or i8 kernels and hold every
// small integer as an exact f32, so the host widens each input as it
// streams it in (an input stream with a conversion, package format 5),
// and no cast runs on the tiles; a comparison of such integers is one of
// their images. Codes at both ends of each range.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as n; n.save('%t/x.npy', n.array([0, 1, 127, 128, 129, 254, 255, 200], n.uint8)); n.save('%t/q.npy', n.array([-128, -1, 0, 1, 127, -127, 64, -64], n.int8))"
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --input x=%t/x.npy --input q=%t/q.npy --print-outputs 2>/dev/null | FileCheck %s
// The package carries the conversions; run from it, the same.
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --write-package %t/p.ipuexe 2>/dev/null > /dev/null
// RUN: ipu-run %t/p.ipuexe --device-lock %t/device.lock --input x=%t/x.npy --input q=%t/q.npy --print-outputs 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | FileCheck %s --check-prefix=MACHINE
// The host supplies u8 codes, not their f32 images: an f32 buffer is refused.
// RUN: %python -c "import numpy as n; n.save('%t/xf.npy', n.zeros(8, n.float32))"
// RUN: not ipu-run %t/p.ipuexe --device-lock %t/device.lock --input x=%t/xf.npy --input q=%t/q.npy 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK: y: tensor<8xf32> = [-64, -63.5, -0.5, 0, 0.5, 63, 63.5, 36]
// CHECK: z: tensor<8xf32> = [-32, -0.25, 0, 0.25, 31.75, -31.75, 16, -16]
// CHECK: g: tensor<8xi1> = [0, 1, 0, 1, 1, 1, 1, 1]
// CHECK: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// TILE: tile.host_input %arg0 {{.*}} : tensor<8xui8> -> tensor<8xf32>
// TILE: tile.host_input %arg1 {{.*}} : tensor<8xi8> -> tensor<8xf32>
// TILE-NOT: i8>
// MACHINE-DAG: machine.host_stream "x" {direction = "input", element = "f32", host_element = "ui8"
// MACHINE-DAG: machine.host_stream "q" {direction = "input", element = "f32", host_element = "i8"
// BAD: input 'x' from {{.*}}xf.npy is tensor<8xf32>, but the model takes tensor<8xui8>

func.func @main(%x: tensor<8xui8> {ipu.name = "x"}, %q: tensor<8xi8> {ipu.name = "q"}) -> (tensor<8xf32> {ipu.name = "y"}, tensor<8xf32> {ipu.name = "z"}, tensor<8xi1> {ipu.name = "g"}) {
  %zp = nn.constant dense<128.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %quarter = nn.constant dense<0.25> : tensor<f32>
  %xf = nn.cast %x : tensor<8xui8> -> tensor<8xf32>
  %xc = nn.sub %xf, %zp : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %y = nn.mul %xc, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %qf = nn.cast %q : tensor<8xi8> -> tensor<8xf32>
  %z = nn.mul %qf, %quarter : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %c = nn.constant dense<[1, 0, 127, 127, 128, 253, 0, 199]> : tensor<8xui8>
  %g = nn.greater %x, %c : (tensor<8xui8>, tensor<8xui8>) -> tensor<8xi1>
  return %y, %z, %g : tensor<8xf32>, tensor<8xf32>, tensor<8xi1>
}
