"""Power analysis for a two-arm comparison with equal arms, normal approximation.

With ``sd`` the per-unit standard deviation of the metric (for a ratio metric: of its
delta-method linearisation ``(x - R y) / mean(y)``, so that ``Var(R) = sd^2 / n``), ``n``
units in each arm, a two-sided level ``alpha`` and power ``1 - beta``::

    MDE    = (z_{1 - alpha/2} + z_{1 - beta}) * sd * sqrt(2 / n)
    n_arm  = ceil(2 * sd^2 * (z_{1 - alpha/2} + z_{1 - beta})^2 / effect^2)

with ``z`` from ``scipy.stats.norm.isf``. The (negligible) probability of rejecting in the
wrong tail is ignored, as is usual; at the returned ``n`` the exact two-sided power is at
least the requested one. ``n_arm`` is at least 2, the fewest units with a variance estimate
(a huge effect or a zero ``sd`` would otherwise give 1 or 0). Relative effects are
``effect / baseline``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from onlineeval.errors import InvalidParameterError


def _check(alpha: float, power: float) -> None:
    for name, v in (("alpha", alpha), ("power", power)):
        if not (isinstance(v, int | float) and 0.0 < float(v) < 1.0):
            raise InvalidParameterError(f"{name} must be a number in (0, 1); got {v!r}")


def z_sum(alpha: float, power: float) -> float:
    """``z_{1-alpha/2} + z_{power}``."""
    _check(alpha, power)
    return float(stats.norm.isf(alpha / 2.0) + stats.norm.isf(1.0 - power))


def mde(sd: np.ndarray, units_per_arm: np.ndarray, alpha: float = 0.05,
        power: float = 0.8) -> np.ndarray:
    """Minimum detectable absolute effect with ``units_per_arm`` units in each of two arms."""
    n = np.asarray(units_per_arm, dtype=float)
    if np.any(n < 2):
        raise InvalidParameterError(f"units per arm must be at least 2; got {units_per_arm!r}")
    return z_sum(alpha, power) * np.asarray(sd, dtype=float) * np.sqrt(2.0 / n)


def units_needed(sd: np.ndarray, effect: np.ndarray, alpha: float = 0.05,
                 power: float = 0.8) -> np.ndarray:
    """Units per arm needed to detect an absolute ``effect`` (rounded up, at least 2; nan if
    sd is nan)."""
    e = np.abs(np.asarray(effect, dtype=float))
    if np.any(e == 0):
        raise InvalidParameterError(f"the effect to detect must be nonzero; got {effect!r}")
    with np.errstate(invalid="ignore"):
        n = np.ceil(2.0 * np.asarray(sd, dtype=float) ** 2 * z_sum(alpha, power) ** 2 / e**2)
        return np.where(n < 2, 2.0, n)
