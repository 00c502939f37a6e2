// The machine dialect in its custom form, round-tripped byte for byte, and
// in its generic form read back to the same IR: the readable listings
// (memory maps, code, exchange rows) and the package ops (package with its
// nn source text in two pieces, host streams, images, per-tile data). The
// module is convert-exchange-to-machine{print-rows=true}'s for an nn model
// (bias + relu on test4) with that model added by hand as the source: it is
// a valid package, which ipu-translate writes and ipu-run runs against it.
// RUN: ipu-opt %s > %t && ipu-opt %t | diff %t -
// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt --mlir-print-op-generic %s > %t.generic && ipu-opt %t.generic | diff %t -
// RUN: FileCheck %s --check-prefix=GENERIC < %t.generic
// RUN: ipu-translate --to-ipuexe %s -o %t.ipuexe && ipu-translate --from-ipuexe %t.ipuexe | FileCheck %s --check-prefix=PACKAGE
// RUN: ipu-run %t.ipuexe --device-lock %t.lock 2>/dev/null | FileCheck %s --check-prefix=DEVICE

// CHECK: machine.memory_map {buffers = ["0x80000 48 B input0", {{.*}}], free = 540480 : i64, tiles = "0, 3", used = 192 : i64}
// CHECK: machine.code {code_bytes = 352 : i64, exec = "0x4c000 to 0x4c164", kernels = ["main", "ew_relu_f32_n2", "rows_add_row_vector_f32_r1_c2"], program = ["x0: exch", {{.*}}], tiles = "0, 3"}
// CHECK: machine.exchange_row {entries = ["@0 send 0x80030 4 B", "@7 select tile 1", "@7 capture 0x80064 4 B"], phase = "x0", tiles = "0"}
// CHECK: machine.package "test4" {compiler_version = "0.1.0", {{.*}}, source = ["func.func @main(%x: tensor<2x4xf32> {{.*}}", "{{.*}}return %y : tensor<2x4xf32>\0A}\0A"], source_sha256 =
// CHECK: machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x80000", len = 8 : i64, offset = 0 : i64, stride = 8 : i64, tiles = "0 to 3"}], shape = array<i64: 2, 4>}
// CHECK: machine.image tiles "0, 3" {code = "0x{{[0-9a-f]+}}", code_address = "0x4c000", data = [], entries = {main = "0x4c000"}, zero = []}
// CHECK: machine.tile_data {address = "0x4c168", bytes = "0x{{[0-9a-f]+}}", tile = 0 : i64}
// GENERIC: "machine.memory_map"() <{buffers = [
// GENERIC: "machine.package"() <{compiler_version = "0.1.0",
// GENERIC: "machine.image"() <{code = "0x
// PACKAGE: machine.package "test4" {compiler_version = "0.1.0", {{.*}}, source = "func.func @main(%x: tensor<2x4xf32> {{.*}} return %y : tensor<2x4xf32>\0A}\0A", source_sha256 =
// PACKAGE: machine.image tiles "0, 3"
// PACKAGE: machine.image tiles "1 to 2"
// DEVICE: numericalTest=PASS
// DEVICE-NEXT: tiles=4 hardwareTest=PASS

