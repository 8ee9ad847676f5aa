"""``onlineeval.abtest``: read out an A/B(/n) experiment from click logs.

Every row carries a ``verdict``, so that no number is read as more than it is:

- ``significant`` / ``not significant``: ``p_adjusted < alpha`` or not;
- ``insufficient data``: an arm has fewer than ``min_units`` (default :data:`MIN_UNITS`)
  units with data for the metric (a nonzero denominator; every unit for a per-unit mean).
  The p-value and intervals are still shown (from the t reference, honest about the sample
  size) but no verdict is given: in A/A re-splits of the simulator's users (click propensity
  varying from user to user) the CTR's delta-method t rejected 6.4% of true nulls at 20
  units per arm and 5.6% at 50 (nominal 5%; the normal z: 7.5% and 5.8%, and 26.5% at 2
  units), because the delta-method variance is too small in small samples
  (``tests/abtest/test_calibration.py``);
- ``undefined: ...``: the p-value is null, with the reason (zero variance in both arms, no
  denominator in an arm, columns the log lacks).

Rows without a verdict keep their p-values in the multiple-testing family (they were
looked at), so the correction stays conservative.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.abtest.metrics import ORDER, ABMetric, is_outcome, missing, resolve
from onlineeval.abtest.units import (
    UnitData,
    analysis_window,
    check_variants,
    load_units,
    parse_pre_period,
)
from onlineeval.errors import InvalidParameterError, SampleRatioMismatchWarning, UnknownNameError
from onlineeval.levels import check_level
from onlineeval.logs import variants
from onlineeval.logs.coerce import as_logs
from onlineeval.registry import Registry
from onlineeval.stats.cuped import cuped_compare
from onlineeval.stats.moments import Moments, ratio
from onlineeval.stats.multiple import CORRECTIONS
from onlineeval.stats.results import (
    RESULT_COLUMNS,
    TwoArmStats,
    adjust_family,
    comparison_frame,
)
from onlineeval.stats.srm import srm_test
from onlineeval.stats.tests import DELTA_T, WELCH_T, bootstrap, delta_t, mann_whitney, welch

#: the columns of the result, in order (plus cuped_variance_reduction and cuped_applied with
#: a pre-period): what was compared, the result block every comparison shares
#: (:data:`onlineeval.stats.results.RESULT_COLUMNS`), then the A/B readout's own columns
COLUMNS: tuple[str, ...] = (
    "metric", "variant", "control_value", "treatment_value", *RESULT_COLUMNS,
    "rel_diff", "rel_ci_low", "rel_ci_high", "significant", "verdict", "df",
)

#: fewest units with data in each arm for a verdict (see the module docstring for why 50)
MIN_UNITS = 50

SIGNIFICANT = "significant"
NOT_SIGNIFICANT = "not significant"
INSUFFICIENT = "insufficient data"

TESTS: Registry[str] = Registry("test")
TESTS.register("auto", "delta-method t for ratio metrics, Welch's t for per-unit means")
TESTS.register("mannwhitney", "Mann-Whitney U for per-unit means (ratio metrics: delta t)",
               aliases=("mann-whitney", "mwu"))
TESTS.register("bootstrap", "unit-resampling bootstrap (seeded) for every metric")


def check_min_units(value: Any) -> int:
    """``min_units`` checked: an integer >= 2 (shared with :func:`onlineeval.power`)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 2:
        raise InvalidParameterError(
            f"min_units must be an integer >= 2 (a variance needs two units); got {value!r}"
        )
    return value


