#!/usr/bin/env bash
# Exchange scheduler benchmark on realistic 1472-tile phases.
# Prints per phase: transfers, initial/selected horizon, endpoint lower bound,
# horizon/bound ratio, schedule kind, largest exchange-table row, scheduling
# time, and the time to reuse a relocated copy of the phase.
#
# Usage: bench/exchange.sh [TARGET [FILTER]]   (default ipu21; FILTER keeps phases whose label contains it)
# EXCHANGE_BENCH_VARIANTS=1 also prints every scheduler variant's outcome.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p ipu-exchange-schedule --example exchange_bench -- "${1:-ipu21}" "${2:-}"
