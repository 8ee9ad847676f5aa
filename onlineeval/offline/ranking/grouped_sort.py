"""trec_eval's ranking and each row's relevance when the run lists each query in one block.

The usual layout of a run file: each query's rows are contiguous (blocks of any lengths, in
any query order), no document repeats within a query. Blocks are laid out as the rows of a
padded 2-D array, so every step sorts short rows instead of one long array:

join
    Each row of a join grid holds a block's run documents and that query's judged documents,
    as ``hash-bits | column`` keys (:mod:`~onlineeval.offline.ranking.docno_keys`); sorting a
    row puts equal hashes side by side, and the column says which document each came from.
    A run document next to a judged one with the same hash is judged (confirmed by comparing
    the docnos); a hash shared by two run documents is a duplicate (or a collision), which
    sends the run to the general path (it reports duplicates).
rank
    Each row of a rank grid holds a block's ``score-bits | column`` keys, so one sort orders
    a query by score descending. Scores that differ only below the packed bits are re-sorted
    exactly; runs of equal scores (ties) are re-sorted by docno descending in byte order
    (trec_eval's ``strcmp`` tie-break), ranking only the tied docnos. Blocks already in
    score order (runs are usually written so) skip the sort: only their ties are ordered.

Pieces of about ``_CHUNK_CELLS`` cells are processed by two threads (numpy releases the GIL in
sorts and gathers): every temporary is piece-sized. None sends the caller to
:mod:`~onlineeval.offline.ranking.general_sort`: another layout, too much padding, a
duplicate document, a hash collision, docnos too long to hash.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from itertools import chain, repeat

import numpy as np

from onlineeval.offline.arrow_arrays import arrow_to_numpy, pooled_empty
from onlineeval.offline.ranking import string_codes as sc
from onlineeval.offline.ranking.docno_keys import DocnoKeys, PythonKeys
from onlineeval.offline.ranking.judgments import Judgments
from onlineeval.offline.ranking.layout import Options, RunOrder, positions
from onlineeval.offline.ranking.ranked import NONPOOL, UNJUDGED, rel_dtype
from onlineeval.offline.ranking.run_codes import RunCodes
from onlineeval.offline.reading.columns import TextList

_CHUNK_CELLS = 1 << 17       # grid cells per piece (small temporaries, two threads)
_MAX_DENSE_CELLS = 1 << 28   # (block, judged docno) cells of a dense relevance table
_U64_MAX = np.uint64(np.iinfo(np.uint64).max)
_I64_MAX = np.int64(np.iinfo(np.int64).max)


Keys = DocnoKeys | PythonKeys


class _Fallback(Exception):
    """The layout or the data need the general path."""


def bits(n: int) -> int:
    """Bits that hold the values 0..n-1 (at least 1)."""
    return max(int(n - 1).bit_length(), 1)


def score_key(score: np.ndarray) -> np.ndarray:
    """int64 keys whose ascending order is the scores' descending order (-0.0 == 0.0)."""
    kd = (score + 0.0).view(np.int64)
    np.bitwise_xor(kd, np.int64(0x7FFFFFFFFFFFFFFF), out=kd, where=kd < 0)
    np.invert(kd, out=kd)
    return kd


def _run_pieces(n_rows: int, width: int, piece: object) -> None:
    """Call ``piece(lo, hi)`` on consecutive ranges of grid rows, two threads at a time."""
    step = max(1, _CHUNK_CELLS // max(width, 1))
    starts = range(0, n_rows, step)
    if len(starts) > 1:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda lo: piece(lo, min(lo + step, n_rows)), starts))
    elif n_rows:
        piece(0, n_rows)


