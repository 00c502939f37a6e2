// Diagnostics of every severity from a pass, checked with --verify-diagnostics;
// a failing pass stops the pipeline, and --mlir-print-ir-after-failure shows the IR.
// RUN: ipu-opt --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(test-emit-diagnostics))' %s
// RUN: not ipu-opt --pass-pipeline='builtin.module(func.func(test-emit-diagnostics))' --mlir-print-ir-after-failure --split-input-file %s 2>&1 | FileCheck %s

// expected-note@+2 {{emitted while running on this op}}
// expected-note@+1 {{emitted while running on this op}}
func.func @f() {
  // expected-warning@+1 {{careful}}
  "test.print"() {test.warning = "careful"} : () -> ()
  // expected-remark@below {{noted}}
  "test.print"() {test.remark = "noted"} : () -> ()
  return
}

// -----

// expected-note@+1 {{emitted while running on this op}}
func.func @g() {
  // expected-error@+1 {{broken}}
  "test.print"() {test.error = "broken"} : () -> ()
  return
}

// CHECK: warning: careful
// CHECK: ┌─ {{.*}}diagnostics.mlir:10:3
// CHECK: // -----// IR Dump After Failed TestEmitDiagnostics (test-emit-diagnostics) //----- //
// CHECK-NEXT: func.func @g() {
// CHECK: error: broken
