#!/usr/bin/env bash
# Compile time of the transformer block (examples/transformer_block.mlir)
# and the MLP (examples/mlp.mlir): `ipu-opt --ipu-lower-to-machine`, whole
# process, wall seconds, the IR printed to /dev/null. A base ipu-opt
# (another build, e.g. main's) and this tree's are run in turn, base new
# base new ..., RUNS times each, so a drift of the shared machine's speed
# hits both alike; prints each one's
# median, and the new/base ratio of the medians, side by side. Also checks
# that the new compile's IR is byte-identical at RAYON_NUM_THREADS=1 and 2,
# and to the base's.
#
# Usage: bench/compile-time.sh [TARGET]     (default ipu21)
#   BASE=path/to/ipu-opt   the base binary (default target/release-base/ipu-opt;
#                          without one, only the new figures are printed)
#   RUNS=N                 runs of each binary per model (default 5)
#   MODELS="a.mlir b.mlir" the models (default the block and the MLP; e.g. a
#                          stack from bench/stack_gen.py)
# Make a base before changing anything:
#   cargo build --release --bin ipu-opt && mkdir -p target/release-base &&
#   cp target/release/ipu-opt target/release-base/
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-ipu21}
runs=${RUNS:-5}
base=${BASE:-target/release-base/ipu-opt}
new=target/release/ipu-opt
export IPU_KERNEL_CACHE="$PWD/target/kernel-cache"
cargo build --release --quiet --bin ipu-opt
out=target/bench-compile-time
mkdir -p "$out"
[ -x "$base" ] || base=""

# Wall seconds of one compile of $2 by binary $1 (threads $3), IR to $4.
compile() {
  local bin=$1 model=$2 threads=$3 dst=$4 t0 t1
  t0=$(date +%s.%N)
  RAYON_NUM_THREADS=$threads "$bin" --target "$target" --ipu-lower-to-machine "$model" -o "$dst" ||
    echo FAILED > "$dst"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-20s %10s %10s %10s %12s %12s\n' model "base s" "new s" new/base "1thr=2thr" "new=base"
for model in ${MODELS:-examples/transformer_block.mlir examples/mlp.mlir}; do
  name=$(basename "$model" .mlir)
  # The outputs for the identity checks, not timed (they also warm the
  # kernel and file caches); the timed runs print to /dev/null, as the
  # compile-time figures of docs/testing.md are taken.
  compile "$new" "$model" 1 "$out/$name.t1.mlir" > /dev/null
  compile "$new" "$model" 2 "$out/$name.t2.mlir" > /dev/null
  [ -z "$base" ] || compile "$base" "$model" 2 "$out/$name.base.mlir" > /dev/null
  : > "$out/$name.base.times"
  : > "$out/$name.new.times"
  for _ in $(seq "$runs"); do
    [ -z "$base" ] || compile "$base" "$model" 2 /dev/null >> "$out/$name.base.times"
    compile "$new" "$model" 2 /dev/null >> "$out/$name.new.times"
  done
  n=$(median < "$out/$name.new.times")
  b=$([ -z "$base" ] && echo 0 || median < "$out/$name.base.times")
  threads=$(cmp -s "$out/$name.t1.mlir" "$out/$name.t2.mlir" && echo yes || echo NO)
  same=$([ -z "$base" ] && echo - || { cmp -s "$out/$name.base.mlir" "$out/$name.t2.mlir" && echo yes || echo NO; })
  if grep -qx FAILED "$out/$name.t2.mlir" 2> /dev/null; then threads=FAILED; fi
  awk -v m="$name" -v b="$b" -v n="$n" -v t="$threads" -v s="$same" \
    'BEGIN { printf "%-20s %10.3f %10.3f %10s %12s %12s\n", m, b, n, (b > 0 ? sprintf("%.3f", n / b) : "-"), t, s }'
  rm -f "$out/$name.t1.mlir" "$out/$name.t2.mlir" "$out/$name.base.mlir"
done
