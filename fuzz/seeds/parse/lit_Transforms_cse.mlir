// cse: identical side-effect-free ops merge when the first dominates the
// second; scopes follow regions and stop at isolated ops.
// RUN: ipu-opt --cse %s | FileCheck %s
// RUN: ipu-opt --cse --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// CHECK-LABEL: func.func @simple
func.func @simple(%x: i32) {
  // CHECK-NEXT: %0 = test.add %arg0, %arg0 : i32
  // CHECK-NEXT: test.print %0, %0 : i32, i32
  %a = test.add %x, %x : i32
  %b = test.add %x, %x : i32
  test.print %a, %b : i32, i32
  return
}

// CHECK-LABEL: func.func @attributes_differ
func.func @attributes_differ() {
  // CHECK-NEXT: test.constant 1 : i32
  // CHECK-NEXT: test.constant 2 : i32
  %a = test.constant 1 : i32
  %b = test.constant 2 : i32
  test.print %a, %b : i32, i32
  return
}

// CHECK-LABEL: func.func @nested
func.func @nested(%x: i32) {
  // CHECK-NEXT: %0 = test.add
  %a = test.add %x, %x : i32
  // CHECK-NEXT: test.region {
  // CHECK-NEXT: test.print %0, %0
  test.region {
    %b = test.add %x, %x : i32
    test.print %a, %b : i32, i32
  }
  return
}

// CHECK-LABEL: func.func @isolated
func.func @isolated() {
  %a = test.constant 5 : i32
  test.print %a : i32
  // Inside an isolated region the outer constant is not visible.
  // CHECK: test.isolated {
  // CHECK-NEXT: test.constant 5 : i32
  test.isolated {
    %b = test.constant 5 : i32
    test.print %b : i32
  }
  return
}

// CHECK-LABEL: func.func @side_effects
func.func @side_effects(%x: i32) {
  // CHECK-NEXT: test.print %arg0
  // CHECK-NEXT: test.print %arg0
  test.print %x : i32
  test.print %x : i32
  return
}

// STATS: CSE
// STATS-NEXT: (S) 2 num-cse'd - Number of operations CSE'd
