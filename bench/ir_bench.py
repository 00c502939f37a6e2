#!/usr/bin/env python3
"""Times parse + verify + print of one file with ipu-opt and upstream
mlir-opt side by side; prints wall time, peak RSS and the ratios."""
import os
import subprocess
import sys
import time


def run(cmd, runs):
    best = None
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        err = proc.stderr.read().decode(errors="replace")
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"command failed: {' '.join(cmd)}\n{err}")
        rss_mib = usage.ru_maxrss / 1024.0
        if best is None or elapsed < best[0]:
            best = (elapsed, rss_mib)
    return best


def main():
    path, ipu_opt, mlir_opt = sys.argv[1:4]
    runs = int(os.environ.get("BENCH_RUNS", "3"))
    ops = sum(1 for line in open(path) if "= \"" in line or line.lstrip().startswith('"'))
    print(f"input: {path} ({os.path.getsize(path) / 2**20:.1f} MiB, ~{ops} ops), best of {runs} runs")
    ours = run([ipu_opt, "--allow-unregistered-dialect", path, "-o", "/dev/null"], runs)
    theirs = run([mlir_opt, "--allow-unregistered-dialect", path, "-o", "/dev/null"], runs)
    print(f"{'tool':<10} {'wall s':>8} {'peak MiB':>10}")
    print(f"{'ipu-opt':<10} {ours[0]:>8.3f} {ours[1]:>10.1f}")
    print(f"{'mlir-opt':<10} {theirs[0]:>8.3f} {theirs[1]:>10.1f}")
    print(f"time ratio (ipu-opt / mlir-opt): {ours[0] / theirs[0]:.3f}")
    print(f"peak-memory ratio (ipu-opt / mlir-opt): {ours[1] / theirs[1]:.3f}")


if __name__ == "__main__":
    main()
