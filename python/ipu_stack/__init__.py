"""ipu_stack: compile models for the simulated 1472-tile IPU-class machine
and run them, from Python.

    import ipu_stack
    model = ipu_stack.compile("examples/mlp.mlir", target="ipu21")
    outputs = model.run({})          # {name: numpy array}; verdict in model.verdict

A model is an ONNX file or ``onnx.ModelProto``, ``nn`` IR text or a path to
it, or a compiled package (``.ipuexe``, also read by :func:`load`). Errors
are :class:`IpuError` subclasses carrying the diagnostic's text and
location. The compiler and simulator run without the GIL.
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any, Callable, Mapping

import numpy as np

from . import _native
from ._dtypes import from_npy_bytes, to_native

__version__ = _native.__version__
__all__ = [
    "compile", "load", "opt", "import_onnx", "passes", "Compiled", "Run",
    "IpuError", "ModelError", "CompileError", "InputError", "DeviceError",
]


class IpuError(Exception):
    """A failure of the compiler or the device.

    ``message`` is the diagnostic's text, ``location`` its ``file:line:col``
    (or ``None``), ``rendered`` the diagnostic as the tools print it.
    """

    def __init__(self, message: str, location: str | None = None, rendered: str | None = None):
        super().__init__(rendered or message)
        self.message = message
        self.location = location
        self.rendered = rendered or message


class ModelError(IpuError):
    """The model does not read, import or verify."""


class CompileError(IpuError):
    """A pass failed (the model does not fit, an op has no lowering, ...)."""


class InputError(IpuError):
    """An input's name, shape or element type does not match the model."""


class DeviceError(IpuError):
    """The run failed on the device side (target, lock, streams)."""


_KINDS = {"model": ModelError, "compile": CompileError, "input": InputError,
          "device": DeviceError, "io": IpuError}


def _raise(e: Exception):
    kind, message, location, rendered = e.args
    raise _KINDS.get(kind, IpuError)(message, location, rendered) from None


def _call(f, *args, **kwargs):
    try:
        return f(*args, **kwargs)
    except _native.NativeError as e:
        _raise(e)


def _progress_callback(progress, what: str) -> Callable[[str, int, int], None] | None:
    """A ``(stage, done, total)`` callable from ``progress``: a callable, a
    tqdm-like object (``update``/``total``), ``True`` (the terminal's bar),
    ``False``; ``None``: the terminal's bar when stderr is a TTY."""
    if progress is None:
        progress = sys.stderr.isatty()
    if progress is False:
        return None
    if progress is True:
        def bar(stage: str, done: int, total: int) -> None:
            width = 24
            filled = width * done // max(total, 1)
            end = "\n" if done >= total else ""
            sys.stderr.write(f"\r{what} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {stage:<10}{end}")
            sys.stderr.flush()
        return bar
    if hasattr(progress, "update"):
        state = {"done": 0}

        def tqdm_like(stage: str, done: int, total: int) -> None:
            if getattr(progress, "total", None) != total:
                progress.total = total
            if hasattr(progress, "set_description"):
                progress.set_description(f"{what}: {stage}")
            progress.update(done - state["done"])
            state["done"] = done
        return tqdm_like
    return progress


class Run:
    """One run on the simulated device: outputs, verdict, cycles."""

    def __init__(self, native):
        self._native = native
        self.outputs: dict[str, np.ndarray] = {
            name: (value if isinstance(value, np.ndarray) else from_npy_bytes(value))
            for name, value in native.outputs()
        }

    @property
    def verdict(self) -> list[str]:
        """The lines ``ipu-run`` prints on stdout, in order."""
        return list(self._native.lines)

    @property
    def notes(self) -> list[str]:
        """What ``ipu-run`` prints on stderr."""
        return list(self._native.notes)

    passed = property(lambda self: self._native.passed, doc="Every verdict PASS.")
    cycles = property(lambda self: self._native.cycles, doc="Device cycles of the run.")
    max_abs_error = property(lambda self: self._native.max_abs_error)

    def npy(self, name: str) -> bytes:
        """Output ``name`` as the .npy bytes ``ipu-run --output-dir`` writes."""
        return _call(self._native.npy, name)

    def op_checks(self) -> list[dict]:
        """The per-op checks of a run made with ``check_ops=True``."""
        return self._native.op_checks()


