// nn -> tile for a conv and a max pool (test16): the conv is an implicit
// GEMM. Its input is padded with zero constants (concat views), each of
// the nine kernel offsets is a stride-2 slice view, stacked per channel
// into the [C*K, O] operand (reshape and concat views) of one tile.matmul
// by the weights as [M, C*K]; K and N padded to the AMP's blocks with
// zeros and the result sliced back. The max pool is the elementwise max
// of its four offsets' slices. Nothing but the matmul and the maps computes.
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null

// CHECK: %0 = tile.host_input %arg0 {mapping = {grid = array<i64: 1, 2, 6, 1>, tiles = array<i64: 0, 1>}} : tensor<1x2x6x6xf32>
// CHECK-NEXT: %1 = tile.host_input %arg1 {mapping = {grid = array<i64: 4, 2, 2, 1>, tiles = array<i64: 0, 1>}} : tensor<4x2x3x3xf32>
// CHECK-NEXT: %2 = tile.constant {mapping = {grid = array<i64: 1, 2, 1, 6>, tiles = array<i64: 0, 1>}} dense<0.0> : tensor<1x2x1x6xf32>
// CHECK-NEXT: %3 = tile.view %2, %0 {axis = 2 : i64, kind = "concat", mapping = {grid = array<i64: 1, 2, 7, 1>, tiles = array<i64: 0, 1>}} : (tensor<1x2x1x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x2x7x6xf32>
// CHECK-NEXT: %4 = tile.constant {mapping = {grid = array<i64: 1, 2, 7, 1>, tiles = array<i64: 0, 1>}} dense<0.0> : tensor<1x2x7x1xf32>
// CHECK-NEXT: %5 = tile.view %4, %3 {axis = 3 : i64, kind = "concat", mapping = {grid = array<i64: 1, 2, 7, 1>, tiles = array<i64: 0, 1>}} : (tensor<1x2x7x1xf32>, tensor<1x2x7x6xf32>) -> tensor<1x2x7x7xf32>
// CHECK-NEXT: %6 = tile.view %5 {ends = array<i64: 1, 2, 5, 5>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %7 = tile.view %5 {ends = array<i64: 1, 2, 5, 6>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 0, 1>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %8 = tile.view %5 {ends = array<i64: 1, 2, 5, 7>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 0, 2>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %9 = tile.view %5 {ends = array<i64: 1, 2, 6, 5>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 1, 0>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %10 = tile.view %5 {ends = array<i64: 1, 2, 6, 6>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 1, 1>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %11 = tile.view %5 {ends = array<i64: 1, 2, 6, 7>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 1, 2>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %12 = tile.view %5 {ends = array<i64: 1, 2, 7, 5>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 2, 0>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %13 = tile.view %5 {ends = array<i64: 1, 2, 7, 6>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 2, 1>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %14 = tile.view %5 {ends = array<i64: 1, 2, 7, 7>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 2, 2>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %15 = tile.view %6 {kind = "reshape", mapping = {grid = array<i64: 1, 2, 1, 3>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x9xf32>
// CHECK-NEXT: %16 = tile.view %7 {kind = "reshape", mapping = {grid = array<i64: 1, 2, 1, 3>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x9xf32>
// CHECK-NEXT: %17 = tile.view %8 {kind = "reshape", mapping = {grid = array<i64: 1, 2, 1, 3>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x9xf32>
// CHECK-NEXT: %18 = tile.view %9 {kind = "reshape", mapping = {grid = array<i64: 1, 2, 1, 3>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x9xf32>
// CHECK-NEXT: %19 = tile.view %10 {kind = "reshape", mapping = {grid = array<i64: 1, 2, 1, 3>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x9xf32>
// CHECK-NEXT: %20 = tile.view %11 {kind = "reshape", mapping = {grid = array<i64: 1, 2, 1, 3>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x9xf32>
// CHECK-NEXT: %21 = tile.view %12 {kind = "reshape", mapping = {grid = array<i64: 1, 2, 1, 3>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x9xf32>
// CHECK-NEXT: %22 = tile.view %13 {kind = "reshape", mapping = {grid = array<i64: 1, 2, 1, 3>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x9xf32>
// CHECK-NEXT: %23 = tile.view %14 {kind = "reshape", mapping = {grid = array<i64: 1, 2, 1, 3>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x9xf32>
// CHECK-NEXT: %24 = tile.view %15, %16, %17, %18, %19, %20, %21, %22, %23 {axis = 2 : i64, kind = "concat", mapping = {grid = array<i64: 1, 2, 8, 1>, tiles = array<i64: 0, 1>}} : (tensor<1x2x1x9xf32>, tensor<1x2x1x9xf32>, tensor<1x2x1x9xf32>, tensor<1x2x1x9xf32>, tensor<1x2x1x9xf32>, tensor<1x2x1x9xf32>, tensor<1x2x1x9xf32>, tensor<1x2x1x9xf32>, tensor<1x2x1x9xf32>) -> tensor<1x2x9x9xf32>
// CHECK-NEXT: %25 = tile.view %1 {kind = "reshape", mapping = {grid = array<i64: 4, 3>, tiles = array<i64: 0, 1>}} : (tensor<4x2x3x3xf32>) -> tensor<4x18xf32>
// CHECK-NEXT: %26 = tile.view %24 {kind = "reshape", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}} : (tensor<1x2x9x9xf32>) -> tensor<18x9xf32>
// CHECK-NEXT: %27 = tile.constant {mapping = {grid = array<i64: 4, 3>, tiles = array<i64: 0, 1>}} dense<0.0> : tensor<4x6xf32>
// CHECK-NEXT: %28 = tile.view %25, %27 {axis = 1 : i64, kind = "concat", mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}} : (tensor<4x18xf32>, tensor<4x6xf32>) -> tensor<4x24xf32>
// CHECK-NEXT: %29 = tile.constant {mapping = {grid = array<i64: 6, 1>, tiles = array<i64: 0, 1>}} dense<0.0> : tensor<6x9xf32>
// CHECK-NEXT: %30 = tile.view %26, %29 {axis = 0 : i64, kind = "concat", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}} : (tensor<18x9xf32>, tensor<6x9xf32>) -> tensor<24x9xf32>
// CHECK-NEXT: %31 = tile.constant {mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}} dense<0.0> : tensor<24x7xf32>
// CHECK-NEXT: %32 = tile.view %30, %31 {axis = 1 : i64, kind = "concat", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}} : (tensor<24x9xf32>, tensor<24x7xf32>) -> tensor<24x16xf32>
// CHECK-NEXT: %33 = tile.matmul %28, %32 {cycles = 376 : i64, kernel = "gemm_f32_interleaved_k8_c16_r0_r1_m3", mapping = {grid = array<i64: 6, 1>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 2, 1, 3>, tiles = array<i64: 0, 1>} : (tensor<4x24xf32>, tensor<24x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %34 = tile.view %33 {ends = array<i64: 4, 9>, kind = "slice", mapping = {grid = array<i64: 4, 3>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : (tensor<4x16xf32>) -> tensor<4x9xf32>
// CHECK-NEXT: %35 = tile.view %34 {kind = "reshape", mapping = {grid = array<i64: 1, 4, 3, 1>, tiles = array<i64: 0, 1>}} : (tensor<4x9xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT: %36 = tile.view %0 {ends = array<i64: 1, 2, 5, 5>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %37 = tile.view %0 {ends = array<i64: 1, 2, 5, 6>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 0, 1>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %38 = tile.view %0 {ends = array<i64: 1, 2, 6, 5>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 1, 0>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %39 = tile.view %0 {ends = array<i64: 1, 2, 6, 6>, kind = "slice", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}, starts = array<i64: 0, 0, 1, 1>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %40 = tile.map %36, %37 {cycles = 74 : i64, fn = #tile.fn<max>, kernel = "ew_max_f32_n4", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %41 = tile.map %40, %38 {cycles = 74 : i64, fn = #tile.fn<max>, kernel = "ew_max_f32_n4", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %42 = tile.map %41, %39 {cycles = 74 : i64, fn = #tile.fn<max>, kernel = "ew_max_f32_n4", mapping = {grid = array<i64: 1, 2, 3, 1>, tiles = array<i64: 0, 1>}} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT: tile.host_output %35 {name = "result0"} : tensor<1x4x3x3xf32>
// CHECK-NEXT: tile.host_output %42 {name = "result1"} : tensor<1x2x3x3xf32>
// CHECK-NEXT: return %35, %42 : tensor<1x4x3x3xf32>, tensor<1x2x3x3xf32>

func.func @main(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> (tensor<1x4x3x3xf32>, tensor<1x2x3x3xf32>) {
  %0 = nn.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  %1 = nn.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
  return %0, %1 : tensor<1x4x3x3xf32>, tensor<1x2x3x3xf32>
}
