// Locations: parsed in every form, printed with --mlir-print-debuginfo, and
// kept through transformations (CSE fuses the locations of merged ops).
// RUN: ipu-opt --mlir-print-debuginfo %s | FileCheck %s
// RUN: ipu-opt --mlir-print-debuginfo --cse %s | FileCheck %s --check-prefix=CSE
// RUN: ipu-opt --mlir-print-debuginfo %s > %t && ipu-opt --mlir-print-debuginfo %t | diff %t -

// CHECK: func.func @f(%arg0: i32 loc("args.py":1:1)) -> i32 {
func.func @f(%a: i32 loc("args.py":1:1)) -> i32 {
  // CHECK-NEXT: %0 = test.add %arg0, %arg0 : i32 loc("model.py":10:4)
  %0 = test.add %a, %a : i32 loc("model.py":10:4)
  // CHECK-NEXT: %1 = test.add %arg0, %arg0 : i32 loc("layer0"("model.py":11:4))
  %1 = test.add %a, %a : i32 loc("layer0"("model.py":11:4))
  // CHECK-NEXT: %2 = test.add %0, %1 : i32 loc(fused["a", callsite("f" at "g.py":2:3)])
  %2 = test.add %0, %1 : i32 loc(fused["a", callsite("f" at "g.py":2:3)])
  // CHECK-NEXT: test.print %2 : i32 loc("alias.py":5:6)
  test.print %2 : i32 loc(#later)
  // Without an explicit location an op gets its own position in the file.
  // CHECK-NEXT: return %2 : i32 loc("{{.*}}locations.mlir":[[@LINE+1]]:3)
  return %2 : i32
} loc(unknown)
// CHECK-NEXT: } loc(unknown)

#later = loc("alias.py":5:6)

// CSE: %0 = test.add %arg0, %arg0 : i32 loc(fused["model.py":10:4, "layer0"("model.py":11:4)])
// CSE-NEXT: %1 = test.add %0, %0 : i32
