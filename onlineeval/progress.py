"""Progress reporting for long work: a one-line counter on a terminal, silence otherwise."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")


class Progress:
    """Counts steps and redraws ``label: done/total`` on stderr when stderr is a TTY.

    Quiet (no output at all) when stderr is not a terminal, e.g. in CI, pipes and tests.
    """

    def __init__(
        self, label: str, total: int | None = None, stream: TextIO | None = None,
        enabled: bool | None = None, min_interval_s: float = 0.2,
    ) -> None:
        self.label = label
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = (
            enabled if enabled is not None
            else bool(getattr(self.stream, "isatty", lambda: False)())
        )
        self.done = 0
        self._last = 0.0
        self._min_interval = min_interval_s

    def update(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last >= self._min_interval or (self.total and self.done >= self.total):
            self._last = now
            of = f"/{self.total}" if self.total else ""
            self.stream.write(f"\r{self.label}: {self.done}{of}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Elapsed:
    """Shows ``label: Ns`` on stderr, redrawn every ``interval_s`` seconds, while a block runs.

    For one long step whose progress cannot be counted, such as a single DuckDB query over a
    large log. Quiet when stderr is not a terminal. A block shorter than ``interval_s`` draws
    nothing; a longer one ends its line with ``label: done in Ns``.
    """

    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool | None = None,
                 interval_s: float = 1.0) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = (
            enabled if enabled is not None
            else bool(getattr(self.stream, "isatty", lambda: False)())
        )
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._drawn = False

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.stream.write(f"\r{self.label}: {time.monotonic() - self._t0:.0f}s")
            self.stream.flush()
            self._drawn = True

    def __enter__(self) -> Elapsed:
        self._t0 = time.monotonic()
        if self.enabled:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        if self._drawn:
            self.stream.write(f"\r{self.label}: done in {time.monotonic() - self._t0:.0f}s\n")
            self.stream.flush()


def track(items: Iterable[T], label: str, total: int | None = None) -> Iterator[T]:
    """Yield from ``items`` while showing progress on a TTY."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with Progress(label, total) as bar:
        for item in items:
            yield item
            bar.update()
