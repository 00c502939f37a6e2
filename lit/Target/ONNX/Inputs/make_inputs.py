#!/usr/bin/env python3
"""Writes the small ONNX models the lit tests import (run once; outputs committed).

Run here with the repository's environment: ../../../../.venv/bin/python make_inputs.py [WRITER...]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp():
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array((rng.standard_normal((4, 300)) * 0.1).astype(np.float32), "fc.weight")
    b = numpy_helper.from_array(np.linspace(-1, 1, 300).astype(np.float32), "fc.bias")
    nodes = [
        helper.make_node("MatMul", ["x", "fc.weight"], ["h"], name="fc/MatMul"),
        helper.make_node("Add", ["h", "fc.bias"], ["hb"], name="fc/Add"),
        helper.make_node("Relu", ["hb"], ["y"], name="act/Relu"),
    ]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 300])], [w, b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="ipu-lit")
    onnx.checker.check_model(m)
    onnx.save(m, "mlp.onnx")
    np.save("mlp_x.npy", np.arange(8, dtype=np.float32).reshape(2, 4) / 8)


def unsupported():
    nodes = [helper.make_node("Det", ["x"], ["y"], name="the_det")]
    g = helper.make_graph(nodes, "u", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "unsupported.onnx")


def dynamic_shape():
    nodes = [helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=-1)]
    g = helper.make_graph(nodes, "d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "dynamic.onnx")


def softmax_model(path, opset=13, out_type=TensorProto.FLOAT, out_shape=(2, 3), **attrs):
    nodes = [helper.make_node("Softmax", ["x"], ["y"], name="sm", **attrs)]
    g = helper.make_graph(nodes, "s", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", out_type, list(out_shape))])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)


def refused():
    """Models onnxruntime refuses (ort_check.py confirms it), and so must the importer."""
    softmax_model("misspelled_attr.onnx", Axis=0)
    m = onnx.load("misspelled_attr.onnx")
    del m.graph.node[0].attribute[:]
    m.graph.node[0].attribute.extend([helper.make_attribute("axis", 0), helper.make_attribute("axis", 1)])
    onnx.save(m, "repeated_attr.onnx")
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="first"),
             helper.make_node("Neg", ["x"], ["y"], name="second")]
    g = helper.make_graph(nodes, "w", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "two_writers.onnx")
    softmax_model("output_type.onnx", out_type=TensorProto.FLOAT16)
    softmax_model("opset999.onnx", opset=999)


def accepted():
    """Models onnxruntime runs: a declared output shape that differs (a warning), an input with a default."""
    softmax_model("output_shape.onnx", out_shape=(2, 5))
    bias = numpy_helper.from_array(np.array([1, 2, 3], dtype=np.float32), "bias")
    nodes = [helper.make_node("Add", ["x", "bias"], ["y"], name="add")]
    g = helper.make_graph(nodes, "d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                                       helper.make_tensor_value_info("bias", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [bias])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "input_default.onnx")
    np.save("bias_other.npy", np.array([10, 20, 30], dtype=np.float32))
    np.save("x23.npy", np.arange(6, dtype=np.float32).reshape(2, 3) / 4)


def negative_dim():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    g = helper.make_graph(nodes, "n", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, -3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "negative_dim.onnx")


def huge_pad():
    """A Pad whose output has 2^40 elements (4 TiB of f32): it imports, and the run refuses it."""
    pads = numpy_helper.from_array(np.array([0, 2**40 - 1], dtype=np.int64), "pads")
    nodes = [helper.make_node("Pad", ["x", "pads"], ["y"], name="the_pad")]
    g = helper.make_graph(nodes, "p", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2**40])], [pads])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "huge_pad.onnx")


def truncated():
    with open("truncated.onnx", "wb") as f:
        f.write(open("mlp.onnx", "rb").read()[:100])


def layers():
    """Three encoder-like layers named as torch's TorchScript exporter names
    a repeated block's nodes (/encoder/layer.K/...): each a matmul by its own
    weight, a bias equal in every layer, a tanh; then a pooler outside them."""
    rng = np.random.default_rng(11)
    inits, nodes, x = [], [], "x"
    for k in range(3):
        s = f"/encoder/layer.{k}"
        w = (rng.standard_normal((16, 16)) * 0.3).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"onnx::MatMul_{100 + k}"))
        inits.append(numpy_helper.from_array(np.full(16, 0.125, np.float32), f"encoder.layer.{k}.bias"))
        nodes += [
            helper.make_node("MatMul", [x, f"onnx::MatMul_{100 + k}"], [f"{s}/MatMul_output_0"], name=f"{s}/dense/MatMul"),
            helper.make_node("Add", [f"{s}/MatMul_output_0", f"encoder.layer.{k}.bias"], [f"{s}/Add_output_0"],
                             name=f"{s}/dense/Add"),
            helper.make_node("Tanh", [f"{s}/Add_output_0"], [f"{s}/Tanh_output_0"], name=f"{s}/act/Tanh"),
        ]
        x = f"{s}/Tanh_output_0"
    nodes.append(helper.make_node("Sigmoid", [x], ["y"], name="/pooler/Sigmoid"))
    g = helper.make_graph(nodes, "layers", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 16])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="ipu-lit")
    onnx.checker.check_model(m)
    onnx.save(m, "layers.onnx")
    np.save("layers_x.npy", (rng.standard_normal((8, 16))).astype(np.float32))


WRITERS = {f.__name__: f for f in [mlp, unsupported, dynamic_shape, truncated, refused, accepted,
                                    negative_dim, huge_pad, layers]}

if __name__ == "__main__":
    # Names of writers to run (default: all), so one set can be added without rewriting the others.
    for name in sys.argv[1:] or list(WRITERS):
        WRITERS[name]()
