// The 18 elementwise ops with an nn op (device::map::ELEMENTWISE) in f32 on
// the simulated device, checked against the reference interpreter: odd sizes
// (blocks that are not whole 64-bit granules of 2 lanes, short and empty
// edge blocks, a split last dimension and a prime one not split, rank 3, one
// element), on 16 tiles and on 4.
// Inputs (Inputs/elementwise_inputs.py) keep every op in its domain: x
// uniform in [-4, 4), p log-uniform in [1e-2, 1e2) for log, sqrt and rsqrt,
// d of either sign with magnitude in [0.25, 4) for div and reciprocal.
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
// Every output is compared with the reference.
// LOG-COUNT-108: compared with the reference output=

// Each op is one tile.map calling its own elementwise kernel: the 1000
// elements as 16 blocks of at most 63, padded to 64 for the kernel.
// TILE: fn = #tile.fn<relu>, kernel = "ew_relu_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<gelu>, kernel = "ew_gelu_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<exp>, kernel = "ew_exp_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<tanh>, kernel = "ew_tanh_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<erf>, kernel = "ew_erf_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<neg>, kernel = "ew_neg_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<abs>, kernel = "ew_abs_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<sigmoid>, kernel = "ew_sigmoid_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<rsqrt>, kernel = "ew_rsqrt_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<sqrt>, kernel = "ew_sqrt_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<log>, kernel = "ew_log_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<reciprocal>, kernel = "ew_recip_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<add>, kernel = "ew_add_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<sub>, kernel = "ew_sub_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<mul>, kernel = "ew_mul_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<div>, kernel = "ew_div_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<max>, kernel = "ew_max_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}
// TILE: fn = #tile.fn<min>, kernel = "ew_min_f32_n64", mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}

