// ipu-run --reference-only evaluates a model on the reference interpreter.
// RUN: ipu-run --reference-only --print-outputs %s | FileCheck %s
// RUN: ipu-run --reference-only --output-dir %t.out %s && test -s %t.out/y.npy && test -s %t.out/result1.npy

// x @ w = [[1*1 + 2*2, 1*0 + 2*1], [3*1 + 4*2, 3*0 + 4*1]] = [[5, 2], [11, 4]]; + b; relu.
// CHECK: y: tensor<2x2xf16> = [4, 3, 10, 5]
// FP8 with scale -2 stores x / 2^-2 and means fp8 * 2^-2: 0.3 -> 1.2 -> 1.25 -> 0.3125;
// 500 -> 2000 saturates to 448 -> 112; -1 -> -4 -> -1.
// CHECK: result1: tensor<3xf32> = [0.3125, 112, -1]
// CHECK: referenceRun=OK outputs=2
func.func @main() -> (tensor<2x2xf16> {ipu.name = "y"}, tensor<3xf32>) {
  %x = nn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf16>
  %w = nn.constant dense<[[1.0, 0.0], [2.0, 1.0]]> : tensor<2x2xf16>
  %b = nn.constant dense<[-1.0, 1.0]> : tensor<2xf16>
  %h = nn.matmul %x, %w : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
  %hb = nn.add %h, %b : (tensor<2x2xf16>, tensor<2xf16>) -> tensor<2x2xf16>
  %y = nn.relu %hb : tensor<2x2xf16>
  %v = nn.constant dense<[0.3, 500.0, -1.0]> : tensor<3xf32>
  %q = nn.cast %v {saturate, scale = -2} : tensor<3xf32> -> tensor<3xf8E4M3FN>
  %d = nn.cast %q : tensor<3xf8E4M3FN> -> tensor<3xf32>
  return %y, %d : tensor<2x2xf16>, tensor<3xf32>
}