class Compiled:
    """A compiled model: run it, inspect its IR, save its package."""

    def __init__(self, native):
        self._native = native
        self.last_run: Run | None = None

    name = property(lambda self: self._native.name, doc="The name in ``package=NAME``.")
    target = property(lambda self: self._native.target)
    tiles = property(lambda self: self._native.tiles)
    compile_seconds = property(lambda self: self._native.compile_seconds)
    notes = property(lambda self: self._native.notes, doc="Compile warnings, rendered.")

    def inputs(self) -> list[tuple[str, str, list[int]]]:
        """``(name, element type, shape)`` of each input."""
        return _call(self._native.inputs)

    def ir(self, stage: str = "machine") -> str:
        """The IR after ``stage`` as text: ``nn``, ``tile``, ``exchange``, ``machine``."""
        return _call(self._native.ir, stage)

    def run_full(self, inputs: Mapping[str, Any] | None = None, *, seed: int = 0,
                 check_ops: bool = False, max_cycles: int = 1_000_000_000,
                 device_lock: str | os.PathLike | None = None, entry: str | None = None,
                 progress=None, verbose: bool = False, runs: int = 1) -> Run:
        """Runs on the simulated device and returns the :class:`Run`
        (outputs, verdict lines, cycles). Inputs not given take their
        default value, else random values from ``seed``, as ``ipu-run``;
        ``runs`` lays that many runs out back to back with the host streams
        overlapped (``cyclesPerRunSteadyState``, as ``ipu-run --runs``)."""
        native_inputs = {name: to_native(name, value) for name, value in (inputs or {}).items()}
        r = Run(_call(self._native.run, native_inputs, seed=seed, check_ops=check_ops,
                      max_cycles=max_cycles,
                      device_lock=None if device_lock is None else os.fspath(device_lock),
                      entry=entry, progress=_progress_callback(progress, "run"),
                      runs=runs))
        self.last_run = r
        if verbose:
            for line in r.notes:
                print(line, file=sys.stderr)
            for line in r.verdict:
                print(line)
        return r

    def run(self, inputs: Mapping[str, Any] | None = None, **options) -> dict[str, np.ndarray]:
        """Runs on the simulated device: ``{name: array}`` in, ``{name:
        array}`` out. The verdict is in ``self.verdict``; options as
        :meth:`run_full`."""
        return self.run_full(inputs, **options).outputs

    @property
    def verdict(self) -> list[str]:
        """The last run's verdict lines (as ``ipu-run`` prints them)."""
        return self.last_run.verdict if self.last_run else []

    def check_ops(self, inputs: Mapping[str, Any] | None = None, **options) -> list[dict]:
        """Runs with every op checked on the device against the reference
        on the device's operands; one dict per op (``op``, ``location``,
        ``max_abs_error``, ``tolerance``, ``passed``)."""
        return self.run_full(inputs, check_ops=True, **options).op_checks()

    def _run_or_last(self) -> Run:
        return self.last_run or self.run_full()

    @property
    def profile(self) -> dict:
        """The Chrome trace (Perfetto's JSON) of the last run (runs once if none)."""
        import json
        return json.loads(self._native.profile(self._run_or_last()._native))

    def memory_report(self) -> dict | None:
        """The compile's memory report: every byte of every tile by category."""
        import json
        text = self._native.memory_json()
        return None if text is None else json.loads(text)

    def report(self, directory: str | os.PathLike) -> list[str]:
        """Writes ``directory/report.html`` of the last run (and the memory
        report beside it), as ``ipu-run --report``; returns the files."""
        return [os.fspath(p) for p in
                _call(self._native.write_report, self._run_or_last()._native, os.fspath(directory))]

    def save(self, path: str | os.PathLike) -> None:
        """Writes the package (``.ipuexe``; it carries the model as its reference)."""
        data = _call(self._native.package_bytes)
        with open(path, "wb") as f:
            f.write(data)


