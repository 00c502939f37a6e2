// 8- and 16-bit integer sums, differences, products and negations that
// wrap, as ONNX's do (200 + 100 in u8 is 44), on the device against the
// reference. The tiles hold each value as an exact f32 (its image); the
// exact result is reduced into the type by a floor made of f32 additions
// (nn-to-tile/src/wrap.rs), and a 16-bit product, which can reach 2^32,
// by bytes. Both ends of each range.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as n; n.save('%t/x.npy', n.array([0, 1, 127, 128, 200, 255, 250, 100], n.uint8)); n.save('%t/y.npy', n.array([255, 255, 128, 128, 100, 255, 6, 200], n.uint8)); n.save('%t/a.npy', n.array([-32768, 32767, -1, 300, -300, 255, 12345, -2], n.int16)); n.save('%t/b.npy', n.array([-1, 32767, -32768, 300, 301, 257, 321, 32767], n.int16))"
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --input x=%t/x.npy --input y=%t/y.npy --input a=%t/a.npy --input b=%t/b.npy --print-outputs 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE
// The exchange stage, printed and read back, lowers to the same package.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | ipu-translate --to-ipuexe - -o %t/one.ipuexe
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | ipu-opt --convert-exchange-to-machine | ipu-translate --to-ipuexe - -o %t/exchange.ipuexe
// RUN: cmp %t/one.ipuexe %t/exchange.ipuexe

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK: s: tensor<8xui8> = [255, 0, 255, 0, 44, 254, 0, 44]
// CHECK: d: tensor<8xui8> = [1, 2, 255, 0, 100, 0, 244, 156]
// CHECK: p: tensor<8xui8> = [0, 255, 128, 0, 32, 1, 220, 32]
// CHECK: t: tensor<8xi16> = [32767, -2, 32767, 600, 1, 512, 12666, 32765]
// CHECK: m: tensor<8xi16> = [-32768, 1, -32768, 24464, -24764, -1, 30585, 2]
// CHECK: g: tensor<8xi16> = [-32768, -32767, 1, -300, 300, -255, -12345, 2]
// CHECK: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// Every result is an f32 image narrowed by the host as it streams out.
// TILE-COUNT-6: tile.host_output {{.*}} : tensor<8xf32> -> tensor<8x{{u?}}i{{8|16}}>
// TILE-NOT: tile.map {{.*}}i8>
// TILE-NOT: tile.map {{.*}}i16>

func.func @main(%x: tensor<8xui8> {ipu.name = "x"}, %y: tensor<8xui8> {ipu.name = "y"},
                %a: tensor<8xi16> {ipu.name = "a"}, %b: tensor<8xi16> {ipu.name = "b"})
    -> (tensor<8xui8> {ipu.name = "s"}, tensor<8xui8> {ipu.name = "d"}, tensor<8xui8> {ipu.name = "p"},
        tensor<8xi16> {ipu.name = "t"}, tensor<8xi16> {ipu.name = "m"}, tensor<8xi16> {ipu.name = "g"}) {
  %s = nn.add %x, %y : (tensor<8xui8>, tensor<8xui8>) -> tensor<8xui8>
  %d = nn.sub %x, %y : (tensor<8xui8>, tensor<8xui8>) -> tensor<8xui8>
  %p = nn.mul %x, %y : (tensor<8xui8>, tensor<8xui8>) -> tensor<8xui8>
  %t = nn.add %a, %b : (tensor<8xi16>, tensor<8xi16>) -> tensor<8xi16>
  %m = nn.mul %a, %b : (tensor<8xi16>, tensor<8xi16>) -> tensor<8xi16>
  %g = nn.neg %a : tensor<8xi16>
  return %s, %d, %p, %t, %m, %g : tensor<8xui8>, tensor<8xui8>, tensor<8xui8>, tensor<8xi16>, tensor<8xi16>, tensor<8xi16>
}
