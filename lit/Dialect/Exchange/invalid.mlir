// The exchange dialect's verifier: one rule per chunk. (What needs the whole
// program, buffers that exist, phases that deliver what compute sets read,
// is checked by convert-exchange-to-machine: lit/Conversion/ExchangeToMachine.)
// RUN: ipu-opt --split-input-file --verify-diagnostics %s

func.func @buffer_bytes() {
  // expected-error@+1 {{'exchange.buffer' op bytes must be between 1 and 4294967295, not 0}}
  exchange.buffer {bytes = 0 : i64, sym_name = "b", tiles = "0 to 3"}
  return
}

// -----

func.func @buffer_bytes_too_many() {
  // expected-error@+1 {{'exchange.buffer' op bytes must be between 1 and 4294967295, not 4294967296}}
  exchange.buffer {bytes = 4294967296 : i64, sym_name = "b", tiles = "0 to 3"}
  return
}

// -----

func.func @buffer_sym_name() {
  // expected-error@+1 {{'exchange.buffer' op requires attribute 'sym_name'}}
  exchange.buffer {bytes = 16 : i64, tiles = "0 to 3"}
  return
}

// -----

func.func @buffer_tiles_not_a_run() {
  // expected-error@+1 {{'exchange.buffer' op tiles: `4 to 2` is not a run: it needs first < last and a step >= 1 dividing last - first}}
  exchange.buffer {bytes = 16 : i64, sym_name = "b", tiles = "0, 4 to 2"}
  return
}

// -----

func.func @buffer_tiles_word() {
  // expected-error@+1 {{'exchange.buffer' op tiles: `x` is not a tile number in the tile set `0 to x`}}
  exchange.buffer {bytes = 16 : i64, sym_name = "b", tiles = "0 to x"}
  return
}

// -----

func.func @buffer_tiles_too_many() {
  // expected-error@+1 {{'exchange.buffer' op tiles: `0 to 4294967295` holds more than 4294967295 tiles}}
  exchange.buffer {bytes = 16 : i64, sym_name = "b", tiles = "0 to 4294967295"}
  return
}

// -----

func.func @buffer_tiles_none() {
  // expected-error@+1 {{'exchange.buffer' op tiles must name at least one tile}}
  exchange.buffer {bytes = 16 : i64, sym_name = "b", tiles = "none"}
  return
}

// -----

func.func @buffer_tiles_not_a_string() {
  // expected-error@+1 {{'exchange.buffer' op attribute 'tiles' failed to satisfy constraint: tile set string ("0 to 1471 step 2, 5") (got 3 : i64)}}
  exchange.buffer {bytes = 16 : i64, sym_name = "b", tiles = 3 : i64}
  return
}

// -----

func.func @reads_not_dictionaries() {
  // expected-error@+1 {{'exchange.buffer' op attribute 'reads' failed to satisfy constraint: array of dictionary attributes (got [[1 : i64, 16 : i64, 16 : i64]])}}
  exchange.buffer {bytes = 16 : i64, reads = [[1, 16, 16]], sym_name = "b", tiles = "0 to 3"}
  return
}

// -----

func.func @reads_unknown_entry() {
  // expected-error@+1 {{'exchange.buffer' op reads[0]: unknown entry 'len' (an entry holds tiles and ranges)}}
  exchange.buffer {bytes = 16 : i64, reads = [{ranges = array<i64: 1, 16, 16>, tiles = "0", len = 16}], sym_name = "b", tiles = "0 to 3"}
  return
}

// -----

func.func @reads_without_tiles() {
  // expected-error@+1 {{'exchange.buffer' op reads[0]: needs tiles = "<tile set>"}}
  exchange.buffer {bytes = 16 : i64, reads = [{ranges = array<i64: 1, 16, 16>}], sym_name = "b", tiles = "0 to 3"}
  return
}

// -----

