// A repeated layer as one function called per instance (outlining), on the
// 16-tile test target. @layer is lowered once, before its caller: in the
// tile stage it chooses its arguments' and result's layouts (its host
// inputs and output; its activation argument takes the layout of its
// result, of the same type, so a call's result is where the next call
// wants its input); @main keeps the calls, each taking the callee's
// result layout as its mapping, and passes each call's parameters (the
// arguments marked ipu.weight) straight through, never as host inputs of
// its own. In the exchange stage @layer is one program, its phases
// scheduled once and printed once; each call is an exchange.call binding
// the activation to a buffer of @main laid out as @layer's input (@input0
// already is: it was laid out for its consumer, the call; the second
// call takes the first's result buffer as it is),
// each parameter to @main's argument (operand 0 and 1 of the call), and
// the result to a buffer of @main laid out as @layer's output; `source` is
// the call's location, at which the machine stage keys @layer's probes.
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s --check-prefix=TILE
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | ipu-opt --mlir-print-op-generic | ipu-opt | FileCheck %s
// The machine stage expands each call (the callee's steps relocated to the
// call's buffers, checked again as a whole): the package of the printed
// exchange stage, read back, is byte-identical to the one-shot pipeline's.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | ipu-translate --to-ipuexe - -o %t/one.ipuexe
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s -o %t/exchange.mlir
// RUN: ipu-opt --convert-exchange-to-machine %t/exchange.mlir | ipu-translate --to-ipuexe - -o %t/split.ipuexe
// RUN: cmp %t/one.ipuexe %t/split.ipuexe
// The same bytes at 1 and 2 threads.
// RUN: env RAYON_NUM_THREADS=1 ipu-opt --target test16 --ipu-lower-to-machine %s -o %t/m.1.mlir
// RUN: env RAYON_NUM_THREADS=2 ipu-opt --target test16 --ipu-lower-to-machine %s -o %t/m.2.mlir
// RUN: cmp %t/m.1.mlir %t/m.2.mlir
// Two steps of @layer per call; the calls' copies: the first call's
// argument in, one set between the calls (the first call's result straight
// into the second's input), the last call's result out.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// The machine stage: both calls share one frame of buffers and run the
// callee's steps as one subroutine (call_0), its code emitted once.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | FileCheck %s --check-prefix=MACHINE
// The memory report shows the function's code once and what each call adds,
// and how many times each parameter is held over the tiles.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine --memory-report=%t/memory.json %s -o /dev/null
// RUN: FileCheck %s --check-prefix=REPORT < %t/memory.txt

// TILE-LABEL: func.func private @layer(
// TILE-NEXT: tile.host_input %arg0 {mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}} : tensor<8x64xf16>
// TILE-NEXT: tile.host_input %arg1 {mapping = {grid = array<i64: 1, 4>, tiles = array<i64: 0, 1>}, resident}
// TILE-NEXT: tile.host_input %arg2 {mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}, resident}
// TILE: tile.host_output %{{[0-9]+}} {name = "y"}
// TILE-LABEL: func.func @main(
// TILE-NEXT: %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}} : tensor<8x64xf16>
// TILE-NEXT: %1 = call @layer(%0, %arg1, %arg2) {mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}}
// TILE-NEXT: %2 = call @layer(%1, %arg3, %arg4) {mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}}
// TILE-NEXT: tile.host_output %2 {name = "y"} : tensor<8x64xf16>

