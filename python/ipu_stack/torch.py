"""The PyTorch path: ``ipu_stack.torch.compile(module, example_inputs)``
exports the module to ONNX with ``torch.onnx.export`` and compiles it.

Export options it sets (each said once on stderr, as ``export: ...``):
the TorchScript exporter (``dynamo=False``: it needs no onnxscript and
gives the plain op-per-node graphs the importer maps), ``opset_version=17``
(``LayerNormalization`` is one op from 17), constants folded, the module in
``eval()`` mode, and no dynamic axes: the device program is compiled for
the example inputs' shapes, so every other shape needs its own compile.
"""

from __future__ import annotations

import io
import sys
import warnings
from typing import Sequence

import numpy as np

import ipu_stack

OPSET = 17


class _Positional:
    """Calls the module with the example inputs alone. The TorchScript
    exporter otherwise fills in the module's keyword defaults as traced
    inputs (TransformerEncoderLayer's ``is_causal=False`` becomes a tensor,
    which ``scaled_dot_product_attention`` refuses)."""

    @staticmethod
    def wrap(module):
        import torch

        class Positional(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, *xs):
                return self.inner(*xs)

        return Positional(module).eval()


class TorchCompiled:
    """A module compiled for the device: call it with tensors like the module."""

    def __init__(self, compiled: ipu_stack.Compiled, input_names: list[str], output_names: list[str]):
        self.compiled = compiled
        self.input_names = input_names
        self.output_names = output_names

    def __call__(self, *args, **run_options):
        import torch
        inputs = {n: a.detach().cpu().numpy() for n, a in zip(self.input_names, args)}
        out = self.compiled.run(inputs, **run_options)
        tensors = [torch.from_numpy(np.asarray(out[n])) for n in self.output_names]
        return tensors[0] if len(tensors) == 1 else tuple(tensors)

    def __getattr__(self, name):
        # .ir(), .verdict, .profile, .save(), ... of the compiled model.
        return getattr(self.compiled, name)


def export(module, example_inputs: Sequence, *, quiet: bool = False) -> tuple[bytes, list[str], list[str]]:
    """The ONNX bytes of ``module`` on ``example_inputs``, with the input
    and output names it was given (``input0``.., ``output0``..)."""
    import torch
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    module = module.eval()
    with torch.no_grad():
        outs = module(*example_inputs)
    n_out = len(outs) if isinstance(outs, (tuple, list)) else 1
    input_names = [f"input{i}" for i in range(len(example_inputs))]
    output_names = [f"output{i}" for i in range(n_out)]
    if not quiet:
        print(f"export: torch.onnx.export(dynamo=False, opset_version={OPSET}, do_constant_folding=True, "
              "no dynamic axes; the module in eval mode)", file=sys.stderr)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_Positional.wrap(module), tuple(example_inputs), buf, dynamo=False, opset_version=OPSET,
                          do_constant_folding=True, input_names=input_names,
                          output_names=output_names)
    return buf.getvalue(), input_names, output_names


def compile(module, example_inputs: Sequence, target: str = "ipu21", **options) -> TorchCompiled:
    """Exports ``module`` (on ``example_inputs``) and compiles it for
    ``target``; ``options`` as :func:`ipu_stack.compile`."""
    data, input_names, output_names = export(module, example_inputs)
    name = options.pop("name", type(module).__name__ + ".onnx")
    c = ipu_stack.compile(data, target=target, name=name, **options)
    return TorchCompiled(c, input_names, output_names)
