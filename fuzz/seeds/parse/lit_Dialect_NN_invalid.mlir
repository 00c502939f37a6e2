// The tensor dialect's verifier: result types follow the reference's rules.
// RUN: ipu-opt --split-input-file --verify-diagnostics %s

func.func @matmul_shape(%a: tensor<2x4xf16>, %b: tensor<5x3xf16>) {
  // expected-error@+1 {{'nn.matmul' op}}
  %0 = nn.matmul %a, %b : (tensor<2x4xf16>, tensor<5x3xf16>) -> tensor<2x3xf16>
  return
}

// -----

func.func @broadcast_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{'nn.add' op result type should be tensor<2x3xf32>, but is tensor<3x3xf32>}}
  %0 = nn.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @elementwise_types(%a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error@+1 {{'nn.add' op}}
  %0 = nn.add %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return
}

// -----

func.func @axis(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'nn.softmax' op axis 2 is out of range for rank 2}}
  %0 = nn.softmax %a {axis = 2} : tensor<2x3xf32>
  return
}

// -----

func.func @perm(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'nn.transpose' op}}
  %0 = nn.transpose %a {permutation = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'nn.reshape' op}}
  %0 = nn.reshape %a : tensor<2x3xf32> -> tensor<7xf32>
  return
}

// -----

func.func @scale_non_fp8(%a: tensor<2xf32>) {
  // expected-error@+1 {{'nn.cast' op 'scale' applies only to FP8 results}}
  %0 = nn.cast %a {scale = 1} : tensor<2xf32> -> tensor<2xf16>
  return
}

// -----

func.func @missing_attr(%a: tensor<2xf32>) {
  // expected-error@+1 {{'nn.softmax' op requires attribute 'axis'}}
  %0 = nn.softmax %a : tensor<2xf32>
  return
}

// -----

func.func @dynamic(%a: tensor<?xf32>) {
  // expected-error@+1 {{'nn.relu' op dynamic dimensions are not supported: 'tensor<?xf32>'}}
  %0 = nn.relu %a : tensor<?xf32>
  return
}

// -----

func.func @constant_type() {
  // expected-error@+1 {{'nn.constant' op result #0 must be ranked tensor, but got 'f32'}}
  %0 = nn.constant 1.0 : f32
  return
}
