"""Every public function of ipu_stack on small models (the examples of
docs/python.md run here too)."""

import json
import os

import ml_dtypes
import numpy as np
import pytest

import ipu_stack
from conftest import SMALL


def test_run_takes_and_gives_numpy_arrays(small, lock):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 32), dtype=np.float32)
    y = rng.standard_normal((16, 32), dtype=np.float32)
    out = small.run({"x": x, "y": y}, device_lock=lock)
    assert list(out) == ["z"] and out["z"].dtype == np.float32 and out["z"].shape == (16, 32)
    s = x + y
    gelu = 0.5 * s * (1 + np.vectorize(__import__("math").erf)(s / np.sqrt(2)))
    assert np.allclose(out["z"], gelu, atol=1e-4)
    assert small.verdict[-1].endswith("hardwareTest=PASS")
    assert "numericalTest=PASS" in small.verdict[-2]


def test_inputs_not_given_are_random_as_in_ipu_run(small, lock):
    r = small.run_full(device_lock=lock)
    assert r.passed and r.cycles > 0
    assert any("not given: using random values" in n for n in r.notes)


def test_ir_of_every_stage(small):
    assert small.ir("nn").startswith("func.func @main") or "nn.gelu" in small.ir("nn")
    assert "tile." in small.ir("tile")
    assert "exchange." in small.ir("exchange")
    assert "machine.package" in small.ir("machine")
    with pytest.raises(ipu_stack.CompileError):
        small.ir("no-such-stage")


def test_opt_takes_a_pipeline_as_ipu_opt(small):
    text = ipu_stack.opt(SMALL, "builtin.module(ipu-lower-to-tile)", target="test16")
    assert "tile." in text
    assert "ipu-lower-to-machine" in ipu_stack.passes()


def test_compile_with_a_pipeline_string():
    c = ipu_stack.compile(SMALL, target="test16",
                          pipeline="builtin.module(ipu-lower-to-exchange,convert-exchange-to-machine)")
    assert c.tiles == 16


def test_save_and_load_give_the_same_run(small, tmp_path, lock):
    path = tmp_path / "small.ipuexe"
    small.save(path)
    again = ipu_stack.load(path)
    a = small.run_full(seed=3, device_lock=lock)
    b = again.run_full(seed=3, device_lock=lock)
    assert a.npy("z") == b.npy("z")
    assert a.verdict[:2] == b.verdict[:2]


def test_check_ops_profile_memory_report_and_report(small, tmp_path, lock):
    rows = small.check_ops(device_lock=lock)
    assert rows and all(r["passed"] in (True, None) for r in rows)
    trace = small.profile
    assert trace["traceEvents"]
    mem = small.memory_report()
    assert mem["tile_bytes"] > 0 and len(mem["tiles"]) == 16
    files = small.report(tmp_path / "rep")
    assert (tmp_path / "rep" / "report.html").exists() and len(files) == 3


def test_f16_and_bf16_through_ml_dtypes(lock):
    text = """func.func @main(%x: tensor<8x32xf16> {ipu.name = "x"}) -> (tensor<8x32xbf16> {ipu.name = "y"}) {
  %y = nn.cast %x : tensor<8x32xf16> -> tensor<8x32xbf16>
  return %y : tensor<8x32xbf16>
}
"""
    c = ipu_stack.compile(text, target="test16")
    x = np.linspace(-2, 2, 8 * 32, dtype=np.float16).reshape(8, 32)
    y = c.run({"x": x}, device_lock=lock)["y"]
    assert y.dtype == ml_dtypes.bfloat16
    assert np.array_equal(y, x.astype(ml_dtypes.bfloat16))


def test_onnx_model_proto():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Relu", ["a"], ["b"], name="relu")], "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [16, 32])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [16, 32])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    c = ipu_stack.compile(m, target="test16")
    a = np.arange(-256, 256, dtype=np.float32).reshape(16, 32)
    assert np.array_equal(c.run({"a": a})["b"], np.maximum(a, 0))
    assert "nn.relu" in ipu_stack.import_onnx(m)


def test_progress_callbacks_are_called():
    seen = []
    ipu_stack.compile(SMALL, target="test16", progress=lambda s, d, t: seen.append((s, d, t)))
    assert seen[0] == ("tile", 0, 3) and seen[-1] == ("done", 3, 3)


class FakeTqdm:
    def __init__(self):
        self.n, self.total = 0, None

    def update(self, k):
        self.n += k


def test_tqdm_like_progress():
    bar = FakeTqdm()
    ipu_stack.compile(SMALL, target="test16", progress=bar)
    assert bar.n == bar.total == 3


def test_module_main_help(capsys):
    from ipu_stack.__main__ import main
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0 and "ipu-run" in capsys.readouterr().out


# Found by the PyTorch path (zero-initialised biases): a row-vector add of a
# splat constant was recorded by convert-nn-to-tile as the row kernel while
# the tile op got the constant at the result's shape, and
# convert-tile-to-exchange refused the op (lit/Runtime/splat-row-vector-test16.mlir).
def test_row_vector_add_of_a_splat_constant(lock):
    text = """func.func @main(%a: tensor<128x768xf32> {ipu.name = "a"}) -> (tensor<128x768xf32> {ipu.name = "c"}) {
  %b = nn.constant dense<0.5> : tensor<768xf32>
  %c = nn.add %a, %b : (tensor<128x768xf32>, tensor<768xf32>) -> tensor<128x768xf32>
  return %c : tensor<128x768xf32>
}
"""
    out = ipu_stack.compile(text, target="ipu21").run({"a": np.ones((128, 768), np.float32)},
                                                      device_lock=lock)
    assert np.array_equal(out["c"], np.full((128, 768), 1.5, np.float32))


def test_import_onnx_weights_precision():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.array([[0.5, -3.0], [1.5, 0.25]], np.float32), "w")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 2])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    text = ipu_stack.import_onnx(m, weights_precision="f8E4M3FN")
    # max |w| = 3: 3 x 2^7 = 384 <= 448.
    assert "nn.cast %0 {saturate, scale = -7 : i64}" in text
    assert "(tensor<16x2xf16>, tensor<2x2xf8E4M3FN>) -> tensor<16x2xf16>" in text
    assert "nn.cast" not in ipu_stack.import_onnx(m, weights_precision="f32")
    with pytest.raises(ipu_stack.IpuError, match="accepted: f32, f8E4M3FN"):
        ipu_stack.import_onnx(m, weights_precision="f16")
    c = ipu_stack.compile(m, target="test16", weights_precision="f8E4M3FN")
    x = np.arange(32, dtype=np.float32).reshape(16, 2) / 8
    # These weights and inputs are exact in f8E4M3FN and f16.
    assert np.array_equal(c.run({"x": x})["y"], x @ numpy_helper.to_array(w))
