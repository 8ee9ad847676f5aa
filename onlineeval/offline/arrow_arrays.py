"""numpy views of pyarrow arrays, and numpy arrays in pyarrow's memory pool.

The offline engine reads files with pyarrow and computes with numpy. These helpers move
arrays between the two without copies where possible and without importing pandas (pyarrow's
own ``to_numpy``, ``pa.array(ndarray)`` and ``pa.scalar`` import it on first use; the engine
needs pandas only for its result, see ``api.evaluate``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["arrow_index_to_numpy", "arrow_to_numpy", "numpy_to_arrow", "pooled_empty"]


def arrow_to_numpy(arr: Any) -> np.ndarray:
    """A numpy array of a pyarrow numeric array or chunked array.

    Null-free integer and float arrays are read straight from their data buffer (a view for
    one chunk, read-only; chunks are concatenated). Anything else goes through ``to_numpy``.
    """
    if isinstance(arr, pa.ChunkedArray):
        if arr.num_chunks == 1:
            return arrow_to_numpy(arr.chunk(0))
        parts = [arrow_to_numpy(c) for c in arr.chunks]
        if parts:
            return np.concatenate(parts)
        return arr.to_numpy()
    t = arr.type
    if arr.null_count == 0 and (pa.types.is_integer(t) or pa.types.is_floating(t)):
        kind = "f" if pa.types.is_floating(t) else "i" if pa.types.is_signed_integer(t) else "u"
        dtype = np.dtype(f"{kind}{t.bit_width // 8}")
        buf = arr.buffers()[1]
        if buf is None:  # an empty array
            return np.zeros(0, dtype=dtype)
        return np.frombuffer(buf, dtype=dtype, count=len(arr),
                             offset=arr.offset * dtype.itemsize)
    return arr.to_numpy(zero_copy_only=False)


def arrow_index_to_numpy(arr: Any) -> np.ndarray:
    """An integer pyarrow array with nulls (``index_in``) as numpy, null -> -1."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.null_count == 0:
        return arrow_to_numpy(arr)
    t = arr.type
    dtype = np.dtype(f"i{t.bit_width // 8}")
    out = np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr),
                        offset=arr.offset * dtype.itemsize).copy()
    bits = np.unpackbits(np.frombuffer(arr.buffers()[0], dtype=np.uint8), bitorder="little")
    out[bits[arr.offset:arr.offset + len(arr)] == 0] = -1
    return out


def numpy_to_arrow(values: np.ndarray) -> pa.Array:
    """A pyarrow integer array over a contiguous numpy integer array (no copy, no pandas)."""
    values = np.ascontiguousarray(values)
    arrow_type = pa.from_numpy_dtype(values.dtype)
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)])


def pooled_empty(shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
    """``np.empty`` whose memory comes from pyarrow's memory pool.

    A large numpy array is a fresh ``mmap`` every time, and the kernel faults its pages in
    one by one (slow on virtual machines). pyarrow's pool keeps the memory the CSV reader
    has just freed and hands it out again, already mapped. The array owns its buffer.
    """
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    buf = pa.allocate_buffer(max(count * dtype.itemsize, 1))
    return np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)
