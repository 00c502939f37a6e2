// Binary elementwise ops with a row-vector operand (a bias or a scale: every
// dimension but the last is 1 or absent), on either side, in f32 and f16 on
// the simulated device, checked against the reference: add and mul, the ops
// with a row-vector kernel (rows.S). The vector is sent to every tile of the
// result; the matrix rows split unevenly (37 over 16 tiles, 5 over 4).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/elementwise_inputs.py %s %t > %t/inputs
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock $(cat %t/inputs) > %t/verdict16 2> %t/log16
// RUN: FileCheck %s --check-prefix=T16 < %t/verdict16
// RUN: FileCheck %s --check-prefix=LOG < %t/log16
// RUN: ipu-run %s --target test4 --device-lock %t/device.lock $(cat %t/inputs) 2> %t/log4 | FileCheck %s --check-prefix=T4
// RUN: FileCheck %s --check-prefix=LOG < %t/log4
// RUN: ipu-opt --target test16 --convert-nn-to-tile %s | FileCheck %s --check-prefix=TILE

// T16: tiles=16 cycles={{[0-9]+}}
// T16-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// T16-NEXT: hardwareTest=PASS
// T4: tiles=4 cycles={{[0-9]+}}
// T4-NEXT: referenceMaximumAbsoluteError={{[0-9.]+}} numericalTest=PASS
// T4-NEXT: hardwareTest=PASS
// LOG-COUNT-16: compared with the reference output=

// Every one is the rows kernel on the matrix blocks (R rows of C columns).
// TILE: fn = #tile.fn<add>, kernel = "rows_add_row_vector_f32_r3_c12", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<mul>, kernel = "rows_mul_row_vector_f32_r3_c12", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<add>, kernel = "rows_add_row_vector_f32_r3_c12", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<mul>, kernel = "rows_mul_row_vector_f32_r3_c12", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<add>, kernel = "rows_add_row_vector_f32_r1_c8", mapping = {grid = array<i64: 3, 5, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<mul>, kernel = "rows_mul_row_vector_f32_r1_c8", mapping = {grid = array<i64: 3, 5, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<add>, kernel = "rows_add_row_vector_f32_r1_c12", mapping = {grid = array<i64: 5, 3>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<mul>, kernel = "rows_mul_row_vector_f32_r1_c12", mapping = {grid = array<i64: 5, 3>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<add>, kernel = "rows_add_row_vector_f16_r3_c12", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<mul>, kernel = "rows_mul_row_vector_f16_r3_c12", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<add>, kernel = "rows_add_row_vector_f16_r3_c12", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<mul>, kernel = "rows_mul_row_vector_f16_r3_c12", mapping = {grid = array<i64: 16, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<add>, kernel = "rows_add_row_vector_f16_r1_c8", mapping = {grid = array<i64: 3, 5, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<mul>, kernel = "rows_mul_row_vector_f16_r1_c8", mapping = {grid = array<i64: 3, 5, 1>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<add>, kernel = "rows_add_row_vector_f16_r1_c12", mapping = {grid = array<i64: 5, 3>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<mul>, kernel = "rows_mul_row_vector_f16_r1_c12", mapping = {grid = array<i64: 5, 3>, tiles = array<i64: 0, 1>}

