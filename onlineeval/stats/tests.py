"""Two-arm comparisons of a metric: treatment against control.

- :func:`compare` — two independent estimates with their variances (delta-method ratios,
  per-unit means): ``abs_diff = t - c`` with a Student t (given ``df``) or normal interval and
  two-sided p-value; ``rel_diff = t / c - 1`` with the delta-method variance of a ratio of two
  independent estimates, ``Var(t/c) ~= Var(t)/c^2 + t^2 Var(c)/c^4``.
- :func:`delta_t` — a ratio metric ``mean(x) / mean(y)`` per arm with its delta-method
  variance, referred to Student t with Welch–Satterthwaite degrees of freedom (see below).
- :func:`welch` — per-unit means, Welch's unequal-variance t (Welch–Satterthwaite df); the same
  numbers as ``scipy.stats.ttest_ind(equal_var=False)`` and statsmodels' ``CompareMeans``.
- :func:`mann_whitney` — per-unit values, ``scipy.stats.mannwhitneyu`` p-value (a test of
  stochastic ordering, not of the mean: its intervals are left empty).
- :func:`bootstrap` — resamples units within each arm (seeded) and recomputes the metric
  ``sum(x)/sum(y)``: percentile intervals and a two-sided p-value from the resampled
  differences.

Degrees of freedom of the delta-method t. The delta-method variance of an arm's ratio is the
variance of the mean of the per-unit linearisations ``L_i = (x_i - R y_i) / mean(y)``: a
sample variance of ``n`` values that sum to exactly 0 (``R`` is their sum ratio), i.e. the
same estimator, with the same ``n - 1`` residual degrees of freedom, as the variance of a
per-unit mean. The difference of two arms then has the variance ``v_c + v_t`` of two
independent such estimates, whose sampling distribution Welch–Satterthwaite approximates by a
scaled chi-square with ``df = (v_c + v_t)^2 / (v_c^2 / (n_c - 1) + v_t^2 / (n_t - 1))``.
For a per-unit mean (``y = 1``) this is exactly Welch's test. ``n`` counts the units with a
nonzero denominator: a unit with ``y = 0`` (and so ``x = 0``) has ``L_i = 0`` whatever the
data and tells nothing about the spread, so it adds no degree of freedom. With many units
``t`` tends to the normal and the test to the delta-method z (Deng, Knoblich & Lu 2018). In
small samples the delta-method variance of a ratio itself is too small (on the simulator's
users by about 5% on average at 20 units per arm, 40% at 2), which the t reference does not
repair: that is why the A/B readout gives no verdict below a minimum number of units
(:data:`onlineeval.abtest.readout.MIN_UNITS`).

Zero variance. When both arms have an estimated variance of 0 (every unit of an arm has the
same value), ``se = 0`` and the test statistic is ``diff / 0``: the test is undefined, and
the p-value and intervals are ``nan`` (not ``p = 0`` with a zero-width interval: a variance
estimated as 0 from a sample is not a variance known to be 0). :func:`bootstrap` follows the
same rule when its resampled differences have no spread. With one arm of zero variance the
statistic is defined (Welch–Satterthwaite then gives the other arm's ``n - 1`` df); the A/B
readout warns about it. A control value of 0 makes ``rel_diff`` and its interval ``nan`` (a
relative change from a zero baseline is undefined). An arm with fewer than two units has no
variance estimate: its p-value and intervals are ``nan``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.levels import check_level
from onlineeval.progress import Progress
from onlineeval.stats.moments import Estimate, Moments, mean, ratio
from onlineeval.stats.results import TwoArmStats

#: names recorded in :attr:`TwoArmStats.test`
DELTA_T = "delta-method t (Welch-Satterthwaite df)"
DELTA_Z = "delta-method z"
WELCH_T = "Welch t (Welch-Satterthwaite df)"
MANN_WHITNEY = "Mann-Whitney U"
BOOTSTRAP = "bootstrap (units resampled in each arm, percentile interval)"


def compare(
    control: Estimate, treatment: Estimate, alpha: float = 0.05,
    df: np.ndarray | None = None, test: str = DELTA_Z,
) -> TwoArmStats:
    """Compare two independent estimates (vectorised over any common shape).

    Parameters
    ----------
    control, treatment : Estimate
        Point estimates with the variances of their sampling distributions.
    alpha : float
        Two-sided level; intervals have coverage ``1 - alpha``.
    df : array, optional
        Degrees of freedom for a Student t reference distribution; normal when omitted.
    test : str
        Name recorded in the result.

    When both variances are 0 the p-value and intervals are ``nan`` (see the module
    docstring).
    """
    alpha = check_level(alpha)
    c = np.asarray(control.value, dtype=float)
    t = np.asarray(treatment.value, dtype=float)
    vc = np.asarray(control.var, dtype=float)
    vt = np.asarray(treatment.var, dtype=float)
    dist = stats.norm if df is None else stats.t(np.asarray(df, dtype=float))
    q = dist.isf(alpha / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = t - c
        abs_se = np.sqrt(vc + vt)
        # zero estimated variance in both arms: diff / 0 is no test statistic
        se = np.where(abs_se == 0, np.nan, abs_se)
        p = 2.0 * dist.sf(np.abs(diff / se))
        rel = np.where(c == 0, np.nan, t / c - 1.0)
        se_rel = np.where(abs_se == 0, np.nan, np.sqrt(vt / (c * c) + t * t * vc / (c ** 4)))
    dof = np.full(np.shape(diff), np.nan) if df is None else np.asarray(df, dtype=float)
    return TwoArmStats(
        control_value=c, treatment_value=t,
        abs_diff=diff, abs_se=abs_se, abs_ci_low=diff - q * se, abs_ci_high=diff + q * se,
        rel_diff=rel, rel_ci_low=rel - q * se_rel, rel_ci_high=rel + q * se_rel,
        p_value=p, test=test, df=dof,
    )


def welch_df(var_mean_c: np.ndarray, n_c: np.ndarray, var_mean_t: np.ndarray,
             n_t: np.ndarray) -> np.ndarray:
    """Welch–Satterthwaite degrees of freedom from the variances of the two means.

    ``df = (v_c + v_t)^2 / (v_c^2 / (n_c - 1) + v_t^2 / (n_t - 1))``, ``n`` the units that
    carry information (see the module docstring). ``nan`` when both variances are 0 (0/0:
    the test is undefined there) or an arm has fewer than 2 such units.
    """
    n_c = np.asarray(n_c, dtype=float)
    n_t = np.asarray(n_t, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        df = (var_mean_c + var_mean_t) ** 2 / (
            var_mean_c ** 2 / (n_c - 1) + var_mean_t ** 2 / (n_t - 1)
        )
        return np.where((n_c < 2) | (n_t < 2), np.nan, df)


def welch(control: Moments, treatment: Moments, col: int, alpha: float = 0.05) -> TwoArmStats:
    """Welch's t-test on the per-unit variable ``col`` (vectorised over the moments' shape)."""
    alpha = check_level(alpha)
    ec, et = mean(control, col), mean(treatment, col)
    df = welch_df(ec.var, control.n, et.var, treatment.n)
    return compare(ec, et, alpha, df=df, test=WELCH_T)


def delta_t(
    control: Moments, treatment: Moments, num: int, den: int, alpha: float = 0.05,
    units_c: np.ndarray | None = None, units_t: np.ndarray | None = None,
) -> TwoArmStats:
    """Ratio ``mean(num) / mean(den)`` per arm, delta-method variance, Student t reference.

    ``units_c`` / ``units_t`` are the units with a nonzero denominator in each arm (default:
    all units, right whenever every unit has one); they set the Welch–Satterthwaite degrees
    of freedom (module docstring). Vectorised over the moments' shape.
    """
    alpha = check_level(alpha)
    ec, et = ratio(control, num, den), ratio(treatment, num, den)
    df = welch_df(ec.var, control.n if units_c is None else units_c,
                  et.var, treatment.n if units_t is None else units_t)
    return compare(ec, et, alpha, df=df, test=DELTA_T)


def mann_whitney(control: np.ndarray, treatment: np.ndarray, alpha: float = 0.05) -> TwoArmStats:
    """Mann–Whitney U on per-unit values; means reported, intervals ``nan``."""
    check_level(alpha)
    xc = np.asarray(control, dtype=float)
    xt = np.asarray(treatment, dtype=float)
    p = stats.mannwhitneyu(xt, xc, alternative="two-sided").pvalue
    c, t = xc.mean(), xt.mean()
    nan = np.float64(np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = t / c - 1.0 if c != 0 else nan
    return TwoArmStats(
        control_value=np.float64(c), treatment_value=np.float64(t),
        abs_diff=np.float64(t - c), abs_se=nan, abs_ci_low=nan, abs_ci_high=nan,
        rel_diff=np.float64(rel), rel_ci_low=nan, rel_ci_high=nan,
        p_value=np.float64(p), test=MANN_WHITNEY,
    )


def _resampled_ratios(
    x: np.ndarray, y: np.ndarray, reps: int, rng: np.random.Generator, bar: Progress,
    max_cells: int = 5_000_000,
) -> np.ndarray:
    n = len(x)
    out = np.empty(reps)
    chunk = max(1, min(reps, max_cells // max(n, 1)))
    done = 0
    while done < reps:
        b = min(chunk, reps - done)
        idx = rng.integers(0, n, size=(b, n))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[done:done + b] = x[idx].sum(axis=1) / y[idx].sum(axis=1)
        done += b
        bar.update(b)
    return out


def bootstrap(
    control: tuple[np.ndarray, np.ndarray], treatment: tuple[np.ndarray, np.ndarray],
    alpha: float = 0.05, reps: int = 2000, seed: int = 0,
) -> TwoArmStats:
    """Unit-resampling bootstrap of ``sum(x)/sum(y)`` per arm (``y`` all ones for a mean).

    Units are drawn with replacement within each arm, ``reps`` times, from
    ``numpy.random.default_rng(seed)``. Intervals are percentile intervals of the resampled
    ``t - c`` and ``t / c - 1``; the p-value is ``2 * min(#(d <= 0) + 1, #(d >= 0) + 1) /
    (B + 1)`` capped at 1, which is below ``alpha`` exactly when 0 lies outside the
    percentile interval (up to the +1 smoothing). ``B`` counts the resamples where the
    statistic is defined: a resample that draws no denominator in an arm (all its units have
    ``y = 0``) has no ratio and is left out of the p-value, the intervals and ``abs_se``, as
    are, for the relative interval, resamples with a zero control ratio. When either arm's
    own value is undefined (``sum(y) == 0``) or has fewer than 2 units (its resamples would
    all equal it, as if it had no sampling error), or when the resampled differences have no
    spread at all (every unit of each arm has the same value: the zero-variance rule of the
    module docstring), everything but the values is ``nan``.
    """
    alpha = check_level(alpha)
    if not isinstance(reps, int) or reps < 100:
        raise InvalidParameterError(f"bootstrap reps must be an integer >= 100; got {reps!r}")
    rng = np.random.default_rng(seed)
    xc, yc = (np.asarray(a, dtype=float) for a in control)
    xt, yt = (np.asarray(a, dtype=float) for a in treatment)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = xc.sum() / yc.sum()
        t = xt.sum() / yt.sum()
    with Progress("bootstrap", total=2 * reps) as bar:
        bc = _resampled_ratios(xc, yc, reps, rng, bar)
        bt = _resampled_ratios(xt, yt, reps, rng, bar)
    lo, hi = 100 * alpha / 2, 100 * (1 - alpha / 2)
    nan = np.float64(np.nan)
    ok = np.isfinite(bt) & np.isfinite(bc)
    d = (bt - bc)[ok]
    if (not (np.isfinite(c) and np.isfinite(t)) or len(d) < 2 or min(len(xc), len(xt)) < 2
            or np.ptp(d) == 0):
        # an undefined arm, one unit, or no spread at all: nothing to test (a zero-width
        # interval and p = 2 / (B + 1) would claim a certainty the data do not give)
        return TwoArmStats(
            control_value=np.float64(c), treatment_value=np.float64(t),
            abs_diff=np.float64(t - c), abs_se=nan, abs_ci_low=nan, abs_ci_high=nan,
            rel_diff=nan, rel_ci_low=nan, rel_ci_high=nan, p_value=nan, test=BOOTSTRAP,
        )
    below = np.count_nonzero(d <= 0)
    above = np.count_nonzero(d >= 0)
    p = min(1.0, 2.0 * (min(below, above) + 1) / (len(d) + 1))
    r = bt[ok & (bc != 0)] / bc[ok & (bc != 0)] - 1.0
    if c == 0 or len(r) == 0:
        rel = rel_lo = rel_hi = nan
    else:
        rel = np.float64(t / c - 1.0)
        rel_lo, rel_hi = np.float64(np.percentile(r, lo)), np.float64(np.percentile(r, hi))
    return TwoArmStats(
        control_value=np.float64(c), treatment_value=np.float64(t),
        abs_diff=np.float64(t - c), abs_se=np.float64(np.std(d, ddof=1)),
        abs_ci_low=np.float64(np.percentile(d, lo)),
        abs_ci_high=np.float64(np.percentile(d, hi)),
        rel_diff=rel, rel_ci_low=rel_lo, rel_ci_high=rel_hi,
        p_value=np.float64(p), test=BOOTSTRAP,
    )
