"""The statistics shared by every agreement readout: sign agreement and rank correlation.

For paired values ``x_i`` (an offline delta) and ``y_i`` (an online delta):

- sign agreement rate = #{sign(x_i) = sign(y_i)} / #{x_i ≠ 0 and y_i ≠ 0}. A pair where either
  value is exactly 0 has no direction; it is counted in ``n_zero`` and left out of the rate's
  denominator. The interval is Wilson's score interval
  (``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``).
- Kendall's τ-b (``scipy.stats.kendalltau``, variant "b", which corrects for ties in either
  variable) and Spearman's ρ (``scipy.stats.spearmanr``, average ranks for ties), both with
  two-sided p-values. Kendall's is scipy's (exact for small samples without ties). Spearman's
  is scipy's t approximation for n > 8; for n <= 8 that approximation is poor (a perfect ρ at
  n = 3 gets p = 0, while the exact value is 1/3), so there it is the exact permutation
  p-value over all n! pairings (``scipy.stats.permutation_test``, ``permutation_type=
  "pairings"``), two-sided as scipy defines it: twice the smaller one-sided tail, capped
  at 1. Without ties the null distribution is symmetric and this equals the share of
  pairings with ``|rho| >= |rho_obs|``; with ties it may differ from that count by a few
  pairings in n!. With fewer than two pairs, or when either variable is constant, the
  correlations are undefined and reported as null.
- Intervals of the correlations, on Fisher's z = atanh(r) scale, back-transformed with tanh:
  Kendall's τ-b with Var(z) = 0.437 / (n − 4) (Fieller, Hartley & Pearson 1957), for n > 4;
  Spearman's ρ with Var(z) = (1 + ρ²/2) / (n − 3) (Bonett & Wright 2000), for n > 3. Both are
  large-sample approximations (the test checks their coverage on bivariate normal samples
  of 30); with fewer pairs, or a correlation of exactly ±1 (where z is infinite and the
  interval would collapse to a point), the interval is null.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy import stats

from onlineeval.levels import check_level
from onlineeval.offline.compare import paired_arrays
from onlineeval.stats.results import ComparisonResult

#: up to this many pairs, Spearman's p-value is the exact permutation p-value
EXACT_SPEARMAN_MAX_N = 8


def _spearman_exact_p(x: np.ndarray, y: np.ndarray) -> float:
    # Spearman's rho is Pearson's r of the (average) ranks; permuting the ranks of x against
    # the fixed ranks of y enumerates its exact null distribution (all n! pairings). scipy
    # permutes every sample it is given, so only x is passed as data.
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    ry = ry - ry.mean()

    def rho(r: np.ndarray, axis: int = -1) -> np.ndarray:
        r = r - r.mean(axis=axis, keepdims=True)
        return (r * ry).sum(axis=axis) / np.sqrt((r * r).sum(axis=axis) * (ry * ry).sum())

    res = stats.permutation_test(
        (rx,), rho, permutation_type="pairings", vectorized=True, n_resamples=np.inf,
        alternative="two-sided",
    )
    return float(res.pvalue)


def association(x: np.ndarray, y: np.ndarray, confidence: float = 0.95) -> dict[str, Any]:
    """Sign agreement (with a Wilson interval), Kendall's τ-b and Spearman's ρ of ``x``, ``y``.

    Returns a dict with n, n_agree, n_disagree, n_zero, sign_agreement, sign_ci_low,
    sign_ci_high, kendall_tau, kendall_p, spearman_rho, spearman_p (null when undefined).
    """
    confidence = check_level(confidence, "confidence")
    x, y = paired_arrays(x, y, "agreement values")
    nan = float("nan")
    sx, sy = np.sign(x), np.sign(y)
    directed = (sx != 0) & (sy != 0)
    n_dir = int(directed.sum())
    n_agree = int((directed & (sx == sy)).sum())
    if n_dir:
        ci = stats.binomtest(n_agree, n_dir).proportion_ci(
            confidence_level=confidence, method="wilson")
        rate, lo, hi = n_agree / n_dir, float(ci.low), float(ci.high)
    else:
        rate, lo, hi = nan, nan, nan
    tau = tau_p = rho = rho_p = nan
    constant = len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0
    if not constant:
        with warnings.catch_warnings():
            # scipy warns on tiny samples; its value (possibly nan) is what we report
            warnings.simplefilter("ignore")
            k = stats.kendalltau(x, y)
            s = stats.spearmanr(x, y)
        tau, tau_p = float(k.statistic), float(k.pvalue)
        rho, rho_p = float(s.statistic), float(s.pvalue)
        if len(x) <= EXACT_SPEARMAN_MAX_N:
            rho_p = _spearman_exact_p(x, y)
    z = float(stats.norm.ppf((1 + confidence) / 2))
    k_lo, k_hi = fisher_interval(tau, 0.437 / (len(x) - 4) if len(x) > 4 else nan, z)
    s_lo, s_hi = fisher_interval(rho, (1 + rho * rho / 2) / (len(x) - 3) if len(x) > 3
                                 else nan, z)
    return {
        "n": int(len(x)), "n_agree": n_agree, "n_disagree": n_dir - n_agree,
        "n_zero": int(len(x) - n_dir), "sign_agreement": rate, "sign_ci_low": lo,
        "sign_ci_high": hi, "kendall_tau": tau, "kendall_p": tau_p,
        "kendall_ci_low": k_lo, "kendall_ci_high": k_hi,
        "spearman_rho": rho, "spearman_p": rho_p,
        "spearman_ci_low": s_lo, "spearman_ci_high": s_hi,
    }


def fisher_interval(r: float, var_z: float, z: float) -> tuple[float, float]:
    """tanh(atanh(r) ± z sqrt(var_z)); null when r is undefined or ±1 or var_z is (scipy
    may return a perfect correlation as 1 - 1e-16: within 1e-12 of ±1 counts as ±1)."""
    nan = float("nan")
    if not (np.isfinite(r) and abs(r) < 1 - 1e-12 and np.isfinite(var_z)):
        return nan, nan
    half = z * float(np.sqrt(var_z))
    centre = float(np.arctanh(r))
    return float(np.tanh(centre - half)), float(np.tanh(centre + half))


#: the statistics of :func:`association`, in the order :func:`association_results` gives them
STATISTICS: tuple[str, ...] = ("sign agreement", "Kendall tau-b", "Spearman rho")


def association_results(stats: dict[str, Any], confidence: float, unit: str,
                        ) -> list[ComparisonResult]:
    """The statistics of an :func:`association` dict in the shared result shape, one per
    :data:`STATISTICS` entry: the sign-agreement rate with its Wilson interval (no test: null
    p-value; ``n`` the pairs with a direction), Kendall's τ-b and Spearman's ρ with their
    p-values and Fisher-z intervals (null where undefined; ``n`` all pairs). ``unit`` names what a pair is (``experiment``,
    ``query``); the pairs have no arms, so ``units_control``/``units_treatment`` are null."""
    confidence = check_level(confidence, "confidence")
    nan = float("nan")
    spearman = ("exact permutation p-value" if stats["n"] <= EXACT_SPEARMAN_MAX_N
                else "t approximation (scipy.stats.spearmanr)")
    rows = (
        (stats["sign_agreement"], stats["sign_ci_low"], stats["sign_ci_high"], nan,
         "sign agreement rate, Wilson score interval (no test)",
         stats["n_agree"] + stats["n_disagree"]),
        (stats["kendall_tau"], stats.get("kendall_ci_low", nan),
         stats.get("kendall_ci_high", nan), stats["kendall_p"],
         "Kendall's tau-b (scipy.stats.kendalltau); Fisher-z interval, Var = 0.437/(n-4)",
         stats["n"]),
        (stats["spearman_rho"], stats.get("spearman_ci_low", nan),
         stats.get("spearman_ci_high", nan), stats["spearman_p"],
         f"Spearman's rho, {spearman}; Fisher-z interval, Var = (1 + rho^2/2)/(n-3)",
         stats["n"]),
    )
    return [ComparisonResult(estimate=float(est), ci_low=float(lo), ci_high=float(hi),
                             ci_level=confidence, p_value=float(p), test=test, n=int(n),
                             unit=unit)
            for est, lo, hi, p, test, n in rows]
