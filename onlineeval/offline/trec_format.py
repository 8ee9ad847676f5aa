"""TREC qrels and run files: readers, input normalisation and the parsing rules.

Public readers
    ``read_qrels(source) -> DataFrame[qid: str, docno: str, rel: int64]``
    ``read_run(source)   -> DataFrame[qid: str, docno: str, rank: str, score: float64, tag: str]``

``source`` is a path (str / os.PathLike), a pandas DataFrame with the columns named above
(qrels: qid, docno, rel; run: qid, docno, score — other columns are ignored) or a dict
``{qid: {docno: value}}`` (value = relevance grade for qrels, score for runs). Every form is
validated the same way and comes back as a DataFrame in file / row order.

File formats (as trec_eval 10.0 reads them, ``get_qrels.c`` / ``get_trec_results.c``)
    qrels: ``qid iter docno rel`` — exactly four whitespace-separated fields; ``iter`` is
    ignored; ``rel`` is an integer grade, negative grades allowed (trec_eval treats a negative
    grade as "in the pool but unjudged"; see :mod:`onlineeval.offline.ranking`).
    run: ``qid iter docno rank score tag`` — at least six fields, anything after the sixth is
    ignored (trec_eval does the same); ``rank`` is NOT used for ranking (trec_eval ignores it);
    ``score`` must be a number. The run's id (printed by ``runid``) is the tag of the last
    line, as in trec_eval.
    Both: fields are separated by any run of ASCII whitespace (space, tab, \\v, \\f, \\r —
    C ``isspace``, as trec_eval; other Unicode whitespace such as U+00A0 belongs to the field);
    blank lines are skipped. Lines end at ``\\n`` only; a lone ``\\r`` is whitespace inside
    the line, as for trec_eval.

Comment lines (trec_eval 10.0's rules, which differ between the two formats)
    run (``te_get_trec_results`` in get_trec_results.c): a line whose first non-blank
    character is ``#`` is a comment, anywhere and any number of them. So no run line can
    have a qid that starts with ``#``.
    qrels (``te_get_qrels`` in get_qrels.c): a line is a comment only when ``#`` is its
    FIRST character (``   #x 0 d 1`` is a judgment of query ``#x``), and trec_eval then
    reads the next line as a judgment whatever it holds: of two comment lines in a row the
    second is data (query ``#...``), and a comment as the last line makes trec_eval read
    past the end of its buffer — onlineeval refuses that file (error on the comment line).
    trec_eval refuses blank lines in a qrels file ("Malformed line"); onlineeval skips them,
    i.e. it reads a qrels file as trec_eval reads it with the blank lines deleted.
    A ``#`` inside a line (``d#1``, or after the fields) is an ordinary character in both.
    A DataFrame or dict whose qid starts with ``#`` is refused (SchemaError naming the row):
    written to a file its line would be a comment, so trec_eval would not score it.

Text encoding
    The fields onlineeval keeps — qid and docno, and for :func:`read_run` also rank and tag
    (for the engine, the tag of the last line: the run id) — must be valid UTF-8; a field
    that is not is a :class:`~onlineeval.errors.LogFormatError` naming ``file:line`` and the
    field. trec_eval reads every field as raw bytes (its ``strcmp`` order is the byte
    order), so it would accept, say, Latin-1 docnos; onlineeval returns qids and docnos as
    Python text and pandas 3's string dtype cannot hold undecodable bytes, so such a file is
    refused rather than altered. trec_eval gives the same results on a Latin-1 file
    re-encoded as UTF-8 (``iconv -f latin1 -t utf-8``): the mapping is one-to-one and UTF-8
    keeps the byte order of Latin-1 text. Fields trec_eval ignores (iter, anything after
    the sixth field; in the engine also rank and all tags but the last) and comment lines
    are not checked.

Byte-order mark
    A UTF-8 byte-order mark (``EF BB BF``, U+FEFF) at the very start of a file — as Windows
    editors and Excel write them — is dropped on every reader path: the file is read as the
    same file without it (trec_eval would read the mark as part of the first qid, which
    invents a query or, in a run, loses the first query's first line). A U+FEFF at the start
    of a later line (files concatenated with their marks) is an error naming the line: no
    qid starts with it, so reading it would invent a query. A file that starts with a UTF-16
    or UTF-32 byte-order mark, or is gzip-compressed, is refused with a message saying how
    to convert it.

Where we are stricter than trec_eval (documented choices, each a clear error, never a silent
change of the numbers): a non-numeric or NaN score (trec_eval's ``atof`` would read it as 0 or
a prefix of it; a score or grade must be written in ASCII: Python reads ``1_0`` and
Arabic-Indic digits as numbers, ``atof``/``atol`` do not; a hexadecimal grade ``0x1``, which
pyarrow would read as 1 and ``atol`` reads as 0, is refused too), a non-integer grade (``atol``
would truncate ``1.5`` to 1), a qrels file that ends with a comment line and a DataFrame
qid that starts with ``#`` (see "Comment lines"), a kept field
that is not UTF-8 (see "Text encoding"), and a qrels line
with more than four fields or a run line with fewer than six (trec_eval also refuses these,
but names only a line count that skips comments). Errors are
:class:`~onlineeval.errors.LogFormatError` naming ``file:line``, what was expected and what was
found. Duplicates are not a reader error; :func:`onlineeval.offline.ranking.prepare` refuses
them exactly where trec_eval does.

Speed: a clean file (one space or one tab between fields, no comments) is parsed by pyarrow's
CSV reader with explicit columns and types (about 0.5 s per 10M run lines on two cores) when
pyarrow is installed; only qid, docno and the value are converted (the run's id is read from
the file's tail). qid and docno are dictionary encoded in two threads — qids through their
runs of equal neighbours, so only one value per run is hashed — and validated on their
distinct values. Nothing on this path imports pandas. Any other
file — or a clean-looking file that the fast reader rejects — is read by a line-by-line
scanner, which either parses the irregular-whitespace file or raises the error with its line
number. The comment rules live in the scanner only: a file with a comment line or a qid
that starts with ``#`` is handed to it. The fast path never accepts a line the scanner
would reject.

Internal API used by the engine (not re-exported)
    ``load_qrels(source)`` / ``load_run(source)`` -> :class:`Columns` (qid, docno, value,
    name, runid) without building pandas objects for files on the fast path;
    ``load_run(Labelled(run, label))`` (and ``read_run``) names a DataFrame or dict run
    ``label`` in errors.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from onlineeval.errors import LogFormatError, SchemaError

if TYPE_CHECKING:
    import pandas as pd

QRELS_COLUMNS = ("qid", "docno", "rel")
RUN_COLUMNS = ("qid", "docno", "rank", "score", "tag")

_WS = " \t\r\n\v\f"
# trec_eval splits fields with C isspace(): ASCII whitespace only (str.split() would also
# split on NBSP, U+2000.., and \x1c-\x1f)
_FIELD_SEP = re.compile("[" + re.escape(_WS) + "]+")
_BLOCK_SIZE = 8 << 20   # bytes per block of pyarrow's CSV reader (one chunk per block)


# --------------------------------------------------------------------------- public readers

def read_qrels(source: Any) -> pd.DataFrame:
    """Read TREC relevance judgments into a DataFrame ``(qid, docno, rel)``.

    Parameters
    ----------
    source : path, DataFrame or dict
        A qrels file (``qid iter docno rel`` lines), a DataFrame with columns qid, docno, rel,
        or ``{qid: {docno: grade}}``.

    Returns
    -------
    DataFrame
        qid and docno as strings, rel as int64, in input order.

    Raises
    ------
    LogFormatError
        A malformed line, a qid/docno that is not UTF-8, or a comment as the last line
        (file and line number in the message; comment rules in the module docstring).
    SchemaError
        A DataFrame without the required columns, with a non-integer grade, with a qid or
        docno that a TREC file could not hold (empty, ASCII whitespace or NUL), or with a qid
        that starts with ``#`` (a comment to trec_eval when written to a file).
    """
    import pandas as pd

    if _is_path(source):
        path = Path(source)
        _check_file(path)
        fast = _fast_read(path, "qrels", full=True)
        if fast is not None:
            return fast
        qid, docno, rel = _scan_qrels(path)
        return pd.DataFrame({"qid": qid, "docno": docno, "rel": np.asarray(rel, dtype=np.int64)})
    return _qrels_frame(source)


def read_run(source: Any) -> pd.DataFrame:
    """Read a TREC run into a DataFrame ``(qid, docno, rank, score, tag)``.

    Parameters
    ----------
    source : path, DataFrame or dict
        A run file (``qid iter docno rank score tag`` lines), a DataFrame with at least
        qid, docno, score, or ``{qid: {docno: score}}``.

    Returns
    -------
    DataFrame
        qid, docno, rank (as written; not used for ranking), score (float64), tag — in input
        order. For a DataFrame/dict without rank or tag those columns are filled with
        ``""`` / ``"run"``.

    Raises
    ------
    LogFormatError
        A malformed line, a non-numeric score or a qid/docno/rank/tag that is not UTF-8
        (file and line number in the message).
    SchemaError
        A DataFrame without the required columns, with a non-numeric score, with a qid
        or docno that a TREC file could not hold (empty, ASCII whitespace or NUL), or with
        a qid that starts with ``#`` (a run line starting with ``#`` is a comment).
    """
    import pandas as pd

    source, what = _unlabelled(source)
    if _is_path(source):
        path = Path(source)
        _check_file(path)
        fast = _fast_read(path, "run", full=True)
        if fast is not None:
            return fast
        qid, docno, rank, score, tag = _scan_run(path)
        return pd.DataFrame({
            "qid": qid, "docno": docno, "rank": rank,
            "score": np.asarray(score, dtype=np.float64), "tag": tag,
        })
    df = _run_frame(source, what)
    out = df[["qid", "docno", "score"]].copy()
    out.insert(2, "rank", df["rank"] if "rank" in df else "")
    out["tag"] = df["tag"].astype(str) if "tag" in df else "run"
    return out


# --------------------------------------------------------------------------- engine loading

@dataclass(frozen=True)
class Columns:
    """The columns the engine needs, without building pandas objects for big files.

    ``qid`` and ``docno`` are pyarrow dictionary arrays (fast path) or numpy object arrays of
    str;
    ``value`` is float64 scores (runs) or int64 grades (qrels).
    """

    qid: Any
    docno: Any
    value: np.ndarray
    name: str
    runid: str = ""

    def __len__(self) -> int:
        return len(self.value)


def load_qrels(source: Any) -> Columns:
    """Qrels columns (qid, docno, rel) from any accepted source, validated."""
    if _is_path(source):
        path = Path(source)
        _check_file(path)
        fast = _fast_read(path, "qrels")
        if fast is not None:
            return fast
        qid, docno, rel = _scan_qrels(path)
        return Columns(np.asarray(qid, dtype=object), np.asarray(docno, dtype=object),
                       np.asarray(rel, dtype=np.int64), str(path))
    df = _qrels_frame(source)
    return Columns(df["qid"].to_numpy(dtype=object), df["docno"].to_numpy(dtype=object),
                   df["rel"].to_numpy(dtype=np.int64), "qrels")


@dataclass(frozen=True)
class Labelled:
    """A run ``source`` with the name its errors carry when it is a DataFrame or dict.

    Lets a caller that takes several runs (``compare``) say which one is bad, through
    :func:`evaluate` and ``prepare``, without reading the run early; a file is named by its
    path and line whatever the label.
    """

    source: Any
    label: str


def _unlabelled(source: Any) -> tuple[Any, str]:
    """(source, the name its errors use): a :class:`Labelled` run's label, else "run"."""
    if isinstance(source, Labelled):
        return source.source, source.label
    return source, "run"


