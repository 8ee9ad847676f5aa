"""Quantile metrics of an A/B experiment: the median, p90, ... of a per-search value (time to
first click, or a duration column of the log) per arm, and their difference with an interval
that respects clustering by unit (:mod:`onlineeval.stats.quantile`: Deng, Knoblich & Lu 2018).

What leaves DuckDB: per arm a few counts, one value per requested order statistic (three per
quantile: the estimate and its interval's ends) and the moments of the per-unit counts at
the quantile — never the per-search values. Inside DuckDB the values are held per unit and
distinct value (``sql/ab/unit_sums.sql`` keyed by the value column: a per-unit histogram)
and sorted per arm by a window (``sql/ab/quantile_values.sql``): memory and sort work of the
order of the distinct (unit, value) pairs of the two arms, which DuckDB may spill to disk.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from scipy import stats

from onlineeval import queries
from onlineeval.abtest.metrics import METRICS, missing
from onlineeval.abtest.readout import MIN_UNITS, check_min_units
from onlineeval.abtest.units import (
    analysis_window,
    check_arms,
    exposure_rows,
    moments_of,
    unit_sums_query,
    xy_moments,
)
from onlineeval.errors import InputError, InvalidParameterError, SchemaError, UnknownNameError
from onlineeval.levels import check_level
from onlineeval.logs.coerce import as_logs
from onlineeval.stats.quantile import (
    QuantileArm,
    cdf_sigma,
    check_probability,
    compare_quantiles,
    interval_ranks,
    quantile_rank,
)
from onlineeval.stats.results import RESULT_COLUMNS, comparison_frame

#: named per-search values: name -> (facts column, the A/B metric whose columns it needs,
#: what it is)
NAMED: dict[str, tuple[str, str, str]] = {
    "time_to_first_click": (
        "ttfc_s", "mean_time_to_first_click_s",
        "seconds from the search to its first timed click (searches without one have no "
        "value)"),
}

#: canonical searches columns that are not per-search durations
_NOT_VALUES = ("search_id", "user_id", "ts", "session_id", "query", "experiment", "variant",
               "n_results")

#: columns after the result block
EXTRA = ("rel_diff", "rel_ci_low", "rel_ci_high", "control_ci_low", "control_ci_high",
         "treatment_ci_low", "treatment_ci_high", "values_control", "values_treatment",
         "enough_units")


def quantile_metrics(logs: Any) -> list[str]:
    """The per-search values of the log a quantile can be taken of: ``time_to_first_click``
    when the log has the timestamps for it, then its extra numeric searches columns (a
    duration such as a page load time; the canonical columns are left out)."""
    logs = as_logs(logs)
    out = [name for name, (_, needs, _) in NAMED.items() if not missing(logs, METRICS.get(needs))]
    table = logs.con.table("searches")
    return out + [c for c, t in zip(table.columns, table.types, strict=True)
                  if c not in _NOT_VALUES and _numeric(str(t))]


def _numeric(type_name: str) -> bool:
    return type_name.upper().split("(")[0] in {
        "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
        "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL"}


def _value_column(logs: Any, metric: Any) -> str:
    if isinstance(metric, str) and metric in NAMED:
        column, needs, _ = NAMED[metric]
        lacking = missing(logs, METRICS.get(needs))
        if lacking:
            raise InputError(
                f"the log {logs.source} lacks columns for {metric}: it needs "
                + " and ".join(" or ".join(g) for g in lacking)
            )
        return column
    if not isinstance(metric, str) or metric not in quantile_metrics(logs):
        raise UnknownNameError(
            f"no per-search value {metric!r} to take quantiles of; the log has: "
            f"{', '.join(quantile_metrics(logs)) or '(none)'}"
        )
    return metric


def quantile_effects(
    logs: Any, control: str, treatment: str, metric: str = "time_to_first_click",
    q: Sequence[float] | float = (0.5, 0.9), *, experiment: str | None = None,
    unit: str = "user_id", alpha: float = 0.05, start: Any = None, end: Any = None,
    min_units: int = MIN_UNITS,
) -> pd.DataFrame:
    """Per-search quantiles of ``metric`` per arm and treatment − control, clustered by unit.

    ``metric`` is ``time_to_first_click`` (seconds; searches without a timed click have no
    value and are counted in ``attrs["searches_without_value"]``) or a numeric searches
    column (:func:`quantile_metrics` lists the log's). Which searches count is the readout's
    rule (:func:`onlineeval.abtest`): each unit's exposures from its first one on.

    The quantile of an arm is the order statistic ``X_(ceil(p N))`` of its ``N`` values. Its
    interval is Deng, Knoblich & Lu's (2018): the empirical CDF at the quantile is a ratio of
    per-unit sums, its delta-method standard error (over units, so searches of one user are
    not taken as independent) is inverted into order-statistic ranks, and the quantile's
    standard error is that interval's width over ``2 z``; the difference of the arms is a
    normal z test on those standard errors, the relative difference the delta method on the
    ratio of the quantiles (:mod:`onlineeval.stats.quantile`). It is a large-sample method:
    ``enough_units`` is false where an arm has fewer than ``min_units`` units with values.
    ``p_adjusted`` is null: the quantiles are not a correction family here.

    Returns one row per quantile: ``metric``, ``quantile`` (p), ``variant`` (the
    treatment), ``control_value``, ``treatment_value``, the result block
    (:class:`~onlineeval.stats.results.ComparisonResult`: ``estimate`` = treatment −
    control, ``units_control``/``units_treatment`` the units with values), then
    ``rel_diff``, ``rel_ci_low``, ``rel_ci_high``, each arm's own interval
    (``control_ci_low`` ... ``treatment_ci_high``), ``values_control``,
    ``values_treatment`` (the searches with a value) and ``enough_units``. ``attrs``:
    metric, column, experiment, window, control, treatment, alpha, unit, min_units,
    ``searches_without_value`` and ``units`` per arm, ``excluded`` (what the outcome
    leaves out, as :func:`onlineeval.abtest`; warned), ``method``.
    """
    alpha = check_level(alpha)
    min_units = check_min_units(min_units)
    probs = [check_probability(p) for p in ([q] if isinstance(q, int | float) else list(q))]
    if not probs:
        raise InvalidParameterError("q is empty; give at least one quantile, e.g. 0.5")
    logs = as_logs(logs)
    column = _value_column(logs, metric)
    window = analysis_window(start, end)
    # the values are time to first click or a searches column, never an outcome of events
    sql, params, known = unit_sums_query(logs, unit, experiment, window=window, key=column,
                                         outcomes=False)
    given = (control, treatment)
    arms = control, treatment = check_arms(logs, known, control, treatment)
    con = logs.con
    rows, excluded = exposure_rows(con, "ab_quantiles", sql, params)
    counts = _query(con, "ab/quantile_counts", rows).set_index("variant")
    for arm in arms:
        if arm not in counts.index:
            raise SchemaError(f"variant {arm!r} has 0 units in the analysed period")
    n = {arm: int(counts.loc[arm, "n_values"]) for arm in arms}
    empty = [arm for arm in arms if n[arm] == 0]
    if empty:
        warnings.warn(f"no {metric} values in {', '.join(empty)}: its quantiles are null",
                      stacklevel=2)
    cells = [(arm, p) for arm in arms for p in probs if n[arm]]
    rank = {(arm, p): quantile_rank(n[arm], p) for arm, p in cells}
    value = _values(con, rows, {(arm, rank[arm, p]) for arm, p in cells})
    point = {(arm, p): value[arm, rank[arm, p]] for arm, p in cells}
    q_units = queries.load("ab/quantile_cdf_units")
    asked = pa.table({"variant": pa.array([str(a) for a, _ in cells], pa.string()),
                      "threshold": pa.array([point[c] for c in cells], pa.float64())})
    with queries.registered(con, "ab_quantile_thresholds", asked) as requests:
        moments = xy_moments(con, "ab_quantile_cdf_units",
                             q_units.render(rows=[rows], requests=[requests]))
    z = float(stats.norm.isf(alpha / 2.0))
    sigma, ends = {}, {}
    for arm, p in cells:
        row = moments[(moments["variant"] == arm) & (moments["key"] == point[arm, p])]
        sigma[arm, p] = cdf_sigma(moments_of(row))
        if np.isfinite(sigma[arm, p]):
            ends[arm, p] = interval_ranks(n[arm], p, sigma[arm, p], z)
    value.update(_values(con, rows, {(arm, r) for (arm, _), lh in ends.items() for r in lh}))
    lead, results, extra = [], [], []
    for p in probs:
        qa = {arm: _arm(arm, p, n, counts, rank, point, sigma, ends, value, alpha)
              for arm in arms}
        comp = compare_quantiles(qa[control], qa[treatment], alpha)
        lead.append({"metric": metric, "quantile": p, "variant": given[1],
                     "control_value": qa[control].value,
                     "treatment_value": qa[treatment].value})
        results.append(comp.result(ci_level=1.0 - alpha, units_control=qa[control].units,
                                   units_treatment=qa[treatment].units, unit=unit))
        extra.append({
            "rel_diff": float(comp.rel_diff), "rel_ci_low": float(comp.rel_ci_low),
            "rel_ci_high": float(comp.rel_ci_high),
            "control_ci_low": qa[control].low, "control_ci_high": qa[control].high,
            "treatment_ci_low": qa[treatment].low, "treatment_ci_high": qa[treatment].high,
            "values_control": n[control], "values_treatment": n[treatment],
            "enough_units": min(qa[control].units, qa[treatment].units) >= min_units,
        })
    frame = comparison_frame(lead, results, extra)
    frame = frame[["metric", "quantile", "variant", "control_value", "treatment_value",
                   *RESULT_COLUMNS, *EXTRA]]
    frame.attrs.update({
        "metric": metric, "column": column, "experiment": params["experiment"],
        "window": {"start": window.start, "end": window.end}, "control": given[0],
        "treatment": given[1], "alpha": alpha, "unit": unit, "min_units": min_units,
        "searches_without_value": {a: int(counts.loc[a, "searches_without_value"])
                                   for a in arms},
        "units": {a: int(counts.loc[a, "units"]) for a in arms}, "excluded": excluded,
        "method": "Deng, Knoblich & Lu (2018): delta-method CDF interval inverted to "
                  "order statistics; se = width / (2 z); difference by a normal z test",
    })
    return frame


def _query(con: Any, name: str, rows: str, **tables: str) -> pd.DataFrame:
    q = queries.load(name)
    return con.execute(q.render(rows=[rows], **{k: [v] for k, v in tables.items()})).df()


def _values(con: Any, rows: str, wanted: set[tuple[str, int]]) -> dict[tuple[str, int], float]:
    """The order statistics ``(variant, rank) -> value`` (ab/quantile_values)."""
    if not wanted:
        return {}
    asked = sorted(wanted)
    table = pa.table({"variant": pa.array([str(a) for a, _ in asked], pa.string()),
                      "rank": pa.array([r for _, r in asked], pa.int64())})
    with queries.registered(con, "ab_quantile_ranks", table) as requests:
        got = _query(con, "ab/quantile_values", rows, requests=requests)
    return {(str(v), int(r)): float(x)
            for v, r, x in zip(got["variant"], got["rank"], got["value"], strict=True)}


def _arm(arm: str, p: float, n: dict[str, int], counts: pd.DataFrame,
         rank: dict[Any, int], point: dict[Any, float], sigma: dict[Any, float],
         ends: dict[Any, tuple[int, int]], value: dict[Any, float], alpha: float,
         ) -> QuantileArm:
    nan = float("nan")
    units = int(counts.loc[arm, "units_with_values"])
    if not n[arm]:
        return QuantileArm(p, 0, units, 0, nan, nan, 0, 0, nan, nan, alpha)
    if (arm, p) not in ends:
        return QuantileArm(p, n[arm], units, rank[arm, p], point[arm, p], sigma[arm, p],
                           0, 0, nan, nan, alpha)
    lo, hi = ends[arm, p]
    return QuantileArm(p, n[arm], units, rank[arm, p], point[arm, p], sigma[arm, p], lo, hi,
                       value[arm, lo], value[arm, hi], alpha)
