"""The canonical click-log schema: three tables (and an optional fourth, ``events``), their
columns, types and which are required.

Column kinds decide how a source column is converted:

``id``
    kept in its source type (VARCHAR or integer); ``search_id`` (all three tables) and
    ``doc_id`` (results, clicks, events) and ``user_id`` (searches, events) are brought to one
    common type so joins work.
``timestamp``
    ``TIMESTAMP`` (UTC when the source carries a time zone or an offset).
``integer`` / ``double`` / ``text``
    ``INTEGER`` / ``DOUBLE`` / ``VARCHAR``.
``label``
    a variant: kept as the log writes it, whole numbers (an integer type; a float column of
    whole numbers, as pandas makes of integers with a missing value, becomes ``BIGINT``) or
    ``VARCHAR`` (any other type is read as text); arguments naming a variant compare with
    these values in their own type (:mod:`onlineeval.logs.variants`).
``count`` / ``duration`` / ``amount``
    ``INTEGER`` >= 0 (n_results) / finite ``DOUBLE`` >= 0 (dwell_ms) / finite ``DOUBLE``
    (an event's value; a refund may be negative): a value out of range is a bad value, an
    error naming the file and column like one that does not convert.
"""

from __future__ import annotations

from dataclasses import dataclass

TABLES: tuple[str, ...] = ("searches", "results", "clicks", "events")

#: tables a log may leave out (searches and clicks are always needed)
OPTIONAL_TABLES: tuple[str, ...] = ("results", "events")


@dataclass(frozen=True)
class Column:
    """One canonical column: its name, kind (see module doc) and whether it is required."""

    name: str
    kind: str
    required: bool = False


SCHEMA: dict[str, tuple[Column, ...]] = {
    "searches": (
        Column("search_id", "id", True),
        Column("user_id", "id", True),
        # required, except for logs from sources without times (see LoadReport.missing)
        Column("ts", "timestamp"),
        Column("session_id", "id"),
        Column("query", "text"),
        Column("experiment", "text"),
        Column("variant", "label"),
        Column("n_results", "count"),
    ),
    "results": (
        Column("search_id", "id", True),
        Column("rank", "integer", True),
        Column("doc_id", "id", True),
        Column("team", "text"),
    ),
    "clicks": (
        Column("search_id", "id", True),
        # rank and/or doc_id: at least one of the two must be present
        Column("rank", "integer"),
        Column("doc_id", "id"),
        Column("ts", "timestamp"),
        Column("dwell_ms", "duration"),
    ),
    # downstream outcomes (purchase, booking, ...), attributed to searches by
    # onlineeval.online.attribution
    "events": (
        # user_id and/or search_id: at least one of the two must be present, and per row one
        # of them must hold a value
        Column("user_id", "id"),
        Column("ts", "timestamp", True),
        Column("type", "text", True),
        Column("value", "amount"),
        Column("search_id", "id"),
        Column("doc_id", "id"),
    ),
}

SQL_TYPE = {
    "timestamp": "TIMESTAMP",
    "integer": "INTEGER",
    "double": "DOUBLE",
    "count": "INTEGER",
    "duration": "DOUBLE",
    "amount": "DOUBLE",
    "text": "VARCHAR",
    "label": "VARCHAR",
}


def column_names(table: str) -> tuple[str, ...]:
    """Canonical column names of ``table``, in view order."""
    return tuple(c.name for c in SCHEMA[table])


def column(table: str, name: str) -> Column | None:
    """The canonical column ``name`` of ``table``, or None."""
    for c in SCHEMA[table]:
        if c.name == name:
            return c
    return None
