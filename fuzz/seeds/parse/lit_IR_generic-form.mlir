// --mlir-print-op-generic prints MLIR's generic form for every op: declared
// attributes as properties (<{...}>), the rest as a discardable dictionary.
// The generic form parses back to the same IR.
// RUN: ipu-opt --mlir-print-op-generic %s | FileCheck %s
// RUN: ipu-opt --mlir-print-op-generic %s | ipu-opt | FileCheck %s --check-prefix=CUSTOM
// RUN: ipu-opt %s > %t.custom && ipu-opt --mlir-print-op-generic %s | ipu-opt | diff %t.custom -

// CHECK: "builtin.module"() ({
// CHECK-NEXT: "func.func"() <{function_type = (i32) -> i32, sym_name = "f"}> ({
// CHECK-NEXT: ^bb0(%arg0: i32):
// CHECK-NEXT:   %0 = "test.add"(%arg0, %arg0) : (i32, i32) -> i32
// CHECK-NEXT:   "func.return"(%0) : (i32) -> ()
// CHECK-NEXT: }) {ipu.extra = 1 : i64} : () -> ()
// CHECK-NEXT: }) : () -> ()

// CUSTOM: func.func @f(%arg0: i32) -> i32 attributes {ipu.extra = 1 : i64} {
// CUSTOM-NEXT: %0 = test.add %arg0, %arg0 : i32
// CUSTOM-NEXT: return %0 : i32
func.func @f(%a: i32) -> i32 attributes {ipu.extra = 1} {
  %0 = test.add %a, %a : i32
  return %0 : i32
}
