"""The qrels as the engine uses them: judged queries in byte order, grades and docno keys."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from onlineeval.errors import InputError
from onlineeval.offline.ranking import string_codes as sc
from onlineeval.offline.ranking.docno_keys import DocnoKeys, PythonKeys
from onlineeval.offline.reading import Columns
from onlineeval.offline.reading.columns import TextList


@dataclass
class Judgments:
    """Encoded qrels (one entry per judgment line unless said otherwise)."""

    name: str                 # the qrels source, for messages
    qids: np.ndarray          # object[Q]: the judged qids in byte order (the query index)
    qid_values: Any           # the distinct qids, in first-seen order
    qid_index: np.ndarray     # int64: query index of each of ``qid_values``
    query: np.ndarray         # int32 (int64 from 2^31 queries): query index of each line
    docno: Any                # the docno column (pyarrow)
    grade: np.ndarray         # int64 grade of each line
    rel_levels: np.ndarray    # int64[Q, G]: judgments per grade 0..G-1 (negative grades not)
    _codes: tuple[np.ndarray, Any] | None = field(default=None, repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @cached_property
    def keys(self) -> DocnoKeys | PythonKeys | None:
        """Hashed docno keys (None for docnos too long to hash; see DocnoKeys)."""
        return DocnoKeys.of(self.docno)

    def docno_codes(self) -> tuple[np.ndarray, Any]:
        """(code of each line's docno, the distinct judged docnos): exact, by hashing the
        strings (the general path's join and the fallback duplicate check use them)."""
        if self._codes is None:
            self._codes = sc.encode(self.docno)
        return self._codes

    @cached_property
    def duplicate_rows(self) -> np.ndarray | None:
        """Lines whose (query, docno) is judged more than once; None if there are none."""
        if isinstance(self.docno, TextList) and self.docno.source is not None:
            return None   # the keys of a dict's inner dicts: one judgment per (qid, docno)
        keys = self.keys
        if keys is None:
            dcode, duniq = self.docno_codes()
            return _duplicates(self.query, dcode.astype(np.uint64), None, max(len(duniq), 1))
        return _duplicates(self.query, keys.key, keys, None)


def encode_judgments(q: Columns) -> Judgments:
    """Encode qrels columns: queries in byte order of qid, grade counts."""
    qcode, quniq = sc.encode(q.qid)
    qrank = sc.byte_rank(quniq)
    n_q = len(qrank)
    qids = sc.to_object(quniq)[np.argsort(qrank)]
    query = qrank.astype(np.int32 if n_q < 2**31 else np.int64)[qcode]   # int32: half the bytes
    docno = q.docno if isinstance(q.docno, TextList) else sc.as_arrow(q.docno)
    return Judgments(q.name, qids, quniq, qrank, query, docno, q.value,
                     _grade_counts(q, query, n_q))


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


def _duplicates(query: np.ndarray, key: np.ndarray, keys: DocnoKeys | PythonKeys | None,
                n_codes: int | None) -> np.ndarray | None:
    """Lines whose (query, docno) repeats. ``key``: exact docno codes (``n_codes`` of them)
    or hashes (``keys``, confirmed by comparing the docnos of equal hashes)."""
    if n_codes is not None:
        jkey = query.astype(np.uint64) * np.uint64(n_codes) + key
    else:
        # the query in the top bits, 40 bits of hash below: equal keys are confirmed below
        jkey = (query.astype(np.uint64) << np.uint64(40)) ^ (key >> np.uint64(24))
    jsort = np.sort(jkey)
    dup_keys = jsort[1:][jsort[1:] == jsort[:-1]]
    if not len(dup_keys):
        return None
    rows = np.flatnonzero(np.isin(jkey, dup_keys))
    if keys is None:
        return rows
    # confirm: group the candidate rows by key, keep those equal to another row of the group
    order = rows[np.argsort(jkey[rows], kind="stable")]
    k = jkey[order]
    real = np.zeros(len(order), dtype=bool)
    for shift in range(1, len(order)):
        a, b = order[:-shift], order[shift:]
        same_key = k[:-shift] == k[shift:]
        if not same_key.any():
            break
        cand = np.flatnonzero(same_key)
        eq = keys.same(a[cand], keys, b[cand])
        real[cand[eq]] = True
        real[cand[eq] + shift] = True
    found = np.sort(order[real])
    return found if len(found) else None
