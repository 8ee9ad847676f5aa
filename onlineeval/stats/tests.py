"""Two-arm comparisons of a metric: treatment against control.

- :func:`compare` — two independent estimates with their variances (delta-method ratios,
  per-unit means): ``abs_diff = t - c`` with a normal (or Student t, given ``df``) interval and
  two-sided p-value; ``rel_diff = t / c - 1`` with the delta-method variance of a ratio of two
  independent estimates, ``Var(t/c) ~= Var(t)/c^2 + t^2 Var(c)/c^4``.
- :func:`welch` — per-unit means, Welch's unequal-variance t (Welch–Satterthwaite df); the same
  numbers as ``scipy.stats.ttest_ind(equal_var=False)`` and statsmodels' ``CompareMeans``.
- :func:`mann_whitney` — per-unit values, ``scipy.stats.mannwhitneyu`` p-value (a test of
  stochastic ordering, not of the mean: its intervals are left empty).
- :func:`bootstrap` — resamples units within each arm (seeded) and recomputes the metric
  ``sum(x)/sum(y)``: percentile intervals and a two-sided p-value from the resampled
  differences.

Edge cases: a control value of 0 makes ``rel_diff`` and its interval ``nan`` (a relative
change from a zero baseline is undefined); a zero variance on both arms makes the p-value
``nan`` (nothing to test) when the difference is 0, and ``0`` with the interval
``[diff, diff]`` when it is not (as ``scipy.stats.ttest_ind``). An arm with fewer than two
units has no variance estimate: its p-value and intervals are ``nan``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.progress import Progress
from onlineeval.stats.moments import Estimate, Moments, mean
from onlineeval.stats.results import Comparison


def _check_alpha(alpha: float) -> None:
    if not (isinstance(alpha, int | float) and 0.0 < float(alpha) < 1.0):
        raise InvalidParameterError(f"alpha must be a number in (0, 1); got {alpha!r}")


def compare(
    control: Estimate, treatment: Estimate, alpha: float = 0.05,
    df: np.ndarray | None = None, test: str = "delta-z",
) -> Comparison:
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
    """
    _check_alpha(alpha)
    c = np.asarray(control.value, dtype=float)
    t = np.asarray(treatment.value, dtype=float)
    vc = np.asarray(control.var, dtype=float)
    vt = np.asarray(treatment.var, dtype=float)
    dist = stats.norm if df is None else stats.t(np.asarray(df, dtype=float))
    q = dist.isf(alpha / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = t - c
        se = np.sqrt(vc + vt)
        stat = diff / se
        p = 2.0 * dist.sf(np.abs(stat))
        rel = np.where(c == 0, np.nan, t / c - 1.0)
        se_rel = np.sqrt(vt / (c * c) + t * t * vc / (c ** 4))
    return Comparison(
        control_value=c, treatment_value=t,
        abs_diff=diff, abs_se=se, abs_ci_low=diff - q * se, abs_ci_high=diff + q * se,
        rel_diff=rel, rel_ci_low=rel - q * se_rel, rel_ci_high=rel + q * se_rel,
        p_value=p, test=test,
    )


def welch_df(var_mean_c: np.ndarray, n_c: np.ndarray, var_mean_t: np.ndarray,
             n_t: np.ndarray) -> np.ndarray:
    """Welch–Satterthwaite degrees of freedom from the variances of the two means.

    ``df = (v_c + v_t)^2 / (v_c^2 / (n_c - 1) + v_t^2 / (n_t - 1))``. When both variances are
    0 that is 0/0; the standard error is then 0, so any df gives the same p-value and
    interval, and ``n_c + n_t - 2`` is returned to keep them defined.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        df = (var_mean_c + var_mean_t) ** 2 / (
            var_mean_c ** 2 / (n_c - 1) + var_mean_t ** 2 / (n_t - 1)
        )
        return np.where((var_mean_c == 0) & (var_mean_t == 0),
                        np.asarray(n_c, dtype=float) + n_t - 2.0, df)


def welch(control: Moments, treatment: Moments, col: int, alpha: float = 0.05) -> Comparison:
    """Welch's t-test on the per-unit variable ``col`` (vectorised over the moments' shape)."""
    ec, et = mean(control, col), mean(treatment, col)
    df = welch_df(ec.var, control.n, et.var, treatment.n)
    return compare(ec, et, alpha, df=df, test="welch-t")


def mann_whitney(control: np.ndarray, treatment: np.ndarray, alpha: float = 0.05) -> Comparison:
    """Mann–Whitney U on per-unit values; means reported, intervals ``nan``."""
    _check_alpha(alpha)
    xc = np.asarray(control, dtype=float)
    xt = np.asarray(treatment, dtype=float)
    p = stats.mannwhitneyu(xt, xc, alternative="two-sided").pvalue
    c, t = xc.mean(), xt.mean()
    nan = np.float64(np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = t / c - 1.0 if c != 0 else nan
    return Comparison(
        control_value=np.float64(c), treatment_value=np.float64(t),
        abs_diff=np.float64(t - c), abs_se=nan, abs_ci_low=nan, abs_ci_high=nan,
        rel_diff=np.float64(rel), rel_ci_low=nan, rel_ci_high=nan,
        p_value=np.float64(p), test="mann-whitney-u",
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
) -> Comparison:
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
    all equal it, as if it had no sampling error) everything but the values is ``nan``.
    """
    _check_alpha(alpha)
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
    if not (np.isfinite(c) and np.isfinite(t)) or len(d) < 2 or min(len(xc), len(xt)) < 2:
        # an undefined arm, or one unit (resampling it has no spread): nothing to test
        return Comparison(
            control_value=np.float64(c), treatment_value=np.float64(t),
            abs_diff=np.float64(t - c), abs_se=nan, abs_ci_low=nan, abs_ci_high=nan,
            rel_diff=nan, rel_ci_low=nan, rel_ci_high=nan, p_value=nan, test="bootstrap",
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
    return Comparison(
        control_value=np.float64(c), treatment_value=np.float64(t),
        abs_diff=np.float64(t - c), abs_se=np.float64(np.std(d, ddof=1)),
        abs_ci_low=np.float64(np.percentile(d, lo)),
        abs_ci_high=np.float64(np.percentile(d, hi)),
        rel_diff=rel, rel_ci_low=rel_lo, rel_ci_high=rel_hi,
        p_value=np.float64(p), test="bootstrap",
    )