def rank_groups(run: RunCodes, judgments: Judgments, options: Options) -> RunOrder | None:
    """The ranking and relevance of every row for the grouped layout; None otherwise."""
    qc, score = run.query_code, run.score
    n = len(qc)
    if n == 0:
        return None
    # ---- blocks: one per query, contiguous
    starts = np.flatnonzero(qc[1:] != qc[:-1]) + 1
    starts = np.concatenate(([0], starts)).astype(np.int64)
    lens = np.diff(np.append(starts, n))
    n_b = len(starts)
    block_query = run.query_of_code[qc[starts]].astype(np.int64)
    border = np.argsort(block_query, kind="stable")
    if n_b > 1 and not (np.diff(block_query[border]) > 0).all():
        return None  # a query in several blocks
    w = int(lens.max())
    if n_b * w > 2 * n + 1024:
        return None  # too much padding
    try:
        if _from_dicts(run, judgments):
            keys, dense = run.keys, None
            rel = _dict_join(run, judgments, starts, lens, block_query)
        else:
            keys, jkeys = run.keys, judgments.keys
            if keys is not None and jkeys is not None and keys.kind != jkeys.kind:
                # a dict's keys against an arrow column: key both by their bytes
                keys = DocnoKeys.of(run.docno, "bytes")
                jkeys = DocnoKeys.of(judgments.docno, "bytes")
            if keys is None or jkeys is None:
                return None
            dense = _dense_table(keys, jkeys, judgments, block_query)
            if dense is None:
                rel = _join(keys, jkeys, judgments, starts, lens, block_query, w)
            else:
                rel = np.full(n, NONPOOL, dtype=dense[0].dtype)
        rows = _rank(keys, score, starts, lens, w, dense, rel)
    except _Fallback:
        return None
    # blocks in query order, rows in rank order: the ranked run rows, then their rel codes
    if not np.array_equal(border, np.arange(n_b)):
        rows = rows[border]
    ranked_rows = rows[np.arange(w) < lens[border][:, None]]
    del rows
    counts = np.zeros(judgments.n_queries, dtype=np.int64)
    counts[block_query] = lens
    rel_sorted = rel[ranked_rows]

    def ranked_score() -> np.ndarray:
        return score[ranked_rows]

    return RunOrder(rel_sorted, ranked_score, counts, ranked_rows,
                    positions(counts) if options.max_results is not None else None)


def _dense_table(keys: Keys, jkeys: Keys, judgments: Judgments,
                 block_query: np.ndarray) -> tuple[np.ndarray, int, np.ndarray] | None:
    """A (block, judged docno) table of rel codes, when both sides are small dictionaries
    whose keys are exact: ``(table, columns per block, column of each run docno code)``.

    The usual synthetic layout (few distinct docnos, every document judged in some query)
    then looks up each row's relevance directly instead of sorting it against the
    judgments. A docno judged twice for a query leaves one of its grades (a duplicate is
    refused later for an evaluated query).
    """
    if keys.rank_table() is None:
        return None
    shared = keys.shared_codes(jkeys)
    if shared is None:
        return None
    run_codes, judged_codes = shared
    n_b, n_cols = len(block_query), len(run_codes) + 1
    if n_b * n_cols > _MAX_DENSE_CELLS:
        return None
    gmax = int(judgments.grade.max()) if len(judgments.grade) else 0
    dtype = rel_dtype(gmax)
    block_of_query = np.full(judgments.n_queries, -1, dtype=np.int64)
    block_of_query[block_query] = np.arange(n_b)
    col_of_judged = np.full(len(sc.as_arrow(judgments.docno).dictionary), -1, dtype=np.int64)
    col_of_judged[judged_codes] = np.arange(len(judged_codes))
    jcol = col_of_judged[arrow_to_numpy(sc.as_arrow(judgments.docno).indices)]
    jb = block_of_query[judgments.query]
    keep = (jb >= 0) & (jcol >= 0)
    grade = judgments.grade[keep]
    table = pooled_empty(n_b * n_cols, dtype)
    table.fill(NONPOOL)
    table[jb[keep] * n_cols + jcol[keep]] = np.where(grade < 0, UNJUDGED, grade)
    col_of_run = np.full(len(sc.as_arrow(keys.col).dictionary), n_cols - 1, dtype=np.int64)
    col_of_run[run_codes] = np.arange(len(run_codes))
    return table, n_cols, col_of_run


def _from_dicts(run: RunCodes, judgments: Judgments) -> bool:
    """Whether both sides came from ``{qid: {docno: value}}`` dicts (the qrels' is kept)."""
    return (isinstance(run.docno, TextList) and isinstance(judgments.docno, TextList)
            and judgments.docno.source is not None)


