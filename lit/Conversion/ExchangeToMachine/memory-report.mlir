// ipu-opt --memory-report=FILE.json: the machine stage's memory report,
// with its readable summary beside it (FILE.txt). Every tile's categories
// add up to its memory; buffers are classified by what they hold and name
// the op and location that fill them.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s -o /dev/null --memory-report=%t/mem.json
// RUN: FileCheck %s < %t/mem.txt
// RUN: %python -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['format'], len(r['tiles']), all(sum(t['bytes']) == r['tile_bytes'] for t in r['tiles']), r['totals']['stack'], len(r['supersteps']))" %t/mem.json | FileCheck %s --check-prefix=JSON
// JSON: ipu-memory-report 1 16 True 0 3

// CHECK: memory report: target test16, 16 tiles (16 running a program), 638976 B each (data after each tile's code, records and rows)
// CHECK: category{{ +}}all tiles B{{ +}}%{{ +}}max tile B{{ +}}tile
// CHECK-NEXT: code{{ +}}[[#]]
// CHECK-NEXT: pointer table and kernel records
// CHECK-NEXT: exchange rows
// CHECK-NEXT: weights and constants{{ +}}34304
// CHECK-NEXT: activations
// CHECK-NEXT: partials
// The f8 parameter is widened to f16 by the host when it loads the program:
// the matmul re-lays out nothing on the tiles.
// CHECK-NEXT: re-layout scratch{{ +}}0{{ +}}0.00%
// CHECK-NEXT: stack{{ +}}0{{ +}}0.00%
// CHECK-NEXT: free (code reserve)
// CHECK-NEXT: free
// CHECK-NEXT: total{{ +}}10223616 100.00%
// CHECK: superstep{{ +}}max tile B{{ +}}tile{{ +}}all tiles B{{ +}}label
// CHECK-NEXT: x0{{ +}}
// CHECK-NEXT: s1{{ +}}4988{{ +}}1
// CHECK: end{{ +}}{{[0-9]+}}{{ +}}{{[0-9]+}}{{ +}}{{[0-9]+}}{{ +}}end (results)
// CHECK: tiles 1 to 3 (3 tiles): 4988 B used, 633984 B free; most live data in s1: 3104 B
// The parameters are placed in the matmul's and the add's operand buffers
// (w1 as the f16 it was widened to: 2 B an element).
// CHECK-NEXT: 0x80000 2096 B s1.operand1 weights and constants x0..s1 host input w1 (placed) at {{.*}}memory-report.mlir:[[#@LINE+11]]:3
// CHECK: 0x80830 528 B s1.operand0 activations x0..s1 tile.matmul, tile.map add, tile.map gelu at {{.*}}memory-report.mlir:[[#@LINE+10]]:3
// The add and gelu joined the matmul's superstep.
// CHECK: 0x80b60 144 B s3.result activations s1..end tile.matmul, tile.map add, tile.map gelu at {{.*}}memory-report.mlir:[[#@LINE+10]]:3
// CHECK: 0x80bf0 48 B s2.operand1 weights and constants x0..s1 host input b1 (placed) at {{.*}}memory-report.mlir:[[#@LINE+8]]:3

// Without a machine stage there is no report to write.
// RUN: not ipu-opt --target test16 --ipu-lower-to-exchange %s -o /dev/null --memory-report=%t/none.json 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: ipu-opt: --memory-report: no machine-stage build ran

func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN> {ipu.name = "w1", ipu.weight}, %b1: tensor<128xf16> {ipu.name = "b1", ipu.weight}) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
