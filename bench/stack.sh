#!/usr/bin/env bash
# Depth: compiles and runs N chained copies of examples/transformer_block.mlir
# (bench/stack_gen.py: each layer with its own parameters, layer i's output
# feeding layer i+1's input) for each N given, on a target (default ipu21,
# BENCH_TARGET=NAME for another), and prints one row per N:
#   fits             yes, or the row ends in "does not fit: <error>"
#   compile_s        wall seconds of `ipu-opt --ipu-lower-to-machine`
#   rss_MB           the compile's peak resident set (GNU time's maximum RSS)
#   tile code/records/rows
#                    the tile whose code, kernel records and exchange rows
#                    together are largest, and those three in bytes
#   weights_MB       weights and constants over all tiles (memory report)
#   params_MB        the model's parameter bytes in their stored precision
#   cycles           simulated cycles of one run (`ipu-run` of the package)
#   cyc/layer        cycles / N
#   numerical, hardware  ipu-run's verdicts
#
# With --outline the layer is one function called N times
# (`stack_gen.py --outline`: each distinct layer lowered once); with --both
# each N is compiled and run in both forms, one row each, side by side. The
# form column says which: "unrolled" (N copies inline) or "outline".
#
# Usage: bench/stack.sh [--outline|--both] N...   (e.g. bench/stack.sh --both 1 2 4 8 12)
#   BENCH_BIN=DIR takes ipu-opt and ipu-run from DIR (say, a
#   copy of another build's) instead of building target/release.
# Reproduce: bench/stack.sh 1 2 4 8 12   (builds the release tools first)
set -euo pipefail
cd "$(dirname "$0")/.."
forms=unrolled
case "${1:-}" in
  --outline) forms=outline; shift ;;
  --both) forms="unrolled outline"; shift ;;
esac
[ $# -ge 1 ] || { echo "usage: bench/stack.sh [--outline|--both] N..." >&2; exit 2; }
target=${BENCH_TARGET:-ipu21}
export IPU_KERNEL_CACHE="${IPU_KERNEL_CACHE:-$PWD/target/kernel-cache}"
bin=${BENCH_BIN:-target/release}
[ -n "${BENCH_BIN:-}" ] || cargo build --release --quiet --bin ipu-opt --bin ipu-run
py="$(scripts/python-env.sh)"
[ -x /usr/bin/time ] || { echo "bench/stack.sh: needs GNU time at /usr/bin/time" >&2; exit 2; }
out=${BENCH_OUT:-target/bench-stack}
mkdir -p "$out"

# The memory report's figures: "tile code records rows weights_MB".
mem_figures() {
  "$py" - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cats = r["categories"]
ix = {c: cats.index(c) for c in ("code", "kernel_records", "exchange_rows", "weights_constants")}
def prog(t):
    b = t["bytes"]
    return b[ix["code"]] + b[ix["kernel_records"]] + b[ix["exchange_rows"]]
t = max(r["tiles"], key=lambda t: (prog(t), -t["tile"]))
b = t["bytes"]
print(t["tile"], b[ix["code"]], b[ix["kernel_records"]], b[ix["exchange_rows"]],
      "%.1f" % (r["totals"]["weights_constants"] / 1e6))
PY
}

# Parameter bytes of a model (@main's arguments) in their stored precision, in MB.
param_mb() {
  "$py" - "$1" <<'PY'
import re, sys
size = {"f32": 4, "f16": 2, "bf16": 2, "f8E4M3FN": 1, "f8E5M2": 1, "i32": 4, "i8": 1}
n = 0
# The parameters @main takes (an outlined layer's signature names its own).
text = open(sys.argv[1]).read()
text = text[text.index("func.func @main("):]
for m in re.finditer(r"tensor<([0-9x]+)x?(\w+)>\s*\{[^}]*ipu\.weight", text):
    dims, ty = m.group(1), m.group(2)
    e = 1
    for d in dims.strip("x").split("x"):
        e *= int(d)
    n += e * size[ty]
print("%.1f" % (n / 1e6))
PY
}

printf '%4s %-8s %5s %9s %7s %5s %7s %8s %8s %10s %9s %9s %9s %10s %9s\n' \
  N form fits compile_s rss_MB tile code records rows weights_MB params_MB cycles cyc/layer numerical hardware
for n in "$@"; do
for form in $forms; do
  if [ "$form" = outline ]; then
    tag="outline-x$n"
    "$py" bench/stack_gen.py --outline "$n" > "$out/stack-$tag.mlir"
  else
    tag="x$n"
    "$py" bench/stack_gen.py "$n" > "$out/stack-$tag.mlir"
  fi
  model="$out/stack-$tag.mlir"
  pm=$(param_mb "$model")
  t0=$(date +%s.%N)
  ok=yes
  /usr/bin/time -v -o "$out/time-$tag.txt" "$bin"/ipu-opt --target "$target" --ipu-lower-to-machine \
    --memory-report="$out/mem-$tag.json" "$model" -o /dev/null 2> "$out/compile-$tag.log" || ok=no
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  rss=$(awk -F: '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$out/time-$tag.txt")
  if [ "$ok" = no ]; then
    err=$(grep -m1 -E 'error' "$out/compile-$tag.log" || head -n1 "$out/compile-$tag.log" || true)
    printf '%4s %-8s %5s %9s %7s  does not fit: %s\n' "$n" "$form" no "$secs" "$rss" "$err"
    continue
  fi
  read -r tile code recs rows wmb <<< "$(mem_figures "$out/mem-$tag.json")"
  # ipu-run compiles the model again (the package then carries its nn
  # source, the reference it is checked against) and runs it.
  "$bin"/ipu-run --target "$target" "$model" --device-lock "$out/device.lock" \
    > "$out/run-$tag.txt" 2> "$out/run-$tag.log" || true
  cyc=$(grep -o ' cycles=[0-9]*' "$out/run-$tag.txt" | head -n1 | cut -d= -f2 || true)
  num=$(grep -o 'numericalTest=[A-Z]*' "$out/run-$tag.txt" | cut -d= -f2 || true)
  hw=$(grep -o 'hardwareTest=[A-Z]*' "$out/run-$tag.txt" | cut -d= -f2 || true)
  per=$([ -n "$cyc" ] && echo $((cyc / n)) || echo -)
  printf '%4s %-8s %5s %9s %7s %5s %7s %8s %8s %10s %9s %9s %9s %10s %9s\n' \
    "$n" "$form" "$ok" "$secs" "$rss" "$tile" "$code" "$recs" "$rows" "$wmb" "$pm" "${cyc:--}" "$per" "${num:-none}" "${hw:-none}"
done
done