def _undefined() -> TwoArmStats:
    nan = float("nan")
    return TwoArmStats(nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, test="none")


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
) -> tuple[TwoArmStats, float, str | None]:
    """The comparison, CUPED's variance reduction, and why CUPED was not applied (None when
    it was, or was not asked for)."""
    num, den = data.col(metric.num), data.col(metric.den)
    c, t = data.arms[control], data.arms[treatment]
    is_mean = metric.kind == "mean"
    units_c, units_t = _with_data(c[:, den]), _with_data(t[:, den])
    if cuped:
        pre_num = data.col(f"pre_{metric.num}")
        pre_den = data.col("has_pre" if is_mean else f"pre_{metric.den}")
        cols = [num, den, pre_num, pre_den, data.col("has_pre")]
        res = cuped_compare(
            Moments.from_units(c[:, cols]), Moments.from_units(t[:, cols]),
            num=0, den=1, pre_num=2, pre_den=3, has_pre=4, alpha=alpha,
            units_c=units_c, units_t=units_t, test=plain_test_name(metric),
        )
        if bool(res.applied):
            return res.comparison, float(res.variance_reduction), None
        has_pre = data.col("has_pre")
        why = ("no pre-period traffic" if not (c[:, has_pre].any() or t[:, has_pre].any())
               else "the pre-period covariates have zero variance")
        return res.comparison, float("nan"), why
    if test == "bootstrap":
        return bootstrap((c[:, num], c[:, den]), (t[:, num], t[:, den]), alpha=alpha,
                         reps=reps, seed=seed), float("nan"), None
    if is_mean and test == "mannwhitney":
        return mann_whitney(c[:, num], t[:, num], alpha=alpha), float("nan"), None
    mc = Moments.from_units(c[:, [num, den]])
    mt = Moments.from_units(t[:, [num, den]])
    return plain_test(metric, mc, mt, alpha, units_c, units_t), float("nan"), None


def plain_test_name(metric: ABMetric) -> str:
    """The name of :func:`plain_test`'s test for ``metric`` (CUPED's result adds to it)."""
    return WELCH_T if metric.kind == "mean" else DELTA_T


def plain_test(
    metric: ABMetric, control: Moments, treatment: Moments, alpha: float,
    units_c: int | np.ndarray, units_t: int | np.ndarray,
) -> TwoArmStats:
    """The readout's test of one metric from each arm's moments of its per-unit
    ``(num, den)``: Welch's t for a per-unit mean, the delta-method t for a ratio (both with
    Welch–Satterthwaite df; ``units_*``: the units with a nonzero denominator)."""
    if metric.kind == "mean":
        return welch(control, treatment, 0, alpha=alpha)
    return delta_t(control, treatment, 0, 1, alpha=alpha, units_c=units_c, units_t=units_t)


def _with_data(den: np.ndarray) -> int:
    """Units with a nonzero denominator: those that carry the metric."""
    return int(np.count_nonzero(den))


def _zero_variance(values: np.ndarray) -> bool:
    """Every unit with data has the same ratio (the delta-method variance of the arm is 0);
    False with fewer than 2 such units (no variance estimate at all)."""
    m = Moments.from_units(values)
    return bool(m.n >= 2) and float(ratio(m, 0, 1).var) == 0.0


