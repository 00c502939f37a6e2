// A layer called twice, its parameters bound to constants of the caller
// (as an imported model's weights are), runs on the 16-tile test target
// and matches the reference: each call's constants are loaded with the
// image into that call's copies of the callee's operand buffers; per-op
// checks see every op of every call.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %S/../Conversion/TileToExchange/call-const.mlir --target test16 --device-lock %t/device.lock --check-ops | FileCheck %s

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK: numericalTest=PASS
// CHECK: hardwareTest=PASS
// CHECK: nn.matmul {{.*}}call-const.mlir:{{[0-9]+}}:3 at {{.*}}call-const.mlir:[[C1:[0-9]+]]:3 {{.*}} ok
// CHECK-NEXT: nn.add {{.*}} at {{.*}}call-const.mlir:[[C1]]:3 {{.*}} ok
// CHECK-NEXT: nn.tanh {{.*}} ok
// CHECK-NEXT: nn.matmul {{.*}}call-const.mlir:{{[0-9]+}}:3 at {{.*}}call-const.mlir:[[C2:[0-9]+]]:3 {{.*}} ok
// CHECK-NEXT: nn.add {{.*}} ok
// CHECK-NEXT: nn.tanh {{.*}} ok
// CHECK: checked 6 of 6 ops on the device's values
// CHECK: every checked op is within its tolerance
