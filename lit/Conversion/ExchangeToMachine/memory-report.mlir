// ipu-opt --memory-report=FILE.json: the machine stage's memory report,
// with its readable summary beside it (FILE.txt). Every tile's categories
// add up to its memory; buffers are classified by what they hold and name
// the op and location that fill them.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s -o /dev/null --memory-report=%t/mem.json
// RUN: FileCheck %s < %t/mem.txt
// RUN: %python -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['format'], len(r['tiles']), all(sum(t['bytes']) == r['tile_bytes'] for t in r['tiles']), r['totals']['stack'], len(r['supersteps']))" %t/mem.json | FileCheck %s --check-prefix=JSON
// JSON: ipu-memory-report 1 16 True 0 5

// CHECK: memory report: target test16, 16 tiles (16 running a program), 638976 B each (98304 B kept for code and exchange tables)
// CHECK: category{{ +}}all tiles B{{ +}}%{{ +}}max tile B{{ +}}tile
// CHECK-NEXT: code{{ +}}[[#]]
// CHECK-NEXT: pointer table and kernel records
// CHECK-NEXT: exchange rows
// CHECK-NEXT: weights and constants{{ +}}9856
// CHECK-NEXT: activations
// CHECK-NEXT: partials
// CHECK-NEXT: re-layout scratch
// CHECK-NEXT: stack{{ +}}0{{ +}}0.00%
// CHECK-NEXT: free (code reserve)
// CHECK-NEXT: free
// CHECK-NEXT: total{{ +}}10223616 100.00%
// CHECK: superstep{{ +}}max tile B{{ +}}tile{{ +}}all tiles B{{ +}}label
// CHECK-NEXT: x0{{ +}}
// CHECK-NEXT: s1{{ +}}4120{{ +}}1
// CHECK: end{{ +}}{{[0-9]+}}{{ +}}{{[0-9]+}}{{ +}}{{[0-9]+}}{{ +}}end (results)
// CHECK: tile 1: 4120 B used, 538128 B free; most live data in s1: 2544 B
// CHECK-NEXT: 0x80000 1104 B s1.rhs_f16 re-layout scratch s1..s1 tile.matmul at {{.*}}memory-report.mlir:[[#@LINE+11]]:3
// The parameters are placed in the matmul's and the add's operand buffers.
// CHECK: 0x80450 592 B s1.operand1 weights and constants x0..s1 host input w1 (placed) at {{.*}}memory-report.mlir:[[#@LINE+9]]:3
// The add and gelu joined the matmul's reduction superstep.
// CHECK: 0x80220 272 B s3.result activations s1.reduce..end tile.matmul reduction, tile.map add, tile.map gelu at {{.*}}memory-report.mlir:[[#@LINE+9]]:3

// Without a machine stage there is no report to write.
// RUN: not ipu-opt --target test16 --ipu-lower-to-exchange %s -o /dev/null --memory-report=%t/none.json 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: ipu-opt: --memory-report: no machine-stage build ran

func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN> {ipu.name = "w1", ipu.weight}, %b1: tensor<128xf16> {ipu.name = "b1", ipu.weight}) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