def abtest(
    logs: Any, control: Any = "control", treatment: Any = None,
    metrics: list[str] | str | None = None, unit: str = "user_id", alpha: float = 0.05,
    correction: str = "holm", pre_period: Any = None, *, experiment: str | None = None,
    test: str = "auto", expected_split: Mapping[str, float] | None = None,
    srm_alpha: float = 0.001, bootstrap_reps: int = 2000, seed: int = 0,
    start: Any = None, end: Any = None, cuped: bool | None = None,
    min_units: int = MIN_UNITS, treatments: Any = None, attribution_window: Any = None,
    event_type: str | None = None,
) -> pd.DataFrame:
    """Compare each treatment variant with the control on each metric, per randomization unit.

    Parameters
    ----------
    logs
        A :class:`~onlineeval.logs.Logs` (from :func:`onlineeval.load_logs`), a log
        directory, or a dict of tables: whatever :func:`onlineeval.logs.as_logs` accepts.
    control
        The control variant, a ``searches.variant`` value in the log's own type: ``0`` when
        the log writes its variants as whole numbers, ``"control"`` when as text (a value of
        the other type is an error listing the log's values).
    treatment
        The variant(s) to compare with the control (one value, a list, or for text variants a
        comma-separated string); default every other variant with units. ``--treatment`` on
        the command line.
    treatments
        Deprecated spelling of ``treatment`` (a DeprecationWarning says so).
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
        When no covariate can be used (no pre-period traffic, or pre-period values without
        variance) the row is the plain test, ``cuped_applied`` is false, ``test`` says why,
        and a warning says CUPED was not applied.
    experiment
        The ``searches.experiment`` to analyse: required when the log holds several (an
        error names them), else the log's only one. Searches of other experiments are never
        pooled in: after a unit's first exposure they are left out and counted.
    test
        ``auto`` (delta-method t for ratio metrics, Welch's t for per-unit means, both with
        Welch–Satterthwaite degrees of freedom: :mod:`onlineeval.stats.tests`),
        ``mannwhitney`` (Mann–Whitney U p-values for per-unit means; no intervals) or
        ``bootstrap`` (seeded unit resampling, percentile intervals).
    expected_split
        Expected share of units per variant for the SRM check (default equal); the shares
        must sum to 1. The check covers every variant of the experiment with units in the
        analysed period (and every variant named here), not only the analysed treatments: a
        mismatch in any arm means assignment or logging is broken.
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
    min_units
        Fewest units with data for the metric in each arm for a verdict (default
        :data:`MIN_UNITS`; see the module docstring). Below it the row's verdict is
        ``insufficient data``.

    Which searches count: an exposure is a search of the experiment carrying a variant,
    inside the window. A unit's outcome is its exposures, from its first one on; its
    searches before the first exposure are its pre-period (the CUPED covariate, never
    outcome); its other searches after it (another experiment or none, no variant, after
    ``end``) are left out and counted. Units without an exposure are not analysed.

    attribution_window, event_type
        With an events table: how long after a click or search an event is still
        attributed to it (hours, or a duration such as ``"30min"``; default 24 h) and the
        one event type the outcome metrics count (default every type); see
        docs/conversions.md.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, treatment) with the columns :data:`COLUMNS` (and
        ``cuped_variance_reduction``, ``cuped_applied`` with CUPED): metric, variant,
        control_value, treatment_value, then the result block of every comparison
        (:class:`onlineeval.stats.results.ComparisonResult`): ``estimate`` = treatment −
        control with ``ci_low``..``ci_high`` at ``ci_level`` = 1 − alpha, ``p_value``,
        ``p_adjusted`` by ``correction`` over the ``family_size`` metric × treatment rows
        with a p-value, ``test``, ``n`` = ``units_control`` + ``units_treatment`` (units of
        the arms) and ``unit`` (the unit column); then rel_diff, rel_ci_low, rel_ci_high,
        significant, verdict, df. ``verdict`` is
        ``significant`` (``p_adjusted < alpha``), ``not significant``, ``insufficient data``
        or ``undefined: <reason>``; ``significant`` is true exactly for the first.
        ``df`` is the degrees of freedom of the t reference (null for the rank and
        bootstrap tests), ``test`` names the test. The intervals are per comparison (not
        adjusted). With a pre-period, ``control_value`` and ``treatment_value`` are the
        plain experiment-period values while ``estimate``, ``rel_diff``, their intervals and
        the p-values are the CUPED-adjusted ones, so ``estimate`` then differs from their
        difference. (Before the shared result block, ``estimate``, ``ci_low`` and
        ``ci_high`` were named ``abs_diff``, ``abs_ci_low``, ``abs_ci_high``.)
        ``df.attrs`` holds ``srm`` (statistic, p_value, units, expected_shares,
        mismatch), ``srm_message``, ``excluded`` (counts of searches/units left out of the
        outcome, by reason: :data:`onlineeval.abtest.units.EXCLUDED`), ``window`` (``start``
        and ``end`` as given or None, ``first_exposure`` and ``last_exposure`` of the
        analysed units, ``pre_period_start``, ``cuped``), ``experiment`` (the one analysed),
        ``tests`` (the test used per metric), ``alpha``, ``correction``, ``min_units``.
        A sample ratio mismatch also raises a
        :class:`~onlineeval.errors.SampleRatioMismatchWarning`: the results are then not
        trustworthy.

    Notes
    -----
    Undefined numbers are null, never a made-up value: ``rel_diff`` and its interval when the
    control value is 0; every value when an arm has no denominator for the metric (warned);
    p-values and intervals when an arm has fewer than 2 units (the Mann–Whitney p-value, a
    rank test, stays defined) or when the metric has zero variance in both arms (every unit
    of each arm has the same value: a t or z test divides by 0; warned, with the rank test
    as the alternative for per-unit means). One arm of zero variance leaves the test
    defined and is warned about. Null p-values are left out of the correction's family size.
    """
    alpha = check_level(alpha)
    srm_alpha = check_level(srm_alpha, "srm_alpha")
    min_units = check_min_units(min_units)
    correction = CORRECTIONS.canonical(correction)
    test = TESTS.canonical(test)
    periods = parse_pre_period(pre_period)
    window = analysis_window(start, end, periods, cuped)
    if window.cuped and test != "auto":
        raise InvalidParameterError(
            f"CUPED (pre_period, cuped) works with test='auto' only; got test={test!r}"
        )
    if treatments is not None:
        if treatment is not None:
            raise InvalidParameterError("give treatment= only (treatments= is its old name)")
        warnings.warn("abtest(treatments=...) is deprecated; use treatment= (as the CLI's "
                      "--treatment), which takes one variant or a list", DeprecationWarning,
                      stacklevel=2)
        treatment = treatments
    logs = as_logs(logs, attribution_window=attribution_window, event_type=event_type)
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
                      start=window.start, end=window.end, cuped=window.cuped,
                      outcomes=any(map(is_outcome, chosen)),
                      sums=sorted({c for m in chosen for c in (m.num, m.den)} - {"units"}))
    given_control = control
    control, treatment, expected_split = _variant_keys(logs, data.known_variants, control,
                                                       treatment, expected_split)
    treat = check_variants(data, control, treatment)
    srm = srm_test(_srm_units(data, control, expected_split), expected_split, srm_alpha)
    if srm.mismatch:
        warnings.warn(srm.message(), SampleRatioMismatchWarning, stacklevel=2)

    lead: list[dict[str, Any]] = []
    results = []
    extra: list[dict[str, Any]] = []
    used: dict[str, str] = {}
    notes = _Notes(control)
    for metric in chosen:
        for t in treat:
            label = f"{metric.name}/{t}"
            c_rows, t_rows = data.arms[control], data.arms[t]
            verdict = None
            not_applied = None
            if metric.name in unusable:
                comp, reduction = _undefined(), float("nan")
                verdict = "undefined: the log lacks columns for this metric"
            else:
                comp, reduction, not_applied = _compare(
                    metric, data, control, t, alpha, test, window.cuped,
                    bootstrap_reps, seed)
                den = data.col(metric.den)
                with_data = (_with_data(c_rows[:, den]), _with_data(t_rows[:, den]))
                pair = [data.col(metric.num), den]
                zero = (_zero_variance(c_rows[:, pair]), _zero_variance(t_rows[:, pair]))
                if np.isnan(comp.control_value) or np.isnan(comp.treatment_value):
                    verdict = "undefined: no denominator in an arm"
                    notes.no_denominator.append(metric.name)
                elif min(with_data) < min_units:
                    verdict = INSUFFICIENT
                    notes.insufficient.append((label, *with_data))
                # (abs_se 0: no variance left in either arm, also after CUPED's adjustment)
                elif (all(zero) or float(comp.abs_se) == 0) and np.isnan(comp.p_value):
                    verdict = "undefined: zero variance in both arms"
                    notes.zero_both.append((label, metric.kind == "mean"))
                elif any(zero) and not all(zero):
                    notes.zero_one.append((label, control if zero[0] else t))
                if not_applied is not None:
                    notes.not_applied.append((label, not_applied))
            name = comp.test if not_applied is None else \
                f"{comp.test.removesuffix(' + CUPED')} (CUPED not applied: {not_applied})"
            used[metric.name] = name
            lead.append({
                "metric": metric.name, "variant": t,
                "control_value": float(comp.control_value),
                "treatment_value": float(comp.treatment_value),
            })
            results.append(comp.result(ci_level=1.0 - alpha, units_control=len(c_rows),
                                       units_treatment=len(t_rows), unit=unit, test=name))
            row = {
                "rel_diff": float(comp.rel_diff),
                "rel_ci_low": float(comp.rel_ci_low), "rel_ci_high": float(comp.rel_ci_high),
                "verdict": verdict, "df": float(comp.df),
            }
            if window.cuped:
                row["cuped_variance_reduction"] = reduction
                row["cuped_applied"] = not_applied is None and metric.name not in unusable
            extra.append(row)
    df = comparison_frame(lead, adjust_family(results, correction), extra)
    open_ = df["verdict"].isna()
    df.loc[open_ & df["p_value"].isna(), "verdict"] = "undefined: no p-value"
    open_ = df["verdict"].isna()
    df.loc[open_, "verdict"] = np.where(df.loc[open_, "p_adjusted"] < alpha, SIGNIFICANT,
                                        NOT_SIGNIFICANT)
    df["significant"] = (df["verdict"] == SIGNIFICANT).astype(bool)
    if variants.is_integer(logs):
        df["variant"] = pd.Series([variants.value(logs, v) for v in df["variant"]],
                                  index=df.index, dtype="int64")
    cuped_cols = ["cuped_variance_reduction", "cuped_applied"] if window.cuped else []
    df = df[list(COLUMNS) + cuped_cols]
    notes.warn(min_units)
    df.attrs.update({
        "srm": srm.to_dict(), "srm_message": srm.message(), "excluded": dict(data.excluded),
        "window": dict(data.window), "experiment": data.experiment,
        "tests": used, "alpha": alpha, "correction": correction, "unit": unit,
        "control": given_control, "min_units": min_units,
    })
    return df


