// Ops of unknown dialects are errors unless --allow-unregistered-dialect,
// which keeps them, with their regions and attributes, in generic form.
// RUN: not ipu-opt %s 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: ipu-opt --allow-unregistered-dialect %s | FileCheck %s

// ERR: error: operation being parsed with an unregistered dialect 'my'; use --allow-unregistered-dialect to allow it

// CHECK: %0:2 = "my.op"() ({
// CHECK-NEXT: ^bb0(%arg0: !my.type<5>):
// CHECK-NEXT:   "my.yield"(%arg0) : (!my.type<5>) -> ()
// CHECK-NEXT: }) {my.attr = #my.attr<"x">} : () -> (i32, f32)
%r:2 = "my.op"() ({
^bb0(%t: !my.type<5>):
  "my.yield"(%t) : (!my.type<5>) -> ()
}) {my.attr = #my.attr<"x">} : () -> (i32, f32)
// CHECK-NEXT: "my.use"(%0#1, %0#0) : (f32, i32) -> ()
"my.use"(%r#1, %r#0) : (f32, i32) -> ()
