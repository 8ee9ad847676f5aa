"""Attribution of downstream events (purchases, bookings, ...) to the searches that led to them.

The rules are those of ``sql/online/attribution.sql`` (its header is the reference; the
user's guide is ``docs/conversions.md``): the event's own search_id, else the latest search
of the user whose clicked result is the event's doc_id, else the user's last search before
the event, each within the attribution window. An event that none of them attributes is
counted under its reason and reported (a warning in the API), never dropped silently.

The window and the event type come from the log's settings (``logs.events``, see
:mod:`onlineeval.logs.events`); the functions here that take ``attribution_window`` and
``event_type`` apply them to a copy of the log first.
"""

from __future__ import annotations

import hashlib
import warnings
from typing import TYPE_CHECKING, Any

import pandas as pd

from onlineeval import queries
from onlineeval.errors import InputError, UnknownNameError
from onlineeval.logs.coerce import as_logs

if TYPE_CHECKING:
    from onlineeval.logs import Logs

_QUERY = queries.load("online/attribution")

#: the rules that attribute an event, in the order they are tried
RULES: dict[str, str] = {
    "search_id": "the event names its search",
    "clicked_doc": "the latest search of the user with a click on the event's doc_id "
                   "within the window before it",
    "last_search": "the user's last search before the event, within the window",
}

#: why an event is unattributable
REASONS: dict[str, str] = {
    "unknown_search": "its search_id is not among the kept searches",
    "unknown_user": "no search_id, and its user has no search in the log",
    "no_earlier_search": "its user's searches all come after it (or have no ts)",
    "outside_window": "its user's last search before it is earlier than the window",
}


class UnattributedEventsWarning(UserWarning):
    """Some events could not be attributed to a search (counted by reason)."""


def event_types(logs: Logs) -> dict[str, int]:
    """The event types of the log's clean events with their counts (empty without events)."""
    if not getattr(logs, "has_events", False):
        return {}
    rows = logs.con.execute(queries.load("online/event_types").render()).fetchall()
    return {str(t): int(n) for t, n in rows}


def check_event_type(logs: Logs) -> None:
    """Refuse an event type the log does not have, listing the ones it has."""
    wanted = logs.events.event_type
    if wanted is None:
        return
    if not logs.has_events:
        raise InputError(
            f"event_type={wanted!r} asks for events, but the log {logs.source} has no events "
            "table (events.parquet/.csv/.jsonl in the log directory, or events=)"
        )
    types = event_types(logs)
    if wanted not in types:
        raise UnknownNameError(
            f"unknown event type {wanted!r}; the events of {logs.source} have the types: "
            f"{', '.join(types) or '(none)'}"
        )


def attribution_view(logs: Logs) -> str:
    """Create the view of every event of the chosen type with its attributed search (the
    outputs of ``sql/online/attribution.sql``) in ``logs.con``; return its name."""
    check_event_type(logs)
    settings = logs.events
    tag = ("all" if settings.event_type is None
           else hashlib.sha1(settings.event_type.encode()).hexdigest()[:12])
    name = f"online_attribution__w{settings.window_us}us__{tag}"
    sql = _QUERY.render()
    queries.create(logs.con, name, sql,
                   params=_QUERY.bind(sql, window_us=settings.window_us,
                                      event_type=settings.event_type))
    return name


def attribution_counts(logs: Logs, view: str | None = None) -> dict[str, int]:
    """Events per rule (attributed) and per reason (unattributable), every key of
    :data:`RULES` and :data:`REASONS` present (0 when none)."""
    view = view or attribution_view(logs)
    q = queries.load("online/attribution_counts")
    out = dict.fromkeys([*RULES, *REASONS], 0)
    for rule, reason, n in logs.con.execute(q.render(attribution=[view])).fetchall():
        out[rule if rule is not None else reason] += int(n)
    return out


def warn_events(logs: Logs, view: str, stacklevel: int = 3) -> dict[str, int]:
    """Warn about unattributable events (by reason) and about several event types counted
    together; return :func:`attribution_counts`. Both once per log and settings: the counts
    are kept in ``logs.attributed`` under the view's name."""
    known = logs.attributed.get(view)
    if known is not None:
        return dict(known)
    counts = attribution_counts(logs, view)
    logs.attributed[view] = dict(counts)
    lost = {r: counts[r] for r in REASONS if counts[r]}
    total = sum(counts.values())
    kind = "events" if logs.events.event_type is None else f"{logs.events.event_type} events"
    if lost:
        n = sum(lost.values())
        warnings.warn(
            f"{n:,} of {total:,} {kind} of {logs.source} are not attributed to any search and "
            f"count in no outcome metric: {', '.join(f'{v:,} {k}' for k, v in lost.items())} "
            f"(attribution window {logs.events.window_text}; onlineeval.attribute_events "
            "lists them)",
            UnattributedEventsWarning, stacklevel=stacklevel,
        )
    if logs.events.event_type is None:
        types = event_types(logs)
        if len(types) > 1:
            warnings.warn(
                f"the events of {logs.source} have several types ({', '.join(types)}), "
                "counted together in conversions and revenue; choose one with "
                "event_type=... (CLI: --event-type TYPE)",
                UserWarning, stacklevel=stacklevel,
            )
    if not logs.has("searches", "ts") and total > counts["search_id"] + counts["unknown_search"]:
        warnings.warn(
            f"the searches of {logs.source} have no ts: only events naming their search_id "
            "can be attributed", UserWarning, stacklevel=stacklevel)
    return counts


def attribute_events(logs: Any, *, attribution_window: Any = None,
                     event_type: str | None = None) -> pd.DataFrame:
    """Every event of the log with the search it is attributed to, and how.

    Parameters
    ----------
    logs
        Anything :func:`onlineeval.logs.as_logs` accepts, with an events table.
    attribution_window
        Hours (a number) or a duration such as ``"30min"``, ``"7 days"``; default: the
        log's (24 h unless set with :meth:`Logs.with_events`). Both ends inclusive.
    event_type
        Only events of this type (default: the log's setting, every type).

    Returns
    -------
    pandas.DataFrame
        One row per event (``sql/online/attribution.sql``'s outputs): ``event_no, user_id,
        ts, type, value, doc_id, search_id`` (attributed; None when not), ``search_ts,
        rule`` (:data:`RULES`) and ``reason`` (:data:`REASONS`, when not attributed),
        ordered by event_no. Warns about unattributable events, by reason.
    """
    logs = as_logs(logs, attribution_window=attribution_window, event_type=event_type)
    if not logs.has_events:
        raise InputError(f"the log {logs.source} has no events table (events.parquet/.csv/"
                         ".jsonl in the log directory, or events=)")
    view = attribution_view(logs)
    warn_events(logs, view)
    return logs.con.table(view).order("event_no").df()