func.func @main(%x_37x12_f32: tensor<37x12xf32> {ipu.name = "x_37x12_f32"},
                 %x_12_f32: tensor<12xf32> {ipu.name = "x_12_f32"},
                 %x_1x12_f32: tensor<1x12xf32> {ipu.name = "x_1x12_f32"},
                 %x_3x5x8_f32: tensor<3x5x8xf32> {ipu.name = "x_3x5x8_f32"},
                 %x_8_f32: tensor<8xf32> {ipu.name = "x_8_f32"},
                 %x_1x1x8_f32: tensor<1x1x8xf32> {ipu.name = "x_1x1x8_f32"},
                 %x_5x36_f32: tensor<5x36xf32> {ipu.name = "x_5x36_f32"},
                 %x_36_f32: tensor<36xf32> {ipu.name = "x_36_f32"},
                 %x_37x12_f16: tensor<37x12xf16> {ipu.name = "x_37x12_f16"},
                 %x_12_f16: tensor<12xf16> {ipu.name = "x_12_f16"},
                 %x_1x12_f16: tensor<1x12xf16> {ipu.name = "x_1x12_f16"},
                 %x_3x5x8_f16: tensor<3x5x8xf16> {ipu.name = "x_3x5x8_f16"},
                 %x_8_f16: tensor<8xf16> {ipu.name = "x_8_f16"},
                 %x_1x1x8_f16: tensor<1x1x8xf16> {ipu.name = "x_1x1x8_f16"},
                 %x_5x36_f16: tensor<5x36xf16> {ipu.name = "x_5x36_f16"},
                 %x_36_f16: tensor<36xf16> {ipu.name = "x_36_f16"})
    -> (tensor<37x12xf32> {ipu.name = "add_37x12_12_f32"},
        tensor<37x12xf32> {ipu.name = "mul_37x12_1x12_f32"},
        tensor<37x12xf32> {ipu.name = "add_12_37x12_f32"},
        tensor<37x12xf32> {ipu.name = "mul_1x12_37x12_f32"},
        tensor<3x5x8xf32> {ipu.name = "add_3x5x8_8_f32"},
        tensor<3x5x8xf32> {ipu.name = "mul_3x5x8_1x1x8_f32"},
        tensor<5x36xf32> {ipu.name = "add_5x36_36_f32"},
        tensor<5x36xf32> {ipu.name = "mul_5x36_36_f32"},
        tensor<37x12xf16> {ipu.name = "add_37x12_12_f16"},
        tensor<37x12xf16> {ipu.name = "mul_37x12_1x12_f16"},
        tensor<37x12xf16> {ipu.name = "add_12_37x12_f16"},
        tensor<37x12xf16> {ipu.name = "mul_1x12_37x12_f16"},
        tensor<3x5x8xf16> {ipu.name = "add_3x5x8_8_f16"},
        tensor<3x5x8xf16> {ipu.name = "mul_3x5x8_1x1x8_f16"},
        tensor<5x36xf16> {ipu.name = "add_5x36_36_f16"},
        tensor<5x36xf16> {ipu.name = "mul_5x36_36_f16"}) {
  %add_37x12_12_f32 = nn.add %x_37x12_f32, %x_12_f32 : (tensor<37x12xf32>, tensor<12xf32>) -> tensor<37x12xf32>
  %mul_37x12_1x12_f32 = nn.mul %x_37x12_f32, %x_1x12_f32 : (tensor<37x12xf32>, tensor<1x12xf32>) -> tensor<37x12xf32>
  %add_12_37x12_f32 = nn.add %x_12_f32, %x_37x12_f32 : (tensor<12xf32>, tensor<37x12xf32>) -> tensor<37x12xf32>
  %mul_1x12_37x12_f32 = nn.mul %x_1x12_f32, %x_37x12_f32 : (tensor<1x12xf32>, tensor<37x12xf32>) -> tensor<37x12xf32>
  %add_3x5x8_8_f32 = nn.add %x_3x5x8_f32, %x_8_f32 : (tensor<3x5x8xf32>, tensor<8xf32>) -> tensor<3x5x8xf32>
  %mul_3x5x8_1x1x8_f32 = nn.mul %x_3x5x8_f32, %x_1x1x8_f32 : (tensor<3x5x8xf32>, tensor<1x1x8xf32>) -> tensor<3x5x8xf32>
  %add_5x36_36_f32 = nn.add %x_5x36_f32, %x_36_f32 : (tensor<5x36xf32>, tensor<36xf32>) -> tensor<5x36xf32>
  %mul_5x36_36_f32 = nn.mul %x_5x36_f32, %x_36_f32 : (tensor<5x36xf32>, tensor<36xf32>) -> tensor<5x36xf32>
  %add_37x12_12_f16 = nn.add %x_37x12_f16, %x_12_f16 : (tensor<37x12xf16>, tensor<12xf16>) -> tensor<37x12xf16>
  %mul_37x12_1x12_f16 = nn.mul %x_37x12_f16, %x_1x12_f16 : (tensor<37x12xf16>, tensor<1x12xf16>) -> tensor<37x12xf16>
  %add_12_37x12_f16 = nn.add %x_12_f16, %x_37x12_f16 : (tensor<12xf16>, tensor<37x12xf16>) -> tensor<37x12xf16>
  %mul_1x12_37x12_f16 = nn.mul %x_1x12_f16, %x_37x12_f16 : (tensor<1x12xf16>, tensor<37x12xf16>) -> tensor<37x12xf16>
  %add_3x5x8_8_f16 = nn.add %x_3x5x8_f16, %x_8_f16 : (tensor<3x5x8xf16>, tensor<8xf16>) -> tensor<3x5x8xf16>
  %mul_3x5x8_1x1x8_f16 = nn.mul %x_3x5x8_f16, %x_1x1x8_f16 : (tensor<3x5x8xf16>, tensor<1x1x8xf16>) -> tensor<3x5x8xf16>
  %add_5x36_36_f16 = nn.add %x_5x36_f16, %x_36_f16 : (tensor<5x36xf16>, tensor<36xf16>) -> tensor<5x36xf16>
  %mul_5x36_36_f16 = nn.mul %x_5x36_f16, %x_36_f16 : (tensor<5x36xf16>, tensor<36xf16>) -> tensor<5x36xf16>
  return %add_37x12_12_f32, %mul_37x12_1x12_f32, %add_12_37x12_f32, %mul_1x12_37x12_f32, %add_3x5x8_8_f32, %mul_3x5x8_1x1x8_f32, %add_5x36_36_f32, %mul_5x36_36_f32, %add_37x12_12_f16, %mul_37x12_1x12_f16, %add_12_37x12_f16, %mul_1x12_37x12_f16, %add_3x5x8_8_f16, %mul_3x5x8_1x1x8_f16, %add_5x36_36_f16, %mul_5x36_36_f16
    : tensor<37x12xf32>, tensor<37x12xf32>, tensor<37x12xf32>, tensor<37x12xf32>, tensor<3x5x8xf32>, tensor<3x5x8xf32>, tensor<5x36xf32>, tensor<5x36xf32>, tensor<37x12xf16>, tensor<37x12xf16>, tensor<37x12xf16>, tensor<37x12xf16>, tensor<3x5x8xf16>, tensor<3x5x8xf16>, tensor<5x36xf16>, tensor<5x36xf16>
}
