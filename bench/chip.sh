#!/usr/bin/env bash
# Whole-chip simulator benchmark: simulated tile-cycles per second on a full
# chip (default ipu21, 1472 tiles), for a BSP program (compute, sync,
# exchange, sync) and for the same compute without exchange code.
# Usage: bench/chip.sh [TARGET] [SUPERSTEPS] [ITERS] [WORDS]
# RAYON_NUM_THREADS sets the thread count.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench -p ipu-runtime --bench chip -- "$@"
