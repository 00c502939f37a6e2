// 8-bit integer results of a quantized graph on the device: f32 inputs
// quantized to u8 (QuantizeLinear's form: divide, round half to even, add
// the zero point, clamp) and to i8. The tiles hold every small integer as
// an exact f32; the host narrows each result to its type as it streams it
// out (an output stream with a conversion), checking that every element
// is an integer of that type. Halves of both signs, both ends of each
// range and beyond them.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as n; n.save('%t/x.npy', n.array([-70, -0.25, -0.75, 0.25, 0.75, 1.25, 63.5, 100], n.float32))"
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --input x=%t/x.npy --print-outputs 2>/dev/null | FileCheck %s
// The package carries the conversions; run from it, the same.
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --write-package %t/p.ipuexe 2>/dev/null > /dev/null
// RUN: ipu-run %t/p.ipuexe --device-lock %t/device.lock --input x=%t/x.npy --print-outputs 2>/dev/null | FileCheck %s --check-prefix=PKG
// RUN: ipu-translate --from-ipuexe %t/p.ipuexe | FileCheck %s --check-prefix=MACHINE
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --input x=%t/x.npy --check-ops 2>/dev/null | FileCheck %s --check-prefix=OPS
// The exchange stage, printed and read back, lowers to the same package.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | ipu-translate --to-ipuexe - -o %t/one.ipuexe
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | ipu-opt --convert-exchange-to-machine | ipu-translate --to-ipuexe - -o %t/exchange.ipuexe
// RUN: cmp %t/one.ipuexe %t/exchange.ipuexe
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCHANGE
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | FileCheck %s --check-prefix=MACHINE

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK: q: tensor<8xui8> = [0, 128, 126, 128, 130, 130, 255, 255]
// CHECK: s: tensor<8xi8> = [-128, -1, -3, 1, 3, 5, 127, 127]
// CHECK: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// PKG: q: tensor<8xui8> = [0, 128, 126, 128, 130, 130, 255, 255]
// PKG: s: tensor<8xi8> = [-128, -1, -3, 1, 3, 5, 127, 127]
// OPS: nn.cast {{.*}}tensor<8xui8> {{.*}} narrowed by the host as the result streams out (each element checked): reference value used
// OPS: nn.cast {{.*}}tensor<8xi8> {{.*}} narrowed by the host as the result streams out (each element checked): reference value used
// The rounding, zero point and clamp of each quantization are one image
// on the tiles (docs/lowering.md, SaturatedRound), so only the scaling is
// stored between them.
// OPS: checked 2 of 11 ops on the device's values (9 not stored, 2 of them converted by the host)
// TILE: %[[Q:.*]] = tile.host_output %{{.*}} {name = "q"} : tensor<8xf32> -> tensor<8xui8>
// TILE: %[[S:.*]] = tile.host_output %{{.*}} {name = "s"} : tensor<8xf32> -> tensor<8xi8>
// TILE: return %[[Q]], %[[S]] : tensor<8xui8>, tensor<8xi8>
// TILE-NOT: i8>
// EXCHANGE: exchange.host_output {{{.*}}name = "q", tile_type = tensor<8xf32>} : tensor<8xui8>
// EXCHANGE: exchange.host_output {{{.*}}name = "s", tile_type = tensor<8xf32>} : tensor<8xi8>
// MACHINE-DAG: machine.host_stream "q" {direction = "output", element = "f32", host_element = "ui8"
// MACHINE-DAG: machine.host_stream "s" {direction = "output", element = "f32", host_element = "i8"

func.func @main(%x: tensor<8xf32> {ipu.name = "x"}) -> (tensor<8xui8> {ipu.name = "q"}, tensor<8xi8> {ipu.name = "s"}) {
  %half = nn.constant dense<0.5> : tensor<f32>
  %zp = nn.constant dense<128.0> : tensor<f32>
  %lo = nn.constant dense<0.0> : tensor<f32>
  %hi = nn.constant dense<255.0> : tensor<f32>
  %d = nn.div %x, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %r = nn.round %d : tensor<8xf32>
  %a = nn.add %r, %zp : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %m = nn.max %a, %lo : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %c = nn.min %m, %hi : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %q = nn.cast %c {saturate} : tensor<8xf32> -> tensor<8xui8>
  %four = nn.constant dense<4.0> : tensor<f32>
  %slo = nn.constant dense<-128.0> : tensor<f32>
  %shi = nn.constant dense<127.0> : tensor<f32>
  %e = nn.mul %x, %four : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %er = nn.round %e : tensor<8xf32>
  %em = nn.max %er, %slo : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %ec = nn.min %em, %shi : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %s = nn.cast %ec {saturate} : tensor<8xf32> -> tensor<8xi8>
  return %q, %s : tensor<8xui8>, tensor<8xi8>
}
