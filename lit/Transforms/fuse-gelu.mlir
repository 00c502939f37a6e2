// nn-fuse-gelu: GELU written out as elementwise nn ops (the tanh form of
// GPT-2-style exports, the erf form of BERT-style ones) becomes one nn.gelu,
// whatever the operand order and grouping; a wrong constant, an intermediate
// another op reads, or a second input leaves the ops as they are.
// RUN: ipu-opt --nn-fuse-gelu %s | FileCheck %s
// RUN: ipu-opt --nn-fuse-gelu --mlir-print-debuginfo %s | FileCheck %s --check-prefix=LOC
// RUN: ipu-opt --nn-fuse-gelu --mlir-pass-statistics %s 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS: FuseGelu
// STATS-DAG: 5 num-fused-erf
// STATS-DAG: 4 num-fused-tanh

// The block's form: pow x 3, (x * 0.5) * (1 + t), f16 constants.
// CHECK-LABEL: func.func @tanh_pow_f16
// CHECK-NEXT: %0 = nn.gelu %arg0 {approximate = "tanh"} : tensor<4x8xf16>
// CHECK-NEXT: return %0 : tensor<4x8xf16>
// LOC-LABEL: func.func @tanh_pow_f16
// LOC: nn.gelu %arg0 {approximate = "tanh"} : tensor<4x8xf16> loc(fused["{{[^"]*}}fuse-gelu.mlir":[[@LINE+7]]:3, "{{[^"]*}}fuse-gelu.mlir":[[@LINE+8]]:3, "{{[^"]*}}fuse-gelu.mlir":[[@LINE+9]]:3, "{{[^"]*}}fuse-gelu.mlir":[[@LINE+10]]:3, "{{[^"]*}}fuse-gelu.mlir":[[@LINE+11]]:3, "{{[^"]*}}fuse-gelu.mlir":[[@LINE+12]]:3, "{{[^"]*}}fuse-gelu.mlir":[[@LINE+13]]:3, "{{[^"]*}}fuse-gelu.mlir":[[@LINE+14]]:3])
func.func @tanh_pow_f16(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %c3 = nn.constant dense<3.0> : tensor<f16>
  %ck = nn.constant dense<0.044715> : tensor<f16>
  %cs = nn.constant dense<0.7978845608> : tensor<f16>
  %ch = nn.constant dense<0.5> : tensor<f16>
  %c1 = nn.constant dense<1.0> : tensor<f16>
  %x3 = nn.pow %x, %c3 : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
  %x3s = nn.mul %x3, %ck : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
  %in = nn.add %x, %x3s : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %in2 = nn.mul %in, %cs : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
  %t = nn.tanh %in2 : tensor<4x8xf16>
  %t1 = nn.add %t, %c1 : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
  %hx = nn.mul %x, %ch : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
  %g = nn.mul %hx, %t1 : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  return %g : tensor<4x8xf16>
}

// Constants first, (x * x) * x, x * (0.5 * (1 + t)); f32 constants with
// the digits exports print.
// CHECK-LABEL: func.func @tanh_commuted_f32
// CHECK-NEXT: %0 = nn.gelu %arg0 {approximate = "tanh"} : tensor<16xf32>
// CHECK-NEXT: return %0 : tensor<16xf32>
func.func @tanh_commuted_f32(%x: tensor<16xf32>) -> tensor<16xf32> {
  %ck = nn.constant dense<0.044715> : tensor<f32>
  %cs = nn.constant dense<0.797884583> : tensor<f32>
  %ch = nn.constant dense<0.5> : tensor<f32>
  %c1 = nn.constant dense<1.0> : tensor<f32>
  %xx = nn.mul %x, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %x3 = nn.mul %xx, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %x3s = nn.mul %ck, %x3 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %in = nn.add %x3s, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %in2 = nn.mul %cs, %in : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %t = nn.tanh %in2 : tensor<16xf32>
  %t1 = nn.add %c1, %t : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %ht = nn.mul %ch, %t1 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %g = nn.mul %x, %ht : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %g : tensor<16xf32>
}

