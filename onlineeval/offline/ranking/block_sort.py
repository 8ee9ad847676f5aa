"""trec_eval's ranking for the usual run layout: each query one block, sorted on its own.

The layout: each query's rows form one block of the file, all blocks equally long, and no
document repeats within a query (checked, not assumed). Each block is then sorted as one row of
a 2-D array by *value*: one int64 per row packs the score's order-preserving bits (top), the
reversed docno rank (middle) and the row's column (low bits), so one ``np.sort`` of the keys
gives the order and the column gives the row back. When two different scores share the packed
top bits (scores within about 1e-9 of each other), that piece is redone with an exact argsort
of the scores followed by a packed sort of the tie groups.

The blocks are processed in pieces of about ``_CHUNK_CELLS`` rows by two threads (numpy
releases the GIL in sorts and gathers): every temporary is piece-sized, and only the results —
relevance, the column order (int16 for blocks up to 32767 rows) and (``keep_docnos``) the docno
rank of each row in rank order — are allocated at full size. Any other layout, and every
duplicate document, goes to :mod:`~onlineeval.offline.ranking.general_sort`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from onlineeval.offline.arrow_arrays import pooled_empty
from onlineeval.offline.ranking.judgments import Judgments
from onlineeval.offline.ranking.layout import Options, RunOrder, positions
from onlineeval.offline.ranking.relevance_table import RelevanceTable
from onlineeval.offline.ranking.run_codes import RunCodes

_CHUNK_CELLS = 1 << 17       # run rows per piece (small temporaries, two threads)


def bits(n: int) -> int:
    """Bits that hold the values 0..n-1 (at least 1)."""
    return max(int(n - 1).bit_length(), 1)


def rank_blocks(run: RunCodes, judgments: Judgments, options: Options) -> RunOrder | None:
    """trec_eval's ranking and each row's relevance for the usual layout; else None.

    Rows come as codes: ``run.query_code`` (``run.query_of_code[code]`` is the row's query
    index, all >= 0) and ``run.docno_code`` (its rank is ``run.rank_of_code()[code]``), so no
    per-row query or rank array is built. None sends the caller to the general path, which
    also reports duplicate documents.
    """
    qc, qval, dcode, score = run.query_code, run.query_of_code, run.docno_code, run.score
    n_d = run.n_docnos
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
    bw, bd = bits(w), bits(n_d)
    if 2 * bw + bd > 62:
        return None
    rank_of_code = run.rank_of_code()
    in_order = bool(np.array_equal(border, np.arange(n_b)))
    relevance = RelevanceTable(judgments, run)
    out_row = np.empty(n_b, dtype=np.int64)
    out_row[border] = np.arange(n_b)
    c2 = dcode.reshape(n_b, w)
    s2 = score.reshape(n_b, w)
    rel_out = pooled_empty((n_b, w), relevance.dtype)
    # the column order of every block (int16 when it fits): the ranked scores are gathered
    # from it only if someone asks for Ranked.score
    perm_out = pooled_empty((n_b, w), np.int16 if w <= np.iinfo(np.int16).max else np.int64)
    drank_out = (np.empty((n_b, w), dtype=rank_of_code.dtype) if options.keep_docnos
                 else None)
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
        key = score_key(s)
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

    counts = np.zeros(judgments.n_queries, dtype=np.int64)
    counts[present] = w
    return RunOrder(rel_out.ravel(), ranked_score, counts,
                    drank_out.ravel() if drank_out is not None else None,
                    positions(counts) if options.max_results is not None else None)


def _exact_order(s: np.ndarray, d: np.ndarray, n_d: int, low: int, bw: int, col: np.ndarray,
                 mask: np.int64) -> np.ndarray:
    """Column order of each row by exact score descending, then docno rank descending."""
    kd = score_key(s)
    perm = np.argsort(kd, axis=1, kind="stable")
    kds = np.take_along_axis(kd, perm, axis=1)
    group = np.zeros(kds.shape, dtype=np.int64)
    np.cumsum(kds[:, 1:] != kds[:, :-1], axis=1, out=group[:, 1:])
    rd = np.subtract(np.int64(n_d - 1), np.take_along_axis(d, perm, axis=1), dtype=np.int64)
    key = (group << np.int64(low)) | (rd << np.int64(bw)) | col
    key.sort(axis=1)
    return np.take_along_axis(perm, key & mask, axis=1)


def score_key(score: np.ndarray) -> np.ndarray:
    """int64 keys whose ascending order is the scores' descending order (-0.0 == 0.0)."""
    kd = (score + 0.0).view(np.int64)
    np.bitwise_xor(kd, np.int64(0x7FFFFFFFFFFFFFFF), out=kd, where=kd < 0)
    np.invert(kd, out=kd)
    return kd
