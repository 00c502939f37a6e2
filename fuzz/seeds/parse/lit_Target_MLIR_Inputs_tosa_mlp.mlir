// A two-layer MLP in TOSA: x[2x4] -> fc1 (4->8) -> relu -> fc2 (8->3) -> sigmoid.
// tosa.matmul is batched (3-D), so x is reshaped to 1x2x4 and back.
func.func @main(%x: tensor<2x4xf32> loc("x")) -> tensor<2x3xf32> {
  %s3 = tosa.const_shape {values = dense<[1, 2, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %w1 = "tosa.const"() {values = dense<[[[0.5, -0.25, 1.0, 0.0, 0.75, -1.0, 0.125, 2.0],
                                         [1.5, 0.5, -0.5, 0.25, 0.0, 1.0, -0.75, 0.5],
                                         [-1.0, 0.25, 0.5, 1.0, 0.5, 0.0, 0.25, -0.5],
                                         [0.0, 1.0, 0.25, -0.5, 1.25, 0.5, 1.0, 0.0]]]> : tensor<1x4x8xf32>} : () -> tensor<1x4x8xf32>
  %b1 = "tosa.const"() {values = dense<[[[0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8]]]> : tensor<1x1x8xf32>} : () -> tensor<1x1x8xf32>
  %w2 = "tosa.const"() {values = dense<[[[1.0, 0.0, -1.0], [0.5, 0.5, 0.5], [-0.25, 1.0, 0.0], [0.0, -0.5, 1.0],
                                         [1.0, 1.0, 1.0], [-1.0, 0.25, 0.5], [0.5, -0.25, 0.75], [0.125, 0.0, -0.125]]]> : tensor<1x8x3xf32>} : () -> tensor<1x8x3xf32>
  %b2 = "tosa.const"() {values = dense<0.25> : tensor<1x1x3xf32>} : () -> tensor<1x1x3xf32>
  %x3 = tosa.reshape %x, %s3 : (tensor<2x4xf32>, !tosa.shape<3>) -> tensor<1x2x4xf32> loc("mlp.py":3:7)
  %h = tosa.matmul %x3, %w1, %zp, %zp : (tensor<1x2x4xf32>, tensor<1x4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x8xf32> loc("fc1"("mlp.py":4:9))
  %hb = tosa.add %h, %b1 : (tensor<1x2x8xf32>, tensor<1x1x8xf32>) -> tensor<1x2x8xf32> loc("fc1.bias"("mlp.py":4:9))
  %r = tosa.clamp %hb {min_val = 0.0 : f32, max_val = 3.40282347E+38 : f32} : (tensor<1x2x8xf32>) -> tensor<1x2x8xf32> loc(fused["mlp.py":5:5, "relu"])
  %o = tosa.matmul %r, %w2, %zp, %zp : (tensor<1x2x8xf32>, tensor<1x8x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x3xf32> loc("fc2"("mlp.py":6:9))
  %ob = tosa.add %o, %b2 : (tensor<1x2x3xf32>, tensor<1x1x3xf32>) -> tensor<1x2x3xf32>
  %y3 = tosa.sigmoid %ob : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %y = tosa.reshape %y3, %s2 : (tensor<1x2x3xf32>, !tosa.shape<2>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
