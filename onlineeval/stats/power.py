"""Power analysis for a two-arm comparison with equal arms, for the t test the readout runs.

With ``sd`` the per-unit standard deviation of the metric (for a ratio metric: of its
delta-method linearisation ``(x - R y) / mean(y)``, so that ``Var(R) = sd^2 / n``), ``n``
units in each arm and a two-sided level ``alpha``, the test of an absolute effect ``e`` is a
two-sample t test with ``2 n - 2`` degrees of freedom (what Welch–Satterthwaite gives for
equal arms and variances) and its power is that of the noncentral t::

    power(e, n) = P(T > t_crit) + P(T < -t_crit),  T ~ t(2n - 2, nc = e / (sd sqrt(2 / n)))

with ``t_crit = t_{2n-2}.isf(alpha / 2)`` (both tails counted, as statsmodels'
``TTestIndPower``). ``units_needed`` is the smallest ``n`` (at least 2, the fewest units
with a variance estimate) whose power reaches the requested one; ``mde`` is the effect whose
power at ``n`` equals it. For large ``n`` these are the normal-approximation formulas
``MDE = (z_{1-alpha/2} + z_{power}) sd sqrt(2/n)`` and
``n = ceil(2 sd^2 (z_{1-alpha/2} + z_{power})^2 / effect^2)``, which give the starting point.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

from onlineeval.errors import InvalidParameterError
from onlineeval.levels import check_level


def _check(alpha: float, power: float) -> None:
    check_level(alpha)
    check_level(power, "power")


def z_sum(alpha: float, power: float) -> float:
    """``z_{1-alpha/2} + z_{power}``."""
    _check(alpha, power)
    return float(stats.norm.isf(alpha / 2.0) + stats.norm.isf(1.0 - power))


def power_t(d: float, n: float, alpha: float) -> float:
    """Power of the two-sided two-sample t test at standardized effect ``d = e / sd`` with
    ``n`` units per arm."""
    check_level(alpha)
    df = 2.0 * n - 2.0
    crit = stats.t.isf(alpha / 2.0, df)
    nc = d * math.sqrt(n / 2.0)
    upper = float(stats.nct.sf(crit, df, nc))
    lower = float(stats.nct.cdf(-crit, df, nc))
    # scipy's noncentral t returns nan for some far tails (e.g. below 1e-20); the normal
    # tail is then as good as exact for what it adds to the power
    if math.isnan(upper):
        upper = float(stats.norm.sf(crit - nc))
    if math.isnan(lower):
        lower = float(stats.norm.cdf(-crit - nc))
    return upper + lower


def _standard_mde(n: float, alpha: float, power: float) -> float:
    """The standardized effect ``d`` with ``power_t(d, n) == power``."""
    hi = 2.0 * z_sum(alpha, power) * math.sqrt(2.0 / n)
    while power_t(hi, n, alpha) < power:
        hi *= 2.0
    return float(optimize.brentq(lambda d: power_t(d, n, alpha) - power, 0.0, hi,
                                 xtol=1e-14, rtol=1e-12))


def mde(sd: np.ndarray, units_per_arm: np.ndarray, alpha: float = 0.05,
        power: float = 0.8) -> np.ndarray:
    """Minimum detectable absolute effect with ``units_per_arm`` units in each of two arms."""
    _check(alpha, power)
    n = np.asarray(units_per_arm, dtype=float)
    if np.any(n < 2):
        raise InvalidParameterError(f"units per arm must be at least 2; got {units_per_arm!r}")
    d = np.vectorize(lambda k: _standard_mde(float(k), alpha, power), otypes=[float])(n)
    return d * np.asarray(sd, dtype=float)


def _units(d: float, alpha: float, power: float) -> float:
    if math.isnan(d):
        return math.nan
    if math.isinf(d):
        return 2.0
    n = max(2, math.ceil(2.0 * z_sum(alpha, power) ** 2 / d**2))
    while power_t(d, n, alpha) < power:
        n += 1
    while n > 2 and power_t(d, n - 1, alpha) >= power:
        n -= 1
    return float(n)


def units_needed(sd: np.ndarray, effect: np.ndarray, alpha: float = 0.05,
                 power: float = 0.8) -> np.ndarray:
    """Units per arm needed to detect an absolute ``effect`` (at least 2; nan if sd is nan)."""
    _check(alpha, power)
    e = np.abs(np.asarray(effect, dtype=float))
    if np.any(e == 0):
        raise InvalidParameterError(f"the effect to detect must be nonzero; got {effect!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        d = e / np.asarray(sd, dtype=float)
    return np.vectorize(lambda x: _units(float(x), alpha, power), otypes=[float])(d)
