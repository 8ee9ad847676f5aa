"""What the engine says when the qrels and the run disagree on which queries exist.

See :mod:`onlineeval.offline.ranking` ("When the queries of the two sides disagree"): an
:class:`InputError` when no judged query has results (without ``complete``), else one of the
warnings below, attributed to the first caller outside onlineeval.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from onlineeval.errors import InputError

__all__ = ["NoSharedQueriesWarning", "QueryMismatchWarning", "SkippedQueriesWarning",
           "check_overlap"]


class QueryMismatchWarning(UserWarning):
    """The qrels and the run disagree on which queries exist (see the package docstring)."""


class NoSharedQueriesWarning(QueryMismatchWarning):
    """With ``complete=True`` (trec_eval ``-c``), no judged query has results in the run."""


class SkippedQueriesWarning(QueryMismatchWarning):
    """Judged queries without results in the run are left out of the averages."""


def check_overlap(in_run: np.ndarray, qids: np.ndarray, qrels_name: str, run_name: str,
                   ignored: int, run_examples: list[str], complete: bool) -> None:
    """The error or warning for queries judged but not run (package docstring).

    ``in_run``: bool[Q] per judged query, whether it has lines in the run; ``ignored`` and
    ``run_examples``: run queries without judgments, their count and a few of their qids.
    """
    n_q = len(qids)
    n_in = int(np.count_nonzero(in_run))
    if n_in == 0:
        judged = _some(n_q, qids)
        ran = _some(ignored, run_examples)
        if not complete:
            raise InputError(
                f"no query has both judgments in {qrels_name} ({judged}) and results in "
                f"{run_name} ({ran}) (trec_eval: 'No queries with both results and relevance "
                f"info'); check that the qids match"
            )
        warnings.warn(NoSharedQueriesWarning(
            f"no query id is shared by {qrels_name} ({judged}) and {run_name} ({ran}): with "
            f"-c (complete=True) every judged query is scored on trec_eval's one-document "
            f"stand-in ranking, so the numbers say nothing about the run; check that the "
            f"qids match"
        ), stacklevel=_outside_stacklevel())
    elif n_in < n_q and not complete:
        skipped = qids[~in_run]
        warnings.warn(SkippedQueriesWarning(
            f"{len(skipped)} of {n_q} judged queries in {qrels_name} have no results in "
            f"{run_name} (e.g. {_examples(skipped)}): they are left out, so every mean "
            f"covers the other {n_in}; use -c (complete=True) to score them as trec_eval -c "
            f"does (0 on almost every measure) and average over all {n_q}. trec_eval 10.0 "
            f"stops with an error on such a run; earlier versions skipped the queries, as "
            f"onlineeval does"
        ), stacklevel=_outside_stacklevel())


def _some(n: int, values: Any) -> str:
    """"3 queries, e.g. '1', '2', '3'" (or "no queries") for a message."""
    if n == 0:
        return "no queries"
    return f"{n} {'query' if n == 1 else 'queries'}, e.g. {_examples(values, n)}"


def _examples(values: Any, n: int | None = None, k: int = 3) -> str:
    """The first ``k`` of ``values`` (``n`` of them in all, default ``len(values)``)."""
    shown = ", ".join(repr(str(v)) for v in list(values[:k]))
    return shown + (", ..." if (len(values) if n is None else n) > k else "")


_PACKAGE_DIR = str(Path(__file__).resolve().parents[2]) + os.sep


def _outside_stacklevel() -> int:
    """The ``stacklevel`` that attributes a warning to the first caller outside onlineeval
    (how deep ``prepare`` sits depends on the entry point: evaluate, trec_eval, compare)."""
    frame = sys._getframe(1)   # the function that warns: stacklevel 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level