def load_run(source: Any) -> Columns:
    """Run columns (qid, docno, score) and the run id from any accepted source, validated.

    ``source`` may be wrapped in :class:`Labelled`: a DataFrame or dict is then named by the
    label in errors (and in the engine's, e.g. duplicate documents) instead of ``"run"``.
    """
    source, what = _unlabelled(source)
    if _is_path(source):
        path = Path(source)
        _check_file(path)
        fast = _fast_read(path, "run")
        if fast is not None:
            return fast
        qid, docno, _rank, score, tag = _scan_run(path, full=False)
        return Columns(np.asarray(qid, dtype=object), np.asarray(docno, dtype=object),
                       np.asarray(score, dtype=np.float64), str(path), tag[-1])
    df = _run_frame(source, what)
    runid = str(df["tag"].iloc[-1]) if "tag" in df and len(df) else "run"
    return Columns(df["qid"].to_numpy(dtype=object), df["docno"].to_numpy(dtype=object),
                   df["score"].to_numpy(dtype=np.float64), what, runid)


def _fast_read(path: Path, kind: str, full: bool = False) -> Any:
    """Parse a clean file with pyarrow's CSV reader; None when not clean (or no pyarrow).

    Returns :class:`Columns` for the engine, or with ``full`` the DataFrame the public
    readers return (run: also rank and tag).
    """
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:  # optional accelerator; the line scanner reads everything
        return None
    n_fields = 4 if kind == "qrels" else 6
    delim = _fast_delimiter(path, n_fields)
    if delim is None:
        return None
    runid = ""
    if kind == "run" and not full:
        # pyarrow checks that the columns it converts are UTF-8 (else ArrowInvalid: the
        # scanner then names the line); the run id is read from the tail, not converted
        runid = _last_runid(path)
        if not _is_text(runid):
            return None
    if kind == "qrels":
        names = ["qid", "iter", "docno", "rel"]
        types = {"qid": pa.string(), "docno": pa.string(), "rel": pa.int64()}
        keep = ["qid", "docno", "rel"]
    else:
        names = ["qid", "iter", "docno", "rank", "score", "tag"]
        types = {"qid": pa.string(), "docno": pa.string(), "score": pa.float64(),
                 "rank": pa.string(), "tag": pa.string()}
        keep = ["qid", "docno", "rank", "score", "tag"] if full else ["qid", "docno", "score"]
    try:
        table = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(column_names=names, block_size=_BLOCK_SIZE),
            parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False,
                                            escape_char=False, newlines_in_values=False),
            convert_options=pcsv.ConvertOptions(column_types=types, include_columns=keep,
                                                strings_can_be_null=False,
                                                quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError):
        return None
    value_name = "rel" if kind == "qrels" else "score"
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
        [functools.partial(_encode_checked, c, n == "qid")
         for n, c in zip(text_cols, columns, strict=True)]
        + [functools.partial(_regular_bytes, path, delim, kind == "qrels")]
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
    if kind == "run":
        return Columns(encoded["qid"], encoded["docno"], arr, str(path), runid)
    return Columns(encoded["qid"], encoded["docno"], arr, str(path))


