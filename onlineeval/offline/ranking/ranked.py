"""The prepared form of a qrels + run pair that every measure reads: :class:`Ranked`.

Rows of all queries are concatenated (CSR): query ``i`` owns rows ``offsets[i]:offsets[i+1]``
in trec_eval's rank order. Per-query arrays have length ``n_queries``. The relevance code of
each row (``rel``) is the qrels grade (>= 0) if the document is judged, :data:`NONPOOL` if it
is not in the qrels for that query, :data:`UNJUDGED` if it is there with a negative grade
(trec_eval's "in the pool but unjudged"). A document is *relevant* when
``rel >= relevance_level``.

Building blocks for the measures, none with a Python loop over queries:

    seg        query index of each row                      (int64[N])
    pos        0-based rank of each row within its query    (int64[N])
    is_rel     rel >= relevance_level                       (bool[N])
    cum_rel    relevant documents at or above each row      (int32[N]; int64 from 2^31 rows)
    num_ret, num_rel, num_rel_ret, num_nonpool, num_unjudged   (int64[Q])
    rel_levels counts of judged docs per grade 0..max       (int64[Q, G])
    at_cutoff(cum, k)   value of a per-row cumulative array after the first k rows of each
                        query (0 when k = 0, the last value when k > num_ret); k scalar or
                        int array[Q]
    segment_sum(x)      per-query sum of a per-row array (sequential, left to right)
    first_pos(mask)     0-based position of the first row where mask holds, -1 if none

When every query has the same number of rows (``Ranked.width``) the per-row helpers work on a
(queries x width) view instead of building ``seg``/``pos`` index arrays, and ``Ranked.score``
(which no measure reads) is gathered only when asked for. Measures share intermediate results
through ``Ranked._cache`` (AP, bpref, gains, DCG), so asking for map and gm_map costs one AP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

__all__ = ["MISSING_DOCNO", "NONPOOL", "UNJUDGED", "Ranked", "rel_dtype"]

#: rel code of a retrieved document that is not in the qrels for its query
NONPOOL = -1
#: rel code of a retrieved document judged with a negative grade ("in the pool, unjudged")
UNJUDGED = -2

#: the docno trec_eval -c gives the stand-in ranking of a query missing from the run
MISSING_DOCNO = "ceci_nest_pas_un_docno"


def rel_dtype(max_grade: int) -> np.dtype:
    """The integer type of ``Ranked.rel``: the smallest signed type holding -2..max_grade.

    Usually int8 (grades up to 127): an eighth of the bytes of int64 for every per-row
    comparison and lookup the measures make.
    """
    for t in (np.int8, np.int16, np.int32):
        if max_grade <= np.iinfo(t).max:
            return np.dtype(t)
    return np.dtype(np.int64)


@dataclass
class Ranked:
    """Ranked relevance lists of every evaluated query (see module docstring)."""

    qids: np.ndarray                 # object[Q], evaluation order
    offsets: np.ndarray              # int64[Q+1]
    rel: np.ndarray                  # int8[N] (wider for grades above 127: rel_dtype)
    score_source: Any                # float64[N], or a callable giving it (see ``score``)
    rel_levels: np.ndarray           # int64[Q, G]; judged docs per grade 0..G-1
    relevance_level: int = 1
    missing: np.ndarray | None = None    # bool[Q]; stand-in rankings of complete=True
    runid: str = ""
    n_qrels_queries: int = 0
    ignored_run_queries: int = 0
    complete: bool = False           # prepared with complete=True (trec_eval -c)
    docno: np.ndarray | None = None  # object[N] when prepared with keep_docnos=True
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def score(self) -> np.ndarray:
        """float64[N] score of each ranked row (no measure needs it: built on first use)."""
        src = self.score_source
        return src() if callable(src) else src

    # ---- sizes
    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @cached_property
    def num_ret(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def width(self) -> int | None:
        """The number of rows every query has, when all have the same (> 0); else None.

        Per-row helpers then work on a (queries x width) view instead of index arrays.
        """
        n = self.num_ret
        if len(n) and n[0] > 0 and bool((n == n[0]).all()):
            return int(n[0])
        return None

    @cached_property
    def seg(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), self.num_ret)

    @cached_property
    def pos(self) -> np.ndarray:
        if self.width is not None:
            return np.tile(np.arange(self.width, dtype=np.int64), self.n_queries)
        pos = np.arange(len(self.rel), dtype=np.int64)
        pos -= np.repeat(self.offsets[:-1], self.num_ret)
        return pos

    def seg_of(self, rows: np.ndarray) -> np.ndarray:
        """Query index of the given rows (``seg[rows]``, without building ``seg``)."""
        if self.width is not None:
            return rows // self.width
        return self.seg[rows]

    def pos_of(self, rows: np.ndarray) -> np.ndarray:
        """0-based rank of the given rows within their query (``pos[rows]``)."""
        if self.width is not None:
            return rows % self.width
        return self.pos[rows]

    def running_count(self, rows: np.ndarray) -> np.ndarray:
        """For increasing ``rows`` (``flatnonzero`` of a mask), how many of them lie at or
        above each one within its query: the mask's running count at those rows (1-based,
        int64), without a running sum over every row. ``cum_rel[rows]`` for the relevant
        rows.
        """
        if len(rows) == 0:
            return np.zeros(0, dtype=np.int64)
        seg = self.seg_of(rows)
        new = np.empty(len(rows), dtype=bool)
        new[0] = True
        np.not_equal(seg[1:], seg[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        count = np.arange(1, len(rows) + 1, dtype=np.int64)
        count -= np.repeat(starts, np.diff(np.append(starts, len(rows))))
        return count

    # ---- relevance
    @cached_property
    def is_rel(self) -> np.ndarray:
        return self.rel >= self.relevance_level

    @cached_property
    def cum_rel(self) -> np.ndarray:
        # int32 when it can hold every count: half the bytes of a 10M-row array
        return self.segment_cumsum(self.is_rel,
                                   np.int32 if len(self.rel) < 2**31 else np.int64)

    @cached_property
    def num_rel(self) -> np.ndarray:
        lvl = max(self.relevance_level, 0)
        return self.rel_levels[:, lvl:].sum(axis=1).astype(np.int64)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return self.segment_sum(self.is_rel.astype(np.int64)).astype(np.int64)

    @cached_property
    def num_nonpool(self) -> np.ndarray:
        return self.segment_sum((self.rel == NONPOOL).astype(np.int64)).astype(np.int64)

    @cached_property
    def num_unjudged(self) -> np.ndarray:
        return self.segment_sum((self.rel == UNJUDGED).astype(np.int64)).astype(np.int64)

    @cached_property
    def num_judged(self) -> np.ndarray:
        """Judged documents (any grade >= 0) per query."""
        return self.rel_levels.sum(axis=1).astype(np.int64)

    # ---- segment helpers
    def segment_cumsum(self, x: np.ndarray, dtype: Any = np.int64) -> np.ndarray:
        """Inclusive running sum of integer or bool ``x`` within each query (exact)."""
        if self.width is not None and len(x) == len(self.rel):
            return np.cumsum(x.reshape(-1, self.width), axis=1, dtype=dtype).ravel()
        total = np.cumsum(x, dtype=dtype)
        if len(total) == 0:
            return total
        before = np.concatenate(([0], total))[self.offsets[:-1]]
        total -= np.repeat(before, self.num_ret)
        return total

    def segment_sum(self, x: np.ndarray) -> np.ndarray:
        """Per-query sum of a per-row array, added left to right as trec_eval does.

        Integer input gives int64, float input float64; 0 for a query without rows.
        """
        if self.width is not None and len(x) == len(self.rel):
            x2 = x.reshape(-1, self.width)
            if x.dtype.kind in "biu":
                return x2.sum(axis=1, dtype=np.int64)
            # column by column: the same left-to-right additions as bincount (np.sum along a
            # row would add pairwise and round differently)
            total = np.zeros(self.n_queries, dtype=np.float64)
            for j in range(self.width):
                total += x2[:, j]
            return total
        total = np.bincount(self.seg, weights=x, minlength=self.n_queries)
        return total.astype(np.int64) if x.dtype.kind in "biu" else total

    def at_cutoff(self, cum: np.ndarray, k: int | np.ndarray) -> np.ndarray:
        """Value of per-row running total ``cum`` after the first ``k`` rows of each query."""
        k = np.minimum(np.asarray(k, dtype=np.int64), self.num_ret)
        idx = self.offsets[:-1] + k - 1
        out = np.zeros(self.n_queries, dtype=cum.dtype)
        ok = k > 0
        out[ok] = cum[idx[ok]]
        return out

    def first_pos(self, mask: np.ndarray) -> np.ndarray:
        """0-based rank of the first row of each query where ``mask`` holds; -1 if none."""
        out = np.full(self.n_queries, -1, dtype=np.int64)
        rows = np.flatnonzero(mask)
        if len(rows):
            q = self.seg_of(rows)
            first = np.ones(len(rows), dtype=bool)
            first[1:] = q[1:] != q[:-1]
            out[q[first]] = self.pos_of(rows[first])
        return out

    def query_rels(self, i: int) -> np.ndarray:
        """The ranked relevance list of query ``i`` (a view)."""
        return self.rel[self.offsets[i]:self.offsets[i + 1]]
