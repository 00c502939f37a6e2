// Parameters widened once, when the program is loaded, and never on the
// tiles: an f8E4M3FN weight of an f16 x f8 matmul (no AMP mode reads f16 x
// f8; legalization casts it, and the cast folds into the load), and the
// model's own cast of an f8E5M2 weight to f32 for an f32 matmul. The run is
// checked against the reference, op by op on the device's values; the
// model's cast is reported as done by the host at load. The same with one
// thread or two.
// RUN: rm -rf %t && mkdir -p %t/1 %t/2
// RUN: env RAYON_NUM_THREADS=1 ipu-run %s --target test16 --check-ops --device-lock %t/device.lock --output-dir %t/1 2>/dev/null > %t/1/verdict
// RUN: env RAYON_NUM_THREADS=2 ipu-run %s --target test16 --check-ops --device-lock %t/device.lock --output-dir %t/2 2>/dev/null > %t/2/verdict
// RUN: FileCheck %s < %t/1/verdict
// RUN: cmp %t/1/verdict %t/2/verdict
// RUN: cmp %t/1/y.npy %t/2/y.npy
// The package written carries the conversions; run from it, the same.
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --write-package %t/p.ipuexe 2>/dev/null > /dev/null
// RUN: ipu-run %t/p.ipuexe --check-ops --device-lock %t/device.lock 2>/dev/null > %t/from-package
// RUN: head -3 %t/from-package | sed 's/package=[^ ]*//' > %t/from-package.verdict
// RUN: head -3 %t/1/verdict | sed 's/package=[^ ]*//' | cmp - %t/from-package.verdict
// RUN: FileCheck %s --check-prefix=TABLE < %t/from-package
// TABLE: nn.cast {{.*}} widened exactly by the host (a parameter at load, an input as it streams in): reference value used
// TABLE: every checked op is within its tolerance
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | FileCheck %s --check-prefix=MACHINE
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCHANGE

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// CHECK: nn.matmul {{.*}}load-widen-test16.mlir:[[#@LINE+15]]:3 {{.*}} ok
// CHECK: nn.cast {{.*}}load-widen-test16.mlir:[[#@LINE+15]]:3 {{.*}} widened exactly by the host (a parameter at load, an input as it streams in): reference value used
// CHECK: nn.matmul {{.*}}load-widen-test16.mlir:[[#@LINE+15]]:3 {{.*}} ok
// CHECK: checked 2 of 3 ops on the device's values (1 not stored, 1 of them converted by the host)
// CHECK-NEXT: every checked op is within its tolerance

// MACHINE: machine.host_stream "w1" {direction = "load", element = "f16", host_element = "f8E4M3FN"
// MACHINE: machine.host_stream "w2" {direction = "load", element = "f32", host_element = "f8E5M2"

// The loads carry the tiles' types beside the host's, and no kernel casts.
// EXCHANGE: exchange.host_input %arg1 {{{.*}}tile_type = tensor<64x128xf16>} : tensor<64x128xf8E4M3FN>
// EXCHANGE: exchange.host_input %arg3 {{{.*}}tile_type = tensor<128x32xf32>} : tensor<128x32xf8E5M2>
// EXCHANGE-NOT: kernel = "cast"

func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN> {ipu.name = "w1", ipu.weight}, %x2: tensor<8x128xf32> {ipu.name = "x2"}, %w2: tensor<128x32xf8E5M2> {ipu.name = "w2", ipu.weight}) -> (tensor<8x128xf16> {ipu.name = "y"}, tensor<8x32xf32> {ipu.name = "z"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %w2f = nn.cast %w2 : tensor<128x32xf8E5M2> -> tensor<128x32xf32>
  %z = nn.matmul %x2, %w2f : (tensor<8x128xf32>, tensor<128x32xf32>) -> tensor<8x32xf32>
  return %h, %z : tensor<8x128xf16>, tensor<8x32xf32>
}
