func.func @main(%x: tensor<2x4xf32>) -> tensor<2xi32> {
  %a = tosa.argmax %x {axis = 1 : i32} : (tensor<2x4xf32>) -> tensor<2xi32>
  return %a : tensor<2xi32>
}
