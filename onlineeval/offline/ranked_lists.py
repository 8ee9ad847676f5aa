"""Ranked document lists per query from a run: ``ranked_lists(run) -> {qid: [docno, ...]}``.

The order is trec_eval's (``form_res_rels.c``), the one the offline engine
(:mod:`onlineeval.offline.ranking`) evaluates: within a query, score descending; equal scores
by docno descending in byte order (C ``strcmp`` on the UTF-8 bytes, so ``"d10"`` comes before
``"d9"`` and a non-ASCII docno after every ASCII one). The run's rank column is never used.
Queries come in byte order of their qid, as trec_eval evaluates them.

Used wherever a run is needed as rankings rather than scores: :func:`onlineeval.rbo` and the
``interleave-lists`` command.

Edge cases: a query with no lines does not appear; a document listed twice for one query
appears twice (the callers decide: rbo and interleave-lists refuse it, as trec_eval refuses
such a run); rows with exactly equal (qid, score, docno) keep their input order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ranked_lists"]


def _byte_rank_codes(values: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Per value, the rank of its distinct value in byte order; the distinct values in order."""
    import pandas as pd

    codes, uniq = pd.factorize(values)
    uniq = [str(u) for u in uniq]
    # trec_eval compares UTF-8 bytes; Python orders str by code point, the same order for
    # every str that UTF-8 can encode (str holding undecodable bytes do not pass the readers)
    order = sorted(range(len(uniq)), key=uniq.__getitem__)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq), dtype=np.int64)
    return rank[codes], [uniq[i] for i in order]


def ranked_lists(run: Any, what: str = "run") -> dict[str, list[str]]:
    """``{qid: [docno, ...]}`` best first, ranked as trec_eval ranks a run.

    Parameters
    ----------
    run : path to a TREC run file, DataFrame (qid, docno, score) or
        ``{qid: {docno: score}}``; read and validated as :func:`onlineeval.read_run` does.
    what : names a DataFrame or dict input in error messages (e.g. ``"rbo second run"``);
        a file is named by its path and line number instead.

    Returns
    -------
    dict
        One entry per query of the run, in byte order of qid; each a list of docnos ordered
        by score descending, ties by docno descending in byte order (see the module
        docstring).

    Raises
    ------
    InputError (LogFormatError, SchemaError)
        The run cannot be read; the message names the file and line, or ``what``.
    """
    from onlineeval.offline.api import as_run_frame

    frame = as_run_frame(run, what=what)
    if frame.empty:
        return {}
    qcode, qids = _byte_rank_codes(frame["qid"].to_numpy(dtype=object))
    dcode, _ = _byte_rank_codes(frame["docno"].to_numpy(dtype=object))
    score = frame["score"].to_numpy(dtype=np.float64)
    # lexsort is stable and sorts by the last key first: query, then score desc, docno desc
    order = np.lexsort((-dcode, -score, qcode))
    docnos = frame["docno"].to_numpy(dtype=object)[order]
    qsorted = qcode[order]
    starts = np.flatnonzero(np.r_[True, qsorted[1:] != qsorted[:-1]])
    ends = np.r_[starts[1:], len(order)]
    return {str(qids[qsorted[s]]): [str(d) for d in docnos[s:e]]
            for s, e in zip(starts, ends, strict=True)}
