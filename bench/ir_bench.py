#!/usr/bin/env python3
"""Times parse + verify + print of one file with ipu-opt and upstream
mlir-opt side by side; prints wall time, CPU time (user + system), peak
RSS and the ratios. Each tool's figures are those of its fastest run (by
wall time); the runs alternate between the tools, so a busy machine slows
both alike."""
import os
import subprocess
import sys
import time


def run_once(cmd):
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"command failed: {' '.join(cmd)}\n{err}")
    return (elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0)


def main():
    path, ipu_opt, mlir_opt = sys.argv[1:4]
    runs = int(os.environ.get("BENCH_RUNS", "3"))
    ops = sum(1 for line in open(path) if "= \"" in line or line.lstrip().startswith('"'))
    print(f"input: {path} ({os.path.getsize(path) / 2**20:.1f} MiB, ~{ops} ops), best of {runs} runs")
    cmds = {
        "ipu-opt": [ipu_opt, "--allow-unregistered-dialect", path, "-o", "/dev/null"],
        "mlir-opt": [mlir_opt, "--allow-unregistered-dialect", path, "-o", "/dev/null"],
    }
    best = {}
    for _ in range(runs):
        for tool, cmd in cmds.items():
            r = run_once(cmd)
            if tool not in best or r[0] < best[tool][0]:
                best[tool] = r
    ours, theirs = best["ipu-opt"], best["mlir-opt"]
    print(f"{'tool':<10} {'wall s':>8} {'cpu s':>8} {'peak MiB':>10}")
    for tool, r in best.items():
        print(f"{tool:<10} {r[0]:>8.3f} {r[1]:>8.3f} {r[2]:>10.1f}")
    print(f"time ratio (ipu-opt / mlir-opt): {ours[0] / theirs[0]:.3f} wall, {ours[1] / theirs[1]:.3f} cpu")
    print(f"speed-up (mlir-opt / ipu-opt): {theirs[0] / ours[0]:.2f}x wall, {theirs[1] / ours[1]:.2f}x cpu")
    print(f"peak-memory ratio (ipu-opt / mlir-opt): {ours[2] / theirs[2]:.3f}")


if __name__ == "__main__":
    main()
