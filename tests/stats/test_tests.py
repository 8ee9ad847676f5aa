"""Two-arm tests against independent implementations (statsmodels, scipy, enumeration)."""

import dataclasses
import itertools

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

from onlineeval.errors import InvalidParameterError
from onlineeval.stats.moments import Moments, ratio
from onlineeval.stats.tests import (
    BOOTSTRAP,
    DELTA_T,
    MANN_WHITNEY,
    WELCH_T,
    bootstrap,
    compare,
    delta_t,
    mann_whitney,
    welch,
)


def _arm(rng, n, p_shift=0.0):
    searches = rng.poisson(3.0, n) + 1
    clicks = rng.binomial(searches, np.clip(rng.beta(2, 5, n) + p_shift, 0, 1))
    return np.column_stack([clicks, searches]).astype(float)


def test_ratio_z_matches_statsmodels_on_linearised_units():
    rng = np.random.default_rng(10)
    c, t = _arm(rng, 700), _arm(rng, 650, 0.03)
    mc, mt = Moments.from_units(c), Moments.from_units(t)
    res = compare(ratio(mc, 0, 1), ratio(mt, 0, 1), alpha=0.05)

    # independent route: R_a + linearisation per unit has mean R_a and the delta variance,
    # so statsmodels' unequal-variance z-test on those values is the delta-method test
    def lin(v):
        r = v[:, 0].sum() / v[:, 1].sum()
        return r + (v[:, 0] - r * v[:, 1]) / v[:, 1].mean()

    cm = CompareMeans(DescrStatsW(lin(t)), DescrStatsW(lin(c)))
    z, p = cm.ztest_ind(usevar="unequal")
    lo, hi = cm.zconfint_diff(alpha=0.05, usevar="unequal")
    assert res.abs_diff == pytest.approx(t[:, 0].sum() / t[:, 1].sum()
                                         - c[:, 0].sum() / c[:, 1].sum(), rel=1e-12)
    assert res.abs_diff / res.abs_se == pytest.approx(z, rel=1e-9)
    assert res.p_value == pytest.approx(p, rel=1e-9)
    assert (res.abs_ci_low, res.abs_ci_high) == pytest.approx((lo, hi), rel=1e-9)


def test_relative_ci_matches_numerical_delta_method():
    rng = np.random.default_rng(11)
    c, t = _arm(rng, 900), _arm(rng, 900, 0.05)
    mc, mt = Moments.from_units(c), Moments.from_units(t)
    res = compare(ratio(mc, 0, 1), ratio(mt, 0, 1), alpha=0.1)

    # four-variable delta method with a finite-difference gradient of
    # f = (mx_t / my_t) / (mx_c / my_c) - 1 and a block-diagonal covariance of the means
    mu = np.concatenate([mt.mean, mc.mean])
    cov = np.zeros((4, 4))
    cov[:2, :2] = mt.cov / mt.n
    cov[2:, 2:] = mc.cov / mc.n

    def f(u):
        return (u[0] / u[1]) / (u[2] / u[3]) - 1

    grad = np.array([
        (f(mu + h) - f(mu - h)) / (2 * 1e-7)
        for h in np.eye(4) * 1e-7
    ])
    se = np.sqrt(grad @ cov @ grad)
    q = sps.norm.ppf(0.95)
    assert res.rel_diff == pytest.approx(f(mu), rel=1e-12)
    assert res.rel_ci_low == pytest.approx(f(mu) - q * se, rel=1e-6)
    assert res.rel_ci_high == pytest.approx(f(mu) + q * se, rel=1e-6)


def test_welch_matches_statsmodels_and_scipy():
    rng = np.random.default_rng(12)
    c = rng.gamma(2.0, 3.0, 300)[:, None]
    t = rng.gamma(2.2, 3.5, 180)[:, None]
    res = welch(Moments.from_units(c), Moments.from_units(t), 0, alpha=0.05)
    cm = CompareMeans(DescrStatsW(t[:, 0]), DescrStatsW(c[:, 0]))
    tstat, p, df = cm.ttest_ind(usevar="unequal")
    lo, hi = cm.tconfint_diff(alpha=0.05, usevar="unequal")
    assert res.abs_diff / res.abs_se == pytest.approx(tstat, rel=1e-10)
    assert res.p_value == pytest.approx(p, rel=1e-9)
    assert (res.abs_ci_low, res.abs_ci_high) == pytest.approx((lo, hi), rel=1e-9)
    sp = sps.ttest_ind(t[:, 0], c[:, 0], equal_var=False)
    assert res.p_value == pytest.approx(sp.pvalue, rel=1e-9)
    assert res.test == WELCH_T
    assert float(res.df) == pytest.approx(df, rel=1e-10)


