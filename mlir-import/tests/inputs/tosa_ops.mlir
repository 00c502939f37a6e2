// One of each TOSA op the importer maps.
func.func @ops(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %i: tensor<2x3xi8>, %h: tensor<1x2x3xf16>, %g: tensor<1x3x2xf16>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x1xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<1x2x2xf32>) {
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %sub = tosa.sub %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %mul = tosa.mul %sub, %b, %shift : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<1xi8>) -> tensor<2x3xf32>
  %rec = tosa.reciprocal %mul : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %exp = tosa.exp %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %tanh = tosa.tanh %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %erf = tosa.erf %b : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sum = tosa.reduce_sum %a {axis = 0 : i32} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  %max = tosa.reduce_max %a {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %t = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %cl = tosa.clamp %a {min_val = -1.0 : f32, max_val = 1.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sg = tosa.sigmoid %cl : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf16>} : () -> tensor<1xf16>
  %im = tosa.matmul %h, %g, %zp, %zp : (tensor<1x2x3xf16>, tensor<1x3x2xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x2x2xf32>
  %imul = tosa.mul %i, %i, %shift : (tensor<2x3xi8>, tensor<2x3xi8>, tensor<1xi8>) -> tensor<2x3xi32>
  return %exp, %tanh, %erf, %rec, %sum, %max, %t, %sg, %cl, %imul, %im : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x1xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<1x2x2xf32>
}

// tosa.cast: floats to integers round half to even and saturate; integers
// to i1 compare with zero.
func.func @cast(%a: tensor<6xf32>, %i: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi8>, tensor<6xi1>, tensor<6xi1>, tensor<6xf16>) {
  %0 = tosa.cast %a : (tensor<6xf32>) -> tensor<6xi32>
  %1 = tosa.cast %a : (tensor<6xf32>) -> tensor<6xi8>
  %2 = tosa.cast %a : (tensor<6xf32>) -> tensor<6xi1>
  %3 = tosa.cast %i : (tensor<6xi32>) -> tensor<6xi1>
  %4 = tosa.cast %a : (tensor<6xf32>) -> tensor<6xf16>
  return %0, %1, %2, %3, %4 : tensor<6xi32>, tensor<6xi8>, tensor<6xi1>, tensor<6xi1>, tensor<6xf16>
}
