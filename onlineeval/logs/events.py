"""How a log's events (purchases, bookings, ...) are attributed: the window and the type.

The settings travel with a :class:`~onlineeval.logs.Logs` (``logs.events``) so that every
metric computed from the log (online metrics, A/B tests, readouts, sequential monitoring,
interleaving credit) attributes its events the same way; :meth:`Logs.with_events` gives a
copy with other settings. The rules themselves are in ``sql/online/attribution.sql``.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any

from onlineeval.errors import InvalidParameterError

#: the default attribution window: a purchase the day after a search still belongs to it,
#: one a week later mostly does not (the common "24-hour click window" of ad attribution)
DEFAULT_WINDOW_HOURS = 24.0

_US_PER_HOUR = 3_600_000_000
_MAX_US = 2**63 - 1


@dataclass(frozen=True)
class EventSettings:
    """The attribution window (whole microseconds) and the event type (None: every type)."""

    window_us: int = int(DEFAULT_WINDOW_HOURS * _US_PER_HOUR)
    event_type: str | None = None

    @property
    def window_text(self) -> str:
        """The window for messages: ``24 h``, ``30 min``, ``unlimited``."""
        if self.window_us >= _MAX_US:
            return "unlimited"
        hours = self.window_us / _US_PER_HOUR
        if hours >= 1:
            return f"{hours:g} h"
        return f"{self.window_us / 60_000_000:g} min"


def window_us(value: Any) -> int:
    """The attribution window in whole microseconds (rounded down) from ``value``: a number
    of hours, a ``datetime.timedelta`` / ``pandas.Timedelta``, or text such as ``"24h"``,
    ``"30min"``, ``"7 days"`` (a bare number in text is hours too); ``inf`` for no limit."""
    import pandas as pd

    hours: float | None = None
    if isinstance(value, bool):
        hours = None
    elif isinstance(value, int | float):
        hours = float(value)
    elif isinstance(value, dt.timedelta):
        hours = value / dt.timedelta(hours=1)
    elif isinstance(value, str):
        text = value.strip()
        try:
            hours = float(text)
        except ValueError:
            # pandas deprecates its unit "d" (FutureWarning): "7d" is spelled "7 days" for it
            days = re.fullmatch(r"([0-9.]+)\s*d", text)
            try:
                hours = pd.Timedelta(f"{days[1]} days" if days else text) / pd.Timedelta(hours=1)
            except ValueError:
                hours = None
    if hours is None or math.isnan(hours) or hours < 0:
        raise InvalidParameterError(
            f"attribution_window must be a duration >= 0: a number of hours (24), or text "
            f"such as '24h', '30min', '7 days' ('inf' for no limit); got {value!r}"
        )
    if math.isinf(hours):
        return _MAX_US
    return min(math.floor(hours * _US_PER_HOUR), _MAX_US)


def settings(attribution_window: Any = None, event_type: Any = None,
             base: EventSettings | None = None) -> EventSettings:
    """``base`` (default: the defaults) with the arguments that are not None applied."""
    base = base or EventSettings()
    if event_type is not None and (not isinstance(event_type, str) or not event_type):
        raise InvalidParameterError(
            f"event_type must be an event type name such as 'purchase'; got {event_type!r}"
        )
    return EventSettings(
        base.window_us if attribution_window is None else window_us(attribution_window),
        base.event_type if event_type is None else event_type,
    )
