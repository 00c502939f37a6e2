// The machine dialect's verifier: one rule per chunk, for the readable
// listings and the package ops (more of the package ops' attribute rules:
// lit/Target/Package/invalid.mlir; rules over the whole package, checked when
// it is written: lit/Target/Package/invalid-package.test).
// RUN: ipu-opt --split-input-file --verify-diagnostics %s

// memory_map_tiles
// expected-error@+1 {{'machine.memory_map' op attribute 'tiles': `0 to` is not `N`, `A to B` or `A to B step S` in the tile set `0 to`}}
machine.memory_map {buffers = [], free = 0 : i64, tiles = "0 to", used = 0 : i64}

// -----

// memory_map_no_tiles
// expected-error@+1 {{'machine.memory_map' op attribute 'tiles' must name at least one tile}}
machine.memory_map {buffers = [], free = 0 : i64, tiles = "none", used = 0 : i64}

// -----

// memory_map_used
// expected-error@+1 {{'machine.memory_map' op attribute 'used' must be an integer in the range of u32, not -48 : i64}}
machine.memory_map {buffers = [], free = 0 : i64, tiles = "0", used = -48 : i64}

// -----

// memory_map_buffers
// expected-error@+1 {{'machine.memory_map' op attribute 'buffers' failed to satisfy constraint: array of string attributes (got [48 : i64])}}
machine.memory_map {buffers = [48], free = 0 : i64, tiles = "0", used = 48 : i64}

// -----

// code_bytes
// expected-error@+1 {{'machine.code' op attribute 'code_bytes' must be an integer in the range of u32, not -1 : i64}}
machine.code {code_bytes = -1 : i64, exec = "0x4c000 to 0x4c164", kernels = ["main"], tiles = "0"}

// -----

// code_kernels
// expected-error@+1 {{'machine.code' op attribute 'kernels' failed to satisfy constraint: array of string attributes (got [@main])}}
machine.code {code_bytes = 352 : i64, exec = "0x4c000 to 0x4c164", kernels = [@main], tiles = "0"}

// -----

// code_program
// expected-error@+1 {{'machine.code' op attribute 'program' failed to satisfy constraint: array of string attributes (got "s1: -")}}
machine.code {code_bytes = 352 : i64, exec = "0x4c000 to 0x4c164", kernels = ["main"], program = "s1: -", tiles = "0"}

// -----

// exchange_row_tiles
// expected-error@+1 {{'machine.exchange_row' op attribute 'tiles': `2 to 2` is not a run: it needs first < last and a step >= 1 dividing last - first}}
machine.exchange_row {entries = [], phase = "x0", tiles = "2 to 2"}

// -----

// exchange_row_entries
// expected-error@+1 {{'machine.exchange_row' op attribute 'entries' failed to satisfy constraint: array of string attributes (got [0 : i64])}}
machine.exchange_row {entries = [0], phase = "x0", tiles = "2"}

// -----

// exchange_row_phase
// expected-error@+1 {{'machine.exchange_row' op requires attribute 'phase'}}
machine.exchange_row {entries = [], tiles = "2"}

// -----

// package_memory_base
// expected-error@+1 {{'machine.package' op attribute 'memory_base': address `0x1234567890` does not fit 32 bits}}
machine.package "test4" {compiler_version = "0.1.0", entry_points = [{command = 0 : i64, name = "main", phases = 1 : i64}], memory_base = "0x1234567890", memory_bytes = 638976 : i64, source_sha256 = "7327610df1dcd041c81885a5713416c3ea60ca4dd53ce615c59a3c596ffba747", steps = [{cycles = 60 : i64, kind = "compute", label = "@relu"}], target_sha256 = "6ef4d63d25877651ab634404d14104fea5ba8fd15ad9efe473c342b3a97cdc5a", tile_count = 4 : i64}

// -----

// package_tile_count
// expected-error@+1 {{'machine.package' op attribute 'tile_count' must be an integer in the range of u32, not -4 : i64}}
machine.package "test4" {compiler_version = "0.1.0", entry_points = [{command = 0 : i64, name = "main", phases = 1 : i64}], memory_base = "0x4c000", memory_bytes = 638976 : i64, source_sha256 = "7327610df1dcd041c81885a5713416c3ea60ca4dd53ce615c59a3c596ffba747", steps = [{cycles = 60 : i64, kind = "compute", label = "@relu"}], target_sha256 = "6ef4d63d25877651ab634404d14104fea5ba8fd15ad9efe473c342b3a97cdc5a", tile_count = -4 : i64}

