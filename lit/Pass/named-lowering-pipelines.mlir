// The named lowering pipelines expand to the stage passes, in order.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine --dump-pass-pipeline %s 2>&1 >/dev/null | FileCheck %s --check-prefix=MACHINE
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCHANGE
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE

// MACHINE: Pass Manager with builtin.module(canonicalize,nn-fuse-gelu,convert-nn-to-tile,convert-tile-to-exchange,convert-exchange-to-machine)
// EXCHANGE: exchange.phase
// EXCHANGE: tile.matmul
// TILE-NOT: exchange.phase
// TILE: tile.matmul
func.func @main(%x: tensor<8x64xf16>, %w: tensor<64x128xf16>) -> tensor<8x128xf16> {
  %y = nn.matmul %x, %w : (tensor<8x64xf16>, tensor<64x128xf16>) -> tensor<8x128xf16>
  return %y : tensor<8x128xf16>
}
