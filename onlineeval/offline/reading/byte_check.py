"""Whether splitting every line on one delimiter gives the fields trec_eval finds.

pyarrow's CSV reader splits on each delimiter; the scanner (like trec_eval) on runs of ASCII
whitespace. This check of every byte of a file decides whether the fast reader may read it.
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

import numpy as np

CHECK_STEP = 1 << 20   # bytes per step of the check (small temporaries)


def regular_bytes(path: Path, delim: str, qrels: bool = False) -> bool:
    """True when splitting each line on ``delim`` gives the fields the line scanner finds.

    They agree on every line when the file has no byte below 14 but the newline (and the tab
    delimiter) — so no NUL, \\r, \\v, \\f, stray tab (the rare bytes 1-8 also send a file to
    the scanner) — no doubled delimiter (an empty field) and no space in a tab-separated
    file. Checked on every byte, including the columns the fast reader does not convert
    (iter, rank, tag).

    ``qrels``: also False when a field starts with ``0x`` / ``0X``: pyarrow's int64 parser
    reads a grade ``0x1`` as hexadecimal 1, trec_eval's ``atol`` as 0 (the scanner refuses
    it). A docno or iter field such as ``0xa1`` only costs the scanner's time.
    """
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        # the array view must be gone before the map closes: bytes_ok holds the only one
        return bytes_ok(mm, ord(delim), qrels)


def bytes_ok(buf: Any, d: int, qrels: bool = False) -> bool:
    """:func:`regular_bytes` on a buffer, with delimiter byte ``d``."""
    a = np.frombuffer(buf, dtype=np.uint8)
    for lo in range(0, len(a), CHECK_STEP):
        part = a[lo:lo + CHECK_STEP]
        allowed = np.count_nonzero(part == 10) + (np.count_nonzero(part == 9) if d == 9 else 0)
        if np.count_nonzero(part < 14) != allowed:   # NUL, \t, \v, \f, \r (and \x01-\x08)
            return False
        if d == 9 and np.count_nonzero(part == 32):
            return False
        ext = a[lo:lo + CHECK_STEP + 1] == d      # one byte more: doubles across steps
        if (ext[1:] & ext[:-1]).any():
            return False
        if qrels:
            # delimiter, "0", "x" or "X" (two bytes more: patterns across steps); the
            # three-byte test only runs on a step that has an x at all
            w = a[lo:lo + CHECK_STEP + 2]
            x = (w[2:] | 32) == ord("x")
            if x.any() and (x & (w[:-2] == d) & (w[1:-1] == ord("0"))).any():
                return False
    return True
