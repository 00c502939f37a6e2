#!/usr/bin/env python3
"""Writes a generic-form MLIR file of about N operations: functions of
elementwise chains over tensors, with attributes and nested regions.

Usage: gen_ir.py [N [OPS_PER_FUNCTION]]   (default 1000000 1000): N / OPS_PER_FUNCTION
functions of about OPS_PER_FUNCTION ops each."""
import sys

def main():
    n_ops = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    out = sys.stdout
    ops_per_func = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    funcs = max(1, n_ops // ops_per_func)
    t = "tensor<4x8xf32>"
    w = out.write
    w('"builtin.module"() ({\n')
    for f in range(funcs):
        w(f'  "bench.func"() ({{\n  ^bb0(%arg0: {t}, %arg1: {t}):\n')
        v = 0
        prev = "%arg0"
        emitted = 2  # func + return
        while emitted < ops_per_func - 4:
            w(f'    %{v} = "bench.add"({prev}, %arg1) {{id = {v} : i64, kind = "elementwise"}} : ({t}, {t}) -> {t}\n')
            w(f'    %{v+1} = "bench.mul"(%{v}, %arg0) {{scale = 1.500000e+00 : f32}} : ({t}, {t}) -> {t}\n')
            w(f'    %{v+2} = "bench.region"(%{v+1}) ({{\n    ^bb0(%arg2: {t}):\n')
            w(f'      %{v+3} = "bench.exp"(%arg2) {{approx = true}} : ({t}) -> {t}\n')
            w(f'      "bench.yield"(%{v+3}) : ({t}) -> ()\n    }}) : ({t}) -> {t}\n')
            prev = f"%{v+2}"
            v += 4
            emitted += 5
        w(f'    "bench.return"({prev}) : ({t}) -> ()\n')
        w(f'  }}) {{sym_name = "f{f}", function_type = ({t}, {t}) -> {t}}} : () -> ()\n')
    w('}) : () -> ()\n')

if __name__ == "__main__":
    main()
