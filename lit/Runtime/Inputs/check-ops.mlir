func.func @main(%x: tensor<8x16xf32> {ipu.name = "x"}, %y: tensor<8x16xf32> {ipu.name = "y"}) -> (tensor<8x16xf32> {ipu.name = "z"}) {
  %c = nn.constant dense<0.5> : tensor<8x16xf32>
  %a = nn.add %x, %y : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = nn.mul %a, %c : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = nn.relu %m : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