def _dict_join(run: RunCodes, judgments: Judgments, starts: np.ndarray, lens: np.ndarray,
               block_query: np.ndarray) -> np.ndarray:
    """rel code of every run row (file order), looked up in the qrels dict itself: each
    block's docnos in its query's inner dict (Python's own exact lookup, no hashing of ours
    and nothing to confirm)."""
    qrels, values, qids = judgments.docno.source, run.docno.values, judgments.qids
    absent = float("nan")
    found = chain.from_iterable(
        map(qrels[qids[q]].get, values[s:s + k], repeat(absent))
        for s, k, q in zip(starts.tolist(), lens.tolist(), block_query.tolist(), strict=True))
    # the grades were checked integral and below 2**53 (fast_frames): exact as float64
    grade = np.fromiter(found, dtype=np.float64, count=len(values))
    gmax = int(judgments.grade.max()) if len(judgments.grade) else 0
    rel = np.full(len(grade), NONPOOL, dtype=rel_dtype(gmax))
    judged = ~np.isnan(grade)
    g = grade[judged].astype(np.int64)
    rel[judged] = np.where(g < 0, UNJUDGED, g)
    return rel


def _join(keys: Keys, jkeys: Keys, judgments: Judgments, starts: np.ndarray,
          lens: np.ndarray, block_query: np.ndarray, w: int) -> np.ndarray:
    """rel code of every run row (file order), by a sort of each block with its judgments."""
    n = int(lens.sum())
    n_b = len(starts)
    # judgments of the queries that have a block, grouped by block (int32: half the bytes)
    small = np.int32 if max(n_b, len(judgments.query)) < 2**31 else np.int64
    block_of_query = np.full(judgments.n_queries, -1, dtype=small)
    block_of_query[block_query] = np.arange(n_b, dtype=small)
    jblock = block_of_query[judgments.query]
    jlines = np.flatnonzero(jblock >= 0).astype(small)
    jb = jblock[jlines]
    del jblock
    if len(jb) > 1 and not (jb[1:] >= jb[:-1]).all():
        order = np.argsort(jb, kind="stable")
        jlines, jb = jlines[order], jb[order]
        del order
    m_counts = np.bincount(jb, minlength=n_b)
    m = int(m_counts.max()) if len(m_counts) else 0
    width = w + m
    if n_b * width > 3 * (n + len(jlines)) + 1024:
        raise _Fallback  # a few queries with very many judgments: the grid would be sparse
    jpos = np.arange(len(jlines), dtype=small)
    jpos -= np.repeat((np.cumsum(m_counts) - m_counts).astype(small), m_counts)
    cb = bits(width + 1)   # a column never fills its bits: no key equals the padding
    keep_bits = np.uint64(cb)
    col_mask = np.uint64((1 << cb) - 1)
    jkey = jkeys.key_of(jlines)
    jstart = np.concatenate(([0], np.cumsum(m_counts)))
    pos_of = np.arange(w, dtype=np.uint64)
    gmax = int(judgments.grade.max()) if len(judgments.grade) else 0
    rel = np.full(n, NONPOOL, dtype=rel_dtype(gmax))
    grade = judgments.grade
    # where equal keys are known to mean equal docnos, matches are written as found;
    # otherwise they are kept and confirmed by comparing the docnos
    exact = keys.exact_with(jkeys)
    problems: list[str] = []
    pairs: list[tuple[np.ndarray, np.ndarray]] = []

    def piece(lo: int, hi: int) -> None:
        k = hi - lo
        grid = np.full((k, width), _U64_MAX, dtype=np.uint64)
        b_lens = lens[lo:hi]
        if (b_lens == w).all():   # full blocks: the piece's rows are one range of the run
            run_key = keys.key_of(slice(starts[lo], starts[lo] + k * w)).reshape(k, w)
            run_key = (run_key >> keep_bits) << keep_bits
            np.bitwise_or(run_key, pos_of, out=grid[:, :w])
        else:
            run_cells = pos_of < b_lens[:, None].astype(np.uint64)
            row_ids = (starts[lo:hi, None] + np.arange(w))[run_cells]
            grid[:, :w][run_cells] = ((keys.key_of(row_ids) >> keep_bits) << keep_bits) | \
                np.broadcast_to(pos_of, (k, w))[run_cells]
        j_lo, j_hi = jstart[lo], jstart[hi]
        if j_hi > j_lo:
            local = jb[j_lo:j_hi] - lo
            cols = (w + jpos[j_lo:j_hi]).astype(np.uint64)
            grid[local, w + jpos[j_lo:j_hi]] = \
                ((jkey[j_lo:j_hi] >> keep_bits) << keep_bits) | cols
        grid.sort(axis=1)
        hi_bits = grid >> keep_bits
        same = hi_bits[:, 1:] == hi_bits[:, :-1]
        same &= grid[:, 1:] != _U64_MAX
        if not same.any():
            return
        r, c = np.nonzero(same)
        col_a = (grid[r, c] & col_mask).astype(np.int64)
        col_b = (grid[r, c + 1] & col_mask).astype(np.int64)
        both_run = (col_b < w)
        if both_run.any():
            problems.append("run")  # a duplicate document or a collision: general path
            return
        run_side = col_a < w
        rows_a = starts[lo + r[run_side]] + col_a[run_side]
        judged_at = jstart[lo + r[run_side]] + col_b[run_side] - w
        lines_b = jlines[judged_at]
        if exact:
            # equal full keys mean equal docnos here, but the grid compared truncated keys
            if (keys.key_of(rows_a) != jkey[judged_at]).any():
                problems.append("collision")
                return
            g = grade[lines_b]
            rel[rows_a] = np.where(g < 0, UNJUDGED, g)
        else:
            pairs.append((rows_a, lines_b))

    _run_pieces(n_b, width, piece)
    if problems:
        raise _Fallback
    if pairs:
        # a row meets at most one judgment (its neighbour); of two judgments of one docno (a
        # duplicate, refused later for an evaluated query) the first one wins
        rows = np.concatenate([p[0] for p in pairs])
        lines = np.concatenate([p[1] for p in pairs])
        if not keys.same(rows, jkeys, lines).all():
            raise _Fallback  # a hash collision
        g = grade[lines]
        rel[rows] = np.where(g < 0, UNJUDGED, g)
    return rel


