// exchange -> machine for integers and booleans (test16): the intew
// kernels are linked into every tile's code (one object for the five
// specialisations' calls, the program's compute sets naming each), the
// buffers of 1-, 4- and 8-byte elements laid out in the memory map, and the
// integer and boolean host streams and probes typed as the IR's (i1 one
// byte each). Lowered at 1 and 2 threads to the same bytes, and run on the
// device against the reference.
// RUN: ipu-opt --target test16 --ipu-lower-to-machine %s | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: env RAYON_NUM_THREADS=1 ipu-opt --target test16 --ipu-lower-to-machine %s -o %t/1.mlir
// RUN: env RAYON_NUM_THREADS=2 ipu-opt --target test16 --ipu-lower-to-machine %s -o %t/2.mlir
// RUN: cmp %t/1.mlir %t/2.mlir
// RUN: ipu-run %s --target test16 --device-lock %t/device.lock 2>/dev/null | FileCheck %s --check-prefix=DEV

// CHECK: machine.memory_map {buffers = ["0x80000 48 B const0", "0x80000 48 B s4.operand1", "0x80030 48 B input0", "0x80060 48 B input1", "0x80060 48 B s4.result", "0x80090 48 B input2", "0x800c0 48 B input3", "0x800c0 48 B s5.result", "0x800f0 48 B s1.result", "0x80120 48 B s2.result", "0x80150 48 B s3.result", "0x80180 48 B s5.operand2"], free = 637760 : i64, tiles = "0 to 11", used = 432 : i64}
// CHECK: machine.memory_map {buffers = ["0x80000 48 B const0", "0x80000 48 B s4.operand1", "0x80030 48 B input0", "0x80060 48 B input1", "0x80060 48 B s4.result", "0x80090 48 B input2", "0x800c0 48 B s1.result", "0x800f0 48 B s2.result", "0x800f0 48 B s5.result", "0x80120 48 B s3.result", "0x80150 48 B s5.operand2"], free = 637856 : i64, tiles = "12 to 15", used = 384 : i64}
// CHECK: machine.code {code_bytes = 492 : i64, exec = "0x4c000 to 0x4c1fc", kernels = ["main", "ew_mul_f32_n4", "int_add_w4_n3", "int_booltofloat_w4_n3", "int_select_w8_n3", "int_tobool_w8_n3"], program = ["s1: int_tobool_w8_n3.intew, int_booltofloat_w4_n3.intew, ew_mul_f32_n4.elementwise", "x0: exch", "s4: int_add_w4_n3.intew, int_select_w8_n3.intew"], tiles = "2 to 15"}
// CHECK: machine.code {code_bytes = 504 : i64, exec = "0x4c000 to 0x4c204", kernels = ["main", "ew_mul_f32_n4", "int_add_w4_n3", "int_booltofloat_w4_n3", "int_select_w8_n3", "int_tobool_w8_n3"], program = ["s1: int_tobool_w8_n3.intew, int_booltofloat_w4_n3.intew, ew_mul_f32_n4.elementwise", "x0: exch, main.memcpy", "s4: int_add_w4_n3.intew, int_select_w8_n3.intew"], tiles = "0 to 1"}
// CHECK: machine.package "test16" {compiler_version = "0.1.0", entry_points = [{command = 0 : i64, name = "main", phases = 3 : i64}]
// CHECK: machine.host_stream "arg0" {direction = "input", element = "i64", layout = [{address = "0x80030", len = 24 : i64, offset = 0 : i64, repeat = [array<i64: 16, 1, 0, 24>], tile = 0 : i64}], shape = array<i64: 2, 24>}
// CHECK: machine.host_stream "result2" {direction = "output", element = "i64", layout = [{address = "0x800c0", len = 24 : i64, offset = 0 : i64, repeat = [array<i64: 12, 1, 0, 24>], tile = 0 : i64}, {address = "0x800f0", len = 24 : i64, offset = 288 : i64, repeat = [array<i64: 4, 1, 0, 24>], tile = 12 : i64}], shape = array<i64: 2, 24>}
// CHECK: machine.probe {element = "i1", layout = [{address = "0x800f0", len = 3 : i64, offset = 0 : i64, repeat = [array<i64: 12, 1, 0, 3>], tile = 0 : i64}, {address = "0x800c0", len = 3 : i64, offset = 36 : i64, repeat = [array<i64: 4, 1, 0, 3>], tile = 12 : i64}], op = "tile.map", shape = array<i64: 2, 24>, source = "{{[0-9]+}}:3", step = 0 : i64}
// DEV: tiles=16 cycles={{[0-9]+}}
// DEV: referenceMaximumAbsoluteError=0.000000 numericalTest=PASS
// DEV-NEXT: {{.*}}hardwareTest=PASS

func.func @main(%mask: tensor<2x24xi64>, %x: tensor<2x24xf32>, %ids: tensor<2x24xi32>, %shift: tensor<24xi32>) -> (tensor<2x24xf32>, tensor<2x24xi32>, tensor<2x24xi64>) {
  %m = nn.cast %mask : tensor<2x24xi64> -> tensor<2x24xi1>
  %mf = nn.cast %m : tensor<2x24xi1> -> tensor<2x24xf32>
  %xm = nn.mul %x, %mf : (tensor<2x24xf32>, tensor<2x24xf32>) -> tensor<2x24xf32>
  %pos = nn.add %ids, %shift : (tensor<2x24xi32>, tensor<24xi32>) -> tensor<2x24xi32>
  %zero = nn.constant dense<0> : tensor<i64>
  %sel = nn.select %m, %mask, %zero : (tensor<2x24xi1>, tensor<2x24xi64>, tensor<i64>) -> tensor<2x24xi64>
  return %xm, %pos, %sel : tensor<2x24xf32>, tensor<2x24xi32>, tensor<2x24xi64>
}
