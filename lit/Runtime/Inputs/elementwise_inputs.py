"""Inputs of the elementwise device tests (lit/Runtime/elementwise-*.mlir).

usage: elementwise_inputs.py MODEL.mlir OUTDIR

Every argument of the model's function, `%name: tensor<...xT> {ipu.name =
"D_..."}`, gets values from the domain its name starts with (a fixed seed),
written to OUTDIR/<ipu.name>.npy; the matching `--input NAME=FILE` arguments
of ipu-run are printed on one line. Domains keep every op's results of
moderate size, where the tolerances (per output, scaled by its largest value)
are tight:

  x: uniform in [-4, 4) (activations; add, sub, mul, max, min)
  p: log-uniform in [1e-2, 1e2) (log, sqrt, rsqrt)
  d: a random sign times log-uniform in [0.25, 4) (divisors, reciprocal)
  s: the IEEE special values 0, -0, inf, -inf, NaN and 1, -1, 0.5, -2 in
     turn (element i is value i mod 9), t: value (i div 9) mod 9, so a
     binary op of an s and a t argument of 81 elements or more meets every
     pair of them
  n, m: the same without NaN (8 values)
"""

import re
import sys

import numpy as np

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.0]
TYPES = {"f32": np.float32, "f16": np.float16}
ARG = re.compile(r'%\w+: tensor<((?:\d+x)*)(f32|f16)> \{ipu\.name = "([a-z])_(\w+)"\}')


def values(domain, count, rng):
    if domain == "x":
        return rng.uniform(-4.0, 4.0, count)
    if domain == "p":
        return np.exp(rng.uniform(np.log(1e-2), np.log(1e2), count))
    if domain == "d":
        sign = rng.choice([-1.0, 1.0], count)
        return sign * np.exp(rng.uniform(np.log(0.25), np.log(4.0), count))
    if domain in ("s", "t", "n", "m"):
        pool = [v for v in SPECIAL if domain in ("s", "t") or not np.isnan(v)]
        k = len(pool)
        slow = domain in ("t", "m")
        return np.array([pool[(i // k if slow else i) % k] for i in range(count)])
    raise SystemExit(f"unknown input domain '{domain}' (x, p, d, s, t, n, m)")


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    model, outdir = sys.argv[1], sys.argv[2]
    text = open(model, encoding="utf-8").read()
    rng = np.random.default_rng(7)
    args = []
    seen = set()
    for dims, ty, domain, rest in ARG.findall(text):
        name = f"{domain}_{rest}"
        if name in seen:
            continue
        seen.add(name)
        shape = [int(d) for d in dims.split("x") if d]
        count = int(np.prod(shape, dtype=np.int64))
        # Values of the domain rounded to the element type once.
        v = values(domain, count, rng).astype(TYPES[ty]).reshape(shape)
        path = f"{outdir}/{name}.npy"
        np.save(path, v)
        args.append(f"--input {name}={path}")
    if not args:
        raise SystemExit(f"{model}: no argument named D_... with an f32 or f16 tensor type")
    print(" ".join(args))


if __name__ == "__main__":
    main()