def _rank(keys: Keys, score: np.ndarray, starts: np.ndarray, lens: np.ndarray, w: int,
          dense: tuple[np.ndarray, int, np.ndarray] | None, rel: np.ndarray) -> np.ndarray:
    """(blocks x w) run row of each rank position (padding after each block's rows).

    With cheap byte ranks of every row (a small dictionary of docnos) the reversed rank is
    packed under the score bits, so one sort breaks ties as well; otherwise ties are re-sorted
    by docno afterwards, ranking only the tied rows of each piece. With a ``dense`` table
    (see :func:`_dense_table`) each piece also checks its blocks for a repeated document and
    writes the rel codes of its rows into ``rel``.
    """
    n_b = len(starts)
    cb = bits(w)
    table = keys.rank_table()   # (docno code of each row, byte rank of each code) or None
    codes = table[0] if table is not None else None     # a dense table implies a rank table
    rb = 0
    if table is not None:
        code_rank = table[1]
        rb = bits(int(code_rank.max()) + 1) if len(code_rank) else 1
        if cb + rb > 34:            # too few score bits left: tie-break afterwards instead
            table, rb = None, 0
    low = np.int64(cb + rb)
    col_mask = np.int64((1 << cb) - 1)
    cols = np.arange(w, dtype=np.int64)
    out = pooled_empty((n_b, w), np.int32 if len(score) < 2**31 else np.int64)

    def piece(lo: int, hi: int) -> None:
        valid = cols < lens[lo:hi, None]
        row_ids = np.where(valid, starts[lo:hi, None] + cols, 0)
        s = score[row_ids]
        row_codes = codes[row_ids] if codes is not None else None
        if dense is not None:
            _dense_piece(dense, row_codes, row_ids, valid, lo, rel)
        in_block = cols[1:] < lens[lo:hi, None]
        if ((s[:, 1:] <= s[:, :-1]) | ~in_block).all():
            # the blocks list their documents by score already (as runs are written): only
            # runs of equal scores need ordering, by docno
            exact_tie = (s[:, 1:] == s[:, :-1]) & in_block
            if exact_tie.any():
                tied = np.flatnonzero(exact_tie.any(axis=1))
                row_ids[tied] = _break_ties(keys, row_ids[tied], s[tied], valid[tied], w)
            out[lo:hi] = row_ids
            return
        key = score_key(s)
        key >>= low
        key <<= low
        desc = None
        if table is not None:
            desc = np.int64((1 << rb) - 1) - code_rank[row_codes]   # docno descending
            key |= desc << np.int64(cb)
        key |= cols
        # padding: the highest packed score (above any real one), its own column
        key[~valid] = ((_I64_MAX >> low) << low) | np.broadcast_to(cols, valid.shape)[~valid]
        key.sort(axis=1)
        perm = key & col_mask
        key >>= low
        ranked = np.take_along_axis(s, perm, axis=1)
        close = (key[:, 1:] == key[:, :-1]) & in_block
        exact_tie = close & (ranked[:, 1:] == ranked[:, :-1])
        if (close & ~exact_tie).any():
            # scores within the truncated bits of each other: an exact sort of those blocks
            # (score, then docno descending when the ranks are known)
            redo = np.flatnonzero((close & ~exact_tie).any(axis=1))
            exact = np.where(valid[redo], score_key(s[redo]), _I64_MAX)
            if desc is None:
                perm[redo] = np.argsort(exact, axis=1, kind="stable")
            else:
                perm[redo] = np.lexsort((desc[redo], exact), axis=1)
            ranked[redo] = np.take_along_axis(s[redo], perm[redo], axis=1)
            exact_tie = (ranked[:, 1:] == ranked[:, :-1]) & in_block
        rows = np.take_along_axis(row_ids, perm, axis=1)
        if desc is None and exact_tie.any():
            tied = np.flatnonzero(exact_tie.any(axis=1))
            rows[tied] = _break_ties(keys, rows[tied], ranked[tied], valid[tied], w)
        out[lo:hi] = rows

    _run_pieces(n_b, w, piece)
    return out


