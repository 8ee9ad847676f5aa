"""Rank-biased precision (Moffat & Zobel 2008): rbp and rbp_resid; and relstring."""

from __future__ import annotations

import numpy as np

from onlineeval.offline.measures.base import (
    Measure,
    register,
    trec_eval_match,
    trec_eval_source,
)
from onlineeval.offline.measures.gains import gain_of_levels, pair_gains
from onlineeval.offline.ranking import NONPOOL, UNJUDGED, Ranked


def _persistence(pairs: tuple) -> float:
    p = 0.9
    for key, value in pairs:
        if key == "p":
            p = float(value)
    return p


def _powers(r: Ranked, p: float) -> np.ndarray:
    depth = int(r.num_ret.max()) if r.n_queries else 0
    steps = np.full(depth + 1, p)
    steps[0] = 1.0
    return np.cumprod(steps)  # [1, p, p*p, ...] multiplied left to right


def _rbp(r: Ranked, pairs: tuple) -> list[np.ndarray]:
    p = _persistence(pairs)
    overrides = pair_gains(pairs)
    table = gain_of_levels(r, overrides)
    judged = r.rel_levels > 0
    n_levels = np.where(judged.any(axis=1),
                        r.rel_levels.shape[1] - np.argmax(judged[:, ::-1], axis=1), 0)
    # per-query lo/hi over the gains of grades 0..n_levels-1 and of the override grades
    lo = np.zeros(r.n_queries)
    hi = np.zeros(r.n_queries)
    for level in range(r.rel_levels.shape[1]):
        present = level < n_levels
        lo = np.where(present, np.minimum(lo, table[level]), lo)
        hi = np.where(present, np.maximum(hi, table[level]), hi)
    for gain in overrides.values():
        lo, hi = np.minimum(lo, gain), np.maximum(hi, gain)
    row_gain = np.where(r.rel >= 0, table[np.maximum(r.rel, 0)], 0.0)
    for level, gain in overrides.items():
        if level < 0:
            row_gain = np.where(r.rel == level, gain, row_gain)
    rescale = (lo < 0) | (hi > 1)
    lo_r, hi_r, sc_r = lo[r.seg], hi[r.seg], rescale[r.seg]
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(sc_r, (row_gain - lo_r) / (hi_r - lo_r), row_gain)
    # a document without a gain entry (not judged) keeps gain 0 even after rescaling
    scaled = np.where((r.rel < 0) & ~np.isin(r.rel, list(overrides)), 0.0, scaled)
    weights = _powers(r, p)[r.pos]
    total = r.segment_sum(np.where(scaled != 0, scaled * weights, 0.0))
    return [(1.0 - p) * total]


def _rbp_resid(r: Ranked, pairs: tuple) -> list[np.ndarray]:
    p = _persistence(pairs)
    powers = _powers(r, p)
    unjudged = r.rel < 0
    total = r.segment_sum(np.where(unjudged, powers[r.pos], 0.0))
    any_unj = r.segment_sum(unjudged.astype(np.int64)) > 0
    return [np.where(any_unj, powers[r.num_ret] + (1 - p) * total, 0.0)]


_CHARS = {NONPOOL: "-", UNJUDGED: "."}


def _relstring(r: Ranked, params: tuple[float, ...]) -> list[np.ndarray]:
    length = max(int(params[0]), 0)
    out = np.empty(r.n_queries, dtype=object)
    for q in range(r.n_queries):
        rels = r.query_rels(q)[:length].tolist()
        out[q] = "".join(
            ">" if g > 9 else str(g) if g >= 0 else _CHARS.get(g, "<") for g in rels
        )
    return [out]


_MZ = ("Moffat & Zobel (2008), Rank-biased precision for measurement of retrieval "
       "effectiveness, ACM TOIS 27(1)")
_PAIRS = ("`p=persistence` (default 0.9) and `grade=gain` pairs (default gain = grade), e.g. "
          "`rbp.p=0.8,2=4`")
_NEW_IN_10 = "pytrec_eval (trec_eval 9) lacks it"

register(Measure(
    "relstring", 12, _relstring, params="floats", defaults=(10.0,), summary="none",
    value_format="string", missing_reset="default",
    param_doc="N, the number of documents shown (default 10)",
    title="grades of the first N retrieved documents, as text",
    formula="One character per document: the grade 0-9, `>` above 9, `-` not in the qrels, "
            "`.` a negative grade.",
    edge_cases="Per query only (no summary line). Under -c a query missing from the run "
               "gets '' with the default N.",
    citation=trec_eval_source("m_relstring.c"),
    matches=trec_eval_match(pytrec=False, note="Text: not compared with pytrec_eval")))
register(Measure(
    "rbp", 60, _rbp, params="pairs", param_doc=_PAIRS,
    title="rank-biased precision",
    formula="(1 − p) Σ_i gain_i · p^i over the retrieved documents (0-based position i; p^i "
            "by repeated multiplication, as trec_eval). When a gain of the query's grades "
            "lies outside [0, 1] the gains are rescaled per query to (gain − lo) / (hi − lo), "
            "lo = min(0, gains), hi = max(0, gains) over the grades 0..max judged for it.",
    edge_cases="trec_eval starts its min/max from uninitialised variables; we start from 0, "
               "which reproduces its published outputs.",
    citation=trec_eval_source("m_rbp.c", _MZ),
    matches=trec_eval_match(pytrec=False, note=_NEW_IN_10)))
register(Measure(
    "rbp_resid", 61, _rbp_resid, params="pairs", param_doc=_PAIRS, missing_reset="default",
    title="rank-biased precision residual",
    formula="The most RBP could still rise: p^n + (1 − p) Σ p^i over the retrieved documents "
            "that are not in the qrels or have a negative grade.",
    edge_cases="0 when there are none (trec_eval's rule, even though p^n remains); under -c "
               "a query missing from the run gets 0 with the default parameters.",
    citation=trec_eval_source("m_rbp_resid.c", _MZ),
    matches=trec_eval_match(pytrec=False, note=_NEW_IN_10)))
