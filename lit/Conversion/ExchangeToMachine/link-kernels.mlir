// Kernel selection and linking on the 16-tile test target: each compute set's
// kernel specialisation, assembled through the kernel cache and linked into
// one code image per group of tiles running the same kernels.
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange --machine-place-storage --machine-link-kernels %s | FileCheck %s

// The k = 0 tiles run the GEMM, add the received partials, cast them to f16,
// add the bias row vector and apply gelu; the k = 1 tiles only run the GEMM.
// CHECK: machine.code {code_bytes = 1232 : i64, exec = "0x4c000 to 0x4c4d4", kernels = ["cast_from0_n128_to1", "elementwise_n128_op0_type0", "elementwise_n128_op17_type1", "gemm_f16f32_interleaved_k32_c16_r1_r2_m8", "rows_c16_op6_r8_type1"], tiles = "0 to 7"}
// CHECK-NEXT: machine.code {code_bytes = 700 : i64, exec = "0x4c000 to 0x4c2bc", kernels = ["gemm_f16f32_interleaved_k32_c16_r1_r2_m8"], tiles = "8 to 15"}
// CHECK-NEXT: machine.memory_map
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN>, %b1: tensor<128xf16>) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
