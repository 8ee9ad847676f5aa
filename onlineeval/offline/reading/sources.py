"""Read a qrels or run source — a path, a DataFrame or a dict — for the user or the engine.

``read_qrels`` / ``read_run`` return DataFrames (the public readers); ``load_qrels`` /
``load_run`` return :class:`~onlineeval.offline.reading.columns.Columns` for the engine,
without building pandas objects for files the fast reader takes. A path goes to the pyarrow
reader first and to the line scanner when the file is not regular; a DataFrame or dict is
validated by :mod:`~onlineeval.offline.reading.frames`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from onlineeval.offline.hugepages import no_hugepage_advice
from onlineeval.offline.reading import arrow_reader
from onlineeval.offline.reading.columns import Columns, unlabelled
from onlineeval.offline.reading.fast_frames import frame_columns
from onlineeval.offline.reading.frames import qrels_frame, run_frame
from onlineeval.offline.reading.line_scanner import scan_qrels, scan_run
from onlineeval.offline.reading.text_rules import check_file

if TYPE_CHECKING:
    import pandas as pd

QRELS_COLUMNS = ("qid", "docno", "rel")
RUN_COLUMNS = ("qid", "docno", "rank", "score", "tag")


# the public readers run under the engine's huge-page switch too: read in full (five columns
# into a DataFrame) a 4M-line run faults in about 700 MB, and with the kernel's huge-page
# compaction that cost 2.2-2.5 s CPU instead of 1.1-1.3 s (bench/README.md, issue 15)
@no_hugepage_advice()
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
        (file and line number in the message; the rules are in
        :mod:`onlineeval.offline.reading`).
    SchemaError
        A DataFrame without the required columns, with a non-integer grade, with a qid or
        docno that a TREC file could not hold (empty, ASCII whitespace or NUL), or with a qid
        that starts with ``#`` (a comment to trec_eval when written to a file).
    """
    import pandas as pd

    if _is_path(source):
        path = _checked(source)
        regular = arrow_reader.read_regular(path, "qrels", full=True)
        if regular is not None:
            return regular
        qid, docno, rel = scan_qrels(path)
        return pd.DataFrame({"qid": qid, "docno": docno, "rel": np.asarray(rel, dtype=np.int64)})
    return qrels_frame(source)


@no_hugepage_advice()
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

    source, what = unlabelled(source)
    if _is_path(source):
        path = _checked(source)
        regular = arrow_reader.read_regular(path, "run", full=True)
        if regular is not None:
            return regular
        qid, docno, rank, score, tag = scan_run(path)
        return pd.DataFrame({
            "qid": qid, "docno": docno, "rank": rank,
            "score": np.asarray(score, dtype=np.float64), "tag": tag,
        })
    df = run_frame(source, what)
    out = df[["qid", "docno", "score"]].copy()
    out.insert(2, "rank", df["rank"] if "rank" in df else "")
    out["tag"] = df["tag"].astype(str) if "tag" in df else "run"
    return out


def load_qrels(source: Any) -> Columns:
    """Qrels columns (qid, docno, rel) from any accepted source, validated."""
    if _is_path(source):
        path = _checked(source)
        regular = arrow_reader.read_regular(path, "qrels")
        if regular is not None:
            return regular
        qid, docno, rel = scan_qrels(path)
        return Columns(np.asarray(qid, dtype=object), np.asarray(docno, dtype=object),
                       np.asarray(rel, dtype=np.int64), str(path))
    fast = frame_columns(source, "rel", "qrels")
    if fast is not None:
        return fast
    df = qrels_frame(source)
    return Columns(df["qid"].to_numpy(dtype=object), df["docno"].to_numpy(dtype=object),
                   df["rel"].to_numpy(dtype=np.int64), "qrels")


def load_run(source: Any) -> Columns:
    """Run columns (qid, docno, score) and the run id from any accepted source, validated.

    ``source`` may be wrapped in :class:`~onlineeval.offline.reading.columns.Labelled`: a
    DataFrame or dict is then named by the label in errors (and in the engine's, e.g.
    duplicate documents) instead of ``"run"``.
    """
    source, what = unlabelled(source)
    if _is_path(source):
        path = _checked(source)
        regular = arrow_reader.read_regular(path, "run")
        if regular is not None:
            return regular
        qid, docno, _rank, score, tag = scan_run(path, full=False)
        return Columns(np.asarray(qid, dtype=object), np.asarray(docno, dtype=object),
                       np.asarray(score, dtype=np.float64), str(path), tag[-1])
    fast = frame_columns(source, "score", what, _runid(source))
    if fast is not None:
        return fast
    df = run_frame(source, what)
    runid = str(df["tag"].iloc[-1]) if "tag" in df and len(df) else "run"
    return Columns(df["qid"].to_numpy(dtype=object), df["docno"].to_numpy(dtype=object),
                   df["score"].to_numpy(dtype=np.float64), what, runid)


def _runid(source: Any) -> str:
    """The run id of a DataFrame or dict run: the last row's tag, else "run"."""
    import pandas as pd

    if isinstance(source, pd.DataFrame) and "tag" in source.columns and len(source):
        return str(source["tag"].iloc[-1])
    return "run"


def _is_path(source: Any) -> bool:
    return isinstance(source, str | os.PathLike)


def _checked(source: str | os.PathLike) -> Path:
    path = Path(source)
    check_file(path)
    return path
