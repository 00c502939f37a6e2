func.func @main(%x: tensor<16xbf16>) -> tensor<16xf8E4M3FN> {
  %y = nn.cast %x : tensor<16xbf16> -> tensor<16xf8E4M3FN>
  return %y : tensor<16xf8E4M3FN>
}
