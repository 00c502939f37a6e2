// Further TOSA, linalg, tensor and arith ops, and a call.
func.func @helper(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = arith.addf %a, %a : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

func.func @more(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %v: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<1x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>) {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %max = tosa.maximum %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %min = tosa.minimum %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %neg = tosa.negate %a, %zp, %zp : (tensor<2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  %cat = tosa.concat %a, %b {axis = 0 : i32} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %st = tosa.const_shape {values = dense<[0, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %sz = tosa.const_shape {values = dense<[1, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %sl = tosa.slice %a, %st, %sz : (tensor<2x3xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x2xf32>
  %gt = tosa.greater %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %sel = tosa.select %gt, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %abs = tosa.abs %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %log = tosa.log %abs : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %rmin = tosa.reduce_min %a {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %bc = linalg.broadcast ins(%v : tensor<3xf32>) outs(%e : tensor<2x3xf32>) dimensions = [0]
  %flat = tensor.collapse_shape %bc [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %call = func.call @helper(%b) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %max, %min, %neg, %cat, %sl, %sel, %log, %rmin, %bc, %flat, %call : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<1x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>
}
