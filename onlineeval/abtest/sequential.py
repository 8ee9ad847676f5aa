"""Sequential readout of an A/B experiment: always-valid intervals at every look.

The looks are calendar days of the cumulative effect over time
(:func:`onlineeval.abtest.effect_over_time`, ``by="day"``): one SQL pass per metric gives
each arm's moments at every day (``sql/ab/over_time_units.sql`` then
``sql/ab/xy_moments.sql``; with CUPED ``sql/ab/cuped_moments.sql`` over the same rows with
the units' pre-period covariates), however many looks are read. At each look the fixed-horizon
estimate and standard error are the readout's (delta-method t for a ratio metric, Welch for a
per-unit mean, clustered by the randomization unit); the always-valid interval and p-value are
the normal-mixture asymptotic confidence sequence of :mod:`onlineeval.stats.sequential`
applied to them (formula and references in that module).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.abtest.over_time import arm_stats, cuped_arm_stats, over_time_units
from onlineeval.abtest.units import shared_unit_rows
from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving.outcomes import _has as has_column
from onlineeval.interleaving.sequential import METRIC, sequential_interleaving
from onlineeval.levels import check_level
from onlineeval.logs.coerce import as_logs
from onlineeval.stats.sequential import (
    LOOK_COLUMNS,
    confidence_sequence,
    look_indices,
    optimal_rho2,
    sequential_srm,
)
from onlineeval.stats.srm import normalise_split, srm_test

#: columns of :func:`sequential_readout`
COLUMNS = LOOK_COLUMNS

#: the ``design`` choices (as the readout's)
DESIGNS = ("auto", "ab", "interleaving")


def is_interleaving(logs: Any, design: str = "auto") -> bool:
    """Whether ``sequential_readout`` reads ``logs`` as an interleaving log."""
    if design not in DESIGNS:
        raise InvalidParameterError(f"design must be one of {', '.join(DESIGNS)}; got {design!r}")
    if design == "auto":
        return has_column(logs, "results", "team")
    return design == "interleaving"


def sequential_readout(
    logs: Any, control: str | None = None, treatment: str | None = None,
    metrics: Any = None, *, looks: Any = "day", alpha: float = 0.05,
    rho2: float | None = None, experiment: str | None = None, unit: str = "user_id",
    start: Any = None, end: Any = None, srm_alpha: float = 0.001,
    expected_split: Mapping[str, float] | None = None, design: str = "auto",
    attribution_window: Any = None, event_type: str | None = None,
    pre_period: Any = None, cuped: bool | None = None,
) -> pd.DataFrame:
    """Treatment − control at every look, with always-valid intervals and p-values.

    Parameters
    ----------
    control, treatment : str
        The variants compared (default ``control`` and ``treatment``); on an interleaving
        log the teams (``results.team``; default told by their names).
    metrics : str or list of str
        A/B metrics (default ``ctr``). An interleaving log has one: the per-user preference
        (:func:`onlineeval.interleaving.sequential.sequential_interleaving`), so leave it
        out or pass ``"preference"``.
    design : "auto", "ab" or "interleaving"
        ``auto``: interleaving when the log's results carry ``team``, as the readout.
    expected_split : mapping, optional
        The designed share of each arm (e.g. ``{"control": 0.3, "treatment": 0.7}``) for
        both SRM columns; default equal.
    looks : "day", "hour" or int
        Read the experiment at the end of every calendar day, of every hour from the first
        exposure's (interleaved page's) hour to the last's, or at ``N`` looks spread evenly
        over its days (:func:`look_indices`).
    rho2 : float, optional
        The tuning of the confidence sequence (``rho^2`` of
        :mod:`onlineeval.stats.sequential`: the sample size where it is narrowest). Default
        :func:`~onlineeval.stats.sequential.optimal_rho2` at the units of the last look (both
        arms), i.e. tuned for the planned end when the log holds the whole experiment. For a
        live experiment pass ``optimal_rho2(planned_units, alpha)``: a wrong guess costs
        width, never validity.

    attribution_window, event_type
        With an events table: the attribution window and the one event type the outcome
        metrics count (docs/conversions.md).
    pre_period, cuped
        CUPED at every look, as :func:`onlineeval.abtest` takes them: ``cuped=True`` uses
        each unit's searches before its first exposure as its pre-period (with ``start``:
        everything before it); ``pre_period=(START, END)`` starts the experiment at ``END``
        with pre-period searches from ``START`` on. See *CUPED at every look* below.

    Returns one row per look and metric: ``metric``, ``look`` (1, 2, ...), ``look_end``
    (the day, a ``datetime.date``: the look reads every exposure up to its end; with hourly
    looks the end of the hour, a ``pandas.Timestamp``: exposures before it),
    ``units_control``/``units_treatment``, ``estimate`` (treatment − control), the
    always-valid ``ci_low``/``ci_high`` (running intersection) and ``p_value`` (running
    minimum), ``stop`` (true from the first look with ``p_value < alpha`` on), the
    fixed-horizon ``fixed_ci_low``/``fixed_ci_high``/``fixed_p_value`` of that look alone
    (for contrast: read at every look they overclaim), the sample ratio check at the look:
    ``srm_p_value`` (Pearson χ², fixed-horizon) and ``srm_sequential_p_value`` (Dirichlet-
    multinomial, always valid; against ``expected_split``). ``attrs``: alpha, rho2 per metric,
    srm_alpha, control, treatment, experiment, unit, excluded.

    With CUPED, two more columns: ``cuped_variance_reduction`` (the share of the
    fixed-horizon variance CUPED removed at the look) and ``cuped_applied`` (false where no
    covariate varies, e.g. no unit has pre-period searches: the look's test is the plain
    one, warned about at the last look); ``estimate`` and both intervals are then the
    CUPED-adjusted ones.

    Each metric's sequence is valid over all its looks, not over several metrics at once: no
    correction across metrics is applied (for ``k`` metrics read together, Bonferroni's
    ``alpha / k`` keeps the family-wise level over every look).

    CUPED at every look
    -------------------
    The pre-period of a unit ends at its first exposure, so at a look it is known for every
    unit the look reads. At look ``k`` the covariates' coefficient ``theta_k`` is estimated
    from the units of that look alone (their cumulative sums and pre-period sums; both arms,
    each arm's covariance weighted by ``1 / n``, exactly as the fixed-horizon CUPED of
    :mod:`onlineeval.stats.cuped`), and the look's estimate is
    ``delta_k = (R_t - R_c) - theta_k^T (C_t - C_c)`` with its delta-method standard error;
    the last look is therefore :func:`onlineeval.abtest`'s CUPED estimate on the same data.
    The confidence sequence is applied to ``(delta_k, se_k)`` as to the plain statistic.

    Why it stays valid: with ``theta*`` the limit of ``theta_k``, ``delta_k`` equals the
    estimator with the fixed ``theta*`` — a difference of arm means of the per-unit
    influence values ``x - theta*^T c``, to which the time-uniform central limit theory
    applies — plus ``(theta_k - theta*)^T (C_t - C_c)``. Assignment is random, so
    ``C_t - C_c`` has mean zero and by the law of the iterated logarithm is
    ``O(sqrt(log log n / n))`` almost surely, while ``theta_k - theta* -> 0``: the remainder
    is ``o(sqrt(log n / n))``, smaller than the sequence's width, and the standard error
    converges as well. This is the strong-approximation condition of the definition of an
    asymptotic confidence sequence in Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas
    ("Time-uniform central limit theory and asymptotic confidence sequences", Annals of
    Statistics 52(6), 2613-2640, 2024, doi:10.1214/24-AOS2408): the boundaries approach
    those of a sequence valid for the i.i.d. influence values almost surely, faster than the
    width shrinks, so the normal-mixture sequence around ``delta_k`` is an asymptotic CS as
    it is around the plain estimate. Lindon, Ham, Tingley & Bojinov ("Anytime-valid linear
    models and regression adjusted causal inference in randomized experiments",
    arXiv:2210.08589, 2022) treat regression adjustment with pre-treatment outcomes in
    randomized experiments directly: sequential t-tests for the linear model's coefficients
    (the adjusted estimator with its coefficients re-fitted at every sample size) and
    heteroskedasticity-robust asymptotic confidence sequences for the treatment effect
    without assuming the linear model. Like the plain sequence, the guarantee is
    asymptotic: with few units per arm at the early looks ``theta_k`` is noisy and the
    first looks are the least reliable (``tests/abtest/test_sequential_cuped.py`` checks
    the false-positive rate under 14 daily looks on salted A/A splits of a simulated log).
    """
    alpha = check_level(alpha)
    srm_alpha = check_level(srm_alpha, "srm_alpha")
    logs = as_logs(logs, attribution_window=attribution_window, event_type=event_type)
    if is_interleaving(logs, design):
        if metrics not in (None, METRIC, [METRIC], (METRIC,)) or expected_split is not None:
            raise InvalidParameterError(
                f"an interleaving log has one sequential metric, the per-user preference "
                f"({METRIC!r}), and no designed split (every user sees both teams); drop "
                "metrics and expected_split (--primary, --guardrails, --expected-split)"
            )
        if cuped or pre_period is not None:
            raise InvalidParameterError(
                "CUPED is for A/B logs: its covariate is the metric before a unit's first "
                "exposure, and a user has no interleaving preference before the "
                "interleaved pages; drop cuped and pre_period (--cuped, --pre-period)"
            )
        return sequential_interleaving(logs, control, treatment, looks=looks, alpha=alpha,
                                       rho2=rho2, experiment=experiment, start=start,
                                       end=end)
    control = "control" if control is None else control
    treatment = "treatment" if treatment is None else treatment
    metrics = "ctr" if metrics is None else metrics
    shares = normalise_split([control, treatment], expected_split)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    hourly = looks == "hour"
    if not names:
        raise InvalidParameterError("metrics must name at least one metric")
    frames, tuned, excluded = [], {}, {}
    # one per-unit rows query for every metric: run once (abtest.units.shared_unit_rows)
    with shared_unit_rows():
        for name in names:
            prep = over_time_units(logs, name, experiment=experiment, unit=unit, start=start,
                                   end=end, cumulative=True, arms=(control, treatment),
                                   hourly=hourly, pre_period=pre_period, cuped=cuped)
            with_cuped = prep.window.cuped
            extra: dict[str, Any] = {}
            if with_cuped:
                days, c, t, res = cuped_arm_stats(prep, *prep.arms, alpha)
                stats = res.comparison
            else:
                days, c, t, stats = arm_stats(prep, *prep.arms, alpha)
            idx = look_indices(len(days), looks)
            if with_cuped:
                applied = np.asarray(res.applied, dtype=bool)[idx]
                extra = {"cuped_variance_reduction": np.where(
                    applied, np.asarray(res.variance_reduction)[idx], np.nan),
                    "cuped_applied": applied}
                if not applied[-1]:
                    warnings.warn(f"CUPED not applied to {prep.metric.name}: no pre-period "
                                  "covariate varies (no unit has pre-period searches, or all "
                                  "have the same); the sequence is the plain one", stacklevel=2)
            nc = c["n"].to_numpy(dtype=float)[idx]
            nt = t["n"].to_numpy(dtype=float)[idx]
            n = nc + nt
            r2 = optimal_rho2(float(n[-1]), alpha) if rho2 is None else rho2
            seq = confidence_sequence(np.asarray(stats.abs_diff)[idx],
                                      np.asarray(stats.abs_se)[idx], n, alpha=alpha, rho2=r2)
            counts = np.stack([nc, nt], axis=1)
            fixed_srm = [srm_test({control: int(a), treatment: int(b)}, shares, srm_alpha).p_value
                         if a + b > 0 else np.nan for a, b in counts]
            seq_srm = sequential_srm(counts, np.array([shares[control], shares[treatment]]),
                                     alpha=srm_alpha)
            frames.append(pd.DataFrame({
                "metric": prep.metric.name, "look": np.arange(1, len(idx) + 1),
                "look_end": [pd.Timestamp(days[i]) + pd.Timedelta(hours=1) if hourly
                             else pd.Timestamp(days[i]).date() for i in idx],
                "units_control": nc.astype(int), "units_treatment": nt.astype(int),
                "estimate": seq.estimate, "ci_low": seq.ci_low, "ci_high": seq.ci_high,
                "p_value": seq.p_value, "stop": seq.stop.astype(bool),
                "fixed_ci_low": np.asarray(stats.abs_ci_low)[idx],
                "fixed_ci_high": np.asarray(stats.abs_ci_high)[idx],
                "fixed_p_value": np.asarray(stats.p_value)[idx],
                "srm_p_value": fixed_srm, "srm_sequential_p_value": seq_srm.p_value, **extra,
            }))
            tuned[prep.metric.name] = r2
            excluded = prep.excluded
    frame = pd.concat(frames, ignore_index=True)[list(COLUMNS) + list(extra)]
    frame.attrs.update({
        "alpha": alpha, "rho2": tuned, "srm_alpha": srm_alpha, "control": control,
        "treatment": treatment, "experiment": prep.params["experiment"], "unit": unit,
        "looks": looks, "test": seq.test, "excluded": excluded, "design": "ab",
        "expected_split": shares, "cuped": with_cuped,
    })
    return frame
