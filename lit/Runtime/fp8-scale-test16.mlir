// FP8 with power-of-two scales on the device: activations and weights cast
// to f8E4M3FN with their scales, multiplied on the AMP's FP8 mode (the
// GEMM applies 2^(s_x + s_w) and accumulates into f16), the product cast to
// f32; the FP8 activations themselves are streamed out too. The f32 result
// is computed through f16, so it is compared at f16's tolerance.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCHANGE
// A cast without saturate overflows to NaN (cast.S SAT=0), from f32 and f16 only.
// RUN: ipu-run %S/Inputs/fp8-no-saturate.mlir --target test16 --device-lock %t/device.lock 2>/dev/null | FileCheck %s --check-prefix=NOSAT
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %S/Inputs/fp8-no-saturate.mlir | FileCheck %s --check-prefix=NOSAT-KERNEL
// RUN: not ipu-opt --target test16 --convert-nn-to-tile %S/Inputs/fp8-no-saturate-bf16.mlir 2>&1 | FileCheck %s --check-prefix=SATURATE
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// The casts record their scales (-3 and -2); the GEMM's record carries their sum.
// EXCHANGE: name = "cast_f32_f8e4m3fn_n{{[0-9]+}}", {{.*}} record = [{{.*}}, -3 : i64, 0 : i64]
// EXCHANGE: name = "cast_f32_f8e4m3fn_n{{[0-9]+}}", {{.*}} record = [{{.*}}, -2 : i64, 0 : i64]
// EXCHANGE: kernel = "gemm_amp", name = "gemm_f8e4_{{.*}} record = [{{.*}}, -5 : i64]
// NOSAT: numericalTest=PASS
// NOSAT-NEXT: hardwareTest=PASS
// NOSAT-KERNEL: name = "cast_f32_f8e4m3fn_nosat_n{{[0-9]+}}"
// SATURATE: error: 'nn.cast' op to FP8 without saturate (overflow becomes NaN or infinity) has a kernel from f32 and f16 only; cast through one, or add `saturate`
func.func @main(%x: tensor<16x64xf32> {ipu.name = "x"}, %w: tensor<64x32xf32> {ipu.name = "w"}) -> (tensor<16x32xf32> {ipu.name = "y"}, tensor<16x64xf8E4M3FN> {ipu.name = "x8"}) {
  %x8 = nn.cast %x {saturate, scale = -3} : tensor<16x64xf32> -> tensor<16x64xf8E4M3FN>
  %w8 = nn.cast %w {saturate, scale = -2} : tensor<64x32xf32> -> tensor<64x32xf8E4M3FN>
  %m = nn.matmul %x8, %w8 : (tensor<16x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>) -> tensor<16x32xf16>
  %y = nn.cast %m : tensor<16x32xf16> -> tensor<16x32xf32>
  return %y, %x8 : tensor<16x32xf32>, tensor<16x64xf8E4M3FN>
}
