// The ops of convolutional networks (conv, conv_transpose, max_pool,
// avg_pool, resize) in their
// custom form, round-tripped byte for byte and through the generic form.
// RUN: ipu-opt %s > %t && ipu-opt %t | diff %t -
// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt --mlir-print-op-generic %s | ipu-opt | diff %t -

// CHECK-LABEL: func.func @windows
func.func @windows(%x: tensor<1x2x5x5xf32>, %w: tensor<4x1x3x3xf32>, %s: tensor<1x3x8xf16>, %dw: tensor<3x1x3xf16>, %t: tensor<4x3x3x3xf32>, %p: tensor<1x3x7x7xf32>, %q: tensor<1x1x4xi32>, %qw: tensor<2x1x2xi32>) {
  // Grouped, strided, padded.
  // CHECK: nn.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %0 = nn.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2} : (tensor<1x2x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  // Depthwise 1-D, dilated.
  // CHECK: nn.conv %arg2, %arg3 {dilations = array<i64: 2>, group = 3 : i64, pads = array<i64: 2, 2>, strides = array<i64: 1>} : (tensor<1x3x8xf16>, tensor<3x1x3xf16>) -> tensor<1x3x8xf16>
  %1 = nn.conv %s, %dw {strides = array<i64: 1>, dilations = array<i64: 2>, pads = array<i64: 2, 2>, group = 3} : (tensor<1x3x8xf16>, tensor<3x1x3xf16>) -> tensor<1x3x8xf16>
  // CHECK: nn.conv_transpose {{.*}}output_padding = array<i64: 1, 1>{{.*}} : (tensor<1x4x3x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x8x8xf32>
  %2 = nn.conv_transpose %0, %t {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 1, 1>, group = 2} : (tensor<1x4x3x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x8x8xf32>
  // CHECK: nn.max_pool %arg5 {ceil_mode, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x3x7x7xf32> -> tensor<1x3x4x4xf32>
  %3 = nn.max_pool %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, ceil_mode} : tensor<1x3x7x7xf32> -> tensor<1x3x4x4xf32>
  // CHECK: nn.max_pool %arg5 {dilations = array<i64: 1, 1>, indices, kernel = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x3x7x7xf32> -> tensor<1x3x3x3xi64>
  %i = nn.max_pool %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, indices} : tensor<1x3x7x7xf32> -> tensor<1x3x3x3xi64>
  // CHECK: nn.avg_pool %arg5 {count_include_pad, {{.*}}} : tensor<1x3x7x7xf32> -> tensor<1x3x3x3xf32>
  %4 = nn.avg_pool %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, count_include_pad} : tensor<1x3x7x7xf32> -> tensor<1x3x3x3xf32>
  // CHECK: nn.resize %arg5 {coordinate_transformation_mode = "align_corners", mode = "linear", scales = [1.0 : f64, 1.0 : f64, 2.0 : f64, 1.5 : f64]} : tensor<1x3x7x7xf32> -> tensor<1x3x14x10xf32>
  %6 = nn.resize %p {scales = [1.0 : f64, 1.0 : f64, 2.0 : f64, 1.5 : f64], mode = "linear", coordinate_transformation_mode = "align_corners"} : tensor<1x3x7x7xf32> -> tensor<1x3x14x10xf32>
  // CHECK: nn.resize %arg5 {antialias, cubic_coeff_a = -0.5 : f64, exclude_outside, mode = "cubic", scales = {{.*}}} : tensor<1x3x7x7xf32> -> tensor<1x3x3x3xf32>
  %c = nn.resize %p {scales = [1.0 : f64, 1.0 : f64, 0.5 : f64, 0.5 : f64], mode = "cubic", cubic_coeff_a = -0.5 : f64, exclude_outside, antialias} : tensor<1x3x7x7xf32> -> tensor<1x3x3x3xf32>
  // CHECK: nn.resize %arg5 {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 10.0 : f64, mode = "linear", roi = [0.0 : f64, 0.0 : f64, 0.25 : f64, 0.25 : f64, 1.0 : f64, 1.0 : f64, 0.75 : f64, 1.0 : f64], scales = {{.*}}} : tensor<1x3x7x7xf32> -> tensor<1x3x4x4xf32>
  %crop = nn.resize %p {scales = [1.0 : f64, 1.0 : f64, 0.5 : f64, 0.5 : f64], coordinate_transformation_mode = "tf_crop_and_resize", roi = [0.0 : f64, 0.0 : f64, 0.25 : f64, 0.25 : f64, 1.0 : f64, 1.0 : f64, 0.75 : f64, 1.0 : f64], extrapolation_value = 10.0 : f64, mode = "linear"} : tensor<1x3x7x7xf32> -> tensor<1x3x4x4xf32>
  // CHECK: nn.resize %arg5 {nearest_mode = "ceil", scales = {{.*}}} : tensor<1x3x7x7xf32> -> tensor<1x3x3x3xf32>
  %7 = nn.resize %p {scales = [1.0 : f64, 1.0 : f64, 0.5 : f64, 0.5 : f64], nearest_mode = "ceil"} : tensor<1x3x7x7xf32> -> tensor<1x3x3x3xf32>
  // Integers convolve exactly.
  // CHECK: nn.conv %arg6, %arg7 {{.*}} : (tensor<1x1x4xi32>, tensor<2x1x2xi32>) -> tensor<1x2x3xi32>
  %5 = nn.conv %q, %qw {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0, 0>, group = 1} : (tensor<1x1x4xi32>, tensor<2x1x2xi32>) -> tensor<1x2x3xi32>
  return
}
