"""Measures that count documents of a kind in the top k: R_cap, F, fallout, judged, Best.

Conventions shared by the measures beyond trec_eval:
:data:`~onlineeval.offline.measures.top_k.CONVENTIONS`.
"""

from __future__ import annotations

import numpy as np

from onlineeval.errors import InvalidParameterError
from onlineeval.offline.measures.base import Measure, Option, per_cutoff, ratio, register
from onlineeval.offline.measures.top_k import masked_sum, max_judged_grade, relevant, top
from onlineeval.offline.ranking import Ranked


def recall_capped(data: Ranked, k: int) -> np.ndarray:
    """R_cap@k = relevant in the top k / min(k, |R|); 0 if |R| = 0."""
    hits = masked_sum(data, top(data, k), relevant(data).astype(np.float64))
    return ratio(hits, np.minimum(float(k), data.num_rel.astype(np.float64)))


def best(data: Ranked, k: int | None = None) -> np.ndarray:
    """Best@k = 1 if a document of the query's highest judged grade is in the top k."""
    mask = top(data, k)
    relevant(data)
    highest = max_judged_grade(data)
    hit = mask & (data.rel == highest[data.seg]) & (data.rel >= 0)
    found = np.bincount(data.seg[hit], minlength=data.n_queries) > 0
    return (found & (highest >= data.relevance_level) & (data.num_rel > 0)).astype(np.float64)


def fallout(data: Ranked, k: int | None = None) -> np.ndarray:
    """fallout@k = judged non-relevant in the top k / judged non-relevant in the qrels."""
    mask = top(data, k)
    nonrel = (data.rel >= 0) & ~relevant(data)
    num = masked_sum(data, mask, nonrel.astype(np.float64))
    lvl = min(max(data.relevance_level, 0), data.rel_levels.shape[1])
    den = data.rel_levels[:, :lvl].sum(axis=1).astype(np.float64)
    return ratio(num, den)


def judged(data: Ranked, k: int) -> np.ndarray:
    """judged@k = documents in the top k judged with a grade >= 0, divided by k."""
    return masked_sum(data, top(data, k), (data.rel >= 0).astype(np.float64)) / float(k)


def _positive_beta(beta: float) -> str | None:
    if not (np.isfinite(beta) and beta > 0):
        return f"F's beta must be a positive number; got {beta!r}"
    return None


def f_measure(data: Ranked, k: int, beta: float = 1.0) -> np.ndarray:
    """F_β@k = (1 + β²) rel_k / (β² |R| + k)."""
    beta = float(beta)
    problem = _positive_beta(beta)
    if problem:
        raise InvalidParameterError(problem)
    hits = masked_sum(data, top(data, k), relevant(data).astype(np.float64))
    b2 = beta * beta
    return (1.0 + b2) * hits / (b2 * data.num_rel.astype(np.float64) + float(k))


_AUDIT = ("An independent per-query implementation on random adversarial collections "
          "(tests/offline/test_audit.py)")
_REQUIRED = "cutoff k, required (`{stem}@10`)"

register(Measure(
    "R_cap", 1_006, per_cutoff(recall_capped), params="at", cutoff="required",
    aliases=("Rcap", "recall_cap"), param_doc=_REQUIRED.format(stem="R_cap"),
    title="capped recall at k (BEIR)",
    formula="(relevant documents in the top k) / min(k, R).",
    edge_cases="0 when R = 0.",
    citation="Thakur et al. (2021), BEIR: a heterogeneous benchmark for zero-shot evaluation "
             "of information retrieval models, NeurIPS Datasets and Benchmarks",
    matches=_AUDIT + "."))
register(Measure(
    "F", 1_007, per_cutoff(f_measure), params="at", cutoff="required",
    options=(Option("beta", 1.0, "the weight of recall against precision (β)",
                    check=_positive_beta),),
    name_option="beta", aliases=("F1@", "F@"),
    param_doc="cutoff k, required; β in the name or as an option: `F@10` = `F1@10`, "
              "`F0.5@10` = `F@10(beta=0.5)`",
    title="F_β measure at k",
    formula="(1 + β²) P@k R@k / (β² P@k + R@k) = (1 + β²) rel_k / (β² R + k), with P@k = "
            "rel_k / k (trec_eval's P) and R@k = rel_k / R (trec_eval's recall).",
    edge_cases="0 when no relevant document is in the top k (including R = 0).",
    citation="van Rijsbergen (1979), Information Retrieval, 2nd ed., ch. 7",
    matches=_AUDIT + "; F1@k equals ranx's f1@k on runs without score ties (ranx also "
                     "divides P@k by k)."))
register(Measure(
    "fallout", 1_008, per_cutoff(fallout), params="at",
    param_doc="cutoff k, optional (`fallout@10`; without it the whole ranking)",
    title="fallout at k",
    formula="(judged non-relevant documents in the top k) / (judged non-relevant documents "
            "in the qrels); judged non-relevant: 0 <= grade < the relevance level.",
    edge_cases="0 when the query has no judged non-relevant document. Does not depend on the "
               "relevant documents.",
    citation="van Rijsbergen (1979), Information Retrieval, 2nd ed., ch. 7",
    matches=_AUDIT + "."))
register(Measure(
    "judged", 1_009, per_cutoff(judged), params="at", cutoff="required",
    param_doc=_REQUIRED.format(stem="judged"),
    title="share of the top k that is judged",
    formula="(documents in the top k judged with a grade >= 0) / k.",
    edge_cases="Divides by k even when fewer than k documents were retrieved (as P@k), so a "
               "short list counts its missing positions as unjudged; a qrels line with a "
               "negative grade is not a judgment (trec_eval's reading). No paper fixes the "
               "short-list case; we keep P@k's rule so judged@k and P@k share a denominator.",
    citation="MacAvaney (2020), OpenNIR: a complete neural ad-hoc ranking pipeline, "
             "WSDM (Judged@k)",
    matches=_AUDIT + "; ir_measures' Judged@k (from OpenNIR) divides by min(k, retrieved) and "
                     "counts any qrels line as judged, so the two agree only when at least k "
                     "documents are retrieved and no grade is negative."))
register(Measure(
    "Best", 1_010, per_cutoff(best), params="at",
    param_doc="cutoff k, optional (`Best@10`; without it the whole ranking)",
    title="the best judged document is in the top k",
    formula="1 if a document of the query's highest judged grade is in the top k, else 0.",
    edge_cases="0 when that grade is below the relevance level (the query has no relevant "
               "document).",
    citation="onlineeval's own definition (no standard reference)",
    matches=_AUDIT + "."))
