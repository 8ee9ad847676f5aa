"""64-bit keys of a docno column, exact comparison of rows and byte-order ranks of rows.

Equal docnos get equal keys: a key is a hash of the docno's bytes, read as machine words of the
docno padded with NUL bytes to a multiple of 8 (a NUL never occurs in a docno: the readers
refuse it, so padding cannot make two docnos equal). Different docnos may share a key (a hash
collision); whoever matches rows by key confirms with :meth:`DocnoKeys.same`, which compares
the bytes. Byte-order ranks (trec_eval's ``strcmp`` order, for breaking score ties) are made
only for the rows that need them. A dictionary-encoded column is hashed on its distinct
values.

Hashing reads every row's bytes once, with numpy on pyarrow's buffers: several times cheaper
than the hash table of a dictionary encoding when most docnos are distinct, as in real
collections. Docnos longer than :data:`MAX_BYTES` (or a column that is not text) get no keys
(:meth:`DocnoKeys.of` returns None) and the caller takes the general path.

A :class:`~onlineeval.offline.reading.columns.TextList` (a dict's keys) is keyed by Python's
own string hash instead (:class:`PythonKeys`: cached in every str, so nearly free), and its
rows are compared as str. Keys are comparable only between columns of one kind
(:attr:`DocnoKeys.kind`); :meth:`DocnoKeys.of` with ``kind="bytes"`` keys a TextList by its
bytes when the other side is an arrow column.
"""

from __future__ import annotations

from functools import cached_property
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from onlineeval.offline.arrow_arrays import arrow_to_numpy, numpy_to_arrow
from onlineeval.offline.ranking import string_codes as sc
from onlineeval.offline.reading.columns import TextList

MAX_BYTES = 64

