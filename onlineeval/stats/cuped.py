"""CUPED: variance reduction with a pre-experiment covariate (Deng, Xu, Kohavi & Walker 2013).

For a metric ``R = mean(x) / mean(y)`` (a per-unit mean is the case ``y = 1``) each unit also
carries its pre-period sums ``x', y'`` and an indicator ``h`` = 1 when it has any pre-period
data. The covariates of an arm are ``C = (R', mean(h))`` with ``R' = mean(x') / mean(y')``,
the same metric before the experiment. Because assignment is random and ``C`` is measured
before it, ``E[C_t - C_c] = 0``, so

    delta_cuped = (R_t - R_c) - theta^T (C_t - C_c)

is unbiased for the effect whatever ``theta`` is. The variance-minimising ``theta`` is found
from delta-method (co)variances: with ``G`` the gradients of ``(R, R', mean(h))`` with
respect to each arm's mean vector (the linearisation of the ratios) and ``Sigma`` the per-unit
covariance, ``V = G Sigma G^T / n`` per arm, and

    theta = (V_CC,c + V_CC,t)^+ (V_CR,c + V_CR,t)           (pseudo-inverse)
    Var(delta_cuped) = sum over arms of V_RR - 2 theta^T V_CR + theta^T V_CC theta

The variance reduction reported is ``1 - Var(delta_cuped) / Var(R_t - R_c)``. When the
covariates explain the metric exactly the adjusted variance is 0 up to rounding and is set
to 0 (see :func:`~onlineeval.stats.moments.clamp_cancelled`); the comparison then follows
the zero-variance rule of :mod:`~onlineeval.stats.tests`.

Relation to the paper: Deng et al. take ``theta = cov(Y, X) / var(X)`` over the units of both
arms pooled. For a per-unit mean with equal arms and no missing pre-period data the theta
here is the same slope computed within arms (the OLS coefficient of ``X`` in
``Y ~ 1 + treatment + X``; ``tests/stats/test_cuped.py`` checks it to 1e-9); the paper's
pooled slope differs from it only by the treatment effect's (negligible, O(1/n)) share of
``cov(Y, X)``. With unequal arms the covariances are weighted by ``1 / n`` per arm, which is
what minimises the variance of the difference.

Units without pre-period data have ``x' = y' = 0`` and ``h = 0``: they drop out of ``R'``
(whose linearisation is 0 for them) and the indicator lets new and returning units have
different levels, so they neither bias the estimate nor dilute the covariate. When no unit
has pre-period data (or every unit has), the corresponding covariate has zero variance and
the pseudo-inverse gives it zero weight; with no pre-period data at all CUPED reduces to
the plain test.

Arm values after adjustment, used for the relative difference, are
``R_a - theta^T (C_a - C_pooled)`` with ``C_pooled`` computed from both arms' sums. The
relative interval applies the delta method of :func:`~onlineeval.stats.tests.compare` to
these adjusted values with the variances above, treating ``theta^T C_pooled`` (common to
both arms) as fixed; its own variability enters the ratio with weight ``rel_diff / adj_c``, so
the approximation is exact under no effect, and at a 50% lift the reported standard error is
still within ~1% of the sampling spread (the coverage test in ``tests/stats/test_cuped.py``).

Reference distribution: Student t with Welch–Satterthwaite degrees of freedom computed from
the adjusted variances (:func:`~onlineeval.stats.tests.welch_df`), as the plain test. Theta
is treated as known; estimating its (at most two) coefficients costs about as many degrees of
freedom, negligible at the unit counts the A/B readout gives a verdict for.

Not applied: when neither covariate varies (no unit has pre-period data, or every unit has
the same pre-period value and pre-period presence), theta is 0 and the result is the plain
test; :attr:`CupedComparison.applied` is then false, so callers can say so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from onlineeval.levels import check_level
from onlineeval.stats.moments import Estimate, Moments, clamp_cancelled, ratio, ratio_gradient
from onlineeval.stats.results import TwoArmStats
from onlineeval.stats.tests import DELTA_T, compare, welch_df


@dataclass(frozen=True)
class CupedComparison:
    """A CUPED-adjusted comparison, the share of variance it removed, and whether any
    covariate could be used (``applied``; false: the comparison is the plain test)."""

    comparison: TwoArmStats
    variance_reduction: np.ndarray
    theta: np.ndarray
    applied: np.ndarray


def _arm(m: Moments, num: int, den: int, pre_num: int, pre_den: int,
         has_pre: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Estimates (R, R', mean h) and their delta-method covariance V for one arm."""
    r = ratio(m, num, den).value
    with np.errstate(invalid="ignore", divide="ignore"):
        rp = m.mean[..., pre_num] / m.mean[..., pre_den]
    g_r = ratio_gradient(m, num, den)
    g_p = ratio_gradient(m, pre_num, pre_den)
    # An arm without any pre-period denominator has no R': give that covariate no weight.
    no_pre = ~np.isfinite(rp)
    g_p = np.where(no_pre[..., None], 0.0, g_p)
    rp = np.where(no_pre, 0.0, rp)
    g_h = np.zeros_like(g_r)
    g_h[..., has_pre] = 1.0
    grad = np.stack([g_r, g_p, g_h], axis=-2)  # S + (3, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = grad @ m.cov @ np.swapaxes(grad, -1, -2) / m.n[..., None, None]
        magnitude = (np.abs(grad) @ np.abs(m.cov) @ np.swapaxes(np.abs(grad), -1, -2)
                     / m.n[..., None, None])
    # A covariate whose variance is rounding residue (every unit with the same pre-period
    # ratio) does not vary: give it exactly 0, or the pseudo-inverse would divide by the
    # residue and produce an enormous theta.
    diag = np.diagonal(v, axis1=-2, axis2=-1)
    flat = clamp_cancelled(diag, np.diagonal(magnitude, axis1=-2, axis2=-1)) == 0
    flat[..., 0] = False
    keep = (~flat).astype(float)
    v = v * keep[..., :, None] * keep[..., None, :]
    est = np.stack([r, rp, m.mean[..., has_pre]], axis=-1)
    return est, v, no_pre


