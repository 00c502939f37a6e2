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

// Every tile runs the GEMM on its block (K split in two) and holds half of
// its block's result rows, so the 16 tiles share one memory map: buffers
// never alive together share memory (the x rows a tile receives its piece
// of, input0, and the partials it receives, s1.partials_in, lie where the
// add's result goes later).
// CHECK: machine.memory_map {buffers = ["0x80000 80 B input0", "0x80000 144 B s1.partials_in", "0x80000 144 B s2.result", "0x80000 1104 B s1.rhs_f16", "0x80090 144 B s1.result", "0x80120 144 B s3.result", "0x801b0 48 B s2.operand1", "0x80450 528 B input1", "0x80660 528 B s1.operand0", "0x80870 272 B s1.partials", "0x80980 48 B input2"], free = 634496 : i64, tiles = "0 to 15", used = 2480 : i64}
// The supervisor program (main) and the kernel specialisations each group
// links, and what the supervisor does in each superstep: run its exchange
// row (exch), call kernels, or only sync (-).
// The GEMM's prologue (its workers' records, which read no buffer: PRE =
// 2, "_prerec") runs during x0; the weights are widened in s1 itself, so
// the first weight block stays in the call.
// CHECK-NEXT: machine.code {code_bytes = 1180 : i64, exec = "0x4c000 to 0x4c4a8", kernels = ["main", "cast_f8e4m3fn_f16_n512", "ew_gelu_f16_n64", "gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec", "partials_add_f16_p1_n64", "rows_add_row_vector_f16_r4_c16"], program = ["x0: exch, gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec.gemm_amp_pre", "s1: cast_f8e4m3fn_f16_n512.cast, gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec.gemm_amp", "x1: exch", "s1.reduce: partials_add_f16_p1_n64.partials", "x2: exch", "s2: rows_add_row_vector_f16_r4_c16.rows, ew_gelu_f16_n64.elementwise"], tiles = "1 to 7 step 2, 8 to 14 step 2"}
// Tiles that hold some of their own lhs rows copy them during x0 (which
// neither sends from the copy's destination nor captures into its source).
// CHECK-NEXT: machine.code {code_bytes = 1192 : i64, {{.*}}["x0: exch, main.memcpy, gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec.gemm_amp_pre", "s1: cast_f8e4m3fn_f16_n512.cast, gemm_f16_interleaved_k32_c16_r1_r2_m8_prerec.gemm_amp", "x1: exch", "s1.reduce: partials_add_f16_p1_n64.partials", "x2: exch", "s2: rows_add_row_vector_f16_r4_c16.rows, ew_gelu_f16_n64.elementwise"], tiles = "2 to 6 step 2, 9 to 13 step 2"}
// Tiles 0 and 15 also copy the part of the bias they hold themselves,
// during x2, so s2 only adds and activates.
// CHECK-NEXT: machine.code {code_bytes = 1204 : i64, {{.*}} "x2: exch, main.memcpy", "s2: rows_add_row_vector_f16_r4_c16.rows, ew_gelu_f16_n64.elementwise"], tiles = "0, 15"}
// The package: metadata with one step summary per superstep, the host
// streams laid out over the tiles, each group's image once, per-tile data.
// CHECK-NEXT: machine.package "test16" {{{.*}}steps = [{bound = 254 : i64, cycles = 302 : i64, kind = "exchange", label = "x0 operand #0 of s1 tile.matmul (horizon 72, lower bound 64, paired)"}
// x streams in 64 bytes (half a row) to each tile, so no one tile sends a
// whole block of it.
// CHECK-NEXT: machine.host_stream "x" {direction = "input", element = "f16", layout = [{address = "0x80000", len = 64 : i64, offset = 0 : i64, repeat = [array<i64: 16, 1, 0, 64>], tile = 0 : i64}], shape = array<i64: 8, 64>}
// CHECK-NEXT: machine.host_stream "w1" {direction = "input", element = "f8E4M3FN"
// Layouts are grids: b1 is one 16-byte row on each of tiles 0..15 (tile
// step 1, host step 16); y is 4 rows of 32 bytes on each of tiles 0..15
// (tiles 0..7 rows 0..3, tiles 8..15 rows 4..7: each K tile's half).
// CHECK-NEXT: machine.host_stream "b1" {direction = "input", element = "f16", layout = [{address = "0x80980", len = 16 : i64, offset = 0 : i64, repeat = [array<i64: 16, 1, 0, 16>], tile = 0 : i64}], shape = array<i64: 128>}
// CHECK-NEXT: machine.host_stream "y" {direction = "output", element = "f16", layout = [{address = "0x80120", len = 32 : i64, offset = 0 : i64, repeat = [array<i64: 2, 8, 0, 1024>, array<i64: 8, 1, 0, 32>, array<i64: 4, 0, 32, 256>], tile = 0 : i64}], shape = array<i64: 8, 128>}
// Probes: where each op's result can be read after a step (for --check-ops).
// CHECK-NEXT: machine.probe {element = "f16", layout = [{{.*}}], op = "tile.matmul", shape = array<i64: 8, 128>, source = "{{[0-9]+}}:3", step = 3 : i64}
// CHECK-NEXT: machine.probe {element = "f16", layout = [{{.*}}], op = "tile.map", shape = array<i64: 8, 128>, source = "{{[0-9]+}}:3", step = 5 : i64}
// CHECK-NEXT: machine.probe {element = "f16", layout = [{{.*}}], op = "tile.map", shape = array<i64: 8, 128>, source = "{{[0-9]+}}:3", step = 5 : i64}
// CHECK-NEXT: machine.image tiles "0, 15" {code =
// CHECK: machine.image tiles "1 to 7 step 2, 8 to 14 step 2" {code =
// CHECK: machine.image tiles "2 to 6 step 2, 9 to 13 step 2" {code =

