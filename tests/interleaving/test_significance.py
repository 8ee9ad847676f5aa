"""Sign test and user-level bootstrap of Δ_AB, against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving.significance import bootstrap_ci, delta_ab, sign_test, user_test


def test_delta_ab_definition():
    # Chapelle et al. 2012: (wins_A + ties/2) / (wins_A + wins_B + ties) - 0.5
    assert delta_ab([3], [1], [1]) == pytest.approx(3.5 / 5 - 0.5)
    assert math.isnan(float(delta_ab([0], [0], [0])))
    # per-query: mean over groups with a decided page, undecided groups ignored
    assert delta_ab([1, 0, 2, 0], [1, 0, 0, 0], [0, 1, 0, 0]) == pytest.approx((0 + 0 + 0.5) / 3)


def test_sign_test_by_hand():
    # 8 wins of 10: two-sided exact p = 2 * P(X >= 8) = 2 * (45 + 10 + 1) / 1024
    assert sign_test(8, 2) == pytest.approx(112 / 1024)
    assert sign_test(2, 8) == pytest.approx(112 / 1024)
    assert sign_test(5, 5) == pytest.approx(1.0)
    assert math.isnan(sign_test(0, 0))


def _loop_bootstrap(wa, wb, t, n_res, seed, conf=0.95):
    rng = np.random.default_rng(seed)
    n = len(wa)
    out = []
    for _ in range(n_res):
        i = rng.integers(0, n, n)
        d = wa[i].sum() + wb[i].sum() + t[i].sum()
        if d:
            out.append((wa[i].sum() + t[i].sum() / 2) / d - 0.5)
    return np.quantile(out, [(1 - conf) / 2, (1 + conf) / 2])


def test_bootstrap_agrees_with_a_plain_loop_implementation():
    rng = np.random.default_rng(1)
    n = 300
    wa, wb, t = rng.poisson(1.3, n), rng.poisson(1.0, n), rng.poisson(0.4, n)
    lo, hi = bootstrap_ci(wa, wb, t, np.arange(n), n_resamples=4000, rng=5)
    ref_lo, ref_hi = _loop_bootstrap(wa, wb, t, 4000, 99)
    width = ref_hi - ref_lo
    assert lo == pytest.approx(ref_lo, abs=0.1 * width)
    assert hi == pytest.approx(ref_hi, abs=0.1 * width)
    point = float(delta_ab([wa.sum()], [wb.sum()], [t.sum()]))
    assert lo < point < hi


def test_bootstrap_matches_normal_interval_for_independent_pages():
    rng = np.random.default_rng(2)
    n = 4000
    outcome = rng.choice(3, size=n, p=[0.45, 0.35, 0.2])  # a, b, tie, one page per user
    wa, wb, t = (outcome == 0), (outcome == 1), (outcome == 2)
    score = wa + 0.5 * t  # every page decided: Δ = mean(score) - 0.5
    half = stats.norm.ppf(0.975) * score.std(ddof=1) / math.sqrt(n)
    lo, hi = bootstrap_ci(wa, wb, t, np.arange(n), n_resamples=3000, rng=0)
    center = score.mean() - 0.5
    assert lo == pytest.approx(center - half, abs=0.06 * half)
    assert hi == pytest.approx(center + half, abs=0.06 * half)


def test_bootstrap_resamples_users_not_pages():
    # 10 identical pages per user: the interval must be about sqrt(10) times wider than if
    # each page were an independent user
    rng = np.random.default_rng(3)
    users = 500
    outcome = rng.choice(2, size=users)
    wa, wb = (outcome == 0) * 10, (outcome == 1) * 10
    t = np.zeros(users)
    lo_u, hi_u = bootstrap_ci(wa, wb, t, np.arange(users), n_resamples=2000, rng=1)
    pages = np.repeat(outcome, 10)
    lo_p, hi_p = bootstrap_ci(pages == 0, pages == 1, np.zeros(pages.size),
                              np.arange(pages.size), n_resamples=2000, rng=1)
    ratio = (hi_u - lo_u) / (hi_p - lo_p)
    assert 2.6 < ratio < 3.8  # sqrt(10) = 3.16
    # rows of one user are drawn together: splitting each user into 10 rows changes nothing
    lo_r, hi_r = bootstrap_ci(pages == 0, pages == 1, np.zeros(pages.size),
                              np.repeat(np.arange(users), 10), n_resamples=2000, rng=1)
    assert (lo_r, hi_r) == pytest.approx((lo_u, hi_u))


def test_per_query_bootstrap_agrees_with_a_plain_loop():
    rng = np.random.default_rng(4)
    rows = 600
    users, queries = rng.integers(0, 150, rows), rng.integers(0, 6, rows)
    wa, wb, t = rng.poisson(0.8, rows), rng.poisson(0.6, rows), rng.poisson(0.2, rows)
    lo, hi = bootstrap_ci(wa, wb, t, users, queries, n_resamples=2000, rng=3)
    loop = np.random.default_rng(8)
    draws = []
    for _ in range(2000):
        pick = np.bincount(loop.integers(0, 150, 150), minlength=150)
        w = pick[users]
        per_q = [
            (np.sum(w * wa * (queries == q)), np.sum(w * wb * (queries == q)),
             np.sum(w * t * (queries == q))) for q in range(6)
        ]
        ds = [(a + c / 2) / (a + b + c) - 0.5 for a, b, c in per_q if a + b + c]
        draws.append(np.mean(ds))
    ref = np.quantile(draws, [0.025, 0.975])
    width = ref[1] - ref[0]
    assert (lo, hi) == pytest.approx(tuple(ref), abs=0.1 * width)


def test_bootstrap_is_seeded_and_validates_arguments():
    wa, wb, t, u = [3, 0, 1], [1, 2, 0], [0, 1, 1], [0, 1, 2]
    assert bootstrap_ci(wa, wb, t, u, rng=7) == bootstrap_ci(wa, wb, t, u, rng=7)
    assert all(math.isnan(x) for x in bootstrap_ci([], [], [], []))
    with pytest.raises(InvalidParameterError, match="n_resamples"):
        bootstrap_ci(wa, wb, t, u, n_resamples=0)
    with pytest.raises(InvalidParameterError, match="confidence"):
        bootstrap_ci(wa, wb, t, u, confidence=1.5)


def test_user_test_matches_scipy_and_handles_degenerate_users():
    wa = np.array([3, 0, 1, 5, 2])
    wb = np.array([1, 2, 1, 0, 2])
    t = np.array([0, 1, 0, 1, 0])
    res = user_test(wa, wb, t)
    d_u = (wa + t / 2) / (wa + wb + t) - 0.5
    ref = stats.ttest_1samp(d_u, 0.0)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    ci = ref.confidence_interval(0.95)
    assert (res.ci_low, res.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert (res.n, res.df, res.estimate) == (5, 4, pytest.approx(d_u.mean()))
    assert res.top_user == 3 and res.top_user_share == pytest.approx(6 / 19)
    # users without a decided page are not units of the test
    more = user_test(np.r_[wa, 0], np.r_[wb, 0], np.r_[t, 0])
    assert more.p_value == res.p_value and more.n == 5
    assert (more.units_control, more.units_treatment, more.unit) == (6, 6, "user")
    # every user alike: the t test is 0/0, the exact sign test over users is defined
    same = user_test([2, 1, 4], [0, 0, 0], [0, 0, 0])
    assert same.p_value == pytest.approx(0.25) and math.isnan(same.ci_low)
    assert same.test.startswith("exact sign test over users")
    tied = user_test([1, 2], [1, 2], [0, 0])
    assert math.isnan(tied.p_value) and tied.test == "undefined: every user's preference is 0"
    one = user_test([5], [1], [0])
    assert math.isnan(one.p_value) and "fewer than 2 users" in one.test


def _null_experiment(rng, users, heavy):
    """Per-user wins and ties of one experiment without any preference: each user has a
    taste p_u ~ Beta(1.5, 1.5) (symmetric around 1/2), 1 to ~15 decided pages, and the
    first user `heavy` pages if given."""
    pages = rng.geometric(0.3, users)
    if heavy:
        pages[0] = heavy
    ties = rng.binomial(pages, 0.15)
    wa = rng.binomial(pages - ties, rng.beta(1.5, 1.5, users))
    return wa, pages - ties - wa, ties


@pytest.mark.slow
def test_user_test_is_calibrated_where_the_page_sign_test_is_not():
    # The figures of onlineeval.interleaving.significance: rejection rates at alpha = 0.05
    # on 2,000 no-preference experiments each (seeded)
    rng = np.random.default_rng(2024)
    rates = {}
    for users, heavy in ((5, 0), (20, 0), (20, 300), (200, 300)):
        user_rej = 0
        wins = []
        for _ in range(2000):
            wa, wb, t = _null_experiment(rng, users, heavy)
            user_rej += user_test(wa, wb, t).p_value < 0.05
            wins.append((wa.sum(), wb.sum()))
        # the page-level sign test, vectorised: two-sided exact binomial with p = 1/2
        a, b = np.array(wins).T
        page_p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(a, b), a + b, 0.5))
        assert page_p[0] == pytest.approx(sign_test(a[0], b[0]))
        rates[users, heavy] = (user_rej / 2000, float(np.mean(page_p < 0.05)))
    assert rates == {(5, 0): (0.0555, 0.0885), (20, 0): (0.0485, 0.1445),
                     (20, 300): (0.051, 0.818), (200, 300): (0.0485, 0.7205)}
    for user_rate, _ in rates.values():
        assert 0.035 < user_rate < 0.075


def test_per_query_bootstrap_chunks_by_queries_too(monkeypatch):
    # many more queries than users: the chunk's per-query sums (queries x resamples) must
    # stay within the chunk budget, and the interval must not depend on the chunk size (to
    # 1e-12: a matrix product of another shape may add in another order)
    import tracemalloc

    from onlineeval.interleaving import significance

    rng = np.random.default_rng(3)
    n_rows, n_users, n_queries = 30_000, 200, 20_000
    users = rng.integers(0, n_users, n_rows)
    groups = rng.integers(0, n_queries, n_rows)
    wa, wb, t = (rng.integers(0, 3, n_rows) for _ in range(3))
    whole = bootstrap_ci(wa, wb, t, users, groups, n_resamples=200, rng=7)
    monkeypatch.setattr(significance, "_CHUNK_CELLS", 20_000)
    tracemalloc.start()
    try:
        chunked = bootstrap_ci(wa, wb, t, users, groups, n_resamples=200, rng=7)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert chunked == pytest.approx(whole, rel=1e-12, abs=0)
    # by users alone the chunk was 100 resamples: 3 x 20k x 100 doubles = 48 MB
    assert peak < 12e6


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("sorted_rows", [False, True])
def test_bootstrap_indexed_by_group_draws_exactly_as_before(seed, sorted_rows,
                                                             bootstrap_as_before):
    # the same draws, so the same interval to the last bit: rows in any order, a user with
    # several rows of one query (added), per query and page-level; rows in (query, user)
    # order (as the per-query readout fetches them, int32 codes) are used without a copy
    rng = np.random.default_rng(seed)
    n = 5_000
    users, groups = rng.integers(0, 700, n), rng.integers(0, 300, n)
    wa, wb, t = (rng.poisson(lam, n).astype(float) for lam in (0.9, 0.7, 0.2))
    if sorted_rows:
        keep = np.unique(np.c_[groups, users], axis=0, return_index=True)[1]
        users, groups = users[keep].astype(np.int32), groups[keep].astype(np.int32)
        wa, wb, t = wa[keep], wb[keep], t[keep]
        users = np.unique(users, return_inverse=True)[1].astype(np.int32)
    for g in (groups, None):
        new = bootstrap_ci(wa, wb, t, users, g, n_resamples=300, rng=seed)
        assert new == bootstrap_as_before(wa, wb, t, users, g, 300, seed)
        assert all(math.isfinite(x) for x in new)
