"""trec_eval's ranking for any run layout, and the error for a document listed twice.

Rows are joined to the judgments through a sort of packed (query, docno rank) keys, then
ordered by query, score descending and docno descending (byte order), as trec_eval's
``form_res_rels.c`` orders them: a stable sort by score within each query of the rows taken
in (query, docno rank descending) order. Queries are laid out as the rows of a padded 2-D
array when padding costs little, so each sorts on its own; otherwise one global lexsort.
"""

from __future__ import annotations

import numpy as np

from onlineeval.errors import InputError
from onlineeval.offline.ranking import string_codes as sc
from onlineeval.offline.ranking.judgments import Judgments
from onlineeval.offline.ranking.layout import Options, RunOrder
from onlineeval.offline.ranking.ranked import NONPOOL, UNJUDGED, rel_dtype
from onlineeval.offline.ranking.run_codes import RunCodes


def rank_rows(run: RunCodes, judgments: Judgments, options: Options) -> RunOrder:
    """Relevance and rank order of every run row; an InputError for a duplicate document."""
    qi = run.query_index()
    dcode, duniq, drank_u = run.docno_codes()
    n_d = max(len(drank_u), 1)
    drank = drank_u.astype(np.int32 if n_d < 2**31 else np.int64)[dcode]
    del dcode
    score = run.score
    n_q = judgments.n_queries
    # ---- relevance of each run row: join on packed (query, docno) keys
    rkey = qi.astype(np.int64) * n_d + drank
    by_key = _key_order(qi, drank)
    if by_key is None:
        by_key = np.argsort(rkey, kind="stable")
    rsorted = rkey[by_key]
    del rkey
    jcode, juniq = judgments.docno_codes()
    qd = sc.lookup(juniq, duniq)[jcode]
    has = qd >= 0
    qkey = judgments.query[has].astype(np.int64) * n_d + drank_u[qd[has]]
    grade = judgments.grade[has]
    rel = np.full(len(rsorted), NONPOOL, dtype=np.int64)
    if len(rsorted) and len(qkey):
        at = np.minimum(np.searchsorted(rsorted, qkey), len(rsorted) - 1)
        hit = rsorted[at] == qkey
        rel[by_key[at[hit]]] = np.where(grade[hit] < 0, UNJUDGED, grade[hit])
        del at, hit
    del qd, has, qkey, grade
    dup_at = np.flatnonzero(rsorted[1:] == rsorted[:-1])
    dup_pairs = (by_key[dup_at], by_key[dup_at + 1]) if len(dup_at) else None
    del rsorted, dup_at

    # ---- rank: query asc, score desc, docno desc (byte order)
    order = _rank_order(qi, score, drank, n_q, by_key)
    del by_key
    counts = np.bincount(qi, minlength=n_q).astype(np.int64)
    score, rel = score[order], rel[order]
    starts = np.concatenate(([0], np.cumsum(counts)))[:-1]
    pos = np.arange(len(order), dtype=np.int64) - np.repeat(starts, counts)

    # ---- duplicates in the run (trec_eval checks the documents it keeps, after -M)
    if dup_pairs is not None:
        a, b = dup_pairs
        rank_of = np.empty(len(order), dtype=np.int64)
        rank_of[order] = pos
        limit = (np.iinfo(np.int64).max if options.max_results is None
                 else int(options.max_results))
        bad = (rank_of[a] < limit) & (rank_of[b] < limit)
        if bad.any():
            row = a[bad][0]
            count = int(np.count_nonzero((drank == drank[row]) & (qi == qi[row])))
            docno_text = sc.item(run.docno, int(row))
            raise InputError(
                f"{run.name}: document {docno_text!r} is listed {count} times for query "
                f"{judgments.qids[qi[row]]!r}; trec_eval stops with 'duplicate docs' on such "
                f"a run. Keep one line per (qid, docno), e.g. the one with the highest score."
            )
    gmax = int(judgments.grade.max()) if len(judgments.grade) else 0
    return RunOrder(rel.astype(rel_dtype(gmax), copy=False), score, counts, order, pos)


def _key_order(qi: np.ndarray, drank: np.ndarray) -> np.ndarray | None:
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
                by_key: np.ndarray) -> np.ndarray:
    """Permutation sorting rows by (query asc, score desc, docno rank desc).

    ``by_key`` already orders the rows by (query, docno rank). Reversing it gives docno rank
    descending within each query; a stable sort by score descending inside each query then
    breaks score ties by docno descending, as trec_eval does.
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
