// Shapes the kernels cannot take as they are are padded by convert-nn-to-tile
// (nn_to_tile/legalize.rs): a concat with a constant of the op's identity and
// a slice of the result, both views moved by the exchange.
// RUN: ipu-opt --split-input-file --target test16 --convert-nn-to-tile %s | FileCheck %s

// Softmax over rows of 5 f32 (20 bytes): padded with -inf to 6.
// CHECK-LABEL: func.func @odd_rows
// CHECK: %[[PAD:.*]] = tile.constant {{.*}} dense<0xFF800000> : tensor<4x1xf32>
// CHECK: %[[X:.*]] = tile.view %{{.*}}, %[[PAD]] {axis = 1 : i64, kind = "concat"{{.*}} -> tensor<4x6xf32>
// CHECK: %[[Y:.*]] = tile.softmax %[[X]] {{.*}} : (tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK: tile.view %[[Y]] {ends = array<i64: 4, 5>, kind = "slice"
func.func @odd_rows(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %y = nn.softmax %x {axis = 1 : i64} : tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

// Log-softmax over rows of 6 f16 (12 bytes): padded with -inf to 8.
// CHECK-LABEL: func.func @f16_rows
// CHECK: tile.constant {{.*}} dense<0xFC00> : tensor<4x2xf16>
// CHECK: tile.softmax {{.*}} log, {{.*}} : (tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK: kind = "slice"
func.func @f16_rows(%x: tensor<4x6xf16>) -> tensor<4x6xf16> {
  %y = nn.log_softmax %x {axis = 1 : i64} : tensor<4x6xf16>
  return %y : tensor<4x6xf16>
}

// -----

// A mean over rows of 5: a sum of rows padded with zeros, times 1/5.
// CHECK-LABEL: func.func @odd_mean
// CHECK: tile.constant {{.*}} dense<0.0> : tensor<3x1xf32>
// CHECK: tile.reduce {{.*}}kind = "sum"{{.*}} : tensor<3x6xf32> -> tensor<3xf32>
// CHECK: tile.constant {{.*}} dense<0.2> : tensor<3xf32>
// CHECK: tile.map {{.*}}fn = #tile.fn<mul>
func.func @odd_mean(%x: tensor<3x5xf32>) -> tensor<3xf32> {
  %y = nn.reduce_mean %x {axes = array<i64: 1>} : tensor<3x5xf32> -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Layer norm over rows of 5: its definition, mean and variance as padded sums.
// CHECK-LABEL: func.func @odd_layer_norm
// CHECK-NOT: tile.layer_norm
// CHECK: tile.reduce {{.*}} : tensor<2x6xf32> -> tensor<2x1xf32>
// CHECK: fn = #tile.fn<sub>
// CHECK: tile.reduce {{.*}} : tensor<2x6xf32> -> tensor<2x1xf32>
// CHECK: fn = #tile.fn<rsqrt>
func.func @odd_layer_norm(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %y = nn.layer_norm %x {axis = 1, epsilon = 1.0e-5 : f32} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// K = 40 is no multiple of f16's K-block (16): A and B padded with zeros to 48.
// CHECK-LABEL: func.func @uneven_k
// CHECK: tile.view {{.*}}kind = "concat"{{.*}} -> tensor<8x48xf16>
// CHECK: tile.view {{.*}}kind = "concat"{{.*}} -> tensor<48x128xf16>
// CHECK: tile.matmul {{.*}} : (tensor<8x48xf16>, tensor<48x128xf16>) -> tensor<8x128xf16>
func.func @uneven_k(%x: tensor<8x40xf16>, %w: tensor<40x128xf16>) -> tensor<8x128xf16> {
  %y = nn.matmul %x, %w : (tensor<8x40xf16>, tensor<40x128xf16>) -> tensor<8x128xf16>
  return %y : tensor<8x128xf16>
}

// -----

// A rank-1 operand gets a unit dimension; N = 1 is padded to a 16-column block.
// CHECK-LABEL: func.func @vector
// CHECK: kind = "reshape"{{.*}} -> tensor<1x8xf16>
// CHECK: tile.matmul {{.*}} -> tensor<1x16xf16>
// CHECK: kind = "reshape"{{.*}} -> tensor<16xf16>
func.func @vector(%a: tensor<8xf16>, %b: tensor<8x16xf16>) -> tensor<16xf16> {
  %y = nn.matmul %a, %b : (tensor<8xf16>, tensor<8x16xf16>) -> tensor<16xf16>
  return %y : tensor<16xf16>
}

// -----

// A run-time integer exponent is cast to the base's type first (cast.S from
// i64, over its blocks padded to the kernel's 2-element groups).
// CHECK-LABEL: func.func @pow_int_exponent
// CHECK: %[[E:.*]] = tile.map %{{.*}} {{{.*}}fn = #tile.fn<cast>, kernel = "cast_i64_f32_n2"
// CHECK: tile.map %{{.*}}, %[[E]] {{{.*}}fn = #tile.fn<pow>
func.func @pow_int_exponent(%x: tensor<8xf32>, %e: tensor<8xi64>) -> tensor<8xf32> {
  %y = nn.pow %x, %e : (tensor<8xf32>, tensor<8xi64>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// A reduction over an axis of one element: its rows padded to a granule.
// CHECK-LABEL: func.func @unit_axis
// CHECK: tile.reduce {{.*}} : tensor<4x2xf32> -> tensor<4xf32>
func.func @unit_axis(%x: tensor<4x1xf32>) -> tensor<4xf32> {
  %y = nn.reduce_sum %x {axes = array<i64: 1>} : tensor<4x1xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Batch dimensions [2, 1] against [1, 3]: both operands broadcast to [2, 3].
// CHECK-LABEL: func.func @partial_batch
// CHECK: kind = "broadcast"{{.*}} -> tensor<2x3x4x16xf16>
// CHECK: kind = "broadcast"{{.*}} -> tensor<2x3x16x16xf16>
// CHECK: tile.matmul {{.*}} : (tensor<6x4x16xf16>, tensor<6x16x16xf16>) -> tensor<6x4x16xf16>
func.func @partial_batch(%a: tensor<2x1x4x16xf16>, %b: tensor<1x3x16x16xf16>) -> tensor<2x3x4x16xf16> {
  %y = nn.matmul %a, %b : (tensor<2x1x4x16xf16>, tensor<1x3x16x16xf16>) -> tensor<2x3x4x16xf16>
  return %y : tensor<2x3x4x16xf16>
}
