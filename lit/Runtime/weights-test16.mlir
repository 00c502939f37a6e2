// Parameters (`ipu.weight`) are loaded once with the program, straight into
// the operand buffers of the ops that read them, in the layout each reads
// (the matmul's weight blocks, replicated on every tile of their column of
// the plan; the bias row on the tiles that add it): the program exchanges
// only the activations. The f8 weight of this f16 x f8 matmul (no AMP mode
// reads f16 x f8) is widened to f16 by the host, once, when it loads the
// program: the tiles never cast it. The same model without `ipu.weight`
// moves the weights every run.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>/dev/null | FileCheck %s
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCHANGE
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | FileCheck %s --check-prefix=MACHINE
// CHECK: tiles=16 cycles={{[0-9]+}}
// CHECK-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// CHECK-NEXT: hardwareTest=PASS
// EXCHANGE: exchange.host_input %arg0 {buffer = @input0
// EXCHANGE: exchange.host_input %arg1 {load, placements = [{buffer = @s1.operand1, rects = [{count = 8 : i64, hi = array<i64: 64, 16>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 16>, tiles = "0, 8"}]}], tile_type = tensor<64x128xf16>} : tensor<64x128xf8E4M3FN>
// EXCHANGE: exchange.host_input %arg2 {load, placements = [{buffer = @s2.operand1
// Only the activations move: x's rows (the plan does not split K).
// EXCHANGE-COUNT-1: exchange.phase
// EXCHANGE-NOT: exchange.phase
// EXCHANGE-NOT: kernel = "cast"
// MACHINE: machine.host_stream "w1" {direction = "load", element = "f16", host_element = "f8E4M3FN"
// MACHINE: machine.host_stream "b1" {direction = "load", element = "f16", layout
func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN> {ipu.name = "w1", ipu.weight}, %b1: tensor<128xf16> {ipu.name = "b1", ipu.weight}) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}
