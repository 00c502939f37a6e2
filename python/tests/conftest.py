"""Shared fixtures: the repository root (IPU_REPO, set by python/test.sh)
and a device lock of the tests' own, beside the wheel's build."""

import os
import pathlib

import pytest

REPO = pathlib.Path(os.environ.get("IPU_REPO", pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO


@pytest.fixture(scope="session")
def lock(repo) -> str:
    return str(repo / "target" / "device.lock")


# A small model: f32 in, layer norm (the weights inline), f32 out; names
# for the inputs and outputs as an ONNX import gives them.
SMALL = """func.func @main(%x: tensor<16x32xf32> {ipu.name = "x"}, %y: tensor<16x32xf32> {ipu.name = "y"}) -> (tensor<16x32xf32> {ipu.name = "z"}) {
  %s = nn.add %x, %y : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %z = nn.gelu %s : tensor<16x32xf32>
  return %z : tensor<16x32xf32>
}
"""


@pytest.fixture(scope="session")
def small():
    import ipu_stack
    return ipu_stack.compile(SMALL, target="test16")