// -----

// package_entry_point_key
// expected-error@+1 {{'machine.package' op entry_points[0] has an unknown key `args` (expected name, command, phases)}}
machine.package "test4" {compiler_version = "0.1.0", entry_points = [{command = 0 : i64, name = "main", phases = 1 : i64, args = 0 : i64}], memory_base = "0x4c000", memory_bytes = 638976 : i64, source_sha256 = "7327610df1dcd041c81885a5713416c3ea60ca4dd53ce615c59a3c596ffba747", steps = [{cycles = 60 : i64, kind = "compute", label = "@relu"}], target_sha256 = "6ef4d63d25877651ab634404d14104fea5ba8fd15ad9efe473c342b3a97cdc5a", tile_count = 4 : i64}

// -----

// package_entry_point_name
// expected-error@+1 {{'machine.package' op entry_points[0] has no `name`}}
machine.package "test4" {compiler_version = "0.1.0", entry_points = [{command = 0 : i64, phases = 1 : i64}], memory_base = "0x4c000", memory_bytes = 638976 : i64, source_sha256 = "7327610df1dcd041c81885a5713416c3ea60ca4dd53ce615c59a3c596ffba747", steps = [{cycles = 60 : i64, kind = "compute", label = "@relu"}], target_sha256 = "6ef4d63d25877651ab634404d14104fea5ba8fd15ad9efe473c342b3a97cdc5a", tile_count = 4 : i64}

// -----

// package_entry_points_not_dictionaries
// expected-error@+1 {{'machine.package' op attribute 'entry_points' failed to satisfy constraint: array of dictionary attributes (got ["main"])}}
machine.package "test4" {compiler_version = "0.1.0", entry_points = ["main"], memory_base = "0x4c000", memory_bytes = 638976 : i64, source_sha256 = "7327610df1dcd041c81885a5713416c3ea60ca4dd53ce615c59a3c596ffba747", steps = [{cycles = 60 : i64, kind = "compute", label = "@relu"}], target_sha256 = "6ef4d63d25877651ab634404d14104fea5ba8fd15ad9efe473c342b3a97cdc5a", tile_count = 4 : i64}

// -----

// package_step_cycles
// expected-error@+1 {{'machine.package' op steps[0]: `cycles` must be an integer in the range of i64, not "60"}}
machine.package "test4" {compiler_version = "0.1.0", entry_points = [{command = 0 : i64, name = "main", phases = 1 : i64}], memory_base = "0x4c000", memory_bytes = 638976 : i64, source_sha256 = "7327610df1dcd041c81885a5713416c3ea60ca4dd53ce615c59a3c596ffba747", steps = [{cycles = "60", kind = "compute", label = "@relu"}], target_sha256 = "6ef4d63d25877651ab634404d14104fea5ba8fd15ad9efe473c342b3a97cdc5a", tile_count = 4 : i64}

// -----

// package_source_sha256
// expected-error@+1 {{'machine.package' op attribute 'source_sha256': a SHA-256 is 64 hex digits, got `x327610df1dcd041c81885a5713416c3ea60ca4d...`}}
machine.package "test4" {compiler_version = "0.1.0", entry_points = [{command = 0 : i64, name = "main", phases = 1 : i64}], memory_base = "0x4c000", memory_bytes = 638976 : i64, source_sha256 = "x327610df1dcd041c81885a5713416c3ea60ca4dd53ce615c59a3c596ffba747", steps = [{cycles = 60 : i64, kind = "compute", label = "@relu"}], target_sha256 = "6ef4d63d25877651ab634404d14104fea5ba8fd15ad9efe473c342b3a97cdc5a", tile_count = 4 : i64}

// -----

// package_source_pieces
// expected-error@+1 {{'machine.package' op attribute 'source' failed to satisfy constraint: string attribute, or array of string attributes (a long string in pieces) (got ["func.func", 7 : i64])}}
machine.package "test4" {compiler_version = "0.1.0", entry_points = [{command = 0 : i64, name = "main", phases = 1 : i64}], memory_base = "0x4c000", memory_bytes = 638976 : i64, source_sha256 = "7327610df1dcd041c81885a5713416c3ea60ca4dd53ce615c59a3c596ffba747", steps = [{cycles = 60 : i64, kind = "compute", label = "@relu"}], target_sha256 = "6ef4d63d25877651ab634404d14104fea5ba8fd15ad9efe473c342b3a97cdc5a", tile_count = 4 : i64, source = ["func.func", 7]}

// -----

