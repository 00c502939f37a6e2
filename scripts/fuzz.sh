#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ for SECONDS each (default 60), as
# many at once as the machine has cores, on the stable toolchain, and fails if any target finds a
# crash, a hang (-timeout) or runaway memory (-rss_limit_mb).
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (default: every target)
#
# Stable Rust: libfuzzer-sys builds libFuzzer itself and the coverage
# instrumentation is stable `-C` flags; only the sanitizers need nightly
# (-Zsanitizer), so targets are built with `--sanitizer none`. Safe Rust's
# panics, overflow checks (debug assertions are on) and the limits below are
# what find bugs.
#
# cargo-fuzz (pinned) is installed into cargo's bin folder when missing. Each
# target's seed corpus is fuzz/seeds/TARGET (committed); what the fuzzer
# finds goes to fuzz/corpus/TARGET, crashes to fuzz/artifacts/TARGET, logs
# to target/fuzz/TARGET.log. A closing line per target gives executions,
# coverage (cov, ft) and the verdict.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

seconds="${1:-60}"
[ $# -gt 0 ] && shift
all_targets=(parse onnx package asm npy target differential paths)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

cargo_fuzz_version=0.13.2
# cargo-fuzz is a cargo subcommand: like clippy and rustfmt it lives with
# the toolchain, in cargo's own bin folder, installed once when missing.
cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
export PATH="$cargo_bin:$PATH"
if ! cargo-fuzz --version 2>/dev/null | grep -qx "cargo-fuzz $cargo_fuzz_version"; then
  echo "== installing cargo-fuzz $cargo_fuzz_version into $cargo_bin"
  cargo install --locked --quiet cargo-fuzz --version "$cargo_fuzz_version"
fi
# Everything the targets build or cache stays in the repository.
export IPU_KERNEL_CACHE="${IPU_KERNEL_CACHE:-$root/target/kernel-cache}"
# One simulator thread per fuzzer: the machine has two cores.
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-1}"

echo "== cargo fuzz build (stable, no sanitizer)"
cargo fuzz build --sanitizer none

mkdir -p target/fuzz
# The targets run side by side, one per core (FUZZ_JOBS to change it); each
# writes its own log, read once all have ended.
jobs_max="${FUZZ_JOBS:-$(nproc)}"
run_target() {
  local t="$1" status=0
  # -timeout: one input may take 10 s at most; -rss_limit_mb: the process
  # stays under 2 GiB (the targets cap tensors at 64 MiB, see fuzz/src/lib.rs).
  cargo fuzz run --sanitizer none "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" >"target/fuzz/$t.log" 2>&1 || status=$?
  echo "$status" >"target/fuzz/$t.status"
}
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  rm -f "target/fuzz/$t.status"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  echo "== fuzz $t (${seconds}s)"
  run_target "$t" &
done
wait

failed=()
summary=()
for t in "${targets[@]}"; do
  log="target/fuzz/$t.log"
  status=$(cat "target/fuzz/$t.status" 2>/dev/null || echo "no status")
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n1 || true)
  execs=$(grep -Eo 'stat::number_of_executed_units:[[:space:]]+[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
  cov=$(grep -Eo 'cov: [0-9]+' <<<"$done_line" | grep -Eo '[0-9]+' || echo '?')
  ft=$(grep -Eo 'ft: [0-9]+' <<<"$done_line" | grep -Eo '[0-9]+' || echo '?')
  rss=$(grep -Eo 'stat::peak_rss_mb:[[:space:]]+[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')
  if [ "$status" = 0 ]; then
    verdict=ok
  else
    verdict="FAILED (exit $status; see $log and fuzz/artifacts/$t/)"
    failed+=("$t")
    grep -E 'panicked at|ERROR: libFuzzer|SUMMARY' "$log" | head -n 5 || true
  fi
  summary+=("fuzz $t: ${execs} executions, cov ${cov}, ft ${ft}, peak rss ${rss} MB: $verdict")
done

echo "== fuzz summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, no crash, hang or memory overrun"
