// The custom form round-trips byte for byte, and keeps its meaning.
// RUN: ipu-opt %s > %t && ipu-opt %t | diff %t -
// RUN: ipu-opt %s | FileCheck %s

// CHECK-LABEL: func.func @scalars
// CHECK-SAME: (%arg0: i32, %arg1: i32) -> i32
func.func @scalars(%a: i32, %b: i32) -> i32 {
  // CHECK-NEXT: %0 = test.add %arg0, %arg1 : i32
  %sum = test.add %a, %b : i32
  // CHECK-NEXT: %1 = test.constant 7 : i32
  %c = test.constant 7 : i32
  // CHECK-NEXT: %2 = test.neg %1 : i32
  %n = test.neg %c : i32
  // CHECK-NEXT: test.print %0, %2 : i32, i32
  test.print %sum, %n : i32, i32
  // CHECK-NEXT: return %0 : i32
  return %sum : i32
}

// Types of every builtin kind survive.
// CHECK-LABEL: func.func private @types
// CHECK-SAME: (tensor<4x?x8xf32>, tensor<f16>, tensor<2x3xf8E4M3FN>, tensor<1xf8E5M2>, tensor<7xbf16>, si8, ui16, i1, index, f64, none) -> (i64, tensor<1x2xf32>)
func.func private @types(tensor<4x?x8xf32>, tensor<f16>, tensor<2x3xf8E4M3FN>, tensor<1xf8E5M2>, tensor<7xbf16>, si8, ui16, i1, index, f64, none) -> (i64, tensor<1x2xf32>)

// Multiple results, result numbers, regions and block arguments.
// CHECK-LABEL: func.func @regions
func.func @regions(%x: i32) {
  // CHECK: test.region {
  test.region {
    // CHECK-NEXT: %0 = test.add %arg0, %arg0 : i32
    %y = test.add %x, %x : i32
    test.print %y : i32
  }
  // CHECK: test.isolated {
  // CHECK-NEXT: ^bb0(%arg0: f32):
  test.isolated {
  ^bb0(%f: f32):
    test.print %f : f32
  }
  return
}

// Calls print in their custom form, and the callee may be declared later.
// CHECK-LABEL: func.func @caller
// CHECK: %0 = call @scalars(%arg0, %arg0) : (i32, i32) -> i32
func.func @caller(%a: i32) -> i32 {
  %r = func.call @scalars(%a, %a) : (i32, i32) -> i32
  return %r : i32
}

// Function argument and result attributes, visibility, extra attributes.
// CHECK-LABEL: func.func nested @attrs
// CHECK-SAME: (%arg0: i32 {ipu.name = "x"}) -> (i32 {ipu.res}) attributes {ipu.entry}
func.func nested @attrs(%a: i32 {ipu.name = "x"}) -> (i32 {ipu.res}) attributes {ipu.entry} {
  return %a : i32
}
