"""The calibrated click traffic: its measurements of the Yandex sample, its fit, its simulation.

Reference values are computed here independently from the Yandex WSCD slice in
tests/data/yandex_wscd/ (5,000 real pages of 7 queries; a regex parse, not the module's
parser) and from the click model's own exact marginals (ClickModel.click_probabilities).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from onlineeval.errors import InputError, InvalidParameterError
from onlineeval.simulate import ClickModel
from onlineeval.simulate.calibrated import (
    CALIBRATED,
    DEFAULT_TRAFFIC,
    HETEROGENEOUS,
    YANDEX_WSCD,
    CalibratedTraffic,
    PageLists,
    calibrated_ab_log,
    expected_moments,
    fit,
    parse_wscd,
    simulate_pages,
    study_world,
    wscd_moments,
)

ROOT = Path(__file__).resolve().parents[2]
SLICE = ROOT / "tests" / "data" / "yandex_wscd" / "testSample.head5000"


@pytest.fixture(scope="module")
def slice_pages() -> dict[str, np.ndarray]:
    """The slice parsed by a regex over the whole text: per page the query, whether any
    click was logged, and which of ranks 1..10 were clicked (repeat clicks once)."""
    text = SLICE.read_text(encoding="utf-8")
    recs = re.findall(r"(\S+)\t([0-9,]+)\s*:([^;]*)", text)
    qs, anyc, ranks = [], [], []
    for q, docs, clicks in recs:
        shown = docs.split(",")
        clicked = set(re.findall(r"[0-9]+", clicks))
        qs.append(q)
        anyc.append(bool(clicked))
        ranks.append([d in clicked for d in shown])
    return {"query": np.array(qs), "any": np.array(anyc), "ranks": np.array(ranks)}


@pytest.fixture(scope="module")
def world() -> tuple:
    manifest = json.loads((ROOT / "sample_logs" / "manifest.json").read_text())
    return study_world(manifest)


def _per_query(pages: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    _, inv = np.unique(pages["query"], return_inverse=True)
    return np.bincount(inv), inv


def test_slice_measurements_match_an_independent_count(slice_pages: dict) -> None:
    m = wscd_moments([SLICE.read_text(encoding="utf-8")])
    assert m.pages == len(slice_pages["any"]) == 5000
    # PROVENANCE.md: the slice has 1,540 pages without a click
    assert round(m.no_click_share * m.pages) == 1540
    assert m.no_click_share == pytest.approx(1 - slice_pages["any"].mean(), abs=1e-12)
    np.testing.assert_allclose(m.position_ctr, slice_pages["ranks"].mean(0), atol=1e-12)
    n, inv = _per_query(slice_pages)
    assert m.queries == n.size == 7
    p = np.bincount(inv, slice_pages["any"]) / n
    # variance of per-query CTR minus the binomial part: E[p^(1-p^)] = p(1-p)(n-1)/n
    noise = sum(pq * (1 - pq) / (nq - 1) for pq, nq in zip(p, n, strict=True)) / n.size
    assert m.between_query_var == pytest.approx(np.var(p, ddof=1) - noise, abs=1e-12)
    assert m.query_ctr_mean == pytest.approx(p.mean(), abs=1e-12)


def test_parse_errors_and_edge_cases() -> None:
    assert parse_wscd("1_0\ta,b : ;  ;\n 2_0\tc,d : c , x") == [
        ("1_0", ["a", "b"], []), ("2_0", ["c", "d"], ["c", "x"])]
    with pytest.raises(InputError, match="record 2"):
        parse_wscd("1_0\ta,b : a; garbage without tab", "f.txt")
    with pytest.raises(InputError, match="two queries"):
        wscd_moments(["1_0\ta,b : a; 1_0\ta,b :"])


def test_exact_marginals_agree_with_the_click_model(world: tuple) -> None:
    collection, runs = world
    # with no heterogeneity and no user effect, rank CTR is the popularity-weighted mean of
    # ClickModel.click_probabilities (the repo's own exact marginals)
    flat = CalibratedTraffic(CALIBRATED.click_model, shift=0.3, query_sd=0.0, user_sd=0.0)
    m = expected_moments(flat, collection, runs["s100"])
    want = sum(p * CALIBRATED.click_model.click_probabilities(
        collection.grades(q, runs["s100"].ranking(q)[:10]), 0.3)
        for q, p in zip(collection.qids, collection.popularity, strict=True))
    np.testing.assert_allclose(m.position_ctr, want, atol=1e-12)


def _slice_cluster_se(pages: dict, y: np.ndarray) -> tuple[float, float]:
    """Page-weighted mean of y and its standard error with queries as clusters."""
    n, inv = _per_query(pages)
    s = np.bincount(inv, y)
    r = s.sum() / n.sum()
    q = n.size
    return r, float(np.sqrt(q / (q - 1) * np.sum((s - r * n) ** 2)) / n.sum())


def test_calibrated_moments_within_the_slices_sampling_error(slice_pages: dict,
                                                             world: tuple) -> None:
    collection, runs = world
    model = expected_moments(CALIBRATED, collection, runs["s100"])
    default = expected_moments(DEFAULT_TRAFFIC, collection, runs["s100"])
    bad_default = 0
    for r in range(10):
        mean, se = _slice_cluster_se(slice_pages, slice_pages["ranks"][:, r].astype(float))
        assert abs(model.position_ctr[r] - mean) < 3 * se, (r, model.position_ctr[r], mean, se)
        bad_default += abs(default.position_ctr[r] - mean) >= 3 * se
    assert bad_default >= 2  # the check can fail: the default model's rank curve does
    mean, se = _slice_cluster_se(slice_pages, (~slice_pages["any"]).astype(float))
    assert abs(model.no_click_share - mean) < 3 * se
    # between-query variance: 95% chi-square interval of the 7 per-query CTRs' variance
    # (normal per-query CTRs; the binomial part, ~1e-4, is negligible at this width)
    n, inv = _per_query(slice_pages)
    p = np.bincount(inv, slice_pages["any"]) / n
    df = n.size - 1
    s2 = np.var(p, ddof=1)
    lo, hi = df * s2 / stats.chi2.isf(0.025, df), df * s2 / stats.chi2.isf(0.975, df)
    assert lo < model.between_query_var < hi
    assert not lo < default.between_query_var < hi  # too homogeneous


def test_calibrated_moments_match_the_full_sample_fit(world: tuple) -> None:
    collection, runs = world
    model = expected_moments(CALIBRATED, collection, runs["s100"])
    np.testing.assert_allclose(model.position_ctr, YANDEX_WSCD.position_ctr, atol=0.012)
    assert model.no_click_share == pytest.approx(YANDEX_WSCD.no_click_share, abs=0.005)
    assert model.between_query_sd == pytest.approx(YANDEX_WSCD.between_query_sd, abs=0.005)
    het = expected_moments(HETEROGENEOUS, collection, runs["s100"])
    assert het.no_click_share == pytest.approx(YANDEX_WSCD.no_click_share, abs=2e-4)
    assert het.between_query_sd == pytest.approx(YANDEX_WSCD.between_query_sd, abs=2e-4)


def test_fit_reproduces_the_published_constants(world: tuple) -> None:
    collection, runs = world
    got, res = fit(YANDEX_WSCD, collection, runs["s100"])
    assert np.abs(res).max() < 0.012
    assert got.shift == pytest.approx(CALIBRATED.shift, abs=1e-3)
    assert got.query_sd == pytest.approx(CALIBRATED.query_sd, abs=1e-3)
    np.testing.assert_allclose(got.click_model.attractiveness,
                               CALIBRATED.click_model.attractiveness, atol=1e-3)
    np.testing.assert_allclose(got.click_model.satisfaction,
                               CALIBRATED.click_model.satisfaction, atol=1e-3)
    assert got.click_model.continuation == pytest.approx(
        CALIBRATED.click_model.continuation, abs=1e-3)
    with pytest.raises(InvalidParameterError, match="unknown"):
        fit(YANDEX_WSCD, collection, runs["s100"], free=("gamma",))
    with pytest.raises(InvalidParameterError, match="free parameters"):
        fit(YANDEX_WSCD, collection, runs["s100"], free=("shift", "query_sd"),
            use=("no_click_share",))


def test_simulated_pages_reproduce_the_model_within_sampling_error(world: tuple) -> None:
    collection, runs = world
    rng = np.random.default_rng(7)
    lists = PageLists.ranker(collection, runs["s100"])
    u = CALIBRATED.topic_effects(len(collection.qids), rng)
    # stratified: the realised effects are exactly the Normal(0, query_sd) quantiles
    assert np.sort(u) == pytest.approx(np.sort(
        stats.norm.ppf((np.arange(100) + 0.5) / 100) * CALIBRATED.query_sd))
    n = 200_000
    uniform = np.full(len(collection.qids), 1 / len(collection.qids))
    sim = simulate_pages(lists, uniform, u, np.arange(n) // 4, CALIBRATED, rng)
    y = sim["clicks"] > 0
    k = np.bincount(sim["topic"], y, 100)
    m = np.bincount(sim["topic"], None, 100)
    p_hat = k / m
    # exact CTR of each topic given its realised effect (quadrature over the user effect)
    z, w = np.polynomial.hermite_e.hermegauss(40)
    w = w / w.sum()
    p_exact = np.empty(100)
    for t, q in enumerate(collection.qids):
        g = collection.grades(q, runs["s100"].ranking(q)[:10])
        cm = CALIBRATED.click_model
        probs = [1 - _no_click_brute(cm, g, CALIBRATED.shift + u[t] + CALIBRATED.user_sd * x)
                 for x in z]
        p_exact[t] = float(np.dot(w, probs))
    se = np.sqrt(p_exact * (1 - p_exact) / m)
    assert np.abs(p_hat - p_exact).max() < 4.5 * se.max()  # 100 topics: Bonferroni-ish
    var_hat = np.var(p_hat, ddof=1) - np.mean(p_hat * (1 - p_hat) / (m - 1))
    var_exact = np.var(p_exact, ddof=1)
    assert var_hat == pytest.approx(var_exact, abs=0.002)
    # the realised world's spread is the model's up to which topic got which effect
    model = expected_moments(CALIBRATED, collection, runs["s100"])
    assert var_exact == pytest.approx(model.between_query_var, abs=0.004)


def _no_click_brute(cm: ClickModel, grades: list[int], b: float) -> float:
    """P(no click) by summing over where the user leaves (independent of the module's
    closed form): she examines rank 1, never clicks, and leaves after rank r."""
    a = cm.alpha(grades, b)
    g = cm.continuation
    total, reach = 0.0, 1.0
    for r in range(len(grades)):
        reach *= 1 - a[r]  # examined rank r+1 and did not click
        last = r == len(grades) - 1
        total += reach * (1.0 if last else 1 - g)
        reach *= g
    return total


def test_team_draft_lists_and_credit(world: tuple) -> None:
    collection, runs = world
    lists = PageLists.team_draft(collection, runs["s100"], runs["s200"])
    for p, a in zip(lists.probs, lists.is_a, strict=True):
        assert p.sum() == pytest.approx(1.0)
        assert (np.abs(a.sum(1) - 5) <= 1).all()  # team-draft: 5 picks each for k = 10
    rng = np.random.default_rng(3)
    sim = simulate_pages(lists, collection.popularity, np.zeros(100), np.arange(5000) // 2,
                         CALIBRATED, rng)
    assert (sim["credit_a"] + sim["credit_b"] == sim["clicks"]).all()
    with pytest.raises(InvalidParameterError):
        CalibratedTraffic(query_sd=-1.0)


def test_calibrated_ab_log_is_consistent_and_clicks_like_the_model(world: tuple) -> None:
    """The A/B log of the calibrated traffic: users in the arm assign_variant gives them,
    every page showing its arm's top 10 for its query, every click on a shown result, times
    inside the days; its no-click share near the model's (0.320; the default simulator's
    pages get a click 86% of the time)."""
    from onlineeval.simulate.traffic import assign_variant

    collection, runs = world
    arms = {"control": runs["s100"], "treatment": runs["s060"]}
    log = calibrated_ab_log(collection, arms, CALIBRATED, 3000, 7, np.random.default_rng(3),
                            experiment="e")
    s, r, c = log.searches, log.results, log.clicks
    assert s["search_id"].is_unique and (s["experiment"] == "e").all()
    want = ["treatment" if assign_variant(u, "e") == "treatment" else "control"
            for u in s["user_id"]]
    assert list(s["variant"]) == want
    assert s.groupby("user_id")["variant"].nunique().max() == 1
    assert s["ts"].min() >= pd.Timestamp("2026-01-05")
    assert s["ts"].max() < pd.Timestamp("2026-01-12")
    top = pd.DataFrame([(v, q, i + 1, d) for v, run in arms.items()
                        for q in collection.qids for i, d in enumerate(run.ranking(q)[:10])],
                       columns=["variant", "query", "rank", "want"])
    shown = r.merge(s, on="search_id").merge(top, on=["variant", "query", "rank"])
    assert len(shown) == len(r) == 10 * len(s) and (shown["doc_id"] == shown["want"]).all()
    hit = c.merge(r, on=["search_id", "rank"], suffixes=("", "_shown"))
    assert len(hit) == len(c) and (hit["doc_id"] == hit["doc_id_shown"]).all()
    assert not c.duplicated(["search_id", "rank"]).any()
    no_click = 1 - s["search_id"].isin(c["search_id"]).mean()
    model = expected_moments(CALIBRATED, collection, runs["s100"]).no_click_share
    # which topic gets which effect is drawn per log, so a log's share moves by a few points
    assert abs(no_click - model) < 0.05