func.func @reads_bad_tiles() {
  // expected-error@+1 {{'exchange.buffer' op reads[0]: tiles: `3 to 1` is not a run: it needs first < last and a step >= 1 dividing last - first}}
  exchange.buffer {bytes = 16 : i64, reads = [{ranges = array<i64: 1, 16, 16>, tiles = "3 to 1"}], sym_name = "b", tiles = "0 to 3"}
  return
}

// -----

func.func @reads_without_ranges() {
  // expected-error@+1 {{'exchange.buffer' op reads[0]: needs ranges = array<i64: count, len, stride>}}
  exchange.buffer {bytes = 16 : i64, reads = [{tiles = "0"}], sym_name = "b", tiles = "0 to 3"}
  return
}

// -----

func.func @reads_ranges_length() {
  // expected-error@+1 {{'exchange.buffer' op reads[0]: ranges must be array<i64: count, len, stride>, not 2 entries}}
  exchange.buffer {bytes = 16 : i64, reads = [{ranges = array<i64: 1, 16>, tiles = "0"}], sym_name = "b", tiles = "0 to 3"}
  return
}

// -----

func.func @reads_ranges_overlap() {
  // expected-error@+1 {{'exchange.buffer' op reads[0]: ranges [2, 16, 8] need count >= 1, len >= 1 and stride >= len}}
  exchange.buffer {bytes = 64 : i64, reads = [{ranges = array<i64: 2, 16, 8>, tiles = "0"}], sym_name = "b", tiles = "0 to 3"}
  return
}

// -----

func.func @reads_ranges_empty() {
  // expected-error@+1 {{'exchange.buffer' op reads[0]: ranges [0, 16, 16] need count >= 1, len >= 1 and stride >= len}}
  exchange.buffer {bytes = 64 : i64, reads = [{ranges = array<i64: 0, 16, 16>, tiles = "0"}], sym_name = "b", tiles = "0 to 3"}
  return
}

// -----

func.func @reads_beyond_buffer() {
  // expected-error@+1 {{'exchange.buffer' op reads[1]: ranges [3, 16, 32] end at byte 80, beyond the buffer's 64 bytes}}
  exchange.buffer {bytes = 64 : i64, reads = [{ranges = array<i64: 1, 16, 16>, tiles = "0"}, {ranges = array<i64: 3, 16, 32>, tiles = "1"}], sym_name = "b", tiles = "0 to 3"}
  return
}

// -----

func.func @host_input_mapping_rank(%x: tensor<8x8xf16>) {
  // expected-error@+1 {{'exchange.host_input' op mapping grid has rank 1, but the value has rank 2}}
  exchange.host_input %x {buffer = @b, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : tensor<8x8xf16>
  return
}

// -----

func.func @host_input_mapping(%x: tensor<8xf16>) {
  // expected-error@+1 {{'exchange.host_input' op mapping tiles must have first >= 0 and stride >= 1, not [0, 0]}}
  exchange.host_input %x {buffer = @b, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 0>}} : tensor<8xf16>
  return
}

// -----