def cuped_compare(
    control: Moments, treatment: Moments, *, num: int, den: int, pre_num: int, pre_den: int,
    has_pre: int, alpha: float = 0.05, units_c: np.ndarray | None = None,
    units_t: np.ndarray | None = None, test: str = DELTA_T,
) -> CupedComparison:
    """CUPED-adjusted comparison of ``mean(x)/mean(y)`` between arms (vectorised).

    Column indices name the per-unit variables in the moments: ``num``/``den`` in the
    experiment period, ``pre_num``/``pre_den`` the same sums in the pre-period and
    ``has_pre`` the 0/1 indicator. The reference distribution is Student t with
    Welch–Satterthwaite degrees of freedom computed from the adjusted variances and
    ``units_c``/``units_t``, the units with a nonzero denominator (default: all units).
    ``test`` names the plain test; the result records it with ``+ CUPED``.
    """
    alpha = check_level(alpha)
    ec, vc, nc = _arm(control, num, den, pre_num, pre_den, has_pre)
    et, vt, nt = _arm(treatment, num, den, pre_num, pre_den, has_pre)
    both_missing = nc | nt
    vcc = vc[..., 1:, 1:] + vt[..., 1:, 1:]
    vcr = vc[..., 1:, 0] + vt[..., 1:, 0]
    # R' is only a usable covariate when both arms have pre-period data.
    vcc = np.where(both_missing[..., None, None],
                   vcc * np.array([[0.0, 0.0], [0.0, 1.0]]), vcc)
    vcr = np.where(both_missing[..., None], vcr * np.array([0.0, 1.0]), vcr)
    finite = np.isfinite(vcc).all(axis=(-1, -2)) & np.isfinite(vcr).all(axis=-1)
    safe_vcc = np.where(finite[..., None, None], vcc, 0.0)
    safe_vcr = np.where(finite[..., None], vcr, 0.0)
    theta = (np.linalg.pinv(safe_vcc) @ safe_vcr[..., None])[..., 0]
    # a covariate is usable when it varies; with none, theta is 0 and this is the plain test
    applied = finite & (np.abs(safe_vcc).sum(axis=(-1, -2)) > 0)

    def adjusted_var(v: np.ndarray) -> np.ndarray:
        vcr_a = v[..., 1:, 0]
        vcc_a = v[..., 1:, 1:]
        quad = (theta[..., None, :] @ vcc_a @ theta[..., :, None])[..., 0, 0]
        cross = (theta * vcr_a).sum(axis=-1)
        # a covariate that explains the metric exactly leaves 0 up to rounding (maybe < 0)
        return clamp_cancelled(v[..., 0, 0] - 2.0 * cross + quad,
                               v[..., 0, 0] + 2.0 * np.abs(cross) + np.abs(quad))

    var_c = adjusted_var(vc)
    var_t = adjusted_var(vt)
    # Pooled covariate level (any constant keeps the difference unbiased).
    n_c, n_t = control.n, treatment.n
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled_rp = (
            (n_c * control.mean[..., pre_num] + n_t * treatment.mean[..., pre_num])
            / (n_c * control.mean[..., pre_den] + n_t * treatment.mean[..., pre_den])
        )
    pooled_rp = np.where(np.isfinite(pooled_rp), pooled_rp, 0.0)
    pooled_h = (n_c * control.mean[..., has_pre] + n_t * treatment.mean[..., has_pre]) / (
        n_c + n_t
    )
    pooled = np.stack([pooled_rp, pooled_h], axis=-1)
    adj_c = ec[..., 0] - (theta * (ec[..., 1:] - pooled)).sum(axis=-1)
    adj_t = et[..., 0] - (theta * (et[..., 1:] - pooled)).sum(axis=-1)
    df = welch_df(var_c, n_c if units_c is None else units_c,
                  var_t, n_t if units_t is None else units_t)
    comp = compare(Estimate(adj_c, var_c), Estimate(adj_t, var_t), alpha, df=df,
                   test=f"{test} + CUPED")
    comp = replace(comp, control_value=ec[..., 0], treatment_value=et[..., 0])
    with np.errstate(invalid="ignore", divide="ignore"):
        reduction = 1.0 - (var_c + var_t) / (vc[..., 0, 0] + vt[..., 0, 0])
    return CupedComparison(comp, reduction, theta, applied)
