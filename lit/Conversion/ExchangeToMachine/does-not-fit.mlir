// A tensor too big for the tiles it is spread over is an error naming the
// tile, the bytes it needs and the buffers holding them.
// RUN: ipu-opt --verify-diagnostics --target test4 --ipu-lower-to-machine %s

// expected-error@+1 {{tile 0 does not fit: its data needs 1600032 bytes, but it has 540672 (638976 B of SRAM less 98304 B for code and exchange tables); largest buffers: input0 (800016 B), s1.result (800016 B)}}
func.func @main(%x: tensor<4x200000xf32>) -> tensor<4x200000xf32> {
  %y = nn.relu %x : tensor<4x200000xf32>
  return %y : tensor<4x200000xf32>
}
