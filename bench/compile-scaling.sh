#!/usr/bin/env bash
# Compile-time scaling: compiles 1, 2, 4 and 8 chained MLP blocks (the
# bundled MLP's shapes: x 128x768 f16 -> matmul f8 weights 768x3072 -> add
# bias -> gelu -> matmul f16 weights 3072x768 -> add bias, each block with its
# own weights, generated here) and examples/transformer_block.mlir with
# `ipu-opt --ipu-lower-to-machine` for a target, once with RAYON_NUM_THREADS=1
# and once with 2, and prints the wall seconds and seconds per nn op of each
# as one table. Also checks that both thread counts give byte-identical IR.
#
# Usage: bench/compile-scaling.sh [TARGET]        (default ipu21)
# Reproduce: cargo build --release --bin ipu-opt && bench/compile-scaling.sh ipu21
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-ipu21}
cargo build --release --quiet --bin ipu-opt
out=target/bench-compile-scaling
mkdir -p "$out"

# Writes N chained MLP blocks to stdout.
gen_blocks() {
  local n=$1 args="" body="" cur="%x"
  args='%x: tensor<128x768xf16> {ipu.name = "x"}'
  for i in $(seq 1 "$n"); do
    args+=", %w1_$i: tensor<768x3072xf8E4M3FN> {ipu.name = \"w1_$i\", ipu.weight}"
    args+=", %b1_$i: tensor<3072xf16> {ipu.name = \"b1_$i\", ipu.weight}"
    args+=", %w2_$i: tensor<3072x768xf16> {ipu.name = \"w2_$i\", ipu.weight}"
    args+=", %b2_$i: tensor<768xf16> {ipu.name = \"b2_$i\", ipu.weight}"
    body+="  %h_$i = nn.matmul $cur, %w1_$i : (tensor<128x768xf16>, tensor<768x3072xf8E4M3FN>) -> tensor<128x3072xf16>
  %hb_$i = nn.add %h_$i, %b1_$i : (tensor<128x3072xf16>, tensor<3072xf16>) -> tensor<128x3072xf16>
  %g_$i = nn.gelu %hb_$i : tensor<128x3072xf16>
  %o_$i = nn.matmul %g_$i, %w2_$i : (tensor<128x3072xf16>, tensor<3072x768xf16>) -> tensor<128x768xf16>
  %y_$i = nn.add %o_$i, %b2_$i : (tensor<128x768xf16>, tensor<768xf16>) -> tensor<128x768xf16>
"
    cur="%y_$i"
  done
  printf 'func.func @main(%s) -> (tensor<128x768xf16> {ipu.name = "y"}) {\n%s  return %s : tensor<128x768xf16>\n}\n' \
    "$args" "$body" "$cur"
}

models=()
for n in 1 2 4 8; do
  gen_blocks "$n" > "$out/mlp-x$n.mlir"
  models+=("$out/mlp-x$n.mlir")
done
models+=(examples/transformer_block.mlir)

# Seconds (wall) of one compile; the output goes to $2.
compile() {
  local threads=$1 model=$2 dst=$3 t0 t1
  t0=$(date +%s.%N)
  # A compile that fails is not a time: its destination holds FAILED instead.
  RAYON_NUM_THREADS=$threads ./target/release/ipu-opt --target "$target" --ipu-lower-to-machine "$model" -o "$dst" ||
    echo FAILED > "$dst"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

printf '%-28s %5s %10s %12s %10s %12s %10s\n' model nn-ops "1thr s" "1thr s/op" "2thr s" "2thr s/op" "identical"
for m in "${models[@]}"; do
  ops=$(grep -cE '= nn\.' "$m")
  name=$(basename "$m" .mlir)
  s1=$(compile 1 "$m" "$out/$name.t1.mlir")
  s2=$(compile 2 "$m" "$out/$name.t2.mlir")
  same=$(cmp -s "$out/$name.t1.mlir" "$out/$name.t2.mlir" && echo yes || echo NO)
  if [ "$(head -c 6 "$out/$name.t1.mlir")" = FAILED ] || [ "$(head -c 6 "$out/$name.t2.mlir")" = FAILED ]; then
    same="FAILED"
  fi
  awk -v n="$name" -v o="$ops" -v a="$s1" -v b="$s2" -v s="$same" \
    'BEGIN { printf "%-28s %5d %10.2f %12.3f %10.2f %12.3f %10s\n", n, o, a, a / o, b, b / o, s }'
  rm -f "$out/$name.t1.mlir" "$out/$name.t2.mlir"
done
