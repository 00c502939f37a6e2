#!/usr/bin/env python3
"""Rewrites the CHECK lines of a lit test that pins a whole exchange-stage
function (lit/Conversion/TileToExchange/*.mlir) from the compiler's current
output, keeping the test's comments, RUN lines and other prefixes.

Usage: scripts/pin-exchange-checks.py TEST.mlir -- IPU-OPT-ARGS...
Review the diff: the pinned figures are the test's claims.
"""
import subprocess
import sys

test = sys.argv[1]
args = sys.argv[sys.argv.index("--") + 1:]
out = subprocess.run(args + [test], check=True, capture_output=True, text=True).stdout
lines = out.splitlines()
body = [l.strip() for l in lines[2:-2]]
func = lines[1]
checks = ["// CHECK: " + func[func.index("attributes {"):].rstrip(" {")]
for i, t in enumerate(body):
    prefix = "// CHECK: " if i == 0 else "// CHECK-NEXT: "
    checks.append(prefix + t)
src = open(test).read().splitlines()
kept = [l for l in src if not l.startswith("// CHECK: ") and not l.startswith("// CHECK-NEXT: ")]
# The checks go where the first one was.
first = next(i for i, l in enumerate(src) if l.startswith("// CHECK"))
at = sum(1 for l in src[:first] if not l.startswith("// CHECK: ") and not l.startswith("// CHECK-NEXT: "))
new = kept[:at] + checks + kept[at:]
open(test, "w").write("\n".join(new) + "\n")
