"""The A/B effect per segment (a searches column such as device or a query class), with a
test of whether the effect differs between segments.

A unit's segment is the column's value on its **first exposure** (the earliest exposure
search; among exposures at the same earliest time, the value first in text order, NULL last),
and all its outcome is counted there. Each unit is thus in exactly one segment, so the
segments' estimates are independent — the heterogeneity test needs that — and a segment
stays a set of randomised units, so each arm of a segment is still a random sample. (Splitting
each unit's searches by their own segment instead would put one unit in several segments and
break both.) Units whose exposures carry more than one value are counted
(``attrs["units_moving"]``) and warned about.

The per-unit rows come from ``sql/ab/unit_sums.sql`` with the column as its ``key``: one row
per unit, variant and value, so the rows leaving DuckDB are per unit (times the values a unit
has), never per search.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.abtest.metrics import UNIT_SUMS, is_outcome, usable
from onlineeval.abtest.readout import MIN_UNITS, check_min_units, plain_test
from onlineeval.abtest.units import (
    analysis_window,
    check_arms,
    unit_arrays,
    unit_sums_query,
)
from onlineeval.errors import SchemaError, UnknownNameError
from onlineeval.levels import check_level
from onlineeval.logs.coerce import as_logs
from onlineeval.stats.heterogeneity import cochran_q
from onlineeval.stats.moments import Moments
from onlineeval.stats.multiple import CORRECTIONS
from onlineeval.stats.results import RESULT_COLUMNS, adjust_family, comparison_frame

#: columns after the result block
EXTRA = ("rel_diff", "rel_ci_low", "rel_ci_high", "df", "enough_units", "in_heterogeneity")


def segment_effects(
    logs: Any, column: str, control: str, treatment: str, metric: str = "ctr", *,
    experiment: str | None = None, unit: str = "user_id", alpha: float = 0.05,
    start: Any = None, end: Any = None, correction: str = "holm",
    min_units: int = MIN_UNITS,
) -> pd.DataFrame:
    """Treatment − control on ``metric`` in each segment of the searches ``column``.

    Which searches count is the readout's rule (:func:`onlineeval.abtest`); a unit's segment
    is the value at its first exposure (module docstring). In each segment the test is the
    readout's: the delta-method t for a ratio metric (searches are clustered in units),
    Welch's t for a per-unit mean, both with Welch–Satterthwaite df. The per-segment
    p-values are adjusted by ``correction`` (default Holm, family-wise) over the segments
    with a p-value: looking at every segment for an effect is a family of tests.

    Heterogeneity (treatment × segment interaction): Cochran's Q on the segments' Δs with
    their variances (:func:`onlineeval.stats.heterogeneity.cochran_q`), chi-square with
    ``k - 1`` df, over the ``k`` segments where both arms have at least ``min_units`` units
    with data (``in_heterogeneity``); the others are shown but left out of Q, whose chi-square
    reference needs well-estimated variances. A small p says the effect differs between
    segments; it does not say which (read the per-segment rows, adjusted).

    Returns one row per segment value (sorted by text, NULL last): ``segment`` (the value;
    None for NULL, its own segment), ``metric``, ``variant`` (the treatment),
    ``control_value``, ``treatment_value``, the result block
    (:class:`~onlineeval.stats.results.ComparisonResult`; ``p_adjusted`` by ``correction``
    over the segments), then ``rel_diff``, ``rel_ci_low``, ``rel_ci_high``, ``df``,
    ``enough_units`` and ``in_heterogeneity``. ``attrs``: ``column``, ``heterogeneity``
    (test, statistic, df, p_value, pooled Δ and its se, i2, k, segments_left_out),
    ``units_moving`` (units whose exposures carry more than one value), ``units`` (analysed
    units), ``excluded`` (as :func:`onlineeval.abtest`), metric, experiment, window, control,
    treatment, alpha, correction, unit, min_units.
    """
    alpha = check_level(alpha)
    min_units = check_min_units(min_units)
    correction = CORRECTIONS.canonical(correction)
    logs = as_logs(logs)
    chosen = usable(logs, metric)
    columns = list(logs.con.table("searches").columns)
    if not isinstance(column, str) or column not in columns:
        raise UnknownNameError(
            f"unknown segment column {column!r}; the searches of {logs.source} have columns: "
            f"{', '.join(columns)}"
        )
    window = analysis_window(start, end)
    sql, params, known = unit_sums_query(logs, unit, experiment, window=window, key=column,
                                         outcomes=is_outcome(chosen))
    given = (control, treatment)
    control, treatment = check_arms(logs, known, control, treatment)
    rows = logs.con.execute(sql, params).df()
    segment_of, moving = _first_segments(rows)
    data = unit_arrays(_collapse(rows), known, cuped=False)
    for name in (control, treatment):
        if len(data.arms.get(name, ())) == 0:
            raise SchemaError(f"variant {name!r} has 0 units in the analysed period")
    if moving:
        units = sum(len(data.arms[v]) for v in (control, treatment))
        warnings.warn(
            f"{moving:,} units have exposures in more than one value of {column!r}; each "
            f"counts in the segment of its first exposure ({units:,} units analysed)",
            stacklevel=2,
        )
    num, den = data.col(chosen.num), data.col(chosen.den)
    labels = {v: np.array([segment_of[u] for u in data.ids[v]], dtype=object)
              for v in (control, treatment)}
    values = sorted({*labels[control], *labels[treatment]},
                    key=lambda s: (s is None, "" if s is None else str(s)))
    lead, results, extra, compared = [], [], [], []
    for value in values:
        arms = [data.arms[v][_is(labels[v], value)] for v in (control, treatment)]
        with_data = [int(np.count_nonzero(a[:, den])) for a in arms]
        comp = plain_test(chosen, Moments.from_units(arms[0][:, [num, den]]),
                          Moments.from_units(arms[1][:, [num, den]]), alpha, *with_data)
        compared.append(comp)
        lead.append({"segment": value, "metric": chosen.name, "variant": given[1],
                     "control_value": float(comp.control_value),
                     "treatment_value": float(comp.treatment_value)})
        results.append(comp.result(ci_level=1.0 - alpha, units_control=len(arms[0]),
                                   units_treatment=len(arms[1]), unit=unit))
        se = float(comp.abs_se)
        extra.append({"rel_diff": float(comp.rel_diff), "rel_ci_low": float(comp.rel_ci_low),
                      "rel_ci_high": float(comp.rel_ci_high), "df": float(comp.df),
                      "enough_units": min(with_data) >= min_units,
                      "in_heterogeneity": min(with_data) >= min_units
                      and np.isfinite(se) and se > 0})
    frame = comparison_frame(lead, adjust_family(results, correction), extra)
    frame = frame[["segment", "metric", "variant", "control_value", "treatment_value",
                   *RESULT_COLUMNS, *EXTRA]]
    used = frame["in_heterogeneity"].to_numpy(dtype=bool)
    q = cochran_q(frame["estimate"].to_numpy()[used],
                  np.array([float(c.abs_se) ** 2 for c in compared])[used])
    frame.attrs.update({
        "column": column,
        "heterogeneity": {**q.to_dict(),
                          "segments_left_out": [v for v, u in zip(values, used, strict=True)
                                                if not u]},
        "units_moving": moving, "units": int(len(data.arms[control]) + len(data.arms[treatment])),
        "excluded": dict(data.excluded), "metric": chosen.name,
        "experiment": params["experiment"], "window": dict(data.window), "control": given[0],
        "treatment": given[1], "alpha": alpha, "correction": correction, "unit": unit,
        "min_units": min_units,
    })
    return frame


def _is(labels: np.ndarray, value: Any) -> np.ndarray:
    if value is None:
        return np.array([v is None for v in labels], dtype=bool)
    return np.array([v is not None and v == value for v in labels], dtype=bool)


def _first_segments(rows: pd.DataFrame) -> tuple[dict[Any, Any], int]:
    """Each unit's value at its first exposure, and the units with more than one value (of
    those in one variant: units in several are left out of every arm anyway)."""
    exp = rows[rows["period"] == "exp"].copy()
    exp["key"] = exp["key"].astype(object).where(exp["key"].notna(), None)
    exp["_null"] = exp["key"].isna()
    exp["_text"] = exp["key"].map(lambda v: "" if v is None else str(v))
    first = exp.sort_values(["unit", "first_ts", "_null", "_text"], kind="stable",
                            na_position="last").drop_duplicates("unit")
    one_variant = exp.groupby("unit")["variant"].nunique() == 1
    values = exp.groupby("unit")["key"].nunique(dropna=False)
    moving = int(((values > 1) & one_variant).sum())
    return dict(zip(first["unit"], first["key"], strict=True)), moving


def _collapse(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with each unit's exposure rows summed over the key's values."""
    exp = rows[rows["period"] == "exp"]
    summed = exp.groupby(["unit", "variant"], sort=False).agg(
        period=("period", "first"), first_ts=("first_ts", "min"),
        last_ts=("last_ts", "max"), **{c: (c, "sum") for c in UNIT_SUMS}).reset_index()
    other = rows[rows["period"] != "exp"].drop(columns="key")
    return pd.concat([summed, other], ignore_index=True)
