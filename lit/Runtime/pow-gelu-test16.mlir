// pow and both gelu forms on the device (test16), against the reference.
// pow is IEEE pow in double, rounded once, as the reference computes it:
// negative bases with integral exponents keep their sign, with fractional
// ones give NaN; exponents broadcast (a row, a scalar), and a constant
// exponent of another type (i64 3, f32 2 for an f16 base) becomes the
// base's type at compile time. Odd sizes: 5x9 f32, 37 f16.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --print-outputs 2>/dev/null | FileCheck %s
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-DAG: signs: tensor<6xf32> = [-8, 4, NaN, -0.125, 1, 1]
// CHECK: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
func.func @main(
    %x: tensor<5x9xf32> {ipu.name = "x"},
    %e: tensor<9xf32> {ipu.name = "e", ipu.default = dense<[2.0, 3.0, -1.0, 0.5, 0.0, -2.0, 1.5, 4.0, 0x7FC00000]> : tensor<9xf32>},
    %nb: tensor<6xf32> {ipu.name = "nb", ipu.default = dense<[-2.0, -2.0, -2.0, -2.0, 0x7FC00000, 1.0]> : tensor<6xf32>},
    %ne: tensor<6xf32> {ipu.name = "ne", ipu.default = dense<[3.0, 2.0, 0.5, -3.0, 0.0, 0x7FC00000]> : tensor<6xf32>},
    %h: tensor<37xf16> {ipu.name = "h"})
    -> (tensor<5x9xf32> {ipu.name = "row"}, tensor<5x9xf32> {ipu.name = "cube"},
        tensor<6xf32> {ipu.name = "signs"}, tensor<37xf16> {ipu.name = "square_h"},
        tensor<5x9xf32> {ipu.name = "gelu_tanh"}, tensor<37xf16> {ipu.name = "gelu_tanh_h"},
        tensor<37xf16> {ipu.name = "gelu_h"}) {
  %row = nn.pow %x, %e : (tensor<5x9xf32>, tensor<9xf32>) -> tensor<5x9xf32>
  %three = nn.constant dense<3> : tensor<i64>
  %cube = nn.pow %x, %three : (tensor<5x9xf32>, tensor<i64>) -> tensor<5x9xf32>
  %signs = nn.pow %nb, %ne : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %two = nn.constant dense<2.0> : tensor<f32>
  %sq = nn.pow %h, %two : (tensor<37xf16>, tensor<f32>) -> tensor<37xf16>
  %gt = nn.gelu %x {approximate = "tanh"} : tensor<5x9xf32>
  %gth = nn.gelu %h {approximate = "tanh"} : tensor<37xf16>
  %gh = nn.gelu %h : tensor<37xf16>
  return %row, %cube, %signs, %sq, %gt, %gth, %gh : tensor<5x9xf32>, tensor<5x9xf32>, tensor<6xf32>, tensor<37xf16>, tensor<5x9xf32>, tensor<37xf16>, tensor<37xf16>
}
