"""Average precision and its relatives: map, gm_map, map_cut, recip_rank, bpref, gm_bpref, infAP.

Per query, with ``R`` = num_rel, relevant retrieved documents at 1-based ranks
``r_1 < r_2 < ...`` (``r_j`` holds the j-th relevant document):

- ``map`` (m_map.c): AP = Σ_j (j / r_j) / R. 0 when nothing relevant is retrieved (or R = 0).
- ``gm_map`` (m_gm_map.c): per query log(max(AP, 0.00001)); summary exp(mean) — geometric mean
  of AP with floor 1e-5. No per-query line.
- ``map_cut_k`` (m_map_cut.c): Σ_{j: r_j <= k} (j / r_j) / R — divisor R, not min(k, R).
  0 when R = 0. Defaults 5,10,15,20,30,100,200,500,1000.
- ``recip_rank`` (m_recip_rank.c): 1 / r_1; 0 when nothing relevant is retrieved.
- ``bpref`` (m_bpref.c, Buckley & Voorhees 2004): only judged documents count (not in the
  qrels or a negative grade: skipped). ``N`` = judged documents with 0 <= grade < level. For
  each relevant retrieved document with ``m`` judged non-relevant documents above it:
  ``1 - min(m, R) / min(N, R)`` (1 when m = 0); summed and divided by R (0 when R = 0).
- ``gm_bpref`` (m_gm_bpref.c): geometric mean of bpref with floor 1e-5, as gm_map.
- ``infAP`` (m_infap.c, Yilmaz & Aslam 2006): for the relevant document at 0-based position
  ``j`` with ``rel`` relevant (itself included), ``non`` judged non-relevant and ``unj``
  negative-grade documents at positions < j: 1 if j = 0, else
  ``1/(j+1) + j/(j+1) · ((rel-1+non+unj)/j) · ((rel-1+ε)/(rel-1+non+2ε))`` with ε = 0.00001;
  summed and divided by R. Documents not in the qrels are skipped (count nowhere).

All vectorised over every query at once; sums run left to right within a query as in
trec_eval, so results agree with it to the last bit in practice.
"""

from __future__ import annotations

import numpy as np

from onlineeval.offline.measures.base import MIN_GEO_MEAN, TrecMeasure, ratio, register
from onlineeval.offline.measures.precision import CUTOFFS
from onlineeval.offline.ranking import NONPOOL, UNJUDGED, Ranked

INFAP_EPSILON = 0.00001


def _precision_at_rel(r: Ranked) -> tuple[np.ndarray, np.ndarray]:
    """(relevant rows, j / r_j on each of them) — the terms of AP, in rank order."""
    if "prec_at_rel" not in r._cache:
        rows = np.flatnonzero(r.is_rel)
        r._cache["prec_at_rel"] = (rows, r.running_count(rows) / (r.pos_of(rows) + 1.0))
    return r._cache["prec_at_rel"]


def average_precision(r: Ranked) -> np.ndarray:
    """trec_eval's AP per query (``map``)."""
    if "ap" not in r._cache:
        rows, prec = _precision_at_rel(r)
        total = np.bincount(r.seg_of(rows), weights=prec, minlength=r.n_queries)
        r._cache["ap"] = ratio(total, r.num_rel)
    return r._cache["ap"]


def _map(r: Ranked, params: tuple) -> list[np.ndarray]:
    return [average_precision(r)]


def _gm_map(r: Ranked, params: tuple) -> list[np.ndarray]:
    return [np.log(np.maximum(average_precision(r), MIN_GEO_MEAN))]


def _map_cut(r: Ranked, cutoffs: tuple[int, ...]) -> list[np.ndarray]:
    rows, prec = _precision_at_rel(r)
    seg, pos = r.seg_of(rows), r.pos_of(rows)
    return [ratio(np.bincount(seg, weights=np.where(pos < k, prec, 0.0),
                              minlength=r.n_queries), r.num_rel)
            for k in cutoffs]


def _recip_rank(r: Ranked, params: tuple) -> list[np.ndarray]:
    first = r.first_pos(r.is_rel)
    return [ratio(np.where(first >= 0, 1.0, 0.0), first + 1.0)]


def bpref(r: Ranked) -> np.ndarray:
    """trec_eval's bpref per query."""
    if "bpref" in r._cache:
        return r._cache["bpref"]
    level = r.relevance_level
    judged_nonrel = (r.rel >= 0) & (r.rel < level)
    relevant = r.rel >= max(level, 0)
    nonrel_above = r.segment_cumsum(judged_nonrel.astype(np.int64))
    n_nonrel = r.rel_levels[:, :max(level, 0)].sum(axis=1)
    big_r = r.num_rel[r.seg]
    denom = np.minimum(n_nonrel, r.num_rel)[r.seg].astype(np.float64)
    num = np.minimum(nonrel_above, big_r).astype(np.float64)
    frac = np.divide(num, denom, out=np.zeros_like(num), where=denom > 0)
    contrib = np.where(relevant, np.where(nonrel_above > 0, 1.0 - frac, 1.0), 0.0)
    r._cache["bpref"] = ratio(r.segment_sum(contrib), r.num_rel)
    return r._cache["bpref"]


def _bpref(r: Ranked, params: tuple) -> list[np.ndarray]:
    return [bpref(r)]


def _gm_bpref(r: Ranked, params: tuple) -> list[np.ndarray]:
    return [np.log(np.maximum(bpref(r), MIN_GEO_MEAN))]


def _infAP(r: Ranked, params: tuple) -> list[np.ndarray]:
    level = r.relevance_level
    relevant = r.rel >= max(level, 0)
    judged_nonrel = (r.rel >= 0) & (r.rel < level)
    rel_so_far = r.segment_cumsum(relevant.astype(np.int64)).astype(np.float64)
    non = r.segment_cumsum(judged_nonrel.astype(np.int64)).astype(np.float64)
    unj = r.segment_cumsum((r.rel == UNJUDGED).astype(np.int64)).astype(np.float64)
    j = r.pos.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # same operation order as trec_eval so the rounding matches
        later = (j / (j + 1.0)) * ((rel_so_far - 1 + non + unj) / j) * (
            (rel_so_far - 1 + INFAP_EPSILON) / (rel_so_far - 1 + non + 2 * INFAP_EPSILON))
        term = 1.0 / (j + 1.0) + later
    contrib = np.where(relevant & (r.rel != NONPOOL), np.where(r.pos == 0, 1.0, term), 0.0)
    return [ratio(r.segment_sum(contrib), r.num_rel)]


register(TrecMeasure("map", 5, _map, doc="mean average precision"))
register(TrecMeasure("gm_map", 6, _gm_map, summary="gm", per_query=False,
                     doc="geometric mean of AP (floor 1e-5)"))
register(TrecMeasure("bpref", 8, _bpref, doc="binary preference"))
register(TrecMeasure("recip_rank", 9, _recip_rank, doc="reciprocal rank of the first relevant"))
register(TrecMeasure("infAP", 14, _infAP, doc="inferred AP"))
register(TrecMeasure("gm_bpref", 15, _gm_bpref, summary="gm", per_query=False,
                     doc="geometric mean of bpref (floor 1e-5)"))
register(TrecMeasure("map_cut", 27, _map_cut, params="cutoffs", defaults=CUTOFFS,
                     doc="AP over the top k, divided by R"))
