// --mlir-pass-statistics reports each pass's counters.
// RUN: ipu-opt --mlir-pass-statistics --canonicalize --symbol-dce %s 2>&1 >/dev/null | FileCheck %s

// CHECK: ... Pass statistics report ...
// CHECK: Canonicalizer
// CHECK-NEXT: (S) 1 num-folded - Number of operations folded
// CHECK-NEXT: (S) 0 num-rewritten - Number of pattern rewrites
// CHECK-NEXT: (S) 1 num-dce'd - Number of dead operations erased
// CHECK-NEXT: SymbolDCE
// CHECK-NEXT: (S) 1 num-dce'd - Number of symbols DCE'd
func.func @f() -> i32 {
  %a = test.constant 1 : i32
  %b = test.add %a, %a : i32
  return %b : i32
}
func.func private @unused()
