"""The PyTorch path: a small MLP with layer norm and GELU, and one
torch.nn.TransformerEncoderLayer, compiled for ipu21 and run on the
simulated device against PyTorch's own output."""

import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ipu_stack  # noqa: E402
import ipu_stack.torch as ipt  # noqa: E402


class Mlp(torch.nn.Module):
    def __init__(self, d=256, h=1024):
        super().__init__()
        self.up = torch.nn.Linear(d, h)
        self.act = torch.nn.GELU()
        self.down = torch.nn.Linear(h, d)
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.down(self.act(self.up(x))))


def run_and_compare(module, x, lock, atol):
    start = time.time()
    c = ipt.compile(module, (x,), target="ipu21")
    compiled = time.time() - start
    got = c(x, device_lock=lock)
    with torch.no_grad():
        want = module(x)
    err = float((got - want).abs().max())
    print(f"\n{type(module).__name__}: compile {compiled:.1f} s, {c.compiled.last_run.cycles} cycles, "
          f"max |device - torch| {err:.2e}; {c.verdict[1]}")
    assert c.compiled.last_run.passed, c.verdict
    assert err < atol, err
    return c


def test_mlp_with_layer_norm_and_gelu(lock):
    torch.manual_seed(0)
    run_and_compare(Mlp(), torch.randn(128, 256), lock, atol=1e-3)


def test_transformer_encoder_layer(lock):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                             dropout=0.0, batch_first=True)
    # As constructed: the attention's biases are zeros (splat constants).
    run_and_compare(layer, torch.randn(1, 128, 256), lock, atol=1e-3)
