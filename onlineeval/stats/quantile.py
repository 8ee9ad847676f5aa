"""Quantiles of per-search values, with intervals that respect clustering by unit.

The method is Deng, Knoblich & Lu (2018, "Applying the Delta Method in Metric Analytics: A
Practical Guide with Novel Ideas", KDD), for a quantile of values clustered in randomization
units (the searches of a user are not independent):

1. The ``p``-quantile of an arm's ``N`` values is the order statistic ``X_(r)`` with
   ``r = ceil(p N)`` (the inverse of the empirical CDF; :func:`quantile_rank`).
2. The empirical CDF at it, ``F = sum_u x_u / sum_u y_u`` (``x_u``: the unit's values at or
   below ``X_(r)``, ``y_u``: its values), is a ratio of per-unit sums, so its standard error
   ``sigma`` comes from the delta method over units (:func:`cdf_sigma`,
   :func:`onlineeval.stats.moments.ratio`). With independent values it is close to the
   binomial ``sqrt(p (1 - p) / N)``; clustering makes it larger.
3. Inverting the CDF's interval gives the quantile's: ``[X_(L), X_(U)]`` with
   ``L = floor(N (p - z sigma))`` and ``U = ceil(N (p + z sigma))``, clipped to ``[1, N]``
   (:func:`interval_ranks`); ``z`` the normal ``1 - alpha/2`` quantile.
4. The quantile's standard error is that interval's width over ``2 z``; the difference of
   two arms (independent: units are randomised) is tested with a normal z on
   ``se = sqrt(se_c^2 + se_t^2)``, and the relative difference by the delta method on the
   ratio of the two quantiles (:func:`compare_quantiles`).

Everything is large-sample: the arms need many units (the A/B callers flag arms below their
``min_units``). With many ties at the quantile (values on a coarse grid) ``X_(L)`` and
``X_(U)`` can coincide although ``sigma > 0``: the standard error is then 0, and the p-value
and interval are null (the zero-variance rule of :mod:`onlineeval.stats.tests`), not a claim
of certainty.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.levels import check_level
from onlineeval.stats.moments import Estimate, Moments, ratio
from onlineeval.stats.results import TwoArmStats
from onlineeval.stats.tests import compare

#: the test's name as results record it
QUANTILE_Z = ("quantile difference, z with clustered order-statistic standard errors "
              "(Deng, Knoblich & Lu 2018)")


def check_probability(p: object) -> float:
    """A quantile's probability: a number strictly between 0 and 1."""
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 < float(p) < 1:
        raise InvalidParameterError(f"a quantile must be a number in (0, 1); got {p!r}")
    return float(p)


def quantile_rank(n: int, p: float) -> int:
    """``ceil(p n)`` in ``[1, n]``, with ``p`` read as the decimal it is written as (so that
    0.3 of 10 values is the 3rd, not the 4th by the rounding of ``0.3 * 10``)."""
    return max(1, min(int(n), math.ceil(Fraction(repr(float(p))) * int(n))))


def interval_ranks(n: int, p: float, sigma: float, z: float) -> tuple[int, int]:
    """``(L, U)``: the ranks of the interval's ends, ``floor(N (p - z sigma))`` and
    ``ceil(N (p + z sigma))`` clipped to ``[1, N]``."""
    lo = math.floor(n * (p - z * sigma))
    hi = math.ceil(n * (p + z * sigma))
    return max(1, min(n, lo)), max(1, min(n, hi))


def cdf_sigma(m: Moments) -> float:
    """Delta-method standard error of ``sum(x) / sum(y)`` from the units' moments of
    ``(x, y)`` (values at or below the quantile, values), of one arm (``m`` holds one
    set of moments, of any shape of size 1): nan below 2 units."""
    return float(np.sqrt(np.asarray(ratio(m, 0, 1).var, dtype=float)).item())


@dataclass(frozen=True)
class QuantileArm:
    """One arm's ``p``-quantile with its clustered interval (module docstring)."""

    p: float
    n_values: int
    units: int
    rank: int
    value: float
    sigma: float
    rank_low: int
    rank_high: int
    low: float
    high: float
    alpha: float

    @property
    def se(self) -> float:
        """The interval's width over ``2 z``."""
        return (self.high - self.low) / (2.0 * stats.norm.isf(self.alpha / 2.0))


def compare_quantiles(control: QuantileArm, treatment: QuantileArm, alpha: float,
                      ) -> TwoArmStats:
    """Treatment − control of two independent arms' quantiles: normal z on the clustered
    standard errors, relative difference by the delta method (module docstring, step 4)."""
    alpha = check_level(alpha)
    return compare(Estimate(np.float64(control.value), np.float64(control.se ** 2)),
                   Estimate(np.float64(treatment.value), np.float64(treatment.se ** 2)),
                   alpha, test=QUANTILE_Z)


def quantile_arm(values: np.ndarray, units: np.ndarray, p: float, alpha: float = 0.05,
                 ) -> QuantileArm:
    """One arm's :class:`QuantileArm` from its per-search ``values`` and their ``units``
    (any labels), in memory. :func:`onlineeval.abtest.quantile_effects` computes the same
    from the logs with the sorting and the per-unit counts in DuckDB."""
    alpha = check_level(alpha)
    p = check_probability(p)
    v = np.asarray(values, dtype=float)
    u = np.asarray(units)
    keep = ~np.isnan(v)
    v, u = v[keep], u[keep]
    n = len(v)
    if n == 0:
        nan = float("nan")
        return QuantileArm(p, 0, 0, 0, nan, nan, 0, 0, nan, nan, alpha)
    ordered = np.sort(v)
    rank = quantile_rank(n, p)
    value = float(ordered[rank - 1])
    _, codes = np.unique(u, return_inverse=True)
    x = np.bincount(codes, weights=(v <= value).astype(float))
    y = np.bincount(codes).astype(float)
    sigma = cdf_sigma(Moments.from_units(np.column_stack([x, y])))
    z = float(stats.norm.isf(alpha / 2.0))
    if not np.isfinite(sigma):
        nan = float("nan")
        return QuantileArm(p, n, len(y), rank, value, sigma, 0, 0, nan, nan, alpha)
    lo, hi = interval_ranks(n, p, sigma, z)
    return QuantileArm(p, n, len(y), rank, value, sigma, lo, hi, float(ordered[lo - 1]),
                       float(ordered[hi - 1]), alpha)
