"""The prepared (ranked, judged) form of a qrels + run pair that every measure reads.

``prepare(qrels, run, relevance_level=1, max_results=None, complete=False) -> Ranked``

Which queries are evaluated (trec_eval 10.0, ``trec_eval.c``)
    Queries are those of the qrels, in byte order of their qid (C ``strcmp``; so "10" sorts
    before "9"). A run query without judgments is ignored (counted in
    ``Ranked.ignored_run_queries``). A judged query missing from the run is skipped, unless
    ``complete=True`` (``trec_eval -c``): then it gets trec_eval's stand-in ranking of one
    unjudged document and ``Ranked.missing`` marks it; the trec_eval driver then zeroes the
    few measures trec_eval zeroes for it (num_ret, utility, unj, rbp_resid, relstring).

When the queries of the two sides disagree (:class:`QueryMismatchWarning`, also printed by
the CLI)
    * no judged query has results: without ``complete`` an :class:`InputError` (trec_eval:
      "No queries with both results and relevance info"); with it a
      :class:`NoSharedQueriesWarning`, since every judged query would be scored on the
      stand-in ranking — numbers that look like a run's but only say the qids do not match;
    * without ``complete``, some judged queries have no results: a
      :class:`SkippedQueriesWarning` with their count, since leaving them out raises the
      means (trec_eval 10.0 stops with an error here, trec_eval 9 skipped them silently; we
      skip them, as documented, and say so);
    * run queries without judgments are ignored without a warning (``ignored_run_queries``
      counts them): a run over more queries than were judged is normal. Both messages give a
      few qids of each side, which shows a mismatch such as ``301`` against ``q301``.

Ranking (``form_res_rels.c``)
    Within a query documents are ordered by score descending; equal scores are ordered by
    docno descending in byte order (strcmp(b, a)). The run's rank column is never used.
    ``max_results=M`` (``-M``) keeps the first M documents of that order.
    A document listed twice for one query (within the kept M) is an error, as in trec_eval
    ("duplicate docs"); so is a document judged twice for one evaluated query.

Relevance of a retrieved document — ``Ranked.rel`` (one per retrieved row; int8 when the
grades fit, see :func:`rel_dtype`)
    the qrels grade (>= 0) if judged; ``NONPOOL = -1`` if the docno is not in the qrels for
    that query; ``UNJUDGED = -2`` if it is in the qrels with a negative grade (trec_eval's
    "in the pool but unjudged"; such judgments also do not count in ``rel_levels``).
    A document is *relevant* when ``rel >= relevance_level`` (``-l``, default 1); a judged
    document with ``0 <= rel < relevance_level`` is judged non-relevant.

Layout (CSR): rows of all queries are concatenated, query ``i`` owns rows
``offsets[i]:offsets[i+1]`` in rank order. Per-query arrays have length ``n_queries``.
Helpers give the common building blocks without Python loops over queries:

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

Every measure in :mod:`onlineeval.offline.measures` is a function of a ``Ranked`` and its
parameters returning per-query float64 arrays. Measures share intermediate results through
``Ranked._cache`` (AP, bpref, gains, DCG), so asking for map and gm_map costs one AP.

Speed: after reading, preparing is integer work on numpy arrays — qids and docnos are
dictionary encoded and ranked by byte order (pyarrow when installed, else pandas). The usual
layout (each query's lines together, every query with the same number of lines, no duplicate
documents; checked, not assumed) takes a fast path: each query is sorted as one row of a 2-D
array by value on a packed int64 key (score bits, reversed docno rank, column), in pieces of
about 131k rows on two threads, and each row finds its grade in a (query, judged docno)
table — dense int8 when small enough, else a hash index. Any other layout, and every
duplicate document, goes through the general path: a join on sorted packed (query, docno)
keys and a per-query stable sort, which also words the errors. The check for duplicate
judgments (a sort of the qrels) runs in a thread meanwhile. No Python loop runs per query or
per document. When every query has the same number of rows (``Ranked.width``) the per-row
helpers work on a (queries x width) view instead of building ``seg``/``pos`` index arrays, and
``Ranked.score`` (which no measure reads) is gathered only when asked for. numpy's
huge-page advice and the process's transparent huge pages are switched off while preparing
(:func:`no_hugepage_advice`). Peak memory is
about 0.8–1.0 GB for 10M run lines (end to end, reading included; bench/offline_bench.py).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from onlineeval.errors import InputError, InvalidParameterError
from onlineeval.offline.trec_format import (
    Columns,
    arrow_index_to_numpy,
    arrow_to_numpy,
    load_qrels,
    load_run,
    pooled_empty,
)

if TYPE_CHECKING:
    pass

NONPOOL = -1
UNJUDGED = -2


class QueryMismatchWarning(UserWarning):
    """The qrels and the run disagree on which queries exist (see the module docstring)."""


class NoSharedQueriesWarning(QueryMismatchWarning):
    """With ``complete=True`` (trec_eval ``-c``), no judged query has results in the run."""


class SkippedQueriesWarning(QueryMismatchWarning):
    """Judged queries without results in the run are left out of the averages."""

#: the docno trec_eval -c gives the stand-in ranking of a query missing from the run
MISSING_DOCNO = "ceci_nest_pas_un_docno"


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


# --------------------------------------------------------------------------- prepare

def prepare(qrels: Any, run: Any, relevance_level: int = 1, max_results: int | None = None,
            complete: bool = False, keep_docnos: bool = False) -> Ranked:
    """Join a run with its qrels and rank it as trec_eval does.

    Parameters
    ----------
    qrels, run : path, DataFrame or dict
        Anything :func:`onlineeval.offline.read_qrels` / ``read_run`` accept.
    relevance_level : int
        Minimum grade counted as relevant (trec_eval ``-l``).
    max_results : int, optional
        Keep only the first ``max_results`` ranked documents per query (trec_eval ``-M``).
    complete : bool
        Evaluate every judged query, giving those missing from the run trec_eval's stand-in
        ranking (trec_eval ``-c``).
    keep_docnos : bool
        Also return the ranked docnos (``Ranked.docno``); costs memory on big runs.

    Raises
    ------
    InputError
        Duplicated documents, or no query with both judgments and results.
    InvalidParameterError
        A negative ``relevance_level`` or ``max_results``.

    Warns
    -----
    NoSharedQueriesWarning, SkippedQueriesWarning
        The qrels and run disagree on their queries (module docstring).

    Notes
    -----
    Everything after reading is integer work on numpy arrays: qids and docnos are dictionary
    encoded, ranked by byte order, the run is joined to the qrels on packed (query, docno)
    keys and sorted within each query by score, docno.
    """
    if max_results is not None and int(max_results) < 0:
        raise InvalidParameterError(f"max_results must be >= 0, got {max_results}")
    if int(relevance_level) < 0:
        # below 0 a retrieved document missing from the qrels counts as a relevant hit while
        # the number of relevant documents counts judged ones only (recall above 1); trec_eval
        # itself is inconsistent there (map and P count such hits, num_rel_ret, set_P and
        # iprec_at_recall do not), so no number can be vouched for
        raise InvalidParameterError(
            f"relevance_level must be >= 0 (trec_eval -l); got {relevance_level}. Use 0 to "
            f"count every judged document as relevant"
        )
    with no_hugepage_advice():
        # no local references: _prepare frees the run's strings as soon as they are encoded
        return _prepare(load_qrels(qrels), load_run(run), int(relevance_level), max_results,
                        complete, keep_docnos)


@contextlib.contextmanager
def no_hugepage_advice() -> Iterator[None]:
    """Within the block, numpy does not advise the kernel to back new arrays by huge pages.

    numpy asks for transparent huge pages on every large allocation. Where the kernel
    compacts memory synchronously for such requests (``defrag=madvise``, common), each fresh
    temporary can stall on compaction; the engine allocates and frees many short-lived
    10M-row arrays, and on the benchmark machine this advice cost 0.2-1 s of system time per
    10M run lines (bench/README.md). Other allocators (pyarrow's pool and CSV reader) advise
    huge pages too, so the process's own "no transparent huge pages" flag is also set
    (:func:`_set_thp_disabled`, Linux). The previous settings are restored on exit; the
    switches are numpy's private ``_set_madvise_hugepage`` and ``prctl`` (each a no-op where
    it does not exist) and only change a performance hint, never a result.
    """
    global _advice_depth, _advice_saved
    # process-wide switches: the first block to enter (in any thread) saves and sets them,
    # the last to leave restores them, so overlapping blocks in several threads never leave
    # them switched off
    with _advice_lock:
        if _advice_depth == 0:
            setter = getattr(getattr(np, "_core", None), "multiarray", None)
            setter = getattr(setter, "_set_madvise_hugepage", None)
            previous = setter(False) if setter is not None else None
            _advice_saved = (setter, previous, _set_thp_disabled(True))
        _advice_depth += 1
    try:
        yield
    finally:
        with _advice_lock:
            _advice_depth -= 1
            if _advice_depth == 0:
                setter, previous, thp_before = _advice_saved
                if thp_before is not None:
                    _set_thp_disabled(thp_before)
                if setter is not None:
                    setter(previous)


_advice_lock = threading.Lock()
_advice_depth = 0
_advice_saved: tuple[Callable[[bool], bool] | None, bool | None, bool | None] = (
    None, None, None)


_PR_SET_THP_DISABLE, _PR_GET_THP_DISABLE = 41, 42   # <linux/prctl.h>


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` on Linux; None elsewhere or when it cannot be loaded."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        raw = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    raw.restype = ctypes.c_int

    def prctl(option: int, *args: int) -> int:
        # prctl is variadic and the kernel reads each argument as unsigned long: pass full
        # 64-bit values (a bare Python int goes as a 32-bit int, upper bits unspecified)
        return raw(ctypes.c_int(option), *(ctypes.c_ulong(a) for a in args))

    return prctl


def _set_thp_disabled(disabled: bool) -> bool | None:
    """Set the process's "no transparent huge pages" flag; return the previous setting.

    Part of :func:`no_hugepage_advice`: numpy is not the only library advising huge pages —
    the buffers of pyarrow's CSV reader and memory pool were faulted in as 2 MB huge pages,
    whose synchronous compaction and zeroing cost 0.5-1 s of system time per 10M run lines on the benchmark
    machine (bench/README.md). ``PR_SET_THP_DISABLE`` stops new huge-page faults in this
    process while set (pages already mapped are untouched) and is put back on exit. It is
    process-wide, so other threads lose huge pages for the duration too: a performance hint,
    never a result. None when unsupported (not Linux, no ``prctl``, or the call fails).
    """
    prctl = _prctl()
    if prctl is None:
        return None
    before = prctl(_PR_GET_THP_DISABLE, 0, 0, 0, 0)
    if before < 0 or prctl(_PR_SET_THP_DISABLE, int(disabled), 0, 0, 0) != 0:
        return None
    return bool(before)


def _prepare(q: Columns, r: Columns, level: int, max_results: int | None, complete: bool,
             keep_docnos: bool) -> Ranked:
    strings = _Strings.for_columns(q, r)
    run_qid, run_docno, score = r.qid, r.docno, r.value
    run_name, runid = r.name, r.runid
    del r  # the caller keeps no reference: the run's text columns go once encoded

    # ---- judged queries, in byte order of qid
    qcode, quniq = strings.encode(q.qid)
    qrank = strings.byte_rank(quniq)
    n_q = len(qrank)
    qids = strings.to_object(quniq)[np.argsort(qrank)]
    qi_q = qrank.astype(np.int32 if n_q < 2**31 else np.int64)[qcode]   # int32: half the bytes

    # ---- duplicate judgments (an error once we know the query is evaluated, as trec_eval)
    # (a sort of all judgments, in a thread while the run is joined and ranked: its answer is
    # needed only by _finish; both orderings are right whatever it finds, since a duplicate
    # only matters for a query that is evaluated, and then it is an error)
    dcode_q, duniq_q = strings.encode(q.docno)
    dup_pool = ThreadPoolExecutor(1)
    dup_future = dup_pool.submit(_duplicate_rows, qi_q, dcode_q, len(duniq_q))
    dup_pool.shutdown(wait=False)

    # ---- judged documents per grade
    judged = q.value >= 0
    all_judged = bool(judged.all())
    grades = q.value if all_judged else q.value[judged]
    n_levels = int(grades.max()) + 1 if len(grades) else 1
    if n_q * n_levels > 50_000_000:
        raise InputError(
            f"{q.name}: the highest relevance grade is {n_levels - 1}; with {n_q} queries the "
            f"per-grade counts would need {n_q * n_levels:,} cells. Use small integer grades "
            f"(trec_eval's own limit is about 127)."
        )
    # int32 is enough: the check above keeps n_q * n_levels under 50 million
    cell = (qi_q if all_judged else qi_q[judged]).astype(np.int32)
    cell *= np.int32(n_levels)
    cell += grades.astype(np.int32)
    rel_levels = np.bincount(cell, minlength=n_q * n_levels).reshape(n_q, n_levels)
    rel_levels = rel_levels.astype(np.int64, copy=False)
    del cell, grades, judged

    # ---- run rows of judged queries: each row's qid code, each distinct qid's query index
    rqcode, rquniq = strings.encode(run_qid)
    qval = strings.lookup_map(rquniq, quniq, qrank)   # -1: a run query without judgments
    ignored = int(np.count_nonzero(qval < 0))
    # a few run qids for the message when no run query is judged (see _check_overlap)
    run_examples = list(strings.to_object(rquniq[:3])) if ignored == len(qval) else []
    if ignored:
        in_q = (qval >= 0)[rqcode]
        run_docno = strings.take(run_docno, in_q)
        score = score[in_q]
        rqcode = rqcode[in_q]
        del in_q
    del run_qid, rquniq
    dcode, duniq = strings.encode(run_docno)
    del run_docno
    drank_u = strings.byte_rank(duniq)
    n_d = max(len(drank_u), 1)
    rank_of_code = drank_u.astype(np.int32 if n_d < 2**31 else np.int64)

    fast = _fast_order(rqcode, qval, dcode, rank_of_code, score, n_d, lambda: _Relevance(
        n_q, n_d, drank_u, duniq, strings, q, qi_q, dcode_q, duniq_q), keep_docnos)
    if fast is not None:
        # ---- the common layout: one block per query, equal lengths, no duplicates
        del dcode_q, duniq_q, rqcode, dcode
        rel, score, counts_present, drank_sorted = fast
        del fast
        counts = np.zeros(n_q, dtype=np.int64)
        counts[counts_present] = len(rel) // max(len(counts_present), 1)
        pos = _positions(counts) if max_results is not None else None
    else:
        del dcode_q, duniq_q
        qi = qval[rqcode]
        drank = rank_of_code[dcode]
        del rqcode, dcode
        rel, score, counts, drank_sorted, pos = _slow_order(
            qi, drank, score, n_q, n_d, drank_u, duniq, strings, q, qi_q, qids, run_name,
            max_results, keep_docnos)
        del qi, drank
    dup_rows = dup_future.result()
    return _finish(q, strings, qids, rel, score, counts, drank_sorted, pos, duniq, drank_u,
                   dup_rows, qi_q, n_q, rel_levels, level, max_results, complete, keep_docnos,
                   run_name, runid, ignored, run_examples)


def rel_dtype(max_grade: int) -> np.dtype:
    """The integer type of ``Ranked.rel``: the smallest signed type holding -2..max_grade.

    Usually int8 (grades up to 127): an eighth of the bytes of int64 for every per-row
    comparison and lookup the measures make.
    """
    for t in (np.int8, np.int16, np.int32):
        if max_grade <= np.iinfo(t).max:
            return np.dtype(t)
    return np.dtype(np.int64)


def _duplicate_rows(qi_q: np.ndarray, dcode_q: np.ndarray, n_docnos: int) -> np.ndarray | None:
    """Qrels rows whose (query, docno) is judged more than once; None if there are none."""
    jkey = qi_q.astype(np.int64)
    jkey *= max(n_docnos, 1)
    jkey += dcode_q
    # "stable" (radix/timsort) is ~5x faster than quicksort on qrels grouped by query, the
    # usual layout, and about as fast on shuffled ones; a value sort either way
    jsort = np.sort(jkey, kind="stable")
    dup_keys = jsort[1:][jsort[1:] == jsort[:-1]]
    return np.flatnonzero(np.isin(jkey, dup_keys)) if len(dup_keys) else None


def _positions(counts: np.ndarray) -> np.ndarray:
    """0-based rank of each row within its query, for CSR rows with these counts."""
    starts = np.concatenate(([0], np.cumsum(counts)))[:-1]
    return np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)


_MAX_DENSE_CELLS = 1 << 28   # (query, judged docno) cells of the int8/int16 relevance table


_CHUNK_CELLS = 1 << 17       # run rows per piece of the fast path (small temporaries, threads)


def _fast_order(qc: np.ndarray, qval: np.ndarray, dcode: np.ndarray,
                rank_of_code: np.ndarray, score: np.ndarray, n_d: int,
                make_relevance: Callable[[], _Relevance],
                keep_docnos: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                            np.ndarray | None] | None:
    """trec_eval's ranking and each row's relevance for the common layout; else None.

    Rows come as codes: ``qc`` (qid code; ``qval[qc]`` is the row's query index, all >= 0)
    and ``dcode`` (docno code; ``rank_of_code[dcode]`` is the docno's byte-order rank), so
    no per-row query or rank array is built.

    The layout: each query's rows form one block of the file, all blocks equally long, and
    no document repeats within a query. Each block is then sorted on its own as a row of a
    2-D array, by *value*: one int64 per row packs the score's order-preserving bits (top),
    the reversed docno rank (middle) and the row's column (low bits), so one ``np.sort`` of
    the keys gives the order and the column gives the row back. When two different scores
    share the packed top bits (scores within about 1e-9 of each other), that piece is redone
    with an exact argsort of the scores followed by a packed sort of the tie groups.

    The blocks are processed in pieces of about ``_CHUNK_CELLS`` rows, by two threads (numpy
    releases the GIL in sorts and gathers): every temporary is piece-sized, and only the
    results — relevance, the column order (int16 for blocks up to 32767 rows) and
    (``keep_docnos``) docno rank of each row in rank order — are allocated at full size.
    Returns ``(rel, a callable giving the ranked scores, query indices present,
    docno ranks or None)``; None sends the caller to the general path, which also reports
    duplicate documents.
    """
    n = len(qc)
    if n == 0 or n_d <= 0:
        return None
    # equal qid codes = equal query indices (distinct judged qids have distinct indices)
    brk = np.flatnonzero(qc[1:] != qc[:-1]) + 1
    n_b = len(brk) + 1
    if n % n_b:
        return None
    w = n // n_b
    if len(brk) and not np.array_equal(brk, np.arange(w, n, w)):
        return None  # blocks of unequal length
    del brk
    first = qval[qc[::w]].astype(np.int64)
    border = np.argsort(first, kind="stable")
    present = first[border]
    if n_b > 1 and not (present[1:] > present[:-1]).all():
        return None  # a query split over several blocks
    bw, bd = _bits(w), _bits(n_d)
    if 2 * bw + bd > 62:
        return None
    in_order = bool(np.array_equal(border, np.arange(n_b)))
    relevance = make_relevance()
    out_row = np.empty(n_b, dtype=np.int64)
    out_row[border] = np.arange(n_b)
    c2 = dcode.reshape(n_b, w)
    s2 = score.reshape(n_b, w)
    rel_out = pooled_empty((n_b, w), relevance.dtype)
    # the column order of every block (int16 when it fits): the ranked scores are gathered
    # from it only if someone asks for Ranked.score
    perm_out = pooled_empty((n_b, w), np.int16 if w <= np.iinfo(np.int16).max else np.int64)
    drank_out = np.empty((n_b, w), dtype=rank_of_code.dtype) if keep_docnos else None
    # docno ranks fit int16 in most collections: a 16-bit sort is a radix sort
    small_ranks = n_d <= np.iinfo(np.int16).max
    low = bd + bw
    mask = np.int64((1 << bw) - 1)
    col = np.arange(w, dtype=np.int64)
    step = max(1, _CHUNK_CELLS // w)

    def piece(lo: int) -> bool:
        hi = min(lo + step, n_b)
        s = s2[lo:hi]
        d = rank_of_code[c2[lo:hi]]
        ds = np.sort(d.astype(np.int16) if small_ranks else d, axis=1, kind="stable")
        if (ds[:, 1:] == ds[:, :-1]).any():
            return False  # a duplicate document: the general path reports it
        del ds
        key = _score_key(s)
        key >>= np.int64(low)
        key <<= np.int64(low)
        rd = np.subtract(np.int64(n_d - 1), d, dtype=np.int64)  # docno rank descending
        rd <<= np.int64(bw)
        rd |= col
        key |= rd
        key.sort(axis=1)
        perm = np.bitwise_and(key, mask, out=rd)
        key >>= np.int64(low)                   # in place: the packed score bits
        ranked = np.take_along_axis(s, perm, axis=1)
        same_top = key[:, 1:] == key[:, :-1]
        same_top &= ranked[:, 1:] != ranked[:, :-1]
        if same_top.any():
            perm = _exact_order(s, d, n_d, low, bw, col, mask)
        dsorted = np.take_along_axis(d, perm, axis=1)
        rows = slice(lo, hi) if in_order else out_row[lo:hi]
        perm_out[rows] = perm
        rel_out[rows] = relevance(first[lo:hi], dsorted)
        if drank_out is not None:
            drank_out[rows] = dsorted
        return True

    starts = range(0, n_b, step)
    if len(starts) > 1:
        with ThreadPoolExecutor(2) as pool:
            ok = all(pool.map(piece, starts))
    else:
        ok = piece(0)
    if not ok:
        return None
    def ranked_score() -> np.ndarray:
        blocks = s2 if in_order else s2[border]
        return np.take_along_axis(blocks, perm_out.astype(np.intp), axis=1).ravel()

    return (rel_out.ravel(), ranked_score, present,
            drank_out.ravel() if drank_out is not None else None)


def _exact_order(s: np.ndarray, d: np.ndarray, n_d: int, low: int, bw: int, col: np.ndarray,
                 mask: np.int64) -> np.ndarray:
    """Column order of each row by exact score descending, then docno rank descending."""
    kd = _score_key(s)
    perm = np.argsort(kd, axis=1, kind="stable")
    kds = np.take_along_axis(kd, perm, axis=1)
    group = np.zeros(kds.shape, dtype=np.int64)
    np.cumsum(kds[:, 1:] != kds[:, :-1], axis=1, out=group[:, 1:])
    rd = np.subtract(np.int64(n_d - 1), np.take_along_axis(d, perm, axis=1), dtype=np.int64)
    key = (group << np.int64(low)) | (rd << np.int64(bw)) | col
    key.sort(axis=1)
    return np.take_along_axis(perm, key & mask, axis=1)


def _score_key(score: np.ndarray) -> np.ndarray:
    """int64 keys whose ascending order is the scores' descending order (-0.0 == 0.0)."""
    kd = (score + 0.0).view(np.int64)
    np.bitwise_xor(kd, np.int64(0x7FFFFFFFFFFFFFFF), out=kd, where=kd < 0)
    np.invert(kd, out=kd)
    return kd


class _Relevance:
    """The rel value (module docstring) of run documents, from a (query, docno) table.

    Run docnos are matched to the qrels' docnos on the distinct values only; a (query,
    judged docno) table — dense, in Ranked.rel's type, when small enough, else a hash index —
    gives each (query, docno rank) its rel value: NONPOOL if not in the qrels, UNJUDGED for a
    negative grade, else the grade. A duplicate judgment leaves one of its grades in the
    table; that only matters for an evaluated query, and _finish then refuses it. Calling it
    with query indices ``qidx[r]`` and docno ranks ``dr[r, w]`` gives ``rel[r, w]``.
    """

    def __init__(self, n_q: int, n_d: int, drank_u: np.ndarray, duniq: Any,
                 strings: _Strings, q: Columns, qi_q: np.ndarray, dcode_q: np.ndarray,
                 duniq_q: Any) -> None:
        grade = q.value
        gmin = min(int(grade.min()), 0) if len(grade) else 0
        gmax = max(int(grade.max()), 0) if len(grade) else 0
        lut = np.arange(gmin - 1, gmax + 1, dtype=np.int64)
        lut[0] = NONPOOL
        lut[1:][lut[1:] < 0] = UNJUDGED
        self.dtype = rel_dtype(gmax)
        # each judgment's rel value (narrowed only once negative grades are UNJUDGED)
        relv = lut.astype(self.dtype)[grade - gmin + 1]
        # columns: the run's docnos that are judged for some query (others are NONPOOL)
        # run docno value -> qrels docno code (-1: not judged anywhere); both are distinct
        # values, so the smaller set is hashed and the larger one probes it
        if len(duniq) <= len(duniq_q):
            run_of_q = strings.lookup(duniq_q, duniq)
            in_q = np.full(len(duniq), -1, dtype=np.int64)
            hit = np.flatnonzero(run_of_q >= 0)
            in_q[run_of_q[hit]] = hit
        else:
            in_q = strings.lookup(duniq, duniq_q)
        judged_u = in_q >= 0
        n_cols = int(np.count_nonzero(judged_u)) + 1
        col_u = np.where(judged_u, np.cumsum(judged_u) - 1, n_cols - 1)
        # keys (query, column) in int32 when the table allows: half the bytes per judgment
        ktype = np.int32 if n_q * n_cols < 2**31 else np.int64
        self.ktype = ktype
        self.col_of_rank = np.empty(n_d, dtype=ktype)
        self.col_of_rank[drank_u] = col_u
        col_of_qcode = np.full(len(duniq_q), -1, dtype=ktype)
        col_of_qcode[in_q[judged_u]] = col_u[judged_u]
        qcol = col_of_qcode[dcode_q]
        keep = qcol >= 0
        qkey = qi_q[keep].astype(ktype)
        qkey *= ktype(n_cols)
        qkey += qcol[keep]
        del qcol
        self.n_cols = n_cols
        if n_q * n_cols <= _MAX_DENSE_CELLS:
            # the table holds rel values themselves: NONPOOL where nothing is judged
            self.table = pooled_empty(n_q * n_cols, self.dtype)
            self.table.fill(NONPOOL)
            self.table[qkey] = relv[keep]
            self.index = None
        else:
            import pandas as pd

            self.table = None
            self.index = pd.Index(qkey)
            self.relv = relv[keep]

    def __call__(self, qidx: np.ndarray, dr: np.ndarray) -> np.ndarray:
        key = self.col_of_rank[dr]
        key += (qidx.astype(self.ktype) * self.ktype(self.n_cols))[:, None]
        if self.table is not None:
            return self.table[key]
        at = self.index.get_indexer(key.ravel()).reshape(key.shape)
        out = np.full(key.shape, NONPOOL, dtype=self.dtype)
        hit = at >= 0
        out[hit] = self.relv[at[hit]]
        return out


def _slow_order(qi: np.ndarray, drank: np.ndarray, score: np.ndarray, n_q: int, n_d: int,
                drank_u: np.ndarray, duniq: Any, strings: _Strings, q: Columns,
                qi_q: np.ndarray, qids: np.ndarray, run_name: str, max_results: int | None,
                keep_docnos: bool) -> tuple:
    """Any layout: join through a sort of packed keys, rank, and check duplicate documents."""
    # ---- relevance of each run row: join on packed (query, docno) keys
    rkey = qi.astype(np.int64) * n_d + drank
    by_key = _key_order(qi, drank, n_q)
    if by_key is None:
        by_key = np.argsort(rkey, kind="stable")
    rsorted = rkey[by_key]
    del rkey
    qd = strings.lookup(q.docno, duniq)
    has = qd >= 0
    qkey = qi_q[has].astype(np.int64) * n_d + drank_u[qd[has]]
    grade = q.value[has]
    rel = np.full(len(rsorted), NONPOOL, dtype=np.int64)
    if len(rsorted) and len(qkey):
        at = np.minimum(np.searchsorted(rsorted, qkey), len(rsorted) - 1)
        hit = rsorted[at] == qkey
        rel[by_key[at[hit]]] = np.where(grade[hit] < 0, UNJUDGED, grade[hit])
        del at, hit
    del qd, has, qkey, grade
    dup_at = np.flatnonzero(rsorted[1:] == rsorted[:-1])
    dup_pairs = (by_key[dup_at], by_key[dup_at + 1], rsorted[dup_at]) if len(dup_at) else None
    del rsorted, dup_at

    # ---- rank: query asc, score desc, docno desc (byte order)
    order = _rank_order(qi, score, drank, n_q, n_d, by_key)
    del by_key
    counts = np.bincount(qi, minlength=n_q).astype(np.int64)
    score, rel = score[order], rel[order]
    drank_sorted = drank[order] if keep_docnos else None
    starts = np.concatenate(([0], np.cumsum(counts)))[:-1]
    pos = np.arange(len(order), dtype=np.int64) - np.repeat(starts, counts)

    # ---- duplicates in the run (trec_eval checks the documents it keeps, after -M)
    if dup_pairs is not None:
        a, b, keys = dup_pairs
        rank_of = np.empty(len(order), dtype=np.int64)
        rank_of[order] = pos
        limit = np.iinfo(np.int64).max if max_results is None else int(max_results)
        bad = (rank_of[a] < limit) & (rank_of[b] < limit)
        if bad.any():
            row = a[bad][0]
            count = int(np.count_nonzero((drank == drank[row]) & (qi == qi[row])))
            uniq_index = int(np.argsort(drank_u)[drank[row]])
            docno_text = str(strings.to_object(strings.take_index(duniq, uniq_index))[0])
            raise InputError(
                f"{run_name}: document {docno_text!r} is listed {count} times for query "
                f"{qids[qi[row]]!r}; trec_eval stops with 'duplicate docs' on such a run. "
                f"Keep one line per (qid, docno), e.g. the one with the highest score."
            )
    del order
    gmax = int(q.value.max()) if len(q.value) else 0
    return rel.astype(rel_dtype(gmax), copy=False), score, counts, drank_sorted, pos


def _finish(q: Columns, strings: _Strings, qids: np.ndarray, rel: np.ndarray,
            score: Any, counts: np.ndarray, drank_sorted: np.ndarray | None,
            pos: np.ndarray | None, duniq: Any, drank_u: np.ndarray,
            dup_rows: np.ndarray | None, qi_q: np.ndarray, n_q: int, rel_levels: np.ndarray,
            level: int, max_results: int | None, complete: bool, keep_docnos: bool,
            run_name: str, runid: str, ignored: int, run_examples: list[str]) -> Ranked:
    """-M, -c, duplicate judgments and the final CSR layout (shared by both orderings)."""
    docno = None
    if keep_docnos:
        docno = strings.to_object(duniq)[np.argsort(drank_u)][drank_sorted]
    if callable(score) and (max_results is not None or complete):
        score = score()
    # a query is in the run if it has lines there, even when -M 0 keeps none of them
    # (trec_eval evaluates it on an empty ranking)
    in_run = counts > 0
    if max_results is not None:
        keep = pos < int(max_results)
        score, rel = score[keep], rel[keep]
        docno = docno[keep] if docno is not None else None
        counts = np.minimum(counts, int(max_results))
    del pos

    _check_overlap(in_run, qids, q.name, run_name, ignored, run_examples, complete)
    if dup_rows is not None:
        evaluated = np.ones(n_q, dtype=bool) if complete else in_run
        bad = dup_rows[evaluated[qi_q[dup_rows]]]
        if len(bad):
            row = int(bad[0])
            same = bad[qi_q[bad] == qi_q[row]]
            docno_text = strings.item(q.docno, row)
            count = sum(strings.item(q.docno, int(i)) == docno_text for i in same)
            raise InputError(
                f"{q.name}: document {docno_text!r} is judged {count} times for query "
                f"{strings.item(q.qid, row)!r}; trec_eval refuses duplicate judgments too. "
                f"Keep one judgment per (qid, docno)."
            )
    if complete:
        missing = ~in_run
        if missing.any() and max_results != 0:
            # trec_eval -c: a one-document stand-in ranking (an unjudged docno, score 1);
            # -M 0 cuts it too
            where = np.concatenate(([0], np.cumsum(counts)))[:-1][missing]
            counts = np.where(missing, 1, counts)
            score = np.insert(score, where, 1.0)
            rel = np.insert(rel, where, NONPOOL)
            if docno is not None:
                docno = np.insert(docno, where, MISSING_DOCNO)
        keep_q = np.ones(n_q, dtype=bool)
    else:
        missing = np.zeros(n_q, dtype=bool)
        keep_q = in_run
    if not keep_q.all():
        counts, qids = counts[keep_q], qids[keep_q]
        rel_levels, missing = rel_levels[keep_q], missing[keep_q]
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return Ranked(
        qids=qids, offsets=offsets, rel=rel, score_source=score, rel_levels=rel_levels,
        relevance_level=level, missing=missing, runid=runid, n_qrels_queries=n_q,
        ignored_run_queries=int(ignored), complete=bool(complete), docno=docno,
    )


def _check_overlap(in_run: np.ndarray, qids: np.ndarray, qrels_name: str, run_name: str,
                   ignored: int, run_examples: list[str], complete: bool) -> None:
    """The error or warning for queries judged but not run (module docstring)."""
    n_q = len(qids)
    n_in = int(np.count_nonzero(in_run))
    if n_in == 0:
        judged = _some(n_q, qids)
        ran = _some(ignored, run_examples)
        if not complete:
            raise InputError(
                f"no query has both judgments in {qrels_name} ({judged}) and results in "
                f"{run_name} ({ran}) (trec_eval: 'No queries with both results and relevance "
                f"info'); check that the qids match"
            )
        warnings.warn(NoSharedQueriesWarning(
            f"no query id is shared by {qrels_name} ({judged}) and {run_name} ({ran}): with "
            f"-c (complete=True) every judged query is scored on trec_eval's one-document "
            f"stand-in ranking, so the numbers say nothing about the run; check that the "
            f"qids match"
        ), stacklevel=_outside_stacklevel())
    elif n_in < n_q and not complete:
        skipped = qids[~in_run]
        warnings.warn(SkippedQueriesWarning(
            f"{len(skipped)} of {n_q} judged queries in {qrels_name} have no results in "
            f"{run_name} (e.g. {_examples(skipped)}): they are left out, so every mean "
            f"covers the other {n_in}; use -c (complete=True) to score them as trec_eval -c "
            f"does (0 on almost every measure) and average over all {n_q}. trec_eval 10.0 "
            f"stops with an error on such a run; earlier versions skipped the queries, as "
            f"onlineeval does"
        ), stacklevel=_outside_stacklevel())


def _some(n: int, values: Any) -> str:
    """"3 queries, e.g. '1', '2', '3'" (or "no queries") for a message."""
    if n == 0:
        return "no queries"
    return f"{n} {'query' if n == 1 else 'queries'}, e.g. {_examples(values, n)}"


def _examples(values: Any, n: int | None = None, k: int = 3) -> str:
    """The first ``k`` of ``values`` (``n`` of them in all, default ``len(values)``)."""
    shown = ", ".join(repr(str(v)) for v in list(values[:k]))
    return shown + (", ..." if (len(values) if n is None else n) > k else "")


_PACKAGE_DIR = str(Path(__file__).resolve().parents[1]) + os.sep


def _outside_stacklevel() -> int:
    """The ``stacklevel`` that attributes a warning to the first caller outside onlineeval
    (how deep ``prepare`` sits depends on the entry point: evaluate, trec_eval, compare)."""
    frame = sys._getframe(1)   # the function that warns: stacklevel 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def _bits(n: int) -> int:
    return max(int(n - 1).bit_length(), 1)


def _key_order(qi: np.ndarray, drank: np.ndarray, n_q: int) -> np.ndarray | None:
    """Rows ordered by (query, docno rank) when the run lists each query in one block of the
    same length (the usual layout); None otherwise (the caller sorts globally).

    Sorting each block on its own is much faster than one global sort of 10M keys.
    """
    n = len(qi)
    if n == 0:
        return None
    changes = np.count_nonzero(qi[1:] != qi[:-1])
    n_blocks = changes + 1
    if n % n_blocks:
        return None
    width = n // n_blocks
    blocks = np.arange(n, dtype=np.int64).reshape(n_blocks, width)
    first = qi[::width]
    if not np.array_equal(qi.reshape(n_blocks, width), np.repeat(first, width)
                          .reshape(n_blocks, width)):
        return None  # blocks of unequal length
    if len(np.unique(first)) != n_blocks:
        return None  # a query split over several blocks
    blocks = blocks[np.argsort(first)]
    within = np.argsort(drank[blocks], axis=1, kind="stable")
    return np.take_along_axis(blocks, within, axis=1).ravel()


def _rank_order(qi: np.ndarray, score: np.ndarray, drank: np.ndarray, n_q: int,
                n_d: int, by_key: np.ndarray) -> np.ndarray:
    """Permutation sorting rows by (query asc, score desc, docno rank desc).

    ``by_key`` already orders the rows by (query, docno rank). Reversing it gives docno rank
    descending within each query; a stable sort by score descending inside each query then
    breaks score ties by docno descending, as trec_eval does. Queries are laid out as the rows
    of a padded 2-D array so each query sorts on its own (fast, no global float sort) when
    padding costs little; otherwise a global lexsort does the same.
    """
    n = len(qi)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    counts = np.bincount(qi, minlength=n_q)
    width = int(counts.max())
    rev = by_key[::-1]                         # query desc, docno rank desc
    if n % width == 0 and np.all((counts == 0) | (counts == width)):
        # every query has the same number of rows (typical: 1000 per query): no padding
        rows = rev.reshape(-1, width)
        within = np.argsort(-score[rows], axis=1, kind="stable")
        return np.take_along_axis(rows, within, axis=1)[::-1].ravel()
    if n_q * width <= 2 * n + 1024:
        q_rev = qi[rev]
        starts = np.concatenate(([0], np.cumsum(counts)))
        # row of the padded array: query index; column: position within the query
        col = np.arange(n, dtype=np.int64) - (n - starts[q_rev + 1])
        grid = np.full((n_q, width), np.inf)
        grid[q_rev, col] = -score[rev]
        within = np.argsort(grid, axis=1, kind="stable")
        rows_of = np.full((n_q, width), -1, dtype=np.int64)
        rows_of[q_rev, col] = rev
        order = np.take_along_axis(rows_of, within, axis=1).ravel()
        return order[order >= 0]
    return np.lexsort((-drank, -score, qi))


class _Strings:
    """String-column operations on pyarrow arrays (fast path) or numpy object arrays."""

    def __init__(self, arrow: bool) -> None:
        self.arrow = arrow
        if arrow:
            import pyarrow as pa
            import pyarrow.compute as pc
            self.pa, self.pc = pa, pc

    @classmethod
    def for_columns(cls, *cols: Columns) -> _Strings:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            return cls(False)
        return cls(True)

    def _arr(self, col: Any) -> Any:
        if self.arrow:
            if isinstance(col, self.pa.ChunkedArray) and col.num_chunks == 1:
                return col.chunk(0)
            if isinstance(col, self.pa.ChunkedArray | self.pa.Array):
                return col
            return self.pa.array(np.asarray(col, dtype=object), type=self.pa.string())
        if isinstance(col, np.ndarray):
            return col
        return np.asarray(col.to_pylist(), dtype=object)

    def encode(self, col: Any) -> tuple[np.ndarray, Any]:
        """(int codes, distinct values) of a string column."""
        col = self._arr(col)
        if self.arrow:
            enc = col if self._is_dict(col) else self.pc.dictionary_encode(col)
            if isinstance(enc, self.pa.ChunkedArray):
                enc = enc.combine_chunks()  # unifies the chunks' dictionaries
            return arrow_to_numpy(enc.indices), enc.dictionary
        import pandas as pd

        codes, uniq = pd.factorize(col)
        return codes, np.asarray(uniq, dtype=object)

    def _is_dict(self, col: Any) -> bool:
        return isinstance(col, self.pa.DictionaryArray)

    def byte_rank(self, uniq: Any) -> np.ndarray:
        if self.arrow:
            order = arrow_to_numpy(self.pc.sort_indices(uniq))
        else:
            order = np.argsort(np.asarray(uniq, dtype=object), kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        return rank

    def lookup_map(self, col: Any, uniq: Any, values: np.ndarray) -> np.ndarray:
        """``values[i]`` for each row whose value is ``uniq[i]``; -1 where absent.

        int32 when the values allow. For a dictionary column only its distinct values are
        looked up.
        """
        small = np.int32 if len(values) == 0 or int(values.max()) < 2**31 - 1 else np.int64
        col = self._arr(col)
        if self.arrow and self._is_dict(col):
            idx = self.lookup(col.dictionary, uniq)
            mapped = np.where(idx >= 0, values[np.maximum(idx, 0)], -1).astype(small)
            return mapped[arrow_to_numpy(col.indices)]
        idx = self.lookup(col, uniq)
        return np.where(idx >= 0, values[np.maximum(idx, 0)], -1).astype(small)

    def lookup(self, col: Any, uniq: Any) -> np.ndarray:
        """Index of each value of ``col`` in ``uniq``; -1 where absent."""
        col = self._arr(col)
        if self.arrow:
            if self._is_dict(col):  # look up the distinct values only
                per_value = self.pc.index_in(col.dictionary, value_set=uniq)
                per_value = arrow_index_to_numpy(per_value)
                return per_value[arrow_to_numpy(col.indices)]
            idx = self.pc.index_in(col, value_set=uniq)
            return arrow_index_to_numpy(idx)
        import pandas as pd

        return pd.Index(uniq).get_indexer(col)

    def take(self, col: Any, mask: np.ndarray) -> Any:
        col = self._arr(col)
        if self.arrow:
            return col.filter(self.pa.array(mask))
        return col[mask]

    def take_index(self, col: Any, i: int) -> Any:
        col = self._arr(col)
        return col.take(self.pa.array([int(i)])) if self.arrow else col[[int(i)]]

    def to_object(self, col: Any) -> np.ndarray:
        col = self._arr(col)
        if self.arrow:
            return np.asarray(col.to_pylist(), dtype=object)
        return np.asarray(col, dtype=object)

    def item(self, col: Any, i: int) -> str:
        col = self._arr(col)
        return str(col[i].as_py() if self.arrow else col[i])  # ChunkedArray indexes globally