func.func @host_input_buffer(%x: tensor<8xf16>) {
  // expected-error@+1 {{'exchange.host_input' op attribute 'buffer' failed to satisfy constraint: flat symbol reference attribute (got "b")}}
  exchange.host_input %x {buffer = "b", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : tensor<8xf16>
  return
}

// -----

func.func @host_input_nested_buffer(%x: tensor<8xf16>) {
  // expected-error@+1 {{'exchange.host_input' op attribute 'buffer' failed to satisfy constraint: flat symbol reference attribute (got @f::@b)}}
  exchange.host_input %x {buffer = @f::@b, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : tensor<8xf16>
  return
}

// -----

func.func @constant_value() {
  // expected-error@+1 {{'exchange.constant' op value must be dense elements (dense<...> or dense_resource<...>) of a tensor type}}
  exchange.constant {buffer = @b, mapping = {grid = array<i64: 1>, tiles = array<i64: 0, 1>}, value = 1.0 : f32}
  return
}

// -----

func.func @constant_mapping_rank() {
  // expected-error@+1 {{'exchange.constant' op mapping grid has rank 2, but the value has rank 1}}
  exchange.constant {buffer = @b, mapping = {grid = array<i64: 2, 2>, tiles = array<i64: 0, 1>}, value = dense<1.0> : tensor<8xf16>}
  return
}

// -----

func.func @host_output_name() {
  // expected-error@+1 {{'exchange.host_output' op requires attribute 'name'}}
  %0 = exchange.host_output {buffer = @b, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : tensor<8xf16>
  return
}

// -----

func.func @host_output_mapping_rank() {
  // expected-error@+1 {{'exchange.host_output' op mapping grid has rank 3, but the value has rank 1}}
  %0 = exchange.host_output {buffer = @b, mapping = {grid = array<i64: 4, 1, 1>, tiles = array<i64: 0, 1>}, name = "y"} : tensor<8xf16>
  return
}

// -----

func.func @compute_set_holds_a_sync() {
  exchange.compute_set attributes {label = "l", sym_name = "s1"} {
    // expected-error@+1 {{'exchange.sync' op is not an exchange.copy or exchange.vertex; a compute set holds only those}}
    exchange.sync
  }
  return
}

// -----

func.func @compute_set_copy_after_vertex() {
  exchange.compute_set attributes {label = "l", sym_name = "s1"} {
    exchange.vertex {kernel = "k", name = "k", params = {}, record = [], tiles = "0"}
    // expected-error@+1 {{'exchange.copy' op comes after a vertex; a compute set's copies come first}}
    exchange.copy {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 0, 0, 0, 0>], src = @a}
  }
  return
}

// -----

func.func @compute_set_cycles() {
  // expected-error@+1 {{'exchange.compute_set' op cycles must be non-negative, not -5}}
  exchange.compute_set attributes {cycles = -5 : i64, label = "l", sym_name = "s1"} {
  }
  return
}

// -----

func.func @compute_set_label() {
  // expected-error@+1 {{'exchange.compute_set' op requires attribute 'label'}}
  exchange.compute_set attributes {sym_name = "s1"} {
  }
  return
}

// -----

func.func @vertex_float_word() {
  // expected-error@+1 {{'exchange.vertex' op record entry #1 (1.0 : f32) is not a 32-bit word: an integer in [-2^31, 4294967295], a buffer @b or [@b, offset]}}
  exchange.vertex {kernel = "k", name = "k", params = {}, record = [@a, 1.0 : f32], tiles = "0"}
  return
}

// -----

func.func @vertex_word_below_i32() {
  // expected-error@+1 {{'exchange.vertex' op record entry #1 (-2147483649 : i64) is not a 32-bit word: an integer in [-2^31, 4294967295], a buffer @b or [@b, offset]}}
  exchange.vertex {kernel = "k", name = "k", params = {}, record = [@a, -2147483649 : i64], tiles = "0"}
  return
}

// -----

func.func @vertex_word_too_wide() {
  // expected-error@+1 {{'exchange.vertex' op record entry #0 (4294967296 : i64) is not a 32-bit word: an integer in [-2^31, 4294967295], a buffer @b or [@b, offset]}}
  exchange.vertex {kernel = "k", name = "k", params = {}, record = [4294967296 : i64], tiles = "0"}
  return
}

// -----

func.func @vertex_nested_buffer() {
  // expected-error@+1 {{'exchange.vertex' op record entry #0 (@a::@b) is not a 32-bit word: an integer in [-2^31, 4294967295], a buffer @b or [@b, offset]}}
  exchange.vertex {kernel = "k", name = "k", params = {}, record = [@a::@b], tiles = "0"}
  return
}

// -----

func.func @vertex_offset_pair() {
  // expected-error@+1 {{'exchange.vertex' op record entry #0 ([@a, 16 : i64, 0 : i64]) is not a 32-bit word: an integer in [-2^31, 4294967295], a buffer @b or [@b, offset]}}
  exchange.vertex {kernel = "k", name = "k", params = {}, record = [[@a, 16 : i64, 0 : i64]], tiles = "0"}
  return
}

// -----

func.func @vertex_record_not_an_array() {
  // expected-error@+1 {{'exchange.vertex' op attribute 'record' failed to satisfy constraint: array attribute (got @a)}}
  exchange.vertex {kernel = "k", name = "k", params = {}, record = @a, tiles = "0"}
  return
}

// -----

func.func @vertex_params() {
  // expected-error@+1 {{'exchange.vertex' op attribute 'params' failed to satisfy constraint: dictionary of 64-bit integers (got {N = "64"})}}
  exchange.vertex {kernel = "k", name = "k", params = {N = "64"}, record = [], tiles = "0"}
  return
}

// -----

func.func @vertex_tiles() {
  // expected-error@+1 {{'exchange.vertex' op tiles: `2 3` is not `N`, `A to B` or `A to B step S` in the tile set `1, 2 3`}}
  exchange.vertex {kernel = "k", name = "k", params = {}, record = [], tiles = "1, 2 3"}
  return
}

// -----

func.func @vertex_scratch() {
  // expected-error@+1 {{'exchange.vertex' op scratch must be non-negative, not -16}}
  exchange.vertex {kernel = "k", name = "k", params = {}, record = [], scratch = -16 : i64, tiles = "0"}
  return
}

// -----

func.func @phase_without_moves() {
  // expected-error@+1 {{'exchange.phase' op has no exchange.move}}
  exchange.phase attributes {bytes = 16 : i64, gap = 0 : i64, horizon = 8 : i64, initial_horizon = 8 : i64, kind = "paired", local_bytes = 0 : i64, lower_bound = 8 : i64, moves = "m", patterns = [], row_words = 4 : i64, sym_name = "x0", transfers = 1 : i64} {
  }
  return
}

// -----

func.func @phase_holds_a_vertex() {
  exchange.phase attributes {bytes = 16 : i64, gap = 0 : i64, horizon = 8 : i64, initial_horizon = 8 : i64, kind = "paired", local_bytes = 0 : i64, lower_bound = 8 : i64, moves = "m", patterns = [], row_words = 4 : i64, sym_name = "x0", transfers = 1 : i64} {
    // expected-error@+1 {{'exchange.vertex' op is not an exchange.move; a phase holds only moves}}
    exchange.vertex {kernel = "k", name = "k", params = {}, record = [], tiles = "0"}
  }
  return
}

// -----

func.func @phase_kind() {
  // expected-error@+1 {{'exchange.phase' op attribute 'kind' failed to satisfy constraint: "compact-streams", "paired" or "reused" (got "fast")}}
  exchange.phase attributes {bytes = 16 : i64, gap = 0 : i64, horizon = 8 : i64, initial_horizon = 8 : i64, kind = "fast", local_bytes = 0 : i64, lower_bound = 8 : i64, moves = "m", patterns = [], row_words = 4 : i64, sym_name = "x0", transfers = 1 : i64} {
    exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 1, 0, 0, 0>], src = @a}
  }
  return
}

