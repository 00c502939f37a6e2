// Parameters are never widened per run: convert-nn-to-tile folds an exact,
// scale-free widening cast of a parameter that it alone reads into the
// parameter's tile.host_input (the host converts the elements once, when it
// loads the program), and legalization gives an f16-mode matmul such a cast
// of its f8 parameter operand. The result round-trips through the printer.
// RUN: ipu-opt --split-input-file --target test16 --convert-nn-to-tile %s | FileCheck %s
// RUN: ipu-opt --split-input-file --target test16 --convert-nn-to-tile %s | ipu-opt --split-input-file | ipu-opt --split-input-file --mlir-print-op-generic | ipu-opt --split-input-file > /dev/null

// An f8 parameter the f16-mode matmul reads is widened when it is loaded:
// its host input holds f16 on the tiles, and the matmul reads f16 x f16
// (no widen kernel: its kernel is the plain f16 GEMM).
// CHECK-LABEL: func.func @weight
// CHECK: %1 = tile.host_input %arg1 {mapping = {grid = array<i64: 1, 8>, tiles = array<i64: 0, 1>}, resident} : tensor<64x128xf8E4M3FN> -> tensor<64x128xf16>
// CHECK-NEXT: %2 = tile.matmul %0, %1 {{{.*}}kernel = "gemm_f16_interleaved_k64_c16_r0_r1_m4"{{.*}}} : (tensor<8x64xf16>, tensor<64x128xf16>) -> tensor<8x128xf16>
// CHECK-NOT: nn.cast
// CHECK-NOT: tile.map
func.func @weight(%x: tensor<8x64xf16>, %w: tensor<64x128xf8E4M3FN> {ipu.weight}) -> tensor<8x128xf16> {
  %h = nn.matmul %x, %w : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  return %h : tensor<8x128xf16>
}

// -----

// An f8 activation arrives each run as it is: the matmul widens it on the
// tiles.
// CHECK-LABEL: func.func @activation
// CHECK: %1 = tile.host_input %arg1 {mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : tensor<64x128xf8E4M3FN>
// CHECK-NEXT: tile.matmul %0, %1 {{.*}} : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
func.func @activation(%x: tensor<8x64xf16>, %w: tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16> {
  %h = nn.matmul %x, %w : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  return %h : tensor<8x128xf16>
}

// -----

// A parameter whose every reader reads it widened is widened once, at load,
// for all of them.
// CHECK-LABEL: func.func @two_readers
// CHECK: %1 = tile.host_input %arg1 {{{.*}}resident} : tensor<64x128xf8E4M3FN> -> tensor<64x128xf16>
// CHECK-COUNT-2: tile.matmul %0, %1 {{.*}} : (tensor<8x64xf16>, tensor<64x128xf16>) -> tensor<8x128xf16>
func.func @two_readers(%x: tensor<8x64xf16>, %w: tensor<64x128xf8E4M3FN> {ipu.weight}) -> (tensor<8x128xf16>, tensor<8x128xf16>) {
  %h = nn.matmul %x, %w : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %g = nn.matmul %x, %w : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  return %h, %g : tensor<8x128xf16>, tensor<8x128xf16>
}

// -----

// A parameter another op reads as it is is loaded as it is: the matmul
// widens it on the tiles.
// CHECK-LABEL: func.func @other_reader
// CHECK: %1 = tile.host_input %arg1 {{{.*}}resident} : tensor<64x128xf8E4M3FN>{{$}}
// CHECK: tile.matmul %0, %1 {{.*}} : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
func.func @other_reader(%x: tensor<8x64xf16>, %w: tensor<64x128xf8E4M3FN> {ipu.weight}) -> (tensor<8x128xf16>, tensor<64x128xf32>) {
  %h = nn.matmul %x, %w : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %c = nn.cast %w : tensor<64x128xf8E4M3FN> -> tensor<64x128xf32>
  return %h, %c : tensor<8x128xf16>, tensor<64x128xf32>
}

// -----

// The model's own exact cast of a parameter it alone reads is folded into
// the load too (f8E5M2 -> f32 for an f32 matmul).
// CHECK-LABEL: func.func @cast
// CHECK: %1 = tile.host_input %arg1 {{{.*}}resident} : tensor<64x128xf8E5M2> -> tensor<64x128xf32>
// CHECK-NEXT: tile.matmul %0, %1 {{.*}} : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32>
func.func @cast(%x: tensor<8x64xf32>, %w: tensor<64x128xf8E5M2> {ipu.weight}) -> tensor<8x128xf32> {
  %wf = nn.cast %w : tensor<64x128xf8E5M2> -> tensor<64x128xf32>
  %h = nn.matmul %x, %wf : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32>
  return %h : tensor<8x128xf32>
}

// -----

// A cast with a scale (or any cast that is no exact widening) stays on the
// tiles.
// CHECK-LABEL: func.func @scaled_cast
// CHECK: %1 = tile.host_input %arg1 {{{.*}}resident} : tensor<64x128xf16>{{$}}
// CHECK-NEXT: %2 = tile.map %1 {{{.*}}fn = #tile.fn<cast>{{.*}}scale = 2 : i64} : (tensor<64x128xf16>) -> tensor<64x128xf8E4M3FN>
func.func @scaled_cast(%x: tensor<8x64xf16>, %w: tensor<64x128xf16> {ipu.weight}) -> tensor<8x128xf16> {
  %w8 = nn.cast %w {scale = 2} : tensor<64x128xf16> -> tensor<64x128xf8E4M3FN>
  %h = nn.matmul %x, %w8 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  return %h : tensor<8x128xf16>
}

// -----

// An f8 constant the f16-mode matmul reads is converted at compile time.
// CHECK-LABEL: func.func @constant
// CHECK: %1 = tile.constant {{{.*}}} dense<0.5> : tensor<16x16xf16>
// CHECK-NEXT: tile.matmul %0, %1 {{.*}} : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf16>
func.func @constant(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %w = nn.constant dense<0.5> : tensor<16x16xf8E4M3FN>
  %h = nn.matmul %x, %w : (tensor<8x16xf16>, tensor<16x16xf8E4M3FN>) -> tensor<8x16xf16>
  return %h : tensor<8x16xf16>
}
