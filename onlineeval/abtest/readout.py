"""``onlineeval.abtest``: read out an A/B(/n) experiment from click logs."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import pandas as pd

from onlineeval.abtest.metrics import ORDER, ABMetric, missing, resolve
from onlineeval.abtest.units import (
    UnitData,
    analysis_window,
    as_logs,
    check_variants,
    load_units,
    parse_pre_period,
)
from onlineeval.errors import InvalidParameterError, UnknownNameError
from onlineeval.registry import Registry
from onlineeval.stats.cuped import cuped_compare
from onlineeval.stats.moments import Moments, ratio
from onlineeval.stats.multiple import CORRECTIONS, adjust
from onlineeval.stats.results import Comparison
from onlineeval.stats.srm import srm_test
from onlineeval.stats.tests import bootstrap, compare, mann_whitney, welch

#: the columns of the result, in order (plus cuped_variance_reduction with a pre-period)
COLUMNS: tuple[str, ...] = (
    "metric", "variant", "control_value", "treatment_value", "abs_diff", "abs_ci_low",
    "abs_ci_high", "rel_diff", "rel_ci_low", "rel_ci_high", "p_value", "p_adjusted",
    "significant", "units_control", "units_treatment",
)

TESTS: Registry[str] = Registry("test")
TESTS.register("auto", "delta-method z for ratio metrics, Welch's t for per-unit means")
TESTS.register("mannwhitney", "Mann-Whitney U for per-unit means (ratio metrics: delta z)",
               aliases=("mann-whitney", "mwu"))
TESTS.register("bootstrap", "unit-resampling bootstrap (seeded) for every metric")


def _check_alpha(alpha: Any) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise InvalidParameterError(f"alpha must be a number in (0, 1); got {alpha!r}")
    return float(alpha)


def _undefined() -> Comparison:
    nan = float("nan")
    return Comparison(nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, test="none")


def _srm_units(
    data: UnitData, control: str, expected_split: Mapping[str, float] | None,
) -> dict[str, int]:
    """Units per variant for the SRM check: every variant with units, the control first,
    plus the variants ``expected_split`` names (a designed arm with no units at all is the
    largest mismatch there is)."""
    others = [v for v in data.known_variants if v != control and len(data.arms.get(v, ()))]
    names = [control, *others]
    if expected_split is not None:
        unknown = [v for v in expected_split if v not in data.known_variants]
        if unknown:
            raise UnknownNameError(
                f"expected_split names variants the log does not have: {unknown}; the log's "
                f"variants are: {', '.join(data.known_variants)}"
            )
        names += [v for v in expected_split if v not in names]
    return {v: len(data.arms.get(v, ())) for v in names}


def _compare(
    metric: ABMetric, data: UnitData, control: str, treatment: str, alpha: float, test: str,
    cuped: bool, reps: int, seed: int,
) -> tuple[Comparison, float]:
    num, den = data.col(metric.num), data.col(metric.den)
    c, t = data.arms[control], data.arms[treatment]
    is_mean = metric.kind == "mean"
    if cuped:
        pre_num = data.col(f"pre_{metric.num}")
        pre_den = data.col("has_pre" if is_mean else f"pre_{metric.den}")
        cols = [num, den, pre_num, pre_den, data.col("has_pre")]
        res = cuped_compare(
            Moments.from_units(c[:, cols]), Moments.from_units(t[:, cols]),
            num=0, den=1, pre_num=2, pre_den=3, has_pre=4, alpha=alpha, welch=is_mean,
        )
        return res.comparison, float(res.variance_reduction)
    if test == "bootstrap":
        return bootstrap((c[:, num], c[:, den]), (t[:, num], t[:, den]), alpha=alpha,
                         reps=reps, seed=seed), float("nan")
    if is_mean and test == "mannwhitney":
        return mann_whitney(c[:, num], t[:, num], alpha=alpha), float("nan")
    mc = Moments.from_units(c[:, [num, den]])
    mt = Moments.from_units(t[:, [num, den]])
    if is_mean:
        return welch(mc, mt, 0, alpha=alpha), float("nan")
    return compare(ratio(mc, 0, 1), ratio(mt, 0, 1), alpha=alpha), float("nan")


def abtest(
    logs: Any, control: str = "control", treatments: list[str] | str | None = None,
    metrics: list[str] | str | None = None, unit: str = "user_id", alpha: float = 0.05,
    correction: str = "holm", pre_period: Any = None, *, experiment: str | None = None,
    test: str = "auto", expected_split: Mapping[str, float] | None = None,
    srm_alpha: float = 0.001, bootstrap_reps: int = 2000, seed: int = 0,
    start: Any = None, end: Any = None, cuped: bool | None = None,
) -> pd.DataFrame:
    """Compare each treatment variant with the control on each metric, per randomization unit.

    Parameters
    ----------
    logs
        A :class:`~onlineeval.logs.Logs` (from :func:`onlineeval.load_logs`) or a log
        directory.
    control
        Name of the control variant (``searches.variant`` value).
    treatments
        Variants to compare with the control; default every other variant with units.
    metrics
        Names from :data:`onlineeval.abtest.metrics.METRICS` (list or comma-separated);
        default all of them (without the timestamp-based ones when the log has no ``ts``).
    unit
        The randomization unit column of ``searches`` (default ``user_id``). All statistics
        are computed over units, never over searches.
    alpha
        Two-sided level of the intervals and of ``significant``.
    correction
        ``holm`` (family-wise), ``bh`` (false discovery rate) or ``none``, applied across all
        metric x treatment rows.
    pre_period
        Turn on CUPED with a window start: ``(START, END)`` or ``"START,END"`` (the
        experiment starts at END, pre-period searches from START on) or one timestamp, the
        experiment start. Units without pre-period data are kept (see
        :mod:`onlineeval.stats.cuped`).
    experiment
        The ``searches.experiment`` to analyse: required when the log holds several (an
        error names them), else the log's only one. Searches of other experiments are never
        pooled in: after a unit's first exposure they are left out and counted.
    test
        ``auto`` (delta-method z for ratio metrics, Welch's t for per-unit means),
        ``mannwhitney`` (Mann–Whitney U p-values for per-unit means; no intervals) or
        ``bootstrap`` (seeded unit resampling, percentile intervals).
    expected_split
        Expected share of units per variant for the SRM check (default equal). The check
        covers every variant of the experiment with units in the analysed period (and every
        variant named here), not only the analysed treatments: a mismatch in any arm means
        assignment or logging is broken.
    srm_alpha
        SRM p-value threshold (default 0.001).
    bootstrap_reps, seed
        Bootstrap replicates and seed.
    start, end
        The analysis window, ``start <= ts < end`` (either may be None: unbounded):
        timestamps as strings (``"2024-03-01"``, ``"2024-03-01T12:00:00"``) or datetimes; a
        value with a zone or offset is converted to UTC, one without is read as written,
        like the log's ``ts``. Exposures outside the window do not count.
    cuped
        CUPED with each unit's searches before its first exposure as the pre-period (with
        ``start``: everything before ``start``). Implied by ``pre_period``.

    Which searches count: an exposure is a search of the experiment carrying a variant,
    inside the window. A unit's outcome is its exposures, from its first one on; its
    searches before the first exposure are its pre-period (the CUPED covariate, never
    outcome); its other searches after it (another experiment or none, no variant, after
    ``end``) are left out and counted. Units without an exposure are not analysed.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, treatment) with the columns :data:`COLUMNS` (and
        ``cuped_variance_reduction`` with a pre-period). ``significant`` is
        ``p_adjusted < alpha``; the intervals are per comparison (not adjusted). With a
        pre-period, ``control_value`` and ``treatment_value`` are the plain experiment-period
        values while ``abs_diff``, ``rel_diff``, their intervals and the p-values are the
        CUPED-adjusted ones, so ``abs_diff`` then differs from their difference.
        ``df.attrs`` holds ``srm`` (statistic, p_value, units, expected_shares, mismatch),
        ``srm_message``, ``excluded`` (counts of searches/units left out of the outcome, by
        reason: :data:`onlineeval.abtest.units.EXCLUDED`), ``window`` (``start`` and ``end``
        as given or None, ``first_exposure`` and ``last_exposure`` of the analysed units,
        ``pre_period_start``, ``cuped``), ``experiment`` (the one analysed), ``tests`` (the
        test used per metric), ``alpha``, ``correction``.
        A sample ratio mismatch also raises a warning: the results are then not trustworthy.

    Notes
    -----
    Undefined numbers are null, never a made-up value: ``rel_diff`` and its interval when the
    control value is 0; every value when an arm has no denominator for the metric (warned);
    p-values and intervals when an arm has fewer than 2 units (warned; the Mann–Whitney
    p-value, a rank test, stays defined) or when the metric has
    zero variance in both arms and the same value (a nonzero difference with zero variance
    gets ``p_value`` 0). Null p-values are left out of the correction's family size.
    """
    alpha = _check_alpha(alpha)
    correction = CORRECTIONS.canonical(correction)
    test = TESTS.canonical(test)
    periods = parse_pre_period(pre_period)
    window = analysis_window(start, end, periods, cuped)
    if window.cuped and test != "auto":
        raise InvalidParameterError(
            f"CUPED (pre_period, cuped) works with test='auto' only; got test={test!r}"
        )
    logs = as_logs(logs)
    chosen = resolve(metrics, logs)
    if not chosen:
        raise InvalidParameterError(
            f"no metrics to analyse; give metric names from: {', '.join(ORDER)}"
        )
    unusable = {m.name: missing(logs, m) for m in chosen if missing(logs, m)}
    if unusable:
        warnings.warn(
            "metrics the log lacks columns for are reported as null: " + "; ".join(
                f"{name} needs {' and '.join(' or '.join(g) for g in groups)}"
                for name, groups in unusable.items()
            ),
            stacklevel=2,
        )
    data = load_units(logs, unit=unit, pre_period=periods, experiment=experiment,
                      start=window.start, end=window.end, cuped=window.cuped)
    treat = check_variants(data, control, treatments)
    srm = srm_test(_srm_units(data, control, expected_split), expected_split, srm_alpha)
    if srm.mismatch:
        warnings.warn(srm.message(), stacklevel=2)
    tiny = {v: len(data.arms[v]) for v in [control, *treat] if len(data.arms[v]) < 2}
    if tiny:
        warnings.warn(
            f"variants with fewer than 2 units have no variance estimate, so their p-values "
            f"and intervals are null (Mann-Whitney p-values excepted): {tiny}", stacklevel=2,
        )

    rows = []
    used: dict[str, str] = {}
    for metric in chosen:
        for t in treat:
            if metric.name in unusable:
                comp, reduction = _undefined(), float("nan")
            else:
                comp, reduction = _compare(metric, data, control, t, alpha, test,
                                           window.cuped, bootstrap_reps, seed)
            used[metric.name] = comp.test
            row = {
                "metric": metric.name, "variant": t,
                "control_value": float(comp.control_value),
                "treatment_value": float(comp.treatment_value),
                "abs_diff": float(comp.abs_diff),
                "abs_ci_low": float(comp.abs_ci_low), "abs_ci_high": float(comp.abs_ci_high),
                "rel_diff": float(comp.rel_diff),
                "rel_ci_low": float(comp.rel_ci_low), "rel_ci_high": float(comp.rel_ci_high),
                "p_value": float(comp.p_value),
                "units_control": len(data.arms[control]),
                "units_treatment": len(data.arms[t]),
            }
            if window.cuped:
                row["cuped_variance_reduction"] = reduction
            rows.append(row)
    df = pd.DataFrame(rows)
    df["p_adjusted"] = adjust(df["p_value"].to_numpy(), correction)
    df["significant"] = (df["p_adjusted"] < alpha).astype(bool)
    cols = list(COLUMNS) + (["cuped_variance_reduction"] if window.cuped else [])
    df = df[cols]
    undefined = sorted(set(df.loc[df["control_value"].isna() | df["treatment_value"].isna(),
                                  "metric"]) - set(unusable))
    if undefined:
        warnings.warn(
            f"metrics with no denominator in an arm are reported as null: {undefined}",
            stacklevel=2,
        )
    df.attrs.update({
        "srm": srm.to_dict(), "srm_message": srm.message(), "excluded": dict(data.excluded),
        "window": dict(data.window), "experiment": data.experiment,
        "tests": used, "alpha": alpha, "correction": correction, "unit": unit,
        "control": control,
    })
    return df
