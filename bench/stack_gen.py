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

With --outline the layer is written once, as `func.func private @layer`
taking the chained input, the shared arguments and that layer's parameters
(marked `ipu.weight` in its signature too), and @main calls it N times
with `func.call`, each call passing its own parameters.

Usage: stack_gen.py [--outline] N [MODEL]
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


def per_layer_decl(decl, i):
    """A parameter's declaration renamed for layer i (value and ipu.name)."""
    d = SSA.sub(lambda m: f"{m.group(0)}_L{i}", decl, count=1)
    return re.sub(r'ipu\.name = "([^"]*)"', lambda m: f'ipu.name = "{m.group(1)}_L{i}"', d)


def write_outlined(n, path, args, result, body, ret):
    """The layer as one private function, called n times from @main."""
    x = args[0][0]
    ret_type = ret.split(":", 1)[1].strip()
    arg_type = lambda decl: decl.split(":", 1)[1].split("{", 1)[0].strip()
    # The callee's arguments: the model's own (the names stay as main's
    # readers know them: the callee's signature is private).
    callee_args = [d for _, d, _ in args]
    main_args = [args[0][1]] + [d for name, d, w in args[1:] if not w]
    for i in range(1, n + 1):
        main_args += [per_layer_decl(d, i) for _, d, w in args[1:] if w]
    types = {name: arg_type(d) for name, d, _ in args}
    print(f"// {n} calls of one outlined copy of {path}, each call with its own")
    print("// parameters (written by bench/stack_gen.py --outline).")
    print("func.func private @layer(")
    print(",\n".join("    " + a for a in callee_args) + ")")
    print(result)
    print("\n".join(l for l in body if not l.strip().startswith("//")))
    print(ret)
    print("}")
    print("func.func @main(")
    print(",\n".join("    " + a for a in main_args) + ")")
    print(result)
    prev = x
    for i in range(1, n + 1):
        operands = [prev] + [f"{name}_L{i}" if w else name for name, _, w in args[1:]]
        in_types = [types[name] for name, _, _ in args]
        print(f"  %y_L{i} = func.call @layer({', '.join(operands)}) : "
              f"({', '.join(in_types)}) -> {ret_type}")
        prev = f"%y_L{i}"
    print(f"  return {prev} : {ret_type}")
    print("}")


def main():
    argv = sys.argv[1:]
    outline = bool(argv) and argv[0] == "--outline"
    if outline:
        argv = argv[1:]
    if len(argv) not in (1, 2) or not argv[0].isdigit() or int(argv[0]) < 1:
        sys.exit("usage: stack_gen.py [--outline] N [MODEL]   (N >= 1)")
    n = int(argv[0])
    path = argv[1] if len(argv) == 2 else "examples/transformer_block.mlir"
    with open(path, encoding="utf-8") as f:
        header, arg_lines, result, body, ret = split_model(f.read())
    args = [parse_arg(l) for l in arg_lines]
    if outline:
        write_outlined(n, path, args, result, body, ret)
        return
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
                out_args.append(per_layer_decl(decl, i))
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
