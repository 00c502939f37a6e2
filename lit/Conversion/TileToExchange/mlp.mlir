// tile -> exchange on the 16-tile test target: every phase's transfers are
// derived from the mappings, scheduled and verified; its horizon, endpoint
// lower bound, gap, kind, row size and transfer patterns are pinned here.
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null

// CHECK: attributes {exchange.compute_cycles = 1543 : i64, exchange.estimated_cycles = 2938 : i64, exchange.exchange_cycles = 855 : i64, exchange.steps = 6 : i64}
// The lhs rows go from the two tiles holding them to the matmul's 16 tiles (multicast).
// CHECK: exchange.phase %0 {bytes = 7680 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 512 : i64, lower_bound = 128 : i64, moves = "operand #0", patterns = ["tile 0 -> tiles 1..7, 512 B", "tile 1 -> tiles 8..15, 512 B"], row_words = 9 : i64, sym_name = "x0", transfers = 2 : i64} : tensor<8x64xf16>
// CHECK-NEXT: %3 = tile.matmul %0, %1
// K is split in two: the k = 1 tiles send their f32 partial sums to the k = 0 tiles.
// CHECK-NEXT: exchange.phase %3 {bytes = 4096 : i64, gap = 7 : i64, horizon = 135 : i64, initial_horizon = 135 : i64, kind = "compact-streams", local_bytes = 0 : i64, lower_bound = 128 : i64, moves = "partial sums", patterns = ["tiles 8..15 -> -8, 512 B each (8 transfers)"], row_words = 6 : i64, sym_name = "x1", transfers = 8 : i64}
// The bias is broadcast along the rows: 16-byte slices to the tiles of each column block.
// CHECK-NEXT: exchange.phase %2 {bytes = 240 : i64, gap = 7 : i64, horizon = 15 : i64, initial_horizon = 15 : i64, kind = "compact-streams", local_bytes = 16 : i64, lower_bound = 8 : i64, moves = "operand #1"
// CHECK-NEXT: %4 = tile.map %3, %2
// gelu reads its input where the add left it: no exchange.
// CHECK-NEXT: %5 = tile.map %4

// STATS: ConvertTileToExchange
// STATS-NEXT: (S) 3 phases - Exchange phases scheduled
// STATS-NEXT: (S) 25 transfers - Transfers scheduled
// STATS-NEXT: (S) 285 horizon-sum - Sum of phase horizons (cycles)
// STATS-NEXT: (S) 264 lower-bound-sum - Sum of phase endpoint lower bounds (cycles)
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN>, %b1: tensor<128xf16>) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
