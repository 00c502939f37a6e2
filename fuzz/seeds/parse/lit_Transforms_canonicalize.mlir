// canonicalize: folding (with constant materialization), patterns and dead
// code removal, to a fixpoint.
// RUN: ipu-opt --canonicalize %s | FileCheck %s
// RUN: ipu-opt --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=1 top-down=false}))' %s | FileCheck %s --check-prefix=ONE

// CHECK-LABEL: func.func @fold_constants
func.func @fold_constants() -> i32 {
  // CHECK-NEXT: %0 = test.constant 7 : i32
  // CHECK-NEXT: return %0 : i32
  %a = test.constant 3 : i32
  %b = test.constant 4 : i32
  %c = test.add %a, %b : i32
  return %c : i32
}

// CHECK-LABEL: func.func @fold_chain
func.func @fold_chain() -> i8 {
  // Wraps to the type: 100 + 100 + 100 = 300 = 44 (mod 256).
  // CHECK-NEXT: %0 = test.constant 44 : i8
  %a = test.constant 100 : i8
  %b = test.add %a, %a : i8
  %c = test.add %b, %a : i8
  return %c : i8
}

// CHECK-LABEL: func.func @identity
func.func @identity(%x: i32) -> i32 {
  // CHECK-NEXT: return %arg0 : i32
  %z = test.constant 0 : i32
  %y = test.add %x, %z : i32
  return %y : i32
}

// CHECK-LABEL: func.func @double_negation
func.func @double_negation(%x: i32) -> i32 {
  // CHECK-NEXT: test.print %arg0 : i32
  %a = test.neg %x : i32
  %b = test.neg %a : i32
  test.print %b : i32
  // CHECK-NEXT: return
  return %x : i32
}

// CHECK-LABEL: func.func @dead
func.func @dead(%x: i32) {
  // Side-effect-free ops whose results are unused disappear; test.print stays.
  // CHECK-NEXT: test.print
  // CHECK-NEXT: return
  %a = test.add %x, %x : i32
  %b = test.neg %a : i32
  test.print %x : i32
  return
}

// ONE-LABEL: func.func @fold_constants
// ONE: test.constant 7 : i32
