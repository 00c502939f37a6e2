#!/usr/bin/env python3
"""Writes the small ONNX models the lit tests import (run once; outputs committed).

Run here with the repository's environment: ../../../../.venv/bin/python make_inputs.py
"""
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


if __name__ == "__main__":
    mlp()
    unsupported()
    dynamic_shape()
    with open("truncated.onnx", "wb") as f:
        f.write(open("mlp.onnx", "rb").read()[:100])
