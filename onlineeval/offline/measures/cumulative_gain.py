"""Cumulated gain at k, unnormalised and normalised: CG, DCG, DCG_exp, nDCG_exp.

Linear gain is the grade (trec_eval's ndcg), exponential gain ``2^grade - 1`` (Burges et al.);
DCG@k with linear gain is the numerator of trec_eval's ndcg_cut. Conventions shared by the
measures beyond trec_eval: :data:`~onlineeval.offline.measures.top_k.CONVENTIONS`.
"""

from __future__ import annotations

import numpy as np

from onlineeval.offline.measures.base import Measure, per_cutoff, ratio, register
from onlineeval.offline.measures.top_k import check_cutoff, discount, gain, masked_sum, top
from onlineeval.offline.ranking import Ranked


def cg(data: Ranked, k: int | None = None) -> np.ndarray:
    """CG@k, cumulated gain: ``Σ_{r<=k} g_r`` with linear gain."""
    return masked_sum(data, top(data, k), gain(data.rel, False))


def dcg(data: Ranked, k: int | None = None, exponential: bool = False) -> np.ndarray:
    """DCG@k = ``Σ_{r<=k} gain(g_r) / log2(r + 1)``, linear or exponential gain."""
    return masked_sum(data, top(data, k), gain(data.rel, exponential) * discount(data.pos))


def ideal_dcg(data: Ranked, k: int | None = None, exponential: bool = False) -> np.ndarray:
    """DCG@k of the ideal ranking: the query's judged positive grades, highest first."""
    check_cutoff(k)
    levels = data.rel_levels[:, 1:]  # grades 1..G-1; grade 0 adds nothing
    n_q, n_g = levels.shape
    if n_g == 0:
        return np.zeros(n_q)
    # the ideal list of each query, grade G-1 repeated, then G-2, ... (CSR)
    counts = levels[:, ::-1]
    grades = np.arange(n_g, 0, -1)
    per_row = counts.ravel()
    qi = np.repeat(np.repeat(np.arange(n_q), n_g), per_row)
    g = np.repeat(np.tile(grades, n_q), per_row)
    lengths = counts.sum(axis=1)
    starts = np.concatenate(([0], np.cumsum(lengths)))[:-1]
    pos = np.arange(len(g)) - np.repeat(starts, lengths)
    keep = np.ones(len(g), dtype=bool) if k is None else pos < k
    vals = gain(g[keep], exponential) * discount(pos[keep])
    return np.bincount(qi[keep], weights=vals, minlength=n_q).astype(np.float64)


def ndcg_exp(data: Ranked, k: int | None = None) -> np.ndarray:
    """nDCG_exp@k = DCG_exp@k / IDCG_exp@k with gain ``2^g - 1``."""
    return ratio(dcg(data, k, exponential=True), ideal_dcg(data, k, exponential=True))


_JK = ("Järvelin & Kekäläinen (2002), Cumulated gain-based evaluation of IR techniques, "
       "ACM TOIS 20(4)")
_BURGES = ("Burges et al. (2005), Learning to rank using gradient descent, ICML (the "
           "exponential gain)")
_AUDIT = ("An independent per-query implementation on random adversarial collections "
          "(tests/offline/test_audit.py)")
_CUTOFF = "cutoff k, optional (`{stem}@10`; without it the whole ranking)"
_NO_GAIN = "0 when no retrieved document in the top k has a positive grade."

register(Measure(
    "CG", 1_000, per_cutoff(cg), params="at", param_doc=_CUTOFF.format(stem="CG"),
    title="cumulated gain at k (linear gain)",
    formula="Σ_(r <= k) g_r with g the grade (unjudged and negative grades: 0).",
    edge_cases=_NO_GAIN,
    citation=_JK,
    matches=_AUDIT + "."))
register(Measure(
    "DCG", 1_001, per_cutoff(lambda d, k: dcg(d, k, False)), params="at",
    param_doc=_CUTOFF.format(stem="DCG"),
    title="discounted cumulated gain at k (linear gain), unnormalised",
    formula="Σ_(r <= k) g_r / log2(r + 1): the numerator of trec_eval's ndcg_cut. Not "
            "bounded by 1.",
    edge_cases=_NO_GAIN,
    citation=_JK,
    matches=_AUDIT + "; equals ranx's dcg@k on runs without score ties (audited on "
                     "trec_eval's test collection)."))
register(Measure(
    "DCG_exp", 1_002, per_cutoff(lambda d, k: dcg(d, k, True)), params="at",
    param_doc=_CUTOFF.format(stem="DCG_exp"),
    title="discounted cumulated gain at k (exponential gain), unnormalised",
    formula="Σ_(r <= k) (2^g_r − 1) / log2(r + 1).",
    edge_cases=_NO_GAIN,
    citation=f"{_JK}; {_BURGES}",
    matches=_AUDIT + "; equals ranx's dcg_burges@k on runs without score ties."))
register(Measure(
    "nDCG_exp", 1_003, per_cutoff(ndcg_exp), params="at",
    param_doc=_CUTOFF.format(stem="nDCG_exp"),
    title="normalised DCG at k with exponential gain",
    formula="DCG_exp@k / IDCG_exp@k, the ideal ranking listing the query's judged grades in "
            "descending order, cut at k (as trec_eval's ndcg_cut builds its ideal).",
    edge_cases="0 when the query has no positive grade (IDCG = 0), as trec_eval's ndcg. "
               "Negative grades have gain 0, as in ranx.",
    citation=f"{_JK}; {_BURGES}",
    matches=_AUDIT + "; equals ranx's ndcg_burges@k and ir_measures' "
                     "nDCG(gains={g: 2^g − 1})@k on runs without score ties (ranx orders "
                     "tied documents differently)."))
