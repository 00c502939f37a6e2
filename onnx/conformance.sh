#!/usr/bin/env bash
# ONNX backend node-test conformance of ipu-onnx + ipu-reference.
#
# The node tests come with the onnx package of the repository's Python
# environment (.venv/, pinned by scripts/requirements.txt, made by
# scripts/python-env.sh when missing). Builds the runner and runs it against
# the committed baseline (exit status non-zero if a case that passed before
# fails).
#
# Usage: onnx/conformance.sh [runner args...]   e.g. --details, --filter gelu,
#        --write-baseline onnx/conformance-baseline.txt
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
  cargo build --release --quiet -p ipu-onnx --bin onnx-conformance
else
  cargo build --quiet -p ipu-onnx --bin onnx-conformance
fi
baseline=()
if [ -f "$root/onnx/conformance-baseline.txt" ]; then
  baseline=(--baseline "$root/onnx/conformance-baseline.txt")
fi
exec "$root/target/$profile/onnx-conformance" --data "$data" "${baseline[@]}" "$@"
