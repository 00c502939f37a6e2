// FP8 weights stay FP8 in tile memory: convert-nn-to-tile does a cast to
// FP8 of a constant that only matmuls read (the form `ipu-translate
// --weights-precision f8E4M3FN` gives a weight) at compile time, by the
// reference's rounding: the tile.constant holds the codes, one byte an
// element, and the cast's scale; the matmul widens the blocks it reads on
// its tiles at that scale. No cast runs per run. The result round-trips
// through the printer.
// RUN: ipu-opt --split-input-file --target test16 --convert-nn-to-tile %s | FileCheck %s
// RUN: ipu-opt --split-input-file --target test16 --convert-nn-to-tile %s | ipu-opt --split-input-file | ipu-opt --split-input-file --mlir-print-op-generic | ipu-opt --split-input-file > /dev/null

// 0.3 x 2^8 = 76.8 rounds to the code of 80 (1.25 x 2^6): the constant
// holds 80 at scale -8 (0.3125), an f8E4M3FN splat.
// CHECK-LABEL: func.func @weight
// CHECK: %[[W:.*]] = tile.constant {mapping = {{.*}}, scale = -8 : i64} dense<80.0> : tensor<64x128xf8E4M3FN>
// CHECK-NOT: tile.map
// CHECK: tile.matmul %{{.*}}, %[[W]] {{.*}} : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
// CHECK-NOT: xf32>
func.func @weight(%x: tensor<8x64xf16>) -> tensor<8x128xf16> {
  %w = nn.constant dense<0.3> : tensor<64x128xf32>
  %w8 = nn.cast %w {saturate, scale = -8} : tensor<64x128xf32> -> tensor<64x128xf8E4M3FN>
  %h = nn.matmul %x, %w8 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  return %h : tensor<8x128xf16>
}

// -----

// A constant stored as a resource blob: its codes (0, 4, 8, ... 124 at
// scale -2: 0x00, 0x48, 0x50, ...) go to a blob of their own, one byte an
// element, and the f32 blob, read by nothing else, goes.
// CHECK-LABEL: func.func @resource
// CHECK: tile.constant {mapping = {{.*}}, scale = -2 : i64} dense_resource<w_f8> : tensor<2x16xf8E4M3FN>
// CHECK-NOT: dense_resource<w>
// CHECK: builtin: {
// CHECK-NEXT: w_f8: "0x4000000000485054585A5C5E60616263646566676868696A6A6A6B6C6C6C6D6E6E6E6F70"
// CHECK-NEXT: }
func.func @resource(%x: tensor<8x2xf16>) -> tensor<8x16xf16> {
  %w = nn.constant dense_resource<w> : tensor<2x16xf32>
  %w8 = nn.cast %w {saturate, scale = -2} : tensor<2x16xf32> -> tensor<2x16xf8E4M3FN>
  %h = nn.matmul %x, %w8 : (tensor<8x2xf16>, tensor<2x16xf8E4M3FN>) -> tensor<8x16xf16>
  return %h : tensor<8x16xf16>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F841"
    }
  }
#-}

// -----

// A cast another op reads too stays a cast on the tiles.
// CHECK-LABEL: func.func @shared
// CHECK: tile.constant {{.*}} : tensor<64x128xf32>
// CHECK: tile.map {{.*}}fn = #tile.fn<cast>{{.*}}scale = -8 : i64}
func.func @shared(%x: tensor<8x64xf16>) -> (tensor<8x128xf16>, tensor<64x128xf8E4M3FN>) {
  %w = nn.constant dense<0.3> : tensor<64x128xf32>
  %w8 = nn.cast %w {saturate, scale = -8} : tensor<64x128xf32> -> tensor<64x128xf8E4M3FN>
  %h = nn.matmul %x, %w8 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  return %h, %w8 : tensor<8x128xf16>, tensor<64x128xf8E4M3FN>
}

// -----

// A layer called per layer (`--outline-layers`) whose weight parameter it
// only casts to FP8 for its matmuls, each call passing a constant: the
// parameter holds the codes (f8E4M3FN, `ipu.fp8_scale`, its host input
// the scale), each call passes its constant's codes at that scale.
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: %arg1: tensor<64x64xf8E4M3FN> {ipu.fp8_scale = -8 : i64, ipu.weight}
// CHECK: tile.host_input %arg1 {mapping = {{.*}}, resident, scale = -8 : i64} : tensor<64x64xf8E4M3FN>{{$}}
// CHECK-NOT: tile.map
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[A:.*]] = tile.constant {mapping = {{.*}}, scale = -8 : i64} dense<80.0> : tensor<64x64xf8E4M3FN>
// CHECK-DAG: %[[B:.*]] = tile.constant {mapping = {{.*}}, scale = -8 : i64} dense<-192.0> : tensor<64x64xf8E4M3FN>
// CHECK: call @layer(%{{.*}}, %[[A]])
// CHECK: call @layer(%{{.*}}, %[[B]])
func.func private @layer(%x: tensor<8x64xf16>, %w: tensor<64x64xf32> {ipu.weight}) -> tensor<8x64xf16> {
  %w8 = nn.cast %w {saturate, scale = -8} : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>
  %h = nn.matmul %x, %w8 : (tensor<8x64xf16>, tensor<64x64xf8E4M3FN>) -> tensor<8x64xf16>
  return %h : tensor<8x64xf16>
}
func.func @main(%x: tensor<8x64xf16>) -> tensor<8x64xf16> {
  %a = nn.constant dense<0.3> : tensor<64x64xf32>
  %b = nn.constant dense<-0.75> : tensor<64x64xf32>
  %y = func.call @layer(%x, %a) : (tensor<8x64xf16>, tensor<64x64xf32>) -> tensor<8x64xf16>
  %z = func.call @layer(%y, %b) : (tensor<8x64xf16>, tensor<64x64xf32>) -> tensor<8x64xf16>
  return %z : tensor<8x64xf16>
}
