#!/usr/bin/env python3
"""Writes the .npy seed corpus of the `npy` fuzz target (run once; outputs committed):
every dtype, order, byte order and header version the reader meets.
Run with the repository's Python environment from this folder."""
import io
import os

import numpy as np


def save(name, a):
    np.save(os.path.join("npy", name + ".npy"), a)


os.makedirs("npy", exist_ok=True)
save("f32_2x3", np.arange(6, dtype=np.float32).reshape(2, 3))
save("f16_4", np.array([1, -2, 0.5, 65504], dtype=np.float16))
save("f64_scalar", np.array(3.25))
save("i64_3", np.array([1, -2, 3], dtype=np.int64))
save("i32_2x2", np.array([[1, 2], [3, 4]], dtype=np.int32))
save("i8", np.array([-128, 127], dtype=np.int8))
save("u8", np.array([0, 255], dtype=np.uint8))
save("bool", np.array([True, False, True]))
save("empty", np.zeros((0, 3), dtype=np.float32))
save("fortran", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
save("big_endian", np.arange(4, dtype=">f4"))
save("rank4", np.ones((1, 2, 1, 3), dtype=np.float32))
buf = io.BytesIO()
np.lib.format.write_array(buf, np.arange(3, dtype=np.float32), version=(2, 0))
with open(os.path.join("npy", "v2.npy"), "wb") as f:
    f.write(buf.getvalue())