def test_mann_whitney_matches_exact_enumeration():
    # small samples without ties: the exact null distribution of U by enumeration
    c = np.array([1.1, 2.5, 3.2, 4.8, 7.0])
    t = np.array([2.9, 5.1, 6.3, 8.4, 9.9, 10.5])
    res = mann_whitney(c, t)
    pooled = np.concatenate([c, t])
    ranks = sps.rankdata(pooled)
    u_obs = ranks[len(c):].sum() - len(t) * (len(t) + 1) / 2
    us = []
    for idx in itertools.combinations(range(len(pooled)), len(t)):
        us.append(ranks[list(idx)].sum() - len(t) * (len(t) + 1) / 2)
    us = np.array(us)
    p_exact = min(1.0, 2 * min((us <= u_obs).mean(), (us >= u_obs).mean()))
    assert res.p_value == pytest.approx(p_exact, rel=1e-12)
    assert res.abs_diff == pytest.approx(t.mean() - c.mean())
    assert np.isnan(res.abs_ci_low) and res.test == MANN_WHITNEY


def test_bootstrap_is_seeded_and_agrees_with_delta_method():
    rng = np.random.default_rng(13)
    c, t = _arm(rng, 1500), _arm(rng, 1500, 0.02)
    a = bootstrap((c[:, 0], c[:, 1]), (t[:, 0], t[:, 1]), reps=1000, seed=7)
    b = bootstrap((c[:, 0], c[:, 1]), (t[:, 0], t[:, 1]), reps=1000, seed=7)
    np.testing.assert_equal(dataclasses.asdict(a), dataclasses.asdict(b))
    assert a.test == BOOTSTRAP
    d = compare(ratio(Moments.from_units(c), 0, 1), ratio(Moments.from_units(t), 0, 1))
    assert a.abs_diff == pytest.approx(float(d.abs_diff), rel=1e-12)
    # the bootstrap standard error estimates the delta-method one (1000 reps: ~5% noise)
    assert a.abs_se == pytest.approx(float(d.abs_se), rel=0.12)
    width_b = a.abs_ci_high - a.abs_ci_low
    width_d = d.abs_ci_high - d.abs_ci_low
    assert width_b == pytest.approx(float(width_d), rel=0.15)
    assert (a.p_value < 0.05) == (d.p_value < 0.05) or abs(d.p_value - 0.05) < 0.03


def test_bad_parameters():
    m = Moments.from_units(np.ones((3, 2)))
    with pytest.raises(InvalidParameterError, match="alpha"):
        compare(ratio(m, 0, 1), ratio(m, 0, 1), alpha=1.5)
    with pytest.raises(InvalidParameterError, match="reps"):
        bootstrap((np.ones(3), np.ones(3)), (np.ones(3), np.ones(3)), reps=5)


def test_zero_control_value_gives_nan_relative_difference():
    # Audit: t / 0 - 1 came out as +inf (a number a user could sort or plot) although the
    # module docstring promises nan. A relative change from a zero baseline is undefined.
    c = Moments.from_units(np.column_stack([np.zeros(5), np.full(5, 2.0)]))
    t = Moments.from_units(np.column_stack([[0.0, 1, 0, 2, 1], np.full(5, 2.0)]))
    res = compare(ratio(c, 0, 1), ratio(t, 0, 1))
    assert res.control_value == 0 and res.abs_diff == pytest.approx(0.4)
    for v in (res.rel_diff, res.rel_ci_low, res.rel_ci_high):
        assert np.isnan(v)
    mw = mann_whitney(np.zeros(4), np.array([0.0, 1, 2, 1]))
    assert np.isnan(mw.rel_diff)
    b = bootstrap((np.zeros(5), np.full(5, 2.0)), (np.array([0.0, 1, 0, 2, 1]), np.full(5, 2.0)),
                  reps=200)
    for v in (b.rel_diff, b.rel_ci_low, b.rel_ci_high):
        assert np.isnan(v)


def test_zero_variance_in_both_arms_is_undefined_not_p_zero():
    # Issue 12: with every unit of each arm at the same value, the estimated variances are
    # 0 and scipy's ttest_ind(equal_var=False) says p = 0 with a zero-width interval; a
    # variance estimated as 0 from 3 and 4 units is no proof of certainty, so the test is
    # undefined there (p and intervals nan), whatever the difference.
    c = np.ones((3, 1))
    t = np.full((4, 1), 2.0)
    res = welch(Moments.from_units(c), Moments.from_units(t), 0)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        assert sps.ttest_ind(t[:, 0], c[:, 0], equal_var=False).pvalue == 0.0  # scipy's p
    assert res.abs_diff == 1.0 and res.abs_se == 0.0
    for v in (res.p_value, res.abs_ci_low, res.abs_ci_high, res.rel_ci_low, res.rel_ci_high,
              res.df):
        assert np.isnan(v)
    assert res.rel_diff == pytest.approx(1.0)
    same = welch(Moments.from_units(c), Moments.from_units(c), 0)
    assert np.isnan(same.p_value)  # zero difference and zero variance: nothing to test
    # the bootstrap's resamples then have no spread at all: undefined too, not p = 2/(B+1)
    b = bootstrap((c[:, 0], np.ones(3)), (t[:, 0], np.ones(4)), reps=200)
    assert b.abs_diff == 1.0
    assert np.isnan(b.p_value) and np.isnan(b.abs_ci_low) and np.isnan(b.abs_ci_high)


