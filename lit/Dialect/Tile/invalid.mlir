// The tile dialect's verifier: one rule per chunk.
// RUN: ipu-opt --split-input-file --verify-diagnostics %s

func.func @missing_mapping(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_input' op requires attribute 'mapping'}}
  %0 = tile.host_input %x : tensor<8xf16>
  return
}

// -----

func.func @mapping_not_a_dictionary(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_input' op attribute 'mapping' failed to satisfy constraint: tile mapping {grid = array<i64: ...>, tiles = array<i64: first, stride>} (got [4 : i64, 0 : i64, 1 : i64])}}
  %0 = tile.host_input %x {mapping = [4, 0, 1]} : tensor<8xf16>
  return
}

// -----

func.func @mapping_unknown_entry(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_input' op mapping has an unknown entry 'stride' (it holds grid and tiles)}}
  %0 = tile.host_input %x {mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>, stride = 1}} : tensor<8xf16>
  return
}

// -----

func.func @mapping_without_grid(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_input' op mapping needs grid = array<i64: ...>}}
  %0 = tile.host_input %x {mapping = {tiles = array<i64: 0, 1>}} : tensor<8xf16>
  return
}

// -----

func.func @mapping_grid_not_i64_array(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_input' op mapping grid must be array<i64: ...>}}
  %0 = tile.host_input %x {mapping = {grid = [4], tiles = array<i64: 0, 1>}} : tensor<8xf16>
  return
}

// -----

func.func @mapping_without_tiles(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_input' op mapping needs tiles = array<i64: first, stride>}}
  %0 = tile.host_input %x {mapping = {grid = array<i64: 4>}} : tensor<8xf16>
  return
}

// -----

func.func @mapping_empty_grid_dimension(%x: tensor<8x8xf16>) {
  // expected-error@+1 {{'tile.host_input' op mapping grid entries must be at least 1, not 0}}
  %0 = tile.host_input %x {mapping = {grid = array<i64: 4, 0>, tiles = array<i64: 0, 1>}} : tensor<8x8xf16>
  return
}

// -----

func.func @mapping_tiles_not_a_pair(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_input' op mapping tiles must be array<i64: first, stride>, not 3 entries}}
  %0 = tile.host_input %x {mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1, 2>}} : tensor<8xf16>
  return
}

// -----

func.func @mapping_zero_stride(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_input' op mapping tiles must have first >= 0 and stride >= 1, not [0, 0]}}
  %0 = tile.host_input %x {mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 0>}} : tensor<8xf16>
  return
}

// -----

func.func @mapping_negative_first(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_input' op mapping tiles must have first >= 0 and stride >= 1, not [-1, 1]}}
  %0 = tile.host_input %x {mapping = {grid = array<i64: 4>, tiles = array<i64: -1, 1>}} : tensor<8xf16>
  return
}

// -----

// A grid whose blocks cannot all have a tile (the block count overflows).
func.func @mapping_beyond_tile_indices(%x: tensor<8x8xf16>) {
  // expected-error@+1 {{'tile.host_input' op mapping puts block b on tile 0 + b * 1: its 4611686018427387904 x 4 blocks go beyond tile 4294967295}}
  %0 = tile.host_input %x {mapping = {grid = array<i64: 4611686018427387904, 4>, tiles = array<i64: 0, 1>}} : tensor<8x8xf16>
  return
}

// -----

func.func @mapping_last_tile_beyond_tile_indices(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_input' op mapping puts block b on tile 4294967295 + b * 1: its 2 blocks go beyond tile 4294967295}}
  %0 = tile.host_input %x {mapping = {grid = array<i64: 2>, tiles = array<i64: 4294967295, 1>}} : tensor<8xf16>
  return
}

// -----