module attributes {ipu.target = "test4"} {
  machine.memory_map {buffers = ["0x80000 48 B input0", "0x80000 48 B s2.result", "0x80030 48 B input1", "0x80060 48 B s1.operand1", "0x80090 48 B s1.result"], free = 540480 : i64, tiles = "0, 3", used = 192 : i64}
  machine.memory_map {buffers = ["0x80000 48 B input0", "0x80000 48 B s2.result", "0x80030 48 B input1", "0x80030 48 B s1.result", "0x80060 48 B s1.operand1"], free = 540528 : i64, tiles = "1 to 2", used = 144 : i64}
  machine.code {code_bytes = 352 : i64, exec = "0x4c000 to 0x4c164", kernels = ["main", "ew_relu_f32_n2", "rows_add_row_vector_f32_r1_c2"], program = ["x0: exch", "s1: main.memcpy, rows_add_row_vector_f32_r1_c2.rows", "s2: ew_relu_f32_n2.elementwise"], tiles = "0, 3"}
  machine.code {code_bytes = 340 : i64, exec = "0x4c000 to 0x4c154", kernels = ["main", "ew_relu_f32_n2", "rows_add_row_vector_f32_r1_c2"], program = ["x0: exch", "s1: rows_add_row_vector_f32_r1_c2.rows", "s2: ew_relu_f32_n2.elementwise"], tiles = "1 to 2"}
  machine.exchange_row {entries = ["@0 send 0x80030 4 B", "@7 select tile 1", "@7 capture 0x80064 4 B"], phase = "x0", tiles = "0"}
  machine.exchange_row {entries = ["@1 send 0x80030 4 B", "@7 select tile 3", "@7 capture 0x80064 4 B", "@8 select tile 2", "@8 capture 0x80060 4 B"], phase = "x0", tiles = "1"}
  machine.exchange_row {entries = ["@1 send 0x80030 4 B", "@7 select tile 0", "@7 capture 0x80060 8 B", "@8 select tile 1"], phase = "x0", tiles = "2"}
  machine.exchange_row {entries = ["@0 send 0x80030 4 B", "@7 select tile 2", "@7 capture 0x80060 4 B"], phase = "x0", tiles = "3"}
  machine.package "test4" {compiler_version = "0.1.0", entry_points = [{command = 0 : i64, name = "main", phases = 3 : i64}], memory_base = "0x4c000", memory_bytes = 638976 : i64, source = ["func.func @main(%x: tensor<2x4xf32> {ipu.name = \22x\22}, %b: tensor<4xf32> {ipu.name = \22b\22}) -> (tensor<2x4xf32> {ipu.name = \22y\22}) {\0A  %s =", " nn.add %x, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>\0A  %y = nn.relu %s : tensor<2x4xf32>\0A  return %y : tensor<2x4xf32>\0A}\0A"], source_sha256 = "e74a359f14db2ea27c7466e52edf00bc8e7198d29a2f60f4bb253e86016f46dd", steps = [{cycles = 109 : i64, kind = "exchange", label = "x0 operand #1 of s1 tile.map (horizon 9, lower bound 2, compact-streams)"}, {cycles = 220 : i64, kind = "compute", label = "s1 tile.map add"}, {cycles = 134 : i64, kind = "compute", label = "s2 tile.map relu"}], target_sha256 = "6ef4d63d25877651ab634404d14104fea5ba8fd15ad9efe473c342b3a97cdc5a", tile_count = 4 : i64}
  machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x80000", len = 8 : i64, offset = 0 : i64, stride = 8 : i64, tiles = "0 to 3"}], shape = array<i64: 2, 4>}
  machine.host_stream "b" {direction = "input", element = "f32", layout = [{address = "0x80030", len = 4 : i64, offset = 0 : i64, stride = 4 : i64, tiles = "0 to 3"}], shape = array<i64: 4>}
  machine.host_stream "y" {direction = "output", element = "f32", layout = [{address = "0x80000", len = 8 : i64, offset = 0 : i64, stride = 8 : i64, tiles = "0 to 3"}], shape = array<i64: 2, 4>}
  machine.image tiles "0, 3" {code = "0x68c11401000001160000003b010000326cc11401000001160a00f02c70c11401000001162f00f02c0100003274c11401000001160b00f02c01000032000000330000101604002016080030160200302e018041140180421a0000f02d0000000088c01401000010300000103000001030000010300000103000001030000000320000f02d00000000000070010270510801006112006055080300550c01006111007066080e006029000020160400301608004016005022080050330800504408ffff6609088002180200602e0044029f0b0040420b0040420880441e0000003108c11401000010300000103000001030000010300000103000001030000000320000f02d0000000000007001027051080100611200605508010061110070660810006029000020160800700102708508008022081000901600809908040030160200750c007033080800b016002b0221002040400880491effff6609fbff6f2a00000031", code_address = "0x4c000", data = [], entries = {main = "0x4c000"}, zero = []}
  machine.tile_data {address = "0x4c168", bytes = "0x7cc10400a0c10400acc10400c0c10400000000000300000000000080300008000400000007000000010000000700004064000800040000003000080060000800040000000000080000000000600008000000000090000800900008000000000000000800", tile = 0 : i64}
  machine.tile_data {address = "0x4c168", bytes = "0x7cc10400a0c10400acc10400c0c10400000000000300000000000080300008000400000007000000020000000700004060000800040000003000080064000800040000000000080000000000600008000000000090000800900008000000000000000800", tile = 3 : i64}
  machine.image tiles "1 to 2" {code = "0x58c11401000001160000003b010000325cc11401000001162e00f02c0100003260c11401000001160a00f02c01000032000000330000101604002016080030160200302e018041140180421a0000f02d78c01401000010300000103000001030000010300000103000001030000000320000f02d00000000000070010270510801006112006055080300550c01006111007066080e006029000020160400301608004016005022080050330800504408ffff6609088002180200602e0044029f0b0040420b0040420880441e00000031f8c01401000010300000103000001030000010300000103000001030000000320000f02d0000000000007001027051080100611200605508010061110070660810006029000020160800700102708508008022081000901600809908040030160200750c007033080800b016002b0221002040400880491effff6609fbff6f2a00000031", code_address = "0x4c000", data = [], entries = {main = "0x4c000"}, zero = []}
  machine.tile_data {address = "0x4c158", bytes = "0x68c10400a0c10400b4c104000000000005000000010000803000080004000000070000000300000007000040640008000400000008000000020000000800004060000800040000000000080000000000600008000000000030000800300008000000000000000800", tile = 1 : i64}
  machine.tile_data {address = "0x4c158", bytes = "0x68c1040094c10400a8c104000000000004000000010000803000080004000000070000000000000007000040600008000800000008000000010000000000080000000000600008000000000030000800300008000000000000000800", tile = 2 : i64}
}