def arrow_to_numpy(arr: Any) -> np.ndarray:
    """A numpy array of a pyarrow numeric array or chunked array.

    Null-free integer and float arrays are read straight from their data buffer (a view for
    one chunk, read-only; chunks are concatenated): pyarrow's own ``to_numpy`` imports pandas
    on first use, which the engine needs only for its result (see ``api.evaluate``).
    Anything else goes through ``to_numpy``.
    """
    import pyarrow as pa

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


def pooled_empty(shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
    """``np.empty`` whose memory comes from pyarrow's memory pool (numpy's when no pyarrow).

    A large numpy array is a fresh ``mmap`` every time, and the kernel faults its pages in
    one by one (slow on virtual machines). pyarrow's pool keeps the memory the CSV reader
    has just freed and hands it out again, already mapped. The array owns its buffer.
    """
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    try:
        import pyarrow as pa
    except ImportError:
        return np.empty(shape, dtype=dtype)
    buf = pa.allocate_buffer(max(count * dtype.itemsize, 1))
    return np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)


def arrow_index_to_numpy(arr: Any) -> np.ndarray:
    """An integer pyarrow array with nulls (``index_in``) as numpy, null -> -1."""
    import pyarrow as pa

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


def _parallel(tasks: list[Any]) -> list[Any]:
    """Results of the callables ``tasks``, run in threads (pyarrow/numpy release the GIL)."""
    if len(tasks) < 2:
        return [t() for t in tasks]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(tasks)) as pool:
        futures = [pool.submit(t) for t in tasks]
        return [f.result() for f in futures]


