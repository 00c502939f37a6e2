// Casts of blocks smaller than one of the cast kernel's groups (one element
// on each of the 16 tiles): N is padded to the kernel's own group (4
// elements from f16, 2 from i32), so each worker's first group lies in the
// block and the records' addresses stay inside the buffers the exchange
// stage checks; the padding lanes are converted and not stored back.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCHANGE
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>/dev/null | FileCheck %s
// EXCHANGE: name = "cast_f16_f32_n4", {{.*}}record = [@input0, @s1.result, 1 : i64, 0 : i64, 0 : i64, @input0, @s1.result, 0 : i64,
// EXCHANGE: name = "cast_i32_f32_n2", {{.*}}record = [@input1, @s2.result, 1 : i64, 0 : i64, 0 : i64, @input1, @s2.result, 0 : i64,
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
func.func @main(%x: tensor<16xf16> {ipu.name = "x"}, %i: tensor<16xi32> {ipu.name = "i"}) -> (tensor<16xf32> {ipu.name = "y"}) {
  %a = nn.cast %x : tensor<16xf16> -> tensor<16xf32>
  %b = nn.cast %i : tensor<16xi32> -> tensor<16xf32>
  %y = nn.add %a, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