func.func @main(%x_1000: tensor<1000xf32> {ipu.name = "x_1000"},
                 %p_1000: tensor<1000xf32> {ipu.name = "p_1000"},
                 %d_1000: tensor<1000xf32> {ipu.name = "d_1000"},
                 %x_37x5: tensor<37x5xf32> {ipu.name = "x_37x5"},
                 %p_37x5: tensor<37x5xf32> {ipu.name = "p_37x5"},
                 %d_37x5: tensor<37x5xf32> {ipu.name = "d_37x5"},
                 %x_8x6: tensor<8x6xf32> {ipu.name = "x_8x6"},
                 %p_8x6: tensor<8x6xf32> {ipu.name = "p_8x6"},
                 %d_8x6: tensor<8x6xf32> {ipu.name = "d_8x6"},
                 %x_3x37: tensor<3x37xf32> {ipu.name = "x_3x37"},
                 %p_3x37: tensor<3x37xf32> {ipu.name = "p_3x37"},
                 %d_3x37: tensor<3x37xf32> {ipu.name = "d_3x37"},
                 %x_2x3x10: tensor<2x3x10xf32> {ipu.name = "x_2x3x10"},
                 %p_2x3x10: tensor<2x3x10xf32> {ipu.name = "p_2x3x10"},
                 %d_2x3x10: tensor<2x3x10xf32> {ipu.name = "d_2x3x10"},
                 %x_1: tensor<1xf32> {ipu.name = "x_1"},
                 %p_1: tensor<1xf32> {ipu.name = "p_1"},
                 %d_1: tensor<1xf32> {ipu.name = "d_1"})
    -> (tensor<1000xf32> {ipu.name = "relu_1000"},
        tensor<1000xf32> {ipu.name = "gelu_1000"},
        tensor<1000xf32> {ipu.name = "exp_1000"},
        tensor<1000xf32> {ipu.name = "tanh_1000"},
        tensor<1000xf32> {ipu.name = "erf_1000"},
        tensor<1000xf32> {ipu.name = "neg_1000"},
        tensor<1000xf32> {ipu.name = "abs_1000"},
        tensor<1000xf32> {ipu.name = "sigmoid_1000"},
        tensor<1000xf32> {ipu.name = "rsqrt_1000"},
        tensor<1000xf32> {ipu.name = "sqrt_1000"},
        tensor<1000xf32> {ipu.name = "log_1000"},
        tensor<1000xf32> {ipu.name = "reciprocal_1000"},
        tensor<1000xf32> {ipu.name = "add_1000"},
        tensor<1000xf32> {ipu.name = "sub_1000"},
        tensor<1000xf32> {ipu.name = "mul_1000"},
        tensor<1000xf32> {ipu.name = "div_1000"},
        tensor<1000xf32> {ipu.name = "max_1000"},
        tensor<1000xf32> {ipu.name = "min_1000"},
        tensor<37x5xf32> {ipu.name = "relu_37x5"},
        tensor<37x5xf32> {ipu.name = "gelu_37x5"},
        tensor<37x5xf32> {ipu.name = "exp_37x5"},
        tensor<37x5xf32> {ipu.name = "tanh_37x5"},
        tensor<37x5xf32> {ipu.name = "erf_37x5"},
        tensor<37x5xf32> {ipu.name = "neg_37x5"},
        tensor<37x5xf32> {ipu.name = "abs_37x5"},
        tensor<37x5xf32> {ipu.name = "sigmoid_37x5"},
        tensor<37x5xf32> {ipu.name = "rsqrt_37x5"},
        tensor<37x5xf32> {ipu.name = "sqrt_37x5"},
        tensor<37x5xf32> {ipu.name = "log_37x5"},
        tensor<37x5xf32> {ipu.name = "reciprocal_37x5"},
        tensor<37x5xf32> {ipu.name = "add_37x5"},
        tensor<37x5xf32> {ipu.name = "sub_37x5"},
        tensor<37x5xf32> {ipu.name = "mul_37x5"},
        tensor<37x5xf32> {ipu.name = "div_37x5"},
        tensor<37x5xf32> {ipu.name = "max_37x5"},
        tensor<37x5xf32> {ipu.name = "min_37x5"},
        tensor<8x6xf32> {ipu.name = "relu_8x6"},
        tensor<8x6xf32> {ipu.name = "gelu_8x6"},
        tensor<8x6xf32> {ipu.name = "exp_8x6"},
        tensor<8x6xf32> {ipu.name = "tanh_8x6"},
        tensor<8x6xf32> {ipu.name = "erf_8x6"},
        tensor<8x6xf32> {ipu.name = "neg_8x6"},
        tensor<8x6xf32> {ipu.name = "abs_8x6"},
        tensor<8x6xf32> {ipu.name = "sigmoid_8x6"},
        tensor<8x6xf32> {ipu.name = "rsqrt_8x6"},
        tensor<8x6xf32> {ipu.name = "sqrt_8x6"},
        tensor<8x6xf32> {ipu.name = "log_8x6"},
        tensor<8x6xf32> {ipu.name = "reciprocal_8x6"},
        tensor<8x6xf32> {ipu.name = "add_8x6"},
        tensor<8x6xf32> {ipu.name = "sub_8x6"},
        tensor<8x6xf32> {ipu.name = "mul_8x6"},
        tensor<8x6xf32> {ipu.name = "div_8x6"},
        tensor<8x6xf32> {ipu.name = "max_8x6"},
        tensor<8x6xf32> {ipu.name = "min_8x6"},
        tensor<3x37xf32> {ipu.name = "relu_3x37"},
        tensor<3x37xf32> {ipu.name = "gelu_3x37"},
        tensor<3x37xf32> {ipu.name = "exp_3x37"},
        tensor<3x37xf32> {ipu.name = "tanh_3x37"},
        tensor<3x37xf32> {ipu.name = "erf_3x37"},
        tensor<3x37xf32> {ipu.name = "neg_3x37"},
        tensor<3x37xf32> {ipu.name = "abs_3x37"},
        tensor<3x37xf32> {ipu.name = "sigmoid_3x37"},
        tensor<3x37xf32> {ipu.name = "rsqrt_3x37"},
        tensor<3x37xf32> {ipu.name = "sqrt_3x37"},
        tensor<3x37xf32> {ipu.name = "log_3x37"},
        tensor<3x37xf32> {ipu.name = "reciprocal_3x37"},
        tensor<3x37xf32> {ipu.name = "add_3x37"},
        tensor<3x37xf32> {ipu.name = "sub_3x37"},
        tensor<3x37xf32> {ipu.name = "mul_3x37"},
        tensor<3x37xf32> {ipu.name = "div_3x37"},
        tensor<3x37xf32> {ipu.name = "max_3x37"},
        tensor<3x37xf32> {ipu.name = "min_3x37"},
        tensor<2x3x10xf32> {ipu.name = "relu_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "gelu_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "exp_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "tanh_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "erf_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "neg_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "abs_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "sigmoid_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "rsqrt_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "sqrt_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "log_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "reciprocal_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "add_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "sub_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "mul_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "div_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "max_2x3x10"},
        tensor<2x3x10xf32> {ipu.name = "min_2x3x10"},
        tensor<1xf32> {ipu.name = "relu_1"},
        tensor<1xf32> {ipu.name = "gelu_1"},
        tensor<1xf32> {ipu.name = "exp_1"},
        tensor<1xf32> {ipu.name = "tanh_1"},
        tensor<1xf32> {ipu.name = "erf_1"},
        tensor<1xf32> {ipu.name = "neg_1"},
        tensor<1xf32> {ipu.name = "abs_1"},
        tensor<1xf32> {ipu.name = "sigmoid_1"},
        tensor<1xf32> {ipu.name = "rsqrt_1"},
        tensor<1xf32> {ipu.name = "sqrt_1"},
        tensor<1xf32> {ipu.name = "log_1"},
        tensor<1xf32> {ipu.name = "reciprocal_1"},
        tensor<1xf32> {ipu.name = "add_1"},
        tensor<1xf32> {ipu.name = "sub_1"},
        tensor<1xf32> {ipu.name = "mul_1"},
        tensor<1xf32> {ipu.name = "div_1"},
        tensor<1xf32> {ipu.name = "max_1"},
        tensor<1xf32> {ipu.name = "min_1"}) {
  // 1000: 1000 elements over 16 tiles: blocks of 63, the last of 55 (test4: 4 of 250).
  %relu_1000 = nn.relu %x_1000 : tensor<1000xf32>
  %gelu_1000 = nn.gelu %x_1000 : tensor<1000xf32>
  %exp_1000 = nn.exp %x_1000 : tensor<1000xf32>
  %tanh_1000 = nn.tanh %x_1000 : tensor<1000xf32>
  %erf_1000 = nn.erf %x_1000 : tensor<1000xf32>
  %neg_1000 = nn.neg %x_1000 : tensor<1000xf32>
  %abs_1000 = nn.abs %x_1000 : tensor<1000xf32>
  %sigmoid_1000 = nn.sigmoid %x_1000 : tensor<1000xf32>
  %rsqrt_1000 = nn.rsqrt %p_1000 : tensor<1000xf32>
  %sqrt_1000 = nn.sqrt %p_1000 : tensor<1000xf32>
  %log_1000 = nn.log %p_1000 : tensor<1000xf32>
  %reciprocal_1000 = nn.reciprocal %d_1000 : tensor<1000xf32>
  %add_1000 = nn.add %x_1000, %d_1000 : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  %sub_1000 = nn.sub %x_1000, %d_1000 : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  %mul_1000 = nn.mul %x_1000, %d_1000 : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  %div_1000 = nn.div %x_1000, %d_1000 : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  %max_1000 = nn.max %x_1000, %d_1000 : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  %min_1000 = nn.min %x_1000, %d_1000 : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  // 37x5: 37 rows over 16 tiles, 5 columns: 3 x 5 blocks (15 elements, not a whole number of 64-bit granules), the 13th block 1 row, the last three empty.
  %relu_37x5 = nn.relu %x_37x5 : tensor<37x5xf32>
  %gelu_37x5 = nn.gelu %x_37x5 : tensor<37x5xf32>
  %exp_37x5 = nn.exp %x_37x5 : tensor<37x5xf32>
  %tanh_37x5 = nn.tanh %x_37x5 : tensor<37x5xf32>
  %erf_37x5 = nn.erf %x_37x5 : tensor<37x5xf32>
  %neg_37x5 = nn.neg %x_37x5 : tensor<37x5xf32>
  %abs_37x5 = nn.abs %x_37x5 : tensor<37x5xf32>
  %sigmoid_37x5 = nn.sigmoid %x_37x5 : tensor<37x5xf32>
  %rsqrt_37x5 = nn.rsqrt %p_37x5 : tensor<37x5xf32>
  %sqrt_37x5 = nn.sqrt %p_37x5 : tensor<37x5xf32>
  %log_37x5 = nn.log %p_37x5 : tensor<37x5xf32>
  %reciprocal_37x5 = nn.reciprocal %d_37x5 : tensor<37x5xf32>
  %add_37x5 = nn.add %x_37x5, %d_37x5 : (tensor<37x5xf32>, tensor<37x5xf32>) -> tensor<37x5xf32>
  %sub_37x5 = nn.sub %x_37x5, %d_37x5 : (tensor<37x5xf32>, tensor<37x5xf32>) -> tensor<37x5xf32>
  %mul_37x5 = nn.mul %x_37x5, %d_37x5 : (tensor<37x5xf32>, tensor<37x5xf32>) -> tensor<37x5xf32>
  %div_37x5 = nn.div %x_37x5, %d_37x5 : (tensor<37x5xf32>, tensor<37x5xf32>) -> tensor<37x5xf32>
  %max_37x5 = nn.max %x_37x5, %d_37x5 : (tensor<37x5xf32>, tensor<37x5xf32>) -> tensor<37x5xf32>
  %min_37x5 = nn.min %x_37x5, %d_37x5 : (tensor<37x5xf32>, tensor<37x5xf32>) -> tensor<37x5xf32>
  // 8x6: the columns cut in two: 1 x 3 blocks, rows of 3 elements.
  %relu_8x6 = nn.relu %x_8x6 : tensor<8x6xf32>
  %gelu_8x6 = nn.gelu %x_8x6 : tensor<8x6xf32>
  %exp_8x6 = nn.exp %x_8x6 : tensor<8x6xf32>
  %tanh_8x6 = nn.tanh %x_8x6 : tensor<8x6xf32>
  %erf_8x6 = nn.erf %x_8x6 : tensor<8x6xf32>
  %neg_8x6 = nn.neg %x_8x6 : tensor<8x6xf32>
  %abs_8x6 = nn.abs %x_8x6 : tensor<8x6xf32>
  %sigmoid_8x6 = nn.sigmoid %x_8x6 : tensor<8x6xf32>
  %rsqrt_8x6 = nn.rsqrt %p_8x6 : tensor<8x6xf32>
  %sqrt_8x6 = nn.sqrt %p_8x6 : tensor<8x6xf32>
  %log_8x6 = nn.log %p_8x6 : tensor<8x6xf32>
  %reciprocal_8x6 = nn.reciprocal %d_8x6 : tensor<8x6xf32>
  %add_8x6 = nn.add %x_8x6, %d_8x6 : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  %sub_8x6 = nn.sub %x_8x6, %d_8x6 : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  %mul_8x6 = nn.mul %x_8x6, %d_8x6 : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  %div_8x6 = nn.div %x_8x6, %d_8x6 : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  %max_8x6 = nn.max %x_8x6, %d_8x6 : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  %min_8x6 = nn.min %x_8x6, %d_8x6 : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  // 3x37: 37 columns, a prime: not cut, 3 x 1 blocks of one 37-element row.
  %relu_3x37 = nn.relu %x_3x37 : tensor<3x37xf32>
  %gelu_3x37 = nn.gelu %x_3x37 : tensor<3x37xf32>
  %exp_3x37 = nn.exp %x_3x37 : tensor<3x37xf32>
  %tanh_3x37 = nn.tanh %x_3x37 : tensor<3x37xf32>
  %erf_3x37 = nn.erf %x_3x37 : tensor<3x37xf32>
  %neg_3x37 = nn.neg %x_3x37 : tensor<3x37xf32>
  %abs_3x37 = nn.abs %x_3x37 : tensor<3x37xf32>
  %sigmoid_3x37 = nn.sigmoid %x_3x37 : tensor<3x37xf32>
  %rsqrt_3x37 = nn.rsqrt %p_3x37 : tensor<3x37xf32>
  %sqrt_3x37 = nn.sqrt %p_3x37 : tensor<3x37xf32>
  %log_3x37 = nn.log %p_3x37 : tensor<3x37xf32>
  %reciprocal_3x37 = nn.reciprocal %d_3x37 : tensor<3x37xf32>
  %add_3x37 = nn.add %x_3x37, %d_3x37 : (tensor<3x37xf32>, tensor<3x37xf32>) -> tensor<3x37xf32>
  %sub_3x37 = nn.sub %x_3x37, %d_3x37 : (tensor<3x37xf32>, tensor<3x37xf32>) -> tensor<3x37xf32>
  %mul_3x37 = nn.mul %x_3x37, %d_3x37 : (tensor<3x37xf32>, tensor<3x37xf32>) -> tensor<3x37xf32>
  %div_3x37 = nn.div %x_3x37, %d_3x37 : (tensor<3x37xf32>, tensor<3x37xf32>) -> tensor<3x37xf32>
  %max_3x37 = nn.max %x_3x37, %d_3x37 : (tensor<3x37xf32>, tensor<3x37xf32>) -> tensor<3x37xf32>
  %min_3x37 = nn.min %x_3x37, %d_3x37 : (tensor<3x37xf32>, tensor<3x37xf32>) -> tensor<3x37xf32>
  // 2x3x10: rank 3, a 2 x 3 x 2 grid of 1 x 1 x 5 blocks.
  %relu_2x3x10 = nn.relu %x_2x3x10 : tensor<2x3x10xf32>
  %gelu_2x3x10 = nn.gelu %x_2x3x10 : tensor<2x3x10xf32>
  %exp_2x3x10 = nn.exp %x_2x3x10 : tensor<2x3x10xf32>
  %tanh_2x3x10 = nn.tanh %x_2x3x10 : tensor<2x3x10xf32>
  %erf_2x3x10 = nn.erf %x_2x3x10 : tensor<2x3x10xf32>
  %neg_2x3x10 = nn.neg %x_2x3x10 : tensor<2x3x10xf32>
  %abs_2x3x10 = nn.abs %x_2x3x10 : tensor<2x3x10xf32>
  %sigmoid_2x3x10 = nn.sigmoid %x_2x3x10 : tensor<2x3x10xf32>
  %rsqrt_2x3x10 = nn.rsqrt %p_2x3x10 : tensor<2x3x10xf32>
  %sqrt_2x3x10 = nn.sqrt %p_2x3x10 : tensor<2x3x10xf32>
  %log_2x3x10 = nn.log %p_2x3x10 : tensor<2x3x10xf32>
  %reciprocal_2x3x10 = nn.reciprocal %d_2x3x10 : tensor<2x3x10xf32>
  %add_2x3x10 = nn.add %x_2x3x10, %d_2x3x10 : (tensor<2x3x10xf32>, tensor<2x3x10xf32>) -> tensor<2x3x10xf32>
  %sub_2x3x10 = nn.sub %x_2x3x10, %d_2x3x10 : (tensor<2x3x10xf32>, tensor<2x3x10xf32>) -> tensor<2x3x10xf32>
  %mul_2x3x10 = nn.mul %x_2x3x10, %d_2x3x10 : (tensor<2x3x10xf32>, tensor<2x3x10xf32>) -> tensor<2x3x10xf32>
  %div_2x3x10 = nn.div %x_2x3x10, %d_2x3x10 : (tensor<2x3x10xf32>, tensor<2x3x10xf32>) -> tensor<2x3x10xf32>
  %max_2x3x10 = nn.max %x_2x3x10, %d_2x3x10 : (tensor<2x3x10xf32>, tensor<2x3x10xf32>) -> tensor<2x3x10xf32>
  %min_2x3x10 = nn.min %x_2x3x10, %d_2x3x10 : (tensor<2x3x10xf32>, tensor<2x3x10xf32>) -> tensor<2x3x10xf32>
  // 1: one element on one tile.
  %relu_1 = nn.relu %x_1 : tensor<1xf32>
  %gelu_1 = nn.gelu %x_1 : tensor<1xf32>
  %exp_1 = nn.exp %x_1 : tensor<1xf32>
  %tanh_1 = nn.tanh %x_1 : tensor<1xf32>
  %erf_1 = nn.erf %x_1 : tensor<1xf32>
  %neg_1 = nn.neg %x_1 : tensor<1xf32>
  %abs_1 = nn.abs %x_1 : tensor<1xf32>
  %sigmoid_1 = nn.sigmoid %x_1 : tensor<1xf32>
  %rsqrt_1 = nn.rsqrt %p_1 : tensor<1xf32>
  %sqrt_1 = nn.sqrt %p_1 : tensor<1xf32>
  %log_1 = nn.log %p_1 : tensor<1xf32>
  %reciprocal_1 = nn.reciprocal %d_1 : tensor<1xf32>
  %add_1 = nn.add %x_1, %d_1 : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %sub_1 = nn.sub %x_1, %d_1 : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %mul_1 = nn.mul %x_1, %d_1 : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %div_1 = nn.div %x_1, %d_1 : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %max_1 = nn.max %x_1, %d_1 : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %min_1 = nn.min %x_1, %d_1 : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  return %relu_1000, %gelu_1000, %exp_1000, %tanh_1000, %erf_1000, %neg_1000, %abs_1000, %sigmoid_1000, %rsqrt_1000, %sqrt_1000, %log_1000, %reciprocal_1000, %add_1000, %sub_1000, %mul_1000, %div_1000, %max_1000, %min_1000, %relu_37x5, %gelu_37x5, %exp_37x5, %tanh_37x5, %erf_37x5, %neg_37x5, %abs_37x5, %sigmoid_37x5, %rsqrt_37x5, %sqrt_37x5, %log_37x5, %reciprocal_37x5, %add_37x5, %sub_37x5, %mul_37x5, %div_37x5, %max_37x5, %min_37x5, %relu_8x6, %gelu_8x6, %exp_8x6, %tanh_8x6, %erf_8x6, %neg_8x6, %abs_8x6, %sigmoid_8x6, %rsqrt_8x6, %sqrt_8x6, %log_8x6, %reciprocal_8x6, %add_8x6, %sub_8x6, %mul_8x6, %div_8x6, %max_8x6, %min_8x6, %relu_3x37, %gelu_3x37, %exp_3x37, %tanh_3x37, %erf_3x37, %neg_3x37, %abs_3x37, %sigmoid_3x37, %rsqrt_3x37, %sqrt_3x37, %log_3x37, %reciprocal_3x37, %add_3x37, %sub_3x37, %mul_3x37, %div_3x37, %max_3x37, %min_3x37, %relu_2x3x10, %gelu_2x3x10, %exp_2x3x10, %tanh_2x3x10, %erf_2x3x10, %neg_2x3x10, %abs_2x3x10, %sigmoid_2x3x10, %rsqrt_2x3x10, %sqrt_2x3x10, %log_2x3x10, %reciprocal_2x3x10, %add_2x3x10, %sub_2x3x10, %mul_2x3x10, %div_2x3x10, %max_2x3x10, %min_2x3x10, %relu_1, %gelu_1, %exp_1, %tanh_1, %erf_1, %neg_1, %abs_1, %sigmoid_1, %rsqrt_1, %sqrt_1, %log_1, %reciprocal_1, %add_1, %sub_1, %mul_1, %div_1, %max_1, %min_1
    : tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<37x5xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<3x37xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<2x3x10xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}
