"""CUPED: equals the ANCOVA/OLS estimate by hand, reduces variance, stays unbiased."""

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats as sps

from onlineeval.stats.cuped import cuped_compare
from onlineeval.stats.moments import Moments, ratio
from onlineeval.stats.tests import DELTA_T, WELCH_T, compare, delta_t


def _mean_metric_arm(rng, n, effect, missing=0.0):
    level = rng.normal(5.0, 2.0, n)
    has = (rng.random(n) >= missing).astype(float)
    pre = (level + rng.normal(0, 1.0, n)) * has
    post = level + effect + rng.normal(0, 1.0, n)
    # columns: x, y(=1), x', y'(=has), has
    return np.column_stack([post, np.ones(n), pre, has, has])


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_mean_metric_equals_ols_with_pre_covariates(missing):
    # With equal arms, CUPED's pooled theta is the within-arm regression slope, so the
    # adjusted difference is the treatment coefficient of OLS y ~ 1 + treat + x' (+ has).
    rng = np.random.default_rng(20)
    c = _mean_metric_arm(rng, 600, 0.0, missing)
    t = _mean_metric_arm(rng, 600, 0.4, missing)
    res = cuped_compare(Moments.from_units(c), Moments.from_units(t), num=0, den=1, pre_num=2,
                        pre_den=3, has_pre=4, test=WELCH_T)
    assert res.comparison.test == f"{WELCH_T} + CUPED" and bool(res.applied)
    both = np.vstack([c, t])
    treat = np.r_[np.zeros(len(c)), np.ones(len(t))]
    covs = [treat, both[:, 2]] + ([both[:, 4]] if missing else [])
    ols = sm.OLS(both[:, 0], sm.add_constant(np.column_stack(covs))).fit()
    # exact without missing pre data; with it, CUPED adjusts by the pre-period *ratio*
    # sum(x')/sum(has) while OLS adjusts by mean(x'): equal to first order only
    assert float(res.comparison.abs_diff) == pytest.approx(
        ols.params[1], rel=1e-9 if missing == 0 else 2e-3)
    # the OLS (homoscedastic) standard error is close to CUPED's, not identical
    assert float(res.comparison.abs_se) == pytest.approx(ols.bse[1], rel=0.05)
    plain = compare(ratio(Moments.from_units(c), 0, 1), ratio(Moments.from_units(t), 0, 1))
    assert float(res.variance_reduction) == pytest.approx(
        1 - float(res.comparison.abs_se) ** 2 / float(plain.abs_se) ** 2, rel=1e-9)
    assert float(res.variance_reduction) > 0.3
    assert float(res.comparison.control_value) == pytest.approx(c[:, 0].mean())


def _ctr_population(rng, reps, n, delta, missing=0.2):
    # users differ in click propensity and in activity, both stable over time
    p = 0.05 + 0.85 * rng.beta(0.7, 0.7, (reps, n))
    activity = rng.gamma(2.0, 4.0, (reps, n))
    has = (rng.random((reps, n)) >= missing).astype(float)
    s_pre = (rng.poisson(activity) + 1) * has
    x_pre = rng.binomial(s_pre.astype(int), p)
    s = rng.poisson(activity) + 1
    x = rng.binomial(s, np.clip(p + delta, 0, 1))
    return np.stack([x, s, x_pre, s_pre, has], axis=-1).astype(float)


def test_ratio_cuped_unbiased_with_less_variance_and_valid_intervals():
    rng = np.random.default_rng(21)
    reps, n, delta = 1000, 500, 0.03
    mc = Moments.from_units(_ctr_population(rng, reps, n, 0.0))
    mt = Moments.from_units(_ctr_population(rng, reps, n, delta))
    res = cuped_compare(mc, mt, num=0, den=1, pre_num=2, pre_den=3, has_pre=4)
    plain = compare(ratio(mc, 0, 1), ratio(mt, 0, 1))
    d_cuped = res.comparison.abs_diff
    d_plain = plain.abs_diff
    # unbiased: the true CTR difference is exactly delta (searches independent of p)
    assert abs(d_cuped.mean() - delta) < 3 * d_cuped.std(ddof=1) / np.sqrt(reps)
    # less variance, and the reported reduction matches the achieved one
    achieved = 1 - d_cuped.var(ddof=1) / d_plain.var(ddof=1)
    assert achieved > 0.2
    assert res.variance_reduction.mean() == pytest.approx(achieved, abs=0.08)
    # the CUPED interval still covers the true effect about 95% of the time
    cover = np.mean((res.comparison.abs_ci_low <= delta) & (delta <= res.comparison.abs_ci_high))
    assert 0.93 <= cover <= 0.97
    # and so does the relative one: E[clicks]/E[searches] = E[p] = 0.05 + 0.85 / 2 per arm
    true_rel = delta / (0.05 + 0.85 / 2)
    comp = res.comparison
    assert abs(comp.rel_diff.mean() - true_rel) < 3 * comp.rel_diff.std(ddof=1) / np.sqrt(reps)
    assert 0.93 <= np.mean((comp.rel_ci_low <= true_rel) & (true_rel <= comp.rel_ci_high)) <= 0.97


