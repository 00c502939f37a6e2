#!/usr/bin/env python3
"""What onnxruntime (the pinned one, scripts/requirements.txt) makes of the lit models.

  ort_check.py refuses MODEL...            each must fail to load; prints why
  ort_check.py same MODEL DIR [NAME=NPY]   runs MODEL on the inputs given (the others
                                           take their defaults) and checks each output
                                           equals DIR/<output>.npy
"""
import sys

import numpy as np
import onnxruntime as ort


def session(path):
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"])


def refuses(paths):
    for p in paths:
        try:
            session(p)
        except Exception as e:  # onnxruntime raises its own exception types
            print(f"onnxruntime refuses {p.rsplit('/', 1)[-1]}: {str(e).splitlines()[0]}")
            continue
        sys.exit(f"onnxruntime accepts {p}")


def same(path, out_dir, specs):
    feeds = {}
    for s in specs:
        name, file = s.split("=", 1)
        feeds[name] = np.load(file)
    s = session(path)
    for out, value in zip([o.name for o in s.get_outputs()], s.run(None, feeds)):
        ours = np.load(f"{out_dir}/{out}.npy")
        if ours.shape != value.shape or not np.allclose(ours, value, rtol=1e-6, atol=1e-6):
            sys.exit(f"output {out}: onnxruntime {value.tolist()}, ipu-run {ours.tolist()}")
        print(f"{out}: same as onnxruntime {value.tolist()}")


if __name__ == "__main__":
    if sys.argv[1] == "refuses":
        refuses(sys.argv[2:])
    elif sys.argv[1] == "same":
        same(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)