def _encode_checked(col: Any, is_qid: bool) -> Any:
    """Dictionary array of a text column, or None if a value needs the line scanner."""
    import pyarrow.compute as pc

    enc = _dictionary_encode(col)
    uniq = enc.dictionary
    # a qid starting with '#' (comment rules) or U+FEFF (a byte-order mark pyarrow kept,
    # e.g. mid-file): the scanner decides
    if (is_qid and (pc.any(pc.starts_with(uniq, "#")).as_py()
                    or pc.any(pc.starts_with(uniq, _BOM)).as_py())
            or len(uniq) and pc.min(pc.binary_length(uniq)).as_py() == 0):
        return None
    return enc


_CHECK_STEP = 1 << 20   # bytes per step of the raw-byte check (small temporaries)


def _regular_bytes(path: Path, delim: str, qrels: bool = False) -> bool:
    """True when splitting each line on ``delim`` gives the fields the line scanner finds.

    The scanner (like trec_eval) splits on runs of ASCII whitespace; pyarrow's reader splits
    on each ``delim``. They agree on every line when the file has no byte below 14 but the
    newline (and the tab delimiter) — so no NUL, \\r, \\v, \\f, stray tab (the rare bytes
    1-8 also send a file to the scanner) — no doubled delimiter (an empty field) and no space
    in a tab-separated file. Checked on every byte, including the columns the fast reader
    does not convert (iter, rank, tag).

    ``qrels``: also False when a field starts with ``0x`` / ``0X``: pyarrow's int64 parser
    reads a grade ``0x1`` as hexadecimal 1, trec_eval's ``atol`` as 0 (the scanner refuses
    it). A docno or iter field such as ``0xa1`` only costs the scanner's time.
    """
    import mmap

    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        # the array view must be gone before the map closes: _bytes_ok holds the only one
        return _bytes_ok(mm, ord(delim), qrels)


