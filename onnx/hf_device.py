#!/usr/bin/env python3
"""Hugging Face transformers' vision models on the simulated device, as a user
brings them: each exported by onnx/hf_models.py in the pinned test
environment (target/py-venv from python/requirements-test.txt: torch 2.15.0,
transformers 5.23.0; made or refreshed here by scripts/pinned-venv.sh),
with torch.onnx.export's TorchScript exporter (or --exporter dynamo), at
224x224 batch 1, then run
by onnx/cnn_device.py's `run`: ipu-translate --import-onnx, ipu-run --target
TARGET (compiled for the chip, run on its simulator, checked against the
reference interpreter), the device's logits compared with onnxruntime's.

Usage (in the repository's .venv, which has onnxruntime):
  .venv/bin/python onnx/hf_device.py [NAME...] [--target ipu21] [--device-lock PATH]
      [--tolerance 2e-2] [--keep DIR] [--exporter torchscript|dynamo] [--outline-layers]
--outline-layers imports each model's repeated layers as one function called
per layer (ipu-translate --import-onnx --outline-layers; docs/models.md).
NAME: resnet18 (the default), resnet50, mobilenet_v2, vit_s16, dpt_vits16
(see onnx/hf_models.py; dpt_vits16's output is a depth map, compared the
same way). One line per model: compile seconds, ipu-run wall
seconds, peak RSS, cycles, roofline, floor and the worst absolute error over
the largest magnitude; exit status 0 when every model is within the
tolerance and ipu-run reports numericalTest=PASS and hardwareTest=PASS.
--keep DIR keeps the exported .onnx files there.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "onnx"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import cnn_device  # noqa: E402

VISION = ("resnet18", "resnet50", "mobilenet_v2", "vit_s16", "dpt_vits16")


def export_python():
    """The pinned test environment's python, made or refreshed first."""
    venv = os.path.join(ROOT, "target", "py-venv")
    subprocess.run([os.path.join(ROOT, "scripts", "pinned-venv.sh"), venv,
                    os.path.join(ROOT, "python", "requirements-test.txt")], check=True)
    return os.path.join(venv, "bin", "python")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", default=["resnet18"], help=" ".join(VISION))
    ap.add_argument("--target", default="ipu21")
    ap.add_argument("--tolerance", type=float, default=2e-2)
    ap.add_argument("--device-lock", default=None)
    ap.add_argument("--keep", default=None, help="directory for the exported .onnx files")
    ap.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript")
    ap.add_argument("--outline-layers", action="store_true",
                    help="import each model's repeated layers as one function called per layer")
    a = ap.parse_args()
    unknown = [n for n in a.names if n not in VISION]
    if unknown:
        ap.error(f"unknown model {' '.join(unknown)}; known: {' '.join(VISION)}")
    py = export_python()
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = a.keep or tmp
        os.makedirs(out_dir, exist_ok=True)
        for name in a.names:
            path = os.path.join(out_dir, name + ".onnx")
            start = time.monotonic()
            export = subprocess.run([py, os.path.join(ROOT, "onnx", "hf_models.py"), "export",
                                     name, path, "--exporter", a.exporter],
                                    capture_output=True, text=True)
            if export.returncode != 0:
                print(export.stderr[-3000:], file=sys.stderr)
                print(f"{name}: export failed (exit {export.returncode})")
                failed.append(name)
                continue
            print(f"{name}: exported by torch.onnx.export ({a.exporter}) in "
                  f"{time.monotonic() - start:.1f} s")
            sys.stdout.flush()
            if cnn_device.run(path, a.target, a.tolerance, a.device_lock, label=name,
                              outline=a.outline_layers) != 0:
                failed.append(name)
            sys.stdout.flush()
    print(f"transformers models on {a.target}: {len(a.names) - len(failed)} of {len(a.names)} "
          f"within {a.tolerance:g} of onnxruntime with numericalTest=PASS hardwareTest=PASS"
          + (f"; failed: {' '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
