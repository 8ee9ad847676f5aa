"""Expected reciprocal rank, ERR@k (Chapelle, Metzler, Zhang & Grinspan 2009)."""

from __future__ import annotations

import numpy as np

from onlineeval.errors import InvalidParameterError
from onlineeval.offline.measures.base import Measure, Option, per_cutoff, register
from onlineeval.offline.measures.top_k import max_judged_grade, top
from onlineeval.offline.ranking import Ranked


def err(data: Ranked, k: int | None, gmax: float) -> np.ndarray:
    """ERR@k with stop probability ``(2^g - 1) / 2^gmax`` (see the registered documentation).

    ``gmax`` must be >= every judged grade of the evaluated queries, retrieved or not, so
    that the stop probability stays below 1 and the scale is the same at every cutoff.
    """
    gmax = float(gmax)
    if not np.isfinite(gmax):
        raise InvalidParameterError(f"ERR's gmax must be a finite number; got {gmax!r}")
    mask = top(data, k)
    g = np.maximum(data.rel[mask], 0).astype(np.float64)
    # every judged grade of the evaluated queries, retrieved or not, above the cutoff or not:
    # the scale does not depend on k
    highest = int(max_judged_grade(data).max(initial=-1))
    if highest > gmax:
        raise InvalidParameterError(
            f"ERR's gmax ({gmax:g}) is below a grade in the judgments ({highest}); gmax "
            f"must be the highest grade of the scale, e.g. ERR@10(gmax={highest})"
        )
    stop = (np.exp2(g) - 1.0) / np.exp2(gmax)
    qi = data.seg[mask]
    pos = data.pos[mask]
    # walk down the ranks, all queries at once: reach[q] = Π_{i<r} (1 - R_i) for query q
    reach = np.ones(data.n_queries)
    total = np.zeros(data.n_queries)
    order = np.argsort(pos, kind="stable")
    bounds = np.searchsorted(pos[order], np.arange(int(pos.max(initial=-1)) + 2))
    for r in range(len(bounds) - 1):
        sel = order[bounds[r]:bounds[r + 1]]
        q = qi[sel]  # each query appears at most once per rank
        total[q] += reach[q] * stop[sel] / (r + 1.0)
        reach[q] *= 1.0 - stop[sel]
    return total


def _err_score(data: Ranked, k: int | None, gmax: float | None = None) -> np.ndarray:
    if gmax is None:
        # the highest grade in the qrels (rel_levels has one column per grade 0..max)
        gmax = float(data.rel_levels.shape[1] - 1)
    return err(data, k, gmax)


register(Measure(
    "ERR", 1_005, per_cutoff(_err_score), params="at",
    options=(Option("gmax", None, "the highest grade of the scale (default: the highest grade "
                                  "anywhere in the qrels, queries not evaluated included)"),),
    param_doc="cutoff k, optional (`ERR@10`); option `gmax`, e.g. `ERR@10(gmax=4)`",
    title="expected reciprocal rank",
    formula="ERR@k = Σ_(r <= k) (1/r) R_r Π_(i < r) (1 − R_i) with stop probability "
            "R = (2^g − 1) / 2^gmax (unjudged and negative grades: g = 0, R = 0).",
    edge_cases="0 when nothing retrieved has a positive grade. The default gmax comes from "
               "the qrels, so a query's ERR does not depend on which other queries were "
               "retrieved; a gmax below a judged grade of an evaluated query is an error. "
               "Tools differ only in gmax: gdeval (ir_measures' ERR@k) fixes gmax = 4; some "
               "libraries use the query's own highest grade, which is not Chapelle et al.'s "
               "definition.",
    citation="Chapelle, Metzler, Zhang & Grinspan (2009), Expected reciprocal rank for "
             "graded relevance, CIKM",
    matches="An independent per-query implementation on random adversarial collections and "
            "a worked example by hand (tests/offline/test_audit.py); `ERR@k(gmax=4)` equals "
            "ir_measures' ERR@k (gdeval) to the 5 decimals gdeval prints."))
