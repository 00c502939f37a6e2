#!/usr/bin/env python3
"""Writes an embedding model with the shape arithmetic exporters emit
(Shape, Gather of a shape, Range, Unsqueeze, Concat of ints, Reshape by a
computed shape) to MODEL, and inputs for it (ids.npy with negative ids,
tokens.npy, pos_table.npy) to DIR; shape_arith.test imports and runs it.

  shape_arith.py MODEL DIR
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def const(name, value):
    return numpy_helper.from_array(np.array(value, dtype=np.int64), name)


def main(path):
    nodes = [
        helper.make_node("Shape", ["ids"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "one"], ["seq"], name="seq", axis=0),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], name="batch", axis=0),
        helper.make_node("Range", ["zero", "seq", "one"], ["positions"], name="positions"),
        helper.make_node("Gather", ["tokens", "ids"], ["tok"], name="tok", axis=0),
        helper.make_node("Gather", ["pos_table", "positions"], ["posv"], name="posv", axis=0),
        helper.make_node("Add", ["tok", "posv"], ["sum"], name="sum"),
        helper.make_node("Mul", ["batch", "seq"], ["rows"], name="rows"),
        helper.make_node("Unsqueeze", ["rows", "axis0"], ["rows1"], name="rows1"),
        helper.make_node("Concat", ["rows1", "width"], ["new_shape"], name="new_shape", axis=0),
        helper.make_node("Reshape", ["sum", "new_shape"], ["flat"], name="flat"),
        helper.make_node("Less", ["flat", "limit"], ["small"], name="small"),
        helper.make_node("Where", ["small", "flat", "limit"], ["clipped"], name="clipped"),
        helper.make_node("Gelu", ["clipped"], ["y"], name="gelu", approximate="tanh"),
    ]
    inits = [const("zero", 0), const("one", 1), const("axis0", [0]), const("width", [8]),
             numpy_helper.from_array(np.array(0.5, dtype=np.float32), "limit")]
    g = helper.make_graph(
        nodes, "embed",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 5]),
         helper.make_tensor_value_info("tokens", TensorProto.FLOAT, [11, 8]),
         helper.make_tensor_value_info("pos_table", TensorProto.FLOAT, [5, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [10, 8])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)], producer_name="ipu-lit")
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)


def inputs(out_dir):
    rng = np.random.default_rng(3)
    np.save(f"{out_dir}/ids.npy", np.array([[0, 10, -1, 3, -11], [7, 7, 2, -4, 5]], dtype=np.int64))
    np.save(f"{out_dir}/tokens.npy", rng.standard_normal((11, 8)).astype(np.float32))
    np.save(f"{out_dir}/pos_table.npy", (rng.standard_normal((5, 8)) * 0.5).astype(np.float32))


if __name__ == "__main__":
    main(sys.argv[1])
    inputs(sys.argv[2])
