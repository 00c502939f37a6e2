// A transformer MLP block at BERT-base size: 128 tokens x 768 -> 3072 (f8
// weights, gelu) -> 768 (f16 weights), f16 activations. Weights are
// constants generated from a fixed pattern so the example is self-contained.
func.func @main(%x: tensor<128x768xf16> {ipu.name = "x"}, %w1: tensor<768x3072xf8E4M3FN> {ipu.name = "w1"}, %b1: tensor<3072xf16> {ipu.name = "b1"}, %w2: tensor<3072x768xf16> {ipu.name = "w2"}, %b2: tensor<768xf16> {ipu.name = "b2"}) -> (tensor<128x768xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<128x768xf16>, tensor<768x3072xf8E4M3FN>) -> tensor<128x3072xf16>
  %hb = nn.add %h, %b1 : (tensor<128x3072xf16>, tensor<3072xf16>) -> tensor<128x3072xf16>
  %g = nn.gelu %hb : tensor<128x3072xf16>
  %o = nn.matmul %g, %w2 : (tensor<128x3072xf16>, tensor<3072x768xf16>) -> tensor<128x768xf16>
  %y = nn.add %o, %b2 : (tensor<128x768xf16>, tensor<768xf16>) -> tensor<128x768xf16>
  return %y : tensor<128x768xf16>
}
