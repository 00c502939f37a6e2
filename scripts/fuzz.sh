#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ for SECONDS each (default 60), one
# after the other, on the stable toolchain, and fails if any target finds a
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
# cargo-fuzz (pinned) is installed into target/tools/ when missing. Each
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
tools="$root/target/tools"
if ! "$tools/bin/cargo-fuzz" --version 2>/dev/null | grep -qx "cargo-fuzz $cargo_fuzz_version"; then
  echo "== installing cargo-fuzz $cargo_fuzz_version into $tools"
  cargo install --locked --quiet cargo-fuzz --version "$cargo_fuzz_version" --root "$tools"
fi
export PATH="$tools/bin:$PATH"
# Everything the targets build or cache stays in the repository.
export IPU_KERNEL_CACHE="${IPU_KERNEL_CACHE:-$root/target/kernel-cache}"
# One simulator thread per fuzzer: the machine has two cores.
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-1}"

echo "== cargo fuzz build (stable, no sanitizer)"
cargo fuzz build --sanitizer none

mkdir -p target/fuzz
failed=()
summary=()
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  log="target/fuzz/$t.log"
  echo "== fuzz $t (${seconds}s)"
  status=0
  # -timeout: one input may take 10 s at most; -rss_limit_mb: the process
  # stays under 2 GiB (the targets cap tensors at 64 MiB, see fuzz/src/lib.rs).
  cargo fuzz run --sanitizer none "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" >"$log" 2>&1 || status=$?
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
  line="fuzz $t: ${execs} executions, cov ${cov}, ft ${ft}, peak rss ${rss} MB: $verdict"
  echo "$line"
  summary+=("$line")
done

echo "== fuzz summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, no crash, hang or memory overrun"
