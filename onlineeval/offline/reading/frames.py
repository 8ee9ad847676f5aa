"""DataFrames and ``{qid: {docno: value}}`` dicts as qrels or runs, validated as files are.

A field of a TREC file cannot be empty or hold ASCII whitespace or NUL, and a qid cannot start
with ``#`` (the line would be a comment); a frame or dict that holds such a value is refused
with a :class:`~onlineeval.errors.SchemaError` naming the column and row, so scoring it gives
the numbers trec_eval gives on the same data written to a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from onlineeval.errors import SchemaError
from onlineeval.offline.reading.text_rules import NOT_IN_FIELD, is_text

if TYPE_CHECKING:
    import pandas as pd

# what a field of a TREC file cannot hold: the file readers' separators (C isspace: ASCII
# whitespace only — U+00A0 and other Unicode spaces belong to a field there, so here too) and
# NUL, which the line scanner refuses. Explicit, since \s differs between Python's re and
# pyarrow's RE2 and would also match Unicode spaces.
_NOT_IN_FIELD = "[" + NOT_IN_FIELD + "]"


def qrels_frame(source: Any) -> pd.DataFrame:
    """A qrels DataFrame or dict as DataFrame (qid, docno, rel: int64), validated."""
    import pandas as pd

    df = _as_frame(source, "rel", "qrels")
    rel = _numeric(df["rel"], "qrels", "rel")
    bad = ~_int64_grades(rel)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise SchemaError(
            f"qrels column 'rel' row {row}: grade {_show(df['rel'].iloc[row])} is not an "
            f"integer that fits in 64 bits; relevance grades must be integers (negative allowed)"
        )
    return pd.DataFrame({
        "qid": _qid_column(df, "qrels").to_numpy(dtype=object),
        "docno": _string_column(df, "docno", "qrels").to_numpy(dtype=object),
        "rel": rel.to_numpy(dtype=np.int64),
    })


def run_frame(source: Any, what: str = "run") -> pd.DataFrame:
    """A run DataFrame or dict as DataFrame (qid, docno, score[, rank, tag]), validated;
    ``what`` names the input in error messages."""
    import pandas as pd

    df = _as_frame(source, "score", what)
    score = _numeric(df["score"], what, "score")
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


def _show(value: Any) -> str:
    try:
        text = repr(value) if isinstance(value, str) else str(value)
    except ValueError:   # an int with more digits than Python converts to text
        return f"(an integer of {value.bit_length()} bits)"
    return text if len(text) <= 60 else text[:57] + "..."


def _numeric(col: pd.Series, what: str, column: str) -> pd.Series:
    """``pd.to_numeric(col, errors="coerce")``, or a SchemaError naming the row of an int too
    large for a float (pandas raises OverflowError on it rather than coerce)."""
    import pandas as pd

    try:
        return pd.to_numeric(col, errors="coerce")
    except OverflowError:
        row = next((i for i, v in enumerate(col) if _overflows(v)), None)
        where = f" row {row}: {_show(col.iloc[row])}" if row is not None else ": a value"
        raise SchemaError(
            f"{what} column {column!r}{where} is too large for a 64-bit number; use values "
            f"within float64's range"
        ) from None


def _overflows(value: Any) -> bool:
    try:
        float(value)
    except OverflowError:
        return True
    except (TypeError, ValueError):
        return False
    return False


def _int64_grades(rel: pd.Series) -> np.ndarray:
    """Which values of a to_numeric column are integers that int64 holds exactly: not
    missing, finite, integral, within -2**63..2**63-1 (a larger value would wrap around or
    become int64's minimum, a negative grade, in the conversion)."""
    ok = rel.notna().to_numpy(dtype=bool, copy=True)
    filled = rel.where(ok, 0)
    kind = filled.dtype.kind
    if kind == "f":
        v = filled.to_numpy(dtype=np.float64)
        with np.errstate(invalid="ignore"):
            ok &= np.isfinite(v) & (v == np.floor(v)) & (v >= -(2.0**63)) & (v < 2.0**63)
    elif kind == "u":
        ok &= filled.to_numpy(dtype=np.uint64) <= np.uint64(np.iinfo(np.int64).max)
    elif kind not in "ib":
        ok &= False   # not numbers (to_numeric left an object column)
    return ok


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


def _as_text(col: pd.Series, column: str, what: str) -> pd.Series:
    """``col.astype(str)``, or a SchemaError naming the row of a value that is not text."""
    try:
        return col.astype(str)
    except UnicodeEncodeError:  # a str with lone surrogates (bytes decoded "surrogateescape")
        row = next(i for i, v in enumerate(col) if not is_text(str(v)))
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
