// Integers and booleans on the device (test16), against the reference: the
// forms exporters write for masks, shapes and indices. The attention mask
// as exporters compute it (i64 -> i1 -> f32, and a select on it); i32 and
// i64 add, sub, mul, div (truncating; i32 and i64 minimum by -1 wraps),
// max, min, pow (negative exponents; i64 products past 2^64 wrap), equal,
// less and greater, with a broadcast row and a splat scalar; select of i64
// values; i32 <-> i64 casts; booleans compared and selected; f32 to i32,
// i64 (towards zero) and i1.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --print-outputs 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-tile %s | FileCheck %s --check-prefix=TILE
// The exchange stage printed and read back lowers to the same package.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | ipu-translate --to-ipuexe - -o %t/one.ipuexe
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s -o %t/exchange.mlir
// RUN: ipu-opt --convert-exchange-to-machine %t/exchange.mlir | ipu-translate --to-ipuexe - -o %t/split.ipuexe
// RUN: cmp %t/one.ipuexe %t/split.ipuexe
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-DAG: div32: tensor<3x7xi32> = [7, 29, -44, 50000, 0, 1, 1, 16, 2, -10, -2147483648, 0, 0, 2, -22, 40, 795, 1, 1073741823, 21845, 0]
// CHECK-DAG: div64: tensor<2x9xi64> = [0, 3, 1, 0, 32768, 0, 0, -9223372036854775808, 1, -22, -12345678901, -2147483647, 188380, -2, 0, 0, 1, 65536]
// CHECK-DAG: mul64: tensor<2x9xi64> = [30064771072, 14, 1, -458752, 131072, 0, 4294967296, -9223372036854775808, 4, 80812910621812013, -12345678901, 4294967296, 809086412455936, 2315945094416433152, 30064771072, 14, 4294967296, 65536]
// CHECK-DAG: pow64: tensor<2x9xi64> = [0, 16777216, 1, 65536, 8, 2541865828329, 0, 1, 137438953472, 55834574847, -1, 0, 0, 0, 0, 96889010407, 281474976710656, 1]
// CHECK-DAG: c64: tensor<2x9xi64> = [1, 0, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 1]
// CHECK: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// TILE-DAG: tile.map %{{.*}} {cycles = {{[0-9]+}} : i64, fn = #tile.fn<cast>, kernel = "int_tobool_w8_n{{[0-9]+}}"
// TILE-DAG: fn = #tile.fn<cast>, kernel = "int_booltofloat_w4_n{{[0-9]+}}"
// TILE-DAG: fn = #tile.fn<div>, kernel = "int_div_w4_n{{[0-9]+}}"
// TILE-DAG: fn = #tile.fn<pow>, kernel = "int_pow_w8_n{{[0-9]+}}"
// TILE-DAG: fn = #tile.fn<equal>, kernel = "int_eq_w4_n{{[0-9]+}}"
// TILE-DAG: tile.select {{.*}}kernel = "int_select_w8_n{{[0-9]+}}"
// TILE-DAG: tile.select {{.*}}kernel = "int_select_w1_n{{[0-9]+}}"
// TILE-DAG: fn = #tile.fn<equal>, kernel = "int_eq_w1_n{{[0-9]+}}"
// TILE-DAG: fn = #tile.fn<cast>, kernel = "int_fromf32_w8_n{{[0-9]+}}"
// TILE-DAG: fn = #tile.fn<cast>, kernel = "int_f32tobool_w4_n{{[0-9]+}}"
func.func @main(
    %mask: tensor<2x64xi64> {ipu.name = "mask", ipu.default = dense<[[1, 1, 1, 1, 1, 8589934592, -1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]> : tensor<2x64xi64>},
    %x: tensor<2x64xf32> {ipu.name = "x"},
    %a: tensor<3x7xi32> {ipu.name = "a", ipu.default = dense<[[304, 500, -531, 100000, -2, -2, -7], [-436, -131, -474, -2147483648, 1, 7, 2], [948, -645, 795, -2147483648, 2147483647, 65535, -1]]> : tensor<3x7xi32>},
    %b: tensor<3x7xi32> {ipu.name = "b", ipu.default = dense<[[43, 17, 12, 2, -7, -2, -7], [-27, -44, 44, -1, 7, -65536, 1], [-43, -16, 1, -2147483648, 2, 3, 2147483647]]> : tensor<3x7xi32>},
    %e: tensor<3x7xi32> {ipu.name = "e", ipu.default = dense<[[0, 4, 1, 1, 9, -1, 1], [-2, -1, 1, 7, 5, 3, -1], [8, 8, 0, -3, 1, -1, 8]]> : tensor<3x7xi32>},
    %r: tensor<7xi32> {ipu.name = "r", ipu.default = dense<[304, -131, 0, -2147483648, 2, 65535, -1]> : tensor<7xi32>},
    %p: tensor<2x9xi64> {ipu.name = "p", ipu.default = dense<[[-7, -7, 1, -7, 65536, 0, 4294967295, -9223372036854775808, 2], [-98765432109, 12345678901, 9223372036854775807, 12345678901, 12345678901, 7, 2, 65536, 65536]]> : tensor<2x9xi64>},
    %q: tensor<2x9xi64> {ipu.name = "q", ipu.default = dense<[[-4294967296, -2, 1, 65536, 2, 3, -4294967296, 1, 2], [4294967295, -1, -4294967296, 65536, -4294967296, 4294967296, 7, 65536, 1]]> : tensor<2x9xi64>},
    %pe: tensor<2x9xi64> {ipu.name = "pe", ipu.default = dense<[[12, 24, 25, 1, 3, 26, 33, 24, 37], [13, 11, 31, -2, 5, 5, 13, 3, 31]]> : tensor<2x9xi64>},
    %c: tensor<2x9xi1> {ipu.name = "c", ipu.default = dense<[[true, false, false, true, false, true, false, true, true], [true, true, true, false, true, false, false, false, true]]> : tensor<2x9xi1>})
    -> (tensor<2x64xf32> {ipu.name = "mask_f"}, tensor<2x64xf32> {ipu.name = "masked"},
        tensor<3x7xi32> {ipu.name = "add32"}, tensor<3x7xi32> {ipu.name = "sub32"},
        tensor<3x7xi32> {ipu.name = "mul32"}, tensor<3x7xi32> {ipu.name = "div32"},
        tensor<3x7xi32> {ipu.name = "max32"}, tensor<3x7xi32> {ipu.name = "min32"},
        tensor<3x7xi32> {ipu.name = "pow32"}, tensor<3x7xi1> {ipu.name = "eq32"},
        tensor<3x7xi1> {ipu.name = "lt32"}, tensor<3x7xi1> {ipu.name = "gt32"},
        tensor<2x9xi64> {ipu.name = "add64"}, tensor<2x9xi64> {ipu.name = "sub64"},
        tensor<2x9xi64> {ipu.name = "mul64"}, tensor<2x9xi64> {ipu.name = "div64"},
        tensor<2x9xi64> {ipu.name = "max64"}, tensor<2x9xi64> {ipu.name = "min64"},
        tensor<2x9xi64> {ipu.name = "pow64"}, tensor<2x9xi1> {ipu.name = "eq64"},
        tensor<2x9xi1> {ipu.name = "lt64"}, tensor<2x9xi1> {ipu.name = "gt64"},
        tensor<2x9xi64> {ipu.name = "sel64"}, tensor<3x7xi64> {ipu.name = "wide"},
        tensor<2x9xi32> {ipu.name = "narrow"}, tensor<2x9xi64> {ipu.name = "c64"},
        tensor<2x9xi1> {ipu.name = "beq"}, tensor<2x9xi1> {ipu.name = "bsel"},
        tensor<2x64xi32> {ipu.name = "xi32"}, tensor<2x64xi64> {ipu.name = "xi64"}, tensor<2x64xi1> {ipu.name = "xb"}) {
  %m = nn.cast %mask : tensor<2x64xi64> -> tensor<2x64xi1>
  %mask_f = nn.cast %m : tensor<2x64xi1> -> tensor<2x64xf32>
  %big = nn.constant dense<-1.0e+04> : tensor<f32>
  %masked = nn.select %m, %x, %big : (tensor<2x64xi1>, tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %add32 = nn.add %a, %b : (tensor<3x7xi32>, tensor<3x7xi32>) -> tensor<3x7xi32>
  %sub32 = nn.sub %a, %r : (tensor<3x7xi32>, tensor<7xi32>) -> tensor<3x7xi32>
  %mul32 = nn.mul %a, %b : (tensor<3x7xi32>, tensor<3x7xi32>) -> tensor<3x7xi32>
  %div32 = nn.div %a, %b : (tensor<3x7xi32>, tensor<3x7xi32>) -> tensor<3x7xi32>
  %max32 = nn.max %a, %b : (tensor<3x7xi32>, tensor<3x7xi32>) -> tensor<3x7xi32>
  %min32 = nn.min %a, %r : (tensor<3x7xi32>, tensor<7xi32>) -> tensor<3x7xi32>
  %pow32 = nn.pow %b, %e : (tensor<3x7xi32>, tensor<3x7xi32>) -> tensor<3x7xi32>
  %eq32 = nn.equal %a, %r : (tensor<3x7xi32>, tensor<7xi32>) -> tensor<3x7xi1>
  %two = nn.constant dense<2> : tensor<i32>
  %lt32 = nn.less %a, %two : (tensor<3x7xi32>, tensor<i32>) -> tensor<3x7xi1>
  %gt32 = nn.greater %a, %b : (tensor<3x7xi32>, tensor<3x7xi32>) -> tensor<3x7xi1>
  %add64 = nn.add %p, %q : (tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi64>
  %sub64 = nn.sub %p, %q : (tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi64>
  %mul64 = nn.mul %p, %q : (tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi64>
  %div64 = nn.div %p, %q : (tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi64>
  %max64 = nn.max %p, %q : (tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi64>
  %min64 = nn.min %p, %q : (tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi64>
  %pow64 = nn.pow %q, %pe : (tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi64>
  %eq64 = nn.equal %p, %q : (tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi1>
  %lt64 = nn.less %p, %q : (tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi1>
  %gt64 = nn.greater %p, %q : (tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi1>
  %sel64 = nn.select %c, %p, %q : (tensor<2x9xi1>, tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi64>
  %wide = nn.cast %a : tensor<3x7xi32> -> tensor<3x7xi64>
  %narrow = nn.cast %p : tensor<2x9xi64> -> tensor<2x9xi32>
  %c64 = nn.cast %c : tensor<2x9xi1> -> tensor<2x9xi64>
  %beq = nn.equal %c, %eq64 : (tensor<2x9xi1>, tensor<2x9xi1>) -> tensor<2x9xi1>
  %bsel = nn.select %c, %lt64, %gt64 : (tensor<2x9xi1>, tensor<2x9xi1>, tensor<2x9xi1>) -> tensor<2x9xi1>
  %k = nn.constant dense<1.0e+03> : tensor<f32>
  %xk = nn.mul %x, %k : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %xi32 = nn.cast %xk : tensor<2x64xf32> -> tensor<2x64xi32>
  %xi64 = nn.cast %xk : tensor<2x64xf32> -> tensor<2x64xi64>
  %xb = nn.cast %masked : tensor<2x64xf32> -> tensor<2x64xi1>
  return %mask_f, %masked, %add32, %sub32, %mul32, %div32, %max32, %min32, %pow32, %eq32, %lt32, %gt32, %add64, %sub64, %mul64, %div64, %max64, %min64, %pow64, %eq64, %lt64, %gt64, %sel64, %wide, %narrow, %c64, %beq, %bsel, %xi32, %xi64, %xb : tensor<2x64xf32>, tensor<2x64xf32>, tensor<3x7xi32>, tensor<3x7xi32>, tensor<3x7xi32>, tensor<3x7xi32>, tensor<3x7xi32>, tensor<3x7xi32>, tensor<3x7xi32>, tensor<3x7xi1>, tensor<3x7xi1>, tensor<3x7xi1>, tensor<2x9xi64>, tensor<2x9xi64>, tensor<2x9xi64>, tensor<2x9xi64>, tensor<2x9xi64>, tensor<2x9xi64>, tensor<2x9xi64>, tensor<2x9xi1>, tensor<2x9xi1>, tensor<2x9xi1>, tensor<2x9xi64>, tensor<3x7xi64>, tensor<2x9xi32>, tensor<2x9xi64>, tensor<2x9xi1>, tensor<2x9xi1>, tensor<2x64xi32>, tensor<2x64xi64>, tensor<2x64xi1>
}
