"""Rank-biased overlap (RBO) between two rankings, per query.

Webber, Moffat & Zobel (2010), "A similarity measure for indefinite rankings", ACM TOIS 28(4).
For rankings ``S`` and ``T`` let ``X_d = |S[:d] ∩ T[:d]|`` be their overlap at depth ``d`` and
``A_d = X_d / d`` their agreement. With persistence ``p`` (0 < p < 1; the expected depth a
reader goes to is ``1 / (1 - p)``):

``extrapolate=True`` — RBO_EXT, the paper's point estimate (its Eq. 32), which assumes the
agreement seen at the end of the lists continues forever. With ``l`` the length of the longer
list and ``s`` of the shorter one (``X_d`` for ``d > s`` counts the whole shorter list against
the first ``d`` of the longer one)::

    RBO_EXT = (1-p)/p * ( Σ_{d=1..l} X_d/d · p^d  +  Σ_{d=s+1..l} X_s (d - s)/(s d) · p^d )
              + ( (X_l - X_s)/l + X_s/s ) · p^l

For lists of equal length ``k`` this is ``X_k/k · p^k + (1-p)/p Σ_{d=1..k} X_d/d · p^d``.
Identical lists score 1 and disjoint lists 0, at any depth.

``extrapolate=False`` — the truncated sum ``RBO@l = (1-p) Σ_{d=1..l} p^(d-1) X_d/d`` over the
depths seen (``l`` = length of the longer list). It ignores everything below depth ``l``, so
identical lists of length ``l`` score ``1 - p^l``, not 1 (this is the value the ``rbo`` Python
package returns with ``ext=False``).

``depth`` cuts both rankings to their first ``depth`` documents before either formula.

Edge cases: one ranking empty (after the cut) and the other not → 0.0; both empty → NaN (no
evidence either way). Rankings must not list a document twice.

:func:`rbo` compares two runs query by query. Each run is ordered as trec_eval orders it —
score descending, ties by docno descending — so score ties never make RBO ambiguous (the
paper's tie-aware variant is not needed). A query present in only one run is compared
against an empty ranking and scores 0.0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from onlineeval.errors import InputError, InvalidParameterError
from onlineeval.offline.measures.base import Reference
from onlineeval.offline.ranked_lists import ranked_lists

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["REFERENCE", "rbo", "rbo_lists"]


def _check_p_depth(p: float, depth: int | None) -> None:
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 < float(p) < 1.0:
        raise InvalidParameterError(
            f"rbo persistence p must be a number strictly between 0 and 1 (e.g. 0.9); "
            f"got {p!r}"
        )
    if depth is not None and (
        isinstance(depth, bool) or not isinstance(depth, int | np.integer) or depth < 1
    ):
        raise InvalidParameterError(
            f"rbo depth must be a positive integer or None (whole rankings); got {depth!r}"
        )


def rbo_lists(
    ranking_a: Sequence[object], ranking_b: Sequence[object], p: float = 0.9,
    depth: int | None = None, extrapolate: bool = True,
) -> float:
    """RBO of two rankings given as sequences of document ids, best first.

    See the module docstring for the formulas (RBO_EXT of Webber et al. 2010 when
    ``extrapolate``, else the truncated sum) and the edge cases.
    """
    _check_p_depth(p, depth)
    a = list(ranking_a)[:depth] if depth is not None else list(ranking_a)
    b = list(ranking_b)[:depth] if depth is not None else list(ranking_b)
    for name, lst in (("first", a), ("second", b)):
        if len(set(lst)) != len(lst):
            raise InvalidParameterError(
                f"the {name} ranking lists a document more than once; RBO needs each "
                f"document at most once per ranking"
            )
    if not a and not b:
        return float("nan")
    if not a or not b:
        return 0.0
    pos_b = {doc: j for j, doc in enumerate(b, start=1)}
    long_len = max(len(a), len(b))
    short_len = min(len(a), len(b))
    # a shared document counts in X_d from depth max(rank in a, rank in b) on
    first_shared = np.zeros(long_len + 1, dtype=np.int64)
    for i, doc in enumerate(a, start=1):
        j = pos_b.get(doc)
        if j is not None:
            first_shared[max(i, j)] += 1
    x = np.cumsum(first_shared)[1:]  # x[d-1] = X_d
    d = np.arange(1, long_len + 1, dtype=np.float64)
    pw = float(p) ** d
    agreement = x / d
    if not extrapolate:
        return float((1.0 - p) * np.sum(agreement * pw / p))
    x_s = float(x[short_len - 1])
    x_l = float(x[-1])
    total = np.sum(agreement * pw)
    if long_len > short_len:
        tail = d[short_len:]
        total += np.sum(x_s * (tail - short_len) / (short_len * tail) * pw[short_len:])
    return float((1.0 - p) / p * total + ((x_l - x_s) / long_len + x_s / short_len) * pw[-1])


def _rankings(run: object, which: str) -> dict[str, list[str]]:
    """``{qid: [docno, ...]}`` best first: given lists as they are, a scored run ranked as
    trec_eval ranks it (:func:`~onlineeval.offline.ranked_lists.ranked_lists`)."""
    if isinstance(run, Mapping) and all(
        isinstance(v, Sequence) and not isinstance(v, str) for v in run.values()
    ):
        # already ranked lists
        return {str(q): [str(d) for d in docs] for q, docs in run.items()}
    arg = "run_a" if which == "first" else "run_b"
    return ranked_lists(run, what=f"rbo {which} run ({arg})")


def rbo(
    run_a: object, run_b: object, p: float = 0.9, depth: int | None = None,
    extrapolate: bool = True,
) -> pd.DataFrame:
    """Rank-biased overlap of two runs, per query.

    Parameters
    ----------
    run_a, run_b : each a path to a TREC run file, a DataFrame with columns
        (qid, docno, score), a dict ``{qid: {docno: score}}``, or a dict
        ``{qid: [docno, ...]}`` of rankings already in order (best first).
        Scored runs are ranked as trec_eval ranks them (score descending, ties by docno
        descending).
    p : persistence, strictly between 0 and 1.
    depth : compare only the first ``depth`` documents of each ranking (None: all).
    extrapolate : RBO_EXT (default) or the truncated sum; see the module docstring.

    Returns
    -------
    DataFrame with columns ``qid`` and ``rbo``, one row per query in either run (sorted by
    qid). A query missing from one run scores 0.0.

    Raises
    ------
    InputError
        A run cannot be read — the message names a file by path and line, a DataFrame or
        dict as ``rbo first run (run_a)`` / ``rbo second run (run_b)`` — or a ranking lists
        a document twice for a query (the message names the query).
    """
    import pandas as pd

    _check_p_depth(p, depth)
    ra = _rankings(run_a, "first")
    rb = _rankings(run_b, "second")
    qids = sorted(set(ra) | set(rb))
    if not qids:
        raise InputError("rbo needs at least one query; both runs are empty")
    values = []
    for q in qids:
        try:
            values.append(rbo_lists(ra.get(q, []), rb.get(q, []), p, depth, extrapolate))
        except InvalidParameterError as exc:
            raise InputError(f"rbo, query {q!r}: {exc}") from None
    return pd.DataFrame({"qid": pd.Series(qids, dtype=object),
                         "rbo": np.asarray(values, dtype=np.float64)})


REFERENCE = Reference(
    "rbo", "`onlineeval.rbo(run_a, run_b, p=0.9, depth=None, extrapolate=True)`",
    title="rank-biased overlap of two runs, per query (no judgments needed)",
    param_doc="persistence p (0 < p < 1), depth (cut both rankings first), extrapolate "
              "(RBO_EXT or the truncated sum)",
    formula="With X_d the overlap of the two rankings at depth d, l and s the lengths of the "
            "longer and shorter list: RBO_EXT = (1−p)/p · (Σ_(d=1..l) X_d/d · p^d + "
            "Σ_(d=s+1..l) X_s (d − s)/(s d) · p^d) + ((X_l − X_s)/l + X_s/s) · p^l. Truncated: "
            "(1−p) Σ_(d=1..l) p^(d−1) X_d/d.",
    edge_cases="One ranking empty and the other not: 0; both empty: NaN. A query in only one "
               "run is compared with an empty ranking (0). Identical lists score 1 with "
               "extrapolation and 1 − p^l truncated. Runs are ranked as trec_eval ranks them, "
               "so score ties never make RBO ambiguous.",
    citation="Webber, Moffat & Zobel (2010), A similarity measure for indefinite rankings, "
             "ACM TOIS 28(4), Eq. 32",
    matches="The paper's formula: worked examples by hand and an independent brute-force sum "
            "(tests/offline/test_rbo.py), random lists (tests/offline/test_audit.py).",
)
