"""The online metrics, described once: name, formula, edge cases, columns they need.

Every online metric is a ratio of two sums of per-search facts (see
:mod:`onlineeval.online.facts`), or a plain count. ``numerator`` and ``denominator`` name
statistics of the ``online/metrics`` query: ``searches`` is ``count(*)``, ``users`` is
``count(DISTINCT user_id)``, every other statistic is the SUM of the facts column of the same
name. Per randomization unit (A/B tests), the same sums taken per user give the same metric.

``requires`` is a tuple of groups; the metric can be computed when, in every group, at least
one of the listed ``table.column`` is available in the log (see :func:`available`). Otherwise
the metric is NULL and :func:`onlineeval.online.online_metrics` warns, naming the columns.

The CLI help, the generated reference (docs/reference/online-metrics.md, written by
:mod:`onlineeval.online.reference`) and the tests all read :data:`METRICS`; its order is the
column order of ``online_metrics``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from onlineeval.registry import Registry

if TYPE_CHECKING:
    from onlineeval.logs import Logs


@dataclass(frozen=True)
class OnlineMetric:
    """One online metric: ``numerator / denominator`` (a count when denominator is None)."""

    name: str
    numerator: str
    denominator: str | None
    definition: str
    edge_cases: str
    requires: tuple[tuple[str, ...], ...] = ()
    #: which way is an improvement: "higher", "lower", or None for counts and neutral rates
    better: str | None = None
    #: the values the metric can take, (low, high), None for unbounded: rates of searches or
    #: sessions lie in [0, 1]; counts and ratios of counts are >= 0 (used to refuse an
    #: effect size the metric cannot show)
    bounds: tuple[float | None, float | None] = (0.0, None)

    def value(self, stats: Any) -> Any:
        """The metric from its statistics: ``stats[numerator] / stats[denominator]`` (a
        table or mapping of sums, e.g. a row group of ``online/metrics``), NaN where the
        denominator is 0; the count itself when there is no denominator."""
        if self.denominator is None:
            return stats[self.numerator]
        return ratio(stats[self.numerator], stats[self.denominator])

    @property
    def formula(self) -> str:
        """The ratio of sums, in terms of the facts columns."""
        if self.denominator is None:
            return _stat_sql(self.numerator)
        return f"{_stat_sql(self.numerator)} / {_stat_sql(self.denominator)}"


def ratio(num: Any, den: Any) -> pd.Series:
    """``num / den`` as floats, NaN where ``den`` is not > 0 (a rate of nothing is undefined,
    never 0)."""
    num = pd.to_numeric(pd.Series(num), errors="coerce").astype("float64")
    den = pd.to_numeric(pd.Series(den), errors="coerce").astype("float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    return out.where(den > 0)


def _stat_sql(stat: str) -> str:
    return {"searches": "count(*)", "users": "count(DISTINCT user_id)"}.get(stat, f"sum({stat})")


def markdown_table() -> str:
    """The metrics table of the README (a test checks the README holds exactly this)."""
    lines = ["| column | definition | edge cases | from the per-search facts |",
             "| --- | --- | --- | --- |"]
    for name in (*COLUMNS, *EVENT_COLUMNS):
        m = METRICS.get(name)
        lines.append(f"| `{name}` | {m.definition} | {m.edge_cases} | `{m.formula}` |")
    return "\n".join(lines)


_SESSIONS = ("searches.session_id", "searches.ts")

METRICS: Registry[OnlineMetric] = Registry("online metric")

_ALL = (
    OnlineMetric(
        "searches", "searches", None,
        "number of searches (result pages served)",
        "always available",
    ),
    OnlineMetric(
        "sessions", "session_first", None,
        "number of sessions: given (user_id, session_id) pairs, else derived per user (a new "
        "session starts after more than session_gap_min minutes without a search or click)",
        "a session is counted in the group of its first search",
        (_SESSIONS,),
    ),
    OnlineMetric(
        "users", "users", None,
        "number of distinct user_id",
        "a user active in several groups counts in each",
    ),
    OnlineMetric(
        "ctr", "has_click", "searches",
        "searches with >= 1 click / searches",
        "searches without results count in the denominator; several clicks count once",
        better="higher", bounds=(0.0, 1.0),
    ),
    OnlineMetric(
        "clicks_per_search", "n_clicks", "searches",
        "clicks / searches",
        "every click row counts, including repeated clicks on one result",
        better="higher",
    ),
    OnlineMetric(
        "abandonment_rate", "abandoned", "nonzero",
        "searches with n_results > 0 and no click / searches with n_results > 0",
        "NULL when no search has results; zero-result searches are left out",
        (("searches.n_results",),),
        better="lower", bounds=(0.0, 1.0),
    ),
    OnlineMetric(
        "zero_result_rate", "zero_result", "known_n_results",
        "searches with n_results = 0 / searches",
        "n_results counted from results when not given or null (a search with no results rows "
        "has 0); without results, over the searches with a known n_results",
        (("searches.n_results",),),
        better="lower", bounds=(0.0, 1.0),
    ),
    OnlineMetric(
        "session_abandonment_rate", "session_abandoned", "session_first",
        "sessions with no click / sessions",
        "a click counts for the session of the search it was made on",
        (_SESSIONS,),
        better="lower", bounds=(0.0, 1.0),
    ),
    OnlineMetric(
        "session_success_rate", "session_success", "session_first",
        "sessions with >= 1 satisfied click / sessions; a click is satisfied when dwell >= "
        "sat_dwell_s, or when its dwell is unknown and it is the last event of its session",
        "dwell is dwell_ms, else the time to the user's next event in the session; a click "
        "with neither ts nor dwell_ms is not satisfied",
        (_SESSIONS, ("clicks.dwell_ms", "clicks.ts")),
        better="higher", bounds=(0.0, 1.0),
    ),
    OnlineMetric(
        "mean_time_to_first_click_s", "ttfc_s", "has_ttfc",
        "mean over searches with a timed click of (first click ts - search ts), in seconds",
        "NULL when no search has a timed click; a click before its search gives a negative "
        "time (kept, not clipped)",
        (("searches.ts",), ("clicks.ts",)),
        better="lower", bounds=(None, None),
    ),
    OnlineMetric(
        "click_mrr", "rr", "known_rr",
        "mean over searches of 1 / (lowest clicked rank), 0 for searches without a click",
        "clicks without a rank are ignored; a search whose clicks all lack a rank is left "
        "out of the mean",
        (("clicks.rank",),),
        better="higher", bounds=(0.0, 1.0),
    ),
    OnlineMetric(
        "reformulation_rate", "reformulated", "known_query",
        "searches whose next search in the same session has a different query and comes "
        "with no click in between / searches with a known query",
        "the last search of a session is never reformulated; a next search without query "
        "does not count; a click without ts is taken to come before the next search",
        (("searches.query",), ("searches.ts",)),
        better="lower", bounds=(0.0, 1.0),
    ),
    OnlineMetric(
        "queries_per_session", "searches", "session_first",
        "searches / sessions",
        "a session's searches may span groups when grouping by time",
        (_SESSIONS,),
    ),
)
_EVENTS = (("events.ts",),)
_ATTRIBUTED = ("events are attributed to searches by the rules of docs/conversions.md "
               "(window attribution_window); unattributable events count in no group")

#: outcome metrics, from the events attributed to searches (online/event_facts); a log
#: without an events table does not have them (they are left out, not NULL)
_OUTCOMES = (
    OnlineMetric(
        "conversion_rate", "converted", "searches",
        "searches with >= 1 attributed event / searches",
        f"{_ATTRIBUTED}; several events on one search count once",
        _EVENTS, better="higher", bounds=(0.0, 1.0),
    ),
    OnlineMetric(
        "session_conversion_rate", "session_converted", "session_first",
        "sessions with >= 1 event attributed to one of their searches / sessions",
        f"{_ATTRIBUTED}; a session is counted in the group of its first search",
        (*_EVENTS, _SESSIONS), better="higher", bounds=(0.0, 1.0),
    ),
    OnlineMetric(
        "events_per_user", "n_events", "users",
        "attributed events / distinct users",
        f"{_ATTRIBUTED}; a user active in several groups counts in each",
        _EVENTS, better="higher",
    ),
    OnlineMetric(
        "revenue_per_user", "revenue", "users",
        "sum of the value of attributed events / distinct users",
        f"{_ATTRIBUTED}; an event without a value adds 0; negative values (refunds) count",
        _EVENTS, better="higher", bounds=(None, None),
    ),
    OnlineMetric(
        "revenue_per_search", "revenue", "searches",
        "sum of the value of attributed events / searches",
        f"{_ATTRIBUTED}; an event without a value adds 0; negative values (refunds) count",
        _EVENTS, better="higher", bounds=(None, None),
    ),
    OnlineMetric(
        "mean_time_to_conversion_s", "ttc_s", "has_ttc",
        "mean over converted searches with a ts of (first attributed event ts - search ts), "
        "in seconds",
        "NULL when no search is converted; an event naming its search_id may come before it "
        "(a negative time, kept)",
        (*_EVENTS, ("searches.ts",)), better="lower", bounds=(None, None),
    ),
)
for _m in (*_ALL, *_OUTCOMES):
    METRICS.register(_m.name, _m)

#: the output columns of ``online_metrics`` after the group columns, in order
COLUMNS: tuple[str, ...] = tuple(m.name for m in _ALL)

#: the outcome metrics' columns, after :data:`COLUMNS` when the log has events
EVENT_COLUMNS: tuple[str, ...] = tuple(m.name for m in _OUTCOMES)


def columns_for(logs: Logs) -> tuple[str, ...]:
    """The metric columns of ``online_metrics`` for ``logs``: :data:`COLUMNS`, then
    :data:`EVENT_COLUMNS` when the log has an events table."""
    return (*COLUMNS, *EVENT_COLUMNS) if getattr(logs, "has_events", False) else COLUMNS


def available(logs: Logs, column: str) -> bool:
    """Whether ``table.column`` has values in the log's clean views.

    ``searches.n_results`` is also available when a results table was given (the loader counts
    the results rows) and ``clicks.rank`` when clicks have a doc_id and results were given
    (the loader looks the rank up).
    """
    table, name = column.split(".", 1)
    if logs.has(table, name):
        return True
    if column == "searches.n_results":
        return logs.has_results
    if column == "clicks.rank":
        return logs.has_results and logs.has("clicks", "doc_id")
    return False


def missing_requirements(logs: Logs, metric: OnlineMetric) -> list[tuple[str, ...]]:
    """The requirement groups of ``metric`` that the log cannot satisfy (empty when fine)."""
    return [group for group in metric.requires
            if not any(available(logs, col) for col in group)]
