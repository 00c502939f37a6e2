// A split-K matmul's bias add, a GELU after it and a saturating FP8 cast
// after that fold into the reduction's last partials call (partials.S ACT,
// TO8): one pass adds the partials and the bias, applies GELU's tanh form
// (the instruction elementwise.S uses, on the same f16 value) and stores
// the f16 result and its FP8 conversion (at scale -2, as cast.S would).
// The planner costs that pass with each plan: K in 8, one call a tile
// (the granule form: a share of one 32-column row).
// The f16 GELU stays stored, so --check-ops checks the cast exactly on the
// device's own input; the matmul and the add are fused into the GELU.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --ipu-lower-to-exchange %s | FileCheck %s
// RUN: ipu-run %s --check-ops --device-lock %t/device.lock 2>/dev/null | FileCheck %s --check-prefix=DEVICE

// CHECK: exchange.compute_set attributes {{.*}}label = "tile.matmul reduction, tile.map add, tile.map gelu_tanh, tile.map cast", sym_name = "s1.reduce"}
// CHECK-NEXT: exchange.vertex {kernel = "partials", name = "partials_add_f16_p7_n32_bias32_gsplit_gelu_tanh_to_f8e4m3fn_sm2", params = {ACT = 29 : i64, C = 32 : i64, GRAN = 1 : i64, N = 32 : i64, P = 7 : i64, SCL = -2 : i64, TO8 = 3 : i64, TYPE = 1 : i64}, record = [@s1.partials, @s1.partials_in, @s3.result, @s2.operand1, @s4.result], tiles = "0 to 1"}
// CHECK-NOT: ew_gelu
// CHECK-NOT: cast_f16
// CHECK: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s1.reduce, buffer = @s3.result, {{.*}}op = "tile.map", source = "fused[{{.*}}]", type = tensor<8x64xf16>}
// CHECK-NEXT: exchange.probe {after = @s1.reduce, buffer = @s4.result, {{.*}}op = "tile.map", source = "{{[0-9]+}}:3", type = tensor<8x64xf8E4M3FN>}

// DEVICE: numericalTest=PASS
// DEVICE: hardwareTest=PASS
// DEVICE: 1  nn.matmul {{.*}}fused into a later op
// DEVICE-NEXT: 2  nn.add {{.*}}fused into a later op
// DEVICE-NEXT: 3  nn.gelu {{.*}}  ok
// DEVICE-NEXT: 4  nn.cast {{.*}} 0.000e0 {{.*}}  ok  saturated=
// DEVICE: every checked op is within its tolerance
module attributes {ipu.target = "test16"} {
func.func @main(%x: tensor<8x1024xf16> {ipu.name = "x"}, %w: tensor<1024x64xf16> {ipu.name = "w", ipu.weight}, %b: tensor<64xf16> {ipu.name = "b", ipu.weight}) -> (tensor<8x64xf8E4M3FN> {ipu.name = "y"}) {
  %m = nn.matmul %x, %w : (tensor<8x1024xf16>, tensor<1024x64xf16>) -> tensor<8x64xf16>
  %s = nn.add %m, %b : (tensor<8x64xf16>, tensor<64xf16>) -> tensor<8x64xf16>
  %g = nn.gelu %s {approximate = "tanh"} : tensor<8x64xf16>
  %y = nn.cast %g {saturate, scale = -2} : tensor<8x64xf16> -> tensor<8x64xf8E4M3FN>
  return %y : tensor<8x64xf8E4M3FN>
}
}
