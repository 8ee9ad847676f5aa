"""The A/B metric registry: each metric as ``sum(num) / sum(den)`` of per-unit sums.

The per-unit sums are the columns of ``sql/ab/unit_sums.sql`` — named exactly as the
statistics of ``sql/online/metrics.sql`` — plus ``units`` (1 for every unit). Two kinds:

``ratio``
    Every ratio metric of :data:`onlineeval.online.definitions.METRICS`, taken from that
    registry (same numerator, denominator, definition and column requirements), so the A/B
    metrics cannot drift from the online ones. Its analysis unit (the search, the session)
    is finer than the randomization unit, so the variance comes from the delta method over
    per-unit sums (Deng, Knoblich & Lu 2018), never from a per-search binomial formula.
``mean``
    A per-unit mean, ``den = units``: e.g. searches per unit, revenue per unit. Welch's t by
    default (Mann–Whitney U or bootstrap on request); this is the delta method's variance
    for a denominator that is 1 for every unit.

The outcome metrics (conversions, revenue, time to conversion: events attributed to
searches, :mod:`onlineeval.online.attribution`) need an events table; without one they are
left out of the default set like any metric whose columns the log lacks.

A metric whose ``requires`` the log cannot satisfy (e.g. sessions without ``ts`` or
``session_id``) is left out of the default set, and reported as null when asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from onlineeval.errors import InputError, InvalidParameterError
from onlineeval.online.definitions import COLUMNS as ONLINE_COLUMNS
from onlineeval.online.definitions import EVENT_COLUMNS, missing_requirements
from onlineeval.online.definitions import METRICS as ONLINE_METRICS
from onlineeval.online.facts import STATISTICS
from onlineeval.registry import Registry

#: per-unit statistics produced by sql/ab/unit_sums.sql, in column order: the searches, then
#: the per-search statistics the facts query declares (onlineeval.online.facts.STATISTICS)
UNIT_SUMS: tuple[str, ...] = ("searches", *STATISTICS)


@dataclass(frozen=True)
class ABMetric:
    """One A/B metric: ``sum(num) / sum(den)`` over the units of an arm."""

    name: str
    num: str
    den: str
    kind: str  # "ratio" or "mean"
    description: str
    requires: tuple[tuple[str, ...], ...] = ()
    #: which way is an improvement ("higher", "lower" or None), as in the online registry
    better: str | None = None
    #: the values the metric can take, as in the online registry (per-unit means: >= 0)
    bounds: tuple[float | None, float | None] = (0.0, None)


METRICS: Registry[ABMetric] = Registry("metric")

for _name, _m in ONLINE_METRICS.items():
    # per user: the A/B test's per-unit means below say the same per randomization unit
    if _m.denominator not in (None, "users"):
        METRICS.register(_name, ABMetric(_name, _m.numerator, _m.denominator, "ratio",
                                         _m.definition, _m.requires, _m.better, _m.bounds))

_SESSIONS = ONLINE_METRICS.get("sessions").requires
_SUCCESS = ONLINE_METRICS.get("session_success_rate").requires
for _name, _num, _desc, _req in (
    ("searches_per_unit", "searches", "searches per randomization unit", ()),
    ("clicks_per_unit", "n_clicks", "clicks per randomization unit", ()),
    ("sessions_per_unit", "session_first", "sessions per randomization unit", _SESSIONS),
    ("successful_sessions_per_unit", "session_success",
     "sessions with a satisfied click per randomization unit", _SUCCESS),
):
    METRICS.register(_name, ABMetric(_name, _num, "units", "mean", _desc, _req))

_EVENTS = ONLINE_METRICS.get("conversion_rate").requires
for _name, _num, _desc in (
    ("events_per_unit", "n_events", "attributed events per randomization unit"),
    ("revenue_per_unit", "revenue", "value of attributed events per randomization unit"),
):
    METRICS.register(_name, ABMetric(_name, _num, "units", "mean", _desc, _EVENTS, "higher",
                                     (None, None) if _num == "revenue" else (0.0, None)))


#: metric names in report order: the online metrics' order, then the per-unit means
ORDER: tuple[str, ...] = (
    *(n for n in ONLINE_COLUMNS if n in METRICS),
    "searches_per_unit", "clicks_per_unit", "sessions_per_unit", "successful_sessions_per_unit",
    *(n for n in EVENT_COLUMNS if n in METRICS), "events_per_unit", "revenue_per_unit",
)


def missing(logs: object, metric: ABMetric) -> list[tuple[str, ...]]:
    """Column groups the metric needs that the log cannot provide (empty when usable)."""
    # missing_requirements reads only ``requires``, which ABMetric carries too
    return missing_requirements(logs, metric)  # type: ignore[arg-type]


def resolve(names: str | list[str] | tuple[str, ...] | None, logs: object) -> list[ABMetric]:
    """Metrics to analyse: the named ones (list or comma-separated), or all usable ones.

    Unknown names raise :class:`~onlineeval.errors.UnknownNameError` listing the metrics.
    """
    if names is None:
        return [m for m in (METRICS.get(n) for n in ORDER) if not missing(logs, m)]
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    out: list[ABMetric] = []
    for n in names:
        m = METRICS.get(n)
        if m not in out:
            out.append(m)
    return out


def usable(logs: object, name: object) -> ABMetric:
    """One metric of :data:`~onlineeval.abtest.metrics.METRICS` the log has the columns for."""
    if not isinstance(name, str):
        raise InvalidParameterError(f"metric must be one metric name; got {name!r}")
    metric = METRICS.get(name)
    lacking = missing(logs, metric)
    if lacking:
        raise InputError(
            f"the log {getattr(logs, 'source', '')} lacks columns for {name}: it needs "
            + " and ".join(" or ".join(g) for g in lacking)
        )
    return metric


def is_outcome(metric: ABMetric) -> bool:
    """Whether ``metric`` counts attributed events (an outcome metric, which needs events)."""
    return any(group in _EVENTS for group in metric.requires)
