"""Validity of the interleaving readout on simulated users (click model of the A/B logs).

Many repeated experiments use the fast page simulation (onlineeval.simulate.interleaving.
simulate_outcomes: same click model, no logs); the logs + SQL pipeline is run end to end on
a few experiments.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from onlineeval.interleaving import interleaving_readout
from onlineeval.interleaving.significance import bootstrap_ci, sign_test
from onlineeval.logs import load_logs
from onlineeval.simulate import make_collection, make_run, ndcg_at_k
from onlineeval.simulate.interleaving import simulate_interleaving_experiment, simulate_outcomes

ALPHA = 0.05


@pytest.fixture(scope="module")
def world():
    collection = make_collection(np.random.default_rng(11), 40, 30)
    runs = {name: make_run(collection, name, sd, np.random.default_rng(20 + i))
            for i, (name, sd) in enumerate((("good", 0.5), ("mid", 1.0), ("bad", 1.6)))}
    return collection, runs


def _wins(out: dict[str, np.ndarray], shape: tuple[int, int]) -> tuple[np.ndarray, ...]:
    a, b = out["credit_a"].reshape(shape), out["credit_b"].reshape(shape)
    return (a > b).sum(1), (b > a).sum(1), ((a == b) & (a > 0)).sum(1)


@pytest.mark.slow
@pytest.mark.parametrize("pages_per_user", [1, 4])
def test_aa_false_positive_rate_is_within_the_binomial_bound_of_alpha(world, pages_per_user):
    # pages_per_user=4: users with their own click propensity see several pages each
    collection, runs = world
    experiments, pages = 1000, 600
    out = simulate_outcomes(collection, runs["mid"], runs["mid"], experiments * pages,
                            np.random.default_rng(5), pages_per_user=pages_per_user)
    wa, wb, _ = _wins(out, (experiments, pages))
    rejected = sum(sign_test(a, b) < ALPHA for a, b in zip(wa, wb, strict=True))
    # 99.9% two-sided binomial bound around alpha for 1000 independent A/A experiments
    lo, hi = stats.binom.ppf([0.0005, 0.9995], experiments, ALPHA)
    assert lo <= rejected <= hi, rejected


@pytest.mark.slow
def test_aa_bootstrap_interval_covers_zero_at_its_level(world):
    collection, runs = world
    experiments, pages, per_user = 300, 400, 4  # 100 users, 4 correlated pages each
    out = simulate_outcomes(collection, runs["good"], runs["good"], experiments * pages,
                            np.random.default_rng(6), pages_per_user=per_user)
    a = out["credit_a"].reshape(experiments, pages)
    b = out["credit_b"].reshape(experiments, pages)
    users = np.arange(pages) // per_user
    misses = 0
    for i in range(experiments):
        lo, hi = bootstrap_ci(a[i] > b[i], b[i] > a[i], (a[i] == b[i]) & (a[i] > 0), users,
                              n_resamples=300, rng=i)
        misses += not lo <= 0.0 <= hi
    lo_n, hi_n = stats.binom.ppf([0.0005, 0.9995], experiments, ALPHA)
    assert lo_n <= misses <= hi_n, misses


def test_better_ranker_by_known_ndcg_margin_wins_significantly_through_logs(world, tmp_path):
    from onlineeval.simulate import write_logs

    collection, runs = world
    margin = ndcg_at_k(collection, runs["mid"]) - ndcg_at_k(collection, runs["bad"])
    assert margin > 0.05  # the offline margin the test relies on
    tables = simulate_interleaving_experiment(
        collection, runs, "bad", "mid", "bad_vs_mid", 400, np.random.default_rng(7))
    write_logs(tables, tmp_path)
    row = interleaving_readout(str(tmp_path), n_resamples=300).iloc[0]
    assert (row.team_a, row.team_b) == ("bad", "mid")
    assert row.winner == "mid" and row.p_value < 1e-4
    assert row.estimate < 0 and row.ci_high < 0


def test_pipeline_counts_match_an_independent_pandas_computation(world, tmp_path):
    from onlineeval.simulate import write_logs

    collection, runs = world
    tables = simulate_interleaving_experiment(
        collection, runs, "mid", "mid", "aa", 150, np.random.default_rng(8))
    write_logs(tables, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # simulated logs never have uncredited clicks
        row = interleaving_readout(load_logs(tmp_path), n_resamples=200).iloc[0]
    assert (row.team_a, row.team_b) == ("mid/control", "mid/treatment")
    res, clk = tables.results, tables.clicks
    hit = clk.drop_duplicates(["search_id", "rank"]).merge(res, on=["search_id", "rank"])
    credit = hit.groupby(["search_id", "team"]).size().unstack(fill_value=0)
    credit = credit.reindex(res["search_id"].unique(), fill_value=0)
    a, b = credit["mid/control"], credit["mid/treatment"]
    assert row.impressions == res["search_id"].nunique()
    assert row.impressions_with_clicks == clk["search_id"].nunique()
    assert (row.wins_a, row.wins_b, row.ties) == (
        int((a > b).sum()), int((b > a).sum()), int(((a == b) & (a > 0)).sum()))
    assert row.sign_test_p == pytest.approx(stats.binomtest(int((a > b).sum()),
                                                            int((a != b).sum())).pvalue)
    # the headline p: scipy's one-sample t test of the users' preferences
    user = res.drop_duplicates("search_id")[["search_id"]].merge(
        tables.searches[["search_id", "user_id"]], on="search_id").set_index("search_id")
    page = pd.DataFrame({"a": a > b, "b": b > a, "t": (a == b) & (a > 0)}).join(user)
    per_user = page.groupby("user_id")[["a", "b", "t"]].sum()
    decided = per_user.sum(axis=1)
    d_u = ((per_user["a"] + per_user["t"] / 2) / decided - 0.5)[decided > 0]
    assert row.p_value == pytest.approx(stats.ttest_1samp(d_u, 0.0).pvalue, rel=1e-10)


def test_sign_of_outcome_follows_offline_margin_on_repeated_experiments(world):
    collection, runs = world
    # a smaller margin (good vs mid) is detected with enough pages, in the right direction
    out = simulate_outcomes(collection, runs["mid"], runs["good"], 20 * 2000,
                            np.random.default_rng(9))
    wa, wb, _ = _wins(out, (20, 2000))
    p = np.array([sign_test(a, b) for a, b in zip(wa, wb, strict=True)])
    assert ndcg_at_k(collection, runs["good"]) > ndcg_at_k(collection, runs["mid"])
    assert ((p < ALPHA) & (wb > wa)).mean() >= 0.8
    assert not ((p < ALPHA) & (wa > wb)).any()


def test_fast_simulation_agrees_with_exact_click_marginals(world):
    # credit_a + credit_b = clicks, and the click rate per page matches the click model's
    # exact marginals averaged over topics (propensity 0 so the marginals are exact)
    collection, runs = world
    out = simulate_outcomes(collection, runs["good"], runs["good"], 100_000,
                            np.random.default_rng(10), propensity_sd=0.0)
    assert np.array_equal(out["credit_a"] + out["credit_b"], out["clicks"])
    from onlineeval.simulate import ClickModel

    model = ClickModel()
    exact = sum(
        p * model.click_probabilities(collection.grades(q, runs["good"].ranking(q)[:10])).sum()
        for q, p in zip(collection.qids, collection.popularity, strict=True)
    )
    se = out["clicks"].std() / np.sqrt(out["clicks"].size)
    assert abs(out["clicks"].mean() - exact) < 4 * se
    assert pd.Series(out["topic"]).nunique() > 30
