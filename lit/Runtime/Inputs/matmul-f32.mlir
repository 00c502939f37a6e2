func.func @main(%x: tensor<16x512xf32> {ipu.name = "x"}, %w: tensor<512x64xf32> {ipu.name = "w"}) -> (tensor<16x64xf32> {ipu.name = "y"}) {
  %y = nn.matmul %x, %w : (tensor<16x512xf32>, tensor<512x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