_MUL = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _hash_words(words: np.ndarray) -> np.ndarray:
    """uint64 hash of each row of a (rows, words) uint64 matrix.

    Words that are zero (all NUL: padding, never part of a docno) are skipped, so a docno
    hashes the same whatever width its column is padded to.
    """
    h = np.zeros(len(words), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            w = words[:, j]
            step = h ^ w
            step *= _MUL
            step ^= step >> np.uint64(31)
            if j == 0:
                h = step
            else:
                np.copyto(h, step, where=w != 0)
        h ^= h >> np.uint64(30)
        h *= _MIX1
        h ^= h >> np.uint64(27)
        h *= _MIX2
        h ^= h >> np.uint64(31)
    return h


def _words(chunk: pa.Array, width: int) -> np.ndarray:
    """(rows, width // 8) uint64 words of a string chunk, each value NUL-padded to width."""
    if len(chunk) and pc.min(pc.binary_length(chunk)).as_py() == width:
        padded = chunk   # every value fills the width already (e.g. GOV2's 16-byte docnos)
    else:
        padded = pc.ascii_rpad(chunk, width=width, padding="\x00") if len(chunk) else chunk
    if not len(padded):
        return np.zeros((0, width // 8), dtype=np.uint64)
    wide = pa.types.is_large_string(padded.type)
    start = np.frombuffer(padded.buffers()[1], dtype=np.int64 if wide else np.int32, count=1,
                          offset=padded.offset * (8 if wide else 4))[0]
    data = np.frombuffer(padded.buffers()[2], dtype=np.uint8, count=len(padded) * width,
                         offset=int(start))
    return data.view(np.uint64).reshape(len(padded), width // 8)


def _plain_keys(col: Any, width: int) -> np.ndarray:
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    parts = [_hash_words(_words(c, width)) for c in chunks]
    return np.concatenate(parts) if len(parts) != 1 else parts[0]


def _distinct(keys: np.ndarray) -> bool:
    ordered = np.sort(keys)
    return not bool((ordered[1:] == ordered[:-1]).any())


def _equal_words(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise equality of two word matrices (the narrower padded with NUL words)."""
    if a.shape[1] != b.shape[1]:
        n = max(a.shape[1], b.shape[1])
        a = np.pad(a, ((0, 0), (0, n - a.shape[1])))
        b = np.pad(b, ((0, 0), (0, n - b.shape[1])))
    return (a == b).all(axis=1)


class DocnoKeys:
    """Keys, equality and byte-order ranks of one docno column (see the module docstring)."""

    kind = "bytes"

    def __init__(self, col: Any, width: int) -> None:
        self.col = col
        self.width = width
        self._value_keys: np.ndarray | None = None   # keys of a dictionary's values
        self._row_keys: np.ndarray | None = None
        if isinstance(col, pa.DictionaryArray):
            self._value_keys = _plain_keys(col.dictionary, width)
        else:
            self._row_keys = _plain_keys(col, width)
        self._dictionary_rank: np.ndarray | None = None
        self._exact: tuple[DocnoKeys, tuple[np.ndarray, np.ndarray] | None] | None = None

    @property
    def key(self) -> np.ndarray:
        """uint64 key of every row (for a dictionary column, gathered on each call: use
        :meth:`key_of` for a few rows)."""
        if self._row_keys is not None:
            return self._row_keys
        return self._value_keys[arrow_to_numpy(sc.as_arrow(self.col).indices)]

    def key_of(self, rows: np.ndarray | slice) -> np.ndarray:
        """uint64 keys of the given rows (an index array or a slice)."""
        if self._row_keys is not None:
            return self._row_keys[rows]
        return self._value_keys[arrow_to_numpy(sc.as_arrow(self.col).indices)[rows]]

    @classmethod
    def of(cls, col: Any, kind: str | None = None) -> DocnoKeys | PythonKeys | None:
        """Keys of the text column ``col``; None when a docno is longer than
        :data:`MAX_BYTES` or the column is not text. A TextList gets :class:`PythonKeys`
        unless ``kind="bytes"``."""
        if isinstance(col, TextList) and kind != "bytes":
            return PythonKeys(col)
        col = sc.as_arrow(col)
        values = col.dictionary if isinstance(col, pa.DictionaryArray) else col
        if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
            return None
        if len(values) == 0:
            return None
        longest = pc.max(pc.binary_length(values)).as_py() or 0
        if longest > MAX_BYTES:
            return None
        return cls(col, max(8, -(-longest // 8) * 8))

    def words(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), width // 8) uint64 words of the docnos of ``rows``."""
        taken = sc.take(self.col, np.asarray(rows, dtype=np.int64))
        if isinstance(taken, pa.ChunkedArray):
            taken = taken.combine_chunks()
        if isinstance(taken, pa.DictionaryArray):
            taken = taken.dictionary_decode()
        return _words(taken, self.width)

    def same(self, rows: np.ndarray, other: DocnoKeys, other_rows: np.ndarray) -> np.ndarray:
        """Whether the docno of ``rows[i]`` equals the docno of ``other_rows[i]`` in ``other``
        (a column with keys of the same kind)."""
        if len(rows) == 0:
            return np.zeros(0, dtype=bool)
        if self._exact_with(other):
            return np.ones(len(rows), dtype=bool)
        return _equal_words(self.words(rows), other.words(other_rows))

    def _exact_with(self, other: DocnoKeys) -> bool:
        """Whether equal keys mean equal docnos between this column and ``other``: both
        dictionary columns whose distinct values hash without a collision (checked on the
        distinct values, with a comparison of the bytes wherever two values share a key)."""
        if self._value_keys is None or other._value_keys is None:
            return False
        if self._exact is not None and self._exact[0] is other:
            return self._exact[1] is not None
        mine, theirs = self._value_keys, other._value_keys
        exact = _distinct(mine) and _distinct(theirs)
        if exact:
            _, ia, ib = np.intersect1d(mine, theirs, assume_unique=True, return_indices=True)
            exact = bool(_equal_words(self._value_words(ia), other._value_words(ib)).all())
        self._exact = (other, (ia, ib) if exact else None)
        return exact

    def shared_codes(self, other: DocnoKeys | PythonKeys) -> tuple[np.ndarray, np.ndarray] | None:
        """(codes in this dictionary, codes in ``other``'s) of the docnos both dictionaries
        hold, when equal keys are known to mean equal docnos (:meth:`exact_with`)."""
        if not self.exact_with(other):
            return None
        return self._exact[1]

    def _value_words(self, codes: np.ndarray) -> np.ndarray:
        """Words of the dictionary values ``codes`` (a dictionary column)."""
        values = sc.as_arrow(self.col).dictionary.take(numpy_to_arrow(codes.astype(np.int64)))
        return _words(values, self.width)

    def byte_rank(self, rows: np.ndarray) -> np.ndarray:
        """int64 ranks of the docnos of ``rows`` whose order is their byte order (equal
        docnos, equal ranks); only the order among ``rows`` is meaningful."""
        col = sc.as_arrow(self.col)
        if isinstance(col, pa.DictionaryArray):
            codes = arrow_to_numpy(col.indices)[rows]
            if self._dictionary_rank is None and len(col.dictionary) > 4 * len(rows):
                # a big dictionary and few rows: rank only the values they use
                used, inverse = np.unique(codes, return_inverse=True)
                values = col.dictionary.take(numpy_to_arrow(used.astype(np.int64)))
                return sc.byte_rank(values)[inverse]
            if self._dictionary_rank is None:
                self._dictionary_rank = sc.byte_rank(col.dictionary)
            return self._dictionary_rank[codes]
        codes, uniq = sc.encode(sc.take(col, np.asarray(rows, dtype=np.int64)))
        return sc.byte_rank(uniq)[codes]

    def rank_table(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(code of each row's docno, byte-order rank of each code) when that is cheap: a
        dictionary column whose dictionary is small next to the rows (its distinct values
        are sorted once); else None."""
        col = sc.as_arrow(self.col)
        if not isinstance(col, pa.DictionaryArray) or 4 * len(col.dictionary) > len(col):
            return None
        if self._dictionary_rank is None:
            self._dictionary_rank = sc.byte_rank(col.dictionary)
        return arrow_to_numpy(col.indices), self._dictionary_rank

    def exact_with(self, other: DocnoKeys | PythonKeys) -> bool:
        """Whether equal keys mean equal docnos between this column and ``other`` (see
        :meth:`_exact_with`); then no match needs confirming."""
        return isinstance(other, DocnoKeys) and self._exact_with(other)

    def text(self, row: int) -> str:
        """The docno of ``row``."""
        return sc.item(self.col, int(row))


class PythonKeys:
    """:class:`DocnoKeys` of a TextList: Python's string hash, str comparison and order.

    Python orders str by code point, which is the byte order of their UTF-8 (the readers let
    only valid text through), so ranks agree with trec_eval's ``strcmp``.
    """

    kind = "python"

    def __init__(self, col: TextList) -> None:
        self.col = col

    @cached_property
    def key(self) -> np.ndarray:
        """uint64 key of every row (made on first use: ranking alone needs none)."""
        return np.fromiter(map(hash, self.col.values), dtype=np.int64,
                           count=len(self.col)).view(np.uint64)

    def key_of(self, rows: np.ndarray | slice) -> np.ndarray:
        """uint64 keys of the given rows (an index array or a slice)."""
        return self.key[rows]

    def texts(self, rows: np.ndarray) -> np.ndarray:
        """The docnos of ``rows`` (an object array of str)."""
        out = np.empty(len(rows), dtype=object)
        if len(rows) == 1:
            out[0] = self.col.values[int(rows[0])]
        elif len(rows):
            out[:] = itemgetter(*np.asarray(rows).tolist())(self.col.values)
        return out

    def same(self, rows: np.ndarray, other: PythonKeys, other_rows: np.ndarray) -> np.ndarray:
        """Whether the docno of ``rows[i]`` equals the docno of ``other_rows[i]`` in ``other``."""
        if len(rows) == 0:
            return np.zeros(0, dtype=bool)
        return np.asarray(self.texts(rows) == other.texts(other_rows), dtype=bool)

    def byte_rank(self, rows: np.ndarray) -> np.ndarray:
        """int64 ranks of the docnos of ``rows`` in byte order (equal docnos, equal ranks)."""
        _, inverse = np.unique(self.texts(rows), return_inverse=True)
        return inverse.astype(np.int64).ravel()

    def text(self, row: int) -> str:
        return self.col.values[int(row)]

    def rank_table(self) -> None:
        return None

    def shared_codes(self, other: DocnoKeys | PythonKeys) -> None:
        return None

    def exact_with(self, other: DocnoKeys | PythonKeys) -> bool:
        return False