// -----

func.func @phase_negative_horizon() {
  // expected-error@+1 {{'exchange.phase' op horizon must be non-negative, not -8}}
  exchange.phase attributes {bytes = 16 : i64, gap = 0 : i64, horizon = -8 : i64, initial_horizon = 8 : i64, kind = "paired", local_bytes = 0 : i64, lower_bound = 8 : i64, moves = "m", patterns = [], row_words = 4 : i64, sym_name = "x0", transfers = 1 : i64} {
    exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 1, 0, 0, 0>], src = @a}
  }
  return
}

// -----

func.func @phase_missing_gap() {
  // expected-error@+1 {{'exchange.phase' op requires attribute 'gap'}}
  exchange.phase attributes {bytes = 16 : i64, horizon = 8 : i64, initial_horizon = 8 : i64, kind = "paired", local_bytes = 0 : i64, lower_bound = 8 : i64, moves = "m", patterns = [], row_words = 4 : i64, sym_name = "x0", transfers = 1 : i64} {
    exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 1, 0, 0, 0>], src = @a}
  }
  return
}

// -----

func.func @move_without_runs() {
  // expected-error@+1 {{'exchange.move' op has no transfer runs}}
  exchange.move {dst = @b, runs = [], src = @a}
  return
}

// -----

