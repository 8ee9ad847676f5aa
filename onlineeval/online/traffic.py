"""Traffic summaries: ``top_queries`` and ``queries_over_time``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from onlineeval.errors import InvalidParameterError, SchemaError
from onlineeval.online.definitions import METRICS
from onlineeval.online.facts import click_facts
from onlineeval.online.grouping import TIME_BUCKETS, per_group, resolve

if TYPE_CHECKING:
    from onlineeval.logs import Logs


def top_queries(logs: Logs, n: int = 20, by: str | Sequence[str] | None = ()) -> pd.DataFrame:
    """The ``n`` most searched queries (per group), with their users and CTR.

    Returns the ``by`` columns, ``position`` (1 = most searched; ties by query text),
    ``query``, ``searches``, ``users`` and ``ctr`` (searches with a click / searches).
    Searches without a query are left out; a log without queries is an error.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidParameterError(f"n must be a positive integer; got {n!r}")
    if not logs.has("searches", "query"):
        raise SchemaError(
            f"top queries need searches.query; the log {logs.source} has no query column"
        )
    df = per_group(logs, "online/top_queries", resolve(logs, by), click_facts(logs), n=n)
    return _with_ctr(df)


def queries_over_time(
    logs: Logs, freq: str = "hour", by: str | Sequence[str] | None = (),
) -> pd.DataFrame:
    """Search traffic per time bucket: searches, users, distinct queries and CTR.

    ``freq`` is ``hour``, ``day`` or ``week`` (Monday-based); the first output column is
    named after it and holds the bucket start. ``by`` adds group columns after it.
    """
    if freq not in TIME_BUCKETS:
        raise InvalidParameterError(
            f"freq must be one of {', '.join(TIME_BUCKETS)}; got {freq!r}"
        )
    rest = resolve(logs, by)
    if freq in rest.names:
        raise InvalidParameterError(f"by repeats the time bucket {freq!r}")
    grouping = resolve(logs, (freq, *rest.names))
    if not logs.has("searches", "ts"):
        raise SchemaError(f"queries over time need searches.ts; the log {logs.source} has none")
    return _with_ctr(per_group(logs, "online/queries_over_time", grouping, click_facts(logs)))


def _with_ctr(df: pd.DataFrame) -> pd.DataFrame:
    """The CTR column in place of its sums, divided as the metric registry defines it."""
    ctr = METRICS.get("ctr")
    df["ctr"] = ctr.value(df)
    return df.drop(columns=[ctr.numerator])
