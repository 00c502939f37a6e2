// A package written by hand as machine-dialect IR on the 4-tile test target:
// ipu-translate writes it as an .ipuexe that LLVM's tools read, prints the
// file back as the same IR, and the IR -> file -> IR -> file round trip is
// byte-exact.
// RUN: ipu-translate --to-ipuexe %s -o %t.ipuexe
// RUN: llvm-readelf -h -S -n %t.ipuexe | FileCheck %s --check-prefix=ELF
// RUN: ipu-translate --from-ipuexe %t.ipuexe | FileCheck %s --check-prefix=IR
// RUN: ipu-translate --from-ipuexe %t.ipuexe -o %t.mlir
// RUN: ipu-translate --to-ipuexe %t.mlir -o %t2.ipuexe
// RUN: cmp %t.ipuexe %t2.ipuexe
// RUN: ipu-translate --from-ipuexe %t2.ipuexe | diff %t.mlir -

// ELF: Class: ELF64
// ELF: Type: EXEC (Executable file)
// ELF: Machine: 4950
// ELF: .note.ipu.package
// ELF: .ipu.meta
// ELF: .ipu.image.0
// ELF: .ipu.image.1
// ELF: .ipu.tile.2
// ELF: Owner
// ELF-NEXT: IPU

// IR: module {
// IR-NEXT: machine.package "test4" {compiler_version = "0.1.0", entry_points = [{command = 0 : i64, name = "main", phases = 2 : i64}], memory_base = "0x4c000", memory_bytes = 638976 : i64, source_sha256 = "1111111111111111111111111111111111111111111111111111111111111111", steps = [{cycles = 100 : i64, kind = "compute", label = "@relu"}, {kind = "sync", label = "sync"}], target_sha256 = "0000000000000000000000000000000000000000000000000000000000000000", tile_count = 4 : i64}
// IR-NEXT: machine.host_stream "x" {direction = "input", element = "f16", layout = [{address = "0x90000", len = 8 : i64, offset = 0 : i64, stride = 8 : i64, tiles = "0 to 2 step 2"}], shape = array<i64: 2, 4>}
// IR-NEXT: machine.host_stream "y" {direction = "output", element = "f16", layout = [{address = "0xa0000", len = 8 : i64, offset = 8 : i64, tile = 2 : i64}, {address = "0xa0000", len = 8 : i64, offset = 0 : i64, tile = 0 : i64}], shape = array<i64: 2, 4>}
// IR-NEXT: machine.image tiles "0" {code = "0x0000000033000000", code_address = "0x4c000", data = [{address = "0x80000", bytes = "0x0102030405060708"}], entries = {main = "0x4c000"}, zero = [{address = "0xa0000", len = 8 : i64}]}
// IR-NEXT: machine.image tiles "2" {code = "0x000000003300000000000000", code_address = "0x4c000", data = [], entries = {main = "0x4c004"}, zero = []}
// IR-NEXT: machine.tile_data {address = "0x80000", bytes = "0xcafe", tile = 2 : i64}
// IR-NEXT: machine.tile_data {address = "0x80010", bytes = "0xbeef", tile = 2 : i64}
// IR-NEXT: }

machine.package "test4" {
  compiler_version = "0.1.0",
  target_sha256 = "0000000000000000000000000000000000000000000000000000000000000000",
  tile_count = 4 : i64, memory_base = "0x4c000", memory_bytes = 638976 : i64,
  source_sha256 = "1111111111111111111111111111111111111111111111111111111111111111",
  entry_points = [{name = "main", command = 0 : i64, phases = 2 : i64}],
  steps = [{kind = "compute", label = "@relu", cycles = 100 : i64}, {kind = "sync", label = "sync"}]
}
machine.host_stream "x" {direction = "input", element = "f16", shape = array<i64: 2, 4>,
  layout = [{tiles = "0 to 2 step 2", address = "0x90000", offset = 0 : i64, stride = 8 : i64, len = 8 : i64}]}
machine.host_stream "y" {direction = "output", element = "f16", shape = array<i64: 2, 4>,
  layout = [{tile = 2 : i64, address = "0xa0000", offset = 8 : i64, len = 8 : i64},
            {tile = 0 : i64, address = "0xa0000", offset = 0 : i64, len = 8 : i64}]}
machine.image tiles "0" {code_address = "0x4c000", code = "0x0000000033000000", entries = {main = "0x4c000"},
  zero = [{address = "0xa0000", len = 8 : i64}], data = [{address = "0x80000", bytes = "0x0102030405060708"}]}
machine.image tiles "2" {code_address = "0x4c000", code = "0x000000003300000000000000", entries = {main = "0x4c004"},
  zero = [], data = []}
machine.tile_data {tile = 2 : i64, address = "0x80000", bytes = "0xcafe"}
machine.tile_data {tile = 2 : i64, address = "0x80010", bytes = "0xBEEF"}
