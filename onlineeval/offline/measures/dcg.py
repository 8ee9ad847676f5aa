"""Discounted-gain measures of trec_eval: ndcg, ndcg_cut, ndcg_rel, Rndcg, binG, G.

Gains are those of :mod:`onlineeval.offline.measures.gains` (the grade itself by default —
trec_eval's linear gain, not 2^g − 1); the relevance level ``-l`` does not change gains
(trec_eval ignores it here), except in binG. Position ``i`` (0-based) has discount
``log2(i + 2)``. ndcg and ndcg_cut are vectorised over all queries; ndcg_rel, Rndcg and G
(rarely used, and defined by trec_eval as a walk along the ranking) walk each query in Python.
"""

from __future__ import annotations

import math

import numpy as np

from onlineeval.offline.measures.base import (
    Measure,
    ratio,
    register,
    trec_eval_match,
    trec_eval_source,
)
from onlineeval.offline.measures.gains import gains, top_level_gain
from onlineeval.offline.measures.precision import CUTOFFS
from onlineeval.offline.ranking import Ranked


def _log2_table(n: int) -> np.ndarray:
    """log2(i + 2) for positions i = 0..n-1 (gathered instead of recomputed per row)."""
    return np.log2(np.arange(n, dtype=np.float64) + 2.0)


def _logs(r: Ranked, pairs: tuple) -> np.ndarray:
    """log2(i + 2) for every rank a ranked row or an ideal position can have.

    One table per prepared run (and gains), so every DCG path divides by the very same
    numbers.
    """
    key = ("log2", pairs)
    if key not in r._cache:
        g = gains(r, pairs)
        depth = max(int(r.num_ret.max()) if r.n_queries else 0,
                    int(g.ideal_pos.max()) + 1 if len(g.ideal_pos) else 0)
        r._cache[key] = _log2_table(depth)
    return r._cache[key]


def _ideal_discounted(r: Ranked, pairs: tuple = ()) -> np.ndarray:
    """gain / log2(i+2) per ideal position (queries concatenated, as ``gains().ideal``)."""
    key = ("ideal_discounted", pairs)
    if key not in r._cache:
        g = gains(r, pairs)
        r._cache[key] = g.ideal / _logs(r, pairs)[g.ideal_pos]
    return r._cache[key]


def discounted(r: Ranked, pairs: tuple = ()) -> tuple[np.ndarray, np.ndarray]:
    """(gain_i / log2(i+2) per ranked row, the same per ideal position) — trec_eval's terms."""
    key = ("discounted", pairs)
    if key not in r._cache:
        g = gains(r, pairs)
        # one 8-byte-per-row array: the gains, divided in place
        disc = g.row.copy() if "row" in g.__dict__ else g.row_gains()
        np.divide(disc, _logs(r, pairs)[r.pos], out=disc)
        r._cache[key] = (disc, _ideal_discounted(r, pairs))
    return r._cache[key]


_BLOCK_CELLS = 1 << 20   # rows x columns per block of the equal-length DCG


