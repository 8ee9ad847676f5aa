"""Integer codes for string columns: encode, byte-order rank, look up, pick (pyarrow).

The engine never compares strings row by row: a column becomes (codes, distinct values), the
distinct values get their rank in byte order (trec_eval's ``strcmp`` order; pyarrow sorts
strings by their UTF-8 bytes) and lookups between two columns are made on distinct values.
A column is a pyarrow array (possibly a dictionary array or chunked), a numpy object array of
str (the line scanner's and the DataFrame path's) or a :class:`TextList` (a dict's keys),
converted to arrow once on use.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onlineeval.offline.arrow_arrays import arrow_index_to_numpy, arrow_to_numpy, numpy_to_arrow
from onlineeval.offline.reading.columns import TextList

__all__ = ["as_arrow", "byte_rank", "encode", "item", "lookup", "lookup_map", "take",
           "to_object"]


def as_arrow(col: Any) -> Any:
    """``col`` as a pyarrow array (one chunk unwrapped; other chunked arrays kept)."""
    if isinstance(col, TextList):
        return col.to_arrow()
    if isinstance(col, pa.ChunkedArray) and col.num_chunks == 1:
        return col.chunk(0)
    if isinstance(col, pa.ChunkedArray | pa.Array):
        return col
    return pa.array(np.asarray(col, dtype=object), type=pa.string())


def _is_dict(col: Any) -> bool:
    return isinstance(col, pa.DictionaryArray)


def encode(col: Any) -> tuple[np.ndarray, Any]:
    """(int codes, distinct values) of a string column."""
    col = as_arrow(col)
    enc = col if _is_dict(col) else pc.dictionary_encode(col)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()  # unifies the chunks' dictionaries
    return arrow_to_numpy(enc.indices), enc.dictionary


def byte_rank(uniq: Any) -> np.ndarray:
    """Rank (int64) of each distinct value in byte order."""
    order = arrow_to_numpy(pc.sort_indices(uniq))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank


def lookup(col: Any, uniq: Any) -> np.ndarray:
    """Index of each value of ``col`` in ``uniq``; -1 where absent."""
    col = as_arrow(col)
    if _is_dict(col):  # look up the distinct values only
        per_value = arrow_index_to_numpy(pc.index_in(col.dictionary, value_set=uniq))
        return per_value[arrow_to_numpy(col.indices)]
    return arrow_index_to_numpy(pc.index_in(col, value_set=uniq))


def lookup_map(col: Any, uniq: Any, values: np.ndarray) -> np.ndarray:
    """``values[i]`` for each row whose value is ``uniq[i]``; -1 where absent.

    int32 when the values allow. For a dictionary column only its distinct values are
    looked up.
    """
    small = np.int32 if len(values) == 0 or int(values.max()) < 2**31 - 1 else np.int64
    col = as_arrow(col)
    if _is_dict(col):
        idx = lookup(col.dictionary, uniq)
        mapped = np.where(idx >= 0, values[np.maximum(idx, 0)], -1).astype(small)
        return mapped[arrow_to_numpy(col.indices)]
    idx = lookup(col, uniq)
    return np.where(idx >= 0, values[np.maximum(idx, 0)], -1).astype(small)


def take(col: Any, rows: np.ndarray) -> Any:
    """The given rows (an integer array, or a boolean mask) of ``col``."""
    rows = np.asarray(rows)
    if rows.dtype == bool:
        rows = np.flatnonzero(rows)
    if isinstance(col, TextList):
        values = col.values
        return TextList([values[i] for i in rows.tolist()])
    col = as_arrow(col)
    rows = rows.astype(np.int64, copy=False)
    if isinstance(col, pa.ChunkedArray) and not pa.types.is_dictionary(col.type):
        return _take_chunked(col, rows)
    return col.take(numpy_to_arrow(rows))


def _take_chunked(col: pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """``take`` on a chunked array, chunk by chunk: pyarrow's own take on a chunked array
    concatenates every chunk first (the whole column, on every call), which made the many
    small takes of tie-breaking and match confirmation cost more than the join itself."""
    bounds = np.cumsum([0] + [len(c) for c in col.chunks], dtype=np.int64)
    which = np.searchsorted(bounds, rows, side="right") - 1
    order = None
    if len(which) > 1 and not (which[1:] >= which[:-1]).all():
        order = np.argsort(which, kind="stable")
        rows, which = rows[order], which[order]
    cuts = np.searchsorted(which, np.arange(col.num_chunks + 1))
    parts = [col.chunk(i).take(numpy_to_arrow(rows[lo:hi] - bounds[i]))
             for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)) if hi > lo]
    taken = pa.concat_arrays(parts) if parts else col.chunk(0).slice(0, 0) \
        if col.num_chunks else pa.array([], type=col.type)
    if order is None:
        return taken
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order), dtype=order.dtype)
    return taken.take(numpy_to_arrow(inverse))


def to_object(col: Any) -> np.ndarray:
    """``col`` as a numpy object array of str."""
    if isinstance(col, TextList):
        out = np.empty(len(col), dtype=object)
        out[:] = col.values
        return out
    return np.asarray(as_arrow(col).to_pylist(), dtype=object)


def item(col: Any, i: int) -> str:
    """Row ``i`` of ``col`` as str (a chunked array indexes globally)."""
    if isinstance(col, TextList):
        return col.values[i]
    return str(as_arrow(col)[i].as_py())
