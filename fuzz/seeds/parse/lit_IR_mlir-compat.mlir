// Our generic output is valid MLIR: upstream mlir-opt (LLVM 22) parses and
// verifies it, and prints back the same ops, attributes and locations.
// REQUIRES: mlir-opt
// RUN: ipu-opt --allow-unregistered-dialect --mlir-print-op-generic --mlir-print-debuginfo %s \
// RUN:   | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s

// CHECK: "func.func"() <{function_type = (tensor<4x8xf16>, tensor<8x2xf8E4M3FN>) -> tensor<4x2xf16>, sym_name = "mm"}>
func.func @mm(%x: tensor<4x8xf16>, %w: tensor<8x2xf8E4M3FN>) -> tensor<4x2xf16> {
  // CHECK: "ipu.matmul"(%arg0, %arg1) {scale = -2 : i8} : (tensor<4x8xf16>, tensor<8x2xf8E4M3FN>) -> tensor<4x2xf16> loc("{{.*}}mlir-compat.mlir":[[@LINE+1]]:3)
  %y = "ipu.matmul"(%x, %w) {scale = -2 : i8} : (tensor<4x8xf16>, tensor<8x2xf8E4M3FN>) -> tensor<4x2xf16>
  // CHECK: "test.add"({{.*}}) : (i32, i32) -> i32 loc(fused["a", "b"])
  %c = test.constant 1 : i32 loc("c"("f.py":1:2))
  %d = test.add %c, %c : i32 loc(fused["a", "b"])
  // CHECK: loc(callsite("g" at "main.py":3:4))
  test.print %d : i32 loc(callsite("g" at "main.py":3:4))
  return %y : tensor<4x2xf16>
}

// Dense elements of every element type, in list and hex form.
// CHECK: "test.dense"() {big = dense<7> : tensor<300xi8>, f = dense<[1.000000e+00, -2.500000e-01]> : tensor<2xbf16>, i = dense<[1, -1]> : tensor<2xi64>}
"test.dense"() {f = dense<[1.0, -0.25]> : tensor<2xbf16>, i = dense<[1, -1]> : tensor<2xi64>, big = dense<7> : tensor<300xi8>} : () -> ()