def _variant_keys(
    logs: Any, names: list[str], control: Any, treatment: Any,
    expected_split: Mapping[Any, float] | None,
) -> tuple[str, list[str] | None, dict[str, float] | None]:
    """The arms' keys (the text of each variant) of the variants the arguments name, each
    checked to have the type of the log's variant column (:mod:`onlineeval.logs.variants`)."""
    control_key = variants.key(logs, control, "control", names)
    treatment_keys = None
    if treatment is not None:
        if isinstance(treatment, str) and not variants.is_integer(logs):
            listed: list[Any] = [t.strip() for t in treatment.split(",") if t.strip()]
        elif isinstance(treatment, list | tuple):
            listed = list(treatment)
        else:
            listed = [treatment]
        treatment_keys = [variants.key(logs, t, "treatment", names) for t in listed]
    split = None
    if expected_split is not None:
        split = {variants.key(logs, v, "expected_split", names): share
                 for v, share in expected_split.items()}
    return control_key, treatment_keys, split


class _Notes:
    """What the readout warns about, collected over the rows and said once each."""

    def __init__(self, control: str) -> None:
        self.control = control
        self.no_denominator: list[str] = []
        self.insufficient: list[tuple[str, int, int]] = []
        self.zero_both: list[tuple[str, bool]] = []
        self.zero_one: list[tuple[str, str]] = []
        self.not_applied: list[tuple[str, str]] = []

    def warn(self, min_units: int) -> None:
        if self.no_denominator:
            warnings.warn(
                "metrics with no denominator in an arm are reported as null: "
                f"{sorted(set(self.no_denominator))}", stacklevel=3,
            )
        if self.insufficient:
            rows = ", ".join(f"{label} ({c:,} control and {t:,} treatment units with data)"
                             for label, c, t in self.insufficient)
            warnings.warn(
                f"insufficient data: no verdict where an arm has fewer than {min_units} units "
                f"with data for the metric: {rows}. Their p-values (null below 2 units) are "
                "not reliable at this size; collect more units (min_units sets the minimum)",
                stacklevel=3,
            )
        if self.zero_both:
            rows = ", ".join(label for label, _ in self.zero_both)
            hint = (" (for a per-unit mean, test='mannwhitney' is defined there)"
                    if any(is_mean for _, is_mean in self.zero_both) else "")
            warnings.warn(
                f"undefined p-values: {rows} have zero variance in both arms (every unit of "
                f"an arm has the same value), so the t test is undefined{hint}", stacklevel=3,
            )
        if self.zero_one:
            rows = ", ".join(f"{label} ({arm})" for label, arm in self.zero_one)
            warnings.warn(
                f"one arm has zero variance (every unit the same value): {rows}; the test "
                "takes that arm's value as exact, so its p-value rests on the other arm alone",
                stacklevel=3,
            )
        if self.not_applied:
            rows = ", ".join(f"{label} ({why})" for label, why in self.not_applied)
            warnings.warn(f"CUPED was not applied (the plain test is reported): {rows}",
                          stacklevel=3)
