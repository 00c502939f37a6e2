func.func @main(%x: tensor<2x4xf32> {ipu.name = "x"}, %b: tensor<2x4xf32> {ipu.name = "b", ipu.default = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>}) -> (tensor<2x4xf32> {ipu.name = "y"}) {
  %y = nn.add %x, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
