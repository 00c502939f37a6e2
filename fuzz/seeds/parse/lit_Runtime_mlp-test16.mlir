// The first op set end to end on the 16-tile test target: a split-K matmul
// with f8 weights (widened on the tiles), a bias broadcast and gelu, run on
// the simulated device and checked against the reference. The run is the
// same, cycle for cycle and bit for bit, with one thread or two.
// RUN: rm -rf %t && mkdir -p %t/1 %t/2
// RUN: env RAYON_NUM_THREADS=1 ipu-run %s --target test16 --device-lock %t/device.lock --output-dir %t/1 --profile %t/1/profile.json 2>/dev/null > %t/1/verdict
// RUN: env RAYON_NUM_THREADS=2 ipu-run %s --target test16 --device-lock %t/device.lock --output-dir %t/2 --profile %t/2/profile.json 2>/dev/null > %t/2/verdict
// RUN: FileCheck %s < %t/1/verdict
// RUN: cmp %t/1/y.npy %t/2/y.npy
// RUN: cmp %t/1/profile.json %t/2/profile.json
// RUN: sed 's/profile=[^ ]*//' %t/1/verdict > %t/1/v && sed 's/profile=[^ ]*//' %t/2/verdict > %t/2/v && cmp %t/1/v %t/2/v

// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN> {ipu.name = "w1"}, %b1: tensor<128xf16> {ipu.name = "b1"}) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