func.func @mapping_rank(%x: tensor<8x8xf16>) {
  // expected-error@+1 {{'tile.host_input' op mapping grid has rank 1, but the result has rank 2}}
  %0 = tile.host_input %x {mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : tensor<8x8xf16>
  return
}

// -----

func.func @dynamic_dimension(%x: tensor<?xf16>) {
  // expected-error@+1 {{'tile.host_input' op has a result with dynamic dimensions, 'tensor<?xf16>': a mapping needs static shapes}}
  %0 = tile.host_input %x {mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : tensor<?xf16>
  return
}

// -----

func.func @host_input_not_a_tensor(%x: f16) {
  // expected-error@+1 {{'tile.host_input' op operand #0 must be ranked tensor, but got 'f16'}}
  %0 = "tile.host_input"(%x) {mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : (f16) -> f16
  return
}

// -----

func.func @constant_type() {
  // expected-error@+1 {{'tile.constant' op value type does not match the result type}}
  %0 = "tile.constant"() {mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}, value = dense<0.5> : tensor<8xf16>} : () -> tensor<8xf32>
  return
}

// -----

func.func @constant_mapping_rank() {
  // expected-error@+1 {{'tile.constant' op mapping grid has rank 2, but the result has rank 1}}
  %0 = tile.constant {mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} dense<0.5> : tensor<8xf16>
  return
}

// -----

func.func @matmul_plan(%a: tensor<8x32xf16>, %b: tensor<32x32xf16>) {
  // expected-error@+1 {{'tile.matmul' op plan must be [pm, pn, pk], each at least 1}}
  %0 = tile.matmul %a, %b {cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2>, tiles = array<i64: 0, 1>} : (tensor<8x32xf16>, tensor<32x32xf16>) -> tensor<8x32xf16>
  return
}

// -----

func.func @matmul_tiles(%a: tensor<8x32xf16>, %b: tensor<32x32xf16>) {
  // expected-error@+1 {{'tile.matmul' op tiles must be [first, stride]}}
  %0 = tile.matmul %a, %b {cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2, 1>, tiles = array<i64: 0, 0>} : (tensor<8x32xf16>, tensor<32x32xf16>) -> tensor<8x32xf16>
  return
}

// -----

func.func @matmul_result_mapping(%a: tensor<8x32xf16>, %b: tensor<32x32xf16>) {
  // expected-error@+1 {{'tile.matmul' op the result mapping must be the plan's (batch x) (pm * pk) x pn grid on its tiles}}
  %0 = tile.matmul %a, %b {cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 2, 1>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2, 1>, tiles = array<i64: 0, 1>} : (tensor<8x32xf16>, tensor<32x32xf16>) -> tensor<8x32xf16>
  return
}

// -----

func.func @matmul_operands_transposed(%a: tensor<8x32xf16>, %b: tensor<32x16xf16>) {
  // expected-error@+1 {{'tile.matmul' op operands must be [M, K] and [N, K], or [B, M, K] and [B, N, K] (B may be 1 on one side; the rhs is transposed), not [8, 32] and [32, 16]}}
  %0 = tile.matmul %a, %b {cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2, 1>, rhs_transposed, tiles = array<i64: 0, 1>} : (tensor<8x32xf16>, tensor<32x16xf16>) -> tensor<8x32xf16>
  return
}

// -----

func.func @matmul_transposed_flag(%a: tensor<8x32xf16>, %b: tensor<32x32xf16>) {
  // expected-error@+1 {{'tile.matmul' op attribute 'rhs_transposed' failed to satisfy constraint: unit attribute}}
  %0 = tile.matmul %a, %b {cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2, 1>, rhs_transposed = 1 : i64, tiles = array<i64: 0, 1>} : (tensor<8x32xf16>, tensor<32x32xf16>) -> tensor<8x32xf16>
  return
}

// -----

func.func @matmul_operands(%a: tensor<8x32xf16>, %b: tensor<16x32xf16>) {
  // expected-error@+1 {{'tile.matmul' op operands must be [M, K] and [K, N], or [B, M, K] and [B, K, N] (B may be 1 on one side), not [8, 32] and [16, 32]}}
  %0 = tile.matmul %a, %b {cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2, 1>, tiles = array<i64: 0, 1>} : (tensor<8x32xf16>, tensor<16x32xf16>) -> tensor<8x32xf16>
  return
}

// -----

func.func @matmul_result_shape(%a: tensor<8x32xf16>, %b: tensor<32x16xf16>) {
  // expected-error@+1 {{'tile.matmul' op result must be [8, 16], not 'tensor<8x32xf16>'}}
  %0 = tile.matmul %a, %b {cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2, 1>, tiles = array<i64: 0, 1>} : (tensor<8x32xf16>, tensor<32x16xf16>) -> tensor<8x32xf16>
  return
}

// -----

func.func @matmul_partials(%a: tensor<8x32xf16>, %b: tensor<32x32xf16>) {
  // expected-error@+1 {{'tile.matmul' op partials must be the floating-point type of the partial sums (f32, f16)}}
  %0 = tile.matmul %a, %b {cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, partials = i32, plan = array<i64: 1, 2, 1>, tiles = array<i64: 0, 1>} : (tensor<8x32xf16>, tensor<32x32xf16>) -> tensor<8x32xf16>
  return
}

// -----

func.func @matmul_no_kernel(%a: tensor<8x32xf16>, %b: tensor<32x32xf16>) {
  // expected-error@+1 {{'tile.matmul' op kernel must name a kernel specialisation, not be empty}}
  %0 = tile.matmul %a, %b {cycles = 1 : i64, kernel = "", mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, partials = f32, plan = array<i64: 1, 2, 1>, tiles = array<i64: 0, 1>} : (tensor<8x32xf16>, tensor<32x32xf16>) -> tensor<8x32xf16>
  return
}

// -----

func.func @matmul_missing_plan(%a: tensor<8x32xf16>, %b: tensor<32x32xf16>) {
  // expected-error@+1 {{'tile.matmul' op requires attribute 'plan'}}
  %0 = tile.matmul %a, %b {cycles = 1 : i64, kernel = "k", mapping = {grid = array<i64: 1, 2>, tiles = array<i64: 0, 1>}, partials = f32, tiles = array<i64: 0, 1>} : (tensor<8x32xf16>, tensor<32x32xf16>) -> tensor<8x32xf16>
  return
}

// -----

func.func @map_negative_cycles(%x: tensor<8xf32>) {
  // expected-error@+1 {{'tile.map' op cycles must be non-negative, not -1}}
  %0 = tile.map %x {cycles = -1 : i64, fn = #tile.fn<exp>, kernel = "k", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @map_cycles_not_i64(%x: tensor<8xf32>) {
  // expected-error@+1 {{'tile.map' op attribute 'cycles' failed to satisfy constraint: 64-bit integer attribute (got 1 : i32)}}
  %0 = tile.map %x {cycles = 1 : i32, fn = #tile.fn<exp>, kernel = "k", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @map_unknown_function(%x: tensor<8xf32>) {
  // expected-error@+1 {{'tile.map' op attribute 'fn' failed to satisfy constraint: elementwise function #tile.fn<name> (add, sub, mul, div, max, min, pow, relu, gelu, gelu_tanh, exp, tanh, erf, rsqrt, sqrt, neg, abs, sigmoid, reciprocal, log, copy, cast; equal, less, greater, and, or, not) (got #tile.fn<softmax>)}}
  %0 = tile.map %x {cycles = 1 : i64, fn = #tile.fn<softmax>, kernel = "k", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @map_function_as_string(%x: tensor<8xf32>) {
  // expected-error@+1 {{'tile.map' op attribute 'fn' failed to satisfy constraint: elementwise function #tile.fn<name>}}
  %0 = tile.map %x {cycles = 1 : i64, fn = "exp", kernel = "k", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @map_binary_with_one_operand(%x: tensor<8xf32>) {
  // expected-error@+1 {{'tile.map' op #tile.fn<add> takes 2 operands, but has 1}}
  %0 = tile.map %x {cycles = 1 : i64, fn = #tile.fn<add>, kernel = "k", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @map_unary_with_two_operands(%x: tensor<8xf32>) {
  // expected-error@+1 {{'tile.map' op #tile.fn<exp> takes 1 operand, but has 2}}
  %0 = tile.map %x, %x {cycles = 1 : i64, fn = #tile.fn<exp>, kernel = "k", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @map_without_operands() {
  // expected-error@+1 {{'tile.map' op #tile.fn<relu> takes 1 operand, but has 0}}
  %0 = tile.map {cycles = 1 : i64, fn = #tile.fn<relu>, kernel = "k", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : () -> tensor<8xf32>
  return
}

// -----

func.func @map_broadcast(%x: tensor<8x4xf32>, %v: tensor<3xf32>) {
  // expected-error@+1 {{'tile.map' op operand #1 ('tensor<3xf32>') does not broadcast to the result ('tensor<8x4xf32>')}}
  %0 = tile.map %x, %v {cycles = 1 : i64, fn = #tile.fn<add>, kernel = "k", mapping = {grid = array<i64: 4, 1>, tiles = array<i64: 0, 1>}} : (tensor<8x4xf32>, tensor<3xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @map_operand_of_higher_rank(%x: tensor<2x8xf32>) {
  // expected-error@+1 {{'tile.map' op operand #0 ('tensor<2x8xf32>') does not broadcast to the result ('tensor<8xf32>')}}
  %0 = tile.map %x {cycles = 1 : i64, fn = #tile.fn<exp>, kernel = "k", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : (tensor<2x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @map_element_type(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.map' op operand #0 ('tensor<8xf16>') of #tile.fn<exp> must have the element type of the result ('tensor<8xf32>')}}
  %0 = tile.map %x {cycles = 1 : i64, fn = #tile.fn<exp>, kernel = "k", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : (tensor<8xf16>) -> tensor<8xf32>
  return
}

// -----

func.func @map_cast_shape(%x: tensor<1xf16>) {
  // expected-error@+1 {{'tile.map' op operand #0 ('tensor<1xf16>') of #tile.fn<cast> must have the shape of the result ('tensor<8xf32>')}}
  %0 = tile.map %x {cycles = 1 : i64, fn = #tile.fn<cast>, kernel = "k", mapping = {grid = array<i64: 4>, tiles = array<i64: 0, 1>}} : (tensor<1xf16>) -> tensor<8xf32>
  return
}

// -----

func.func @host_output_name(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_output' op requires attribute 'name'}}
  tile.host_output %x : tensor<8xf16>
  return
}

// -----

func.func @host_output_results(%x: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_output' op has a result of its input's own type (tensor<8xf16>): a result is the host's narrowing to an 8- or 16-bit integer}}
  %0 = "tile.host_output"(%x) {name = "y"} : (tensor<8xf16>) -> tensor<8xf16>
  return
}

// -----

func.func @narrowed_input(%w: tensor<8xf16>) {
  // expected-error@+1 {{'tile.host_input' op converts tensor<8xf16> to tensor<8xf8E4M3FN>, which is not an exact widening (f8E4M3FN or f8E5M2 to f16 or f32, f16 or bf16 to f32)}}
  %0 = tile.host_input %w {mapping = {grid = array<i64: 1>, tiles = array<i64: 0, 1>}, resident} : tensor<8xf16> -> tensor<8xf8E4M3FN>
  return
}

// -----

func.func @bf16_to_f16_input(%w: tensor<8xbf16>) {
  // expected-error@+1 {{'tile.host_input' op converts tensor<8xbf16> to tensor<8xf16>, which is not an exact widening}}
  %0 = tile.host_input %w {mapping = {grid = array<i64: 1>, tiles = array<i64: 0, 1>}, resident} : tensor<8xbf16> -> tensor<8xf16>
  return
}

// -----

func.func @reshaped_input(%w: tensor<8xf8E4M3FN>) {
  // expected-error@+1 {{'tile.host_input' op may change only the element type of its input, not the shape (tensor<8xf8E4M3FN> to tensor<2x4xf16>)}}
  %0 = tile.host_input %w {mapping = {grid = array<i64: 1, 1>, tiles = array<i64: 0, 1>}, resident} : tensor<8xf8E4M3FN> -> tensor<2x4xf16>
  return
}

// -----

// host_output_narrows_to_float
func.func @host_output_narrows_to_float(%x: tensor<8xf32>) -> tensor<8xf16> {
  %0 = tile.host_input %x {mapping = {grid = array<i64: 1>, tiles = array<i64: 0, 1>}} : tensor<8xf32>
  // expected-error@+1 {{'tile.host_output' op narrows tensor<8xf32> to tensor<8xf16>: an output narrows only to 8- or 16-bit integers}}
  %1 = tile.host_output %0 {name = "y"} : tensor<8xf32> -> tensor<8xf16>
  return %1 : tensor<8xf16>
}

// -----

// host_output_narrows_a_shape
func.func @host_output_narrows_a_shape(%x: tensor<8xf32>) -> tensor<4xui8> {
  %0 = tile.host_input %x {mapping = {grid = array<i64: 1>, tiles = array<i64: 0, 1>}} : tensor<8xf32>
  // expected-error@+1 {{'tile.host_output' op may change only the element type of its input, not the shape (tensor<4xui8> to tensor<8xf32>)}}
  %1 = tile.host_output %0 {name = "y"} : tensor<8xf32> -> tensor<4xui8>
  return %1 : tensor<4xui8>
}
