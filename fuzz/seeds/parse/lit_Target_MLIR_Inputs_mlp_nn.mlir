// The model of tosa_mlp.mlir written directly in the nn dialect.
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w1 = nn.constant dense<[[0.5, -0.25, 1.0, 0.0, 0.75, -1.0, 0.125, 2.0],
                           [1.5, 0.5, -0.5, 0.25, 0.0, 1.0, -0.75, 0.5],
                           [-1.0, 0.25, 0.5, 1.0, 0.5, 0.0, 0.25, -0.5],
                           [0.0, 1.0, 0.25, -0.5, 1.25, 0.5, 1.0, 0.0]]> : tensor<4x8xf32>
  %b1 = nn.constant dense<[0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8]> : tensor<8xf32>
  %w2 = nn.constant dense<[[1.0, 0.0, -1.0], [0.5, 0.5, 0.5], [-0.25, 1.0, 0.0], [0.0, -0.5, 1.0],
                           [1.0, 1.0, 1.0], [-1.0, 0.25, 0.5], [0.5, -0.25, 0.75], [0.125, 0.0, -0.125]]> : tensor<8x3xf32>
  %b2 = nn.constant dense<0.25> : tensor<3xf32>
  %h = nn.matmul %x, %w1 : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %hb = nn.add %h, %b1 : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %r = nn.relu %hb : tensor<2x8xf32>
  %o = nn.matmul %r, %w2 : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
  %ob = nn.add %o, %b2 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %y = nn.sigmoid %ob : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
