"""The counterfactual Δ of two rankings: treatment − control clicks@k, both estimated on one
log (the logging ranker's), with the interval of the difference.

Both estimates are ratios of per-unit sums over the same units (numerator y, pages n, from
the estimator's SQL), so they are correlated; estimating each interval and combining them
as if independent would be wrong. Per unit the vector (y_C, n_C, y_T, n_T) (a unit with no
page for one candidate has zeros there) gives

    Δ = sum y_T / sum n_T − sum y_C / sum n_C

and the delta method over units gives its variance g' S g / units, S the covariance of the
vectors and g the gradient of Δ in their means (:func:`onlineeval.stats.moments.
ratio_gradient`); for snips and dr with the log's own model the per-unit y are already the
linearisations that carry the pooled rates' noise. The interval is normal, Δ ± z·se, and
the p-value the two-sided z test of Δ = 0. Where both rankings put the same documents at
the same ranks for every query the log holds, every unit contributes the same to both and
Δ = 0 with se = 0 (a Δ or variance within rounding of its terms,
:data:`onlineeval.stats.moments.CANCELLATION`, counts as 0: the SQL sums in no fixed order):
the p-value is then 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from os import PathLike
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from onlineeval.counterfactual.evaluation import CounterfactualResult, Prepared, prepare
from onlineeval.levels import check_level
from onlineeval.stats.moments import (
    CANCELLATION,
    Moments,
    clamp_cancelled,
    ratio_gradient,
)
from onlineeval.stats.results import ComparisonResult, comparison_frame


def paired_units(control: pd.DataFrame, treatment: pd.DataFrame, column: str) -> np.ndarray:
    """Per unit (y_C, n_C, y_T, n_T) from the two candidates' per-unit rows (``unit``,
    ``pages`` and the estimator's ``column``), a unit missing on one side counting 0."""
    both = pd.merge(control[["unit", column, "pages"]], treatment[["unit", column, "pages"]],
                    on="unit", how="outer", suffixes=("_c", "_t"))
    cols = [f"{column}_c", "pages_c", f"{column}_t", "pages_t"]
    return both[cols].astype(float).fillna(0.0).to_numpy()


def difference(values: np.ndarray, confidence: float = 0.95) -> dict[str, float]:
    """Δ, se, interval and z-test p-value from the per-unit (y_C, n_C, y_T, n_T) rows."""
    confidence = check_level(confidence, "confidence")
    m = Moments.from_units(values)
    r_t, r_c = float(m.mean[2] / m.mean[3]), float(m.mean[0] / m.mean[1])
    value = r_t - r_c
    # the SQL sums in no fixed order, so two identical rankings can differ in the last bits:
    # a difference within rounding of the values is none
    if abs(value) <= CANCELLATION * max(abs(r_t), abs(r_c)):
        value = 0.0
    g = ratio_gradient(m, 2, 3) - ratio_gradient(m, 0, 1)
    # the terms cancel exactly where both rankings agree on every page (up to rounding)
    var = float(clamp_cancelled(g @ m.cov @ g, np.abs(g) @ np.abs(m.cov) @ np.abs(g))
                / m.n) if m.n >= 2 else float("nan")
    se = math.sqrt(var) if var >= 0 else float("nan")
    z = float(norm.ppf((1 + confidence) / 2))
    if se > 0:
        p = float(2 * norm.sf(abs(value) / se))
    elif se == 0 and value == 0:
        p = 1.0
    else:
        p = float("nan")
    return {"value": value, "se": se, "ci_low": value - z * se, "ci_high": value + z * se,
            "p_value": p, "units": int(m.n)}


