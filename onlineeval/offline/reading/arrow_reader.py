"""The fast reader: pyarrow's CSV reader on regular files, or None to use the line scanner.

A regular file — one space or one tab between fields, no comments, nothing the scanner would
read differently (:mod:`~onlineeval.offline.reading.byte_check`) — is parsed with explicit
columns and types (about 0.5 s per 10M run lines on two cores); only qid, docno and the value
are converted (the run's id is read from the file's tail). qid and docno are dictionary
encoded in parallel threads and validated on their distinct values. Nothing here imports
pandas unless a DataFrame is asked for. Any other file, or a regular-looking file that pyarrow
rejects, gets None: the line scanner then reads it or names the bad line. This reader never
accepts a line the scanner would reject.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from onlineeval.offline.arrow_arrays import arrow_to_numpy
from onlineeval.offline.reading import byte_check
from onlineeval.offline.reading.columns import Columns
from onlineeval.offline.reading.dictionary import dictionary_encode
from onlineeval.offline.reading.text_rules import BOM, BOM_BYTES, FIELD_SEP, WHITESPACE, is_text

BLOCK_SIZE = 8 << 20   # bytes per block of pyarrow's CSV reader (one chunk per block)

_LAYOUT = {
    # kind: (column names, converted columns and their types, the value column)
    "qrels": (["qid", "iter", "docno", "rel"],
              {"qid": pa.string(), "docno": pa.string(), "rel": pa.int64()}, "rel"),
    "run": (["qid", "iter", "docno", "rank", "score", "tag"],
            {"qid": pa.string(), "docno": pa.string(), "rank": pa.string(),
             "score": pa.float64(), "tag": pa.string()}, "score"),
}


def read_regular(path: Path, kind: str, full: bool = False) -> Any:
    """Parse a regular ``kind`` ("qrels" or "run") file; None when it is not regular.

    Returns :class:`Columns` for the engine, or with ``full`` the DataFrame the public readers
    return (run: also rank and tag).
    """
    n_fields = 4 if kind == "qrels" else 6
    delim = _delimiter(path, n_fields)
    if delim is None:
        return None
    runid = ""
    if kind == "run" and not full:
        # pyarrow checks that the columns it converts are UTF-8 (else ArrowInvalid: the
        # scanner then names the line); the run id is read from the tail, not converted
        runid = _last_runid(path)
        if not is_text(runid):
            return None
    names, types, value_name = _LAYOUT[kind]
    keep = [n for n in names if n in types]
    if not full:
        keep = ["qid", "docno", value_name]
    else:
        # pandas keeps text in large_string arrays: read them so, and the frame shares them
        types = {n: pa.large_string() if t == pa.string() else t for n, t in types.items()}
    try:
        table = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(column_names=names, block_size=BLOCK_SIZE),
            parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False,
                                            escape_char=False, newlines_in_values=False),
            convert_options=pcsv.ConvertOptions(column_types=types, include_columns=keep,
                                                strings_can_be_null=False,
                                                quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError):
        return None
    values = table.column(value_name)
    if values.null_count:
        return None
    # Dictionary-encode once (the engine needs the codes anyway) and validate the distinct
    # values (a comment line or an empty field means the line scanner decides); meanwhile
    # check the raw bytes, which also covers the columns that are not converted. The tasks
    # run in parallel threads (pyarrow's kernels and numpy release the GIL).
    text_cols = [n for n in keep if n != value_name]
    columns = [table.column(n) for n in text_cols]
    *encodings, regular = _parallel(
        [functools.partial(_checked_text, c, n, encode=not full)
         for n, c in zip(text_cols, columns, strict=True)]
        + [functools.partial(byte_check.regular_bytes, path, delim, kind == "qrels")]
    )
    encoded = dict(zip(text_cols, encodings, strict=True))
    del columns, encodings
    if not regular or any(enc is None for enc in encoded.values()):
        return None
    # one chunk, combined in pyarrow's pool (recycled memory); a read-only view
    arr = arrow_to_numpy(values.combine_chunks())
    if kind == "run" and np.isnan(arr).any():
        return None
    arr = arr.astype(np.float64 if kind == "run" else np.int64, copy=False)
    if full:
        import pandas as pd

        frame = {n: (arr if n == value_name else pd.Series(table.column(n).to_pandas()))
                 for n in keep}
        return pd.DataFrame(frame)
    del table
    return Columns(encoded["qid"], encoded["docno"], arr, str(path), runid)


def _parallel(tasks: list[Callable[[], Any]]) -> list[Any]:
    """Results of the callables ``tasks``, run in threads (pyarrow/numpy release the GIL)."""
    if len(tasks) < 2:
        return [t() for t in tasks]
    with ThreadPoolExecutor(len(tasks)) as pool:
        futures = [pool.submit(t) for t in tasks]
        return [f.result() for f in futures]


def _checked_text(col: Any, name: str, encode: bool) -> Any:
    """A text column as the engine keeps it, or None if a value needs the line scanner.

    qids are dictionary encoded (through their runs of equal neighbours: cheap) and checked
    on their distinct values. Other columns are dictionary encoded when ``encode`` and the
    first rows repeat their values (the engine then works on the distinct values);
    mostly distinct docnos, as in real collections, stay plain text: hashing every one for a
    dictionary would cost more than the engine's own keys (ranking.docno_keys).
    """
    if name == "qid":
        enc = dictionary_encode(col)
        uniq = enc.dictionary
        # a qid starting with '#' (comment rules) or U+FEFF (a byte-order mark pyarrow kept,
        # e.g. mid-file): the scanner decides
        if (pc.any(pc.starts_with(uniq, "#")).as_py() or pc.any(pc.starts_with(uniq, BOM)).as_py()
                or _has_empty(uniq)):
            return None
        return enc
    if _has_empty(col):
        return None
    if encode and _few_distinct(col):
        return dictionary_encode(col)
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) and col.num_chunks == 1 \
        else col


def _has_empty(col: Any) -> bool:
    return len(col) > 0 and pc.min(pc.binary_length(col)).as_py() == 0


def _few_distinct(col: Any) -> bool:
    """Whether the first rows of ``col`` repeat their values (under half distinct)."""
    first = col.chunk(0) if isinstance(col, pa.ChunkedArray) and col.num_chunks else col
    sample = first.slice(0, 1 << 16)
    return len(sample) > 0 and pc.count_distinct(sample).as_py() * 2 < len(sample)


def _delimiter(path: Path, n_fields: int) -> str | None:
    """The one-character delimiter of a regular file, judged on its first line; else None."""
    with open(path, "rb") as fh:
        head = fh.read(65536).removeprefix(BOM_BYTES)  # pyarrow's reader skips it too
    line = head.split(b"\n", 1)[0]
    if not line or line.lstrip().startswith(b"#") or b"\r" in head:
        return None
    for delim in (" ", "\t"):
        parts = line.split(delim.encode())
        if len(parts) == n_fields and all(p and p == p.strip() for p in parts):
            return delim
    return None


def _last_runid(path: Path) -> str:
    """The tag (sixth field) of the last content line, read from the file's tail."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        start = max(0, size - 65536)
        fh.seek(start)
        tail = fh.read()
    if start == 0:
        tail = tail.removeprefix(BOM_BYTES)
    tail = tail.decode("utf-8", errors="surrogateescape")
    for line in reversed(tail.split("\n")):
        text = line.strip(WHITESPACE)
        if text and not text.startswith("#"):
            parts = FIELD_SEP.split(text)
            return parts[5] if len(parts) >= 6 else ""
    return ""