def _bytes_ok(buf: Any, d: int, qrels: bool = False) -> bool:
    a = np.frombuffer(buf, dtype=np.uint8)
    for lo in range(0, len(a), _CHECK_STEP):
        part = a[lo:lo + _CHECK_STEP]
        allowed = np.count_nonzero(part == 10) + (np.count_nonzero(part == 9) if d == 9 else 0)
        if np.count_nonzero(part < 14) != allowed:   # NUL, \t, \v, \f, \r (and \x01-\x08)
            return False
        if d == 9 and np.count_nonzero(part == 32):
            return False
        ext = a[lo:lo + _CHECK_STEP + 1] == d      # one byte more: doubles across steps
        if (ext[1:] & ext[:-1]).any():
            return False
        if qrels:
            # delimiter, "0", "x" or "X" (two bytes more: patterns across steps); the
            # three-byte test only runs on a step that has an x at all
            w = a[lo:lo + _CHECK_STEP + 2]
            x = (w[2:] | 32) == ord("x")
            if x.any() and (x & (w[:-2] == d) & (w[1:-1] == ord("0"))).any():
                return False
    return True


def _dictionary_encode(col: Any) -> Any:
    """One dictionary array for a chunked string column.

    Query ids usually come in long runs of equal values (a run lists each query's documents
    together): then the column is run-end encoded (comparisons of neighbours) and only the
    values of the runs are hashed, which is several times faster than hashing every row.
    Otherwise — or if pyarrow lacks run-end encoding — every row is hashed.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(col)
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    runs = _run_values(chunks, n)
    if runs is None:
        return pc.dictionary_encode(col).combine_chunks()
    values, lengths = runs
    enc = pc.dictionary_encode(values)
    run_codes = arrow_to_numpy(enc.indices).astype(np.int32)
    ends = np.cumsum(lengths).astype(np.int32 if n < 2**31 else np.int64)
    # decoded by pyarrow (into its pool, see pooled_empty); arrays from buffers, since
    # pa.array(ndarray) would import pandas (see arrow_to_numpy)
    etype = pa.int32() if ends.dtype == np.int32 else pa.int64()
    ree = pa.Array.from_buffers(
        pa.run_end_encoded(etype, pa.int32()), n, [None], children=[
            pa.Array.from_buffers(etype, len(ends), [None, pa.py_buffer(ends)]),
            pa.Array.from_buffers(pa.int32(), len(run_codes), [None, pa.py_buffer(run_codes)]),
        ])
    return pa.DictionaryArray.from_arrays(pc.run_end_decode(ree), enc.dictionary)


def _run_values(chunks: list[Any], n: int) -> tuple[Any, np.ndarray] | None:
    """(values of the runs of equal neighbours, run lengths) when runs are long; else None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not hasattr(pc, "run_end_encode") or n == 0:
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


def _fast_delimiter(path: Path, n_fields: int) -> str | None:
    """The one-character delimiter of a clean file, judged on its first line; else None."""
    with open(path, "rb") as fh:
        head = fh.read(65536).removeprefix(_BOM_BYTES)  # pyarrow's reader skips it too
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
        tail = tail.removeprefix(_BOM_BYTES)
    tail = tail.decode("utf-8", errors="surrogateescape")
    for line in reversed(tail.split("\n")):
        text = line.strip(_WS)
        if text and not text.startswith("#"):
            parts = _FIELD_SEP.split(text)
            return parts[5] if len(parts) >= 6 else ""
    return ""


# --------------------------------------------------------------------------- line scanners

def _check_file(path: Path) -> None:
    if not path.exists():
        raise LogFormatError(path, None, "file not found; give the path of a TREC file")
    if path.is_dir():
        raise LogFormatError(path, None, "is a directory; give the path of a TREC file")
    if path.stat().st_size == 0:
        raise LogFormatError(path, None, "file is empty; a TREC file needs at least one line")
    with open(path, "rb") as fh:
        head = fh.read(4)
    for magic, what, fix in _NOT_TEXT:
        if head.startswith(magic):
            raise LogFormatError(path, None, f"the file is {what}; onlineeval reads TREC "
                                             f"files as plain UTF-8 text: {fix}")


# leading bytes of files that are not UTF-8 text (UTF-32 LE before UTF-16 LE: FF FE 00 00)
_NOT_TEXT = (
    (b"\x1f\x8b", "gzip-compressed", "decompress it first (gunzip -k FILE)"),
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian byte-order mark FF FE 00 00)",
     "re-encode it, e.g. iconv -f UTF-32 -t UTF-8 OLD > NEW"),
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian byte-order mark 00 00 FE FF)",
     "re-encode it, e.g. iconv -f UTF-32 -t UTF-8 OLD > NEW"),
    (b"\xff\xfe", "UTF-16 (little-endian byte-order mark FF FE)",
     "re-encode it, e.g. iconv -f UTF-16 -t UTF-8 OLD > NEW"),
    (b"\xfe\xff", "UTF-16 (big-endian byte-order mark FE FF)",
     "re-encode it, e.g. iconv -f UTF-16 -t UTF-8 OLD > NEW"),
)
_BOM = "\ufeff"
_BOM_BYTES = _BOM.encode("utf-8")


