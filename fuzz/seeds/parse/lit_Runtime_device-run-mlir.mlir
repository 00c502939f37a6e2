// ipu-run compiles an nn model with ipu-lower-to-machine for the 4-tile test
// target, runs the package on the simulated device and checks it against
// the reference interpreter; --write-package keeps the package, which
// carries the model as its reference and runs again on its own.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test4 --device-lock %t/device.lock --write-package %t/model.ipuexe 2>%t/stderr | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t/stderr
// RUN: ipu-run %t/model.ipuexe --device-lock %t/device.lock 2>/dev/null | FileCheck %s --check-prefix=PKG

// CHECK: tiles=4 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: package={{.*}}model.ipuexe tiles=4 hardwareTest=PASS
// ERR: writing application package
// ERR: acquired hardware ownership
// ERR: compared with the reference output=y
// PKG: numericalTest=PASS
// PKG-NEXT: package={{.*}}model.ipuexe tiles=4 hardwareTest=PASS
func.func @main(%x: tensor<16x32xf16> {ipu.name = "x"}, %b: tensor<32xf16> {ipu.name = "b"}) -> (tensor<16x32xf16> {ipu.name = "y"}) {
  %s = nn.add %x, %b : (tensor<16x32xf16>, tensor<32xf16>) -> tensor<16x32xf16>
  %y = nn.relu %s : tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}