def import_onnx(model, *, input_shapes: Mapping[str, list[int]] | None = None,
                default_dim: int | None = None, name: str | None = None,
                weights_precision: str | None = None, outline_layers: bool = False) -> str:
    """An ONNX model (path, bytes or ``onnx.ModelProto``) as ``nn`` IR text.

    ``weights_precision``: ``"f32"`` (default) or ``"f8E4M3FN"``, as
    ``ipu-translate --weights-precision`` (matmul weights only).
    ``outline_layers``: as ``ipu-translate --outline-layers``, each class of
    the exporter's alike numbered layers (``/encoder/layer.3/``) becomes one
    ``func.func`` called per layer with that layer's weights; a layer alike to
    no other stays inline."""
    if isinstance(model, (str, os.PathLike)):
        name = name or os.fspath(model)
        with open(model, "rb") as f:
            data = f.read()
    elif isinstance(model, (bytes, bytearray)):
        data = bytes(model)
    else:
        data = model.SerializeToString()
    text, warnings = _call(_native.import_onnx, data, name or "model.onnx",
                           input_shapes={k: list(v) for k, v in (input_shapes or {}).items()},
                           default_dim=default_dim, weights_precision=weights_precision,
                           outline_layers=outline_layers)
    for w in warnings:
        print(f"ipu_stack: warning: {w}", file=sys.stderr)
    return text


def _is_ir_text(s: str) -> bool:
    return "\n" in s or s.lstrip().startswith(("module", "func.func", "builtin.module", "{-#"))


def compile(model, target: str | None = "ipu21", *, pipeline: str | None = None,
            keep_ir: bool = True, progress=None, name: str | None = None,
            input_shapes: Mapping[str, list[int]] | None = None,
            default_dim: int | None = None, weights_precision: str | None = None,
            outline_layers: bool = False) -> Compiled:
    """Compiles ``model`` for ``target`` (a name such as ``ipu21`` or a
    target file; ``None``: the module's ``ipu.target``).

    ``model``: a path (``.onnx``, ``.ipuexe``, else ``nn`` IR text), IR
    text, ONNX bytes or an ``onnx.ModelProto``. ``pipeline``: a textual pass
    pipeline as ``ipu-opt --pass-pipeline`` takes, in place of the stages of
    ``ipu-lower-to-machine``. ``progress``: see :class:`Compiled.run_full`.
    ``input_shapes``, ``default_dim``, ``weights_precision``,
    ``outline_layers``: import options of an ONNX model (see
    :func:`import_onnx`).
    """
    base = None
    if isinstance(model, os.PathLike) or (isinstance(model, str) and not _is_ir_text(model)):
        path = os.fspath(model)
        if path.endswith(".ipuexe"):
            return load(path)
        if path.endswith(".onnx"):
            text = import_onnx(path, input_shapes=input_shapes, default_dim=default_dim,
                               weights_precision=weights_precision,
                               outline_layers=outline_layers)
            name = name or path
        else:
            with open(path, "rb") as f:
                raw = f.read()
            if raw.startswith(b"\x7fELF"):
                return load(path)
            text = raw.decode("utf-8", errors="strict")
            name = name or path
            base = os.path.dirname(path) or "."
    elif isinstance(model, str):
        text, name = model, name or "<python>"
    else:
        text = import_onnx(model, input_shapes=input_shapes, default_dim=default_dim, name=name,
                           weights_precision=weights_precision, outline_layers=outline_layers)
        name = name or "model.onnx"
    return Compiled(_call(_native.compile, text, name, base=base, target=target,
                          pipeline=pipeline, keep_ir=keep_ir,
                          progress=_progress_callback(progress, "compile")))


def load(path: str | os.PathLike) -> Compiled:
    """Reads a package (``.ipuexe``) written by :meth:`Compiled.save` or ``ipu-run --write-package``."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise IpuError(f"cannot read '{path}': {e}") from None
    return Compiled(_call(_native.load, data, path, base=os.path.dirname(path) or "."))


def opt(text: str, pipeline: str, *, target: str | None = None) -> str:
    """Runs a textual pass pipeline on IR text, as ``ipu-opt --pass-pipeline``."""
    return _call(_native.opt, text, pipeline, target=target)


def passes() -> dict[str, str]:
    """The registered passes and pipelines with their descriptions."""
    return dict(_native.passes())
