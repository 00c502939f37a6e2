#!/usr/bin/env python3
"""Structure checks the test script runs over the Rust sources.

- No function longer than 200 lines (signature to closing brace), rustfmt's
  layout assumed: the closing brace sits at the indentation of `fn`.

Usage: scripts/check-structure.py [--limit N] [--list] [ROOT]
Exits 1, listing each offender as path:line: name (lines), when any is found.
"""
import argparse
import os
import re
import sys

FN = re.compile(r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+\"[^\"]*\")\s+)*fn\s+([A-Za-z_][A-Za-z0-9_]*)")
SKIP_DIRS = {"target", ".git", ".venv", "node_modules"}


def functions(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FN.match(lines[i])
        if m:
            indent, name = m.group(1), m.group(2)
            # The body opens on the signature's last line; a declaration
            # without a body (trait method) ends with `;` first.
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith("{") and not lines[j].rstrip().endswith(";"):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                close = indent + "}"
                k = j + 1
                while k < len(lines) and lines[k].rstrip() != close:
                    k += 1
                yield name, i + 1, k - i + 1
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--list", action="store_true", help="print the 20 longest functions")
    ap.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    a = ap.parse_args()
    found = []
    for d, dirs, files in os.walk(a.root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        for fn in sorted(files):
            if fn.endswith(".rs"):
                p = os.path.join(d, fn)
                for name, line, n in functions(p):
                    found.append((n, os.path.relpath(p, a.root), line, name))
    found.sort(reverse=True)
    if a.list:
        for n, p, line, name in found[:20]:
            print(f"{p}:{line}: {name} ({n} lines)")
    bad = [f for f in found if f[0] > a.limit]
    for n, p, line, name in bad:
        print(f"{p}:{line}: fn {name} is {n} lines long (limit {a.limit})", file=sys.stderr)
    print(f"structure: {len(found)} functions, {len(bad)} over {a.limit} lines")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
