// tile -> exchange for quantized arithmetic (test16), each phase's horizon
// and endpoint lower bound pinned: a QuantizeLinear (x / scale rounded half
// to even, plus the zero point, clamped) whose u8 codes an integer matmul
// reads centred, by an i8 weight the host widens to f32 at load. The codes
// stay f32 on the tiles where the elementwise kernels made them; the
// matmul's operands arrive in its blocks; the splat constants (2^23, 0,
// 255) are loaded with the image, one per value and layout.
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null
// Pinned with scripts/pin-exchange-checks.py THIS -- ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange

// CHECK: attributes {exchange.compute_cycles = 2465 : i64, exchange.estimated_cycles = 2948 : i64, exchange.exchange_cycles = 213 : i64, exchange.steps = 3 : i64}
// CHECK: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "input0", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s1.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s1.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s2.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, sym_name = "const1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s3.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s3.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s4.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s4.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s5.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, sym_name = "const2", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s6.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 4 : i64, sym_name = "s6.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s7.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s8.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s9.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 4 : i64, sym_name = "s9.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s10.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s11.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s11.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s12.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s12.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s13.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s13.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s14.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s14.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 4 : i64, sym_name = "s15.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s16.operand2", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s16.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, interleaved, sym_name = "s17.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 16 : i64, sym_name = "s17.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, interleaved, reads = [{ranges = array<i64: 1, 64, 64>, tiles = "0 to 3"}], sym_name = "s18.operand0", tiles = "0 to 3"}
// CHECK-NEXT: exchange.buffer {bytes = 1032 : i64, interleaved, sym_name = "s18.operand1", tiles = "0 to 3"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, interleaved, sym_name = "s18.result", tiles = "0 to 3"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, interleaved, sym_name = "s19.operand1", tiles = "0 to 3"}
// CHECK-NEXT: exchange.buffer {bytes = 64 : i64, sym_name = "s19.result", tiles = "0 to 3"}
// CHECK-NEXT: exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}} : tensor<4x16xf32>
// CHECK-NEXT: exchange.host_input %arg1 {load, placements = [{buffer = @s18.operand1, rects = [{hi = array<i64: 16, 16>, lo = array<i64: 0, 0>, tiles = "0 to 3"}]}], tile_type = tensor<16x16xf32>} : tensor<16x16xi8>
// CHECK-NEXT: exchange.constant {placements = [{buffer = @s1.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}], value = dense<0.05> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.constant {buffer = @const1, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, placements = [{buffer = @s3.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}, {buffer = @s4.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}, {buffer = @s9.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}], value = dense<8388608.0> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.constant {buffer = @const2, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, placements = [{buffer = @s6.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}, {buffer = @s12.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}, {buffer = @s14.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}, {buffer = @s16.operand2, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}], value = dense<0.0> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.constant {placements = [{buffer = @s11.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}, {buffer = @s17.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}], value = dense<128.0> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.constant {placements = [{buffer = @s13.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 4>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 4>, tiles = "0"}, {count = 4 : i64, hi = array<i64: 2, 4>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 4>, tiles = "4"}, {count = 4 : i64, hi = array<i64: 3, 4>, lo = array<i64: 2, 0>, shift = array<i64: 1, 0, 4>, tiles = "8"}, {count = 4 : i64, hi = array<i64: 4, 4>, lo = array<i64: 3, 0>, shift = array<i64: 1, 0, 4>, tiles = "12"}]}], value = dense<255.0> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.constant {placements = [{buffer = @s19.operand1, rects = [{count = 4 : i64, hi = array<i64: 1, 16>, lo = array<i64: 0, 0>, shift = array<i64: 1, 1, 0>, tiles = "0"}]}], value = dense<0.0123> : tensor<4x16xf32>}
// CHECK-NEXT: exchange.compute_set attributes {bound = 34 : i64, cycles = 1882 : i64, label = "tile.map div, tile.map abs, tile.map add, tile.map sub, tile.map reciprocal, tile.predicate less, tile.map neg, tile.select, tile.predicate less, tile.select, tile.map add, tile.map max, tile.map min, tile.map add, tile.predicate equal, tile.select, tile.map sub", sym_name = "s1"} {
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_div_f32_n4", params = {N = 4 : i64, OP = 3 : i64, TYPE = 0 : i64}, record = [@input0, @s1.operand1, @s1.result, 1 : i64, [@input0, 8 : i64], [@s1.operand1, 8 : i64], [@s1.result, 8 : i64], 1 : i64, @input0, @s1.operand1, @s1.result, 0 : i64, @input0, @s1.operand1, @s1.result, 0 : i64, @input0, @s1.operand1, @s1.result, 0 : i64, @input0, @s1.operand1, @s1.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_abs_f32_n4", params = {N = 4 : i64, OP = 24 : i64, TYPE = 0 : i64}, record = [@s1.result, 0 : i64, @s2.result, 1 : i64, [@s1.result, 8 : i64], 0 : i64, [@s2.result, 8 : i64], 1 : i64, @s1.result, 0 : i64, @s2.result, 0 : i64, @s1.result, 0 : i64, @s2.result, 0 : i64, @s1.result, 0 : i64, @s2.result, 0 : i64, @s1.result, 0 : i64, @s2.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_add_f32_n4", params = {N = 4 : i64, OP = 0 : i64, TYPE = 0 : i64}, record = [@s2.result, @s3.operand1, @s3.result, 1 : i64, [@s2.result, 8 : i64], [@s3.operand1, 8 : i64], [@s3.result, 8 : i64], 1 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64, @s2.result, @s3.operand1, @s3.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_sub_f32_n4", params = {N = 4 : i64, OP = 1 : i64, TYPE = 0 : i64}, record = [@s3.result, @s4.operand1, @s4.result, 1 : i64, [@s3.result, 8 : i64], [@s4.operand1, 8 : i64], [@s4.result, 8 : i64], 1 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64, @s3.result, @s4.operand1, @s4.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_recip_f32_n4", params = {N = 4 : i64, OP = 26 : i64, TYPE = 0 : i64}, record = [@s1.result, 0 : i64, @s5.result, 1 : i64, [@s1.result, 8 : i64], 0 : i64, [@s5.result, 8 : i64], 1 : i64, @s1.result, 0 : i64, @s5.result, 0 : i64, @s1.result, 0 : i64, @s5.result, 0 : i64, @s1.result, 0 : i64, @s5.result, 0 : i64, @s1.result, 0 : i64, @s5.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "compare", name = "cmp_lt_f32_n4", params = {N = 4 : i64, OP = 1 : i64, TYPE = 0 : i64}, record = [@s5.result, @s6.operand1, @s6.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_neg_f32_n4", params = {N = 4 : i64, OP = 23 : i64, TYPE = 0 : i64}, record = [@s4.result, 0 : i64, @s7.result, 1 : i64, [@s4.result, 8 : i64], 0 : i64, [@s7.result, 8 : i64], 1 : i64, @s4.result, 0 : i64, @s7.result, 0 : i64, @s4.result, 0 : i64, @s7.result, 0 : i64, @s4.result, 0 : i64, @s7.result, 0 : i64, @s4.result, 0 : i64, @s7.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "select", name = "select_f32_n4", params = {N = 4 : i64, TYPE = 0 : i64}, record = [@s6.result, @s7.result, @s4.result, @s8.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "compare", name = "cmp_lt_f32_n4", params = {N = 4 : i64, OP = 1 : i64, TYPE = 0 : i64}, record = [@s2.result, @s9.operand1, @s9.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "select", name = "select_f32_n4", params = {N = 4 : i64, TYPE = 0 : i64}, record = [@s9.result, @s8.result, @s1.result, @s10.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_add_f32_n4", params = {N = 4 : i64, OP = 0 : i64, TYPE = 0 : i64}, record = [@s10.result, @s11.operand1, @s11.result, 1 : i64, [@s10.result, 8 : i64], [@s11.operand1, 8 : i64], [@s11.result, 8 : i64], 1 : i64, @s10.result, @s11.operand1, @s11.result, 0 : i64, @s10.result, @s11.operand1, @s11.result, 0 : i64, @s10.result, @s11.operand1, @s11.result, 0 : i64, @s10.result, @s11.operand1, @s11.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_max_f32_n4", params = {N = 4 : i64, OP = 4 : i64, TYPE = 0 : i64}, record = [@s11.result, @s12.operand1, @s12.result, 1 : i64, [@s11.result, 8 : i64], [@s12.operand1, 8 : i64], [@s12.result, 8 : i64], 1 : i64, @s11.result, @s12.operand1, @s12.result, 0 : i64, @s11.result, @s12.operand1, @s12.result, 0 : i64, @s11.result, @s12.operand1, @s12.result, 0 : i64, @s11.result, @s12.operand1, @s12.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_min_f32_n4", params = {N = 4 : i64, OP = 5 : i64, TYPE = 0 : i64}, record = [@s12.result, @s13.operand1, @s13.result, 1 : i64, [@s12.result, 8 : i64], [@s13.operand1, 8 : i64], [@s13.result, 8 : i64], 1 : i64, @s12.result, @s13.operand1, @s13.result, 0 : i64, @s12.result, @s13.operand1, @s13.result, 0 : i64, @s12.result, @s13.operand1, @s13.result, 0 : i64, @s12.result, @s13.operand1, @s13.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_add_f32_n4", params = {N = 4 : i64, OP = 0 : i64, TYPE = 0 : i64}, record = [@s13.result, @s14.operand1, @s14.result, 1 : i64, [@s13.result, 8 : i64], [@s14.operand1, 8 : i64], [@s14.result, 8 : i64], 1 : i64, @s13.result, @s14.operand1, @s14.result, 0 : i64, @s13.result, @s14.operand1, @s14.result, 0 : i64, @s13.result, @s14.operand1, @s14.result, 0 : i64, @s13.result, @s14.operand1, @s14.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "compare", name = "cmp_eq_f32_n4", params = {N = 4 : i64, OP = 0 : i64, TYPE = 0 : i64}, record = [@s14.result, @s14.result, @s15.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "select", name = "select_f32_n4", params = {N = 4 : i64, TYPE = 0 : i64}, record = [@s15.result, @s14.result, @s16.operand2, @s16.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_sub_f32_n4", params = {N = 4 : i64, OP = 1 : i64, TYPE = 0 : i64}, record = [@s16.result, @s17.operand1, @s17.result, 1 : i64, [@s16.result, 8 : i64], [@s17.operand1, 8 : i64], [@s17.result, 8 : i64], 1 : i64, @s16.result, @s17.operand1, @s17.result, 0 : i64, @s16.result, @s17.operand1, @s17.result, 0 : i64, @s16.result, @s17.operand1, @s17.result, 0 : i64, @s16.result, @s17.operand1, @s17.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s1.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "114:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s2.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "115:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s3.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "115:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s4.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "115:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s5.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "115:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s6.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.predicate", source = "115:3", type = tensor<4x16xi1>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s7.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "115:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s8.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.select", source = "115:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s9.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.predicate", source = "115:3", type = tensor<4x16xi1>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s10.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.select", source = "115:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s11.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "116:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s12.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "117:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s13.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "118:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s14.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "120:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s15.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.predicate", source = "120:3", type = tensor<4x16xi1>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s16.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.select", source = "120:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s17.result, mapping = {grid = array<i64: 4, 4>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "124:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.phase attributes {bytes = 240 : i64, gap = 7 : i64, horizon = 23 : i64, initial_horizon = 23 : i64, kind = "compact-streams", local_bytes = 16 : i64, lower_bound = 16 : i64, moves = "operand #0 of s18 tile.matmul", patterns = ["tiles 1..2 -> tile 0, 16 B each (2 transfers)", "tiles 3..4 -> -3, 16 B each (2 transfers)", "tiles 5..6 -> tile 1, 16 B each (2 transfers)", "tiles 7..8 -> -6, 16 B each (2 transfers)", "tiles 9..10 -> tile 2, 16 B each (2 transfers)", "tiles 11..12 -> -9, 16 B each (2 transfers)", "tiles 13..15 -> tile 3, 16 B each (3 transfers)"], row_words = 15 : i64, sym_name = "x0", transfers = 15 : i64} {
// CHECK-NEXT: exchange.move {dst = @s18.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 3, 1, 1, 0, 0, 16, 0, 16, 1, 1, 0, 0, 16, 0>, array<i64: 3, 4, 0, 1, 0, 4, 4, 1, 0, 0, 16, 0, 16, 1, 1, 1, 0, 0, 0>], src = @s17.result}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 6 : i64, cycles = 583 : i64, label = "tile.matmul, tile.map mul", sym_name = "s18"} {
// CHECK-NEXT: exchange.copy {dst = @s18.operand0, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 0, 0, 0, 0>], src = @s17.result}
// CHECK-NEXT: exchange.vertex {kernel = "gemm_amp", name = "gemm_f32_interleaved_k16_c16_r0_r1_m1", params = {K = 16 : i64, M = 1 : i64, N = 16 : i64, TYPE = 4 : i64}, record = [@s18.operand0, @s18.operand1, @s18.result, 0 : i64], scratch = 240 : i64, tiles = "0 to 3"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_mul_f32_n16", params = {N = 16 : i64, OP = 2 : i64, TYPE = 0 : i64}, record = [@s18.result, @s19.operand1, @s19.result, 2 : i64, [@s18.result, 16 : i64], [@s19.operand1, 16 : i64], [@s19.result, 16 : i64], 2 : i64, [@s18.result, 32 : i64], [@s19.operand1, 32 : i64], [@s19.result, 32 : i64], 1 : i64, [@s18.result, 40 : i64], [@s19.operand1, 40 : i64], [@s19.result, 40 : i64], 1 : i64, [@s18.result, 48 : i64], [@s19.operand1, 48 : i64], [@s19.result, 48 : i64], 1 : i64, [@s18.result, 56 : i64], [@s19.operand1, 56 : i64], [@s19.result, 56 : i64], 1 : i64], tiles = "0 to 3"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s18, buffer = @s18.result, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, op = "tile.matmul", source = "124:3", type = tensor<4x16xf32>}
// CHECK-NEXT: exchange.probe {after = @s18, buffer = @s19.result, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "127:3", type = tensor<4x16xf32>}
// CHECK-NEXT: %0 = exchange.host_output {buffer = @s19.result, mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<4x16xf32>
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