def _lines(path: Path, qrels: bool = False) -> Any:
    """(line number, fields) of each content line, skipping blank and comment lines.

    The comment rule is trec_eval 10.0's, which differs between the formats (module
    docstring, "Comment lines"): a run line is a comment when its first non-blank character
    is ``#``; a qrels line only when ``#`` is its very first character and the line before
    it (blank lines aside) is not a comment — trec_eval skips one comment line and then
    reads the next line as a judgment whatever it holds.
    """
    # the callers (read_*/load_*) have run _check_file on path
    # newline="\n": a line ends at \n only, as in trec_eval (a lone \r is whitespace; with
    # universal newlines it would split the line and change what is read)
    comment_line = 0   # qrels: the comment line just skipped (0: the last line was data)
    with open(path, encoding="utf-8", errors="surrogateescape", newline="\n") as fh:
        for lineno, raw in enumerate(fh, 1):
            if raw.startswith(_BOM):
                if lineno == 1:
                    raw = raw[1:]
                else:
                    raise LogFormatError(path, lineno, _MID_FILE_BOM)
            text = raw.strip(_WS)
            if not text:
                continue
            if text[0] == _BOM:
                raise LogFormatError(path, lineno, _MID_FILE_BOM)
            if qrels:
                if raw[0] == "#" and not comment_line:
                    comment_line = lineno
                    continue
                comment_line = 0
            elif text[0] == "#":
                continue
            if "\x00" in text:
                raise LogFormatError(path, lineno, "line contains a NUL character")
            yield lineno, _FIELD_SEP.split(text)
    if comment_line:
        raise LogFormatError(
            path, comment_line,
            "the qrels file ends with this '#' comment line. trec_eval 10.0 (get_qrels.c) "
            "reads the line after a comment line as a judgment, so after a final comment "
            "it reads past the end of the file (undefined behaviour) and onlineeval cannot "
            "match it; delete the line or move it above a judgment line",
        )


_MID_FILE_BOM = (
    "the line starts with a byte-order mark (U+FEFF, bytes EF BB BF), which belongs only at "
    "the start of a file (were files concatenated with their marks?); no qid starts with it. "
    "Remove it, e.g. sed -i 's/^\\xEF\\xBB\\xBF//' FILE"
)


# (index, name) of the fields that must be valid UTF-8 (see "Text encoding" in the module doc)
_QRELS_TEXT = ((0, "qid (1st field)"), (2, "docno (3rd field)"))
_RUN_TEXT = ((0, "qid (1st field)"), (2, "docno (3rd field)"))
_RUN_TEXT_FULL = _RUN_TEXT + ((3, "rank (4th field)"), (5, "tag (6th field)"))
_RUNID = ((0, "tag (6th field) of the last line, the run id,"),)


