func.func @main() -> tensor<10000000000xf32> {
  %x = nn.constant dense<1.0> : tensor<10000000000x10000000000xf32>
}
