// Ops whose blocks each fit a tile, but whose buffers alive together do
// not, are refused by storage placement: an error naming the tile, the
// bytes it needs and the buffers holding them. (An op whose own blocks
// cannot fit is refused earlier, by convert-nn-to-tile: NNToTile/invalid.mlir.)
// RUN: ipu-opt --verify-diagnostics --target test4 --ipu-lower-to-machine %s

// expected-error@+1 {{tile 0 does not fit: its data needs 600048 bytes, but it has 540672 (638976 B of SRAM less 98304 B for code and exchange tables); largest buffers: input0 (200016 B), input1 (200016 B), s1.result (200016 B)}}
func.func @main(%x: tensor<4x50000xf32>, %w: tensor<4x50000xf32>) -> (tensor<4x50000xf32>, tensor<4x50000xf32>) {
  %y = nn.relu %x : tensor<4x50000xf32>
  %z = nn.relu %w : tensor<4x50000xf32>
  return %y, %z : tensor<4x50000xf32>, tensor<4x50000xf32>
}
