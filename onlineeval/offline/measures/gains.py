"""Gain values per relevance grade, shared by ndcg, ndcg_rel, Rndcg, G and rbp.

trec_eval 10.0 ``gain_init.c``: by default a document judged with grade ``g >= 0`` has gain
``g``; ``-m ndcg.1=3,2=9`` overrides the gain of grades 1 and 2 (other grades keep gain =
grade; a pair whose name is not an integer, such as rbp's ``p=0.8``, is not a gain). Documents
not in the qrels or with a negative grade have gain 0. The *ideal* ranking of a query lists its
judged documents by gain, highest first, stopping at the first gain <= 0.

Our choice where trec_eval is undefined: trec_eval orders grades with a comparator that
truncates the gain difference to an integer, so two grades whose gains differ by less than 1
compare equal and their ideal order is unspecified; we order by the exact gain.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from onlineeval.offline.ranking import Ranked


@dataclass(frozen=True)
class Gains:
    """Gain of each retrieved row and the ideal ranking of every query (CSR)."""

    rel: np.ndarray            # int[N] the rel codes of the ranked rows (Ranked.rel)
    table: np.ndarray          # float64[G + 2] gain of grade g at g; 0.0 at -1 and -2
    negative: tuple[tuple[int, float], ...]  # gains of the codes -1/-2 when overridden
    ideal: np.ndarray          # float64[M] ideal gains (> 0), queries concatenated
    ideal_offsets: np.ndarray  # int64[Q+1]
    ideal_pos: np.ndarray      # int64[M] 0-based position within the query's ideal list
    ideal_seg: np.ndarray      # int64[M] query of each ideal position

    @cached_property
    def row(self) -> np.ndarray:
        """float64[N] gain of each ranked row (built on first use: 8 bytes per row)."""
        return self.row_gains()

    def row_gains(self) -> np.ndarray:
        """A new float64[N] array of row gains (callers may modify it)."""
        # rel is >= -2 (UNJUDGED, NONPOOL, grades): indices -1 and -2 of the table extended
        # by two zeros give 0 to both codes (no shifted copy of rel)
        row = np.take(self.table, self.rel)
        for level, gain in self.negative:
            # trec_eval would also look up -1 (not in qrels) / -2 (negative grade)
            row[self.rel == level] = gain
        return row


def pair_gains(pairs: tuple[tuple[str, float], ...]) -> dict[int, float]:
    """Grade -> gain overrides from ``grade=gain`` parameters (non-integer names skipped)."""
    out: dict[int, float] = {}
    for key, value in pairs:
        text = key[1:] if key[:1] in "+-" else key
        if text.isdigit():
            # trec_eval looks gains up first-match, so the first pair for a grade wins
            out.setdefault(int(key), float(value))
    return out


def gain_of_levels(r: Ranked, overrides: dict[int, float]) -> np.ndarray:
    """Gain of grades 0..G-1 (G = columns of ``r.rel_levels``)."""
    n = r.rel_levels.shape[1]
    table = np.arange(n, dtype=np.float64)
    for level, gain in overrides.items():
        if 0 <= level < n:
            table[level] = gain
    return table


def gains(r: Ranked, pairs: tuple[tuple[str, float], ...] = ()) -> Gains:
    """Row gains and ideal rankings for the given ``grade=gain`` overrides."""
    key = ("gains", pairs)
    if key in r._cache:
        return r._cache[key]
    overrides = pair_gains(pairs)
    table = gain_of_levels(r, overrides)
    negative = tuple((level, gain) for level, gain in overrides.items() if level < 0)
    order = np.argsort(-table, kind="stable")
    order = order[table[order] > 0]
    counts = r.rel_levels[:, order]                    # Q x L, levels by gain descending
    flat_counts = counts.ravel()
    ideal = np.repeat(np.tile(table[order], r.n_queries), flat_counts)
    per_q = counts.sum(axis=1).astype(np.int64)
    ideal_offsets = np.concatenate(([0], np.cumsum(per_q))).astype(np.int64)
    ideal_seg = np.repeat(np.arange(r.n_queries, dtype=np.int64), per_q)
    ideal_pos = np.arange(len(ideal), dtype=np.int64) - ideal_offsets[:-1][ideal_seg]
    out = Gains(r.rel, np.concatenate((table, [0.0, 0.0])), negative, ideal, ideal_offsets,
                ideal_pos, ideal_seg)
    r._cache[key] = out
    return out


def top_level_gain(r: Ranked, pairs: tuple[tuple[str, float], ...]) -> np.ndarray:
    """Per query, the highest gain among its grades 0..max judged and the override grades.

    trec_eval starts its ideal walk at this gain even when no document has it; Rndcg's first
    "gain change" depends on it.
    """
    overrides = pair_gains(pairs)
    table = gain_of_levels(r, overrides)
    judged_levels = r.rel_levels > 0
    n_levels = np.where(judged_levels.any(axis=1),
                        r.rel_levels.shape[1] - np.argmax(judged_levels[:, ::-1], axis=1), 0)
    best = np.full(r.n_queries, -np.inf)
    for level in range(r.rel_levels.shape[1]):
        best = np.where(level < n_levels, np.maximum(best, table[level]), best)
    for gain in overrides.values():
        best = np.maximum(best, gain)
    return np.where(np.isfinite(best), best, 0.0)
