"""Writes three one-node models (y = x + w) whose initializer `w` is stored
as external data at hostile and ordinary locations: ../../etc/passwd,
/etc/passwd and w.bin. Usage: external_data.py OUT_DIR."""

import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
for name, location in [
    ("climb", "../../etc/passwd"),
    ("absolute", "/etc/passwd"),
    ("inside", "w.bin"),
]:
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.extend([4])
    w.data_location = TensorProto.EXTERNAL
    for k, v in [("location", location), ("offset", "0"), ("length", "16")]:
        e = w.external_data.add()
        e.key, e.value = k, v
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())
