"""``online_metrics``: every online metric per group, from one pass over the log."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from onlineeval import queries
from onlineeval.logs.coerce import as_logs
from onlineeval.online.definitions import METRICS, columns_for, missing_requirements
from onlineeval.online.facts import STATISTICS, facts_view
from onlineeval.online.grouping import (
    Grouping,
    resolve,
    warn_pooled_experiments,
    with_time_buckets,
)
from onlineeval.progress import Elapsed

if TYPE_CHECKING:
    from onlineeval.logs import Logs


def metric_sums(
    logs: Logs, by: str | Sequence[str] | None = ("variant",), *, sat_dwell_s: float = 30,
    session_gap_min: float = 30, attribution_window: Any = None, event_type: str | None = None,
) -> pd.DataFrame:
    """The sufficient statistics per group (sums of the per-search facts), one query.

    Columns: the ``by`` columns, then the outputs of ``sql/online/metrics.sql``.
    """
    logs = as_logs(logs, attribution_window=attribution_window, event_type=event_type)
    return _statistics(logs, resolve(logs, by), sat_dwell_s, session_gap_min)


def _statistics(logs: Logs, grouping: Grouping, sat_dwell_s: float,
                session_gap_min: float) -> pd.DataFrame:
    facts, user = facts_view(logs, sat_dwell_s=sat_dwell_s, session_gap_min=session_gap_min,
                             user_key=True)
    q = queries.load("online/metrics")
    sql = q.render(by=list(grouping.sql), facts=[with_time_buckets(logs, facts)], user=[user],
                   stats=list(STATISTICS))
    with Elapsed("computing online metrics"):
        df = logs.con.sql(sql).df()
    return df.rename(columns=grouping.rename())


def online_metrics(
    logs: Logs, by: str | Sequence[str] | None = ("variant",), *, sat_dwell_s: float = 30,
    session_gap_min: float = 30, attribution_window: Any = None, event_type: str | None = None,
) -> pd.DataFrame:
    """Online metrics of a click log, one row per group.

    Parameters
    ----------
    logs
        A :class:`~onlineeval.logs.Logs`, a log directory or a dict of tables (whatever
        :func:`onlineeval.logs.as_logs` accepts).
    by
        Group columns: any columns of ``searches`` (e.g. ``variant``, ``experiment``) and/or
        a time bucket of the search ts: ``hour``, ``day`` or ``week`` (Monday-based). A
        string is split on commas. Empty (``()`` or None) gives one row for the whole log.
    sat_dwell_s
        Dwell (seconds) from which a click is satisfied (session_success_rate).
    session_gap_min
        Inactivity (minutes) after which a derived session ends; strictly longer gaps start
        a new session. Unused when the log has session_id.
    attribution_window
        With an events table: how long after a click or search an event is still
        attributed to it (hours, or a duration such as ``"30min"``); default the log's
        setting, 24 h (:meth:`onlineeval.logs.Logs.with_events`, docs/conversions.md).
    event_type
        With an events table: count only events of this type (e.g. ``"purchase"``) in the
        outcome metrics; default every type (with a warning when there are several).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, then ``searches, sessions, users, ctr, clicks_per_search,
        abandonment_rate, zero_result_rate, session_abandonment_rate, session_success_rate,
        mean_time_to_first_click_s, click_mrr, reformulation_rate, queries_per_session`` and,
        when the log has an events table, ``conversion_rate, session_conversion_rate,
        events_per_user, revenue_per_user, revenue_per_search, mean_time_to_conversion_s``
        (definitions: :data:`onlineeval.online.definitions.METRICS`). A ratio whose
        denominator is 0 is NULL (NaN). A metric that needs a column the log lacks is NULL
        in every row, with a warning naming the column. When the log holds several
        experiments and ``by`` does not include ``experiment``, a warning names them: each
        row then pools their searches.

    Notes
    -----
    The whole table comes from one DuckDB query: the per-search facts view
    (:func:`onlineeval.online.search_facts`) aggregated per group; the ratios are taken in
    Python from the sums.
    """
    logs = as_logs(logs, attribution_window=attribution_window, event_type=event_type)
    grouping = resolve(logs, by)
    warn_pooled_experiments(logs, grouping)
    stats = _statistics(logs, grouping, sat_dwell_s, session_gap_min)
    out = stats.iloc[:, :len(grouping.names)].copy()
    for name in columns_for(logs):
        metric = METRICS.get(name)
        missing = missing_requirements(logs, metric)
        if missing:
            need = "; and ".join(" or ".join(group) for group in missing)
            warnings.warn(
                f"{name} is NULL: it needs {need}, which the log {logs.source} does not have",
                UserWarning, stacklevel=2,
            )
            if metric.denominator is None:
                out[name] = pd.array([pd.NA] * len(stats), dtype="Int64")
            else:
                out[name] = np.full(len(stats), np.nan)
        elif metric.denominator is None:
            out[name] = pd.to_numeric(stats[metric.numerator]).astype("int64")
        else:
            out[name] = metric.value(stats).to_numpy()
    return out.reset_index(drop=True)

