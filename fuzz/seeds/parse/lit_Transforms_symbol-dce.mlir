// symbol-dce: private symbols nothing live references are erased.
// RUN: ipu-opt --symbol-dce %s | FileCheck %s

// CHECK-NOT: @dead
// CHECK-NOT: @dead_chain
// CHECK: func.func @public
// CHECK: func.func private @used
// CHECK-NOT: @dead
func.func @public(%x: i32) {
  func.call @used(%x) : (i32) -> ()
  return
}
func.func private @used(%x: i32) {
  return
}
func.func private @dead(%x: i32) {
  func.call @dead_chain(%x) : (i32) -> ()
  return
}
func.func private @dead_chain(%x: i32) {
  return
}