func.func @move_run_not_i64_array() {
  // expected-error@+1 {{'exchange.move' op run #0 is not an array<i64: ...>}}
  exchange.move {dst = @b, runs = [[1, 2]], src = @a}
  return
}

// -----

func.func @move_run_too_short() {
  // expected-error@+1 {{'exchange.move' op run #0: a transfer run has at least 14 entries, this one 13}}
  exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0>], src = @a}
  return
}

// -----

func.func @move_run_segments() {
  // expected-error@+1 {{'exchange.move' op run #0: a transfer run with 2 destination segments needs 24 entries, not 19}}
  exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 2, 1, 1, 0, 0, 0>], src = @a}
  return
}

// -----

func.func @move_run_no_segments() {
  // expected-error@+1 {{'exchange.move' op run #0: a transfer run needs at least one destination segment (entry 13), not 0}}
  exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 0>], src = @a}
  return
}

// -----

func.func @move_run_count() {
  // expected-error@+1 {{'exchange.move' op run #0: a transfer run repeats 1 times 0 transfers; each needs 1 to 16777216}}
  exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 1, 1, 1, 0, 0, 0>], src = @a}
  return
}

// -----

func.func @move_run_length() {
  // expected-error@+1 {{'exchange.move' op run #0: a transfer length of 0 is out of range (1 to 4294967295)}}
  exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0>], src = @a}
  return
}

// -----

func.func @move_run_source_tile() {
  // expected-error@+1 {{'exchange.move' op run #0: a transfer run's source tile or offset leaves the u32 range}}
  exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 2, 0, -1, 0, 0, 16, 0, 0, 1, 1, 1, 0, 0, 0>], src = @a}
  return
}

// -----

func.func @move_run_destination_offset() {
  // expected-error@+1 {{'exchange.move' op run #0: a transfer run's destination tile or offset leaves the u32 range}}
  exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 1, 0, 4294967296, 0>], src = @a}
  return
}

// -----

func.func @move_segment_count() {
  // expected-error@+1 {{'exchange.move' op run #0: a destination segment has 0 destinations; it needs 1 to 16777216}}
  exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 0, 1, 0, 0, 0>], src = @a}
  return
}

// -----

func.func @move_too_many_transfers() {
  // expected-error@+1 {{'exchange.move' op run #0: a transfer run delivers to 33554432 destinations, more than 16777216}}
  exchange.move {dst = @b, runs = [array<i64: 4096, 0, 0, 0, 0, 4096, 0, 0, 0, 0, 16, 0, 0, 1, 2, 1, 0, 0, 0>], src = @a}
  return
}

// -----

func.func @move_runs_too_many_transfers() {
  // expected-error@+1 {{'exchange.move' op holds more than 16777216 transfers}}
  exchange.move {dst = @b, runs = [array<i64: 4096, 0, 0, 0, 0, 4096, 0, 0, 0, 0, 16, 0, 0, 1, 1, 1, 0, 0, 0>, array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 1, 0, 0, 0>], src = @a}
  return
}

// -----

func.func @move_src() {
  // expected-error@+1 {{'exchange.move' op requires attribute 'src'}}
  exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 1, 0, 0, 0>]}
  return
}

// -----

func.func @copy_runs() {
  // expected-error@+1 {{'exchange.copy' op run #0: a transfer run has at least 14 entries, this one 13}}
  exchange.copy {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0>], src = @a}
  return
}