def test_ratio_cuped_relative_interval_with_a_large_effect():
    # the relative interval treats the pooled covariate level as fixed; with a ~30% lift its
    # standard error must still match the sampling spread of the adjusted relative difference
    rng = np.random.default_rng(23)
    reps, n = 2000, 400
    mc = Moments.from_units(_ctr_population(rng, reps, n, 0.0))
    mt = Moments.from_units(_ctr_population(rng, reps, n, 0.15))
    res = cuped_compare(mc, mt, num=0, den=1, pre_num=2, pre_den=3, has_pre=4).comparison
    se = (res.rel_ci_high - res.rel_ci_low) / (2 * sps.t.isf(0.025, res.df))
    assert res.rel_diff.mean() > 0.25
    assert np.mean(se) == pytest.approx(res.rel_diff.std(ddof=1), rel=0.05)


def test_no_pre_period_data_falls_back_to_plain_test():
    rng = np.random.default_rng(22)
    c = _ctr_population(rng, 1, 300, 0.0, missing=1.0)[0]
    t = _ctr_population(rng, 1, 300, 0.05, missing=1.0)[0]
    res = cuped_compare(Moments.from_units(c), Moments.from_units(t), num=0, den=1,
                        pre_num=2, pre_den=3, has_pre=4)
    plain = delta_t(Moments.from_units(c), Moments.from_units(t), 0, 1)
    assert float(res.comparison.abs_diff) == pytest.approx(float(plain.abs_diff))
    assert float(res.comparison.p_value) == pytest.approx(float(plain.p_value))
    assert float(res.comparison.df) == pytest.approx(float(plain.df))
    assert float(res.variance_reduction) == pytest.approx(0.0, abs=1e-12)
    # and it says so: nothing could be adjusted for
    assert not bool(res.applied)
    assert res.comparison.test == f"{DELTA_T} + CUPED"


def test_pre_period_without_variance_is_not_applied():
    # every unit has pre-period data with the same pre-period CTR (0.5): neither covariate
    # varies, so theta is 0 and the comparison is the plain test, flagged as not applied
    rng = np.random.default_rng(24)
    arms = []
    for delta in (0.0, 0.05):
        x = _ctr_population(rng, 1, 300, delta, missing=0.0)[0]
        x[:, 3] = 2 * rng.integers(1, 5, 300)
        x[:, 2] = x[:, 3] / 2
        arms.append(Moments.from_units(x))
    res = cuped_compare(*arms, num=0, den=1, pre_num=2, pre_den=3, has_pre=4)
    plain = delta_t(*arms, 0, 1)
    assert not bool(res.applied)
    assert float(res.comparison.p_value) == pytest.approx(float(plain.p_value), rel=1e-9)
    assert float(res.theta[0]) == 0.0 and float(res.theta[1]) == 0.0


def test_covariate_that_explains_everything_leaves_zero_variance_undefined():
    # Audit: with the experiment-period metric an exact linear function of the pre-period one
    # (post = pre + effect per unit), the adjusted variance is 0 in exact arithmetic; the
    # rounding of V_RR - 2 theta V_CR + theta^2 V_CC could fall below 0 and turn the p-value
    # and intervals into a silent nan. Theta is 1 (the within-arm OLS slope, by hand).
    rng = np.random.default_rng(31)
    failures = []
    for trial in range(40):
        n = 20 + trial
        ones = np.ones(n)
        c, t = (
            np.column_stack([pre + effect, ones, pre, ones, ones])
            for pre, effect in ((rng.normal(5.0, 2.0, n), 0.0), (rng.normal(5.0, 2.0, n), 0.25))
        )
        res = cuped_compare(Moments.from_units(c), Moments.from_units(t), num=0, den=1,
                            pre_num=2, pre_den=3, has_pre=4)
        comp = res.comparison
        slope = np.polyfit(c[:, 2], c[:, 0], 1)[0]
        assert slope == pytest.approx(1.0) and res.theta[0] == pytest.approx(1.0)
        assert float(comp.abs_diff) == pytest.approx(0.25)
        # the adjusted variance is exactly 0 in both arms: the test is undefined there (p
        # and intervals nan by the zero-variance rule), never a rounding artefact
        if not (float(comp.abs_se) == 0.0 and np.isnan(comp.p_value)
                and np.isnan(comp.abs_ci_low)):
            failures.append((trial, float(comp.abs_se), float(comp.p_value)))
    assert not failures
