// nn -> tile for resize and transposed convolution (test16), legalized by
// convert-nn-to-tile (nn-to-tile/src/resize.rs, window.rs) into ops the
// device has. A resize is separable: each resized axis in turn is the sum
// over taps of a gather by constant indices (a view) times the taps'
// constant weights; nearest is the gathers alone, an axis whose taps are
// the identity is left alone, and a crop's positions outside the input
// read an element of the extrapolation value concatenated at the axis's
// end. A transposed conv is a conv of the input with stride - 1 zeros
// between its elements, by the weights with their channel axes swapped per
// group and flipped (a gather by reversed positions).
// RUN: ipu-opt --split-input-file --target test16 --convert-nn-to-tile %s | FileCheck %s
// RUN: ipu-opt --split-input-file --target test16 --convert-nn-to-tile %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null

// Nearest (asymmetric, floor) by 2 and 1.5: one gather per axis.
// CHECK-LABEL: func.func @nearest
// CHECK: %[[X:.*]] = tile.host_input %arg0
// CHECK-NEXT: %[[H:.*]] = tile.view %[[X]] {axis = 2 : i64, indices = array<i64: 0, 0, 1, 1, 2, 2>, kind = "gather"{{.*}} -> tensor<1x2x6x4xf32>
// CHECK-NEXT: %[[W:.*]] = tile.view %[[H]] {axis = 3 : i64, indices = array<i64: 0, 0, 1, 2, 2, 3>, kind = "gather"{{.*}} -> tensor<1x2x6x6xf32>
// CHECK-NEXT: tile.host_output %[[W]]
func.func @nearest(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x6xf32> {
  %y = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, 2.0 : f64, 1.5 : f64], coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : tensor<1x2x3x4xf32> -> tensor<1x2x6x6xf32>
  return %y : tensor<1x2x6x6xf32>
}

// -----

// Linear (align_corners) along the last axis only, 4 to 6: two taps, each
// a gather times its weights as a row vector, then added. A tap of weight
// 0 reads any index (0).
// CHECK-LABEL: func.func @linear
// CHECK: %[[X:.*]] = tile.host_input %arg0
// CHECK-NEXT: %[[G0:.*]] = tile.view %[[X]] {axis = 3 : i64, indices = array<i64: 0, 0, 1, 1, 2, 3>, kind = "gather"
// CHECK-NEXT: %[[W0:.*]] = tile.constant {{.*}} dense<{{\[\[\[\[}}1.0, 0.4, 0.8, 0.2, 0.6, 1.0]]]]> : tensor<1x1x1x6xf32>
// CHECK-NEXT: %[[M0:.*]] = tile.map %[[G0]], %[[W0]] {{.*}}fn = #tile.fn<mul>
// CHECK-NEXT: %[[G1:.*]] = tile.view %[[X]] {axis = 3 : i64, indices = array<i64: 0, 1, 2, 2, 3, 0>, kind = "gather"
// CHECK-NEXT: %[[W1:.*]] = tile.constant {{.*}} dense<{{\[\[\[\[}}0.0, 0.6, 0.2, 0.8, 0.4, 0.0]]]]> : tensor<1x1x1x6xf32>
// CHECK-NEXT: %[[M1:.*]] = tile.map %[[G1]], %[[W1]] {{.*}}fn = #tile.fn<mul>
// CHECK-NEXT: %[[Y:.*]] = tile.map %[[M0]], %[[M1]] {{.*}}fn = #tile.fn<add>
// CHECK-NEXT: tile.host_output %[[Y]]
func.func @linear(%x: tensor<1x1x3x4xf32>) -> tensor<1x1x3x6xf32> {
  %y = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, 1.0 : f64, 1.5 : f64], mode = "linear", coordinate_transformation_mode = "align_corners"} : tensor<1x1x3x4xf32> -> tensor<1x1x3x6xf32>
  return %y : tensor<1x1x3x6xf32>
}

// -----

// A crop reaching past the input's end: the extrapolation value (10) is
// concatenated at the axis's end and read at index 4.
// CHECK-LABEL: func.func @crop
// CHECK: %[[X:.*]] = tile.host_input %arg0
// CHECK-NEXT: %[[E:.*]] = tile.constant {{.*}} dense<10.0> : tensor<1x1x2x1xf32>
// CHECK-NEXT: %[[T:.*]] = tile.view %[[X]], %[[E]] {axis = 3 : i64, kind = "concat"{{.*}} -> tensor<1x1x2x5xf32>
// CHECK-NEXT: %[[Y:.*]] = tile.view %[[T]] {axis = 3 : i64, indices = array<i64: 1, 3, 4>, kind = "gather"{{.*}} -> tensor<1x1x2x3xf32>
// CHECK-NEXT: tile.host_output %[[Y]]
func.func @crop(%x: tensor<1x1x2x4xf32>) -> tensor<1x1x2x3xf32> {
  %y = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, 1.0 : f64, 0.75 : f64], coordinate_transformation_mode = "tf_crop_and_resize", roi = [0.0 : f64, 0.0 : f64, 0.0 : f64, 0.5 : f64, 1.0 : f64, 1.0 : f64, 1.0 : f64, 1.5 : f64], extrapolation_value = 10.0 : f64} : tensor<1x1x2x4xf32> -> tensor<1x1x2x3xf32>
  return %y : tensor<1x1x2x3xf32>
}

