#!/usr/bin/env bash
# Benchmark: parse + verify + print a 1,000,000-op generic-form file with
# ipu-opt and with upstream mlir-opt (Debian's mlir-22-tools), side by side.
# Usage: bench/ir.sh [OPS]   (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
ops="${1:-1000000}"
mlir_opt=/usr/lib/llvm-22/bin/mlir-opt
[ -x "$mlir_opt" ] || { echo "needs mlir-opt: apt-get install mlir-22-tools" >&2; exit 1; }
cargo build --release --quiet --bin ipu-opt
mkdir -p target/bench
python="$(scripts/python-env.sh)"
input="target/bench/ir-$ops.mlir"
[ -s "$input" ] || "$python" bench/gen_ir.py "$ops" > "$input"
"$python" bench/ir_bench.py "$input" target/release/ipu-opt "$mlir_opt"
