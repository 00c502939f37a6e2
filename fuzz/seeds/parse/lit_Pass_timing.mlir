// --mlir-timing prints a per-pass wall-time report, nested like the pipeline.
// RUN: ipu-opt --mlir-timing --pass-pipeline='builtin.module(func.func(cse,canonicalize),symbol-dce)' %s 2>&1 >/dev/null | FileCheck %s

// CHECK: ... Execution time report ...
// CHECK: Total Execution Time: {{[0-9.]+}} seconds
// CHECK: ----Wall Time----  ----Name----
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Parser
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Verifier
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  'func.func' Pipeline
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)    CSE
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)    Canonicalizer
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  SymbolDCE
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Output
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Rest
// CHECK-NEXT: {{[0-9.]+}} (100.0%)  Total
func.func @f() {
  return
}
