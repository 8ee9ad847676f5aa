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
    Both: fields are separated by any run of spaces/tabs; blank lines and lines whose first
    non-blank character is ``#`` are skipped.

Where we are stricter than trec_eval (documented choices, each a clear error, never a silent
change of the numbers): a non-numeric or NaN score (trec_eval's ``atof`` would read it as 0 or
a prefix of it), a non-integer grade (``atol`` would truncate ``1.5`` to 1), and a qrels line
with more than four fields or a run line with fewer than six (trec_eval also refuses these,
but names only a line count that skips comments). Errors are
:class:`~onlineeval.errors.LogFormatError` naming ``file:line``, what was expected and what was
found. Duplicates are not a reader error; :func:`onlineeval.offline.ranking.prepare` refuses
them exactly where trec_eval does.

Speed: a clean file (one space or one tab between fields, no comments) is parsed by pyarrow's
CSV reader with explicit columns and types (well under 1 s per 10M run lines) when pyarrow is
installed. Any other
file — or a clean-looking file that the fast reader rejects — is read by a line-by-line
scanner, which either parses the irregular-whitespace file or raises the error with its line
number. The fast path never accepts a line the scanner would reject.

Internal API used by the engine (not re-exported)
    ``load_qrels(source)`` / ``load_run(source)`` -> :class:`Columns` (qid, docno, value,
    name, runid) without building pandas objects for files on the fast path.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.errors import LogFormatError, SchemaError

QRELS_COLUMNS = ("qid", "docno", "rel")
RUN_COLUMNS = ("qid", "docno", "rank", "score", "tag")

_WS = " \t\r\n\v\f"


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
        A malformed line (file and line number in the message).
    SchemaError
        A DataFrame without the required columns or with a non-integer grade.
    """
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
        A malformed line or a non-numeric score (file and line number in the message).
    SchemaError
        A DataFrame without the required columns or with a non-numeric score.
    """
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
    df = _run_frame(source)
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


def load_run(source: Any) -> Columns:
    """Run columns (qid, docno, score) and the run id from any accepted source, validated."""
    if _is_path(source):
        path = Path(source)
        _check_file(path)
        fast = _fast_read(path, "run")
        if fast is not None:
            return fast
        qid, docno, _rank, score, tag = _scan_run(path)
        return Columns(np.asarray(qid, dtype=object), np.asarray(docno, dtype=object),
                       np.asarray(score, dtype=np.float64), str(path), tag[-1])
    df = _run_frame(source)
    runid = str(df["tag"].iloc[-1]) if "tag" in df and len(df) else "run"
    return Columns(df["qid"].to_numpy(dtype=object), df["docno"].to_numpy(dtype=object),
                   df["score"].to_numpy(dtype=np.float64), "run", runid)


def _fast_read(path: Path, kind: str, full: bool = False) -> Any:
    """Parse a clean file with pyarrow's CSV reader; None when not clean (or no pyarrow).

    Returns :class:`Columns` for the engine, or with ``full`` the DataFrame the public
    readers return (run: also rank and tag).
    """
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv
    except ImportError:  # optional accelerator; the line scanner reads everything
        return None
    n_fields = 4 if kind == "qrels" else 6
    delim = _fast_delimiter(path, n_fields)
    if delim is None:
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
            read_options=pcsv.ReadOptions(column_names=names, block_size=8 << 20),
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
    other_ws = "[\\t\\v\\f\\r]" if delim == " " else "[ \\v\\f\\r]"
    encoded = {}
    for name in keep:
        if name == value_name:
            continue
        # Dictionary-encode once (the engine needs the codes anyway) and validate the distinct
        # values: a comment line, an empty field or whitespace the line scanner would split
        # on means the line scanner decides.
        enc = pc.dictionary_encode(table.column(name)).combine_chunks()
        uniq = enc.dictionary
        if (pc.any(pc.starts_with(uniq, "#")).as_py() and name == "qid"
                or pc.any(pc.equal(pc.binary_length(uniq), 0)).as_py()
                or pc.any(pc.match_substring_regex(uniq, other_ws)).as_py()):
            return None
        encoded[name] = enc
    arr = values.to_numpy()
    if kind == "run" and np.isnan(arr).any():
        return None
    arr = arr.astype(np.float64 if kind == "run" else np.int64, copy=False)
    if full:
        frame = {n: (arr if n == value_name else pd.Series(table.column(n).to_pandas()))
                 for n in keep}
        return pd.DataFrame(frame)
    del table
    if kind == "run":
        return Columns(encoded["qid"], encoded["docno"], arr, str(path), _last_runid(path))
    return Columns(encoded["qid"], encoded["docno"], arr, str(path))