// host_stream_shape
// expected-error@+1 {{'machine.host_stream' op attribute 'shape' failed to satisfy constraint: array<i64: ...> attribute (got [2 : i64, 4 : i64])}}
machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x90000", len = 16 : i64, offset = 0 : i64, stride = 16 : i64, tiles = "0 to 1"}], shape = [2, 4]}

// -----

// host_stream_piece_key
// expected-error@+1 {{'machine.host_stream' op layout[0] has an unknown key `step` (expected tiles, address, offset, stride, len)}}
machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x90000", len = 16 : i64, offset = 0 : i64, stride = 16 : i64, step = 1 : i64, tiles = "0 to 1"}], shape = array<i64: 2, 4>}

// -----

// host_stream_piece_tiles
// expected-error@+1 {{'machine.host_stream' op layout[0]: `1 to 0` is not a run: it needs first < last and a step >= 1 dividing last - first}}
machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x90000", len = 16 : i64, offset = 0 : i64, stride = 16 : i64, tiles = "1 to 0"}], shape = array<i64: 2, 4>}

// -----

// host_stream_single_piece
// expected-error@+1 {{'machine.host_stream' op layout[0] has an unknown key `stride` (expected tile, address, offset, len)}}
machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x90000", len = 16 : i64, offset = 0 : i64, tile = 0 : i64, stride = 16 : i64}], shape = array<i64: 2, 4>}

// -----

// host_stream_address
// expected-error@+1 {{'machine.host_stream' op layout[0]: `address`: an address is written `0x` and hex digits, got `90000`}}
machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "90000", len = 16 : i64, offset = 0 : i64, stride = 16 : i64, tiles = "0 to 1"}], shape = array<i64: 2, 4>}

// -----

// host_stream_offset
// expected-error@+1 {{'machine.host_stream' op layout[0]: `offset` must be an integer in the range of i64, not "0"}}
machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x90000", len = 16 : i64, offset = "0", stride = 16 : i64, tiles = "0 to 1"}], shape = array<i64: 2, 4>}

// -----

// host_stream_grid_arity
// expected-error@+1 {{'machine.host_stream' op layout[0]: `repeat`[1] has 3 values, not 4 (count, tile step, address step, offset step)}}
machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x90000", len = 4 : i64, offset = 0 : i64, repeat = [array<i64: 2, 1, 0, 16>, array<i64: 4, 0, 4>], tile = 0 : i64}], shape = array<i64: 2, 8>}

// -----

// host_stream_grid_count
// expected-error@+1 {{'machine.host_stream' op layout[0]: `repeat`[0]: count 0 (a dimension repeats at least once)}}
machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x90000", len = 4 : i64, offset = 0 : i64, repeat = [array<i64: 0, 1, 0, 16>], tile = 0 : i64}], shape = array<i64: 2, 8>}

// -----

// host_stream_grid_step
// expected-error@+1 {{'machine.host_stream' op layout[0]: `repeat`[0]: tile step -1 is outside 0..=4294967295}}
machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x90000", len = 4 : i64, offset = 0 : i64, repeat = [array<i64: 2, -1, 0, 16>], tile = 1 : i64}], shape = array<i64: 2, 8>}

// -----

// host_stream_grid_dims
// expected-error@+1 {{'machine.host_stream' op layout[0]: `repeat`[0] must be array<i64: count, tile step, address step, offset step>}}
machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x90000", len = 4 : i64, offset = 0 : i64, repeat = [[2, 1, 0, 16]], tile = 0 : i64}], shape = array<i64: 2, 8>}

// -----

// host_stream_grid_key
// expected-error@+1 {{'machine.host_stream' op layout[0] has an unknown key `tiles` (expected tile, address, offset, len, repeat)}}
machine.host_stream "x" {direction = "input", element = "f32", layout = [{address = "0x90000", len = 4 : i64, offset = 0 : i64, repeat = [array<i64: 2, 1, 0, 16>], tile = 0 : i64, tiles = "0 to 1"}], shape = array<i64: 2, 8>}

// -----

// probe_grid
// expected-error@+1 {{'machine.probe' op layout[0]: `repeat` must be an array of array<i64: count, tile step, address step, offset step>}}
machine.probe {element = "f32", layout = [{address = "0x90000", len = 4 : i64, offset = 0 : i64, repeat = array<i64: 2, 1, 0, 16>, tile = 0 : i64}], op = "tile.map", shape = array<i64: 2, 8>, source = "3:3", step = 1 : i64}

// -----

