"""DataFrames and dicts to engine columns without Python objects per row, when they are clean.

:func:`frame_columns` turns a DataFrame with arrow-backed (or plain str) text columns and numeric
values, or a ``{qid: {docno: value}}`` dict of str keys and numbers, into
:class:`~onlineeval.offline.reading.columns.Columns` with pyarrow text columns, checking every
rule of :mod:`~onlineeval.offline.reading.frames` on pyarrow's buffers. It returns None
whenever anything is unusual — a missing value, a value a TREC field cannot hold, a qid that
starts with ``#``, a non-numeric score, a non-integer grade, keys that are not str — and the
caller then goes through :mod:`~onlineeval.offline.reading.frames`, which accepts or refuses
the input with the same result and message as always.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from itertools import chain
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onlineeval.offline.arrow_arrays import numpy_to_arrow
from onlineeval.offline.reading.columns import Columns, TextList
from onlineeval.offline.reading.dictionary import dictionary_encode
from onlineeval.offline.reading.text_rules import NOT_IN_FIELD

# bytes a field of a TREC file cannot hold (text_rules.NOT_IN_FIELD): ASCII whitespace and NUL
_FORBIDDEN = np.zeros(256, dtype=bool)
_FORBIDDEN[[ord(c) for c in NOT_IN_FIELD]] = True
_TEXT_PIECE = 1 << 14   # docnos per piece of the text check


def frame_columns(source: Any, value_name: str, name: str, runid: str = "") -> Columns | None:
    """Columns of a clean DataFrame or dict (see the module docstring); None otherwise."""
    if isinstance(source, Mapping):
        parts = _dict_parts(source, value_name == "rel")
    else:
        parts = _frame_parts(source, value_name)
    if parts is None:
        return None
    qid, docno, values = parts
    if value_name == "rel":
        values = _integral(values)
    else:
        values = values.astype(np.float64, copy=False)
    if values is None or (values.dtype.kind == "f" and np.isnan(values).any()):
        return None
    if not (_field_ok(docno) and _field_ok(qid.dictionary)):
        return None
    if pc.any(pc.starts_with(qid.dictionary, "#")).as_py():
        return None
    return Columns(qid, docno, values, name, runid)


def _frame_parts(df: Any, value_name: str) -> tuple[Any, Any, np.ndarray] | None:
    import pandas as pd

    if not isinstance(df, pd.DataFrame) or not {"qid", "docno", value_name} <= set(df.columns) \
            or not df.columns.is_unique:
        return None
    qid, docno = _text(df["qid"]), _text(df["docno"])
    values = df[value_name]
    if qid is None or docno is None or values.dtype.kind not in "iuf":
        return None
    try:
        numbers = values.to_numpy(dtype=np.float64 if values.dtype.kind == "f" else np.int64)
    except (TypeError, ValueError):   # a missing value in a nullable integer column
        return None
    return dictionary_encode(qid), docno, numbers


def _text(series: Any) -> Any:
    """The arrow array of a text column (str dtype or objects that are all str); None if it
    holds anything else."""
    import pandas as pd

    if not (isinstance(series.dtype, pd.StringDtype) or series.dtype == object):
        return None
    try:
        arr = pa.array(series, from_pandas=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):
        return None
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    return arr


def _dict_parts(source: Mapping[Any, Any],
                integral: bool) -> tuple[Any, Any, np.ndarray] | None:
    qids = [q for q, docs in source.items() if len(docs)] if _all_dicts(source) else None
    if not qids or not all(type(q) is str for q in qids):
        return None
    inner = [source[q] for q in qids]
    lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
    if any("" in docs for docs in inner):
        return None   # an empty docno: the slow path words the error
    # validated by frame_columns; the dict is kept for the judgment lookup (TextList)
    docno = TextList(list(chain.from_iterable(inner)), source)
    try:
        qid_values = pa.array(qids, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):
        return None   # not valid text
    values = _dict_values(inner, len(docno), integral)
    if values is None or len(values) != len(docno):
        return None
    codes = np.repeat(np.arange(len(qids), dtype=np.int32), lengths)
    qid = pa.DictionaryArray.from_arrays(numpy_to_arrow(codes), qid_values)
    return qid, docno, values


def _dict_values(inner: list[dict[Any, Any]], n: int, integral: bool) -> np.ndarray | None:
    """The values of the inner dicts, in order: int64 when ``integral`` and all are integers
    (bools as 1/0), else float64; None when one is not a number (a str, None, another object:
    the slow path reads or refuses it)."""
    def values() -> Any:
        return chain.from_iterable(d.values() for d in inner)

    if integral:
        try:
            # array("q") takes ints (and bools, and what has __index__), never a float or str
            return np.frombuffer(array("q", values()), dtype=np.int64)
        except (TypeError, OverflowError):
            pass   # an integral float (1.0) or a too large int: read as float64 and checked
    try:
        # numpy would parse a str ("1.5") or read None as NaN; a sum fails on both (and on
        # bytes, lists, ...) without changing any value, and costs a quarter of array("d")
        sum(values())
        return np.fromiter(values(), dtype=np.float64, count=n)
    except (TypeError, ValueError, OverflowError):
        return None


def _all_dicts(source: Mapping[Any, Any]) -> bool:
    return all(type(docs) is dict for docs in source.values())


def _integral(values: np.ndarray) -> np.ndarray | None:
    """int64 grades, or None when a value is not an integer (the slow path words it)."""
    if values.dtype.kind in "iu":
        return values.astype(np.int64, copy=False)
    if not np.isfinite(values).all() or (values != np.floor(values)).any() \
            or (np.abs(values) >= 2.0**53).any():
        return None
    return values.astype(np.int64)


def _text_list_ok(values: list[Any]) -> bool:
    """All str, valid text (no lone surrogates), none holding a character a TREC field cannot
    hold (the caller has made sure that none is empty)."""
    # checked in pieces whose joined text stays in the CPU cache while it is searched: half
    # the time of joining all 4M docnos of a run at once (bench/README.md, offline section)
    for lo in range(0, len(values), _TEXT_PIECE):
        try:
            text = "".join(values[lo:lo + _TEXT_PIECE])
        except TypeError:
            return False   # a key that is not str (the slow path converts it)
        if not text.isascii():   # isascii reads a flag of the str, not the text
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return False   # lone surrogates: not text
        # one fast search per character beats encoding and scanning every byte
        if any(c in text for c in NOT_IN_FIELD):
            return False
    return True


def _forbidden_in(data: np.ndarray) -> bool:
    # every forbidden byte is <= 0x20: the table is consulted only when there are such
    low = data[data <= 0x20]
    return bool(len(low)) and bool(_FORBIDDEN[low].any())


def _field_ok(col: Any) -> bool:
    """No missing value, no empty value, no byte a TREC field cannot hold."""
    if isinstance(col, TextList):
        return _text_list_ok(col.values)
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    for chunk in chunks:
        if chunk.null_count or (len(chunk) and pc.min(pc.binary_length(chunk)).as_py() == 0):
            return False
        if not len(chunk):
            continue
        wide = pa.types.is_large_string(chunk.type)
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64 if wide else np.int32,
                                count=len(chunk) + 1, offset=chunk.offset * (8 if wide else 4))
        data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
        if _forbidden_in(data):
            return False
    return True
