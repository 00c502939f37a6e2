func.func @main(%x: tensor<10000000000xf32> {ipu.name = "x"}) -> tensor<10000000000xf32> {
  %y = nn.relu %x : tensor<10000000000xf32>
  return %y : tensor<10000000000xf32>
}
