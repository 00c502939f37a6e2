// Resize on the device (test16), against the reference: each resized axis
// in turn is a weighted sum of gathers by constant indices (views: the
// readers receive the chosen rows straight from the input's blocks) times
// constant weights (nn-to-tile/src/resize.rs). Nearest with each rounding
// and coordinate transformation, bilinear, bicubic antialiased shrink,
// and a crop (tf_crop_and_resize) whose positions outside the input read
// the extrapolation value; f16 too.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.e-]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// No resize reaches the tiles; nearest is gathers (views) only.
// TILE-NOT: resize
// TILE: tile.view {{.*}}kind = "gather"

func.func @main(%x: tensor<1x3x5x4xf32>, %h: tensor<1x2x4x4xf16>) -> (tensor<1x3x10x6xf32>, tensor<1x3x3x2xf32>, tensor<1x3x8x7xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x2x8x8xf16>) {
  %0 = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, 2.0 : f64, 1.5 : f64], coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : tensor<1x3x5x4xf32> -> tensor<1x3x10x6xf32>
  %1 = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, 0.6 : f64, 0.5 : f64], nearest_mode = "round_prefer_ceil"} : tensor<1x3x5x4xf32> -> tensor<1x3x3x2xf32>
  %2 = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, 1.6 : f64, 1.75 : f64], mode = "linear", coordinate_transformation_mode = "align_corners"} : tensor<1x3x5x4xf32> -> tensor<1x3x8x7xf32>
  %3 = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, 0.6 : f64, 0.75 : f64], mode = "cubic", cubic_coeff_a = -0.5 : f64, exclude_outside, antialias} : tensor<1x3x5x4xf32> -> tensor<1x3x3x3xf32>
  %4 = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, 0.6 : f64, 0.75 : f64], coordinate_transformation_mode = "tf_crop_and_resize", roi = [0.0 : f64, 0.0 : f64, 0.4 : f64, 0.6 : f64, 1.0 : f64, 1.0 : f64, 1.2 : f64, 1.5 : f64], extrapolation_value = 10.0 : f64, mode = "linear"} : tensor<1x3x5x4xf32> -> tensor<1x3x3x3xf32>
  %5 = nn.resize %h {scales = [1.0 : f64, 1.0 : f64, 2.0 : f64, 2.0 : f64], mode = "linear"} : tensor<1x2x4x4xf16> -> tensor<1x2x8x8xf16>
  return %0, %1, %2, %3, %4, %5 : tensor<1x3x10x6xf32>, tensor<1x3x3x2xf32>, tensor<1x3x8x7xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x2x8x8xf16>
}
