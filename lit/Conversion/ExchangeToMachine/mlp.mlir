// exchange -> machine on the 16-tile test target: every tile's buffers
// placed for their lifetimes (buffers never alive together share memory),
// the kernels each group of tiles links, and the package of the program.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-machine --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// RUN: ipu-opt --target test16 --pass-pipeline='builtin.module(ipu-lower-to-exchange,convert-exchange-to-machine{print-rows=true})' %s | FileCheck %s --check-prefix=ROWS
// The output does not depend on the number of threads.
// RUN: env RAYON_NUM_THREADS=1 ipu-opt --target test16 --ipu-lower-to-machine %s -o %t.1
// RUN: env RAYON_NUM_THREADS=2 ipu-opt --target test16 --ipu-lower-to-machine %s -o %t.2
// RUN: cmp %t.1 %t.2

// The k = 1 half of the split-K matmul (tiles 8..15): its lhs rows received,
// its f8 weights in place and widened to f16, its partials sent away.
// CHECK: machine.memory_map {buffers = ["0x80000 1104 B s1.rhs_f16", "0x80450 528 B input1", "0x80660 528 B s1.operand0", "0x80870 272 B s1.partials", "0x80980 48 B input2"], free = 538192 : i64, tiles = "8 to 15", used = 2480 : i64}
// The k = 0 tiles also receive partials and hold the results; the add's
// result reuses the memory of buffers dead by then. The add and the gelu
// share one superstep: the gelu reads the add's result in place.
// CHECK-NEXT: machine.memory_map {buffers = ["0x80000 272 B s1.partials_in", "0x80000 272 B s2.result", "0x80000 1104 B s1.rhs_f16", "0x80110 272 B s3.result", "0x80220 48 B s2.operand1", "0x80450 528 B input1", "0x80660 528 B s1.operand0", "0x80870 272 B s1.result", "0x80980 48 B input2"], free = 538192 : i64, tiles = "2 to 7", used = 2480 : i64}
// CHECK-NEXT: machine.memory_map {{.*}} tiles = "0", used = 2480 : i64}
// CHECK-NEXT: machine.memory_map {{.*}} tiles = "1", used = 2480 : i64}
// The supervisor program (main) and the kernel specialisations each group
// links, and what the supervisor does in each superstep: run its exchange
// row (exch), call kernels, or only sync (-).
// The GEMM's prologue (its workers' records, which read no buffer: PRE =
// 2, "_prerec") runs during x0; the weights are widened in s1 itself, so
// the first weight block stays in the call.
// CHECK-NEXT: machine.code {code_bytes = 792 : i64, exec = "0x4c000 to 0x4c31c", kernels = ["main", "cast_f8e4m3fn_f16_n512", "gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec"], program = ["x0: exch, gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec.gemm_amp_pre", "s1: cast_f8e4m3fn_f16_n512.cast, gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec.gemm_amp", "x1: exch", "s1.reduce: -", "x2: exch", "s2: -"], tiles = "8 to 15"}
// CHECK-NEXT: machine.code {code_bytes = 1212 : i64, {{.*}} kernels = ["main", "cast_f8e4m3fn_f16_n512", "ew_gelu_f16_n128", "gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec", "partials_add_f16_p1_n128", "rows_add_row_vector_f16_r8_c16"], program = ["x0: exch, gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec.gemm_amp_pre", "s1: cast_f8e4m3fn_f16_n512.cast, gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec.gemm_amp", "x1: exch", "s1.reduce: partials_add_f16_p1_n128.partials", "x2: exch", "s2: rows_add_row_vector_f16_r8_c16.rows, ew_gelu_f16_n128.elementwise"], tiles = "1 to 7"}
// Tile 0 also copies the part of the bias it holds itself, during x2
// (which neither sends from the copy's destination nor captures into its
// source), so s2 only adds and activates.
// CHECK-NEXT: machine.code {code_bytes = 1224 : i64, {{.*}} "x2: exch, main.memcpy", "s2: rows_add_row_vector_f16_r8_c16.rows, ew_gelu_f16_n128.elementwise"], tiles = "0"}
// The package: metadata with one step summary per superstep, the host
// streams laid out over the tiles, each group's image once, per-tile data.
// CHECK-NEXT: machine.package "test16" {{{.*}}steps = [{bound = 318 : i64, cycles = 235 : i64, kind = "exchange", label = "x0 operand #0 of s1 tile.matmul (horizon 135, lower bound 128, compact-streams)"}
// CHECK-NEXT: machine.host_stream "x" {direction = "input", element = "f16"
// CHECK-NEXT: machine.host_stream "w1" {direction = "input", element = "f8E4M3FN"
// Layouts are grids: b1 is one 16-byte row on each of tiles 0..15 (tile
// step 1, host step 16); y is 8 rows of 32 bytes on each of tiles 0..7.
// CHECK-NEXT: machine.host_stream "b1" {direction = "input", element = "f16", layout = [{address = "0x80980", len = 16 : i64, offset = 0 : i64, repeat = [array<i64: 16, 1, 0, 16>], tile = 0 : i64}], shape = array<i64: 128>}
// CHECK-NEXT: machine.host_stream "y" {direction = "output", element = "f16", layout = [{address = "0x80110", len = 32 : i64, offset = 0 : i64, repeat = [array<i64: 8, 1, 0, 32>, array<i64: 8, 0, 32, 256>], tile = 0 : i64}], shape = array<i64: 8, 128>}
// Probes: where each op's result can be read after a step (for --check-ops).
// CHECK-NEXT: machine.probe {element = "f16", layout = [{{.*}}], op = "tile.matmul", shape = array<i64: 8, 128>, source = "{{[0-9]+}}:3", step = 3 : i64}
// CHECK-NEXT: machine.probe {element = "f16", layout = [{{.*}}], op = "tile.map", shape = array<i64: 8, 128>, source = "{{[0-9]+}}:3", step = 5 : i64}
// CHECK-NEXT: machine.probe {element = "f16", layout = [{{.*}}], op = "tile.map", shape = array<i64: 8, 128>, source = "{{[0-9]+}}:3", step = 5 : i64}
// CHECK-NEXT: machine.image tiles "0" {code =
// CHECK: machine.image tiles "1 to 7" {code =
// CHECK: machine.image tiles "8 to 15" {code =

