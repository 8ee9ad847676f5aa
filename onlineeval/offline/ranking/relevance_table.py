"""Each run row's relevance code from a (query, judged docno) table."""

from __future__ import annotations

import numpy as np

from onlineeval.offline.arrow_arrays import pooled_empty
from onlineeval.offline.ranking import string_codes as sc
from onlineeval.offline.ranking.judgments import Judgments
from onlineeval.offline.ranking.ranked import NONPOOL, UNJUDGED, rel_dtype
from onlineeval.offline.ranking.run_codes import RunCodes

_MAX_DENSE_CELLS = 1 << 28   # (query, judged docno) cells of the int8/int16 relevance table


class RelevanceTable:
    """The rel code (:mod:`~onlineeval.offline.ranking.ranked`) of run documents.

    Run docnos are matched to the qrels' docnos on the distinct values only; a (query,
    judged docno) table — dense, in Ranked.rel's type, when small enough, else a hash index —
    gives each (query, docno rank) its rel code: NONPOOL if not in the qrels, UNJUDGED for a
    negative grade, else the grade. A duplicate judgment leaves one of its grades in the
    table; that only matters for an evaluated query, and ``layout.finish`` then refuses it.
    Calling it with query indices ``qidx[r]`` and docno ranks ``dr[r, w]`` gives
    ``rel[r, w]``.
    """

    def __init__(self, judgments: Judgments, run: RunCodes) -> None:
        n_q, n_d = judgments.n_queries, run.n_docnos
        grade = judgments.grade
        gmin = min(int(grade.min()), 0) if len(grade) else 0
        gmax = max(int(grade.max()), 0) if len(grade) else 0
        lut = np.arange(gmin - 1, gmax + 1, dtype=np.int64)
        lut[0] = NONPOOL
        lut[1:][lut[1:] < 0] = UNJUDGED
        self.dtype = rel_dtype(gmax)
        # each judgment's rel code (narrowed only once negative grades are UNJUDGED)
        relv = lut.astype(self.dtype)[grade - gmin + 1]
        # columns: the run's docnos that are judged for some query (others are NONPOOL)
        # run docno value -> qrels docno code (-1: not judged anywhere); both are distinct
        # values, so the smaller set is hashed and the larger one probes it
        duniq, duniq_q = run.docnos, judgments.docnos
        if len(duniq) <= len(duniq_q):
            run_of_q = sc.lookup(duniq_q, duniq)
            in_q = np.full(len(duniq), -1, dtype=np.int64)
            hit = np.flatnonzero(run_of_q >= 0)
            in_q[run_of_q[hit]] = hit
        else:
            in_q = sc.lookup(duniq, duniq_q)
        judged_u = in_q >= 0
        n_cols = int(np.count_nonzero(judged_u)) + 1
        col_u = np.where(judged_u, np.cumsum(judged_u) - 1, n_cols - 1)
        # keys (query, column) in int32 when the table allows: half the bytes per judgment
        ktype = np.int32 if n_q * n_cols < 2**31 else np.int64
        self.ktype = ktype
        self.col_of_rank = np.empty(n_d, dtype=ktype)
        self.col_of_rank[run.docno_rank] = col_u
        col_of_qcode = np.full(len(duniq_q), -1, dtype=ktype)
        col_of_qcode[in_q[judged_u]] = col_u[judged_u]
        qcol = col_of_qcode[judgments.docno_code]
        keep = qcol >= 0
        qkey = judgments.query[keep].astype(ktype)
        qkey *= ktype(n_cols)
        qkey += qcol[keep]
        del qcol
        self.n_cols = n_cols
        if n_q * n_cols <= _MAX_DENSE_CELLS:
            # the table holds rel codes themselves: NONPOOL where nothing is judged
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
