// An FP8 value cast to the same FP8 type at another scale is re-encoded on
// the device (cast.S's FP8 -> FP8 path through f16), not passed through: the
// result is the reference's at scale 0. Found by the differential fuzz
// target (fuzz/fuzz_targets/differential.rs), where canonicalize folded the
// rescaling cast away and the device returned the scale-1 encoding.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test4 --device-lock %t/device.lock 2>/dev/null | FileCheck %s
// CHECK: tiles=4 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
func.func @main(%a: tensor<32x16xf32> {ipu.name = "a"}) -> (tensor<32x16xf8E4M3FN> {ipu.name = "r"}, tensor<32x16xf8E4M3FN> {ipu.name = "s"}) {
  %q = nn.cast %a {saturate, scale = 1} : tensor<32x16xf32> -> tensor<32x16xf8E4M3FN>
  %r = nn.cast %q {saturate, scale = 0} : tensor<32x16xf8E4M3FN> -> tensor<32x16xf8E4M3FN>
  %h = nn.cast %q : tensor<32x16xf8E4M3FN> -> tensor<32x16xf16>
  %s = nn.cast %h {saturate} : tensor<32x16xf16> -> tensor<32x16xf8E4M3FN>
  return %r, %s : tensor<32x16xf8E4M3FN>, tensor<32x16xf8E4M3FN>
}
