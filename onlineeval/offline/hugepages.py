"""A process-wide switch that keeps new memory off transparent huge pages while the engine runs.

Only a performance hint: it never changes a result. See :func:`no_hugepage_advice`.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Callable, Iterator

import numpy as np

__all__ = ["no_hugepage_advice"]

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