// CHECK-LABEL: func.func private @layer(
// CHECK: exchange.buffer {bytes = 64 : i64, sym_name = "input0", tiles = "0 to 15"}
// CHECK: exchange.buffer {bytes = 64 : i64, sym_name = "s4.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}} : tensor<8x64xf16>
// CHECK-NEXT: exchange.host_input %arg1 {load, placements = [{buffer = @s1.operand1,
// CHECK-NEXT: exchange.host_input %arg2 {load, placements = [{buffer = @s2.operand1,
// CHECK-NEXT: exchange.phase attributes {{{.*}}moves = "operand #0 of s1 tile.matmul"{{.*}}sym_name = "x0"
// CHECK: exchange.compute_set attributes {{{.*}}label = "tile.matmul, tile.map add, tile.map cast, tile.map cast", sym_name = "s1"}
// CHECK: exchange.host_output {buffer = @s4.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, name = "y"}
// CHECK-LABEL: func.func @main(
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, sym_name = "input0", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, sym_name = "call0.result0", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, sym_name = "call1.result0", tiles = "0 to 15"}
// CHECK-NEXT: exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}} : tensor<8x64xf16>
// CHECK-NEXT: exchange.call @layer(%arg1, %arg2) {args = [@input0, 0 : i64, 1 : i64], results = [@call0.result0], source = "{{[0-9]+}}:3"} : (tensor<64x64xf8E4M3FN>, tensor<64xf16>) -> ()
// CHECK-NEXT: exchange.call @layer(%arg3, %arg4) {args = [@call0.result0, 0 : i64, 1 : i64], results = [@call1.result0], source = "{{[0-9]+}}:3"} : (tensor<64x64xf8E4M3FN>, tensor<64xf16>) -> ()
// CHECK-NEXT: exchange.host_output {buffer = @call1.result0, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, name = "y"}
// CHECK-NOT: func.func

// STATS: 7 supersteps

// REPORT: functions called as subroutines
// REPORT-NEXT: @layer: 2 calls, 2 as the subroutine; code {{[0-9]+}} B, per call {{[0-9]+}} B on its fullest tile
// REPORT: parameters held on the tiles
// REPORT-NEXT: w1 8192 B x4.00 (widened at load)
// REPORT-NEXT: b1 128 B x4.00

// MACHINE: program = ["layer0.args: main.memcpy", "layer0.x0 (call_0): exch{{.*}}", "layer0.s1 (call_0): gemm{{.*}}", "layer0.results: main.memcpy", "layer1.x0 (call_0): exch{{.*}}", "layer1.s1 (call_0): gemm{{.*}}", "layer1.results: main.memcpy"]

func.func private @layer(%x: tensor<8x64xf16> {ipu.name = "x"}, %w: tensor<64x64xf8E4M3FN> {ipu.name = "w", ipu.weight}, %b: tensor<64xf16> {ipu.name = "b", ipu.weight}) -> (tensor<8x64xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w : (tensor<8x64xf16>, tensor<64x64xf8E4M3FN>) -> tensor<8x64xf16>
  %hb = nn.add %h, %b : (tensor<8x64xf16>, tensor<64xf16>) -> tensor<8x64xf16>
  %g8 = nn.cast %hb {saturate, scale = -2} : tensor<8x64xf16> -> tensor<8x64xf8E4M3FN>
  %y = nn.cast %g8 : tensor<8x64xf8E4M3FN> -> tensor<8x64xf16>
  return %y : tensor<8x64xf16>
}
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"},
    %w1: tensor<64x64xf8E4M3FN> {ipu.name = "w1", ipu.weight, ipu.random = [-0.2, 0.2]},
    %b1: tensor<64xf16> {ipu.name = "b1", ipu.weight},
    %w2: tensor<64x64xf8E4M3FN> {ipu.name = "w2", ipu.weight, ipu.random = [-0.2, 0.2]},
    %b2: tensor<64xf16> {ipu.name = "b2", ipu.weight})
    -> (tensor<8x64xf16> {ipu.name = "y"}) {
  %y1 = func.call @layer(%x, %w1, %b1) : (tensor<8x64xf16>, tensor<64x64xf8E4M3FN>, tensor<64xf16>) -> tensor<8x64xf16>
  %y2 = func.call @layer(%y1, %w2, %b2) : (tensor<8x64xf16>, tensor<64x64xf8E4M3FN>, tensor<64xf16>) -> tensor<8x64xf16>
  return %y2 : tensor<8x64xf16>
}
