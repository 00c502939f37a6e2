// tile -> exchange for integers and booleans (test16), each phase's horizon
// and endpoint lower bound pinned: the mask's casts, the float multiply and
// the select read their operands where the host streams put them (the i1
// mask stays on its tiles between its cast and its readers); the i32 row
// (position ids' shift) is broadcast to every row's tile by the exchange,
// unpacked at the result's block, as the float elementwise kernels' are;
// every intew call's record is in0, in1, in2, out (unused words 0).
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | FileCheck %s
// RUN: ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange %s | ipu-opt --mlir-print-op-generic | ipu-opt > /dev/null
// Pinned with scripts/pin-exchange-checks.py THIS -- ipu-opt --target test16 --convert-nn-to-tile --convert-tile-to-exchange

// CHECK: attributes {exchange.compute_cycles = 248 : i64, exchange.estimated_cycles = 718 : i64, exchange.exchange_cycles = 200 : i64, exchange.steps = 3 : i64}
// CHECK: exchange.buffer {bytes = 24 : i64, sym_name = "input0", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, interleaved, sym_name = "input1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, sym_name = "input2", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 8 : i64, sym_name = "input3", tiles = "0 to 11"}
// CHECK-NEXT: exchange.buffer {bytes = 3 : i64, sym_name = "s1.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, interleaved, sym_name = "s2.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, sym_name = "s3.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, reads = [{ranges = array<i64: 1, 12, 12>, tiles = "0 to 15"}], sym_name = "s4.operand1", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 12 : i64, sym_name = "s4.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 24 : i64, sym_name = "const0", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 24 : i64, sym_name = "s5.operand2", tiles = "0 to 15"}
// CHECK-NEXT: exchange.buffer {bytes = 24 : i64, sym_name = "s5.result", tiles = "0 to 15"}
// CHECK-NEXT: exchange.host_input %arg0 {buffer = @input0, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : tensor<2x24xi64>
// CHECK-NEXT: exchange.host_input %arg1 {buffer = @input1, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : tensor<2x24xf32>
// CHECK-NEXT: exchange.host_input %arg2 {buffer = @input2, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}} : tensor<2x24xi32>
// CHECK-NEXT: exchange.host_input %arg3 {buffer = @input3, mapping = {grid = array<i64: 16>, tiles = array<i64: 0, 1>}} : tensor<24xi32>
// CHECK-NEXT: exchange.constant {buffer = @const0, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, placements = [{buffer = @s5.operand2, rects = [{count = 8 : i64, hi = array<i64: 1, 3>, lo = array<i64: 0, 0>, shift = array<i64: 1, 0, 3>, tiles = "0"}, {count = 8 : i64, hi = array<i64: 2, 3>, lo = array<i64: 1, 0>, shift = array<i64: 1, 0, 3>, tiles = "8"}]}], value = dense<0> : tensor<2x24xi64>}
// CHECK-NEXT: exchange.compute_set attributes {bound = 6 : i64, cycles = 143 : i64, label = "tile.map cast, tile.map cast, tile.map mul", sym_name = "s1"} {
// CHECK-NEXT: exchange.vertex {kernel = "intew", name = "int_tobool_w8_n3", params = {N = 3 : i64, OP = 16 : i64, W = 8 : i64}, record = [@input0, 0 : i64, 0 : i64, @s1.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "intew", name = "int_booltofloat_w4_n3", params = {N = 3 : i64, OP = 18 : i64, W = 4 : i64}, record = [@s1.result, 0 : i64, 0 : i64, @s2.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "elementwise", name = "ew_mul_f32_n4", params = {N = 4 : i64, OP = 2 : i64, TYPE = 0 : i64}, record = [@input1, @s2.result, @s3.result, 1 : i64, [@input1, 8 : i64], [@s2.result, 8 : i64], [@s3.result, 8 : i64], 1 : i64, @input1, @s2.result, @s3.result, 0 : i64, @input1, @s2.result, @s3.result, 0 : i64, @input1, @s2.result, @s3.result, 0 : i64, @input1, @s2.result, @s3.result, 0 : i64], tiles = "0 to 15"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s1.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "57:3", type = tensor<2x24xi1>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s2.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "58:3", type = tensor<2x24xf32>}
// CHECK-NEXT: exchange.probe {after = @s1, buffer = @s3.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "59:3", type = tensor<2x24xf32>}
// CHECK-NEXT: exchange.phase attributes {bytes = 180 : i64, gap = 7 : i64, horizon = 10 : i64, initial_horizon = 11 : i64, kind = "compact-streams", local_bytes = 12 : i64, lower_bound = 3 : i64, moves = "operand #1 of s4 tile.map", patterns = ["tiles {1, 4} -> {-1, +7}, 4 B each (2 transfers)", "tiles 2..3 -> {-1, +7}, 8 B each (2 transfers)", "tiles {4, 7} -> {-2, +6}, 4 B each (2 transfers)", "tiles 5..6 -> {-2, +6}, 8 B each (2 transfers)", "tiles {7, 10} -> {-3, +5}, 4 B each (2 transfers)", "tiles 8..9 -> {-3, +5}, 8 B each (2 transfers)", "tile 10 -> tiles {6, 14}, 4 B", "tile 11 -> tiles {7, 15}, 8 B", "... 2 more groups (2 transfers)"], row_words = 14 : i64, sym_name = "x0", transfers = 16 : i64} {
// CHECK-NEXT: exchange.move {dst = @s4.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 4, 0, 0, 1, 2, 0, 8, 8, 0>, array<i64: 1, 0, 0, 0, 0, 2, 2, 1, 0, 0, 8, 1, -4, 1, 2, 1, 8, 4, 0>, array<i64: 1, 0, 0, 0, 0, 2, 4, 0, 0, 4, 4, 1, -8, 1, 2, 2, 8, 8, 0>, array<i64: 1, 0, 0, 0, 0, 2, 5, 1, 0, 0, 8, 1, -4, 1, 2, 3, 8, 4, 0>, array<i64: 1, 0, 0, 0, 0, 2, 7, 0, 0, 4, 4, 1, -8, 1, 2, 4, 8, 8, 0>, array<i64: 1, 0, 0, 0, 0, 2, 8, 1, 0, 0, 8, 1, -4, 1, 2, 5, 8, 4, 0>, array<i64: 1, 0, 0, 0, 0, 2, 10, 0, 0, 4, 4, 1, -8, 1, 2, 6, 8, 8, 0>, array<i64: 1, 0, 0, 0, 0, 1, 11, 0, 0, 0, 8, 0, 0, 1, 2, 7, 8, 4, 0>, array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 8, 0, 0, 1, 1, 8, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 4, 0, 4, 0, 0, 1, 1, 9, 0, 0, 0>], src = @input3}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.compute_set attributes {bound = 5 : i64, cycles = 105 : i64, label = "tile.map add, tile.select", sym_name = "s4"} {
// CHECK-NEXT: exchange.copy {dst = @s4.operand1, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 8, 0, 0, 1, 1, 0, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 1, 0, 4, 0, 4, 0, 0, 1, 1, 1, 0, 0, 0>], src = @input3}
// CHECK-NEXT: exchange.vertex {kernel = "intew", name = "int_add_w4_n3", params = {N = 3 : i64, OP = 0 : i64, W = 4 : i64}, record = [@input2, @s4.operand1, 0 : i64, @s4.result], tiles = "0 to 15"}
// CHECK-NEXT: exchange.vertex {kernel = "intew", name = "int_select_w8_n3", params = {N = 3 : i64, OP = 12 : i64, W = 8 : i64}, record = [@s1.result, @input0, @s5.operand2, @s5.result], tiles = "0 to 15"}
// CHECK-NEXT: }
// CHECK-NEXT: exchange.sync
// CHECK-NEXT: exchange.probe {after = @s4, buffer = @s4.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, op = "tile.map", source = "60:3", type = tensor<2x24xi32>}
// CHECK-NEXT: exchange.probe {after = @s4, buffer = @s5.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, op = "tile.select", source = "62:3", type = tensor<2x24xi64>}
// CHECK-NEXT: %0 = exchange.host_output {buffer = @s3.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, name = "result0"} : tensor<2x24xf32>
// CHECK-NEXT: %1 = exchange.host_output {buffer = @s4.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, name = "result1"} : tensor<2x24xi32>
// CHECK-NEXT: %2 = exchange.host_output {buffer = @s5.result, mapping = {grid = array<i64: 2, 8>, tiles = array<i64: 0, 1>}, name = "result2"} : tensor<2x24xi64>
// CHECK-NEXT: return %0, %1, %2 : tensor<2x24xf32>, tensor<2x24xi32>, tensor<2x24xi64>

func.func @main(%mask: tensor<2x24xi64>, %x: tensor<2x24xf32>, %ids: tensor<2x24xi32>, %shift: tensor<24xi32>) -> (tensor<2x24xf32>, tensor<2x24xi32>, tensor<2x24xi64>) {
  %m = nn.cast %mask : tensor<2x24xi64> -> tensor<2x24xi1>
  %mf = nn.cast %m : tensor<2x24xi1> -> tensor<2x24xf32>
  %xm = nn.mul %x, %mf : (tensor<2x24xf32>, tensor<2x24xf32>) -> tensor<2x24xf32>
  %pos = nn.add %ids, %shift : (tensor<2x24xi32>, tensor<24xi32>) -> tensor<2x24xi32>
  %zero = nn.constant dense<0> : tensor<i64>
  %sel = nn.select %m, %mask, %zero : (tensor<2x24xi1>, tensor<2x24xi64>, tensor<i64>) -> tensor<2x24xi64>
  return %xm, %pos, %sel : tensor<2x24xf32>, tensor<2x24xi32>, tensor<2x24xi64>
}
