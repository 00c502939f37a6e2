// Storage placement on the 16-tile test target: every buffer of every tile
// gets an address in data memory (above the 96 KiB kept for code and
// exchange tables at 0x4C000); buffers never alive together share memory;
// tiles with the same layout share one memory map.
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange --machine-place-storage %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange --machine-place-storage --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// The k = 1 half of the split-K matmul: lhs rows received, weights in place, partials sent away.
// CHECK: machine.memory_map {buffers = ["0x64000 512 B input1", "0x64200 512 B s1.operand0", "0x64400 512 B s1.partials", "0x64600 16 B input2"], free = 539120 : i64, tiles = "8 to 15", used = 1552 : i64}
// The k = 0 tiles also receive partials, and hold the result; the add's result reuses
// the memory of the matmul's inputs, which are dead by then.
// CHECK-NEXT: machine.memory_map {buffers = ["0x64000 512 B input1", "0x64000 256 B s2.result", "0x64100 32 B s2.operand1", "0x64100 256 B s3.result", "0x64200 512 B s1.operand0", "0x64400 512 B s1.partials", "0x64600 512 B s1.partials_in", "0x64800 256 B s1.result", "0x64900 16 B input2"], free = 538352 : i64, tiles = "2 to 7", used = 2320 : i64}
// CHECK-NEXT: machine.memory_map {{.*}} tiles = "0", used = 2320 : i64}
// CHECK-NEXT: machine.memory_map {{.*}} tiles = "1", used = 2832 : i64}

// STATS: MachinePlaceStorage
// STATS-NEXT: (S) 2832 max-tile-bytes - Most data bytes used on one tile
// STATS-NEXT: (S) 4 memory-maps - Distinct tile memory layouts
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN>, %b1: tensor<128xf16>) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
