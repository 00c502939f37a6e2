// The windowed ops' verifier: the reference's shape rules, attribute by
// attribute.
// RUN: ipu-opt --split-input-file --verify-diagnostics %s

func.func @conv_result(%x: tensor<1x2x5x5xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'nn.conv' op result type should be tensor<1x4x3x3xf32>, but is tensor<1x4x5x5xf32>}}
  %0 = nn.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x5x5xf32>
  return
}

// -----

func.func @conv_group(%x: tensor<1x3x5x5xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error@+1 {{'nn.conv' op conv: the input channel count (3) is not a multiple of the group count (2)}}
  %0 = nn.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2} : (tensor<1x3x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  return
}

// -----

func.func @conv_strides(%x: tensor<1x2x5x5xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'nn.conv' op conv: `strides` has 1 entries for 2 spatial axes}}
  %0 = nn.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  return
}

// -----

func.func @conv_zero_stride(%x: tensor<1x2x5x5xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'nn.conv' op conv: `strides` holds 0; its entries must be at least 1}}
  %0 = nn.conv %x, %w {strides = array<i64: 0, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  return
}

// -----

func.func @conv_kernel_too_large(%x: tensor<1x2x2x2xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'nn.conv' op conv: spatial axis 0: the window (3) is larger than the padded input (2)}}
  %0 = nn.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1} : (tensor<1x2x2x2xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----

func.func @conv_huge_dilation(%x: tensor<1x2x5x5xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'nn.conv' op conv: spatial axis 0: the window (18446744073709551615) is larger than the padded input (5)}}
  %0 = nn.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 9223372036854775807, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  return
}

// -----

func.func @conv_huge_pads(%x: tensor<1x2x5x5xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'nn.conv' op conv: the window's extent overflows}}
  %0 = nn.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 9223372036854775807, 0, 9223372036854775807, 0>, group = 1} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  return
}

// -----

func.func @conv_types(%x: tensor<1x2x5x5xf32>, %w: tensor<4x2x3x3xf16>) {
  // expected-error@+1 {{'nn.conv' op conv: unsupported element type f16 (operand types differ: f32 vs f16)}}
  %0 = nn.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf16>) -> tensor<1x4x3x3xf32>
  return
}

// -----

func.func @conv_transpose_pads(%x: tensor<1x2x2xf32>, %w: tensor<2x1x2xf32>) {
  // expected-error@+1 {{'nn.conv_transpose' op conv_transpose: spatial axis 0: the pads (4) remove the whole output (3)}}
  %0 = nn.conv_transpose %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 2, 2>, output_padding = array<i64: 0>, group = 1} : (tensor<1x2x2xf32>, tensor<2x1x2xf32>) -> tensor<1x1x1xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'nn.max_pool' op max_pool: expected [N, C, spatial...], got [2, 3]}}
  %0 = nn.max_pool %x {kernel = array<i64: 2>, strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @avg_pool_int(%x: tensor<1x1x4xi32>) {
  // expected-error@+1 {{'nn.avg_pool' op avg_pool: unsupported element type i32 (expected a float type)}}
  %0 = nn.avg_pool %x {kernel = array<i64: 2>, strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0, 0>} : tensor<1x1x4xi32> -> tensor<1x1x3xi32>
  return
}

// -----

func.func @pool_pads(%x: tensor<1x1x4xf32>) {
  // expected-error@+1 {{'nn.max_pool' op max_pool: `pads` has 1 entries for 1 spatial axes}}
  %0 = nn.max_pool %x {kernel = array<i64: 2>, strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0>} : tensor<1x1x4xf32> -> tensor<1x1x3xf32>
  return
}

// -----

func.func @pool_negative_kernel(%x: tensor<1x1x4xf32>) {
  // expected-error@+1 {{'nn.max_pool' op 'kernel' holds a negative entry -2}}
  %0 = nn.max_pool %x {kernel = array<i64: -2>, strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0, 0>} : tensor<1x1x4xf32> -> tensor<1x1x3xf32>
  return
}

// -----

func.func @resize_scales(%x: tensor<1x1x4xf32>) {
  // expected-error@+1 {{'nn.resize' op resize: 2 sizes and 2 scales for rank 3}}
  %0 = nn.resize %x {scales = [1.0 : f64, 2.0 : f64]} : tensor<1x1x4xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @resize_mode(%x: tensor<1x1x4xf32>) {
  // expected-error@+1 {{'nn.resize' op attribute 'nearest_mode' failed to satisfy constraint}}
  %0 = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, 2.0 : f64], nearest_mode = "up"} : tensor<1x1x4xf32> -> tensor<1x1x8xf32>
  return
}

// -----

func.func @resize_scale_sign(%x: tensor<1x1x4xf32>) {
  // expected-error@+1 {{'nn.resize' op resize: scale -2 is not positive}}
  %0 = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, -2.0 : f64]} : tensor<1x1x4xf32> -> tensor<1x1x8xf32>
  return
}

// -----

func.func @resize_empty(%x: tensor<1x1x4xf32>) {
  // expected-error@+1 {{'nn.resize' op resize: axis 2 of 4 elements resized to 0: only an empty axis stays empty}}
  %0 = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, 0.1 : f64]} : tensor<1x1x4xf32> -> tensor<1x1x0xf32>
  return
}

// -----

func.func @resize_crop_roi(%x: tensor<1x1x4xf32>) {
  // expected-error@+1 {{'nn.resize' op resize: 2 finite roi entries for rank 3 (a crop has a start and an end per axis, other resizes none)}}
  %0 = nn.resize %x {scales = [1.0 : f64, 1.0 : f64, 2.0 : f64], coordinate_transformation_mode = "tf_crop_and_resize", roi = [0.0 : f64, 1.0 : f64]} : tensor<1x1x4xf32> -> tensor<1x1x8xf32>
  return
}
