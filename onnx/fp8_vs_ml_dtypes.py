#!/usr/bin/env python3
"""Check the reference FP8 rounding against ml_dtypes, value by value.

Casts ~17M float32 values (every 251st bit pattern of the whole f32 range,
plus every midpoint between adjacent FP8 codes and its two neighbours) to
f8E4M3FN, f8E5M2, f8E4M3FNUZ and f8E5M2FNUZ (ONNX Cast, saturate=0) with
ipu-onnx + ipu-reference, and compares every code with ml_dtypes' astype.

Runs in the repository's environment (scripts/python-env.sh makes .venv/).
Usage: .venv/bin/python onnx/fp8_vs_ml_dtypes.py
"""
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import onnx
from onnx import helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "target", "fp8-check")
FORMATS = [
    (17, ml_dtypes.float8_e4m3fn),
    (19, ml_dtypes.float8_e5m2),
    (18, ml_dtypes.float8_e4m3fnuz),
    (20, ml_dtypes.float8_e5m2fnuz),
]


def main():
    os.makedirs(WORK, exist_ok=True)
    bits = np.arange(0, 2**32, 251, dtype=np.uint64).astype(np.uint32)
    parts = [bits.view(np.float32)]
    for _, dt in FORMATS:
        v = np.arange(256, dtype=np.uint8).view(dt).astype(np.float32)
        v = np.sort(v[np.isfinite(v)])
        mid = ((v[1:].astype(np.float64) + v[:-1]) / 2).astype(np.float32)
        parts += [mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf))]
    x = np.concatenate(parts).astype(np.float32)
    np.save(os.path.join(WORK, "x.npy"), x.reshape(1, -1))
    nodes, outs = [], []
    for i, (to, _) in enumerate(FORMATS):
        nodes.append(helper.make_node("Cast", ["x"], [f"y{i}"], to=to, saturate=0))
        outs.append(helper.make_tensor_value_info(f"y{i}", to, [1, x.size]))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [1, x.size])], outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.save(m, os.path.join(WORK, "cast.onnx"))
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "ipu-onnx", "--bin", "onnx-run"],
                   cwd=ROOT, check=True)
    subprocess.run([os.path.join(ROOT, "target", "release", "onnx-run"), os.path.join(WORK, "cast.onnx"),
                    "--input", f"x={os.path.join(WORK, 'x.npy')}", "--out-dir", os.path.join(WORK, "out")],
                   check=True, stdout=subprocess.DEVNULL)
    bad = 0
    for i, (_, dt) in enumerate(FORMATS):
        got = np.load(os.path.join(WORK, "out", f"output_{i}.npy"))
        got = got[got.dtype.names[0]].ravel()  # structured: raw codes
        with np.errstate(invalid="ignore"):
            want = x.astype(dt).view(np.uint8)
        both_nan = np.isnan(got.view(dt).astype(np.float32)) & np.isnan(want.view(dt).astype(np.float32))
        diff = (got != want) & ~both_nan
        bad += int(diff.sum())
        print(f"{dt.__name__:>18}: {x.size} values, {int(diff.sum())} mismatches")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