// Each tile's exchange row for phase x0, at cycles from the engine's start:
// tile 0 sends its half of x's rows, tile 1 sends the other half and takes
// tile 0's; a capture starts when the word has crossed the fabric (6 cycles
// within a column, 7 to the next).
// ROWS: machine.exchange_row {entries = ["@0 send 0x80450 512 B"], phase = "x0", tiles = "0"}
// ROWS-NEXT: machine.exchange_row {entries = ["@0 send 0x80000 512 B", "@6 select tile 0", "@6 capture 0x80660 512 B"], phase = "x0", tiles = "1"}
// ROWS-NEXT: machine.exchange_row {entries = ["@6 select tile 0", "@6 capture 0x80660 512 B"], phase = "x0", tiles = "2 to 3"}
// ROWS-NEXT: machine.exchange_row {entries = ["@7 select tile 0", "@7 capture 0x80660 512 B"], phase = "x0", tiles = "4 to 7"}
// ROWS-NEXT: machine.exchange_row {entries = ["@7 select tile 1", "@7 capture 0x80660 512 B"], phase = "x0", tiles = "8 to 15"}
// The partial sums: every k = 1 tile sends its partials to its k = 0 tile.
// ROWS-NEXT: machine.exchange_row {entries = ["@7 select tile 8", "@7 capture 0x80000 256 B"], phase = "x1", tiles = "0"}
// ROWS: machine.exchange_row {entries = ["@0 send 0x80870 256 B"], phase = "x1", tiles = "8 to 15"}

// STATS: ConvertExchangeToMachine
// STATS-NEXT: (S) 16 tiles - Tiles started
// STATS-NEXT: (S) 3 program-groups - Distinct tile programs
// STATS-NEXT: (S) 6 supersteps - Supersteps (compute sets and exchange phases)
// STATS-NEXT: (S) 1224 max-code-bytes - Largest tile code image
// STATS-NEXT: (S) 596 max-table-bytes - Largest tile pointer table, records and exchange rows
// STATS-NEXT: (S) 2480 max-data-bytes - Most data bytes used on one tile
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN> {ipu.name = "w1"}, %b1: tensor<128xf16> {ipu.name = "b1"}) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