def _dense_piece(dense: tuple[np.ndarray, int, np.ndarray], row_codes: np.ndarray,
                 row_ids: np.ndarray, valid: np.ndarray, lo: int, rel: np.ndarray) -> None:
    """Check a piece's blocks for a repeated document, and write its rows' rel codes."""
    table, n_cols, col_of_run = dense
    w = valid.shape[1]
    small = np.int16 if max(len(col_of_run), w) < 2**15 else np.int64
    # padding cells get distinct negative codes, so only real rows can repeat
    ordered = np.where(valid, row_codes, -1 - np.arange(w)).astype(small)
    ordered.sort(axis=1)
    if (ordered[:, 1:] == ordered[:, :-1]).any():
        raise _Fallback  # a document listed twice: the general path reports it
    block = lo + np.arange(valid.shape[0], dtype=np.int64)[:, None]
    cells = table[block * n_cols + col_of_run[row_codes]]
    rel[row_ids[valid]] = cells[valid]


def _break_ties(keys: Keys, rows: np.ndarray, ranked: np.ndarray, valid: np.ndarray,
                w: int) -> np.ndarray:
    """``rows`` (ranked by score, a block per line) with each run of equal scores re-sorted
    by docno descending (byte order)."""
    s = np.where(valid, ranked, np.nan)
    new_group = np.ones(rows.shape, dtype=bool)
    new_group[:, 1:] = s[:, 1:] != s[:, :-1]
    tied = ~new_group
    tied[:, :-1] |= ~new_group[:, 1:]
    tied &= valid
    group = np.cumsum(new_group, axis=1) - 1          # within the block, 0..w-1
    cells = np.flatnonzero(tied)
    rank = np.zeros(rows.shape, dtype=np.int64)
    ranks = keys.byte_rank(rows.ravel()[cells])
    # descending docno: the highest rank first
    rank.ravel()[cells] = ranks.max() - ranks
    cb = bits(w)
    rb = bits(int(ranks.max()) + 1)
    if bits(w + 1) + rb + cb > 62:
        raise _Fallback
    cols = np.arange(w, dtype=np.int64)
    key = (group << np.int64(rb + cb)) | (rank << np.int64(cb)) | cols
    key[~valid] = (np.int64(w) << np.int64(rb + cb)) | np.broadcast_to(cols, valid.shape)[~valid]
    key.sort(axis=1)
    return np.take_along_axis(rows, key & np.int64((1 << cb) - 1), axis=1)
