// Ops whose blocks each fit a tile, but whose buffers alive together do
// not (the two relus share one superstep), are refused by storage placement: an error naming the tile, the
// bytes it needs, the largest buffers and its buffers' bytes by category,
// and a note at the source of each largest buffer (the argument or op)
// saying what it holds, when it is alive and what would make it smaller.
// Here every tile already holds a block of each
// value, so only a narrower element type would help. (An op whose own
// blocks cannot fit is refused earlier, by convert-nn-to-tile:
// NNToTile/invalid.mlir.)
// RUN: ipu-opt --split-input-file --verify-diagnostics --target test4 --ipu-lower-to-machine %s

// expected-error@+4 {{tile 0 does not fit: its data needs 800064 bytes, but it has 638592 (638976 B of SRAM less 384 B for its code, kernel records and exchange rows); largest buffers: input0 (200016 B), input1 (200016 B), s1.result (200016 B); its buffers by category: activations 800064 B in 4}}
// expected-note@+3 {{input0 (200016 B, activations) is filled by host input arg0, alive from s1 to s1; would help: a 16-bit element type (f16, bf16), half the bytes}}
// expected-note@+2 {{input1 (200016 B, activations) is filled by host input arg1, alive from s1 to s1; would help: a 16-bit element type (f16, bf16), half the bytes}}
// expected-note@+2 {{s1.result (200016 B, activations) is filled by tile.map relu, tile.map relu, alive from s1 to end; would help: a 16-bit element type (f16, bf16), half the bytes}}
func.func @main(%x: tensor<4x50000xf32>, %w: tensor<4x50000xf32>) -> (tensor<4x50000xf32>, tensor<4x50000xf32>) {
  %y = nn.relu %x : tensor<4x50000xf32>
  %z = nn.relu %w : tensor<4x50000xf32>
  return %y, %z : tensor<4x50000xf32>, tensor<4x50000xf32>
}

// -----

// Three rows on the four tiles of test4: each value is on three tiles, its
// rows unsplit, so more tiles or a split of the rows would help too.
// expected-error@+4 {{tile 0 does not fit: its data needs 800064 bytes}}
// expected-note@+3 {{input0 (200016 B, activations) is filled by host input x, alive from s1 to s1; would help: more tiles (its blocks are on 3 of the 4 tiles); a split along dimension 1 too (50000 elements, unsplit now); a 16-bit element type (f16, bf16), half the bytes}}
// expected-note@+2 {{input1 (200016 B, activations) is filled by host input w, alive from s1 to s1}}
// expected-note@+2 {{s1.result (200016 B, activations) is filled by tile.map relu, tile.map relu, alive from s1 to end}}
func.func @main(%x: tensor<3x50000xf32> {ipu.name = "x"}, %w: tensor<3x50000xf32> {ipu.name = "w"}) -> (tensor<3x50000xf32>, tensor<3x50000xf32>) {
  %y = nn.relu %x : tensor<3x50000xf32>
  %z = nn.relu %w : tensor<3x50000xf32>
  return %y, %z : tensor<3x50000xf32>, tensor<3x50000xf32>
}