// image_entries
// expected-error@+1 {{'machine.image' op attribute 'entries' failed to satisfy constraint: dictionary attribute (got ["main"])}}
machine.image tiles "0 to 1" {code = "0x14c0", code_address = "0x4c000", data = [], entries = ["main"], zero = [{address = "0xa0000", len = 16 : i64}]}

// -----

// image_entry_address
// expected-error@+1 {{'machine.image' op attribute 'entries': entry `main` must be a hex address string}}
machine.image tiles "0 to 1" {code = "0x14c0", code_address = "0x4c000", data = [], entries = {main = 311296 : i64}, zero = [{address = "0xa0000", len = 16 : i64}]}

// -----

// image_zero_len
// expected-error@+1 {{'machine.image' op zero[0] has no `len`}}
machine.image tiles "0 to 1" {code = "0x14c0", code_address = "0x4c000", data = [], entries = {main = "0x4c000"}, zero = [{address = "0xa0000"}]}

// -----

// image_code_pieces
// expected-error@+1 {{'machine.image' op attribute 'code' failed to satisfy constraint: string attribute, or array of string attributes (a long string in pieces) (got ["0x14", 192 : i64])}}
machine.image tiles "0 to 1" {code = ["0x14", 192], code_address = "0x4c000", data = [], entries = {main = "0x4c000"}, zero = [{address = "0xa0000", len = 16 : i64}]}

// -----

// image_data_address
// expected-error@+1 {{'machine.image' op data[0]: `address`: address `0xfffffffff` does not fit 32 bits}}
machine.image tiles "0 to 1" {code = "0x14c0", code_address = "0x4c000", data = [{address = "0xfffffffff", bytes = "0x00"}], entries = {main = "0x4c000"}, zero = [{address = "0xa0000", len = 16 : i64}]}

// -----

// tile_data_address
// expected-error@+1 {{'machine.tile_data' op attribute 'address': `0x` is not a hex address}}
machine.tile_data {address = "0x", bytes = "0x00", tile = 1 : i64}

// -----

// tile_data_bytes
// expected-error@+1 {{'machine.tile_data' op attribute 'bytes': bytes must be written `0x` followed by hex digits, got `00`}}
machine.tile_data {address = "0x4c168", bytes = "00", tile = 1 : i64}

// -----

// tile_data_tile_type
// expected-error@+1 {{'machine.tile_data' op attribute 'tile' failed to satisfy constraint: 64-bit integer attribute (got 1 : i32)}}
machine.tile_data {address = "0x4c168", bytes = "0x00", tile = 1 : i32}

// -----

// host_stream_output_converts
// expected-error@+1 {{'machine.host_stream' op attribute 'host_element': host f8E4M3FN elements to f16 in a stream of direction `output`: a load or input stream converts only by an exact widening, an output stream only by its inverse to an 8- or 16-bit integer}}
machine.host_stream "w" {direction = "output", element = "f16", host_element = "f8E4M3FN", layout = [{address = "0x90000", len = 16 : i64, offset = 0 : i64, stride = 16 : i64, tiles = "0 to 1"}], shape = array<i64: 2, 8>}

// -----

// host_stream_load_narrows
// expected-error@+1 {{'machine.host_stream' op attribute 'host_element': host f32 elements to f16 in a stream of direction `load`: a load or input stream converts only by an exact widening, an output stream only by its inverse to an 8- or 16-bit integer}}
machine.host_stream "w" {direction = "load", element = "f16", host_element = "f32", layout = [{address = "0x90000", len = 16 : i64, offset = 0 : i64, stride = 16 : i64, tiles = "0 to 1"}], shape = array<i64: 2, 8>}

// -----

// host_stream_unknown_host_element
// expected-error@+1 {{'machine.host_stream' op attribute 'host_element': unknown element type `f12`}}
machine.host_stream "w" {direction = "load", element = "f16", host_element = "f12", layout = [{address = "0x90000", len = 16 : i64, offset = 0 : i64, stride = 16 : i64, tiles = "0 to 1"}], shape = array<i64: 2, 8>}

// -----

// host_stream_output_narrows_to_i32
// expected-error@+1 {{'machine.host_stream' op attribute 'host_element': host i32 elements to f32 in a stream of direction `output`: a load or input stream converts only by an exact widening, an output stream only by its inverse to an 8- or 16-bit integer}}
machine.host_stream "y" {direction = "output", element = "f32", host_element = "i32", layout = [{address = "0x90000", len = 16 : i64, offset = 0 : i64, stride = 16 : i64, tiles = "0 to 1"}], shape = array<i64: 2, 4>}
