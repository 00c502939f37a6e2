#!/usr/bin/env bash
# Simulator speed: simulated tile-instructions per CPU-second of the chip
# simulator (ipu-runtime) running a compiled model, as `ipu-run` runs it
# (load every tile, write the input streams, run to the end).
#
# CPU seconds are the process's user + system time (all rayon threads,
# /proc/self/stat) around the run, not wall time, so a busy machine does
# not change the figure much; wall seconds are printed beside them. The
# model is compiled once (release ipu-opt + ipu-translate); the simulator
# runs it RUNS times per thread count (best of RUNS), with
# RAYON_NUM_THREADS=1 and 2, and the simulated figures (cycles,
# instructions, supersteps, a hash of the outputs) must be identical for
# every run and thread count.
#
# A baseline build runs side by side when target/bench-base/simulator_bench
# exists: record it with `bench/simulator.sh --save-base` on the revision
# to compare against (it copies that revision's binary there), then run
# this script on the new one. Its simulated figures must match too.
#
# Usage: bench/simulator.sh [--save-base] [MODEL [TARGET [RUNS]]]
#        (default examples/transformer_block.mlir ipu21 3)
set -euo pipefail
cd "$(dirname "$0")/.."
save_base=0
if [ "${1:-}" = --save-base ]; then
  save_base=1
  shift
fi
model=${1:-examples/transformer_block.mlir}
target=${2:-ipu21}
runs=${3:-3}
export IPU_KERNEL_CACHE="$PWD/target/kernel-cache"
cargo build --release --quiet --bin ipu-opt --bin ipu-translate --example simulator_bench
out=target/bench-simulator
base=target/bench-base/simulator_bench
mkdir -p "$out"
if [ "$save_base" = 1 ]; then
  mkdir -p "$(dirname "$base")"
  cp target/release/examples/simulator_bench "$base"
  echo "baseline saved: $base ($(git rev-parse --short HEAD))"
fi
name=$(basename "$model" .mlir)
./target/release/ipu-opt --target "$target" --ipu-lower-to-machine "$model" -o "$out/$name.machine.mlir"
./target/release/ipu-translate --to-ipuexe "$out/$name.machine.mlir" --source "$model" -o "$out/$name.ipuexe"

builds=("new:target/release/examples/simulator_bench")
[ -x "$base" ] && [ "$save_base" = 0 ] && builds=("base:$base" "${builds[@]}")

printf '%-5s %7s %12s %14s %8s %8s %16s\n' build threads cycles tile-instr cpu-s wall-s "M instr/cpu-s"
figures=""
for threads in 1 2; do
  for b in "${builds[@]}"; do
    label=${b%%:*}
    bin=${b#*:}
    log="$out/$name.$label.t$threads.log"
    RAYON_NUM_THREADS=$threads "$bin" "$out/$name.ipuexe" "$runs" > "$log"
    # The simulated figures of every run: one distinct line expected.
    figures+=$(grep '^run=' "$log" | sed -E 's/^run=[0-9]+ //; s/ cpu_s=.*//' | sort -u)$'\n'
    line=$(grep '^run=' "$log" | head -1)
    best=$(grep '^best ' "$log")
    field() { echo "$1" | grep -Eo "(^| )$2=[^ ]+" | cut -d= -f2; }
    printf '%-5s %7s %12s %14s %8s %8s %16s\n' "$label" "$threads" \
      "$(field "$line" cycles)" "$(field "$line" tile_instructions)" \
      "$(field "$best" cpu_s)" "$(field "$best" wall_s)" "$(field "$best" M_instr_per_cpu_s)"
  done
done
distinct=$(printf '%s' "$figures" | sort -u | grep -c . || true)
if [ "$distinct" = 1 ]; then
  echo "simulated figures identical across builds, thread counts and runs: $(printf '%s' "$figures" | head -1)"
else
  echo "SIMULATED FIGURES DIFFER:" >&2
  printf '%s' "$figures" | sort | uniq -c >&2
  exit 1
fi