// Each tile's exchange row for phase x0, at cycles from the engine's start:
// each tile sends its 64 bytes of x's rows once, and every tile of a
// supertile pair (tiles 0 and 1, ...) needing the same rows takes half of
// them from its own port and half from its partner's ("from partner"): a
// pair receives two words per cycle. A capture starts when the word has
// crossed the fabric (6 cycles within a column, 7 to the next).
// ROWS: machine.exchange_row {entries = ["@0 send 0x80000 64 B", "@6 select tile 2", "@6 capture 0x806a0 64 B", "@24 select tile 4", "@24 capture 0x806e0 64 B", "@24 capture 0x80720 64 B from partner", "@40 select tile 8", "@40 capture 0x80760 64 B", "@40 capture 0x807a0 64 B from partner", "@56 select tile 12", "@56 capture 0x807e0 64 B", "@56 capture 0x80820 64 B from partner"], phase = "x0", tiles = "0"}
// ROWS-NEXT: machine.exchange_row {entries = ["@6 select tile 0", "@6 capture 0x806a0 64 B from partner", "@6 capture 0x80660 64 B", "@24 select tile 6", "@24 capture 0x806e0 64 B from partner", "@24 capture 0x80720 64 B", "@33 send 0x80000 64 B", "@40 select tile 10", "@40 capture 0x80760 64 B from partner", "@40 capture 0x807a0 64 B", "@56 select tile 14", "@56 capture 0x807e0 64 B from partner", "@56 capture 0x80820 64 B"], phase = "x0", tiles = "1"}
// ROWS-NEXT: machine.exchange_row {entries = ["@0 send 0x80000 64 B", "@6 select tile 0", "@6 capture 0x80660 64 B", "@24 select tile 4", "@24 capture 0x806e0 64 B", "@24 capture 0x80720 64 B from partner", "@40 select tile 8", "@40 capture 0x80760 64 B", "@40 capture 0x807a0 64 B from partner", "@56 select tile 12", "@56 capture 0x807e0 64 B", "@56 capture 0x80820 64 B from partner"], phase = "x0", tiles = "2"}
// ROWS-NEXT: machine.exchange_row {entries = ["@6 select tile 2", "@6 capture 0x80660 64 B from partner", "@6 capture 0x806a0 64 B", "@24 select tile 6", "@24 capture 0x806e0 64 B from partner", "@24 capture 0x80720 64 B", "@33 send 0x80000 64 B", "@40 select tile 10", "@40 capture 0x80760 64 B from partner", "@40 capture 0x807a0 64 B", "@56 select tile 14", "@56 capture 0x807e0 64 B from partner", "@56 capture 0x80820 64 B"], phase = "x0", tiles = "3"}
// ROWS-NEXT: machine.exchange_row {entries = ["@7 select tile 2", "@7 capture 0x806a0 64 B", "@7 capture 0x80660 64 B from partner", "@17 send 0x80000 64 B", "@23 select tile 6", "@23 capture 0x80720 64 B", "@40 select tile 8", "@40 capture 0x80760 64 B", "@40 capture 0x807a0 64 B from partner", "@56 select tile 12", "@56 capture 0x807e0 64 B", "@56 capture 0x80820 64 B from partner"], phase = "x0", tiles = "4"}
// The partial sums: each tile sends the half of its partials the other K
// tile of its block adds up (tile 0 its second half, at +128 bytes; tile 8
// its first) and receives the other tile's partials of its own half.
// ROWS: machine.exchange_row {entries = ["@0 send 0x808f0 128 B", "@7 select tile 8", "@7 capture 0x80000 128 B"], phase = "x1", tiles = "0"}
// ROWS: machine.exchange_row {entries = ["@0 send 0x808f0 128 B", "@7 select tile 15", "@7 capture 0x80000 128 B"], phase = "x1", tiles = "7"}
// ROWS-NEXT: machine.exchange_row {entries = ["@0 send 0x80870 128 B", "@7 select tile 0", "@7 capture 0x80000 128 B"], phase = "x1", tiles = "8"}
// The bias: each tile sends its 16-byte slice of b1 once; a tile takes the
// two slices of its block's 32 columns (tile 0 holds one of its own, which
// it copies during x2; tile 8 takes both in one 32-byte capture, its port
// switching from tile 0 to tile 1 half-way).
// ROWS: machine.exchange_row {entries = ["@0 send 0x80980 16 B", "@10 select tile 1", "@10 capture 0x801c0 16 B"], phase = "x2", tiles = "0"}
// ROWS: machine.exchange_row {entries = ["@4 send 0x80980 16 B", "@7 select tile 0", "@7 capture 0x801b0 32 B", "@11 select tile 1"], phase = "x2", tiles = "8"}

// STATS: ConvertExchangeToMachine
// STATS-NEXT: (S) 16 tiles - Tiles started
// STATS-NEXT: (S) 3 program-groups - Distinct tile programs
// STATS-NEXT: (S) 6 supersteps - Supersteps (compute sets and exchange phases)
// STATS-NEXT: (S) 1204 max-code-bytes - Largest tile code image
// STATS-NEXT: (S) 780 max-table-bytes - Largest tile pointer table, records and exchange rows
// STATS-NEXT: (S) 2480 max-data-bytes - Most data bytes used on one tile
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN> {ipu.name = "w1"}, %b1: tensor<128xf16> {ipu.name = "b1"}) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
