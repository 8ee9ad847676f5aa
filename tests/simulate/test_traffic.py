"""Simulated traffic: hash assignment, sessions, timestamps, zero-result pages, reformulations."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.simulate import (
    ExperimentSpec,
    TrafficConfig,
    ab_page_builder,
    assign_variant,
    make_collection,
    make_run,
    simulate_experiment,
)


def _independent_arm(user: str, salt: str, share: float) -> str:
    hexdigest = hashlib.sha256((salt + ":" + user).encode("utf-8")).hexdigest()
    return "treatment" if int(hexdigest[:16], 16) < share * 16**16 else "control"


def test_assignment_is_the_documented_hash_and_about_half() -> None:
    users = [f"user{i}" for i in range(20_000)]
    arms = [assign_variant(u, "exp-1") for u in users]
    assert arms == [_independent_arm(u, "exp-1", 0.5) for u in users]
    assert arms == [assign_variant(u, "exp-1") for u in users]  # stable
    n_t = arms.count("treatment")
    assert stats.binomtest(n_t, len(users), 0.5).pvalue > 0.001
    # another salt: an independent split (agreement about half)
    other = [assign_variant(u, "exp-2") for u in users]
    same = sum(a == b for a, b in zip(arms, other, strict=True))
    assert stats.binomtest(same, len(users), 0.5).pvalue > 0.001
    shares = [assign_variant(u, "s", 0.2) for u in users]
    assert shares == [_independent_arm(u, "s", 0.2) for u in users]
    assert stats.binomtest(shares.count("treatment"), len(users), 0.2).pvalue > 0.001
    with pytest.raises(InvalidParameterError):
        assign_variant("u", "s", 1.5)


@pytest.fixture(scope="module")
def world():
    col = make_collection(np.random.default_rng(0), 30, 20)
    runs = {"good": make_run(col, "good", 0.3, np.random.default_rng(1)),
            "bad": make_run(col, "bad", 2.5, np.random.default_rng(2))}
    spec = ExperimentSpec("bad_vs_good", 600)
    cfg = TrafficConfig(p_zero_result=0.08)
    tables = simulate_experiment(col, spec, ab_page_builder(runs, "bad", "good"),
                                 np.random.default_rng(3), traffic=cfg, id_prefix="t-")
    return col, runs, spec, cfg, tables


def test_tables_are_consistent(world) -> None:
    col, runs, spec, cfg, t = world
    s, r, c = t.searches, t.results, t.clicks
    assert s["search_id"].is_unique and len(s) > 600
    assert set(s["experiment"]) == {"bad_vs_good"}
    assert s["user_id"].nunique() == 600
    # the served list is the assigned ranker's top 10
    ranker = {"control": runs["bad"], "treatment": runs["good"]}
    shown = r.groupby("search_id")["doc_id"].apply(list)
    for row in s.itertuples():
        if row.n_results:
            assert shown[row.search_id] == ranker[row.variant].ranking(row.qid)[:10]
            assert row.query in col.texts[row.qid]
        else:
            assert row.search_id not in shown.index
            assert row.query == col.misspelling[row.qid]
    merged = c.merge(r, on=["search_id", "rank"], suffixes=("", "_shown"))
    assert len(merged) == len(c) and (merged["doc_id"] == merged["doc_id_shown"]).all()
    assert r["team"].isna().all()
    # each user in one arm, the arm of the documented hash
    arms = s.groupby("user_id")["variant"].agg(set)
    assert all(len(a) == 1 for a in arms)
    assert all(next(iter(a)) == assign_variant(u, spec.name) for u, a in arms.items())


def test_zero_result_searches_and_reformulations(world) -> None:
    _, _, _, _, t = world
    s = t.searches.sort_values(["user_id", "ts"])
    zero = s[s["n_results"] == 0]
    assert 0.04 < len(zero) / len(s) < 0.12
    assert not t.clicks["search_id"].isin(zero["search_id"]).any()
    nxt = s.groupby("user_id").shift(-1)
    same_topic = (nxt["qid"] == s["qid"]) & (nxt["session_id"] == s["session_id"])
    reformulated = same_topic & (nxt["query"] != s["query"])
    assert reformulated.sum() > 0.05 * len(s)
    # after a zero-result page most users retry the same topic with a real query
    assert reformulated[s["n_results"] == 0].mean() > 0.8
    # pages with a satisfying (long) click are reformulated less often than abandoned ones
    clicked = s["search_id"].isin(t.clicks["search_id"])
    long_click = s["search_id"].isin(t.clicks.loc[t.clicks["dwell_ms"] >= 30_000, "search_id"])
    abandoned = (s["n_results"] > 0) & ~clicked
    assert reformulated[abandoned].mean() > reformulated[long_click].mean() + 0.2


def test_timestamps_and_sessions(world) -> None:
    _, _, _, _, t = world
    s, c = t.searches, t.clicks
    with_search = c.merge(s[["search_id", "user_id", "ts"]], on="search_id",
                          suffixes=("", "_search"))
    assert (with_search["ts"] > with_search["ts_search"]).all()
    # click times lie before the user's next search
    order = s.sort_values(["user_id", "ts"])
    order["next_ts"] = order.groupby("user_id")["ts"].shift(-1)
    chk = with_search.merge(order[["search_id", "next_ts"]], on="search_id")
    later = chk["next_ts"].notna()
    assert (chk.loc[later, "ts"] < chk.loc[later, "next_ts"]).all()
    # sessions derived independently with the 30-minute rule equal session_id
    events = pd.concat([
        s[["user_id", "ts", "session_id"]],
        with_search[["user_id", "ts"]].assign(session_id=None),
    ]).sort_values(["user_id", "ts"], kind="stable")
    gap = events.groupby("user_id")["ts"].diff()
    new = gap.isna() | (gap > timedelta(minutes=30))
    events["derived"] = new.cumsum()
    pairs = events.dropna(subset=["session_id"])[["session_id", "derived"]].drop_duplicates()
    assert pairs["session_id"].is_unique and pairs["derived"].is_unique
    assert 1.5 < s.groupby("user_id")["session_id"].nunique().mean() < 2.5
    assert (c["dwell_ms"] > 0).all()
    assert t.searches["ts"].min() >= pd.Timestamp("2026-01-05")
    assert t.searches["ts"].max() < pd.Timestamp("2026-01-05") + pd.Timedelta(days=15)


def test_users_differ_in_click_propensity() -> None:
    """Per-user CTR is over-dispersed relative to binomial when propensity_sd > 0."""
    col = make_collection(np.random.default_rng(0), 30, 20)
    run = make_run(col, "r", 1.0, np.random.default_rng(1))
    builder = ab_page_builder({"r": run}, "r", "r")

    def dispersion(sd: float) -> float:
        cfg = TrafficConfig(propensity_sd=sd, sessions_per_user=4.0, p_zero_result=0.0)
        t = simulate_experiment(col, ExperimentSpec("aa", 500), builder,
                                np.random.default_rng(5), traffic=cfg)
        s = t.searches.assign(clicked=t.searches["search_id"].isin(t.clicks["search_id"]))
        per = s.groupby("user_id")["clicked"].agg(["sum", "count"])
        p = per["sum"].sum() / per["count"].sum()
        # Pearson chi-square / dof: about 1 for binomial users
        chi = (((per["sum"] - per["count"] * p) ** 2) / (per["count"] * p * (1 - p))).sum()
        return chi / (len(per) - 1)

    with_effect, without = dispersion(1.5), dispersion(0.0)
    assert with_effect > 1.5, with_effect
    assert 0.8 < without < 1.2, without


def test_same_rng_same_traffic(world) -> None:
    col, runs, spec, cfg, t = world
    again = simulate_experiment(col, spec, ab_page_builder(runs, "bad", "good"),
                                np.random.default_rng(3), traffic=cfg, id_prefix="t-")
    pd.testing.assert_frame_equal(t.searches, again.searches)
    pd.testing.assert_frame_equal(t.clicks, again.clicks)
    pd.testing.assert_frame_equal(t.results, again.results)


def test_custom_assign_and_teams() -> None:
    col = make_collection(np.random.default_rng(0), 5, 10)

    def builder(variant: str, qid: str, rng: np.random.Generator):
        docs = sorted(col.qrels[qid])[:4]
        return docs, ["A", "B", "A", "B"]

    t = simulate_experiment(col, ExperimentSpec("il", 20), builder, np.random.default_rng(0),
                            assign=lambda user: "interleaved")
    assert set(t.searches["variant"]) == {"interleaved"}
    assert set(t.results["team"]) == {"A", "B"}


def test_bad_configuration() -> None:
    with pytest.raises(InvalidParameterError):
        TrafficConfig(p_reformulate=2.0)
    with pytest.raises(InvalidParameterError):
        TrafficConfig(sessions_per_user=0.5)
    col = make_collection(np.random.default_rng(0), 5, 10)
    run = make_run(col, "r", 1.0, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="unknown ranker 'x'"):
        ab_page_builder({"r": run}, "r", "x")


def test_logged_clicks_follow_the_click_model_with_a_known_shift() -> None:
    """Per rank, logged clicks match the model's probabilities for the pages actually shown.

    With no user random effect, the expected number of clicks at rank r over a set of pages is
    the sum over those pages of P(click r | grades shown, shift of the variant).
    """
    from onlineeval.simulate import ClickModel

    col = make_collection(np.random.default_rng(0), 30, 20)
    run = make_run(col, "r", 1.0, np.random.default_rng(1))
    cfg = TrafficConfig(propensity_sd=0.0)
    shift = {"treatment": 0.7}
    t = simulate_experiment(col, ExperimentSpec("aa", 1500), ab_page_builder({"r": run}, "r", "r"),
                            np.random.default_rng(2), traffic=cfg, propensity_shift=shift)
    model = ClickModel()
    s = t.searches[t.searches["n_results"] > 0]
    shown = t.results.groupby("search_id")["doc_id"].apply(list)
    clicks = t.clicks.groupby(["search_id", "rank"]).size()
    for variant in ("control", "treatment"):
        pages = s[s["variant"] == variant]
        expected = np.zeros(10)
        observed = np.zeros(10)
        var = np.zeros(10)
        for row in pages.itertuples():
            p = model.click_probabilities(col.grades(row.qid, shown[row.search_id]),
                                          shift.get(variant, 0.0))
            expected += p
            var += p * (1 - p)
            for r in range(10):
                observed[r] += clicks.get((row.search_id, r + 1), 0)
        assert np.all(np.abs(observed - expected) <= 4.5 * np.sqrt(var)), (variant, observed,
                                                                           expected)
    ctr = s.assign(c=s["search_id"].isin(t.clicks["search_id"])).groupby("variant")["c"].mean()
    assert ctr["treatment"] > ctr["control"] + 0.03


def test_pre_period_is_served_the_control_experience() -> None:
    col = make_collection(np.random.default_rng(0), 10, 20)
    good = make_run(col, "good", 0.2, np.random.default_rng(1))
    bad = make_run(col, "bad", 3.0, np.random.default_rng(2))
    cfg = TrafficConfig(pre_days=7.0)
    t = simulate_experiment(col, ExperimentSpec("e", 300), ab_page_builder(
        {"good": good, "bad": bad}, "bad", "good"), np.random.default_rng(3), traffic=cfg)
    s = t.searches[t.searches["n_results"] > 0]
    start = pd.Timestamp(cfg.start)
    pre = s[s["ts"] < start]
    assert len(pre) > 0.25 * len(s[s["ts"] >= start])
    assert pre["ts"].min() >= start - pd.Timedelta(days=7)
    first = t.results[t.results["rank"] == 1].set_index("search_id")["doc_id"]
    for row in s.itertuples():
        session_start = s.loc[s["session_id"] == row.session_id, "ts"].min()
        ranker = good if (row.variant == "treatment" and session_start >= start) else bad
        assert first[row.search_id] == ranker.ranking(row.qid)[0]
    # pre-period sessions are not exposures: no experiment, no variant on their searches;
    # every experiment-period search carries both
    starts = s.groupby("session_id")["ts"].transform("min")
    assert pre["variant"].isna().all() and pre["experiment"].isna().all()
    assert (s["variant"].isna() == (starts < start)).all()
    assert set(s.loc[starts >= start, "variant"]) == {"control", "treatment"}
    # without a pre-period nothing is drawn differently
    base = simulate_experiment(col, ExperimentSpec("e", 50), ab_page_builder(
        {"good": good, "bad": bad}, "bad", "good"), np.random.default_rng(3))
    same = simulate_experiment(col, ExperimentSpec("e", 50), ab_page_builder(
        {"good": good, "bad": bad}, "bad", "good"), np.random.default_rng(3),
        traffic=TrafficConfig(pre_days=0.0), propensity_shift={})
    pd.testing.assert_frame_equal(base.clicks, same.clicks)


def test_ab_builder_rejects_other_variants() -> None:
    col = make_collection(np.random.default_rng(0), 5, 10)
    run = make_run(col, "r", 1.0, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="control and treatment"):
        simulate_experiment(col, ExperimentSpec("x", 3), ab_page_builder({"r": run}, "r", "r"),
                            np.random.default_rng(0), assign=lambda user: "interleaved")
