#!/usr/bin/env python3
"""Writes N chained copies of a one-function nn model (by default
examples/transformer_block.mlir) to stdout, each layer with its own
parameters (the same shapes, fresh names, so `ipu-run` draws fresh values
for each from its fixed-seed generator).

Layer i's output feeds layer i+1's input. The model's first argument is the
chained input; arguments marked `ipu.weight` are per layer; every other
argument (the block's mask) is shared by all layers. The result of the last
layer is the function's result. The output depends only on the input text
and N.

Usage: stack_gen.py N [MODEL]
"""

import re
import sys

SSA = re.compile(r"%[A-Za-z_][\w$.]*")


def split_model(text):
    """The header comment, the argument lines, the result line and the body."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("func.func @main("))
    res = next(i for i, l in enumerate(lines) if l.strip().startswith("-> ("))
    end = max(i for i, l in enumerate(lines) if l.strip() == "}")
    header = [l for l in lines[:start] if l.startswith("//")]
    args = [l for l in lines[start + 1 : res] if l.strip()]
    ret = next(i for i in range(res + 1, end) if lines[i].strip().startswith("return "))
    body = lines[res + 1 : ret]
    return header, args, lines[res], body, lines[ret]


def parse_arg(line):
    """(name, declaration without the trailing separator, is a weight)."""
    decl = line.strip()
    if decl.endswith(","):
        decl = decl[:-1]
    elif decl.endswith(")"):
        decl = decl[:-1]
    name = decl.split(":", 1)[0].strip()
    if not SSA.fullmatch(name):
        sys.exit(f"stack_gen.py: cannot read the argument line: {line.strip()}")
    return name, decl, "ipu.weight" in decl


def main():
    if len(sys.argv) not in (2, 3) or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.exit("usage: stack_gen.py N [MODEL]   (N >= 1)")
    n = int(sys.argv[1])
    path = sys.argv[2] if len(sys.argv) == 3 else "examples/transformer_block.mlir"
    with open(path, encoding="utf-8") as f:
        header, arg_lines, result, body, ret = split_model(f.read())
    args = [parse_arg(l) for l in arg_lines]
    x = args[0][0]
    y = ret.strip()[len("return ") :].split(":", 1)[0].strip()
    shared = {name for name, _, w in args[1:] if not w}
    out_args = [args[0][1]] + [d for name, d, _ in args[1:] if name in shared]
    out_body = []
    prev = x
    for i in range(1, n + 1):
        def rename(m, i=i, prev=prev):
            v = m.group(0)
            if v == x:
                return prev
            if v in shared:
                return v
            return f"{v}_L{i}"

        for name, decl, w in args[1:]:
            if w:
                d = SSA.sub(rename, decl, count=1)
                d = re.sub(r'ipu\.name = "([^"]*)"', lambda m: f'ipu.name = "{m.group(1)}_L{i}"', d)
                out_args.append(d)
        out_body.append(f"  // Layer {i} of {n}.")
        out_body += [SSA.sub(rename, l) for l in body if not l.strip().startswith("//")]
        prev = f"{y}_L{i}"
    ret_type = ret.split(":", 1)[1].strip()
    print(f"// {n} chained copies of {path}, each layer with its own parameters")
    print("// (written by bench/stack_gen.py).")
    print("func.func @main(")
    print(",\n".join("    " + a for a in out_args) + ")")
    print(result)
    print("\n".join(out_body))
    print(f"  return {prev} : {ret_type}")
    print("}")


if __name__ == "__main__":
    main()
