"""The analysis window of a readout: ``start <= ts < end``, parsed once for every command.

Timestamps compare with the log's ``ts`` as the loader stores it: a value without a zone is
read as written, one with a zone or offset is converted to UTC first (as the loader does with
the log's own timestamps). They always reach SQL as bound parameters.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.errors import InvalidParameterError


def timestamp(value: Any, what: str) -> pd.Timestamp:
    """``value`` (a string like ``2024-03-01`` or ``2024-03-01T12:00:00+02:00``, or a
    datetime) as a naive UTC :class:`pandas.Timestamp`; ``what`` names it in errors."""
    if isinstance(value, str):
        value = value.strip()
        # words pandas would turn into a time ("now", "today") give a different window on
        # every run; a timestamp is written with digits
        if not any(ch.isdigit() for ch in value):
            raise InvalidParameterError(
                f"{what} must be a timestamp like 2024-03-01 or 2024-03-01T12:00:00; "
                f"got {value!r}"
            )
    elif not isinstance(value, datetime | date | np.datetime64):
        raise InvalidParameterError(
            f"{what} must be a timestamp (a string like 2024-03-01 or a datetime); got "
            f"{value!r} ({type(value).__name__})"
        )
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as exc:
        raise InvalidParameterError(
            f"{what} must be a timestamp like 2024-03-01 or 2024-03-01T12:00:00; got {value!r}"
        ) from exc
    if pd.isna(ts):
        raise InvalidParameterError(f"{what} must be a timestamp; got {value!r}")
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    return ts


def bounds(start: Any, end: Any) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
    """``(start, end)`` parsed (None stays None: unbounded), checked that start < end."""
    lo = None if start is None else timestamp(start, "start")
    hi = None if end is None else timestamp(end, "end")
    if lo is not None and hi is not None and not lo < hi:
        raise InvalidParameterError(
            f"the window start must be before its end; got start {lo}, end {hi}"
        )
    return lo, hi


def describe(window: dict[str, Any], what: str) -> str:
    """One line stating a readout's window: the bounds given (``start``, ``end``) and the
    first and last of ``what`` (a plural, e.g. ``exposures``) analysed, read from
    ``window["first_<what singular>"]`` and ``window["last_..."]``."""
    start, end = window.get("start"), window.get("end")
    if start is None and end is None:
        span = "the whole log (no start or end given)"
    else:
        span = ("" if start is None else f"{start} <= ") + "ts" + (
            "" if end is None else f" < {end}")
    one = what[:-1]
    first, last = window.get(f"first_{one}"), window.get(f"last_{one}")
    seen = (f"first {one} {first}, last {one} {last}" if first is not None
            else f"{what} without ts")
    return f"window: {span}; {seen}"
