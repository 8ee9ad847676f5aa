"""Dictionary encoding of a text column, fast when equal values come in long runs.

Query ids usually come in long runs of equal values (a run lists each query's documents
together): the column is then run-end encoded (comparisons of neighbours) and only the values
of the runs are hashed, which is several times faster than hashing every row. Otherwise every
row is hashed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onlineeval.offline.arrow_arrays import arrow_to_numpy, numpy_to_arrow


def dictionary_encode(col: Any) -> pa.DictionaryArray:
    """One dictionary array (one chunk) for a string array or chunked array."""
    n = len(col)
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    runs = _run_values(chunks, n)
    if runs is None:
        enc = pc.dictionary_encode(col)
        return enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc
    values, lengths = runs
    enc = pc.dictionary_encode(values)
    run_codes = arrow_to_numpy(enc.indices).astype(np.int32)
    ends = np.cumsum(lengths).astype(np.int32 if n < 2**31 else np.int64)
    # decoded by pyarrow (into its pool, see arrow_arrays.pooled_empty)
    ree = pa.Array.from_buffers(
        pa.run_end_encoded(pa.from_numpy_dtype(ends.dtype), pa.int32()), n, [None],
        children=[numpy_to_arrow(ends), numpy_to_arrow(run_codes)])
    return pa.DictionaryArray.from_arrays(pc.run_end_decode(ree), enc.dictionary)


def _run_values(chunks: list[Any], n: int) -> tuple[Any, np.ndarray] | None:
    """(values of the runs of equal neighbours, run lengths) when runs are long; else None."""
    if n == 0:
        return None
    values, lengths = [], []
    n_runs = 0
    for chunk in chunks:
        if chunk.offset or chunk.null_count:
            return None
        ree = pc.run_end_encode(chunk)
        ends = arrow_to_numpy(ree.run_ends).astype(np.int64)
        n_runs += len(ends)
        if n_runs > n // 8 + 16:  # short runs: hashing every row is cheaper
            return None
        lengths.append(np.diff(ends, prepend=0))
        values.append(ree.values)
    lengths_all = np.concatenate(lengths)
    if int(lengths_all.sum()) != n:
        return None
    return pa.concat_arrays(values), lengths_all