def test_one_zero_variance_arm_keeps_a_defined_test_on_the_other_arm():
    # control constant, treatment varies: Welch-Satterthwaite gives the treatment's n - 1
    # degrees of freedom and the test is the one-sample t of treatment against the control
    # value (scipy's one-sample test, computed independently)
    c = np.zeros((40, 1))
    t = np.array([0.0, 1, 0, 2, 1, 0, 0, 3, 1, 0])[:, None]
    res = welch(Moments.from_units(c), Moments.from_units(t), 0)
    one = sps.ttest_1samp(t[:, 0], 0.0)
    assert float(res.df) == pytest.approx(len(t) - 1)
    assert res.p_value == pytest.approx(one.pvalue, rel=1e-10)
    assert res.abs_ci_low < res.abs_diff < res.abs_ci_high


def _lin_plus_value(v):
    """R + (x - R y) / mean(y) per unit: mean R, sample variance that of the linearisation."""
    r = v[:, 0].sum() / v[:, 1].sum()
    return r + (v[:, 0] - r * v[:, 1]) / v[:, 1].mean()


def test_small_sample_ratio_t_matches_an_independent_delta_method_welch_computation():
    # Issue 12: two users per arm, CTR 0.2 and 0.4 in control, 0.6 and 0.8 in treatment (10
    # searches each). The delta-method z said p = 0.0047, "significant"; with the t
    # reference and Welch-Satterthwaite df (here 2) the p-value is 0.106.
    c = np.array([[2.0, 10], [4, 10]])
    t = np.array([[6.0, 10], [8, 10]])
    mc, mt = Moments.from_units(c), Moments.from_units(t)
    res = delta_t(mc, mt, 0, 1)
    z = compare(ratio(mc, 0, 1), ratio(mt, 0, 1))
    assert z.p_value == pytest.approx(0.00468, abs=1e-5)  # the old, overclaiming number
    # independent: scipy's Welch test on the per-unit linearised values, whose means are the
    # arms' ratios and whose sample variances give the delta-method variances
    w = sps.ttest_ind(_lin_plus_value(t), _lin_plus_value(c), equal_var=False)
    assert res.p_value == pytest.approx(w.pvalue, rel=1e-10)
    assert res.p_value == pytest.approx(0.1056, abs=5e-4)
    assert float(res.df) == pytest.approx(w.df, rel=1e-10)
    ci = w.confidence_interval(0.95)
    assert (res.abs_ci_low, res.abs_ci_high) == pytest.approx((ci.low, ci.high), rel=1e-10)
    assert res.test == DELTA_T


def test_ratio_t_with_unequal_units_and_units_without_denominator():
    # arms of 7 and 12 users; in control 3 users have no search with a known reciprocal
    # rank (y = 0, so x = 0): they carry no information about the spread and add no degree
    # of freedom. Independent computation: the delta-method variance by the textbook
    # formula on the raw sums, Satterthwaite df by hand with the units that have data.
    rng = np.random.default_rng(5)
    y_c = np.r_[rng.integers(1, 6, 4), np.zeros(3)].astype(float)
    y_t = rng.integers(1, 6, 12).astype(float)
    c = np.column_stack([rng.uniform(0, 1, 7) * y_c, y_c])
    t = np.column_stack([rng.uniform(0.2, 1, 12) * y_t, y_t])
    res = delta_t(Moments.from_units(c), Moments.from_units(t), 0, 1, units_c=4, units_t=12)

    def var(v):
        n, x, y = len(v), v[:, 0], v[:, 1]
        r = x.sum() / y.sum()
        return np.sum((x - r * y) ** 2) / (n - 1) / (n * y.mean() ** 2), r

    (vc, rc), (vt, rt) = var(c), var(t)
    df = (vc + vt) ** 2 / (vc ** 2 / 3 + vt ** 2 / 11)
    p = 2 * sps.t.sf(abs(rt - rc) / np.sqrt(vc + vt), df)
    assert float(res.df) == pytest.approx(df, rel=1e-10)
    assert res.p_value == pytest.approx(p, rel=1e-9)


