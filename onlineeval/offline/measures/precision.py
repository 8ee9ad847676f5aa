"""Precision, recall and set measures at rank cutoffs.

Notation per query: ``R`` = num_rel (judged grade >= relevance level), ``n`` = num_ret,
``rel@k`` = relevant documents among the first ``min(k, n)`` retrieved, ``Rr`` = rel@n.
Missing positions beyond ``n`` count as non-relevant (and judged). "0 when ..." cases are
where trec_eval leaves the value at 0.

========================  ==================================================  ===============
measure (trec_eval file)  per-query value                                     defaults
========================  ==================================================  ===============
P_k (m_P.c)               rel@k / k                                           5,10,15,20,30,
                                                                              100,200,500,1000
relative_P_k (m_rel_P.c)  rel@k / min(k, R); 0 when R = 0                     as P
success_k (m_success.c)   1 if rel@k > 0 else 0                               1,5,10
recall_k (m_recall.c)     rel@k / R; 0 when R = 0                             as P
Rprec (m_Rprec.c)         rel@min(n, R) / R; 0 when R = 0                     -
Rprec_mult_x              P at c = trunc(x*R + 0.9): rel@c / c; 0 when c = 0  0.2,0.4,...,2.0
(m_Rprec_mult.c)
unj_k (m_unj.c)           (not in qrels or negative grade in top k) / k        5,10,20
set_P (m_set_P.c)         Rr / n                                              -
set_recall                Rr / R; 0 when R = 0                                -
set_relative_P            Rr / min(n, R); 0 when R = 0                        -
set_map                   Rr² / (n·R); 0 when R = 0                           -
set_F (m_set_F.c)         (x+1)·P·Rc / (x·P + Rc), P = Rr/n, Rc = Rr/R;       x = 1.0
                          0 when Rr = 0
utility (m_utility.c)     a·Rr + b·(n−Rr) + c·(R−Rr) + d·(N + Rr − n − R),    1,-1,0,0
                          N = documents in the collection, taken as 0 (trec_eval's default
                          without -N)
========================  ==================================================  ===============

Matches trec_eval 10.0 (the files named above).
"""

from __future__ import annotations

import numpy as np

from onlineeval.errors import InvalidParameterError
from onlineeval.offline.measures.base import TrecMeasure, ratio, register
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


register(TrecMeasure("Rprec", 7, _Rprec, doc="precision after R documents"))
register(TrecMeasure("P", 11, _P, params="cutoffs", defaults=CUTOFFS,
                     doc="precision at cutoffs"))
register(TrecMeasure("recall", 13, _recall, params="cutoffs", defaults=CUTOFFS,
                     doc="recall at cutoffs"))
register(TrecMeasure("Rprec_mult", 16, _Rprec_mult, params="float_cutoffs",
                     defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
                     doc="precision at multiples of R"))
register(TrecMeasure("utility", 17, _utility, params="floats", defaults=(1.0, -1.0, 0.0, 0.0),
                     doc="set utility a·relret + b·nonrelret + c·relmissed + d·nonrelmissed"))
register(TrecMeasure("relative_P", 28, _relative_P, params="cutoffs", defaults=CUTOFFS,
                     doc="rel@k / min(k, R)"))
register(TrecMeasure("success", 29, _success, params="cutoffs", defaults=(1, 5, 10),
                     doc="a relevant document in the top k"))
register(TrecMeasure("set_P", 30, _set_P, doc="precision of the retrieved set"))
register(TrecMeasure("set_relative_P", 31, _set_relative_P,
                     doc="relevant retrieved / min(retrieved, R)"))
register(TrecMeasure("set_recall", 32, _set_recall, doc="recall of the retrieved set"))
register(TrecMeasure("set_map", 33, _set_map, doc="set precision × set recall"))
register(TrecMeasure("set_F", 34, _set_F, params="floats", defaults=(1.0,),
                     doc="F measure of the retrieved set"))
register(TrecMeasure("unj", 62, _unj, params="cutoffs", defaults=(5, 10, 20),
                     doc="share of unjudged documents in the top k"))
