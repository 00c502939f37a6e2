#!/usr/bin/env python3
"""A torchvision CNN (resnet18 or mobilenet_v2, random initial weights, 224x224,
batch 1) exported with torch.onnx.export, then on the simulated device:
ipu-translate --import-onnx, ipu-run --target TARGET (compiled with
ipu-lower-to-machine, run on the chip simulator, checked against the
reference interpreter), and the device's output compared with onnxruntime on
the same input: worst absolute error over the output's largest magnitude.

Not part of the test suite: PyPI has no torchvision for the pinned torch
(python/requirements-test.txt, torch==2.15.0; torchvision 0.29.2 requires
torch 2.14). Its models import and export with torch 2.15 all the same:
  python -m pip install --no-deps --target DIR torchvision==0.29.2 pillow
Usage (the export in target/py-venv with DIR on PYTHONPATH, the rest in the
repository's .venv, which has onnxruntime):
  PYTHONPATH=DIR target/py-venv/bin/python onnx/cnn_device.py export resnet18 OUT.onnx
  .venv/bin/python onnx/cnn_device.py run OUT.onnx [--target ipu21]
Exit status 0 when the error is within --tolerance (2e-2, the issue's bound)
and ipu-run reports numericalTest=PASS and hardwareTest=PASS.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def export(name, path):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, (x,), path, dynamo=False, opset_version=17,
                      input_names=["x"], output_names=["y"])


def run(path, target, tolerance):
    import numpy as np
    import onnxruntime as ort

    tools = os.path.join(ROOT, "target", "release")
    with tempfile.TemporaryDirectory() as d:
        ir = os.path.join(d, "model.mlir")
        subprocess.run([os.path.join(tools, "ipu-translate"), "--import-onnx", path, "-o", ir],
                       check=True)
        x = np.random.default_rng(1).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
        np.save(os.path.join(d, "x.npy"), x)
        out = subprocess.run([os.path.join(tools, "ipu-run"), ir, "--target", target,
                              "--input", "x=" + os.path.join(d, "x.npy"),
                              "--output-dir", os.path.join(d, "out")],
                             capture_output=True, text=True)
        print(out.stdout, end="")
        y = np.load(os.path.join(d, "out", "y.npy"))
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    err = float(np.abs(y - want).max() / np.abs(want).max())
    print(f"worst abs error / largest magnitude vs onnxruntime: {err:.3e} "
          f"(largest magnitude {float(np.abs(want).max()):.3e})")
    passed = all(re.search(k + r"=PASS", out.stdout) for k in ("numericalTest", "hardwareTest"))
    return 0 if passed and err <= tolerance else 1


def main(argv):
    if len(argv) >= 3 and argv[0] == "export":
        export(argv[1], argv[2])
        return 0
    if len(argv) >= 2 and argv[0] == "run":
        target = argv[argv.index("--target") + 1] if "--target" in argv else "ipu21"
        tol = float(argv[argv.index("--tolerance") + 1]) if "--tolerance" in argv else 2e-2
        return run(argv[1], target, tol)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