def _fast_delimiter(path: Path, n_fields: int) -> str | None:
    """The one-character delimiter of a clean file, judged on its first line; else None."""
    with open(path, "rb") as fh:
        head = fh.read(65536)
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
        fh.seek(max(0, size - 65536))
        tail = fh.read().decode("utf-8", errors="surrogateescape")
    for line in reversed(tail.splitlines()):
        parts = line.split()
        if parts and not parts[0].startswith("#"):
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


def _lines(path: Path) -> Any:
    _check_file(path)
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as fh:
        for lineno, raw in enumerate(fh, 1):
            text = raw.strip(_WS)
            if not text or text.startswith("#"):
                continue
            if "\x00" in text:
                raise LogFormatError(path, lineno, "line contains a NUL character")
            yield lineno, text.split()


def _scan_qrels(path: Path) -> tuple[list[str], list[str], list[int]]:
    qid: list[str] = []
    docno: list[str] = []
    rel: list[int] = []
    for lineno, parts in _lines(path):
        if len(parts) != 4:
            raise LogFormatError(
                path, lineno,
                f"expected 4 whitespace-separated fields 'qid iter docno rel', found "
                f"{len(parts)}: {' '.join(parts)[:120]!r}",
            )
        try:
            grade = int(parts[3])
        except ValueError:
            raise LogFormatError(
                path, lineno,
                f"relevance grade must be an integer (4th field), found {parts[3]!r}",
            ) from None
        qid.append(parts[0])
        docno.append(parts[2])
        rel.append(grade)
    if not qid:
        raise LogFormatError(path, None, "no qrels lines (only blank or comment lines)")
    return qid, docno, rel


def _scan_run(path: Path) -> tuple[list[str], list[str], list[str], list[float], list[str]]:
    qid: list[str] = []
    docno: list[str] = []
    rank: list[str] = []
    score: list[float] = []
    tag: list[str] = []
    for lineno, parts in _lines(path):
        if len(parts) < 6:
            raise LogFormatError(
                path, lineno,
                f"expected 6 whitespace-separated fields 'qid iter docno rank score tag', "
                f"found {len(parts)}: {' '.join(parts)[:120]!r}",
            )
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
    if not qid:
        raise LogFormatError(path, None, "no run lines (only blank or comment lines)")
    return qid, docno, rank, score, tag


def _parse_score(text: str) -> float | None:
    if "_" in text:  # Python accepts 1_000; C's atof and pyarrow do not
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


def _nested_dict(source: Mapping[Any, Any], value_name: str) -> pd.DataFrame:
    qid: list[str] = []
    docno: list[str] = []
    values: list[Any] = []
    for q, docs in source.items():
        if not isinstance(docs, Mapping):
            raise SchemaError(
                f"{value_name} dict must map qid -> {{docno: {value_name}}}; qid {q!r} maps to "
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
    if isinstance(source, Mapping):
        return _nested_dict(source, value_name)
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


def _string_column(df: pd.DataFrame, column: str, what: str) -> pd.Series:
    col = df[column]
    if col.isna().any():
        row = int(np.flatnonzero(col.isna().to_numpy())[0])
        raise SchemaError(f"{what} column {column!r} is missing a value at row {row}")
    text = col.astype(str)
    bad = text.str.contains(r"\s", regex=True) | (text == "")
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(
            f"{what} column {column!r} row {row}: {text.iloc[row]!r} is empty or contains "
            f"whitespace, which a TREC file cannot hold"
        )
    return text


def _qrels_frame(source: Any) -> pd.DataFrame:
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
        "qid": _string_column(df, "qid", "qrels").to_numpy(dtype=object),
        "docno": _string_column(df, "docno", "qrels").to_numpy(dtype=object),
        "rel": rel.to_numpy(dtype=np.int64),
    })


def _run_frame(source: Any) -> pd.DataFrame:
    df = _as_frame(source, "score", "run")
    score = pd.to_numeric(df["score"], errors="coerce")
    if score.isna().any():
        row = int(np.flatnonzero(score.isna().to_numpy())[0])
        raise SchemaError(
            f"run column 'score' row {row}: {_show(df['score'].iloc[row])} is not a number; "
            f"scores must be numeric (NaN is not allowed)"
        )
    out = pd.DataFrame({
        "qid": _string_column(df, "qid", "run").to_numpy(dtype=object),
        "docno": _string_column(df, "docno", "run").to_numpy(dtype=object),
        "score": score.to_numpy(dtype=np.float64),
    })
    for extra in ("rank", "tag"):
        if extra in df.columns:
            out[extra] = df[extra].astype(str).to_numpy(dtype=object)
    return out
