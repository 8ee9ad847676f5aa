"""Average precision and its relatives: map, gm_map, map_cut, recip_rank, RR@k, bpref,
gm_bpref, infAP.

Notation per query: ``R`` = num_rel, relevant retrieved documents at 1-based ranks
``r_1 < r_2 < ...`` (``r_j`` holds the j-th relevant document). All are vectorised over every
query at once; sums run left to right within a query as in trec_eval, so results agree with
it to the last bit in practice.
"""

from __future__ import annotations

import numpy as np

from onlineeval.offline.measures.base import (
    MIN_GEO_MEAN,
    Measure,
    per_cutoff,
    ratio,
    register,
    trec_eval_match,
    trec_eval_source,
)
from onlineeval.offline.measures.precision import CUTOFFS
from onlineeval.offline.measures.top_k import relevant, top
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


def reciprocal_rank(data: Ranked, k: int | None = None) -> np.ndarray:
    """RR@k = 1 / rank of the first relevant document within the top k, else 0."""
    first = data.first_pos(relevant(data) & top(data, k))
    return ratio(np.ones(len(first)), np.where(first >= 0, first + 1.0, 0.0))


_NOTATION = ("R = relevant judged documents; r_1 < r_2 < ... the 1-based ranks of the "
             "relevant retrieved documents.")
_GM = ("No per-query line in trec_eval's output (`evaluate` gives the per-query logarithm). "
       "The summary is exp(mean of the per-query values): the geometric mean with floor 1e-5.")

register(Measure(
    "map", 5, _map, aliases=("AP", "MAP"),
    title="average precision (its mean over queries: MAP)",
    formula=f"AP = Σ_j (j / r_j) / R. {_NOTATION}",
    edge_cases="0 when nothing relevant is retrieved or R = 0.",
    citation=trec_eval_source("m_map.c", "Voorhees & Harman (2005), TREC: Experiment and "
                              "Evaluation in Information Retrieval, MIT Press"),
    matches=trec_eval_match()))
register(Measure(
    "gm_map", 6, _gm_map, summary="gm", per_query=False,
    title="geometric mean of AP",
    formula="Per query log(max(AP, 0.00001)).",
    edge_cases=_GM,
    citation=trec_eval_source("m_gm_map.c", "Robertson (2006), On GMAP: and other "
                              "transformations, CIKM"),
    matches=trec_eval_match()))
register(Measure(
    "bpref", 8, _bpref,
    title="binary preference",
    formula="Only judged documents count (not in the qrels or a negative grade: skipped). "
            "With N = judged documents with 0 <= grade < level and m = judged non-relevant "
            "documents above a relevant retrieved one, each relevant retrieved document adds "
            "1 − min(m, R) / min(N, R) (1 when m = 0); the sum is divided by R.",
    edge_cases="0 when R = 0.",
    citation=trec_eval_source("m_bpref.c", "Buckley & Voorhees (2004), Retrieval evaluation "
                              "with incomplete information, SIGIR"),
    matches=trec_eval_match(note="Equals ranx's bpref when audited "
                                 "(tests/offline/test_audit.py)")))
register(Measure(
    "recip_rank", 9, _recip_rank, aliases=("RR", "MRR"),
    title="reciprocal rank of the first relevant document (its mean: MRR)",
    formula=f"1 / r_1. {_NOTATION}",
    edge_cases="0 when nothing relevant is retrieved.",
    citation=trec_eval_source("m_recip_rank.c", "Voorhees (1999), The TREC-8 question "
                              "answering track report, TREC"),
    matches=trec_eval_match()))
register(Measure(
    "infAP", 14, _infAP,
    title="inferred AP",
    formula="For the relevant document at 0-based position j with rel relevant (itself "
            "included), non judged non-relevant and unj negative-grade documents at "
            "positions < j: 1 if j = 0, else 1/(j+1) + j/(j+1) · ((rel−1+non+unj)/j) · "
            "((rel−1+ε)/(rel−1+non+2ε)) with ε = 0.00001; summed over relevant retrieved "
            "documents and divided by R. Documents not in the qrels count nowhere.",
    edge_cases="0 when R = 0.",
    citation=trec_eval_source("m_infap.c", "Yilmaz & Aslam (2006), Estimating average "
                              "precision with incomplete and imperfect judgments, CIKM"),
    matches=trec_eval_match()))
register(Measure(
    "gm_bpref", 15, _gm_bpref, summary="gm", per_query=False,
    title="geometric mean of bpref",
    formula="Per query log(max(bpref, 0.00001)).",
    edge_cases=_GM,
    citation=trec_eval_source("m_gm_bpref.c"),
    matches=trec_eval_match()))
register(Measure(
    "map_cut", 27, _map_cut, params="cutoffs", defaults=CUTOFFS, aliases=("AP@", "MAP@"),
    param_doc="cutoffs k (default 5,10,15,20,30,100,200,500,1000)",
    title="AP over the top k, divided by R (as BEIR's AP@k)",
    formula=f"Σ_(j: r_j <= k) (j / r_j) / R — the divisor is R, not min(k, R). {_NOTATION}",
    edge_cases="0 when R = 0.",
    citation=trec_eval_source("m_map_cut.c"),
    matches=trec_eval_match()))
register(Measure(
    "RR_cut", 1_004, per_cutoff(reciprocal_rank), params="at", stem="RR", cutoff="required",
    aliases=("RR@", "MRR@"),
    param_doc="cutoff k (required): `RR@10`, also spelt `MRR@10`; trec_eval syntax `RR_cut.10`",
    title="reciprocal rank within the top k (its mean: MRR@k)",
    formula="1 / rank of the first relevant document among the first k, else 0.",
    edge_cases="0 when no relevant document is in the top k (including R = 0). Without a "
               "cutoff it would be trec_eval's recip_rank: use `RR`.",
    citation="Voorhees (1999), The TREC-8 question answering track report, TREC (with a "
             "rank cutoff, as MS MARCO's MRR@10)",
    matches="An independent per-query implementation on random adversarial collections "
            "(tests/offline/test_audit.py); equals ranx's mrr@k and ir_measures' RR@k on "
            "runs without score ties (audited on trec_eval's test collection)."))
