// What the code generator does not lay out yet is an error at the op.
// RUN: ipu-opt --verify-diagnostics --split-input-file --target test16 --ipu-lower-to-machine %s

// A K split into blocks that are not a multiple of the AMP's K block.
func.func @main(%x: tensor<8x40xf16>, %w: tensor<40x128xf16>) -> tensor<8x128xf16> {
  // expected-error@+1 {{'tile.matmul' op is planned as}}
  %y = nn.matmul %x, %w : (tensor<8x40xf16>, tensor<40x128xf16>) -> tensor<8x128xf16>
  return %y : tensor<8x128xf16>
}
