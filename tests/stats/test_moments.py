"""Moments and the delta-method ratio variance, checked against direct unit-level formulas."""

import numpy as np
import pytest

from onlineeval.stats.moments import Moments, mean, ratio, ratio_gradient, split_moments


def _units(rng, n=400):
    # searches per user (>= 1) and clicks correlated with a per-user propensity
    searches = rng.poisson(4.0, n) + 1
    p = rng.beta(2, 5, n)
    clicks = rng.binomial(searches, p)
    return np.column_stack([clicks, searches]).astype(float)


def test_from_units_matches_numpy_cov():
    v = _units(np.random.default_rng(1))
    m = Moments.from_units(v)
    assert m.n == len(v)
    np.testing.assert_allclose(m.mean, v.mean(axis=0))
    np.testing.assert_allclose(m.cov, np.cov(v, rowvar=False, ddof=1))


def test_from_sums_and_split_moments_agree_with_subsets():
    rng = np.random.default_rng(2)
    v = _units(rng) + 1e6  # a large offset: raw sums would lose digits, split_moments centres
    assign = rng.random((7, len(v))) < 0.5
    m = split_moments(v, assign)
    for r in range(7):
        direct = Moments.from_units(v[assign[r]])
        assert m.n[r] == direct.n
        np.testing.assert_allclose(m.mean[r], direct.mean, rtol=1e-12)
        np.testing.assert_allclose(m.cov[r], direct.cov, rtol=1e-8)
    s = v.sum(axis=0)
    c = v.T @ v
    fs = Moments.from_sums(np.float64(len(v)), s, c)
    np.testing.assert_allclose(fs.cov, np.cov(v, rowvar=False), rtol=1e-4)


def test_ratio_delta_variance_equals_linearisation_by_hand():
    v = _units(np.random.default_rng(3))
    x, y = v[:, 0], v[:, 1]
    est = ratio(Moments.from_units(v), 0, 1)
    r = x.sum() / y.sum()
    assert est.value == pytest.approx(r, rel=1e-14)
    # per-unit linearisation (x_i - R y_i) / mean(y); Var(R) = sample var of it / n
    lin = (x - r * y) / y.mean()
    assert est.var == pytest.approx(lin.var(ddof=1) / len(x), rel=1e-12)


def test_ratio_gradient_is_numerical_derivative():
    m = Moments.from_units(_units(np.random.default_rng(4)))
    g = ratio_gradient(m, 0, 1)
    h = 1e-6
    for j in range(2):
        up, dn = m.mean.copy(), m.mean.copy()
        up[j] += h
        dn[j] -= h
        num = (up[0] / up[1] - dn[0] / dn[1]) / (2 * h)
        assert g[j] == pytest.approx(num, rel=1e-6)


def test_delta_variance_matches_sampling_variance():
    # the spread of R over many independent samples of units is what the delta method predicts
    rng = np.random.default_rng(5)
    reps, n = 3000, 500
    searches = rng.poisson(4.0, (reps, n)) + 1
    clicks = rng.binomial(searches, rng.beta(2, 5, (reps, n)))
    s = np.stack([clicks, searches], axis=-1).astype(float)
    m = Moments.from_sums(
        np.full(reps, float(n)), s.sum(axis=1), np.einsum("rni,rnj->rij", s, s)
    )
    est = ratio(m, 0, 1)
    assert est.var.mean() == pytest.approx(est.value.var(ddof=1), rel=0.08)


def test_mean_and_small_samples():
    v = _units(np.random.default_rng(6))
    e = mean(Moments.from_units(v), 1)
    assert e.var == pytest.approx(v[:, 1].var(ddof=1) / len(v))
    one = Moments.from_units(v[:1])
    assert np.isnan(ratio(one, 0, 1).var)
    zero_den = Moments.from_units(np.array([[0.0, 0.0], [0.0, 0.0]]))
    assert np.isnan(ratio(zero_den, 0, 1).value)


@pytest.mark.parametrize("r", [5.0, 0.1, 1 / 3, 7.3, 0.37])
def test_constant_per_unit_ratio_has_zero_variance_not_a_rounding_negative(r):
    # Audit: when every unit has x = R y the linearisation (x - R y) / mean(y) is 0 for every
    # unit, so Var(R) = 0 exactly. Computed as s_xx - 2 R s_xy + R^2 s_yy the cancellation
    # left +-1e-19 noise; about half the time negative, whose square root made the p-value and
    # intervals silently nan.
    rng = np.random.default_rng(int(r * 100))
    for n in (3, 17, 150):
        y = rng.integers(1, 20, n).astype(float)
        est = ratio(Moments.from_units(np.column_stack([r * y, y])), 0, 1)
        assert est.value == pytest.approx(r, rel=1e-15)
        assert est.var == 0.0
    # a genuinely small variance is kept: relative noise of 1e-6 per unit
    y = rng.integers(1, 20, 50).astype(float)
    x = r * y * (1 + 1e-6 * rng.standard_normal(50))
    lin = (x - x.sum() / y.sum() * y) / y.mean()
    est = ratio(Moments.from_units(np.column_stack([x, y])), 0, 1)
    assert est.var == pytest.approx(lin.var(ddof=1) / 50, rel=1e-6)