def _is_text(value: str) -> bool:
    """False when ``value`` holds undecodable bytes (surrogates from ``surrogateescape``)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_text(path: Path, lineno: int, parts: list[str],
                fields: tuple[tuple[int, str], ...]) -> None:
    """LogFormatError at ``path:lineno`` for the first of ``fields`` that is not UTF-8."""
    for index, name in fields:
        if not _is_text(parts[index]):
            raw = parts[index].encode("utf-8", errors="surrogateescape")
            raise LogFormatError(
                path, lineno,
                f"{name} is not valid UTF-8: {raw!r}. onlineeval reads qids, docnos and "
                f"tags as UTF-8 text (trec_eval compares raw bytes); re-encode the file as "
                f"UTF-8, e.g. iconv -f latin1 -t utf-8 OLD > NEW for a Latin-1 file",
            )


def _scan_qrels(path: Path) -> tuple[list[str], list[str], list[int]]:
    qid: list[str] = []
    docno: list[str] = []
    rel: list[int] = []
    for lineno, parts in _lines(path, qrels=True):
        if len(parts) != 4:
            raise LogFormatError(
                path, lineno,
                f"expected 4 whitespace-separated fields 'qid iter docno rel', found "
                f"{len(parts)}: {' '.join(parts)[:120]!r}{_hash_hint(parts)}",
            )
        if not (parts[0].isascii() and parts[2].isascii()):
            _check_text(path, lineno, parts, _QRELS_TEXT)
        grade = int(parts[3]) if _GRADE.fullmatch(parts[3]) else None
        if grade is None or not -(2**63) <= grade < 2**63:
            raise LogFormatError(
                path, lineno,
                f"relevance grade must be an integer (4th field) that fits in 64 bits, "
                f"found {parts[3]!r}{_hash_hint(parts)}",
            )
        qid.append(parts[0])
        docno.append(parts[2])
        rel.append(grade)
    if not qid:
        raise LogFormatError(path, None, "no qrels lines (only blank or comment lines)")
    return qid, docno, rel


# an integer as C's atol reads it whole: ASCII digits only (Python's int() would also take
# "1_0" as 10 and other scripts' digits, which atol reads as 1 and 0)
_GRADE = re.compile("[+-]?[0-9]+")


def _hash_hint(parts: list[str]) -> str:
    """Why a qrels line starting with '#' was read as a judgment, for its error message."""
    if not parts[0].startswith("#"):
        return ""
    return (" (this line is a judgment, not a comment: trec_eval 10.0 skips a qrels line "
            "as a comment only when '#' is its first character and the line before it is "
            "not a comment; it reads the line after a comment line as a judgment)")


def _scan_run(path: Path, full: bool = True,
              ) -> tuple[list[str], list[str], list[str], list[float], list[str]]:
    """The run's fields; ``full``: rank and tag are returned to the user, so they must be
    text too (otherwise only the last tag, the run id, is used)."""
    qid: list[str] = []
    docno: list[str] = []
    rank: list[str] = []
    score: list[float] = []
    tag: list[str] = []
    text_fields = _RUN_TEXT_FULL if full else _RUN_TEXT
    last = 0
    for lineno, parts in _lines(path):
        if len(parts) < 6:
            raise LogFormatError(
                path, lineno,
                f"expected 6 whitespace-separated fields 'qid iter docno rank score tag', "
                f"found {len(parts)}: {' '.join(parts)[:120]!r}",
            )
        if not (parts[0].isascii() and parts[2].isascii()
                and (not full or parts[3].isascii() and parts[5].isascii())):
            _check_text(path, lineno, parts, text_fields)
        value = _parse_score(parts[4])
        if value is None:
            raise LogFormatError(
                path, lineno,
                f"score (5th field) must be a number, found {parts[4]!r}",
            )
        qid.append(parts[0])
        docno.append(parts[2])
        rank.append(parts[3])
        score.append(value)
        tag.append(parts[5])
        last = lineno
    if not qid:
        raise LogFormatError(path, None, "no run lines (only blank or comment lines)")
    if not full:
        _check_text(path, last, tag[-1:], _RUNID)
    return qid, docno, rank, score, tag


def _parse_score(text: str) -> float | None:
    # Python's float() also takes 1_000 and other scripts' digits; C's atof and pyarrow
    # do not (atof would read a different number)
    if "_" in text or not text.isascii():
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


# --------------------------------------------------------------------------- frames and dicts

def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _is_path(source: Any) -> bool:
    return isinstance(source, str | os.PathLike)


def _nested_dict(source: Mapping[Any, Any], value_name: str, what: str) -> pd.DataFrame:
    import pandas as pd

    qid: list[str] = []
    docno: list[str] = []
    values: list[Any] = []
    for q, docs in source.items():
        if not isinstance(docs, Mapping):
            raise SchemaError(
                f"{what} dict must map qid -> {{docno: {value_name}}}; qid {q!r} maps to "
                f"{type(docs).__name__}"
            )
        for d, v in docs.items():
            qid.append(str(q))
            docno.append(str(d))
            values.append(v)
    return pd.DataFrame({"qid": pd.Series(qid, dtype=object),
                         "docno": pd.Series(docno, dtype=object),
                         value_name: pd.Series(values, dtype=object)})


def _as_frame(source: Any, value_name: str, what: str) -> pd.DataFrame:
    import pandas as pd

    if isinstance(source, Mapping):
        return _nested_dict(source, value_name, what)
    if isinstance(source, pd.DataFrame):
        missing = [c for c in ("qid", "docno", value_name) if c not in source.columns]
        if missing:
            raise SchemaError(
                f"{what} DataFrame needs columns qid, docno, {value_name}; missing "
                f"{', '.join(missing)} (columns: {', '.join(map(str, source.columns))}). "
                f"Rename your columns or pass a file path."
            )
        return source
    raise SchemaError(
        f"{what} must be a file path, a DataFrame (qid, docno, {value_name}) or a dict "
        f"{{qid: {{docno: {value_name}}}}}; got {type(source).__name__}"
    )


# what a field of a TREC file cannot hold: the file readers' separators (C isspace: ASCII
# whitespace only — U+00A0 and other Unicode spaces belong to a field there, so here too) and
# NUL, which the line scanner refuses. Explicit, since \s differs between Python's re and
# pyarrow's RE2 and would also match Unicode spaces.
_NOT_IN_FIELD = "[ \t\n\r\x0b\x0c\x00]"


def _as_text(col: pd.Series, column: str, what: str) -> pd.Series:
    """``col.astype(str)``, or a SchemaError naming the row of a value that is not text."""
    try:
        return col.astype(str)
    except UnicodeEncodeError:  # a str with lone surrogates (bytes decoded "surrogateescape")
        row = next(i for i, v in enumerate(col) if not _is_text(str(v)))
        raise SchemaError(
            f"{what} column {column!r} row {row}: {col.iloc[row]!r} is not valid Unicode text "
            f"(it holds undecodable bytes as surrogates, e.g. from errors='surrogateescape'); "
            f"decode the source with its real encoding"
        ) from None


def _string_column(df: pd.DataFrame, column: str, what: str) -> pd.Series:
    """Column ``column`` of ``df`` as text, checked as the file readers check a field."""
    col = df[column]
    if col.isna().any():
        row = int(np.flatnonzero(col.isna().to_numpy())[0])
        raise SchemaError(f"{what} column {column!r} is missing a value at row {row}")
    text = _as_text(col, column, what)
    bad = text.str.contains(_NOT_IN_FIELD, regex=True) | (text == "")
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(
            f"{what} column {column!r} row {row}: {text.iloc[row]!r} is empty or contains "
            f"whitespace or NUL (space, \\t, \\n, \\r, \\v, \\f, \\0), which a field of a "
            f"TREC file cannot hold; remove or replace those characters"
        )
    return text


def _qid_column(df: pd.DataFrame, what: str, run: bool = False) -> pd.Series:
    """The qid column as :func:`_string_column` checks it, and refused if a qid starts
    with ``#``: written to a TREC file, its line would be a comment to trec_eval.

    In a run file the line of such a qid is always a comment (get_trec_results.c), so
    trec_eval can never read that query. In a qrels file it is a comment when the qid
    starts the line, unless the line before is a comment (get_qrels.c): the judgments of
    one such query are partly dropped and partly read. Either way scoring the DataFrame
    would give numbers that trec_eval, on the same data written out, does not.
    """
    text = _string_column(df, "qid", what)
    hashed = text.str.startswith("#")
    if hashed.any():
        row = int(np.flatnonzero(hashed.to_numpy())[0])
        if run:
            why = ("in a TREC run file a line whose first non-blank character is '#' is a "
                   "comment (trec_eval 10.0, get_trec_results.c), so trec_eval can never "
                   "read this query from a run file")
        else:
            why = ("trec_eval 10.0 (get_qrels.c) skips a qrels line that starts with '#' "
                   "as a comment (and reads it if the line before is a comment), so these "
                   "judgments written to a qrels file would be dropped or only partly read")
        raise SchemaError(
            f"{what} column 'qid' row {row}: {text.iloc[row]!r} starts with '#'; {why}. "
            f"onlineeval refuses it rather than give a number trec_eval would not: rename "
            f"the query (e.g. drop the '#')"
        )
    return text


def _qrels_frame(source: Any) -> pd.DataFrame:
    import pandas as pd

    df = _as_frame(source, "rel", "qrels")
    rel = pd.to_numeric(df["rel"], errors="coerce")
    bad = rel.isna() | (rel != np.floor(rel.fillna(0)))
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(
            f"qrels column 'rel' row {row}: grade {_show(df['rel'].iloc[row])} is not an integer; "
            f"relevance grades must be integers (negative allowed)"
        )
    return pd.DataFrame({
        "qid": _qid_column(df, "qrels").to_numpy(dtype=object),
        "docno": _string_column(df, "docno", "qrels").to_numpy(dtype=object),
        "rel": rel.to_numpy(dtype=np.int64),
    })


def _run_frame(source: Any, what: str = "run") -> pd.DataFrame:
    """A run DataFrame or dict, validated; ``what`` names the input in error messages."""
    import pandas as pd

    df = _as_frame(source, "score", what)
    score = pd.to_numeric(df["score"], errors="coerce")
    if score.isna().any():
        row = int(np.flatnonzero(score.isna().to_numpy())[0])
        raise SchemaError(
            f"{what} column 'score' row {row}: {_show(df['score'].iloc[row])} is not a "
            f"number; scores must be numeric (NaN is not allowed)"
        )
    out = pd.DataFrame({
        "qid": _qid_column(df, what, run=True).to_numpy(dtype=object),
        "docno": _string_column(df, "docno", what).to_numpy(dtype=object),
        "score": score.to_numpy(dtype=np.float64),
    })
    for extra in ("rank", "tag"):
        if extra in df.columns:
            out[extra] = _as_text(df[extra], extra, what).to_numpy(dtype=object)
    return out
