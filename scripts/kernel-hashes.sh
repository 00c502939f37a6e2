#!/usr/bin/env bash
# Prints `HASH SOURCE PARAMS` for every kernel specialisation the kernel
# caches hold (those the tests and examples assembled), assembled with the
# current kernels/*.S: run it before and after a change to the kernels or
# the assembler and diff the two outputs (identical: the same objects).
#
# Usage: scripts/kernel-hashes.sh [OUT] [EXTRA kernel-hashes ARGS]
#   Caches read: $IPU_KERNEL_CACHE, target/kernel-cache, ~/.cache/ipu-stack/kernels
#   (those that exist). Pass `--from OLD_OUT` to re-use an earlier run's set.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-/dev/stdout}"
shift || true
args=()
for d in "${IPU_KERNEL_CACHE:-}" "$root/target/kernel-cache" "$HOME/.cache/ipu-stack/kernels"; do
  [ -n "$d" ] && [ -d "$d" ] && args+=(--cache "$d")
done
cargo build -q -p ipu-isa --bin kernel-hashes --manifest-path "$root/Cargo.toml"
"$root/target/debug/kernel-hashes" "${args[@]}" "$@" > "$out"
