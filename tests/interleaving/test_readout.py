"""interleaving_readout on hand-computed logs (pages of tests/interleaving/test_outcomes.py)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving import FIELDS, interleaving_readout, preference_matrix
from onlineeval.logs import load_logs


def test_readout_fields_and_hand_numbers(logs):
    with pytest.warns(UserWarning, match="1 clicked results on interleaved pages have no team"):
        out = interleaving_readout(logs, "e1", n_resamples=200)
    assert list(out.columns[: len(FIELDS)]) == list(FIELDS)
    row = out.iloc[0]
    assert (row.experiment, row.team_a, row.team_b) == ("e1", "x", "y")
    assert (row.impressions, row.impressions_with_clicks) == (7, 6)
    assert (row.wins_a, row.wins_b, row.ties) == (3, 1, 1)
    assert row.estimate == pytest.approx(3.5 / 5 - 0.5)
    assert row.share_a == pytest.approx(0.75)
    # secondary, pages as independent: exact two-sided binomial, 3 of 4: 2 * P(X >= 3)
    assert row.sign_test_p == pytest.approx(10 / 16)
    # headline, users as units. Per user (conftest): u1 a, b -> 0; u2 tie -> 0; u3 a -> 0.5;
    # u4 a -> 0.5. Mean 0.25, sd sqrt(1/12), se sqrt(1/12) / 2: t = sqrt(3), 3 df
    assert row.user_delta == pytest.approx(0.25)
    assert row.df == 3 and row.n == 4
    assert row.p_value == pytest.approx(2 * stats.t.sf(math.sqrt(3), 3), rel=1e-12)
    half = stats.t.isf(0.025, 3) * math.sqrt(1 / 12) / 2
    assert (row.user_ci_low, row.user_ci_high) == pytest.approx((0.25 - half, 0.25 + half))
    assert row.test == "t test of per-user preference (users as units)"
    assert row.winner is None
    assert row.ci_low <= row.estimate <= row.ci_high
    assert (row.users, row.clicks_without_team, row.repeat_clicks) == (4, 1, 1)


def test_readout_agrees_with_summary_sql(logs, summary_oracle):

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = interleaving_readout(logs, n_resamples=50).set_index(
            ["experiment", "team_a", "team_b"])
    sql = summary_oracle(logs).set_index(["experiment", "team_a", "team_b"])
    sql = sql.loc[out.index]
    for col in ("impressions", "impressions_with_clicks", "wins_a", "wins_b", "ties"):
        assert list(out[col]) == list(sql[col])
    assert np.allclose(out.estimate, sql.delta_ab, equal_nan=True)
    assert np.allclose(out.share_a, sql.share_a.astype(float), equal_nan=True)


def test_per_query_variant(logs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = interleaving_readout(logs, "e1", per_query=True, n_resamples=100).iloc[0]
    assert row.estimate == pytest.approx(0.5 / 3)  # q1 0, q2 0, q3 0.5
    assert row.share_a == pytest.approx(0.75)  # q1 1/2, q3 1; q2 has no win
    assert row.sign_test_p == pytest.approx(1.0)  # 1 query for A, 0 for B
    # the per-user test is the same as without per_query (users' pages over all queries)
    assert row.p_value == pytest.approx(2 * stats.t.sf(math.sqrt(3), 3), rel=1e-12)
    assert row.queries_decided == 3 and row.method == "per_query"
    assert (row.wins_a, row.wins_b, row.ties) == (3, 1, 1)  # counts stay page counts


def test_team_a_argument_flips_the_pair(logs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = interleaving_readout(logs, "e1", team_a="y", n_resamples=100).iloc[0]
        ref = interleaving_readout(logs, "e1", n_resamples=100).iloc[0]
    assert (row.team_a, row.team_b, row.wins_a, row.wins_b) == ("y", "x", 1, 3)
    assert row.estimate == pytest.approx(-ref.estimate)
    assert row.share_a == pytest.approx(1 - ref.share_a)
    # same bootstrap draws whichever team is A: the interval is mirrored
    assert (row.ci_low, row.ci_high) == pytest.approx((-ref.ci_high, -ref.ci_low))
    with pytest.raises(InvalidParameterError, match="not a team"):
        interleaving_readout(logs, "e1", team_a="zzz")


def test_significant_winner_is_named():
    # 30 users, each with one page won by y and none by x. Every user's preference is -0.5,
    # so the t test is 0/0; the exact sign test over users gives p = 2 / 2**30. The
    # bootstrap interval would have zero width (every resample -0.5): null, not certainty.
    n = 30
    s = pd.DataFrame({"search_id": [f"s{i}" for i in range(n)],
                      "user_id": [f"u{i}" for i in range(n)], "experiment": "e"})
    r = pd.DataFrame({"search_id": np.repeat(s.search_id, 2), "rank": [1, 2] * n,
                      "doc_id": ["d1", "d2"] * n, "team": ["x", "y"] * n})
    c = pd.DataFrame({"search_id": s.search_id, "rank": 2})
    row = interleaving_readout(load_logs(searches=s, results=r, clicks=c), n_resamples=100)
    row = row.iloc[0]
    assert row.p_value == pytest.approx(2 * 0.5**30)
    assert row.winner == "y" and row.estimate == -0.5 and row.user_delta == -0.5
    assert row.test.startswith("exact sign test over users")
    assert all(math.isnan(v) for v in (row.ci_low, row.ci_high, row.user_ci_low,
                                       row.user_ci_high, row.df))


def test_multileave_preference_matrix(logs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = interleaving_readout(logs, "e2", n_resamples=50)
    assert list(zip(out.team_a, out.team_b, strict=True)) == [("r", "s"), ("r", "t"), ("s", "t")]
    assert list(out.wins_a) == [1, 0, 1] and list(out.wins_b) == [1, 0, 1]
    assert list(out.ties) == [0, 1, 0]
    m = preference_matrix(out)
    assert list(m.index) == ["r", "s", "t"] and list(m.columns) == ["r", "s", "t"]
    hand = pd.DataFrame({"experiment": "e", "team_a": ["a", "a", "b"],
                         "team_b": ["b", "c", "c"], "estimate": [0.1, -0.2, 0.3]})
    mh = preference_matrix(hand)
    # "delta_ab", the column's former name, still names it
    pd.testing.assert_frame_equal(preference_matrix(hand, "delta_ab"), mh)
    assert mh.loc["a", "b"] == 0.1 and mh.loc["b", "a"] == -0.1
    assert mh.loc["c", "a"] == pytest.approx(0.2) and mh.loc["b", "c"] == 0.3
    assert all(math.isnan(mh.loc[t, t]) for t in "abc")
    with pytest.raises(InvalidParameterError, match="one experiment"):
        preference_matrix(pd.concat([hand, hand.assign(experiment="f")]))


def test_readout_is_reproducible_and_independent_of_other_experiments(logs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        all_ = interleaving_readout(logs, n_resamples=300, seed=4)
        one = interleaving_readout(logs, "e1", n_resamples=300, seed=4)
    row = all_[all_.experiment == "e1"].iloc[0]
    assert (row.ci_low, row.ci_high) == (one.iloc[0].ci_low, one.iloc[0].ci_high)


def test_bad_parameters_are_clear_errors(logs):
    with pytest.raises(InvalidParameterError, match="alpha"):
        interleaving_readout(logs, alpha=1.5)
    with pytest.raises(InvalidParameterError, match="n_resamples"):
        interleaving_readout(logs, n_resamples=0)
    with pytest.raises(InvalidParameterError, match="seed"):
        interleaving_readout(logs, seed=-1)
    with pytest.raises(InvalidParameterError, match="logs must be"):
        interleaving_readout(42)


def test_log_without_any_click_gives_undefined_statistics(hand_frames):
    s, r, c = hand_frames
    row = interleaving_readout(load_logs(searches=s, results=r, clicks=c.iloc[0:0]), "e1",
                               n_resamples=20).iloc[0]
    assert (row.impressions, row.impressions_with_clicks, row.wins_a, row.wins_b) == (7, 0, 0, 0)
    assert all(math.isnan(v) for v in (row.estimate, row.share_a, row.p_value, row.ci_low,
                                       row.ci_high, row.user_delta, row.sign_test_p))
    assert row.winner is None and row.test == "undefined: no decided page"


def _random_log(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    n = 600
    s = pd.DataFrame({"search_id": [f"s{i}" for i in range(n)],
                      "user_id": [f"u{u}" for u in rng.integers(0, 150, n)],
                      "query": [f"q{q}" for q in rng.integers(0, 8, n)], "experiment": "e"})
    r = pd.DataFrame({"search_id": np.repeat(s.search_id, 2), "rank": [1, 2] * n,
                      "doc_id": ["d1", "d2"] * n, "team": ["x", "y"] * n})
    c = pd.DataFrame({"search_id": s.search_id, "rank": rng.integers(1, 3, n)})
    return s, r, c[rng.random(n) < 0.7]


@pytest.mark.parametrize("per_query", [False, True])
def test_seeded_readout_does_not_depend_on_the_row_order_of_the_log(per_query):
    # the bootstrap numbers users in the order the per-user rows arrive; that order must be
    # fixed, or the same seed gives another CI from run to run (it did before user_stats
    # sorted its rows)
    s, r, c = _random_log(5)
    ref = interleaving_readout(load_logs(searches=s, results=r, clicks=c), seed=3,
                               per_query=per_query, n_resamples=300)
    for perm in range(3):
        rng = np.random.default_rng(perm)
        shuffled = [df.iloc[rng.permutation(len(df))] for df in (s, r, c)]
        out = interleaving_readout(load_logs(searches=shuffled[0], results=shuffled[1],
                                             clicks=shuffled[2]),
                                   seed=3, per_query=per_query, n_resamples=300)
        pd.testing.assert_frame_equal(out, ref)


def test_readout_ci_is_a_user_bootstrap_of_the_raw_pages():
    # an independent computation from the page table: users sorted by id (the readout's
    # order), resampled with the comparison's own generator, R draws of U users each
    from onlineeval.interleaving._random import derived_generator

    s, r, c = _random_log(6)
    row = interleaving_readout(load_logs(searches=s, results=r, clicks=c), seed=9,
                               n_resamples=400).iloc[0]
    clicked = c.drop_duplicates(["search_id", "rank"])
    page = s.set_index("search_id")[["user_id"]].assign(
        a=clicked[clicked["rank"] == 1].set_index("search_id").reindex(s.search_id)["rank"]
        .notna().to_numpy(),
        b=clicked[clicked["rank"] == 2].set_index("search_id").reindex(s.search_id)["rank"]
        .notna().to_numpy())
    per_user = pd.DataFrame({
        "user_id": page.user_id, "wa": page.a & ~page.b, "wb": page.b & ~page.a,
        "t": page.a & page.b}).groupby("user_id").sum().sort_index()
    arr = per_user.to_numpy(dtype=float)
    gen = derived_generator(9, ("e", "x", "y"))
    draws = []
    for _ in range(400):
        wa, wb, t = arr[gen.integers(0, len(arr), len(arr))].sum(axis=0)
        draws.append((wa + t / 2) / (wa + wb + t) - 0.5)
    lo, hi = np.quantile(draws, [0.025, 0.975])
    assert (row.ci_low, row.ci_high) == pytest.approx((lo, hi), abs=1e-12)
    assert row.users == len(arr)


def _heavy_user_log():
    # issue 12: 20 ordinary users with one decided page each, 10 won by x and 10 by y, and
    # one heavy user (a bot, a tester) with 300 pages, 285 won by x and 15 by y
    pages = [(f"u{i}", "x" if i % 2 else "y") for i in range(20)]
    pages += [("heavy", "x")] * 285 + [("heavy", "y")] * 15
    s = pd.DataFrame({"search_id": [f"s{i}" for i in range(len(pages))],
                      "user_id": [u for u, _ in pages], "experiment": "e"})
    r = pd.DataFrame({"search_id": np.repeat(s.search_id, 2), "rank": [1, 2] * len(pages),
                      "doc_id": ["d1", "d2"] * len(pages), "team": ["x", "y"] * len(pages)})
    c = pd.DataFrame({"search_id": s.search_id, "rank": [1 if w == "x" else 2 for _, w in pages]})
    return s, r, c


def test_one_heavy_user_does_not_make_a_winner():
    s, r, c = _heavy_user_log()
    with pytest.warns(UserWarning, match=r"one user \('heavy'\) has 94% of the decided pages "
                                         r"\(effective number of users 1\.\d of 21\)"):
        row = interleaving_readout(load_logs(searches=s, results=r, clicks=c),
                                   n_resamples=500).iloc[0]
    # pages pooled say x by a mile: Δ_AB = 295/320 - 0.5, sign test p = 1e-59 (the old
    # headline, with "x" as the winner) -- but that is one user's taste
    assert row.estimate == pytest.approx(295 / 320 - 0.5)
    assert row.sign_test_p == pytest.approx(stats.binomtest(295, 320).pvalue, rel=1e-9)
    assert row.sign_test_p < 1e-50
    # the verdict: no significant difference, from the users' preferences, computed here
    # independently from the raw pages with scipy
    page_winner = c.set_index("search_id")["rank"].map({1: 0.5, 2: -0.5})
    d_u = page_winner.groupby(s.set_index("search_id")["user_id"]).mean()
    ref = stats.ttest_1samp(d_u, 0.0)
    assert row.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert row.p_value == pytest.approx(0.849, abs=1e-3) and row.winner is None  # README
    assert row.user_delta == pytest.approx(d_u.mean())
    assert row.df == 20 and row.n == 21
    assert row.top_user == "heavy" and row.top_user_share == pytest.approx(300 / 320)
    assert row.heavy_user
    assert row.effective_users == pytest.approx(320**2 / (300**2 + 20))
    # the user-resampling interval of Δ_AB reaches 0 (resamples without the heavy user)
    assert row.ci_low <= 0.0 < row.ci_high


def test_heavy_user_threshold_is_five_percent_or_twice_an_equal_share():
    # 100 users: one with 6 decided pages of 105 (5.7%) is warned about; with 4 of 103
    # (3.9%) it is not. 10 users of one page and one of 2: 2/11 < 2 * (1/11), no warning.
    def log(heavy, users):
        pages = [(f"u{i}", "x" if i % 2 else "y") for i in range(users)]
        pages += [("h", "x" if k % 2 else "y") for k in range(heavy)]
        s = pd.DataFrame({"search_id": [f"s{i}" for i in range(len(pages))],
                          "user_id": [u for u, _ in pages], "experiment": "e"})
        r = pd.DataFrame({"search_id": np.repeat(s.search_id, 2), "rank": [1, 2] * len(pages),
                          "doc_id": ["d1", "d2"] * len(pages),
                          "team": ["x", "y"] * len(pages)})
        c = pd.DataFrame({"search_id": s.search_id,
                          "rank": [1 if w == "x" else 2 for _, w in pages]})
        return load_logs(searches=s, results=r, clicks=c)

    with pytest.warns(UserWarning, match=r"one user \('h'\) has 6% of the decided pages"):
        assert interleaving_readout(log(6, 99), n_resamples=20).heavy_user.iloc[0]
    for heavy, users in ((4, 99), (2, 10)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert not interleaving_readout(log(heavy, users), n_resamples=20).heavy_user.iloc[0]