// (x * (1 + t)) * 0.5, x * (x * x), splat constants of the full shape, bf16,
// an i64 exponent 3; the result read twice (only intermediates must have
// one reader).
// CHECK-LABEL: func.func @tanh_half_last_bf16
// CHECK-NEXT: %0 = nn.gelu %arg0 {approximate = "tanh"} : tensor<2x4xbf16>
// CHECK-NEXT: %1 = nn.add %0, %0
// CHECK-NEXT: return %1 : tensor<2x4xbf16>
func.func @tanh_half_last_bf16(%x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %ck = nn.constant dense<0.044715> : tensor<2x4xbf16>
  %cs = nn.constant dense<0.7978845608> : tensor<2x4xbf16>
  %ch = nn.constant dense<0.5> : tensor<2x4xbf16>
  %c1 = nn.constant dense<1.0> : tensor<2x4xbf16>
  %xx = nn.mul %x, %x : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %x3 = nn.mul %x, %xx : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %x3s = nn.mul %x3, %ck : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %in = nn.add %x, %x3s : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %in2 = nn.mul %in, %cs : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %t = nn.tanh %in2 : tensor<2x4xbf16>
  %t1 = nn.add %t, %c1 : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %xt = nn.mul %x, %t1 : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %g = nn.mul %xt, %ch : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %r = nn.add %g, %g : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %r : tensor<2x4xbf16>
}

// pow with an i64 exponent, 0.5 * x first.
// CHECK-LABEL: func.func @tanh_pow_i64
// CHECK-NEXT: %0 = nn.gelu %arg0 {approximate = "tanh"} : tensor<8xf32>
// CHECK-NEXT: return %0
func.func @tanh_pow_i64(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c3 = nn.constant dense<3> : tensor<i64>
  %ck = nn.constant dense<0.044715> : tensor<f32>
  %cs = nn.constant dense<0.7978845608> : tensor<f32>
  %ch = nn.constant dense<0.5> : tensor<f32>
  %c1 = nn.constant dense<1.0> : tensor<f32>
  %x3 = nn.pow %x, %c3 : (tensor<8xf32>, tensor<i64>) -> tensor<8xf32>
  %x3s = nn.mul %x3, %ck : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %in = nn.add %x, %x3s : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %in2 = nn.mul %in, %cs : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %t = nn.tanh %in2 : tensor<8xf32>
  %t1 = nn.add %t, %c1 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %hx = nn.mul %ch, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %g = nn.mul %hx, %t1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %g : tensor<8xf32>
}

