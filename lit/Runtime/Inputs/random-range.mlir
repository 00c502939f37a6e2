func.func @main(%g: tensor<64xf32> {ipu.name = "g", ipu.random = [0.9, 1.1]}) -> (tensor<f32> {ipu.name = "lo"}, tensor<f32> {ipu.name = "hi"}) {
  %lo = nn.reduce_min %g {axes = array<i64: 0>} : tensor<64xf32> -> tensor<f32>
  %hi = nn.reduce_max %g {axes = array<i64: 0>} : tensor<64xf32> -> tensor<f32>
  return %lo, %hi : tensor<f32>, tensor<f32>
}
