#!/usr/bin/env bash
# Tile ISA benchmarks: simulated instructions per second on one core, and
# each GEMM kernel's MACs/cycle against the AMP peak on one tile.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench -p ipu-runtime --bench tile "$@"
