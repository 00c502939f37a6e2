// IR printing around passes goes to stderr, MLIR's banner format.
// RUN: ipu-opt --mlir-print-ir-before-all --mlir-print-ir-after-all --pass-pipeline='builtin.module(func.func(cse))' %s 2>&1 >/dev/null | FileCheck %s
// RUN: ipu-opt --mlir-print-ir-after-change --cse --canonicalize %s 2>&1 >/dev/null | FileCheck %s --check-prefix=CHANGE

// The anchor of a nested pass is printed alone: here, each func.func.
// CHECK: // -----// IR Dump Before CSE (cse) //----- //
// CHECK-NEXT: func.func @f(%arg0: i32) {
// CHECK: // -----// IR Dump After CSE (cse) //----- //
// CHECK-NEXT: func.func @f(%arg0: i32) {
// CHECK-NEXT:   %0 = test.add %arg0, %arg0 : i32
// CHECK-NEXT:   test.print %0, %0 : i32, i32

// CSE changes the IR; canonicalize then has nothing to do and is not printed.
// CHANGE: IR Dump After CSE (cse)
// CHANGE-NOT: IR Dump After Canonicalizer
func.func @f(%x: i32) {
  %a = test.add %x, %x : i32
  %b = test.add %x, %x : i32
  test.print %a, %b : i32, i32
  return
}