def test_large_sample_ratio_t_tends_to_the_z_test():
    # with thousands of units the t reference is the normal one: p-values and intervals of
    # the delta-method t agree with statsmodels' z-test on the linearised values
    rng = np.random.default_rng(14)
    c, t = _arm(rng, 6000), _arm(rng, 5500, 0.01)
    res = delta_t(Moments.from_units(c), Moments.from_units(t), 0, 1)
    cm = CompareMeans(DescrStatsW(_lin_plus_value(t)), DescrStatsW(_lin_plus_value(c)))
    _, p = cm.ztest_ind(usevar="unequal")
    lo, hi = cm.zconfint_diff(alpha=0.05, usevar="unequal")
    assert float(res.df) > 10_000
    assert res.p_value == pytest.approx(p, rel=3e-3)
    # same centre, widths within t_{df} / z - 1 (about 1.1e-4 at this df)
    assert res.abs_ci_high - res.abs_ci_low == pytest.approx(hi - lo, rel=2e-4)
    assert res.abs_ci_high + res.abs_ci_low == pytest.approx(hi + lo, rel=1e-12)


def test_bootstrap_undefined_arm_gives_nan_p_not_a_tiny_one():
    # Audit: a control arm without any denominator (value nan) had every resampled difference
    # nan, and the p-value came out as 2 / (reps + 1) = 0.00995, i.e. "significant".
    b = bootstrap((np.zeros(5), np.zeros(5)), (np.array([1.0, 2, 0]), np.full(3, 3.0)),
                  reps=200)
    assert np.isnan(b.control_value)
    assert np.isnan(b.p_value) and np.isnan(b.abs_se) and np.isnan(b.abs_ci_low)


def test_bootstrap_p_value_counts_only_resamples_where_the_metric_is_defined():
    # An arm where most units have a zero denominator: some resamples draw none of the others
    # and their ratio is undefined. The p-value is over the defined resamples only, checked
    # against the formula applied by hand to the same seeded draws.
    xc, yc = np.array([1.0, 0, 0]), np.array([3.0, 0, 0])
    xt, yt = np.array([2.0, 1, 3, 2]), np.array([3.0, 3, 3, 3])
    reps = 500
    res = bootstrap((xc, yc), (xt, yt), reps=reps, seed=3)
    rng = np.random.default_rng(3)
    ic = rng.integers(0, 3, size=(reps, 3))
    it = rng.integers(0, 4, size=(reps, 4))
    with np.errstate(invalid="ignore", divide="ignore"):
        d = xt[it].sum(1) / yt[it].sum(1) - xc[ic].sum(1) / yc[ic].sum(1)
    d = d[np.isfinite(d)]
    assert 0 < len(d) < reps  # the case under test: some resamples undefined
    p = min(1.0, 2 * (min((d <= 0).sum(), (d >= 0).sum()) + 1) / (len(d) + 1))
    assert res.p_value == pytest.approx(p, rel=1e-12)
    assert res.abs_se == pytest.approx(np.std(d, ddof=1), rel=1e-12)


def test_constant_ratio_arms_give_the_documented_zero_variance_results():
    # every unit's ratio is 0.1 in control and 0.3 in treatment: zero variance in both arms,
    # so the test is undefined (nan p and intervals, se 0), with equal arms too
    y = np.array([1.0, 2, 3, 4, 7])
    c = Moments.from_units(np.column_stack([0.1 * y, y]))
    t = Moments.from_units(np.column_stack([0.3 * y, y]))
    for res in (compare(ratio(c, 0, 1), ratio(t, 0, 1)), delta_t(c, t, 0, 1)):
        assert res.abs_se == 0.0 and np.isnan(res.p_value)
        assert np.isnan(res.abs_ci_low) and np.isnan(res.abs_ci_high)
        assert res.abs_diff == pytest.approx(0.2)
    assert np.isnan(delta_t(c, c, 0, 1).p_value)


def test_bootstrap_with_a_single_unit_arm_is_undefined_like_the_delta_method():
    # Audit: one control unit resamples to itself every time, so the bootstrap saw no
    # control variability and gave p = 2 / 101 ("significant"); the delta method and Welch
    # give nan for an arm with fewer than 2 units, and so does the bootstrap now.
    b = bootstrap((np.ones(1), np.ones(1)), (np.array([2.0, 3]), np.ones(2)), reps=100)
    assert b.abs_diff == pytest.approx(1.5)
    assert np.isnan(b.p_value) and np.isnan(b.abs_ci_low) and np.isnan(b.abs_se)
    z = compare(ratio(Moments.from_units(np.ones((1, 2))), 0, 1),
                ratio(Moments.from_units(np.column_stack([[2.0, 3], [1.0, 1]])), 0, 1))
    assert np.isnan(z.p_value)