// -----

func.func @sync_operands(%x: tensor<8xf16>) {
  // expected-error@+1 {{'exchange.sync' op expected 0 operands, but found 1}}
  "exchange.sync"(%x) : (tensor<8xf16>) -> ()
  return
}

// -----

func.func @move_run_huge_segment_count() {
  // expected-error@+1 {{'exchange.move' op run #0: a transfer run with 4611686018427387904 destination segments needs 23058430092136939534 entries, not 19}}
  exchange.move {dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 4611686018427387904, 1, 1, 0, 0, 0>], src = @a}
  return
}

// -----

// The generic form is checked by the same rules.
func.func @generic_buffer() {
  // expected-error@+1 {{'exchange.buffer' op bytes must be between 1 and 4294967295, not -4}}
  "exchange.buffer"() <{bytes = -4 : i64, sym_name = "b", tiles = "0"}> : () -> ()
  return
}

// -----

func.func @generic_compute_set_without_region() {
  // expected-error@+1 {{'exchange.compute_set' op requires 1 region(s), but found 0}}
  "exchange.compute_set"() <{label = "l", sym_name = "s1"}> : () -> ()
  return
}

// -----

func.func @generic_phase_with_two_blocks() {
  // expected-error@+1 {{'exchange.phase' op expects region #0 to have 0 or 1 blocks}}
  "exchange.phase"() <{bytes = 16 : i64, gap = 0 : i64, horizon = 8 : i64, initial_horizon = 8 : i64, kind = "paired", local_bytes = 0 : i64, lower_bound = 8 : i64, moves = "m", patterns = [], row_words = 4 : i64, sym_name = "x0", transfers = 1 : i64}> ({
    "exchange.move"() <{dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 1, 0, 0, 0>], src = @a}> : () -> ()
  ^bb1:
    "exchange.move"() <{dst = @b, runs = [array<i64: 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 1, 1, 0, 0, 0>], src = @a}> : () -> ()
  }) : () -> ()
  return
}

// -----

func.func @host_output_operands(%x: tensor<8xf16>) {
  // expected-error@+1 {{'exchange.host_output' op expected 0 operands, but found 1}}
  %0 = "exchange.host_output"(%x) <{buffer = @b, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, name = "y"}> : (tensor<8xf16>) -> tensor<8xf16>
  return
}

// -----

func.func @host_input_narrowed(%w: tensor<8xf32>) {
  // expected-error@+1 {{'exchange.host_input' op converts tensor<8xf32> to tensor<8xf16>, which is not an exact widening (f8E4M3FN or f8E5M2 to f16 or f32, f16 or bf16 to f32)}}
  exchange.host_input %w {buffer = @b, load, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, tile_type = tensor<8xf16>} : tensor<8xf32>
  return
}

// -----

func.func @host_input_tile_shape(%w: tensor<8xf8E5M2>) {
  // expected-error@+1 {{'exchange.host_input' op may change only the element type of its input, not the shape (tensor<8xf8E5M2> to tensor<16xf16>)}}
  exchange.host_input %w {buffer = @b, load, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, tile_type = tensor<16xf16>} : tensor<8xf8E5M2>
  return
}

// -----

func.func @host_output_narrows_to_float() -> tensor<8xf16> {
  // expected-error@+1 {{'exchange.host_output' op narrows tensor<8xf32> to tensor<8xf16>: an output narrows only to 8- or 16-bit integers}}
  %0 = exchange.host_output {buffer = @b, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, name = "y", tile_type = tensor<8xf32>} : tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

func.func @host_output_narrows_inexactly() -> tensor<8xi16> {
  // expected-error@+1 {{'exchange.host_output' op converts tensor<8xi16> to tensor<8xf16>, which is not an exact widening}}
  %0 = exchange.host_output {buffer = @b, mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, name = "y", tile_type = tensor<8xf16>} : tensor<8xi16>
  return %0 : tensor<8xi16>
}
