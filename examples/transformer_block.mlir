// A pre-norm transformer encoder block at BERT-base size: sequence 256,
// batch 1, d_model 768, 12 heads of 64, FFN 3072, with an f32 residual
// stream. The Q, K, V, output and FFN projections are FP8 GEMMs (f8E4M3FN
// weights; activations cast to f8E4M3FN with a power-of-two scale; the AMP's
// FP8 mode accumulates into f16); the attention scores and the context are
// f16 GEMMs; the softmax runs in f32 over masked scores. The weights, biases
// and layer-norm parameters are parameters (`ipu.weight`): loaded once with
// the program, straight into the buffers of the ops that read them; each run
// streams x (and the mask, zero unless given) in and y out. `ipu.random`
// gives the range of the random values a run uses when none are given:
// weights and biases uniform in +-1/sqrt(fan_in), as PyTorch's Linear
// initialises them, layer-norm gains near one and offsets near zero.
func.func @main(
    %x: tensor<256x768xf32> {ipu.name = "x"},
    %ln1_g: tensor<768xf32> {ipu.name = "ln1_g", ipu.weight, ipu.random = [0.9, 1.1]},
    %ln1_b: tensor<768xf32> {ipu.name = "ln1_b", ipu.weight, ipu.random = [-0.1, 0.1]},
    %mask: tensor<256xf32> {ipu.name = "mask", ipu.default = dense<0.0> : tensor<256xf32>},
    %w_q: tensor<768x768xf8E4M3FN> {ipu.name = "w_q", ipu.weight, ipu.random = [-0.036, 0.036]},
    %b_q: tensor<768xf16> {ipu.name = "b_q", ipu.weight, ipu.random = [-0.036, 0.036]},
    %w_k: tensor<768x768xf8E4M3FN> {ipu.name = "w_k", ipu.weight, ipu.random = [-0.036, 0.036]},
    %b_k: tensor<768xf16> {ipu.name = "b_k", ipu.weight, ipu.random = [-0.036, 0.036]},
    %w_v: tensor<768x768xf8E4M3FN> {ipu.name = "w_v", ipu.weight, ipu.random = [-0.036, 0.036]},
    %b_v: tensor<768xf16> {ipu.name = "b_v", ipu.weight, ipu.random = [-0.036, 0.036]},
    %w_o: tensor<768x768xf8E4M3FN> {ipu.name = "w_o", ipu.weight, ipu.random = [-0.036, 0.036]},
    %b_o: tensor<768xf16> {ipu.name = "b_o", ipu.weight, ipu.random = [-0.036, 0.036]},
    %ln2_g: tensor<768xf32> {ipu.name = "ln2_g", ipu.weight, ipu.random = [0.9, 1.1]},
    %ln2_b: tensor<768xf32> {ipu.name = "ln2_b", ipu.weight, ipu.random = [-0.1, 0.1]},
    %w_1: tensor<768x3072xf8E4M3FN> {ipu.name = "w_1", ipu.weight, ipu.random = [-0.036, 0.036]},
    %b_1: tensor<3072xf16> {ipu.name = "b_1", ipu.weight, ipu.random = [-0.036, 0.036]},
    %w_2: tensor<3072x768xf8E4M3FN> {ipu.name = "w_2", ipu.weight, ipu.random = [-0.018, 0.018]},
    %b_2: tensor<768xf16> {ipu.name = "b_2", ipu.weight, ipu.random = [-0.018, 0.018]})
    -> (tensor<256x768xf32> {ipu.name = "y"}) {
  // Attention.
  %h = nn.layer_norm %x, %ln1_g, %ln1_b {axis = 1, epsilon = 1.0e-05 : f32} : (tensor<256x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<256x768xf32>
  %h8 = nn.cast %h {saturate, scale = -4} : tensor<256x768xf32> -> tensor<256x768xf8E4M3FN>
  %q0 = nn.matmul %h8, %w_q : (tensor<256x768xf8E4M3FN>, tensor<768x768xf8E4M3FN>) -> tensor<256x768xf16>
  %q = nn.add %q0, %b_q : (tensor<256x768xf16>, tensor<768xf16>) -> tensor<256x768xf16>
  %k0 = nn.matmul %h8, %w_k : (tensor<256x768xf8E4M3FN>, tensor<768x768xf8E4M3FN>) -> tensor<256x768xf16>
  %k = nn.add %k0, %b_k : (tensor<256x768xf16>, tensor<768xf16>) -> tensor<256x768xf16>
  %v0 = nn.matmul %h8, %w_v : (tensor<256x768xf8E4M3FN>, tensor<768x768xf8E4M3FN>) -> tensor<256x768xf16>
  %v = nn.add %v0, %b_v : (tensor<256x768xf16>, tensor<768xf16>) -> tensor<256x768xf16>
  %q3 = nn.reshape %q : tensor<256x768xf16> -> tensor<256x12x64xf16>
  %k3 = nn.reshape %k : tensor<256x768xf16> -> tensor<256x12x64xf16>
  %v3 = nn.reshape %v : tensor<256x768xf16> -> tensor<256x12x64xf16>
  %qh = nn.transpose %q3 {permutation = array<i64: 1, 0, 2>} : tensor<256x12x64xf16> -> tensor<12x256x64xf16>
  %kt = nn.transpose %k3 {permutation = array<i64: 1, 2, 0>} : tensor<256x12x64xf16> -> tensor<12x64x256xf16>
  %vh = nn.transpose %v3 {permutation = array<i64: 1, 0, 2>} : tensor<256x12x64xf16> -> tensor<12x256x64xf16>
  %s = nn.matmul %qh, %kt : (tensor<12x256x64xf16>, tensor<12x64x256xf16>) -> tensor<12x256x256xf16>
  %inv_sqrt_d = nn.constant dense<0.125> : tensor<f16>
  %ss = nn.mul %s, %inv_sqrt_d : (tensor<12x256x256xf16>, tensor<f16>) -> tensor<12x256x256xf16>
  // Scores in f32 for the softmax, with the additive key mask (0 keeps a
  // key, a large negative value drops it) broadcast over heads and queries.
  %s32 = nn.cast %ss : tensor<12x256x256xf16> -> tensor<12x256x256xf32>
  %sm = nn.add %s32, %mask : (tensor<12x256x256xf32>, tensor<256xf32>) -> tensor<12x256x256xf32>
  %p32 = nn.softmax %sm {axis = 2} : tensor<12x256x256xf32>
  %p = nn.cast %p32 : tensor<12x256x256xf32> -> tensor<12x256x256xf16>
  %ctx = nn.matmul %p, %vh : (tensor<12x256x256xf16>, tensor<12x256x64xf16>) -> tensor<12x256x64xf16>
  %ct = nn.transpose %ctx {permutation = array<i64: 1, 0, 2>} : tensor<12x256x64xf16> -> tensor<256x12x64xf16>
  %c2 = nn.reshape %ct : tensor<256x12x64xf16> -> tensor<256x768xf16>
  %c8 = nn.cast %c2 {saturate, scale = -4} : tensor<256x768xf16> -> tensor<256x768xf8E4M3FN>
  %o = nn.matmul %c8, %w_o : (tensor<256x768xf8E4M3FN>, tensor<768x768xf8E4M3FN>) -> tensor<256x768xf16>
  %ob = nn.add %o, %b_o : (tensor<256x768xf16>, tensor<768xf16>) -> tensor<256x768xf16>
  %o32 = nn.cast %ob : tensor<256x768xf16> -> tensor<256x768xf32>
  %x1 = nn.add %x, %o32 : (tensor<256x768xf32>, tensor<256x768xf32>) -> tensor<256x768xf32>
  // Feed-forward.
  %h2 = nn.layer_norm %x1, %ln2_g, %ln2_b {axis = 1, epsilon = 1.0e-05 : f32} : (tensor<256x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<256x768xf32>
  %h28 = nn.cast %h2 {saturate, scale = -4} : tensor<256x768xf32> -> tensor<256x768xf8E4M3FN>
  %f1 = nn.matmul %h28, %w_1 : (tensor<256x768xf8E4M3FN>, tensor<768x3072xf8E4M3FN>) -> tensor<256x3072xf16>
  %f1b = nn.add %f1, %b_1 : (tensor<256x3072xf16>, tensor<3072xf16>) -> tensor<256x3072xf16>
  // GELU in the tanh form, decomposed as GPT-2-style exports emit it:
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  %c3 = nn.constant dense<3.0> : tensor<f16>
  %c0044 = nn.constant dense<0.044715> : tensor<f16>
  %csq = nn.constant dense<0.7978845608> : tensor<f16>
  %chalf = nn.constant dense<0.5> : tensor<f16>
  %cone = nn.constant dense<1.0> : tensor<f16>
  %x3 = nn.pow %f1b, %c3 : (tensor<256x3072xf16>, tensor<f16>) -> tensor<256x3072xf16>
  %x3s = nn.mul %x3, %c0044 : (tensor<256x3072xf16>, tensor<f16>) -> tensor<256x3072xf16>
  %inner = nn.add %f1b, %x3s : (tensor<256x3072xf16>, tensor<256x3072xf16>) -> tensor<256x3072xf16>
  %inner2 = nn.mul %inner, %csq : (tensor<256x3072xf16>, tensor<f16>) -> tensor<256x3072xf16>
  %th = nn.tanh %inner2 : tensor<256x3072xf16>
  %th1 = nn.add %th, %cone : (tensor<256x3072xf16>, tensor<f16>) -> tensor<256x3072xf16>
  %hx = nn.mul %f1b, %chalf : (tensor<256x3072xf16>, tensor<f16>) -> tensor<256x3072xf16>
  %g = nn.mul %hx, %th1 : (tensor<256x3072xf16>, tensor<256x3072xf16>) -> tensor<256x3072xf16>
  %g8 = nn.cast %g {saturate, scale = -2} : tensor<256x3072xf16> -> tensor<256x3072xf8E4M3FN>
  %f2 = nn.matmul %g8, %w_2 : (tensor<256x3072xf8E4M3FN>, tensor<3072x768xf8E4M3FN>) -> tensor<256x768xf16>
  %f2b = nn.add %f2, %b_2 : (tensor<256x768xf16>, tensor<768xf16>) -> tensor<256x768xf16>
  %f32 = nn.cast %f2b : tensor<256x768xf16> -> tensor<256x768xf32>
  %y = nn.add %x1, %f32 : (tensor<256x768xf32>, tensor<256x768xf32>) -> tensor<256x768xf32>
  return %y : tensor<256x768xf32>
}
