"""NumPy arrays to and from what the native module takes: float32 arrays
as they are, every other element type as .npy bytes in the project's
convention (bf16 and FP8 as one-field structured dtypes holding the bits,
``reference/src/npy.rs``), with ml_dtypes' bfloat16 and float8 types."""

from __future__ import annotations

import io
import re

import ml_dtypes
import numpy as np

# ml_dtypes type -> the project's element-type field name.
_NARROW = {
    np.dtype(ml_dtypes.bfloat16): ("bf16", "<u2"),
    np.dtype(ml_dtypes.float8_e4m3fn): ("f8E4M3FN", "|u1"),
    np.dtype(ml_dtypes.float8_e5m2): ("f8E5M2", "|u1"),
}
_BY_FIELD = {field: dt for dt, (field, _) in _NARROW.items()}


def to_native(name: str, value) -> object:
    """A float32 C-contiguous array (passed as it is), or .npy bytes."""
    a = np.asarray(value)
    if a.dtype == np.float32:
        return a
    narrow = _NARROW.get(a.dtype)
    if narrow is not None:
        field, bits = narrow
        a = np.ascontiguousarray(a).view(np.dtype(bits)).view(np.dtype([(field, bits)]))
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def from_npy_bytes(data: bytes) -> np.ndarray:
    """An output's .npy bytes as an array (bf16/FP8 as ml_dtypes arrays;
    an FP8 tensor with a power-of-two scale as float32 logical values)."""
    a = np.load(io.BytesIO(data), allow_pickle=False)
    if a.dtype.names is None:
        return a
    (field,) = a.dtype.names
    bits = a[field]
    m = re.fullmatch(r"(\w+)\*2\^(-?\d+)", field)
    if m:
        codes = bits.view(_BY_FIELD[m.group(1)])
        return codes.astype(np.float32) * np.float32(2.0 ** int(m.group(2)))
    if field in _BY_FIELD:
        return bits.view(_BY_FIELD[field])
    raise ValueError(f"unsupported output element type {field!r}")
