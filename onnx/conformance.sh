#!/usr/bin/env bash
# ONNX backend node-test conformance of ipu-onnx + ipu-reference.
#
# Fetches the onnx wheel (test data only; nothing is installed) with pip
# into target/onnx-conformance/ (cached there), unpacks the node tests,
# builds the runner in release mode and runs it against the committed
# baseline (exit status non-zero if a case that passed before fails).
#
# Usage: onnx/conformance.sh [runner args...]   e.g. --details, --filter gelu,
#        --write-baseline onnx/conformance-baseline.txt
set -euo pipefail
ONNX_VERSION=1.22.0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/target/onnx-conformance"
data="$cache/wheel/onnx/backend/test/data/node"
mkdir -p "$cache"
if [ ! -d "$data" ]; then
  if ! ls "$cache"/onnx-"$ONNX_VERSION"-*.whl >/dev/null 2>&1; then
    python3 -m pip download --no-deps --only-binary=:all: "onnx==$ONNX_VERSION" -d "$cache"
  fi
  wheel="$(ls "$cache"/onnx-"$ONNX_VERSION"-*.whl | head -n1)"
  python3 - "$wheel" "$cache/wheel" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("onnx/backend/test/data/node/")])
PY
fi
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
