"""Always-valid inference: confidence sequences and sequential p-values for looks over time.

A fixed-horizon interval promises coverage at one pre-planned sample size. Read at every look
(daily, say) and acted on at the first look that excludes zero, it covers far less than
promised. A *confidence sequence* (CS) is a sequence of intervals ``C_1, C_2, ...`` with
``P(theta in C_t for every t) >= 1 - alpha``, so it may be read at any look, as often as wished,
and an experiment may stop at the first look whose interval excludes zero.

Two-sided normal-mixture boundary
---------------------------------
For a sum ``S_t`` of ``t`` terms with mean zero and unit variance, the mixture over
``lambda ~ N(0, rho^2)`` of ``exp(lambda S_t - lambda^2 t / 2)`` is

    M_t = (t rho^2 + 1)^(-1/2) * exp( rho^2 S_t^2 / (2 (t rho^2 + 1)) ),

a nonnegative martingale with ``M_0 = 1`` (Robbins 1970). By Ville's inequality
``P(exists t: M_t >= 1/alpha) <= alpha``, and ``M_t < 1/alpha`` is ``|S_t / t| < m_t`` with

    m_t(rho^2, alpha) = sqrt( 2 (t rho^2 + 1) / (t^2 rho^2) * log( sqrt(t rho^2 + 1) / alpha ) ).

An estimator that after ``t`` observations behaves like a mean of ``t`` terms with variance
``sigma^2`` (its standard error is ``se_t = sigma / sqrt(t)``) gets the asymptotic CS

    C_t = estimate_t  +-  sigma_t * m_t(rho^2, alpha),   sigma_t = se_t * sqrt(t)

(Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas, "Time-uniform central limit theory and
asymptotic confidence sequences", Annals of Statistics 2024, Section 2, with the
normal-mixture boundary above; Howard, Ramdas, McAuliffe & Sekhon, "Time-uniform,
nonparametric, nonasymptotic confidence sequences", Annals of Statistics 2021, for the
boundary). For a two-arm difference the estimator is the difference of the arms' means,
``t`` is the number of units in both arms together and ``se_t`` the standard error of the
difference (delta method for ratio metrics, CUPED-adjusted where CUPED applies), the
construction GrowthBook documents for its sequential tests. The always-valid p-value is the
smallest ``alpha`` whose CS excludes zero, ``p_t = min(1, 1 / M_t)`` with ``S_t / t`` replaced
by ``estimate_t / sigma_t``; over looks it is carried as a running minimum (and the CS as a
running intersection), both still valid because the guarantee holds for all times at once.

The tuning parameter ``rho^2`` sets at which sample size the CS is narrowest. Choose the
sample size ``n_opt`` you expect at the end (or at the look you care most about);

    rho^2 = ( -2 log(alpha) + log(-2 log(alpha) + 1) ) / n_opt

(the approximate minimiser of the boundary at ``t = n_opt`` given by Howard et al. 2021 and
used by Waudby-Smith et al. 2024) makes the CS nearly the narrowest possible there. A wrong guess costs width, never validity.

Anytime-valid sample ratio check
--------------------------------
Units assigned to ``k`` variants are multinomial with the designed shares ``p0`` under the
null. With a Dirichlet prior ``a = concentration * p0`` on the shares, the Bayes factor of the
counts ``x`` (``n`` units so far)

    BF_n = Gamma(sum a) / Gamma(sum a + n) * prod_i Gamma(a_i + x_i) / Gamma(a_i)
           / prod_i p0_i^(x_i)

is a nonnegative martingale under the null (Lindon & Malek, "Anytime-valid inference for
multinomial count data", NeurIPS 2022), so ``p_n = min(1, min_{m <= n} 1 / BF_m)`` is an
always-valid p-value: a mismatch may be flagged at any look without inflating the error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import gammaln

from onlineeval.errors import InvalidParameterError
from onlineeval.levels import check_level
from onlineeval.stats.results import ComparisonResult

#: default Dirichlet concentration of the sequential sample ratio check (Lindon & Malek 2022
#: use ``a = 100 * p0``): larger values look for smaller mismatches and react more slowly
SRM_CONCENTRATION = 100.0


#: columns of a sequential readout (A/B and interleaving): one row per look and metric
LOOK_COLUMNS = ("metric", "look", "look_end", "units_control", "units_treatment", "estimate",
                "ci_low", "ci_high", "p_value", "stop", "fixed_ci_low", "fixed_ci_high",
                "fixed_p_value", "srm_p_value", "srm_sequential_p_value")


def look_indices(n_days: int, looks: Any) -> np.ndarray:
    """Indices (into the ``n_days`` calendar days, or hours) of the periods read as looks.

    ``"day"`` (or ``"hour"``, on a series of hours): every period. An integer ``N``: ``N``
    looks spread evenly over the days, the last on the last day (look ``k`` at day
    ``ceil(k * n_days / N)``); ``N`` above the number of days reads every day.
    """
    if looks in ("day", "hour"):
        return np.arange(n_days)
    if isinstance(looks, bool) or not isinstance(looks, int | np.integer) or looks < 1:
        raise InvalidParameterError(
            f"looks must be 'day', 'hour' or a positive whole number of looks; got {looks!r}"
        )
    k = np.arange(1, min(int(looks), n_days) + 1)
    return np.unique(np.ceil(k * n_days / min(int(looks), n_days)).astype(int) - 1)


def parse_looks(text: str) -> Any:
    """``--looks`` as typed: ``day``, ``hour`` or a whole number."""
    if text in ("day", "hour"):
        return text
    try:
        return int(text)
    except ValueError:
        raise InvalidParameterError(
            f"--looks must be 'day', 'hour' or a positive whole number; got {text!r}"
        ) from None


def optimal_rho2(n_opt: float, alpha: float = 0.05) -> float:
    """The mixture variance ``rho^2`` that makes the CS narrowest near ``n_opt`` observations."""
    alpha = check_level(alpha)
    if not (isinstance(n_opt, int | float) and np.isfinite(n_opt) and n_opt > 0):
        raise InvalidParameterError(
            f"the expected sample size n_opt must be a positive number; got {n_opt!r}"
        )
    two_log = -2.0 * np.log(alpha)
    return float((two_log + np.log(two_log + 1.0)) / n_opt)


def mixture_margin(t: np.ndarray | float, rho2: float, alpha: float = 0.05) -> np.ndarray:
    """``m_t``: the half-width of the unit-variance normal-mixture CS for a mean of ``t`` terms.

    ``nan`` where ``t < 1`` (no observation, no interval).
    """
    alpha = check_level(alpha)
    if not (np.isfinite(rho2) and rho2 > 0):
        raise InvalidParameterError(f"rho2 must be a positive number; got {rho2!r}")
    t = np.asarray(t, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = t * rho2 + 1.0
        m = np.sqrt(2.0 * a / (t * t * rho2) * np.log(np.sqrt(a) / alpha))
    return np.where(t >= 1, m, np.nan)


def mixture_p_value(
    estimate: np.ndarray | float, se: np.ndarray | float, t: np.ndarray | float, rho2: float,
) -> np.ndarray:
    """``min(1, 1 / M_t)`` at one look: the smallest alpha whose CS excludes zero.

    ``se`` is the estimate's standard error at the look and ``t`` its number of observations.
    ``nan`` where the standard error is 0 or not finite or ``t < 1`` (no test is defined).
    """
    est = np.asarray(estimate, dtype=float)
    se = np.asarray(se, dtype=float)
    t = np.asarray(t, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = t * rho2 + 1.0
        z2 = (est / se) ** 2
        log_m = -0.5 * np.log(a) + z2 * (t * rho2) / (2.0 * a)
        p = np.minimum(1.0, np.exp(-log_m))
    ok = (t >= 1) & np.isfinite(se) & (se > 0) & np.isfinite(est)
    return np.where(ok, p, np.nan)


@dataclass(frozen=True)
class SequenceResult:
    """A confidence sequence evaluated at looks (arrays, one entry per look, in time order).

    ``ci_low``/``ci_high`` are the running intersection of the per-look intervals and
    ``p_value`` the running minimum of the per-look p-values: both are what may be read at
    that look. ``stop`` is true from the first look whose p-value is below ``alpha``.
    """

    estimate: np.ndarray
    se: np.ndarray
    n: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    p_value: np.ndarray
    stop: np.ndarray
    rho2: float
    alpha: float
    test: str

    def results(self, *, unit: str, units_control: np.ndarray | None = None,
                units_treatment: np.ndarray | None = None) -> list[ComparisonResult]:
        """Each look in the result shape every comparison shares: the estimate, the interval
        and always-valid p-value that may be read at that look (``ci_level`` = 1 − alpha),
        ``n`` the look's observations, the units per arm when given (else null), no
        correction (the sequence is already valid over every look)."""
        n_looks = len(self.estimate)
        per_arm = [[None] * n_looks if u is None else [int(x) for x in np.asarray(u)]
                   for u in (units_control, units_treatment)]
        if any(len(u) != n_looks for u in per_arm):
            raise InvalidParameterError(
                f"units_control and units_treatment need one entry per look ({n_looks})"
            )
        return [
            ComparisonResult(
                estimate=float(self.estimate[i]), ci_low=float(self.ci_low[i]),
                ci_high=float(self.ci_high[i]), ci_level=1.0 - self.alpha,
                p_value=float(self.p_value[i]), test=self.test, n=int(self.n[i]),
                units_control=per_arm[0][i], units_treatment=per_arm[1][i], unit=unit,
            )
            for i in range(n_looks)
        ]


def confidence_sequence(
    estimate: np.ndarray, se: np.ndarray, n: np.ndarray, *, alpha: float = 0.05,
    n_opt: float | None = None, rho2: float | None = None,
    test: str = "asymptotic confidence sequence (normal mixture)",
) -> SequenceResult:
    """Always-valid intervals and p-values for an estimate read at successive looks.

    Parameters
    ----------
    estimate, se, n : arrays, one entry per look in time order
        The estimate at each look (e.g. treatment minus control), its standard error there
        and the number of observations it rests on (units, both arms together).
    alpha : float
        The CS covers the true value at every look at once with probability ``1 - alpha``.
    n_opt, rho2 : float
        The tuning: give ``n_opt`` (the sample size where the CS should be narrowest, e.g.
        the planned size; default the last look's ``n``) or ``rho2`` directly.
    """
    alpha = check_level(alpha)
    est = np.asarray(estimate, dtype=float)
    se = np.asarray(se, dtype=float)
    n = np.asarray(n, dtype=float)
    if not (est.shape == se.shape == n.shape and est.ndim == 1):
        raise InvalidParameterError(
            "estimate, se and n must be one-dimensional arrays of the same length (one entry "
            f"per look); got shapes {est.shape}, {se.shape}, {n.shape}"
        )
    if np.any(np.diff(n) < 0):
        raise InvalidParameterError(
            "the looks must be in time order: the number of observations may not decrease"
        )
    if rho2 is None:
        if n_opt is None:
            n_opt = float(n[-1]) if n.size and n[-1] >= 1 else 1.0
        rho2 = optimal_rho2(n_opt, alpha)
    elif n_opt is not None:
        raise InvalidParameterError("give n_opt or rho2, not both")
    sigma = se * np.sqrt(n)
    half = sigma * mixture_margin(n, rho2, alpha)
    usable = np.isfinite(half) & np.isfinite(est) & (se > 0)
    low = np.where(usable, est - half, -np.inf)
    high = np.where(usable, est + half, np.inf)
    p = np.where(usable, mixture_p_value(est, se, n, rho2), 1.0)
    run_low = np.maximum.accumulate(low) if low.size else low
    run_high = np.minimum.accumulate(high) if high.size else high
    run_p = np.minimum.accumulate(p) if p.size else p
    # no usable look yet: nothing may be read; keep nan rather than an infinite interval
    seen = np.cumsum(usable) > 0
    run_low = np.where(seen, run_low, np.nan)
    run_high = np.where(seen, run_high, np.nan)
    run_p = np.where(seen, run_p, np.nan)
    return SequenceResult(
        estimate=est, se=se, n=n, ci_low=run_low, ci_high=run_high, p_value=run_p,
        stop=np.where(seen, run_p < alpha, False), rho2=float(rho2), alpha=alpha, test=test,
    )


@dataclass(frozen=True)
class SequentialSRM:
    """The sequential sample ratio check at each look (arrays, one entry per look)."""

    log_bayes_factor: np.ndarray
    p_value: np.ndarray
    mismatch: np.ndarray
    concentration: float
    alpha: float
    test: str = "sequential multinomial test (Dirichlet mixture, Lindon & Malek 2022)"


def sequential_srm(
    counts: np.ndarray, expected_shares: np.ndarray, *, alpha: float = 0.001,
    concentration: float = SRM_CONCENTRATION,
) -> SequentialSRM:
    """Anytime-valid sample ratio check on cumulative units per variant at successive looks.

    ``counts`` has one row per look and one column per variant (cumulative unit counts, not
    increments); ``expected_shares`` the designed shares (positive, summing to 1).
    """
    alpha = check_level(alpha)
    x = np.asarray(counts, dtype=float)
    p0 = np.asarray(expected_shares, dtype=float)
    if x.ndim != 2 or p0.ndim != 1 or x.shape[1] != p0.size or p0.size < 2:
        raise InvalidParameterError(
            "counts must have one row per look and one column per variant (at least two), "
            f"matching the expected shares; got shapes {x.shape} and {p0.shape}"
        )
    if np.any(p0 <= 0) or not np.isclose(p0.sum(), 1.0, rtol=0, atol=1e-9):
        raise InvalidParameterError(
            f"expected shares must be positive and sum to 1; got {p0.tolist()}"
        )
    if np.any(x < 0) or np.any(x != np.floor(x)) or np.any(np.diff(x, axis=0) < 0):
        raise InvalidParameterError(
            "counts must be cumulative whole numbers of units that never decrease from one "
            "look to the next"
        )
    if not (np.isfinite(concentration) and concentration > 0):
        raise InvalidParameterError(
            f"the concentration must be a positive number; got {concentration!r}"
        )
    a = concentration * p0
    n = x.sum(axis=1)
    log_bf = (gammaln(a.sum()) - gammaln(a.sum() + n)
              + (gammaln(a + x) - gammaln(a)).sum(axis=1)
              - (x * np.log(p0)).sum(axis=1))
    p = np.minimum(1.0, np.exp(-log_bf))
    p = np.minimum.accumulate(p) if p.size else p
    return SequentialSRM(log_bayes_factor=log_bf, p_value=p, mismatch=p < alpha,
                         concentration=float(concentration), alpha=alpha)
