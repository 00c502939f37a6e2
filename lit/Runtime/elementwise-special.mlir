// The elementwise ops at IEEE special values on the simulated device, in f32
// and f16, checked against the reference: 0, -0, inf, -inf, NaN and a few
// ordinary values (Inputs/elementwise_inputs.py: domains s and t pair every
// two of them in the binary ops). NaN must meet NaN and an infinity the same
// infinity. relu, max and min get no NaN here (the device's are IEEE
// maxNum/minNum, docs/isa.md section 5; elementwise-nan.mlir).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/elementwise_inputs.py %s %t > %t/inputs
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock $(cat %t/inputs) > %t/verdict 2> %t/log
// RUN: FileCheck %s < %t/verdict
// RUN: FileCheck %s --check-prefix=LOG < %t/log

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// LOG-COUNT-36: compared with the reference output=

func.func @main(%s_f32: tensor<81xf32> {ipu.name = "s_f32"},
                 %n_f32: tensor<81xf32> {ipu.name = "n_f32"},
                 %t_f32: tensor<81xf32> {ipu.name = "t_f32"},
                 %m_f32: tensor<81xf32> {ipu.name = "m_f32"},
                 %s_f16: tensor<81xf16> {ipu.name = "s_f16"},
                 %n_f16: tensor<81xf16> {ipu.name = "n_f16"},
                 %t_f16: tensor<81xf16> {ipu.name = "t_f16"},
                 %m_f16: tensor<81xf16> {ipu.name = "m_f16"})
    -> (tensor<81xf32> {ipu.name = "gelu_f32"},
        tensor<81xf32> {ipu.name = "exp_f32"},
        tensor<81xf32> {ipu.name = "tanh_f32"},
        tensor<81xf32> {ipu.name = "erf_f32"},
        tensor<81xf32> {ipu.name = "rsqrt_f32"},
        tensor<81xf32> {ipu.name = "sqrt_f32"},
        tensor<81xf32> {ipu.name = "neg_f32"},
        tensor<81xf32> {ipu.name = "abs_f32"},
        tensor<81xf32> {ipu.name = "sigmoid_f32"},
        tensor<81xf32> {ipu.name = "reciprocal_f32"},
        tensor<81xf32> {ipu.name = "log_f32"},
        tensor<81xf32> {ipu.name = "relu_f32"},
        tensor<81xf32> {ipu.name = "add_f32"},
        tensor<81xf32> {ipu.name = "sub_f32"},
        tensor<81xf32> {ipu.name = "mul_f32"},
        tensor<81xf32> {ipu.name = "div_f32"},
        tensor<81xf32> {ipu.name = "max_f32"},
        tensor<81xf32> {ipu.name = "min_f32"},
        tensor<81xf16> {ipu.name = "gelu_f16"},
        tensor<81xf16> {ipu.name = "exp_f16"},
        tensor<81xf16> {ipu.name = "tanh_f16"},
        tensor<81xf16> {ipu.name = "erf_f16"},
        tensor<81xf16> {ipu.name = "rsqrt_f16"},
        tensor<81xf16> {ipu.name = "sqrt_f16"},
        tensor<81xf16> {ipu.name = "neg_f16"},
        tensor<81xf16> {ipu.name = "abs_f16"},
        tensor<81xf16> {ipu.name = "sigmoid_f16"},
        tensor<81xf16> {ipu.name = "reciprocal_f16"},
        tensor<81xf16> {ipu.name = "log_f16"},
        tensor<81xf16> {ipu.name = "relu_f16"},
        tensor<81xf16> {ipu.name = "add_f16"},
        tensor<81xf16> {ipu.name = "sub_f16"},
        tensor<81xf16> {ipu.name = "mul_f16"},
        tensor<81xf16> {ipu.name = "div_f16"},
        tensor<81xf16> {ipu.name = "max_f16"},
        tensor<81xf16> {ipu.name = "min_f16"}) {
  %gelu_f32 = nn.gelu %s_f32 : tensor<81xf32>
  %exp_f32 = nn.exp %s_f32 : tensor<81xf32>
  %tanh_f32 = nn.tanh %s_f32 : tensor<81xf32>
  %erf_f32 = nn.erf %s_f32 : tensor<81xf32>
  %rsqrt_f32 = nn.rsqrt %s_f32 : tensor<81xf32>
  %sqrt_f32 = nn.sqrt %s_f32 : tensor<81xf32>
  %neg_f32 = nn.neg %s_f32 : tensor<81xf32>
  %abs_f32 = nn.abs %s_f32 : tensor<81xf32>
  %sigmoid_f32 = nn.sigmoid %s_f32 : tensor<81xf32>
  %reciprocal_f32 = nn.reciprocal %s_f32 : tensor<81xf32>
  %log_f32 = nn.log %s_f32 : tensor<81xf32>
  %relu_f32 = nn.relu %n_f32 : tensor<81xf32>
  %add_f32 = nn.add %s_f32, %t_f32 : (tensor<81xf32>, tensor<81xf32>) -> tensor<81xf32>
  %sub_f32 = nn.sub %s_f32, %t_f32 : (tensor<81xf32>, tensor<81xf32>) -> tensor<81xf32>
  %mul_f32 = nn.mul %s_f32, %t_f32 : (tensor<81xf32>, tensor<81xf32>) -> tensor<81xf32>
  %div_f32 = nn.div %s_f32, %t_f32 : (tensor<81xf32>, tensor<81xf32>) -> tensor<81xf32>
  %max_f32 = nn.max %n_f32, %m_f32 : (tensor<81xf32>, tensor<81xf32>) -> tensor<81xf32>
  %min_f32 = nn.min %n_f32, %m_f32 : (tensor<81xf32>, tensor<81xf32>) -> tensor<81xf32>
  %gelu_f16 = nn.gelu %s_f16 : tensor<81xf16>
  %exp_f16 = nn.exp %s_f16 : tensor<81xf16>
  %tanh_f16 = nn.tanh %s_f16 : tensor<81xf16>
  %erf_f16 = nn.erf %s_f16 : tensor<81xf16>
  %rsqrt_f16 = nn.rsqrt %s_f16 : tensor<81xf16>
  %sqrt_f16 = nn.sqrt %s_f16 : tensor<81xf16>
  %neg_f16 = nn.neg %s_f16 : tensor<81xf16>
  %abs_f16 = nn.abs %s_f16 : tensor<81xf16>
  %sigmoid_f16 = nn.sigmoid %s_f16 : tensor<81xf16>
  %reciprocal_f16 = nn.reciprocal %s_f16 : tensor<81xf16>
  %log_f16 = nn.log %s_f16 : tensor<81xf16>
  %relu_f16 = nn.relu %n_f16 : tensor<81xf16>
  %add_f16 = nn.add %s_f16, %t_f16 : (tensor<81xf16>, tensor<81xf16>) -> tensor<81xf16>
  %sub_f16 = nn.sub %s_f16, %t_f16 : (tensor<81xf16>, tensor<81xf16>) -> tensor<81xf16>
  %mul_f16 = nn.mul %s_f16, %t_f16 : (tensor<81xf16>, tensor<81xf16>) -> tensor<81xf16>
  %div_f16 = nn.div %s_f16, %t_f16 : (tensor<81xf16>, tensor<81xf16>) -> tensor<81xf16>
  %max_f16 = nn.max %n_f16, %m_f16 : (tensor<81xf16>, tensor<81xf16>) -> tensor<81xf16>
  %min_f16 = nn.min %n_f16, %m_f16 : (tensor<81xf16>, tensor<81xf16>) -> tensor<81xf16>
  return %gelu_f32, %exp_f32, %tanh_f32, %erf_f32, %rsqrt_f32, %sqrt_f32, %neg_f32, %abs_f32, %sigmoid_f32, %reciprocal_f32, %log_f32, %relu_f32, %add_f32, %sub_f32, %mul_f32, %div_f32, %max_f32, %min_f32, %gelu_f16, %exp_f16, %tanh_f16, %erf_f16, %rsqrt_f16, %sqrt_f16, %neg_f16, %abs_f16, %sigmoid_f16, %reciprocal_f16, %log_f16, %relu_f16, %add_f16, %sub_f16, %mul_f16, %div_f16, %max_f16, %min_f16
    : tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf32>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>, tensor<81xf16>
}
