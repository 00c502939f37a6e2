// relu, max and min of a NaN on the device: NaN, as the reference (like numpy
// and ONNX Runtime) has it (the ISA's max/min are IEEE 754-2019 maximum and
// minimum, and relu keeps NaN: docs/isa.md section 5).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/elementwise_inputs.py %s %t > %t/inputs
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock $(cat %t/inputs) > %t/verdict
// RUN: FileCheck %s < %t/verdict

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS

func.func @main(%s_f32: tensor<81xf32> {ipu.name = "s_f32"},
                 %t_f32: tensor<81xf32> {ipu.name = "t_f32"},
                 %s_f16: tensor<81xf16> {ipu.name = "s_f16"},
                 %t_f16: tensor<81xf16> {ipu.name = "t_f16"})
    -> (tensor<81xf32> {ipu.name = "relu_f32"},
        tensor<81xf32> {ipu.name = "max_f32"},
        tensor<81xf32> {ipu.name = "min_f32"},
        tensor<81xf16> {ipu.name = "relu_f16"},
        tensor<81xf16> {ipu.name = "max_f16"},
        tensor<81xf16> {ipu.name = "min_f16"}) {
  %relu_f32 = nn.relu %s_f32 : tensor<81xf32>
  %max_f32 = nn.max %s_f32, %t_f32 : (tensor<81xf32>, tensor<81xf32>) -> tensor<81xf32>
  %min_f32 = nn.min %s_f32, %t_f32 : (tensor<81xf32>, tensor<81xf32>) -> tensor<81xf32>
  %relu_f16 = nn.relu %s_f16 : tensor<81xf16>
  %max_f16 = nn.max %s_f16, %t_f16 : (tensor<81xf16>, tensor<81xf16>) -> tensor<81xf16>
  %min_f16 = nn.min %s_f16, %t_f16 : (tensor<81xf16>, tensor<81xf16>) -> tensor<81xf16>
  return %relu_f32, %max_f32, %min_f32, %relu_f16, %max_f16, %min_f16
    : tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>
}
