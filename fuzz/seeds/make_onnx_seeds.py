#!/usr/bin/env python3
"""Writes the ONNX seed corpus of the `onnx` fuzz target (run once; outputs committed).

Small models, each a few nodes, over the op families the importer maps, with
attributes, initializers and symbolic dimensions, so mutations start from
inputs that get deep into the importer. Run with the repository's Python
environment from this folder: ../../.venv/bin/python make_onnx_seeds.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = "onnx"
F = TensorProto.FLOAT


def vi(name, shape, ty=F):
    return helper.make_tensor_value_info(name, ty, shape)


def save(name, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="ipu-fuzz")
    onnx.save(m, os.path.join(OUT, name + ".onnx"))


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def unary(op, **attrs):
    save(op.lower(), [helper.make_node(op, ["x"], ["y"], **attrs)], [vi("x", [2, 3])], [vi("y", [2, 3])])


def binary(op):
    save(op.lower(), [helper.make_node(op, ["a", "b"], ["y"])], [vi("a", [2, 3]), vi("b", [3])], [vi("y", [2, 3])])


def main():
    os.makedirs(OUT, exist_ok=True)
    for op in ["Relu", "Neg", "Abs", "Exp", "Log", "Tanh", "Sigmoid", "Sqrt", "Erf", "Reciprocal", "Identity"]:
        unary(op)
    unary("Softmax", axis=-1)
    unary("LeakyRelu", alpha=0.1)
    unary("Gelu", approximate="tanh")
    unary("Clip")
    for op in ["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"]:
        binary(op)
    save("matmul", [helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", ["n", 4])], [vi("y", ["n", 5])],
         [const("w", np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5))])
    save("gemm", [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5)],
         [vi("a", [2, 3]), vi("b", [4, 3]), vi("c", [4])], [vi("y", [2, 4])])
    save("transpose", [helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], [vi("x", [2, 3, 4])],
         [vi("y", [4, 2, 3])])
    save("reshape", [helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", [2, 3, 4])], [vi("y", [6, 4])],
         [const("s", np.array([-1, 4], dtype=np.int64))])
    save("slice", [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], [vi("x", [6, 10])],
         [vi("y", [3, 5])],
         [const("st", np.array([1, 9], dtype=np.int64)), const("en", np.array([6, 0], dtype=np.int64)),
          const("ax", np.array([0, 1], dtype=np.int64)), const("sp", np.array([2, -2], dtype=np.int64))])
    save("concat", [helper.make_node("Concat", ["a", "b"], ["y"], axis=1)], [vi("a", [2, 3]), vi("b", [2, 1])],
         [vi("y", [2, 4])])
    save("expand", [helper.make_node("Expand", ["x", "s"], ["y"])], [vi("x", [3, 1])], [vi("y", [2, 3, 4])],
         [const("s", np.array([2, 1, 4], dtype=np.int64))])
    save("cast", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)], [vi("x", [2, 3])],
         [vi("y", [2, 3], TensorProto.FLOAT16)])
    save("reduce_sum", [helper.make_node("ReduceSum", ["x", "ax"], ["y"], keepdims=0)], [vi("x", [2, 3, 4])],
         [vi("y", [2, 4])], [const("ax", np.array([1], dtype=np.int64))])
    save("reduce_mean", [helper.make_node("ReduceMean", ["x"], ["y"], axes=[-1])], [vi("x", [2, 3])],
         [vi("y", [2, 1])], opset=13)
    save("gather", [helper.make_node("Gather", ["x", "i"], ["y"], axis=0)], [vi("x", [5, 3])], [vi("y", [2, 3])],
         [const("i", np.array([4, 0], dtype=np.int64))])
    save("where", [helper.make_node("Greater", ["a", "b"], ["c"]), helper.make_node("Where", ["c", "a", "b"], ["y"])],
         [vi("a", [2, 3]), vi("b", [2, 3])], [vi("y", [2, 3])])
    save("pad", [helper.make_node("Pad", ["x", "p"], ["y"], mode="constant")], [vi("x", [2, 3])], [vi("y", [4, 5])],
         [const("p", np.array([1, 1, 1, 1], dtype=np.int64))])
    save("constant_of_shape", [helper.make_node("ConstantOfShape", ["s"], ["y"],
                                                value=helper.make_tensor("v", F, [1], [2.5]))],
         [], [vi("y", [2, 3])], [const("s", np.array([2, 3], dtype=np.int64))])
    save("shape_arith", [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Reshape", ["x", "s"], ["y"])],
         [vi("x", ["b", 3])], [vi("y", ["b", 3])])
    save("unsqueeze_squeeze", [helper.make_node("Unsqueeze", ["x", "ax"], ["u"]),
                               helper.make_node("Squeeze", ["u", "ax"], ["y"])],
         [vi("x", [2, 3])], [vi("y", [2, 3])], [const("ax", np.array([0], dtype=np.int64))])
    save("layer_norm", [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)],
         [vi("x", [2, 4])], [vi("y", [2, 4])],
         [const("g", np.ones(4, dtype=np.float32)), const("b", np.zeros(4, dtype=np.float32))])
    save("conv", [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], strides=[1, 1])],
         [vi("x", [1, 1, 4, 4])], [vi("y", [1, 2, 4, 4])],
         [const("w", np.ones((2, 1, 3, 3), dtype=np.float32) / 9)])
    save("maxpool", [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
         [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 2, 2])])
    save("split", [helper.make_node("Split", ["x", "s"], ["y", "z"], axis=1)], [vi("x", [2, 5])],
         [vi("y", [2, 2]), vi("z", [2, 3])], [const("s", np.array([2, 3], dtype=np.int64))])
    save("mlp_f16", [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["hb"]),
                     helper.make_node("Relu", ["hb"], ["y"])],
         [vi("x", [2, 4], TensorProto.FLOAT16)], [vi("y", [2, 3], TensorProto.FLOAT16)],
         [const("w", np.ones((4, 3), dtype=np.float16)), const("b", np.arange(3, dtype=np.float16))])
    save("int_ops", [helper.make_node("Add", ["a", "b"], ["c"]), helper.make_node("Mod", ["c", "b"], ["y"])],
         [vi("a", [3], TensorProto.INT64), vi("b", [3], TensorProto.INT64)], [vi("y", [3], TensorProto.INT64)])

    hostile()


def hostile():
    """Names and references a model must not use to leave the user's
    folders (issue 32): graph outputs that climb, are absolute, empty or
    twice the same, and an initializer stored as external data that climbs."""
    for name, outs in [("out_climb", ["../../x"]), ("out_abs", ["/tmp/abs"]), ("out_empty", [""]),
                       ("out_twice", ["y", "y"]), ("out_case", ["Y", "y"])]:
        nodes = [helper.make_node("Relu", ["x"], [f"r{i}"]) for i in range(len(outs))]
        nodes += [helper.make_node("Identity", [f"r{i}"], [o]) for i, o in enumerate(outs) if o]
        save(name, nodes, [vi("x", [4])], [vi(o or "r0", [4]) for o in outs])
    w = TensorProto(name="w", data_type=F, dims=[4], data_location=TensorProto.EXTERNAL)
    for k, v in [("location", "../../etc/passwd"), ("offset", "0"), ("length", "16")]:
        e = w.external_data.add()
        e.key, e.value = k, v
    save("external_climb", [helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [4])], [vi("y", [4])], [w])


if __name__ == "__main__":
    main()
