#!/usr/bin/env python3
"""Structure checks the test script runs over the Rust sources.

- No function longer than 200 lines (signature to closing brace), rustfmt's
  layout assumed: the closing brace sits at the indentation of `fn`.
- No block of 10 or more consecutive lines written twice, in the Rust
  sources (`*.rs`, outside target/ and fuzz/seeds/) or in the kernels
  (`kernels/*.S`). Lines are compared with their white space folded; blank
  lines, comment lines (`//`, `///`, `//!` in Rust; `#` in assembly, and a
  trailing `# ...` there) and lines of punctuation alone (`}`, `});`, `)`,
  `],` ...) are passed over: they neither count towards the 10 nor break a
  block. So a block is 10 lines that say something, repeated to the letter
  (the same shape with other names is not reported). One block standing in
  several places is reported against its first place.

Usage: scripts/check-structure.py [--limit N] [--block N] [--no-blocks] [--list] [ROOT]
Exits 1 when any offender is found, listing each function as
path:line: name (lines) and each repeated block as path:first-last ~
path:first-last (N lines).
"""
import argparse
import os
import re
import sys

FN = re.compile(r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+\"[^\"]*\")\s+)*fn\s+([A-Za-z_][A-Za-z0-9_]*)")
SKIP_DIRS = {"target", ".git", ".venv", "node_modules"}
# Relative paths below ROOT whose files the block check passes over.
BLOCK_SKIP = ("fuzz/seeds/",)
PUNCTUATION = re.compile(r"^[\s{}()\[\];,]*$")


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


def significant_lines(path):
    """(line number, folded text) of each line the block check compares."""
    asm = path.endswith(".S")
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            t = line.strip()
            if asm:
                t = t.split("#", 1)[0].strip()
            elif t.startswith("//"):
                continue
            if not t or PUNCTUATION.match(t):
                continue
            out.append((n, " ".join(t.split())))
    return out


def block_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        rel = os.path.relpath(d, root).replace(os.sep, "/") + "/"
        if any(rel.startswith(s) for s in BLOCK_SKIP):
            continue
        for fn in sorted(files):
            if fn.endswith(".rs") or (fn.endswith(".S") and rel == "kernels/"):
                yield os.path.join(d, fn)


def repeated_blocks(root, size):
    """Maximal runs of `size` or more significant lines standing twice:
    (path a, first, last, path b, first, last, lines), b against the first
    place a of each block."""
    files = []
    places = {}
    for p in block_files(root):
        lines = significant_lines(p)
        fi = len(files)
        files.append((os.path.relpath(p, root), lines))
        for i in range(len(lines) - size + 1):
            key = hash(tuple(t for _, t in lines[i:i + size]))
            places.setdefault(key, []).append((fi, i))
    pairs = set()
    for ps in places.values():
        if len(ps) < 2:
            continue
        fa, ia = ps[0]
        for fb, ib in ps[1:]:
            # Lines repeating themselves (a run of identical lines) overlap.
            if fa == fb and ib - ia < size:
                continue
            pairs.add((fa, ia, fb, ib))
    runs = []
    for fa, ia, fb, ib in sorted(pairs):
        if (fa, ia - 1, fb, ib - 1) in pairs:
            continue
        k = 0
        while (fa, ia + k + 1, fb, ib + k + 1) in pairs:
            k += 1
        (pa, la), (pb, lb) = files[fa], files[fb]
        n = k + size
        runs.append((pa, la[ia][0], la[ia + n - 1][0], pb, lb[ib][0], lb[ib + n - 1][0], n))
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--list", action="store_true", help="print the 20 longest functions")
    ap.add_argument("--block", type=int, default=10, help="lines of a repeated block")
    ap.add_argument("--no-blocks", action="store_true", help="skip the repeated-block check")
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
    runs = [] if a.no_blocks else repeated_blocks(a.root, a.block)
    for pa, fa, la, pb, fb, lb, n in runs:
        print(f"{pa}:{fa}-{la} ~ {pb}:{fb}-{lb} ({n} lines repeated)", file=sys.stderr)
    if not a.no_blocks:
        print(f"structure: {len(runs)} blocks of {a.block}+ lines repeated")
    return 1 if bad or runs else 0


if __name__ == "__main__":
    sys.exit(main())
