// A called layer whose parameter an elementwise op reads broadcast (a
// per-channel bias, as a ResNet block's convolutions have it once
// batch norm is folded): the exchange expands it from its blocks, which
// the parameter gets besides its readers' buffers (it was refused with
// "operand #1 has no tile mapping"). Each call loads its own bias and
// copies it into the frame's blocks, so both calls read one buffer.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt --target test16 --ipu-lower-to-exchange %s | FileCheck %s --check-prefix=EXCH
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock --check-ops | FileCheck %s

// EXCH: func.func private @blk
// EXCH: exchange.buffer {{.*}}sym_name = "input1.blocks"
// EXCH: exchange.host_input %arg1 {buffer = @input1.blocks, load
// CHECK: numericalTest=PASS
// CHECK: hardwareTest=PASS
// CHECK: checked 4 of 4 ops on the device's values
// CHECK: every checked op is within its tolerance

func.func private @blk(%x: tensor<1x64x8x8xf32> {ipu.name = "x"}, %b: tensor<64x1x1xf32> {ipu.name = "b", ipu.weight}) -> (tensor<1x64x8x8xf32> {ipu.name = "y"}) {
  %0 = nn.add %x, %b : (tensor<1x64x8x8xf32>, tensor<64x1x1xf32>) -> tensor<1x64x8x8xf32>
  %1 = nn.relu %0 : tensor<1x64x8x8xf32>
  return %1 : tensor<1x64x8x8xf32>
}
func.func @main(%x: tensor<1x64x8x8xf32> {ipu.name = "x"}) -> (tensor<1x64x8x8xf32> {ipu.name = "y"}) {
  %b0 = nn.constant dense<0.5> : tensor<64x1x1xf32>
  %a = call @blk(%x, %b0) : (tensor<1x64x8x8xf32>, tensor<64x1x1xf32>) -> tensor<1x64x8x8xf32>
  %b1 = nn.constant dense<-0.25> : tensor<64x1x1xf32>
  %c = call @blk(%a, %b1) : (tensor<1x64x8x8xf32>, tensor<64x1x1xf32>) -> tensor<1x64x8x8xf32>
  return %c : tensor<1x64x8x8xf32>
}
