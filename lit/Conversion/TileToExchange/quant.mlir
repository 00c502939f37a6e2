// tile -> exchange for quantized arithmetic (test16), each phase's horizon
// and endpoint lower bound pinned: a QuantizeLinear (x / scale, rounded
// half to even by adding and subtracting 1.5 * 2^23 less the zero point,
// clamped, NaN made 0) whose u8 codes an integer matmul reads centred, by
// an i8 weight the host widens to f32 at load. The codes stay f32 on the
// tiles where the elementwise kernels made them; the matmul's operands
// arrive in its blocks; the splat constants (the scale, 1.5 * 2^23,
// 1.5 * 2^23 - 128, 0, 255) are loaded with the image, one per value and
// layout.
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null
// Pinned with scripts/pin-exchange-checks.py THIS -- ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange

// CHECK: attributes {exchange.compute_cycles = 1388 : i64, exchange.estimated_cycles = 1871 : i64, exchange.exchange_cycles = 213 : i64, exchange.steps = 3 : i64}
// CHECK: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "input0", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s1.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s1.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s2.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s2.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s3.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s3.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, sym_name = "const3", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s4.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s4.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s5.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s5.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 4 : i64, sym_name = "s6.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s7.operand2", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s7.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s8.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, sym_name = "s8.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, interleaved, reads = [{ranges = array<i64: 1, 64, 64>, tiles = "0 to 3"}], sym_name = "s9.operand0", tiles = "0 to 3"}
// CHECK-NEXT: exchange.buffer {bytes = 1032 : i64, interleaved, sym_name = "s9.operand1", tiles = "0 to 3"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, interleaved, sym_name = "s9.result", tiles = "0 to 3"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, interleaved, sym_name = "s10.operand1", tiles = "0 to 3"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, sym_name = "s10.result", tiles = "0 to 3"}
// CHECK-NEXT: exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}} : tensor<4x16xf32>
// CHECK-NEXT: exchange.host_input %arg1 {load, placements = [{buffer = @s9.operand1, rects = [{hi = array<i64: 16, 16>, lo = array<i64: 0, 0>, tiles = "0 to 3"}]}], tile_type = tensor<16x16xf32>} : tensor<16x16xi8>
// CHECK-NEXT: exchange.constant {placements = [{buffer = @s1.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}], value = dense<0.05> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.constant {placements = [{buffer = @s2.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}], value = dense<12582912.0> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.constant {placements = [{buffer = @s3.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}], value = dense<12582784.0> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.constant {buffer = @const3, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, placements = [{buffer = @s4.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}, {buffer = @s7.operand2, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}], value = dense<0.0> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.constant {placements = [{buffer = @s5.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}], value = dense<255.0> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.constant {placements = [{buffer = @s8.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}], value = dense<128.0> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.constant {placements = [{buffer = @s10.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 16>, lo = array<i64: 0, 0>, shift = array<i64: 1, 1, 0>, tiles = "0"}]}], value = dense<0.0123> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.compute_set attributes {bound = 16 : i64, cycles = 808 : i64, label = "tile.map div, tile.map add, tile.map sub, tile.map max, tile.map min, tile.predicate equal, tile.select, tile.map sub", sym_name = "s1"} {
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_div_f32_n4", params = {N = 4 : i64, OP = 3 : i64, TYPE = 0 : i64}, record = [@input0, @s1.operand1, @s1.result, 1 : i64, [@input0, 8 : i64], [@s1.operand1, 8 : i64], [@s1.result, 8 : i64], 1 : i64, @input0, @s1.operand1, @s1.result, 0 : i64, @input0, @s1.operand1, @s1.result, 0 : i64, @input0, @s1.operand1, @s1.result, 0 : i64, @input0, @s1.operand1, @s1.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_add_f32_n4", params = {N = 4 : i64, OP = 0 : i64, TYPE = 0 : i64}, record = [@s1.result, @s2.operand1, @s2.result, 1 : i64, [@s1.result, 8 : i64], [@s2.operand1, 8 : i64], [@s2.result, 8 : i64], 1 : i64, @s1.result, @s2.operand1, @s2.result, 0 : i64, @s1.result, @s2.operand1, @s2.result, 0 : i64, @s1.result, @s2.operand1, @s2.result, 0 : i64, @s1.result, @s2.operand1, @s2.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_sub_f32_n4", params = {N = 4 : i64, OP = 1 : i64, TYPE = 0 : i64}, record = [@s2.result, @s3.operand1, @s3.result, 1 : i64, [@s2.result, 8 : i64], [@s3.operand1, 8 : i64], [@s3.result, 8 : i64], 1 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_max_f32_n4", params = {N = 4 : i64, OP = 4 : i64, TYPE = 0 : i64}, record = [@s3.result, @s4.operand1, @s4.result, 1 : i64, [@s3.result, 8 : i64], [@s4.operand1, 8 : i64], [@s4.result, 8 : i64], 1 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_min_f32_n4", params = {N = 4 : i64, OP = 5 : i64, TYPE = 0 : i64}, record = [@s4.result, @s5.operand1, @s5.result, 1 : i64, [@s4.result, 8 : i64], [@s5.operand1, 8 : i64], [@s5.result, 8 : i64], 1 : i64, @s4.result, @s5.operand1, @s5.result, 0 : i64, @s4.result, @s5.operand1, @s5.result, 0 : i64, @s4.result, @s5.operand1, @s5.result, 0 : i64, @s4.result, @s5.operand1, @s5.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "compare", name = "cmp_eq_f32_n4", params = {N = 4 : i64, OP = 0 : i64, TYPE = 0 : i64}, record = [@s5.result, @s5.result, @s6.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "select", name = "select_f32_n4", params = {N = 4 : i64, TYPE = 0 : i64}, record = [@s6.result, @s5.result, @s7.operand2, @s7.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_sub_f32_n4", params = {N = 4 : i64, OP = 1 : i64, TYPE = 0 : i64}, record = [@s7.result, @s8.operand1, @s8.result, 1 : i64, [@s7.result, 8 : i64], [@s8.operand1, 8 : i64], [@s8.result, 8 : i64], 1 : i64, @s7.result, @s8.operand1, @s8.result, 0 : i64, @s7.result, @s8.operand1, @s8.result, 0 : i64, @s7.result, @s8.operand1, @s8.result, 0 : i64, @s7.result, @s8.operand1, @s8.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s1.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "85:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s2.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "91:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s3.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "91:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s4.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "91:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s5.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "91:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s6.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.predicate", source = "91:3", type = tensor<4x16xi1>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s7.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.select", source = "91:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s8.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "95:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.phase attributes {bytes = 240 : i64, gap = 7 : i64, horizon = 23 : i64, initial_horizon = 23 : i64, kind = "compact-streams", local_bytes = 16 : i64, lower_bound = 16 : i64, moves = "operand #0 of s9 tile.matmul", patterns = ["tiles 1..2 -> tile 0, 16 B each (2 transfers)", "tiles 3..4 -> -3, 16 B each (2 transfers)", "tiles 5..6 -> tile 1, 16 B each (2 transfers)", "tiles 7..8 -> -6, 16 B each (2 transfers)", "tiles 9..10 -> tile 2, 16 B each (2 transfers)", "tiles 11..12 -> -9, 16 B each (2 transfers)", "tiles 13..15 -> tile 3, 16 B each (3 transfers)"], row_words = 15 : i64, sym_name = "x0", transfers = 15 : i64} {
// CHECK-NEXT: exchange.move {dst = @s9.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 3, 1, 1, 0, 0, 16, 0, 16, 1, 1, 0, 0, 16, 0>, array<i64: 3, 4, 0, 1, 0, 4, 4, 1, 0, 0, 16, 0, 16, 1, 1, 1, 0, 0, 0>], src = @s8.result}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 6 : i64, cycles = 580 : i64, label = "tile.matmul, tile.map mul", sym_name = "s9"} {
// CHECK-NEXT: exchange.copy {dst = @s9.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 0, 0, 0, 0>], src = @s8.result}
// CHECK-NEXT: exchange.vertex {kernel = "gemm_amp", name = "gemm_f32_interleaved_k16_c16_r0_r1_m1", params = {K = 16 : i64, M = 1 : i64, N = 16 : i64, TYPE = 4 : i64}, record = [@s9.operand0, @s9.operand1, @s9.result, 0 : i64], scratch = 240 : i64, tiles = "0 to 3"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_mul_f32_n16", params = {N = 16 : i64, OP = 2 : i64, TYPE = 0 : i64}, record = [@s9.result, @s10.operand1, @s10.result, 2 : i64, [@s9.result, 16 : i64], [@s10.operand1, 16 : i64], [@s10.result, 16 : i64], 2 : i64, [@s9.result, 32 : i64], [@s10.operand1, 32 : i64], [@s10.result, 32 : i64], 1 : i64, [@s9.result, 40 : i64], [@s10.operand1, 40 : i64], [@s10.result, 40 : i64], 1 : i64, [@s9.result, 48 : i64], [@s10.operand1, 48 : i64], [@s10.result, 48 : i64], 1 : i64, [@s9.result, 56 : i64], [@s10.operand1, 56 : i64], [@s10.result, 56 : i64], 1 : i64], tiles = "0 to 3"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s9, buffer = @s9.result, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, op = "tile.matmul", source = "95:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s9, buffer = @s10.result, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "98:3", type = tensor<4x16xf32>}
// CHECK-NEXT: %0 = exchange.host_output {buffer = @s10.result, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<4x16xf32>
// CHECK-NEXT: return %0 : tensor<4x16xf32>

func.func @main(%x: tensor<4x16xf32> {ipu.name = "x"}, %w: tensor<16x16xi8> {ipu.name = "w", ipu.weight}) -> (tensor<4x16xf32> {ipu.name = "y"}) {
  %s = nn.constant dense<0.05> : tensor<f32>
  %zp = nn.constant dense<128.0> : tensor<f32>
  %lo = nn.constant dense<0.0> : tensor<f32>
  %hi = nn.constant dense<255.0> : tensor<f32>
  %xs = nn.div %x, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %xr = nn.round %xs : tensor<4x16xf32>
  %xz = nn.add %xr, %zp : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %xc0 = nn.max %xz, %lo : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %xc = nn.min %xc0, %hi : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %q = nn.cast %xc {saturate} : tensor<4x16xf32> -> tensor<4x16xui8>
  %q32 = nn.cast %q {saturate} : tensor<4x16xui8> -> tensor<4x16xi32>
  %z = nn.constant dense<128> : tensor<i32>
  %a = nn.sub %q32, %z : (tensor<4x16xi32>, tensor<i32>) -> tensor<4x16xi32>
  %w32 = nn.cast %w {saturate} : tensor<16x16xi8> -> tensor<16x16xi32>
  %acc = nn.matmul %a, %w32 : (tensor<4x16xi32>, tensor<16x16xi32>) -> tensor<4x16xi32>
  %accf = nn.cast %acc {saturate} : tensor<4x16xi32> -> tensor<4x16xf32>
  %ws = nn.constant dense<0.0123> : tensor<f32>
  %y = nn.mul %accf, %ws : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
