// Large constants can live in the file's resource section (MLIR's
// dialect_resources blob encoding: 4-byte alignment, then the bytes).
// RUN: ipu-opt --allow-unregistered-dialect %s | FileCheck %s
// RUN: ipu-opt --allow-unregistered-dialect %s > %t && ipu-opt --allow-unregistered-dialect %t | diff %t -

// CHECK: "test.weights"() {w = dense_resource<blob1> : tensor<2xf32>} : () -> ()
"test.weights"() {w = dense_resource<blob1> : tensor<2xf32>} : () -> ()

// CHECK: {-#
// CHECK-NEXT: dialect_resources: {
// CHECK-NEXT: builtin: {
// CHECK-NEXT: blob1: "0x040000000000803F00000040"
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F00000040"
    }
  }
#-}