def dcg_at(r: Ranked, pairs: tuple, k: int | None) -> np.ndarray:
    """Per query, DCG over its first ``k`` ranked rows (all rows when ``k`` is None).

    Terms gain_i / log2(i+2) are added left to right from 0.0, as trec_eval adds them. When
    every query has the same number of rows (``r.width``) the terms are formed a block of
    queries at a time and summed by a running sum along each row (``np.cumsum`` adds
    sequentially, unlike ``np.sum``), so no 8-byte-per-row array of terms is kept; otherwise
    from :func:`discounted`.
    """
    key = ("dcg_at", pairs, k)
    if key in r._cache:
        return r._cache[key]
    if r.width is None:
        disc, _ = discounted(r, pairs)
        if k is None:
            out = r.segment_sum(disc)
        else:
            top = np.flatnonzero(r.pos < k)
            out = np.bincount(r.seg[top], weights=disc[top], minlength=r.n_queries)
    else:
        g = gains(r, pairs)
        w = r.width
        kk = w if k is None else min(k, w)
        out = np.zeros(r.n_queries, dtype=np.float64)
        if kk > 0:
            logs = _logs(r, pairs)[:kk]
            rel2 = r.rel.reshape(-1, w)
            step = max(1, _BLOCK_CELLS // kk)
            for lo in range(0, r.n_queries, step):
                block_rel = rel2[lo:lo + step, :kk]
                block = np.take(g.table, block_rel)
                for level, gain in g.negative:
                    block[block_rel == level] = gain
                block /= logs
                np.cumsum(block, axis=1, out=block)
                # 0.0 + the sum: bincount starts from 0.0 (turns a -0.0 total into 0.0)
                np.add(block[:, kk - 1], 0.0, out=out[lo:lo + step])
    r._cache[key] = out
    return out


def dcg_ideal(r: Ranked, pairs: tuple = ()) -> tuple[np.ndarray, np.ndarray]:
    """(DCG over all retrieved, ideal DCG over all judged) per query."""
    key = ("dcg", pairs)
    if key not in r._cache:
        g = gains(r, pairs)
        dcg = dcg_at(r, pairs, None)
        idcg = np.bincount(g.ideal_seg, weights=_ideal_discounted(r, pairs),
                           minlength=r.n_queries)
        r._cache[key] = (dcg, idcg)
    return r._cache[key]


def _ndcg(r: Ranked, pairs: tuple) -> list[np.ndarray]:
    dcg, idcg = dcg_ideal(r, pairs)
    return [ratio(dcg, idcg)]


def _ndcg_cut(r: Ranked, cutoffs: tuple[int, ...]) -> list[np.ndarray]:
    g = gains(r, ())
    idisc = _ideal_discounted(r, ())
    out = []
    for k in cutoffs:
        dcg = dcg_at(r, (), k)
        itop = np.flatnonzero(g.ideal_pos < k)
        idcg = np.bincount(g.ideal_seg[itop], weights=idisc[itop], minlength=r.n_queries)
        out.append(np.where(idcg > 0, ratio(dcg, idcg), dcg))
    return out


def _query_walk(r: Ranked, pairs: tuple, i: int) -> tuple[list[float], list[float]]:
    g = gains(r, pairs)
    rows = g.row[r.offsets[i]:r.offsets[i + 1]].tolist()
    ideal = g.ideal[g.ideal_offsets[i]:g.ideal_offsets[i + 1]].tolist()
    return rows, ideal


def _ndcg_rel(r: Ranked, pairs: tuple) -> list[np.ndarray]:
    out = np.zeros(r.n_queries)
    for q in range(r.n_queries):
        rows, ideal = _query_walk(r, pairs, q)
        m = len(ideal)
        dcg = idcg = total = 0.0
        rel_ret = 0
        for i, gain in enumerate(rows):
            if gain != 0:
                dcg += gain / math.log2(i + 2)
            if i < m:
                idcg += ideal[i] / math.log2(i + 2)
            if gain > 0:
                total += dcg / idcg
                rel_ret += 1
        for i in range(len(rows), m):
            idcg += ideal[i] / math.log2(i + 2)
        if idcg > 0:
            total += (m - rel_ret) * dcg / idcg
        if total > 0:
            out[q] = total / m
    return [out]


def _Rndcg(r: Ranked, pairs: tuple) -> list[np.ndarray]:
    out = np.zeros(r.n_queries)
    top = top_level_gain(r, pairs)
    for q in range(r.n_queries):
        if r.num_rel[q] == 0:
            continue
        rows, ideal = _query_walk(r, pairs, q)
        n, m = len(rows), len(ideal)
        old = float(top[q])
        dcg = idcg = total = 0.0
        changes = 0
        i = 0
        ideal_gain = old
        while i < n and ideal_gain > 0.0:
            ideal_gain = ideal[i] if i < m else 0.0
            if ideal_gain != old:
                if idcg > 0.0:
                    total += dcg / idcg
                    changes += 1
                old = ideal_gain
            if rows[i] != 0:
                dcg += rows[i] / math.log2(i + 2)
            if ideal_gain > 0.0:
                idcg += ideal_gain / math.log2(i + 2)
            i += 1
        if i < n:
            while i < n:
                if rows[i] != 0:
                    dcg += rows[i] / math.log2(i + 2)
                i += 1
            if idcg > 0.0:
                total += dcg / idcg
                changes += 1
        while ideal_gain > 0.0:
            ideal_gain = ideal[i] if i < m else 0.0
            if ideal_gain != old:
                if idcg > 0.0:
                    total += dcg / idcg
                    changes += 1
                old = ideal_gain
            if ideal_gain > 0.0:
                idcg += ideal_gain / math.log2(i + 2)
            i += 1
        # no change point: when no ideal gain is positive (all relevant documents have
        # gain <= 0, e.g. -l 0 on a query judged all 0, or gains set to 0), trec_eval's
        # sum / num_changed is 0/0 and prints -nan; the value is undefined, so NaN
        out[q] = total / changes if changes else np.nan
    return [out]


def _binG(r: Ranked, params: tuple) -> list[np.ndarray]:
    nonrel_above = r.pos + 1 - r.cum_rel
    contrib = np.where(r.is_rel, 1.0 / np.log2(2.0 + nonrel_above), 0.0)
    return [ratio(r.segment_sum(contrib), r.num_rel)]


def _G(r: Ranked, pairs: tuple) -> list[np.ndarray]:
    out = np.zeros(r.n_queries)
    top = top_level_gain(r, pairs)
    for q in range(r.n_queries):
        rows, ideal = _query_walk(r, pairs, q)
        n, m = len(rows), len(ideal)
        got = ideal_sum = cost = value = 0.0
        ideal_gain = float(top[q])
        i = 0
        while i < n and ideal_gain > 0.0:
            gain = rows[i]
            got += gain
            ideal_gain = ideal[i] if i < m else 0.0
            if ideal_gain > 0.0:
                ideal_sum += ideal_gain
            cost += ideal_gain if ideal_gain >= 1.0 else 1.0
            if gain != 0:
                value += gain / math.log2(2 + cost - got)
            i += 1
        while i < n:
            gain = rows[i]
            got += gain
            cost += 1.0
            if gain != 0:
                value += gain / math.log2(2 + cost - got)
            i += 1
        while ideal_gain > 0.0:
            ideal_gain = ideal[i] if i < m else 0.0
            if ideal_gain > 0.0:
                ideal_sum += ideal_gain
            i += 1
        if ideal_sum > 0.0:
            out[q] = value / ideal_sum
    return [out]


_JK = ("Järvelin & Kekäläinen (2002), Cumulated gain-based evaluation of IR techniques, "
       "ACM TOIS 20(4)")
_GAINS = ("`grade=gain` pairs overriding the gain of a grade (default: gain = grade; documents "
          "not in the qrels or with a negative grade have gain 0), e.g. `ndcg.1=3,2=9`")
_DCG = ("DCG = Σ_i gain_i / log2(i + 2) over the retrieved documents (0-based position i); "
        "IDCG the same over the ideal ranking: the query's judged documents with gain > 0, "
        "highest gain first.")

register(Measure(
    "binG", 19, _binG,
    title="binary G",
    formula="Σ over relevant retrieved documents of 1 / log2(2 + non-relevant documents "
            "above it), divided by R.",
    edge_cases="0 when R = 0.",
    citation=trec_eval_source("m_binG.c"),
    matches=trec_eval_match()))
register(Measure(
    "G", 20, _G, params="pairs", param_doc=_GAINS,
    title="normalised gain G",
    formula="Σ_i gain_i / log2(2 + cost_i − gained_i), where gained_i is the gain so far and "
            "cost_i the ideal gain so far with each ideal step costing at least 1 (1 per "
            "position once the ideal is exhausted); divided by the ideal total gain.",
    edge_cases="0 when no judged document has a positive gain.",
    citation=trec_eval_source("m_G.c"),
    matches=trec_eval_match()))
register(Measure(
    "ndcg", 23, _ndcg, params="pairs", param_doc=_GAINS,
    title="normalised DCG over the whole ranking (linear gain)",
    formula=f"DCG / IDCG. {_DCG} The ideal is not cut at the number retrieved.",
    edge_cases="0 when IDCG = 0 (no positive gain judged).",
    citation=trec_eval_source("m_ndcg.c", _JK),
    matches=trec_eval_match(note="ranx's ndcg is the same linear-gain measure")))
register(Measure(
    "ndcg_rel", 24, _ndcg_rel, params="pairs", param_doc=_GAINS,
    title="ndcg averaged over the relevant documents",
    formula="For each retrieved document with gain > 0 at position i, DCG(0..i) / "
            "IDCG(0..min(i, m−1)); each of the m ideal documents not retrieved adds DCG(all) "
            "/ IDCG(all); the sum is divided by m (the ideal documents with gain > 0).",
    edge_cases="0 when that sum is 0.",
    citation=trec_eval_source("m_ndcg_rel.c"),
    matches=trec_eval_match()))
register(Measure(
    "Rndcg", 25, _Rndcg, params="pairs", param_doc=_GAINS,
    title="ndcg averaged over the ideal gain-level changes",
    formula="ndcg averaged over the points where the ideal gain changes level (plus the end "
            "of the retrieved list once the ideal is exhausted).",
    edge_cases="0 when R = 0; NaN (trec_eval: `-nan`) when R > 0 but no ideal gain is "
               "positive, as there is no change point to average over.",
    citation=trec_eval_source("m_Rndcg.c"),
    matches=trec_eval_match()))
register(Measure(
    "ndcg_cut", 26, _ndcg_cut, params="cutoffs", defaults=CUTOFFS, aliases=("nDCG@",),
    param_doc="cutoffs k (default 5,10,15,20,30,100,200,500,1000); grades are the gains",
    title="normalised DCG at cutoffs (linear gain)",
    formula=f"DCG@k / IDCG@k, both over the first k positions. {_DCG}",
    edge_cases="0 when IDCG@k = 0 (no positive grade judged).",
    citation=trec_eval_source("m_ndcg_cut.c", _JK),
    matches=trec_eval_match()))