@dataclass
class CounterfactualComparison:
    """The counterfactual Δ of ``treatment`` over ``control`` on one log.

    ``result`` is Δ = treatment − control clicks@k in the shared result shape (normal
    interval, two-sided z test; ``n`` the units of the log with a page either candidate
    ranks; in this paired design ``units_control`` = ``units_treatment`` = ``n``);
    ``control`` and ``treatment`` are each ranking's own estimate with its diagnostics.
    """

    result: ComparisonResult
    se: float
    control: CounterfactualResult
    treatment: CounterfactualResult

    def summary(self) -> pd.DataFrame:
        """One row: metric, estimator, control_value, treatment_value, the result columns,
        se, and each side's unsupported share and effective sample size."""
        lead = {"metric": self.control.metric, "estimator": self.control.estimator,
                "control_value": self.control.value, "treatment_value": self.treatment.value}
        tail = {"se": self.se, "propensity_source": self.control.propensity_source,
                "unsupported_share_control": self.control.unsupported_share,
                "unsupported_share_treatment": self.treatment.unsupported_share,
                "effective_sample_size_control": self.control.effective_sample_size,
                "effective_sample_size_treatment": self.treatment.effective_sample_size}
        return pd.DataFrame([{**lead, **self.result.to_dict(), **tail}])


def compare(logs: Any, control_run: Any, treatment_run: Any, **options: Any,
            ) -> CounterfactualComparison:
    """Counterfactual Δ = treatment − control of two rankings never (or not only) shown,
    from ``logs`` (the logging ranker's log). ``options`` are those of
    :func:`onlineeval.counterfactual.evaluate` (metric, propensities, estimator, clip,
    model, query, unit, max_rank, confidence, searches); the propensities are found once
    and serve both rankings."""
    return compare_prepared(prepare(logs, **options), control_run, treatment_run)


def compare_prepared(setup: Prepared, control_run: Any, treatment_run: Any,
                     seen: dict[str, Any] | None = None) -> CounterfactualComparison:
    """:func:`compare` on a log already prepared (:func:`onlineeval.counterfactual.
    evaluation.prepare`: options checked, propensities found), for callers that compare
    several pairs on one log. ``seen``: estimates already made on this setup, by run path
    (a run file shared by several pairs is estimated once)."""
    def one(run: Any) -> Any:
        if seen is None or not isinstance(run, (str, PathLike)):
            return setup.result(run)
        key = str(run)
        if key not in seen:
            seen[key] = setup.result(run)
        return seen[key]

    control, rows_c = one(control_run)
    treatment, rows_t = one(treatment_run)
    d = difference(paired_units(rows_c, rows_t, setup.name), setup.confidence)
    test = (f"counterfactual {setup.name} Δ {control.metric}, normal interval, delta method "
            f"over {setup.unit} clusters (both rankings estimated on the same log)")
    result = ComparisonResult(
        estimate=d["value"], ci_low=d["ci_low"], ci_high=d["ci_high"],
        ci_level=setup.confidence, p_value=d["p_value"], test=test, n=d["units"],
        units_control=d["units"], units_treatment=d["units"], unit=setup.unit)
    return CounterfactualComparison(result=result, se=d["se"], control=control,
                                    treatment=treatment)


def compare_pairs(logs: Any, pairs: Mapping[str, tuple[Any, Any]], **options: Any,
                  ) -> pd.DataFrame:
    """:func:`compare` for several (control_run, treatment_run) pairs on one log (the
    propensities found once): one row per pair, ``experiment``, ``metric``,
    ``estimator``, ``control_value``, ``treatment_value``, then the result columns
    (:data:`onlineeval.stats.results.RESULT_COLUMNS`), then ``se``."""
    setup = prepare(logs, **options)
    lead, results, tails = [], [], []
    seen: dict[str, Any] = {}
    for name, (control_run, treatment_run) in pairs.items():
        c = compare_prepared(setup, control_run, treatment_run, seen)
        lead.append({"experiment": name, "metric": c.control.metric,
                     "estimator": c.control.estimator, "control_value": c.control.value,
                     "treatment_value": c.treatment.value})
        results.append(c.result)
        tails.append({"se": c.se})
    return comparison_frame(lead, results, tails)
