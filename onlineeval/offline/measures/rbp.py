"""Rank-biased precision (Moffat & Zobel 2008): rbp and rbp_resid; and relstring.

Matches trec_eval 10.0 ``m_rbp.c``, ``m_rbp_resid.c``, ``m_relstring.c``.

- ``rbp``: (1 − p) Σ_i gain_i · p^i over the retrieved documents (0-based position i),
  persistence p = 0.9 unless ``rbp.p=0.8``. Gains are the grades (or ``grade=gain`` pairs), and
  when any gain of the query's grades lies outside [0, 1] they are rescaled per query to
  (gain − lo) / (hi − lo) with lo = min(0, gains), hi = max(0, gains) over the grades 0..max
  judged of that query (trec_eval starts its min/max from uninitialised variables; we start
  from 0, which reproduces its published outputs). p^i is built by repeated multiplication,
  as trec_eval does.
- ``rbp_resid``: the residual — the most RBP could still rise: p^n + (1 − p) Σ p^i over
  retrieved documents that are not in the qrels or have a negative grade; 0 when there are
  none (trec_eval's rule, even though p^n remains).
- ``relstring``: the grades of the first N (default 10) retrieved documents as a string
  ('0'–'9', '>' above 9, '-' not in the qrels, '.' negative grade); per query only.
"""

from __future__ import annotations

import numpy as np

from onlineeval.offline.measures.base import TrecMeasure, register
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


register(TrecMeasure("relstring", 12, _relstring, params="floats", defaults=(10.0,),
                     summary="none", value_format="string",
                     doc="grades of the first N retrieved documents"))
register(TrecMeasure("rbp", 60, _rbp, params="pairs", doc="rank-biased precision"))
register(TrecMeasure("rbp_resid", 61, _rbp_resid, params="pairs",
                     doc="rank-biased precision residual"))
