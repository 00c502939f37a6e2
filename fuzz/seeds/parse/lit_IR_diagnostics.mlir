// Diagnostics print as file:line:col with the source line and a caret, and
// the tool exits with 1, like mlir-opt.
// RUN: not ipu-opt %s 2>&1 | FileCheck %s

func.func @f(%a: i32) -> i32 {
  %b = test.add %a, %a : i32
  return %b : f32
}

// CHECK: error: use of value '%b' expects different type than prior uses: 'f32' vs 'i32'
// CHECK-NEXT: ┌─ {{.*}}diagnostics.mlir:7:10
// CHECK: 7 │   return %b : f32
// CHECK-NEXT: │          ^^