// -----

// A 1-D transposed conv, stride 2, output_padding 1: the input with a zero
// after each element (reshape, concat with zeros, reshape), the last one
// cut (slice to 5); the weights [C, M, K] = [2, 1, 2] as [M, C, K] (a
// transpose of the grouped view) flipped along K (gather 1, 0); then the
// conv's padding by K - 1 = 1 in front and as far as 7 outputs reach
// behind, its two offsets' slices and one matmul.
// CHECK-LABEL: func.func @conv_transpose
// CHECK: %[[X:.*]] = tile.host_input %arg0
// CHECK-NEXT: %[[W:.*]] = tile.host_input %arg1
// CHECK-NEXT: %[[R:.*]] = tile.view %[[X]] {kind = "reshape"{{.*}} -> tensor<1x2x3x1xf32>
// CHECK-NEXT: %[[Z:.*]] = tile.constant {{.*}} dense<0.0> : tensor<1x2x3x1xf32>
// CHECK-NEXT: %[[C:.*]] = tile.view %[[R]], %[[Z]] {axis = 3 : i64, kind = "concat"{{.*}} -> tensor<1x2x3x2xf32>
// CHECK-NEXT: %[[F:.*]] = tile.view %[[C]] {kind = "reshape"{{.*}} -> tensor<1x2x6xf32>
// CHECK-NEXT: %[[S:.*]] = tile.view %[[F]] {ends = array<i64: 1, 2, 5>, kind = "slice"{{.*}} -> tensor<1x2x5xf32>
// CHECK-NEXT: %[[WG:.*]] = tile.view %[[W]] {kind = "reshape"{{.*}} -> tensor<1x2x1x2xf32>
// CHECK-NEXT: %[[WT:.*]] = tile.view %[[WG]] {kind = "transpose"{{.*}}permutation = array<i64: 0, 2, 1, 3>} {{.*}} -> tensor<1x1x2x2xf32>
// CHECK-NEXT: %[[WC:.*]] = tile.view %[[WT]] {kind = "reshape"{{.*}} -> tensor<1x2x2xf32>
// CHECK-NEXT: %[[WF:.*]] = tile.view %[[WC]] {axis = 2 : i64, indices = array<i64: 1, 0>, kind = "gather"{{.*}} -> tensor<1x2x2xf32>
// CHECK-NEXT: %[[P0:.*]] = tile.constant {{.*}} dense<0.0> : tensor<1x2x1xf32>
// CHECK-NEXT: %[[L:.*]] = tile.view %[[P0]], %[[S]] {axis = 2 : i64, kind = "concat"{{.*}} -> tensor<1x2x6xf32>
// CHECK-NEXT: %[[P1:.*]] = tile.constant {{.*}} dense<0.0> : tensor<1x2x2xf32>
// CHECK-NEXT: %[[H:.*]] = tile.view %[[L]], %[[P1]] {axis = 2 : i64, kind = "concat"{{.*}} -> tensor<1x2x8xf32>
// CHECK-NEXT: tile.view %[[H]] {ends = array<i64: 1, 2, 7>, kind = "slice"{{.*}}starts = array<i64: 0, 0, 0>
// CHECK-NEXT: tile.view %[[H]] {ends = array<i64: 1, 2, 8>, kind = "slice"{{.*}}starts = array<i64: 0, 0, 1>
// CHECK: tile.view %[[WF]] {kind = "reshape"{{.*}} -> tensor<1x4xf32>
// CHECK: tile.matmul {{.*}} : (tensor<1x8xf32>, tensor<8x16xf32>) -> tensor<1x16xf32>
// CHECK-NOT: tile.matmul
func.func @conv_transpose(%x: tensor<1x2x3xf32>, %w: tensor<2x1x2xf32>) -> tensor<1x1x7xf32> {
  %y = nn.conv_transpose %x, %w {strides = array<i64: 2>, dilations = array<i64: 1>, pads = array<i64: 0, 0>, output_padding = array<i64: 1>, group = 1} : (tensor<1x2x3xf32>, tensor<2x1x2xf32>) -> tensor<1x1x7xf32>
  return %y : tensor<1x1x7xf32>
}
