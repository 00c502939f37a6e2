// The exchange dialect (the bulk-synchronous program) in its custom form,
// round-tripped byte for byte, and in its generic form read back to the same
// IR: buffers (interleaved, with the ranges a compute set reads), a host
// input, a constant, a scheduled phase of moves (runs with several
// destination segments), syncs, compute sets of local copies and kernel calls
// (record words: integers, buffers, [buffer, offset]; scratch), a host output.
// The program is convert-tile-to-exchange's for an nn model (bias + relu on
// test4), with one kernel call added by hand.
// RUN: ipu-opt %s > %t && ipu-opt %t | diff %t -
// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt --mlir-print-op-generic %s > %t.generic && ipu-opt %t.generic | diff %t -
// RUN: FileCheck %s --check-prefix=GENERIC < %t.generic

// CHECK: exchange.buffer {bytes = 64 : i64, interleaved, reads = [{ranges = array<i64: 1, 64, 64>, tiles = "0 to 3"}], sym_name = "s1.operand1", tiles = "0 to 3"}
// CHECK: exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : tensor<8x32xf16>
// CHECK: exchange.constant {buffer = @const0, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, value = dense<0.5> : tensor<32xf16>}
// CHECK: exchange.phase attributes {bytes = 192 : i64, {{.*}}, sym_name = "x0", transfers = 4 : i64} {
// CHECK-NEXT: exchange.move {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 16, 0, 0, 2, 2, 0, 2, 16, 0, 1, 3, 0, 16, 0>,
// CHECK-NEXT: {{^ +[}]$}}
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {cycles = 412 : i64, label = "tile.map add", sym_name = "s1"} {
// CHECK-NEXT: exchange.copy {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 4, 0, 1, 0, 0, 16, 1, 16, 1, 1, 0, 0, 0, 0>], src = @const0}
// CHECK-NEXT: exchange.vertex {kernel = "rows", name = "rows_add_row_vector_f16_r2_c32", params = {C = 32 : i64, OP = 6 : i64, R = 2 : i64, TYPE = 1 : i64}, record = [@input0, 0 : i64, @s1.operand1, 0 : i64, @s1.result], tiles = "0 to 3"}
// CHECK: exchange.vertex {kernel = "elementwise", name = "ew_relu_f16_n32", params = {N = 32 : i64, OP = 16 : i64, TYPE = 1 : i64}, record = {{\[}}[@s1.result, 64 : i64], 4294967295 : i64, [@s2.result, 64 : i64]], scratch = 16 : i64, tiles = "0 to 3 step 3, 1"}
// CHECK: %0 = exchange.host_output {buffer = @s2.result, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<8x32xf16>
// CHECK-NEXT: return %0 : tensor<8x32xf16>
// GENERIC: "exchange.buffer"() <{bytes = 128 : i64, sym_name = "input0", tiles = "0 to 3"}> : () -> ()
// GENERIC: "exchange.phase"() <{bytes = 192 : i64, {{.*}}}> ({
// GENERIC-NEXT: "exchange.move"() <{dst = @s1.operand1,
// GENERIC: "exchange.sync"() : () -> ()
// GENERIC: %0 = "exchange.host_output"() <{buffer = @s2.result, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, name = "y"}> : () -> tensor<8x32xf16>

module attributes {ipu.target = "test4"} {
  func.func @main(%arg0: tensor<8x32xf16> {ipu.name = "x"}) -> (tensor<8x32xf16> {ipu.name = "y"}) attributes {exchange.compute_cycles = 558 : i64, exchange.estimated_cycles = 1034 : i64, exchange.exchange_cycles = 206 : i64, exchange.steps = 3 : i64} {
    exchange.buffer {bytes = 128 : i64, sym_name = "input0", tiles = "0 to 3"}
    exchange.buffer {bytes = 16 : i64, sym_name = "const0", tiles = "0 to 3"}
    exchange.buffer {bytes = 64 : i64, interleaved, reads = [{ranges = array<i64: 1, 64, 64>, tiles = "0 to 3"}], sym_name = "s1.operand1", tiles = "0 to 3"}
    exchange.buffer {bytes = 128 : i64, sym_name = "s1.result", tiles = "0 to 3"}
    exchange.buffer {bytes = 128 : i64, sym_name = "s2.result", tiles = "0 to 3"}
    exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : tensor<8x32xf16>
    exchange.constant {buffer = @const0, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, value = dense<0.5> : tensor<32xf16>}
    exchange.phase attributes {bytes = 192 : i64, gap = 8 : i64, horizon = 16 : i64, initial_horizon = 25 : i64, kind = "paired", local_bytes = 64 : i64, lower_bound = 8 : i64, moves = "operand #1 of s1 tile.map", patterns = ["tile 1 -> tiles {0, 2..3}, 16 B", "tile 2 -> tiles {0..1, 3}, 16 B", "tile 3 -> tiles 0..2, 16 B", "tile 0 -> tiles 1..3, 16 B"], row_words = 17 : i64, sym_name = "x0", transfers = 4 : i64} {
      exchange.move {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 16, 0, 0, 2, 2, 0, 2, 16, 0, 1, 3, 0, 16, 0>, array<i64: 1, 0, 0, 0, 0, 1, 2, 0, 0, 0, 16, 0, 0, 2, 2, 0, 1, 32, 0, 1, 3, 0, 32, 0>, array<i64: 1, 0, 0, 0, 0, 2, 3, -3, 0, 0, 16, 1, -48, 1, 3, 0, 1, 48, 0>], src = @const0}
    }
    exchange.sync
    exchange.compute_set attributes {cycles = 412 : i64, label = "tile.map add", sym_name = "s1"} {
      exchange.copy {dst = @s1.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 4, 0, 1, 0, 0, 16, 1, 16, 1, 1, 0, 0, 0, 0>], src = @const0}
      exchange.vertex {kernel = "rows", name = "rows_add_row_vector_f16_r2_c32", params = {C = 32 : i64, OP = 6 : i64, R = 2 : i64, TYPE = 1 : i64}, record = [@input0, 0 : i64, @s1.operand1, 0 : i64, @s1.result], tiles = "0 to 3"}
    }
    exchange.sync
    exchange.compute_set attributes {cycles = 146 : i64, label = "tile.map relu", sym_name = "s2"} {
      exchange.vertex {kernel = "elementwise", name = "ew_relu_f16_n64", params = {N = 64 : i64, OP = 16 : i64, TYPE = 1 : i64}, record = [@s1.result, 0 : i64, @s2.result], tiles = "0 to 3"}
      exchange.vertex {kernel = "elementwise", name = "ew_relu_f16_n32", params = {N = 32 : i64, OP = 16 : i64, TYPE = 1 : i64}, record = [[@s1.result, 64 : i64], 4294967295 : i64, [@s2.result, 64 : i64]], scratch = 16 : i64, tiles = "0 to 3 step 3, 1"}
    }
    exchange.sync
    %0 = exchange.host_output {buffer = @s2.result, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<8x32xf16>
    return %0 : tensor<8x32xf16>
  }
  // A parameter the host widens when it loads the program: the tiles' type
  // beside the host's.
  func.func @loaded(%arg0: tensor<8x32xf8E5M2> {ipu.name = "w", ipu.weight}) {
    exchange.buffer {bytes = 512 : i64, sym_name = "input0", tiles = "0 to 3"}
    exchange.host_input %arg0 {buffer = @input0, load, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, tile_type = tensor<8x32xf32>} : tensor<8x32xf8E5M2>
    return
  }
}
// CHECK-LABEL: func.func @loaded
// CHECK: exchange.host_input %arg0 {buffer = @input0, load, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, tile_type = tensor<8x32xf32>} : tensor<8x32xf8E5M2>
