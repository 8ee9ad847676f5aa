"""Interpolated precision at recall levels: iprec_at_recall and 11pt_avg."""

from __future__ import annotations

import numpy as np

from onlineeval.offline.measures.base import (
    Measure,
    register,
    trec_eval_match,
    trec_eval_source,
)
from onlineeval.offline.ranking import Ranked

ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def lround(x: np.ndarray) -> np.ndarray:
    """C ``lround`` for non-negative doubles: nearest integer, halves away from zero."""
    lo = np.floor(x)
    return np.where(x - lo >= 0.5, lo + 1.0, lo).astype(np.int64)


def _interpolated(r: Ranked) -> tuple[np.ndarray, np.ndarray]:
    """(ip over relevant retrieved rows in rank order, index of each query's first such row)."""
    if "iprec" in r._cache:
        return r._cache["iprec"]
    rows = np.flatnonzero(r.is_rel)
    prec = r.running_count(rows) / (r.pos_of(rows) + 1.0)
    q = r.seg_of(rows)
    # Running max from the bottom of each query, exactly: rank the values, then a running max
    # of (segment, value-rank) keys that restarts at each query boundary.
    uniq, inv = np.unique(prec, return_inverse=True)
    n_u = max(len(uniq), 1)
    rev_key = (r.n_queries - 1 - q[::-1]) * n_u + inv[::-1]
    run_max = np.maximum.accumulate(rev_key) if len(rev_key) else rev_key
    ip = uniq[(run_max % n_u)[::-1]] if len(rows) else prec
    first = np.concatenate(([0], np.cumsum(r.num_rel_ret)))[:-1]
    r._cache["iprec"] = (ip, first)
    return ip, first


def iprec_at(r: Ranked, x: float) -> np.ndarray:
    """Interpolated precision at recall level ``x`` per query (trec_eval's rules)."""
    ip, first = _interpolated(r)
    k = lround(x * r.num_rel.astype(np.float64))
    m = r.num_rel_ret
    out = np.zeros(r.n_queries)
    hit = (k >= 1) & (k <= m)
    out[hit] = ip[first[hit] + k[hit] - 1]
    zero = (k == 0) & (m > 0)
    out[zero] = ip[first[zero]]
    # trec_eval starts from num_rel_ret / num_ret: 0/0 on the empty ranking of -M 0
    out[(k == 0) & (r.num_ret == 0)] = np.nan
    return out


def _iprec_at_recall(r: Ranked, levels: tuple[float, ...]) -> list[np.ndarray]:
    return [iprec_at(r, x) for x in levels]


def _11pt_avg(r: Ranked, levels: tuple[float, ...]) -> list[np.ndarray]:
    total = np.zeros(r.n_queries)
    for x in reversed(levels):  # trec_eval adds from the highest level down
        total = total + iprec_at(r, x)
    return [total / float(len(levels))]


_IPREC = ("With R relevant judged documents and relevant retrieved documents at ranks "
          "r_1 < ... < r_m, the interpolated precision at the j-th is ip_j = max_(i >= j) "
          "i / r_i. A recall level x becomes k = lround(x·R) relevant documents (halves away "
          "from zero); the value is ip_k for 1 <= k <= m, ip_1 for k = 0 (0 when nothing "
          "relevant is retrieved), and 0 for k > m (that recall is never reached).")
_TREC9 = ("pytrec_eval-terrier embeds trec_eval 9, which uses k = trunc(x·R + 0.9): with 1 of 3 "
          "relevant found, level 0.4 is reached in trec_eval 10.0 (k = 1) and not in "
          "pytrec_eval (k = 2); checked against trec_eval 10's rule instead "
          "(tests/offline/test_audit.py, test_properties.py)")

register(Measure(
    "iprec_at_recall", 10, _iprec_at_recall, params="float_cutoffs", defaults=ELEVEN,
    aliases=("pr_curve", "iprec"),
    param_doc="recall levels x (default 0.0, 0.1, ..., 1.0); values named "
              "`iprec_at_recall_0.10` etc.",
    title="interpolated precision at recall levels",
    formula=_IPREC,
    edge_cases="NaN (printed `-nan`, as trec_eval) at level 0 on the empty ranking of -M 0, "
               "where trec_eval divides 0 by 0.",
    citation=trec_eval_source("m_iprec_at_recall.c"),
    matches=trec_eval_match(pytrec=False, note=_TREC9)))
register(Measure(
    "11pt_avg", 18, _11pt_avg, params="floats", defaults=ELEVEN, aliases=("11pt", "11pt_avg_prec"),
    param_doc="recall levels (default the 11 levels 0.0, 0.1, ..., 1.0), taken in the "
              "order given",
    title="mean interpolated precision over recall levels",
    formula="The mean of iprec_at_recall over the levels (added from the highest level "
            "down, as trec_eval adds).",
    edge_cases="NaN under -M 0, as iprec_at_recall.",
    citation=trec_eval_source("m_11pt_avg.c"),
    matches=trec_eval_match(pytrec=False, note=_TREC9)))
