"""``python -m ipu_stack``: compile a model and run it on the simulated
device, printing the verdict lines as ``ipu-run`` does."""

from __future__ import annotations

import argparse
import sys

import ipu_stack


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m ipu_stack",
        description="Compile a model (ONNX, nn IR or .ipuexe) for the simulated IPU and run it, "
                    "printing ipu-run's verdict lines.")
    p.add_argument("model", help="an .onnx, .mlir (nn IR) or .ipuexe file")
    p.add_argument("--target", default="ipu21", help="target name or file (default: ipu21)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--check-ops", action="store_true", help="check every op on the device")
    p.add_argument("--ir", metavar="STAGE", help="print the IR after STAGE (nn, tile, exchange, machine) and stop")
    p.add_argument("--save", metavar="FILE.ipuexe", help="write the compiled package")
    p.add_argument("--report", metavar="DIR", help="write DIR/report.html of the run")
    p.add_argument("--version", action="version", version=ipu_stack.__version__)
    a = p.parse_args(argv)
    try:
        model = ipu_stack.compile(a.model, target=a.target)
        if a.ir:
            sys.stdout.write(model.ir(a.ir))
            return 0
        if a.save:
            model.save(a.save)
        run = model.run_full(seed=a.seed, check_ops=a.check_ops, verbose=True)
        if a.report:
            model.report(a.report)
    except ipu_stack.IpuError as e:
        print(e.rendered, file=sys.stderr)
        return 1
    return 0 if run.passed else 1


if __name__ == "__main__":
    sys.exit(main())
