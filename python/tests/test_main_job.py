"""The main job from Python: the bundled transformer block compiled for
ipu21 and run with its per-op checks gives the lines `ipu-run` prints, and
its outputs are the very .npy files `ipu-run --output-dir` writes."""

import os
import subprocess
import time

import numpy as np

import ipu_stack


def ipu_run(repo):
    exe = repo / "target" / "release" / "ipu-run"
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "ipu-run"], cwd=repo, check=True)
    return exe


def test_main_job_matches_ipu_run(repo, lock, tmp_path):
    exe = ipu_run(repo)
    model = "examples/transformer_block.mlir"
    p = subprocess.run([str(exe), "--target", "ipu21", model, "--check-ops", "--output-dir", str(tmp_path),
                        "--device-lock", lock], cwd=repo, capture_output=True, text=True, check=True)
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        start = time.time()
        c = ipu_stack.compile(model, target="ipu21")
        compiled = time.time()
        r = c.run_full(check_ops=True, device_lock=lock)
        done = time.time()
    finally:
        os.chdir(cwd)
    assert r.verdict == p.stdout.splitlines()
    assert r.notes == [l for l in p.stderr.splitlines() if l.startswith("note:")]
    for name, value in r.outputs.items():
        data = (tmp_path / f"{name}.npy").read_bytes()
        assert r.npy(name) == data
        assert np.array_equal(value, np.load(tmp_path / f"{name}.npy"), equal_nan=True) or value.dtype != np.float32
    print(f"\nmain job from Python: compile {compiled - start:.1f} s, run {done - compiled:.1f} s, "
          f"{r.cycles} cycles; {r.verdict[1]}")
