#!/usr/bin/env python3
"""Op patterns as exporters write them, on the simulated device against
onnxruntime. Each graph is written with onnx.helper node for node as
torch.onnx.export writes the pattern (a test of the pattern, not a model):

* mlp: nn.Linear -> GELU(approximate='none') -> nn.Linear of odd sizes
  (3x37 -> 53 -> 19; --gemm: as Gemm with transB, else MatMul by the
  transposed weight and Add of the bias), the GELU as Div by a rank-0
  sqrt(2), Erf, Add of a rank-0 1.0, Mul, Mul by a rank-0 0.5;
* mask: the attention mask of a BERT-like export: i64 mask -> Unsqueeze ->
  Cast to bool -> Not -> Where(-max, 0) added to the scores -> Softmax, and
  the mask cast i64 -> bool -> f32 and multiplied in (mean pooling).

ipu-translate --import-onnx, ipu-run --target TARGET (compiled, run on the
chip simulator, checked against the reference interpreter), every output
compared with onnxruntime: worst absolute error relative to the output's
largest magnitude. Runs in the repository's environment (scripts/python-env.sh
prints its python). Usage: .venv/bin/python onnx/exporter_forms_device.py
[--target ipu21] [--gemm] [--tolerance 2e-2]. Exit status 0 when every
output is within the tolerance and ipu-run reports numericalTest=PASS and
hardwareTest=PASS.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def const(name, v, dtype=np.float32):
    return h.make_node("Constant", [], [name], value=nh.from_array(np.array(v, dtype=dtype), name))


def linear(x, w, b, out, gemm, inits):
    """nn.Linear as the exporter writes it: Gemm(transB), or MatMul by the
    transposed weight and Add of the bias."""
    if gemm:
        inits += [nh.from_array(w, out + ".weight"), nh.from_array(b, out + ".bias")]
        return [h.make_node("Gemm", [x, out + ".weight", out + ".bias"], [out], transB=1)]
    inits += [nh.from_array(np.ascontiguousarray(w.T), out + ".weight_t"),
              nh.from_array(b, out + ".bias")]
    return [h.make_node("MatMul", [x, out + ".weight_t"], [out + ".mm"]),
            h.make_node("Add", [out + ".bias", out + ".mm"], [out])]


def mlp(gemm, rng):
    n, i, hid, o = 3, 37, 53, 19
    w1 = (rng.standard_normal((hid, i)) / np.sqrt(i)).astype(np.float32)
    b1 = (rng.standard_normal(hid) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((o, hid)) / np.sqrt(hid)).astype(np.float32)
    b2 = (rng.standard_normal(o) * 0.1).astype(np.float32)
    inits = []
    nodes = linear("x", w1, b1, "fc1", gemm, inits)
    nodes += [const("sqrt2", np.sqrt(2.0)), h.make_node("Div", ["fc1", "sqrt2"], ["d"]),
              h.make_node("Erf", ["d"], ["e"]),
              const("one", 1.0), h.make_node("Add", ["e", "one"], ["e1"]),
              h.make_node("Mul", ["fc1", "e1"], ["m"]),
              const("half", 0.5), h.make_node("Mul", ["m", "half"], ["g"])]
    nodes += linear("g", w2, b2, "y", gemm, inits)
    g = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("x", T.FLOAT, [n, i])],
                     [h.make_tensor_value_info("y", T.FLOAT, [n, o])], initializer=inits)
    return g, {"x": rng.standard_normal((n, i)).astype(np.float32)}


def mask(rng):
    b, heads, s = 2, 2, 24
    nodes = [
        const("axes", [1, 2], np.int64),
        h.make_node("Unsqueeze", ["mask", "axes"], ["m4"]),
        h.make_node("Cast", ["m4"], ["mb"], to=T.BOOL),
        h.make_node("Not", ["mb"], ["inv"]),
        const("neg", np.finfo(np.float32).min), const("zero", 0.0),
        h.make_node("Where", ["inv", "neg", "zero"], ["bias"]),
        h.make_node("Add", ["scores", "bias"], ["s2"]),
        h.make_node("Softmax", ["s2"], ["p"], axis=-1),
        h.make_node("Cast", ["mask"], ["mbool"], to=T.BOOL),
        h.make_node("Cast", ["mbool"], ["mf"], to=T.FLOAT),
        h.make_node("Mul", ["x", "mf"], ["pooled"]),
    ]
    g = h.make_graph(nodes, "mask",
                     [h.make_tensor_value_info("scores", T.FLOAT, [b, heads, s, s]),
                      h.make_tensor_value_info("mask", T.INT64, [b, s]),
                      h.make_tensor_value_info("x", T.FLOAT, [b, s])],
                     [h.make_tensor_value_info("p", T.FLOAT, [b, heads, s, s]),
                      h.make_tensor_value_info("pooled", T.FLOAT, [b, s])])
    m = np.ones((b, s), dtype=np.int64)
    m[1, s - 9:] = 0
    return g, {"scores": rng.standard_normal((b, heads, s, s)).astype(np.float32), "mask": m,
               "x": rng.standard_normal((b, s)).astype(np.float32)}


def check(name, graph, feeds, a, d):
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    path = os.path.join(d, f"{name}.onnx")
    onnx.save(model, path)
    ir = os.path.join(d, f"{name}.mlir")
    subprocess.run([os.path.join(ROOT, "target/release/ipu-translate"), "--import-onnx", path,
                    "-o", ir], check=True)
    out = os.path.join(d, f"{name}.out")
    cmd = [os.path.join(ROOT, "target/release/ipu-run"), ir, "--target", a.target, "--output-dir", out]
    for k, v in feeds.items():
        np.save(os.path.join(d, f"{name}.{k}.npy"), v)
        cmd += ["--input", f"{k}={os.path.join(d, f'{name}.{k}.npy')}"]
    if a.device_lock:
        cmd += ["--device-lock", a.device_lock]
    run = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "RUST_LOG": "error"})
    if run.returncode != 0:
        print(run.stderr.strip()[-4000:], file=sys.stderr)
        print(f"{name}: ipu-run failed (exit {run.returncode})")
        return False
    ok = "numericalTest=PASS" in run.stdout and "hardwareTest=PASS" in run.stdout
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for o, want in zip(sess.get_outputs(), sess.run(None, feeds)):
        got = np.load(os.path.join(out, f"{o.name}.npy")).astype(np.float64).ravel()
        want = want.astype(np.float64).ravel()
        rel = float(np.abs(got - want).max()) / max(float(np.abs(want).max()), 1e-30)
        ok = ok and rel <= a.tolerance
        print(f"{name}.{o.name}: max_abs_err/max_magnitude={rel:.3e} (tolerance {a.tolerance:g})")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="ipu21")
    ap.add_argument("--gemm", action="store_true")
    ap.add_argument("--tolerance", type=float, default=2e-2)
    ap.add_argument("--device-lock", default=None)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "ipu-driver",
                    "--bin", "ipu-translate", "--bin", "ipu-run"], cwd=ROOT, check=True)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        ok = check("mlp", *mlp(a.gemm, rng), a, d)
        ok = check("mask", *mask(rng), a, d) and ok
    print("exporterFormsTest=" + ("PASS" if ok else "FAIL"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
