"""Precision, recall and set measures at rank cutoffs (trec_eval's m_P.c, m_recall.c, ...).

Notation per query: ``R`` = num_rel (judged grade >= relevance level), ``n`` = num_ret,
``rel@k`` = relevant documents among the first ``min(k, n)`` retrieved, ``Rr`` = rel@n.
Missing positions beyond ``n`` count as non-relevant (and judged).
"""

from __future__ import annotations

import numpy as np

from onlineeval.errors import InvalidParameterError
from onlineeval.offline.measures.base import (
    Measure,
    ratio,
    register,
    trec_eval_match,
    trec_eval_source,
)
from onlineeval.offline.ranking import Ranked

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def rel_at(r: Ranked, k: int | np.ndarray) -> np.ndarray:
    """Relevant documents among the first ``k`` retrieved, per query."""
    if r.width is not None and np.ndim(k) == 0 and "cum_rel" not in r.__dict__:
        # every query has width rows: count the first k columns (no running sum built)
        kk = min(max(int(k), 0), r.width)
        return np.count_nonzero(r.is_rel.reshape(-1, r.width)[:, :kk], axis=1).astype(np.int64)
    return r.at_cutoff(r.cum_rel, k)


def _P(r: Ranked, cutoffs: tuple[int, ...]) -> list[np.ndarray]:
    return [rel_at(r, k) / float(k) for k in cutoffs]


def _relative_P(r: Ranked, cutoffs: tuple[int, ...]) -> list[np.ndarray]:
    return [ratio(rel_at(r, k), np.minimum(k, r.num_rel)) for k in cutoffs]


def _success(r: Ranked, cutoffs: tuple[int, ...]) -> list[np.ndarray]:
    return [(rel_at(r, k) > 0).astype(np.float64) for k in cutoffs]


def _recall(r: Ranked, cutoffs: tuple[int, ...]) -> list[np.ndarray]:
    return [ratio(rel_at(r, k), r.num_rel) for k in cutoffs]


def _Rprec(r: Ranked, params: tuple) -> list[np.ndarray]:
    return [ratio(rel_at(r, np.minimum(r.num_ret, r.num_rel)), r.num_rel)]


def _Rprec_mult(r: Ranked, multiples: tuple[float, ...]) -> list[np.ndarray]:
    out = []
    for x in multiples:
        c = np.trunc(x * r.num_rel.astype(np.float64) + 0.9).astype(np.int64)
        out.append(ratio(rel_at(r, c), c))
    return out


def _unj(r: Ranked, cutoffs: tuple[int, ...]) -> list[np.ndarray]:
    cum_unj = r.segment_cumsum((r.rel < 0).astype(np.int64))
    return [r.at_cutoff(cum_unj, k) / float(k) for k in cutoffs]


def _set_P(r: Ranked, params: tuple) -> list[np.ndarray]:
    return [ratio(r.num_rel_ret, r.num_ret)]


def _set_recall(r: Ranked, params: tuple) -> list[np.ndarray]:
    return [ratio(r.num_rel_ret, r.num_rel)]


def _set_relative_P(r: Ranked, params: tuple) -> list[np.ndarray]:
    return [ratio(r.num_rel_ret, np.minimum(r.num_ret, r.num_rel))]


def _set_map(r: Ranked, params: tuple) -> list[np.ndarray]:
    rr = r.num_rel_ret.astype(np.float64)
    return [ratio(rr * rr, r.num_ret.astype(np.float64) * r.num_rel.astype(np.float64))]


def _set_F(r: Ranked, params: tuple[float, ...]) -> list[np.ndarray]:
    x = params[0]
    p = ratio(r.num_rel_ret, r.num_ret)
    rc = ratio(r.num_rel_ret, r.num_rel)
    return [np.where(r.num_rel_ret > 0, ratio((x + 1.0) * p * rc, x * p + rc), 0.0)]


def _utility(r: Ranked, params: tuple[float, ...]) -> list[np.ndarray]:
    if len(params) != 4:
        raise InvalidParameterError(
            f"utility needs 4 coefficients a,b,c,d (e.g. utility.1,-1,0,0); got {len(params)}"
        )
    a, b, c, d = params
    rr = r.num_rel_ret.astype(np.float64)
    n = r.num_ret.astype(np.float64)
    big_r = r.num_rel.astype(np.float64)
    n_coll = 0.0
    return [a * rr + b * (n - rr) + c * (big_r - rr) + d * (n_coll + rr - n - big_r)]


_NOTATION = ("R = relevant judged documents, n = documents retrieved, rel@k = relevant "
             "documents among the first min(k, n) retrieved, Rr = rel@n.")
_ZERO_R = "0 when R = 0 (no relevant document judged)."

register(Measure(
    "Rprec", 7, _Rprec, aliases=("R-prec", "R_prec", "Rprecision"),
    title="precision after R documents (R-precision)",
    formula=f"rel@min(n, R) / R. {_NOTATION}",
    edge_cases=_ZERO_R,
    citation=trec_eval_source("m_Rprec.c"),
    matches=trec_eval_match(note="Equals ranx's r-precision on tie-free runs "
                                 "(tests/offline/test_audit.py notes)")))