// BERT's form: x * 0.5 * (1 + erf(x / sqrt 2)).
// CHECK-LABEL: func.func @erf_div
// CHECK-NEXT: %0 = nn.gelu %arg0 : tensor<4x8xf32>
// CHECK-NEXT: return %0
func.func @erf_div(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %cr = nn.constant dense<1.41421354> : tensor<f32>
  %ch = nn.constant dense<0.5> : tensor<f32>
  %c1 = nn.constant dense<1.0> : tensor<f32>
  %u = nn.div %x, %cr : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = nn.erf %u : tensor<4x8xf32>
  %e1 = nn.add %e, %c1 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %hx = nn.mul %x, %ch : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %g = nn.mul %hx, %e1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

// x * 0.7071..., the half as a division by 2 at the end, constants first, f16.
// CHECK-LABEL: func.func @erf_mul_div2_f16
// CHECK-NEXT: %0 = nn.gelu %arg0 : tensor<8xf16>
// CHECK-NEXT: return %0
func.func @erf_mul_div2_f16(%x: tensor<8xf16>) -> tensor<8xf16> {
  %cr = nn.constant dense<0.7071067811865476> : tensor<f16>
  %c2 = nn.constant dense<2.0> : tensor<f16>
  %c1 = nn.constant dense<1.0> : tensor<f16>
  %u = nn.mul %cr, %x : (tensor<f16>, tensor<8xf16>) -> tensor<8xf16>
  %e = nn.erf %u : tensor<8xf16>
  %e1 = nn.add %c1, %e : (tensor<f16>, tensor<8xf16>) -> tensor<8xf16>
  %xe = nn.mul %e1, %x : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
  %g = nn.div %xe, %c2 : (tensor<8xf16>, tensor<f16>) -> tensor<8xf16>
  return %g : tensor<8xf16>
}

// x * (0.5 * (1 + erf)), the 1/sqrt 2 scale as a splat.
// CHECK-LABEL: func.func @erf_half_inside
// CHECK-NEXT: %0 = nn.gelu %arg0 : tensor<4xf32>
// CHECK-NEXT: return %0
func.func @erf_half_inside(%x: tensor<4xf32>) -> tensor<4xf32> {
  %cr = nn.constant dense<0.707106769> : tensor<4xf32>
  %ch = nn.constant dense<0.5> : tensor<f32>
  %c1 = nn.constant dense<1.0> : tensor<f32>
  %u = nn.mul %x, %cr : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = nn.erf %u : tensor<4xf32>
  %e1 = nn.add %e, %c1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %he = nn.mul %e1, %ch : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %g = nn.mul %he, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// Two chains in one function, each its own gelu; the constants they share
// go once nothing reads them.
// CHECK-LABEL: func.func @two_chains
// CHECK-NEXT: %0 = nn.gelu %arg0 : tensor<4xf32>
// CHECK-NEXT: %1 = nn.gelu %arg1 : tensor<4xf32>
// CHECK-NEXT: return %0, %1
func.func @two_chains(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %cr = nn.constant dense<0.707106769> : tensor<f32>
  %ch = nn.constant dense<0.5> : tensor<f32>
  %c1 = nn.constant dense<1.0> : tensor<f32>
  %u = nn.mul %x, %cr : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = nn.erf %u : tensor<4xf32>
  %e1 = nn.add %e, %c1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %hx = nn.mul %x, %ch : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %g = nn.mul %hx, %e1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v = nn.mul %y, %cr : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %f = nn.erf %v : tensor<4xf32>
  %f1 = nn.add %f, %c1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %hy = nn.mul %y, %ch : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %h = nn.mul %hy, %f1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %g, %h : tensor<4xf32>, tensor<4xf32>
}

// ---- left as they are -------------------------------------------------------

// 0.045 is not 0.044715 in f32 (nor would it be in f16).
// CHECK-LABEL: func.func @wrong_constant
// CHECK-NOT: nn.gelu
// CHECK: nn.tanh
// CHECK: return
func.func @wrong_constant(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c3 = nn.constant dense<3.0> : tensor<f32>
  %ck = nn.constant dense<0.045> : tensor<f32>
  %cs = nn.constant dense<0.7978845608> : tensor<f32>
  %ch = nn.constant dense<0.5> : tensor<f32>
  %c1 = nn.constant dense<1.0> : tensor<f32>
  %x3 = nn.pow %x, %c3 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %x3s = nn.mul %x3, %ck : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %in = nn.add %x, %x3s : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %in2 = nn.mul %in, %cs : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %t = nn.tanh %in2 : tensor<8xf32>
  %t1 = nn.add %t, %c1 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %hx = nn.mul %x, %ch : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %g = nn.mul %hx, %t1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %g : tensor<8xf32>
}

// 0.7 for 1/sqrt 2 in f16: more than an f16 ulp away. A splat with two
// different values is no scalar either.
// CHECK-LABEL: func.func @wrong_constants_f16
// CHECK-NOT: nn.gelu
// CHECK: return
func.func @wrong_constants_f16(%x: tensor<2xf16>) -> (tensor<2xf16>, tensor<2xf16>) {
  %bad = nn.constant dense<0.7> : tensor<f16>
  %mixed = nn.constant dense<[0.5, 0.25]> : tensor<2xf16>
  %cr = nn.constant dense<0.7071067811865476> : tensor<f16>
  %ch = nn.constant dense<0.5> : tensor<f16>
  %c1 = nn.constant dense<1.0> : tensor<f16>
  %u = nn.mul %x, %bad : (tensor<2xf16>, tensor<f16>) -> tensor<2xf16>
  %e = nn.erf %u : tensor<2xf16>
  %e1 = nn.add %e, %c1 : (tensor<2xf16>, tensor<f16>) -> tensor<2xf16>
  %hx = nn.mul %x, %ch : (tensor<2xf16>, tensor<f16>) -> tensor<2xf16>
  %g = nn.mul %hx, %e1 : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
  %v = nn.mul %x, %cr : (tensor<2xf16>, tensor<f16>) -> tensor<2xf16>
  %f = nn.erf %v : tensor<2xf16>
  %f1 = nn.add %f, %c1 : (tensor<2xf16>, tensor<f16>) -> tensor<2xf16>
  %mx = nn.mul %x, %mixed : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
  %h = nn.mul %mx, %f1 : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
  return %g, %h : tensor<2xf16>, tensor<2xf16>
}

// tanh's result is also returned: fusing would have to keep it, so no.
// CHECK-LABEL: func.func @intermediate_with_another_user
// CHECK-NOT: nn.gelu
// CHECK: nn.tanh
// CHECK: return
func.func @intermediate_with_another_user(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c3 = nn.constant dense<3.0> : tensor<f32>
  %ck = nn.constant dense<0.044715> : tensor<f32>
  %cs = nn.constant dense<0.7978845608> : tensor<f32>
  %ch = nn.constant dense<0.5> : tensor<f32>
  %c1 = nn.constant dense<1.0> : tensor<f32>
  %x3 = nn.pow %x, %c3 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %x3s = nn.mul %x3, %ck : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %in = nn.add %x, %x3s : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %in2 = nn.mul %in, %cs : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %t = nn.tanh %in2 : tensor<8xf32>
  %t1 = nn.add %t, %c1 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %hx = nn.mul %x, %ch : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %g = nn.mul %hx, %t1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %g, %t : tensor<8xf32>, tensor<8xf32>
}

// The product's x is not the x inside erf; nor is the cube's third factor.
// CHECK-LABEL: func.func @mismatched_x
// CHECK-NOT: nn.gelu
// CHECK: return
func.func @mismatched_x(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %cr = nn.constant dense<0.707106769> : tensor<f32>
  %ck = nn.constant dense<0.044715> : tensor<f32>
  %cs = nn.constant dense<0.7978845608> : tensor<f32>
  %ch = nn.constant dense<0.5> : tensor<f32>
  %c1 = nn.constant dense<1.0> : tensor<f32>
  %u = nn.mul %x, %cr : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = nn.erf %u : tensor<4xf32>
  %e1 = nn.add %e, %c1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %hy = nn.mul %y, %ch : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %g = nn.mul %hy, %e1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %xx = nn.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x3 = nn.mul %xx, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x3s = nn.mul %x3, %ck : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %in = nn.add %x, %x3s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %in2 = nn.mul %in, %cs : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %t = nn.tanh %in2 : tensor<4xf32>
  %t1 = nn.add %t, %c1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %hx = nn.mul %x, %ch : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %h = nn.mul %hx, %t1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %g, %h : tensor<4xf32>, tensor<4xf32>
}

// A constant that broadcasts x to a larger shape: nn.gelu of x would have
// x's shape, not the chain's, so no.
// CHECK-LABEL: func.func @broadcasting_constant
// CHECK-NOT: nn.gelu
// CHECK: return
func.func @broadcasting_constant(%x: tensor<4xf32>) -> tensor<2x4xf32> {
  %cr = nn.constant dense<0.707106769> : tensor<f32>
  %ch = nn.constant dense<0.5> : tensor<2x4xf32>
  %c1 = nn.constant dense<1.0> : tensor<f32>
  %u = nn.mul %x, %cr : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = nn.erf %u : tensor<4xf32>
  %e1 = nn.add %e, %c1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %hx = nn.mul %x, %ch : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = nn.mul %hx, %e1 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}
