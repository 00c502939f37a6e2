// Malformed package ops are diagnostics at the op (the op verifiers decode
// every attribute).
// RUN: ipu-opt --split-input-file --verify-diagnostics %s

// expected-error@+1 {{'machine.image' op attribute 'code': invalid hex digit `g` at position 3 of the bytes}}
machine.image tiles "0" {code_address = "0x4c000", code = "0x000g", entries = {}, zero = [], data = []}

// -----

// expected-error@+1 {{'machine.image' op attribute 'code': odd number of hex digits (3): every byte takes two}}
machine.image tiles "0" {code_address = "0x4c000", code = "0x000", entries = {}, zero = [], data = []}

// -----

// expected-error@+1 {{'machine.image' op attribute 'tiles': `4 to 2` is not a run}}
machine.image tiles "0, 4 to 2" {code_address = "0x4c000", code = "0x", entries = {}, zero = [], data = []}

// -----

// expected-error@+1 {{'machine.image' op attribute 'code_address': an address is written `0x` and hex digits, got `4c000`}}
machine.image tiles "0" {code_address = "4c000", code = "0x", entries = {}, zero = [], data = []}

// -----

// expected-error@+1 {{'machine.image' op attribute 'entries': entry `main`: `0xzz` is not a hex address}}
machine.image tiles "0" {code_address = "0x4c000", code = "0x", entries = {main = "0xzz"}, zero = [], data = []}

// -----

// expected-error@+1 {{'machine.image' op data[0]: `bytes`: bytes must be written `0x` followed by hex digits}}
machine.image tiles "0" {code_address = "0x4c000", code = "0x", entries = {}, zero = [], data = [{address = "0x80000", bytes = "ff"}]}

// -----

// expected-error@+1 {{'machine.image' op zero[0] has an unknown key `length` (expected address, len)}}
machine.image tiles "0" {code_address = "0x4c000", code = "0x", entries = {}, zero = [{address = "0x80000", length = 4 : i64}], data = []}

// -----

// expected-error@+1 {{'machine.host_stream' op attribute 'element': unknown element type `f64`}}
machine.host_stream "x" {direction = "input", element = "f64", shape = array<i64: 4>, layout = []}

// -----

// expected-error@+1 {{'machine.host_stream' op layout[0] has no `len`}}
machine.host_stream "x" {direction = "input", element = "f32", shape = array<i64: 4>, layout = [{tile = 0 : i64, address = "0x90000", offset = 0 : i64}]}

// -----

// expected-error@+1 {{'machine.host_stream' op attribute 'direction': `both` is neither `input` nor `output`}}
machine.host_stream "x" {direction = "both", element = "f32", shape = array<i64: 4>, layout = []}

// -----

// expected-error@+1 {{'machine.package' op attribute 'target_sha256': a SHA-256 is 64 hex digits, got `abc`}}
machine.package "test4" {compiler_version = "0.1.0", target_sha256 = "abc", tile_count = 4 : i64, memory_base = "0x4c000", memory_bytes = 638976 : i64, source_sha256 = "1111111111111111111111111111111111111111111111111111111111111111", entry_points = [], steps = []}

// -----

// expected-error@+1 {{'machine.package' op steps[0]: unknown step kind `nap` (compute, sync, exchange, host_exchange)}}
machine.package "test4" {compiler_version = "0.1.0", target_sha256 = "0000000000000000000000000000000000000000000000000000000000000000", tile_count = 4 : i64, memory_base = "0x4c000", memory_bytes = 638976 : i64, source_sha256 = "1111111111111111111111111111111111111111111111111111111111111111", entry_points = [], steps = [{kind = "nap", label = "zz"}]}

// -----

// expected-error@+1 {{requires attribute 'memory_bytes'}}
machine.package "test4" {compiler_version = "0.1.0", target_sha256 = "0000000000000000000000000000000000000000000000000000000000000000", tile_count = 4 : i64, memory_base = "0x4c000", source_sha256 = "1111111111111111111111111111111111111111111111111111111111111111", entry_points = [], steps = []}

// -----

// expected-error@+1 {{'machine.tile_data' op attribute 'tile' must be an integer in the range of u32}}
machine.tile_data {tile = -1 : i64, address = "0x80000", bytes = "0x00"}
