"""The qrels as the engine uses them: judged queries in byte order, codes and grade counts."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from onlineeval.errors import InputError
from onlineeval.offline.ranking import string_codes as sc
from onlineeval.offline.reading import Columns


@dataclass
class Judgments:
    """Encoded qrels (one entry per judgment line unless said otherwise)."""

    name: str                 # the qrels source, for messages
    qids: np.ndarray          # object[Q]: the judged qids in byte order (the query index)
    qid_values: Any           # the distinct qids, in first-seen order
    qid_index: np.ndarray     # int64: query index of each of ``qid_values``
    query: np.ndarray         # int32 (int64 from 2^31 queries): query index of each line
    docno_code: np.ndarray    # code of each line's docno in ``docnos``
    docnos: Any               # the distinct judged docnos
    grade: np.ndarray         # int64 grade of each line
    rel_levels: np.ndarray    # int64[Q, G]: judgments per grade 0..G-1 (negative grades not)
    _duplicates: Future       # rows whose (query, docno) is judged more than once, or None

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    def duplicate_rows(self) -> np.ndarray | None:
        """Lines whose (query, docno) is judged more than once; None if there are none."""
        return self._duplicates.result()


def encode_judgments(q: Columns) -> Judgments:
    """Encode qrels columns; the check for duplicate judgments runs in a thread meanwhile.

    A duplicate is an error only for a query that is evaluated (as trec_eval), which is known
    once the run is read: :func:`~onlineeval.offline.ranking.layout.finish` asks for it.
    """
    qcode, quniq = sc.encode(q.qid)
    qrank = sc.byte_rank(quniq)
    n_q = len(qrank)
    qids = sc.to_object(quniq)[np.argsort(qrank)]
    query = qrank.astype(np.int32 if n_q < 2**31 else np.int64)[qcode]   # int32: half the bytes
    dcode, duniq = sc.encode(q.docno)
    pool = ThreadPoolExecutor(1)
    duplicates = pool.submit(_duplicate_rows, query, dcode, len(duniq))
    pool.shutdown(wait=False)
    return Judgments(q.name, qids, quniq, qrank, query, dcode, duniq, q.value,
                     _grade_counts(q, query, n_q), duplicates)


def _grade_counts(q: Columns, query: np.ndarray, n_q: int) -> np.ndarray:
    """int64[Q, G]: judgments per query and grade 0..G-1 (negative grades left out)."""
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
    cell = (query if all_judged else query[judged]).astype(np.int32)
    cell *= np.int32(n_levels)
    cell += grades.astype(np.int32)
    counts = np.bincount(cell, minlength=n_q * n_levels).reshape(n_q, n_levels)
    return counts.astype(np.int64, copy=False)


def _duplicate_rows(query: np.ndarray, dcode: np.ndarray, n_docnos: int) -> np.ndarray | None:
    """Lines whose (query, docno) is judged more than once; None if there are none."""
    jkey = query.astype(np.int64)
    jkey *= max(n_docnos, 1)
    jkey += dcode
    # "stable" (radix/timsort) is ~5x faster than quicksort on qrels grouped by query, the
    # usual layout, and about as fast on shuffled ones; a value sort either way
    jsort = np.sort(jkey, kind="stable")
    dup_keys = jsort[1:][jsort[1:] == jsort[:-1]]
    return np.flatnonzero(np.isin(jkey, dup_keys)) if len(dup_keys) else None
