#!/usr/bin/env bash
# Benchmark: parse + verify + print a 1,000,000-op generic-form file with
# ipu-opt and with upstream mlir-opt (Debian's mlir-22-tools), side by side.
# The file is OPS / OPS_PER_FUNCTION functions of OPS_PER_FUNCTION ops, each
# op with attributes (bench/gen_ir.py); `bench/ir.sh 300000 1000` is the
# 300-functions-of-1,000-ops file of issue 33.
# Usage: bench/ir.sh [OPS [OPS_PER_FUNCTION]]   (default 1000000 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
ops="${1:-1000000}"
per_func="${2:-1000}"
mlir_opt=/usr/lib/llvm-22/bin/mlir-opt
[ -x "$mlir_opt" ] || { echo "needs mlir-opt: apt-get install mlir-22-tools" >&2; exit 1; }
cargo build --release --quiet --bin ipu-opt
mkdir -p target/bench
python="$(scripts/python-env.sh)"
input="target/bench/ir-$ops-$per_func.mlir"
[ -s "$input" ] || "$python" bench/gen_ir.py "$ops" "$per_func" > "$input"
"$python" bench/ir_bench.py "$input" target/release/ipu-opt "$mlir_opt"
