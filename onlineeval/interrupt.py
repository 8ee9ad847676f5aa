"""Ctrl-C and SIGTERM: stop cleanly, and never in the middle of putting an output in place.

:func:`handling` (used by the command line) turns SIGINT and SIGTERM into an
:class:`Interrupted` exception, so ``finally`` blocks and context managers run and remove
temporary files; without it SIGTERM would end the process on the spot. It also records which
signal arrived (:func:`received`), because DuckDB, when a signal lands during a query, raises
its own ``RuntimeError('Query interrupted')`` in place of ours.

:func:`deferred` holds both signals back for the few renames that put a finished output in
place (:mod:`onlineeval.atomic`), so an interruption happens before or after them, not between.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)

_received: list[int] = []


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived. A KeyboardInterrupt, so code that handles Ctrl-C handles
    SIGTERM the same way."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise Interrupted(signum)


def received() -> int | None:
    """The first signal that arrived while :func:`handling` was active, else None."""
    return _received[0] if _received else None


def exit_status(signum: int) -> int:
    """The shell's status for a process ended by ``signum`` (130 for SIGINT, 143 for
    SIGTERM)."""
    return 128 + int(signum)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def handling() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted`. The previous handlers
    come back afterwards (the command line may run inside another program, e.g. a test).
    Outside the main thread signals cannot be handled and the block runs unchanged."""
    if not _main_thread():
        yield
        return
    _received.clear()
    before = {s: signal.getsignal(s) for s in SIGNALS}
    for s in SIGNALS:
        signal.signal(s, _raise)
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


@contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back during the block; one that arrived meanwhile is delivered
    (and raises) when the block ends."""
    if not _main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
