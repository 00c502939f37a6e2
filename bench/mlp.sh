#!/usr/bin/env bash
# End-to-end benchmark of the main job: the bundled MLP (examples/mlp.mlir)
# compiled for a target (default ipu21) and run on the chip simulator.
# Prints the compile time of every pass (--mlir-timing) and of every phase of
# the package build (plan_package, place_storage, link, encode), the exchange
# figures (sum of horizons, sum of endpoint lower bounds), then for each of
# BENCH_RUNS device runs of the written package: simulated cycles and the
# simulator's wall time. Kernels come from the repository's kernel cache.
#
# Usage: bench/mlp.sh [TARGET [MODEL]]      BENCH_RUNS=N (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-ipu21}
model=${2:-examples/mlp.mlir}
runs=${BENCH_RUNS:-3}
export IPU_KERNEL_CACHE="$PWD/target/kernel-cache"
cargo build --release --quiet --bin ipu-opt --bin ipu-run
out=target/bench-mlp
mkdir -p "$out"

echo "== compile: $model for $target"
RUST_LOG=ipu_lowering::codegen=info ./target/release/ipu-opt --target "$target" --ipu-lower-to-machine \
  --mlir-timing --mlir-pass-statistics "$model" -o "$out/model.machine.mlir" 2> "$out/compile.log"
grep -E 'Convert|Canonicalizer|Parser|Output|Total|horizon-sum|lower-bound-sum|phases|tiles -|program-groups|supersteps' "$out/compile.log" || true
grep -o 'phase="[a-z_]*" elapsed_ms=[0-9]*' "$out/compile.log" | sed 's/^/package build /' || true
h=$(grep -Eo '[0-9]+ horizon-sum' "$out/compile.log" | grep -Eo '^[0-9]+')
b=$(grep -Eo '[0-9]+ lower-bound-sum' "$out/compile.log" | grep -Eo '^[0-9]+')
awk -v h="$h" -v b="$b" 'BEGIN { printf "exchange: sum of horizons %d / sum of endpoint lower bounds %d = %.4f\n", h, b, h / b }'

echo "== package"
./target/release/ipu-run --target "$target" "$model" --write-package "$out/model.ipuexe" \
  --device-lock "$out/device.lock" > /dev/null 2>&1 || true
ls -l "$out/model.ipuexe" | awk '{print "package bytes:", $5}'

echo "== device runs of the package ($runs)"
for i in $(seq "$runs"); do
  RUST_LOG=ipu_driver::device=info ./target/release/ipu-run "$out/model.ipuexe" --device-lock "$out/device.lock" \
    2> "$out/run.log" | grep -E 'cycles|numericalTest|hardwareTest' | tr '\n' ' '
  grep -o 'simulated cycles=[0-9]* wall_ms=[0-9.]*' "$out/run.log" || echo
done
