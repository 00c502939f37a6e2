#!/usr/bin/env bash
# ONNX backend node-test conformance of ipu-onnx + ipu-reference, or, with
# --device TARGET, of the compiled programs on the simulated device.
#
# The node tests come with the onnx package of the repository's Python
# environment (.venv/, pinned by scripts/requirements.txt, made by
# scripts/python-env.sh when missing). Builds the runner and runs it against
# the committed baseline (exit status non-zero if a case that passed before
# fails): onnx/conformance-baseline.txt, or with --device
# onnx/conformance-device-baseline.txt (written for ipu21; test16 passes the
# same cases). The per-op table of the device run is committed as
# onnx/conformance-device-table.txt (--write-table).
#
# Usage: onnx/conformance.sh [runner args...]   e.g. --details, --filter gelu,
#        --write-baseline onnx/conformance-baseline.txt,
#        --device ipu21 --write-baseline onnx/conformance-device-baseline.txt,
#        --device ipu21 --details --write-table onnx/conformance-device-table.txt
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$("$root/scripts/python-env.sh")"
data="$("$python" -c 'import os, onnx; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node"))')"
[ -d "$data" ] || { echo "conformance: no ONNX node tests at $data" >&2; exit 1; }
echo "conformance: onnx $("$python" -c 'import onnx; print(onnx.__version__)') node tests from $data" >&2
cd "$root"
# CONFORMANCE_PROFILE=debug reuses the test build (the run takes seconds either way).
profile="${CONFORMANCE_PROFILE:-release}"
if [ "$profile" = release ]; then
  cargo build --release --quiet -p ipu-driver --bin onnx-conformance
else
  cargo build --quiet -p ipu-driver --bin onnx-conformance
fi
baseline_file="$root/onnx/conformance-baseline.txt"
for a in "$@"; do
  case "$a" in --device | --device=*) baseline_file="$root/onnx/conformance-device-baseline.txt" ;; esac
done
baseline=()
if [ -f "$baseline_file" ]; then
  baseline=(--baseline "$baseline_file")
fi
exec "$root/target/$profile/onnx-conformance" --data "$data" "${baseline[@]}" "$@"
