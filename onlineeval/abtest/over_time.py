"""The effect of an A/B experiment over time: per calendar day, and per day since exposure.

Which searches count is the readout's rule (:mod:`onlineeval.abtest.units`): a unit's
outcome is its exposures, from its first one on, inside the window; units seen in more than
one variant are left out. The per-unit sums are split by day in DuckDB
(``sql/ab/unit_sums.sql`` with ``daily``) and reduced there to each arm's moments per day
(``sql/ab/over_time_units.sql``, ``sql/ab/xy_moments.sql``): a few rows per day leave
DuckDB, however many units.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from onlineeval import queries
from onlineeval.abtest.metrics import ABMetric, is_outcome, usable
from onlineeval.abtest.readout import MIN_UNITS, check_min_units, plain_test, plain_test_name
from onlineeval.abtest.units import (
    analysis_window,
    check_arms,
    exposure_rows,
    moments_of,
    parse_pre_period,
    unit_sums_query,
    xy_moments_of_view,
)
from onlineeval.errors import InputError, InvalidParameterError, SchemaError
from onlineeval.levels import check_level
from onlineeval.logs.coerce import as_logs
from onlineeval.stats.cuped import CupedComparison, cuped_compare
from onlineeval.stats.moments import Moments
from onlineeval.stats.results import RESULT_COLUMNS, TwoArmStats, comparison_frame

#: the two readings of "over time" (``by``)
BY = ("day", "exposure_day")

#: prefix of the views of the per-unit rows (exposure_rows names the unit sums' view
#: ``<prefix>_unit_rows``: the pre-period rows CUPED reads)
_NAME = "ab_over_time"

#: the per-unit columns of ``sql/ab/over_time_units.sql`` with cuped, in the order
#: :func:`onlineeval.stats.cuped.cuped_compare` reads them (num, den, pre_num, pre_den, has_pre)
CUPED_COLUMNS = ("x", "y", "px", "py", "h")

#: result columns after the lead (metric, variant, day or days_since_exposure, values)
EXTRA = ("rel_diff", "rel_ci_low", "rel_ci_high", "df", "enough_units")


def effect_over_time(
    logs: Any, control: str, treatment: str, metric: str = "ctr", *,
    experiment: str | None = None, by: str = "day", unit: str = "user_id",
    alpha: float = 0.05, start: Any = None, end: Any = None, min_units: int = MIN_UNITS,
) -> pd.DataFrame:
    """Treatment − control on ``metric`` day by day, with the readout's test.

    ``by="day"`` — the **cumulative** effect per calendar day ``d`` of the experiment (from
    the first to the last exposure day, dates of the log's ``ts``): over the units first
    exposed on or before ``d``, each with its exposures on or before ``d``. The last day is
    the whole experiment: its row is :func:`onlineeval.abtest`'s for the metric (same units,
    searches, estimate, interval and p-value, up to floating-point rounding of the sums).

    ``by="exposure_day"`` — the effect on the searches made on day ``k`` since a unit's
    first exposure (``k = 0`` for its first 24 hours, 1 for the next 24, ...), over the units
    with exposures on their day ``k``. An effect that fades with ``k`` is novelty, one that
    grows is primacy (learning). A per-unit mean (e.g. ``searches_per_unit``) is then per
    unit active on its day ``k``.

    The test is the readout's (:func:`onlineeval.abtest`, ``test="auto"``): the delta-method
    t for a ratio metric (its searches are clustered in units, and the unit is what was
    randomised), Welch's t for a per-unit mean, both with Welch–Satterthwaite df; the
    relative lift's interval is the delta method on the ratio of the two means.

    The intervals and p-values are **pointwise**: each day's, read alone. Read together
    they are many looks at the same experiment, so a day whose interval excludes 0 is no
    evidence of an effect by itself (``p_adjusted`` is null: no correction is applied); the
    decision is the readout's, at the planned end. ``enough_units`` is false on days where an
    arm has fewer than ``min_units`` units with data for the metric (the readout gives no
    verdict there).

    Returns a DataFrame with one row per day: ``metric``, ``variant`` (the treatment),
    ``day`` (a ``datetime.date``) or ``days_since_exposure`` (int), ``control_value``,
    ``treatment_value``, the result block (:class:`~onlineeval.stats.results.ComparisonResult`:
    ``estimate`` = treatment − control, ``ci_low``, ``ci_high``, ``ci_level`` = 1 − alpha,
    ``p_value``, ``units_control``/``units_treatment`` the units of the day, ...), then
    ``rel_diff`` (treatment / control − 1) with ``rel_ci_low``/``rel_ci_high``, ``df`` and
    ``enough_units``. ``attrs`` holds metric, by, experiment, window (start, end),
    control, treatment, alpha, unit, min_units, ``intervals`` ("pointwise") and
    ``excluded`` (what the outcome leaves out, as :func:`onlineeval.abtest`; warned).
    """
    alpha = check_level(alpha)
    min_units = check_min_units(min_units)
    if by not in BY:
        raise InvalidParameterError(f"by must be one of {', '.join(BY)}; got {by!r}")
    prep = over_time_units(logs, metric, experiment=experiment, unit=unit, start=start,
                           end=end, cumulative=by == "day", arms=(control, treatment))
    chosen, params, window, excluded = prep.metric, prep.params, prep.window, prep.excluded
    days, c, t, stats = arm_stats(prep, *prep.arms, alpha)
    key = "day" if by == "day" else "days_since_exposure"
    frame = _frame(stats, chosen, treatment, key, days, c, t, unit, alpha, min_units)
    frame.attrs.update({
        "metric": chosen.name, "by": by, "experiment": params["experiment"],
        "window": {"start": window.start, "end": window.end}, "control": control,
        "treatment": treatment, "alpha": alpha, "unit": unit, "min_units": min_units,
        "intervals": "pointwise", "excluded": excluded,
    })
    return frame


@dataclass(frozen=True)
class OverTimeUnits:
    """The per-unit rows of ``sql/ab/over_time_units.sql`` kept in DuckDB as ``view``."""

    con: Any
    view: str
    metric: ABMetric
    params: dict[str, Any]
    window: Any
    excluded: dict[str, int]
    empty_message: str
    #: the keys (variant texts) of the arms checked, control then treatment
    arms: tuple[str, str] | None = None


def over_time_units(
    logs: Any, metric: str, *, experiment: str | None, unit: str, start: Any, end: Any,
    cumulative: bool, arms: tuple[str, str] | None = None, hourly: bool = False,
    pre_period: Any = None, cuped: bool | None = None,
) -> OverTimeUnits:
    """One metric's per-unit ``(unit, variant, key, x, y)`` rows by day as a DuckDB view:
    the one definition of the sums by day that the effect over time, the sequential readout
    and the A/A harness read (``arms``: the two variants that must exist, if checked;
    ``hourly``: cumulative by hour instead, ``key`` the hour's start). ``pre_period`` and
    ``cuped`` as for :func:`onlineeval.abtest` (cumulative only): the rows then also carry
    each unit's CUPED covariates ``px, py, h`` (``sql/ab/over_time_units.sql``)."""
    logs = as_logs(logs)
    chosen = usable(logs, metric)
    if not logs.has("searches", "ts"):
        raise InputError(
            f"the effect over time needs search timestamps, but the log {logs.source} has no "
            "searches.ts column"
        )
    window = analysis_window(start, end, parse_pre_period(pre_period), cuped)
    if window.cuped and not cumulative:
        raise InvalidParameterError("CUPED over time is for the cumulative effect (by='day')")
    sql, params, known = unit_sums_query(logs, unit, experiment, window=window, daily=True,
                                         hourly=hourly, outcomes=is_outcome(chosen))
    if arms is not None:
        arms = check_arms(logs, known, *arms)
    con = logs.con
    rows, excluded = exposure_rows(con, _NAME, sql, params)
    q = queries.load("ab/over_time_units")
    per_unit = chosen.kind == "mean"
    calendar = "ab_over_time_calendar"  # read by the view below: stays registered
    con.register(calendar, _calendar(con, hourly))
    text = q.render(unit_rows=[rows], num=[chosen.num],
                    den=[chosen.num if per_unit else chosen.den], calendar=[calendar],
                    cumulative=cumulative, per_unit=per_unit, cuped=window.cuped,
                    pre_rows=[f"{_NAME}_unit_rows"])
    view = queries.create(con, "ab_over_time_units", text)
    empty = ("the experiment has no exposures"
             f"{'' if start is None and end is None else ' in the window'}")
    return OverTimeUnits(con, view, chosen, params, window, excluded, empty, arms)


def _calendar(con: Any, hourly: bool) -> pa.Table:
    """Every day (hour) from the first to the last search of the log: the keys a cumulative
    row of ``sql/ab/over_time_units.sql`` may take (a superset of the exposures' keys)."""
    q = queries.load("logs/time_range")
    first, last = con.execute(q.render()).fetchall()[0][:2]
    if first is None:
        return pa.table({"key": pa.array([], pa.timestamp("us") if hourly else pa.date32())})
    if hourly:
        keys = pd.date_range(pd.Timestamp(first).floor("h"), pd.Timestamp(last).floor("h"),
                             freq="h")
        return pa.table({"key": pa.array(keys.to_pydatetime(), pa.timestamp("us"))})
    days = pd.date_range(pd.Timestamp(first).normalize(), pd.Timestamp(last).normalize(),
                         freq="D")
    return pa.table({"key": pa.array([d.date() for d in days], pa.date32())})


def arm_stats(
    prep: OverTimeUnits, control: str, treatment: str, alpha: float,
) -> tuple[list[Any], pd.DataFrame, pd.DataFrame, TwoArmStats]:
    """Each arm's moments per key (``sql/ab/xy_moments.sql``: a few rows per day reach
    Python) and the readout's test at every key."""
    days, c, t = _arms_by_key(prep, xy_moments_of_view(prep.con, prep.view), control,
                              treatment)
    stats = plain_test(prep.metric, moments_of(c), moments_of(t), alpha,
                       c["n_den"].to_numpy(dtype=float), t["n_den"].to_numpy(dtype=float))
    return days, c, t, stats


def cuped_arm_stats(
    prep: OverTimeUnits, control: str, treatment: str, alpha: float,
) -> tuple[list[Any], pd.DataFrame, pd.DataFrame, CupedComparison]:
    """:func:`arm_stats` with CUPED (``prep`` made with ``cuped``): each arm's moments of
    :data:`CUPED_COLUMNS` per key (``sql/ab/cuped_moments.sql``, one query for every key) and
    the readout's CUPED comparison at every key, theta estimated from the units of that key
    alone (:func:`onlineeval.stats.cuped.cuped_compare`, vectorised over the keys)."""
    cols = list(CUPED_COLUMNS)
    pairs = [(a, b) for i, a in enumerate(cols) for b in cols[i:]]
    q = queries.load("ab/cuped_moments")
    raw = prep.con.execute(q.render(rows=[prep.view], means=cols, pairs=pairs)).fetchall()
    names = ["variant", "key", *(f"mean_{c}" for c in cols),
             *(f"cov_{a}_{b}" for a, b in pairs), "n", "n_den"]
    days, c, t = _arms_by_key(prep, pd.DataFrame(raw, columns=names), control, treatment)

    def moments(arm: pd.DataFrame) -> Moments:
        index = {c: i for i, c in enumerate(cols)}
        mean = arm[[f"mean_{c}" for c in cols]].to_numpy(dtype=float)
        cov = np.empty((len(arm), len(cols), len(cols)))
        for a, b in pairs:
            values = arm[f"cov_{a}_{b}"].to_numpy(dtype=float)
            cov[:, index[a], index[b]] = cov[:, index[b], index[a]] = values
        return Moments(arm["n"].to_numpy(dtype=float), mean, cov)

    res = cuped_compare(
        moments(c), moments(t), num=0, den=1, pre_num=2, pre_den=3, has_pre=4, alpha=alpha,
        units_c=c["n_den"].to_numpy(dtype=float), units_t=t["n_den"].to_numpy(dtype=float),
        test=plain_test_name(prep.metric))
    return days, c, t, res


def _arms_by_key(
    prep: OverTimeUnits, moments: pd.DataFrame, control: str, treatment: str,
) -> tuple[list[Any], pd.DataFrame, pd.DataFrame]:
    """The keys of ``moments`` (rows per variant and key) in order and each arm's rows at
    every key; an error when there are none or an arm has no unit at any key."""
    days = sorted(moments["key"].unique())
    if not days:
        raise SchemaError(prep.empty_message)
    c = _arm(moments, control, days)
    t = _arm(moments, treatment, days)
    if not (c["n"] > 0).any() or not (t["n"] > 0).any():
        empty = control if not (c["n"] > 0).any() else treatment
        raise SchemaError(f"variant {empty!r} has 0 units in the analysed period")
    return days, c, t


def _arm(moments: pd.DataFrame, variant: str, days: list[Any]) -> pd.DataFrame:
    """The arm's moments per day, in ``days`` order (0 units on a day it has none)."""
    rows = moments[moments["variant"] == variant].set_index("key").reindex(days)
    return rows.assign(n=rows["n"].fillna(0), n_den=rows["n_den"].fillna(0))


def _frame(
    stats: TwoArmStats, metric: ABMetric, treatment: str, key: str, days: list[Any],
    c: pd.DataFrame, t: pd.DataFrame, unit: str, alpha: float,
    min_units: int,
) -> pd.DataFrame:
    lead, results, extra = [], [], []
    for i, day in enumerate(days):
        value = pd.Timestamp(day).date() if key == "day" else int(day)
        lead.append({"metric": metric.name, "variant": treatment, key: value,
                     "control_value": float(stats.control_value[i]),
                     "treatment_value": float(stats.treatment_value[i])})
        one = TwoArmStats(**{f: np.asarray(getattr(stats, f))[i] for f in (
            "control_value", "treatment_value", "abs_diff", "abs_se", "abs_ci_low",
            "abs_ci_high", "rel_diff", "rel_ci_low", "rel_ci_high", "p_value", "df")},
            test=stats.test)
        results.append(one.result(ci_level=1.0 - alpha, units_control=int(c["n"].iloc[i]),
                                  units_treatment=int(t["n"].iloc[i]), unit=unit))
        extra.append({"rel_diff": float(one.rel_diff), "rel_ci_low": float(one.rel_ci_low),
                      "rel_ci_high": float(one.rel_ci_high), "df": float(one.df),
                      "enough_units": bool(min(c["n_den"].iloc[i], t["n_den"].iloc[i])
                                           >= min_units)})
    frame = comparison_frame(lead, results, extra)
    return frame[["metric", "variant", key, "control_value", "treatment_value",
                  *RESULT_COLUMNS, *EXTRA]]