register(Measure(
    "P", 11, _P, params="cutoffs", defaults=CUTOFFS, aliases=("P@", "precision", "precision@"),
    param_doc="cutoffs k (default 5,10,15,20,30,100,200,500,1000)",
    title="precision at cutoffs",
    formula=f"P_k = rel@k / k. {_NOTATION}",
    edge_cases="Divides by k even when fewer than k documents are retrieved (the missing "
               "positions count as non-relevant).",
    citation=trec_eval_source("m_P.c"),
    matches=trec_eval_match()))
register(Measure(
    "recall", 13, _recall, params="cutoffs", defaults=CUTOFFS, aliases=("R@", "recall@"),
    param_doc="cutoffs k (default as P)",
    title="recall at cutoffs",
    formula=f"recall_k = rel@k / R. {_NOTATION}",
    edge_cases=_ZERO_R,
    citation=trec_eval_source("m_recall.c"),
    matches=trec_eval_match()))
register(Measure(
    "Rprec_mult", 16, _Rprec_mult, params="float_cutoffs",
    defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    param_doc="multiples x of R (default 0.2,0.4,...,2.0); values named with two decimals",
    title="precision at multiples of R",
    formula=f"With c = trunc(x·R + 0.9): rel@c / c. {_NOTATION}",
    edge_cases="0 when c = 0 (R = 0).",
    citation=trec_eval_source("m_Rprec_mult.c"),
    matches=trec_eval_match()))
register(Measure(
    "utility", 17, _utility, params="floats", defaults=(1.0, -1.0, 0.0, 0.0),
    missing_reset="default",
    param_doc="four coefficients a,b,c,d (default 1,-1,0,0)",
    title="set utility",
    formula="a·Rr + b·(n − Rr) + c·(R − Rr) + d·(N + Rr − n − R), with N the number of "
            "documents in the collection, taken as 0 (trec_eval's default without -N).",
    edge_cases="Under -c a query missing from the run gets 0 when the coefficients are the "
               "defaults (trec_eval resets the value named `utility` only).",
    citation=trec_eval_source("m_utility.c"),
    matches=trec_eval_match()))
register(Measure(
    "relative_P", 28, _relative_P, params="cutoffs", defaults=CUTOFFS,
    param_doc="cutoffs k (default as P)",
    title="precision relative to the best possible at k",
    formula=f"rel@k / min(k, R). {_NOTATION}",
    edge_cases=_ZERO_R,
    citation=trec_eval_source("m_rel_P.c"),
    matches=trec_eval_match()))
register(Measure(
    "success", 29, _success, params="cutoffs", defaults=(1, 5, 10), aliases=("success@",),
    param_doc="cutoffs k (default 1,5,10)",
    title="a relevant document in the top k",
    formula=f"1 if rel@k > 0 else 0. {_NOTATION}",
    edge_cases="0 for a query without relevant documents.",
    citation=trec_eval_source("m_success.c"),
    matches=trec_eval_match()))
register(Measure(
    "set_P", 30, _set_P,
    title="precision of the retrieved set",
    formula=f"Rr / n. {_NOTATION}",
    edge_cases="0 when nothing is retrieved (-M 0).",
    citation=trec_eval_source("m_set_P.c"),
    matches=trec_eval_match()))
register(Measure(
    "set_relative_P", 31, _set_relative_P,
    title="relevant retrieved over the best possible for the set size",
    formula=f"Rr / min(n, R). {_NOTATION}",
    edge_cases=_ZERO_R,
    citation=trec_eval_source("m_set_rel_P.c"),
    matches=trec_eval_match()))
register(Measure(
    "set_recall", 32, _set_recall,
    title="recall of the retrieved set",
    formula=f"Rr / R. {_NOTATION}",
    edge_cases=_ZERO_R,
    citation=trec_eval_source("m_set_recall.c"),
    matches=trec_eval_match()))
register(Measure(
    "set_map", 33, _set_map,
    title="set precision times set recall",
    formula=f"Rr² / (n·R). {_NOTATION}",
    edge_cases="0 when R = 0 or n = 0.",
    citation=trec_eval_source("m_set_map.c"),
    matches=trec_eval_match()))
register(Measure(
    "set_F", 34, _set_F, params="floats", defaults=(1.0,),
    param_doc="the weight x (default 1.0; x = β²)",
    title="F measure of the retrieved set",
    formula=f"(x + 1)·P·Rc / (x·P + Rc) with P = Rr / n, Rc = Rr / R. {_NOTATION}",
    edge_cases="0 when Rr = 0.",
    citation=trec_eval_source("m_set_F.c", "van Rijsbergen (1979), Information Retrieval, "
                              "2nd ed., ch. 7"),
    matches=trec_eval_match()))
register(Measure(
    "unj", 62, _unj, params="cutoffs", defaults=(5, 10, 20), missing_reset="all",
    param_doc="cutoffs k (default 5,10,20)",
    title="share of unjudged documents in the top k",
    formula="(documents in the top k that are not in the qrels or have a negative grade) / k.",
    edge_cases="Divides by k even when fewer than k are retrieved. Under -c a query missing "
               "from the run gets 0.",
    citation=trec_eval_source("m_unjudged.c"),
    matches=trec_eval_match(pytrec=False, note="pytrec_eval (trec_eval 9) lacks it")))
