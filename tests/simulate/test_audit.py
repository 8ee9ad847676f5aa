"""Audit: every quantitative claim about the simulator, measured independently.

Claims come from the docstrings of ``onlineeval.simulate`` (ClickModel, TrafficConfig,
make_collection, make_run, assign_variant, calibrated), ``sample_logs/README.md`` and
``sample_logs/manifest.json``. Each is re-measured here from the outputs (the committed
sample_logs files, or pages simulated with a fixed seed) with formulas written from the
documented definitions, never from the package's own helpers. Random checks are seeded and
use strict levels (p > 1e-4, |z| < 4.5), so they fail only when a claim is false.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import onlineeval
from onlineeval.simulate import ClickModel, simulate
from onlineeval.simulate.calibrated import CALIBRATED, HETEROGENEOUS

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs"
README = (SAMPLE / "README.md").read_text(encoding="utf-8")

# the documented defaults (ClickModel docstring and sample_logs/README.md)
ATTRACT = (0.05, 0.20, 0.40, 0.65, 0.85)
SATISFY = (0.0, 0.15, 0.35, 0.60, 0.85)
GAMMA = 0.8
PROPENSITY_SD = 0.8
START = pd.Timestamp("2026-01-05")
DAYS = 14
STRICT_P = 1e-4
STRICT_Z = 4.5


def _sigmoid(x: np.ndarray | float) -> np.ndarray | float:
    return 1.0 / (1.0 + np.exp(-x))


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


# -- the click model, by walking every branch of the documented process ------------------------

def _enumerate_outcomes(grades: list[int], b: float, attract: tuple = ATTRACT,
                        satisfy: tuple = SATISFY, gamma: float = GAMMA) -> dict:
    """P((clicked ranks), satisfied) for every outcome of one page, from the docstring's
    process: examine rank 1; click w.p. alpha; after a click satisfied w.p. S and stop; else
    go on w.p. gamma. Written as a tree walk, not as the product formula."""
    alpha = [float(_sigmoid(_logit(attract[g]) + b)) for g in grades]
    out: Counter = Counter()

    def walk(r: int, clicks: tuple, p: float) -> None:
        a, s, last = alpha[r], satisfy[grades[r]], r == len(grades) - 1
        for clicked, p_click in ((False, 1.0 - a), (True, a)):
            c = (*clicks, r + 1) if clicked else clicks
            q = p * p_click
            if clicked:
                out[(c, True)] += q * s
                q *= 1.0 - s
            if last:
                out[(c, False)] += q
            else:
                out[(c, False)] += q * (1.0 - gamma)
                walk(r + 1, c, q * gamma)

    walk(0, (), 1.0)
    return out


def _pattern_chi2(observed: Counter, expected: dict, n: int) -> float:
    assert set(observed) <= set(expected), set(observed) - set(expected)
    obs, exp, pooled_o, pooled_e = [], [], 0, 0.0
    for key, p in expected.items():
        if p * n >= 10:
            obs.append(observed.get(key, 0))
            exp.append(p * n)
        else:
            pooled_o += observed.get(key, 0)
            pooled_e += p * n
    if pooled_e > 0:
        obs.append(pooled_o)
        exp.append(pooled_e)
    return float(stats.chisquare(obs, exp).pvalue)


GRADES = [4, 0, 2, 1, 3, 0, 4, 2, 0, 1]


@pytest.mark.parametrize("propensity", [0.0, -1.2])
def test_click_patterns_follow_the_documented_cascade(propensity: float) -> None:
    """ClickModel docstring: the whole joint distribution of (clicked ranks, satisfied), not
    only the marginals, matches the described process; P(satisfied) and P(C_r) formulas too."""
    model = ClickModel()
    expected = _enumerate_outcomes(GRADES, propensity)
    assert math.isclose(sum(expected.values()), 1.0, abs_tol=1e-12)
    rng = np.random.default_rng(20260105)
    n = 150_000
    seen: Counter = Counter()
    for _ in range(n):
        o = model.simulate(GRADES, rng, propensity)
        seen[(tuple(c.rank for c in o.clicks), o.satisfied)] += 1
    assert _pattern_chi2(seen, expected, n) > STRICT_P
    # the docstring's closed forms equal the tree walk
    p_click = np.zeros(len(GRADES))
    for (clicks, _), p in expected.items():
        for r in clicks:
            p_click[r - 1] += p
    np.testing.assert_allclose(model.click_probabilities(GRADES, propensity), p_click,
                               atol=1e-12)
    alpha = [float(_sigmoid(_logit(ATTRACT[g]) + propensity)) for g in GRADES]
    examine = np.cumprod([1.0] + [GAMMA * (1 - a * SATISFY[g])
                                  for a, g in zip(alpha[:-1], GRADES[:-1], strict=True)])
    p_sat = sum(a * SATISFY[g] * e for a, g, e in zip(alpha, GRADES, examine, strict=True))
    assert math.isclose(p_sat, sum(p for (_, s), p in expected.items() if s), abs_tol=1e-12)


def test_batch_click_patterns_follow_the_cascade_also_on_short_lists() -> None:
    model = ClickModel()
    rng = np.random.default_rng(7)
    n = 100_000
    for grades, b in ((GRADES, 0.4), ([2, 4, 1], 0.0)):
        padded = np.tile(np.array(grades + [-1] * (10 - len(grades))), (n, 1))
        clicked, satisfied, dwell = model.simulate_batch(padded, rng, b)
        assert not clicked[:, len(grades):].any()
        assert np.isnan(dwell[~clicked]).all() and not np.isnan(dwell[clicked]).any()
        seen = Counter((tuple(int(i) + 1 for i in np.flatnonzero(c)), bool(s.any()))
                       for c, s in zip(clicked, satisfied, strict=True))
        assert _pattern_chi2(seen, _enumerate_outcomes(grades, b), n) > STRICT_P


def test_dwell_is_the_documented_log_normal_and_the_30s_shares_hold() -> None:
    """Docstring: dwell = 1000 * exp(log(median) + 0.5 Z), median 90 s (satisfying click) or
    10 s (other), capped at 1200 s; "about 99% of satisfying and about 1.4% of other clicks
    dwell at least 30 s" (README: the same)."""
    model = ClickModel()
    rng = np.random.default_rng(99)
    sat, unsat = [], []
    for _ in range(40_000):
        o = model.simulate(GRADES, rng, 0.0)
        for i, c in enumerate(o.clicks):
            (sat if o.satisfied and i == len(o.clicks) - 1 else unsat).append(c.dwell_ms)
    sat_s, unsat_s = np.array(sat) / 1000, np.array(unsat) / 1000
    assert stats.kstest(np.log(unsat_s), stats.norm(math.log(10), 0.5).cdf).pvalue > STRICT_P
    assert stats.kstest(np.log(sat_s), stats.norm(math.log(90), 0.5).cdf).pvalue > STRICT_P
    share_sat = stats.norm.sf((math.log(30) - math.log(90)) / 0.5)
    share_unsat = stats.norm.sf((math.log(30) - math.log(10)) / 0.5)
    assert round(share_sat, 2) == 0.99 and round(share_unsat, 3) == 0.014
    for share, values in ((share_sat, sat_s), (share_unsat, unsat_s)):
        k = int((values >= 30).sum())
        assert stats.binomtest(k, len(values), share).pvalue > STRICT_P
    capped = ClickModel(max_dwell_s=15.0).simulate_batch(
        np.full((2000, 10), 4), np.random.default_rng(1), 3.0)[2]
    assert np.nanmax(capped) == 15_000.0


# -- the committed sample study -----------------------------------------------------------------

@pytest.fixture(scope="module")
def sample() -> dict:
    con = duckdb.connect()
    tables = {t: con.read_parquet(str(SAMPLE / "ab" / f"{t}.parquet"))
              for t in ("searches", "results", "clicks")}
    out = {t: rel.df() for t, rel in tables.items()}
    out["types"] = {t: dict(zip(rel.columns, map(str, rel.types), strict=True))
                    for t, rel in tables.items()}
    out["manifest"] = json.loads((SAMPLE / "manifest.json").read_text(encoding="utf-8"))
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in (SAMPLE / "qrels.txt").read_text(encoding="utf-8").splitlines():
        qid, zero, doc, rel = line.split(" ")
        assert zero == "0"
        qrels[qid][doc] = int(rel)
    out["qrels"] = dict(qrels)
    runs: dict[str, dict[str, dict[str, float]]] = {}
    top10: dict[str, dict[str, list[str]]] = {}
    for name in out["manifest"]["rankers"]:
        runs[name], top10[name] = defaultdict(dict), defaultdict(list)
        for line in (SAMPLE / "runs" / f"{name}.run").read_text(encoding="utf-8").splitlines():
            qid, q0, doc, rank, score, tag = line.split(" ")
            assert q0 == "Q0" and tag == name
            runs[name][qid][doc] = float(score)
            if int(rank) <= 10:
                top10[name][qid].append(doc)
    out["runs"], out["top10"] = runs, top10
    return out


def _arm(user_id: str, salt: str, share: float = 0.5) -> str:
    digest = hashlib.sha256(f"{salt}:{user_id}".encode()).digest()
    return "treatment" if int.from_bytes(digest[:8], "big") / 2**64 < share else "control"


def test_sample_schema(sample: dict) -> None:
    """Issue 2 §2 types, 1-based contiguous ranks, n_results = shown rows, every click on a
    shown result and at most once per result, no team column on A/B pages."""
    assert sample["types"] == {
        "searches": {"search_id": "VARCHAR", "user_id": "VARCHAR", "ts": "TIMESTAMP",
                     "session_id": "VARCHAR", "query": "VARCHAR", "qid": "VARCHAR",
                     "experiment": "VARCHAR", "variant": "VARCHAR", "n_results": "INTEGER"},
        "results": {"search_id": "VARCHAR", "rank": "INTEGER", "doc_id": "VARCHAR"},
        "clicks": {"search_id": "VARCHAR", "rank": "INTEGER", "doc_id": "VARCHAR",
                   "ts": "TIMESTAMP", "dwell_ms": "BIGINT"},
    }
    s, r, c = sample["searches"], sample["results"], sample["clicks"]
    assert not s.isna().any().any() and not c.isna().any().any()
    assert s.search_id.is_unique
    # each page's ranks, in stored order, are 1, 2, ..., n
    assert (r.groupby("search_id").cumcount() + 1 == r["rank"]).all() and \
        r["rank"].max() == 10
    n_shown = r.groupby("search_id").size().reindex(s.search_id, fill_value=0)
    assert (n_shown.to_numpy() == s.n_results.to_numpy()).all()
    on_page = c.merge(r, on=["search_id", "rank", "doc_id"], how="left", indicator=True)
    assert (on_page["_merge"] == "both").all()
    assert not c.duplicated(["search_id", "rank"]).any()


def test_sample_assignment_is_the_documented_hash(sample: dict) -> None:
    """README: each experiment has its own 3,000 users ``eNN-u00000``.., split by SHA-256 of
    ``"<experiment>:<user_id>"``; the users columns of the README/manifest are these counts."""
    users = sample["searches"][["experiment", "user_id", "variant"]].drop_duplicates()
    assert not users.duplicated(["experiment", "user_id"]).any()
    mine = [_arm(u, e) for u, e in zip(users.user_id, users.experiment, strict=True)]
    assert mine == users.variant.tolist()
    for i, e in enumerate(sample["manifest"]["experiments"]):
        u = users[users.experiment == e["name"]]
        assert sorted(u.user_id) == [f"e{i + 1:02d}-u{n:05d}" for n in range(3000)]
        counts = u.variant.value_counts().to_dict()
        assert counts == e["users"]
        assert f"| {counts['control']} / {counts['treatment']} |" in README
        assert stats.binomtest(counts["treatment"], len(u), 0.5).pvalue > STRICT_P


def test_sample_totals_match_readme_and_manifest(sample: dict) -> None:
    n = {t: len(sample[t]) for t in ("searches", "results", "clicks")}
    assert {t: sample["manifest"]["logs"][t] for t in n} == n
    assert (f"In total {n['searches']:,} searches, {n['results']:,} shown results and "
            f"{n['clicks']:,} clicks") in README
    per = sample["searches"].groupby("experiment").size()
    clicks = sample["clicks"].merge(sample["searches"][["search_id", "experiment"]])
    per_c = clicks.groupby("experiment").size()
    for e in sample["manifest"]["experiments"]:
        assert (e["searches"], e["clicks"]) == (per[e["name"]], per_c[e["name"]])
    # the manifest records the parameters the other tests here measure in the logs
    m = sample["manifest"]
    assert m["seed"] == 2026 and m["users_per_experiment"] == 3000
    assert m["click_model"] == {
        "model": "dbn-cascade", "attractiveness_by_grade": list(ATTRACT),
        "satisfaction_by_grade": list(SATISFY), "continuation": GAMMA,
        "sat_dwell_median_s": 90.0, "unsat_dwell_median_s": 10.0, "dwell_sigma": 0.5,
        "max_dwell_s": 1200.0}
    traffic = {k: m["traffic"][k] for k in (
        "start", "days", "sessions_per_user", "tasks_per_session", "propensity_sd",
        "p_zero_result", "p_reformulate_after_zero", "p_reformulate", "max_reformulations",
        "k", "reaction_s", "scan_s", "think_s", "session_gap_s", "pre_days")}
    assert traffic == {
        "start": START.isoformat(), "days": DAYS, "sessions_per_user": 2.0,
        "tasks_per_session": 1.5, "propensity_sd": PROPENSITY_SD, "p_zero_result": 0.04,
        "p_reformulate_after_zero": 0.9, "p_reformulate": 0.5, "max_reformulations": 3,
        "k": 10, "reaction_s": [1.0, 3.0], "scan_s": 1.5, "think_s": [5.0, 40.0],
        "session_gap_s": 35 * 60.0, "pre_days": 0.0}


def _ndcg10(qrels: dict, run: dict) -> float:
    values = []
    for qid, judged in qrels.items():
        ranked = sorted(run[qid].items(), key=lambda t: (t[1], t[0]), reverse=True)[:10]
        dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, (d, _) in enumerate(ranked))
        ideal = sorted(judged.values(), reverse=True)[:10]
        values.append(dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal)))
    return float(np.mean(values))


def test_sample_collection_and_rankers(sample: dict) -> None:
    """Grades 0..4 drawn from (0.65, 0.17, 0.09, 0.06, 0.03), 30 per topic, every topic with
    a relevant document; score = grade + Normal(0, sd) for every judged document; NDCG@10 of
    each ranker (independent NDCG and onlineeval.evaluate) = manifest = README table; the
    margins (README: from 0.41 down to zero and one negative) follow."""
    qrels, manifest = sample["qrels"], sample["manifest"]
    assert len(qrels) == 100 and {len(v) for v in qrels.values()} == {30}
    assert all(max(v.values()) >= 1 for v in qrels.values())
    counts = Counter(g for v in qrels.values() for g in v.values())
    assert {str(g): counts[g] for g in range(5)} == manifest["collection"]["grade_counts"]
    observed = np.array([counts[g] for g in range(5)])
    probs = np.array([0.65, 0.17, 0.09, 0.06, 0.03])
    assert stats.chisquare(observed, probs * observed.sum()).pvalue > STRICT_P
    ndcg = {}
    for name, info in manifest["rankers"].items():
        run = sample["runs"][name]
        assert all(set(run[q]) == set(qrels[q]) for q in qrels)
        noise = np.array([run[q][d] - qrels[q][d] for q in qrels for d in qrels[q]])
        assert stats.kstest(noise / info["noise_sd"], "norm").pvalue > STRICT_P
        ndcg[name] = _ndcg10(qrels, run)
        theirs = onlineeval.evaluate(SAMPLE / "qrels.txt", SAMPLE / info["run"], "ndcg_cut.10")
        assert ndcg[name] == pytest.approx(float(theirs["ndcg_cut_10"].iloc[0]), abs=1e-12)
        assert ndcg[name] == pytest.approx(info["ndcg10"], abs=1e-12)
        assert f"| {name} | {info['noise_sd']} | {ndcg[name]:.4f} |" in README
    sds = sorted({info["noise_sd"] for info in manifest["rankers"].values()})
    by_sd = [[ndcg[n] for n, i in manifest["rankers"].items() if i["noise_sd"] == sd]
             for sd in sds]
    assert all(min(a) > max(b) for a, b in pairwise(by_sd))  # more noise, lower NDCG
    margins = [ndcg[e["treatment"]] - ndcg[e["control"]] for e in manifest["experiments"]]
    assert margins == pytest.approx([e["ndcg10_delta"] for e in manifest["experiments"]],
                                    abs=1e-12)
    assert round(max(margins), 2) == 0.41 and min(abs(m) for m in margins) == 0
    assert sum(m < 0 for m in margins) == 1


def test_sample_pages_are_the_arms_rankers_top10(sample: dict) -> None:
    shown = duckdb.connect().read_parquet(str(SAMPLE / "ab" / "results.parquet")).aggregate(
        "search_id, string_agg(doc_id, ',' ORDER BY rank) AS docs").df()
    pages = sample["searches"][sample["searches"].n_results > 0].merge(shown, on="search_id")
    assert len(pages) == (sample["searches"].n_results > 0).sum()
    arm = {e["name"]: e for e in sample["manifest"]["experiments"]}
    expected = [",".join(sample["top10"][arm[e][v]][q])
                for e, v, q in zip(pages.experiment, pages.variant, pages.qid, strict=True)]
    assert pages.docs.tolist() == expected


def _ordered(sample: dict) -> pd.DataFrame:
    s = sample["searches"].sort_values(["experiment", "user_id", "ts"], kind="stable")
    s = s.reset_index(drop=True)
    s["clicked"] = s.search_id.isin(sample["clicks"].search_id)
    nxt = s.groupby("session_id")[["qid", "query", "n_results", "ts"]].shift(-1)
    return s.join(nxt.add_prefix("next_"))


def test_sample_sessions_tasks_zero_results_and_reformulations(sample: dict) -> None:
    """TrafficConfig / README: 1 + Poisson(1) sessions per user; a session's first search is a
    task's first search (misspelling with n_results = 0 w.p. 0.04, else the usual text);
    reformulation after a zero-result page w.p. 0.9 and after a page without a satisfying
    click w.p. 0.5 (measured on pages without any click: certainly not satisfying); topics
    searched with probability proportional to (i + 1) ** -0.8; 1.5 tasks per session."""
    s = _ordered(sample)
    sessions = s.groupby(["experiment", "user_id"]).session_id.nunique().to_numpy()
    extra = np.minimum(sessions - 1, 5)
    pmf = stats.poisson(1).pmf(np.arange(6))
    pmf[-1] += stats.poisson(1).sf(5)
    observed = np.bincount(extra, minlength=6)
    assert observed.size == 6
    # five or more extra sessions pooled into the last cell (expected count about 110)
    assert stats.chisquare(observed, pmf * len(extra)).pvalue > STRICT_P

    first = s.groupby("session_id").head(1)
    zero_first = first.n_results == 0
    assert stats.binomtest(int(zero_first.sum()), len(first), 0.04).pvalue > STRICT_P
    zero = s.n_results == 0
    assert (s["query"].str.fullmatch(r"\S+q\S+") == zero).all()  # the misspelling: w1 q w2
    usual = first[~zero_first].groupby("qid")["query"].agg(set)
    assert (usual.map(len) == 1).all()
    usual = usual.map(lambda x: next(iter(x)))
    # a search is a task's first one when it is a misspelling or the usual text; with topics of
    # four distinct texts the usual text never comes back as a reformulation
    is_usual = s["query"] == s.qid.map(usual)
    task_first = zero | is_usual
    tasks = task_first.groupby(s.session_id).sum()
    # at most 3 reformulations per task (the one after a misspelling included)
    task_no = task_first.groupby(s.session_id).cumsum()
    assert s.groupby([s.session_id, task_no]).size().max() == 4
    assert stats.ttest_1samp(tasks, 1.5).pvalue > STRICT_P
    assert stats.binomtest(int(zero.sum()), int(task_first.sum()), 0.04).pvalue > STRICT_P
    ref_zero = zero & (s.next_qid == s.qid) & s.next_n_results.gt(0)
    assert stats.binomtest(int(ref_zero.sum()), int(zero.sum()), 0.9).pvalue > STRICT_P
    no_click_first = first[(first.n_results > 0) & ~first.clicked]
    ref = (no_click_first.next_qid == no_click_first.qid) & (
        no_click_first.next_query != no_click_first["query"])
    assert stats.binomtest(int(ref.sum()), len(ref), 0.5).pvalue > STRICT_P
    qids = sorted(sample["qrels"])
    weights = (np.arange(len(qids)) + 1.0) ** -0.8
    counts = s[task_first].qid.value_counts().reindex(qids, fill_value=0).to_numpy()
    assert stats.chisquare(counts, weights / weights.sum() * counts.sum()).pvalue > STRICT_P


def _cdf_sum_of_uniforms(t: np.ndarray) -> np.ndarray:
    """CDF of U(1, 3) + U(5, 40): a trapezoid density on [6, 43] (widths 2 and 35)."""
    t = np.asarray(t, dtype=float)
    area = 2.0 * 35.0
    return np.select(
        [t < 6, t < 8, t < 41, t < 43],
        [0.0, (t - 6) ** 2 / (2 * area), (t - 7) / 35.0, 1 - (43 - t) ** 2 / (2 * area)], 1.0)


def test_sample_timing_and_the_30_minute_rule(sample: dict) -> None:
    """First click = search + U(1, 3) s + 1.5 s per rank; a later click = previous click +
    its dwell + 1.5 s per rank further down; the next search U(5, 40) s after the last
    click's dwell; sessions derived with a 30-minute gap over searches and clicks are
    exactly session_id (gaps inside a session stay far below 30 min, between sessions at
    least 35 min)."""
    s, c = sample["searches"], sample["clicks"]
    c = c.sort_values(["search_id", "ts"]).reset_index(drop=True)
    prev = c.groupby("search_id")[["ts", "rank", "dwell_ms"]].shift(1)
    first = prev["rank"].isna()
    page_ts = c.search_id.map(s.set_index("search_id").ts)
    react = (c.ts - page_ts).dt.total_seconds()[first] - 1.5 * c["rank"][first]
    assert react.between(1.0, 3.0).all()
    assert stats.kstest(react, stats.uniform(1, 2).cdf).pvalue > STRICT_P
    later = ~first
    assert (c["rank"][later] > prev["rank"][later]).all()
    step = (c.ts - prev.ts).dt.total_seconds() - prev.dwell_ms / 1000 - 1.5 * (
        c["rank"] - prev["rank"])
    assert step[later].abs().max() < 1e-9
    o = _ordered(sample)
    last = c.groupby("search_id").tail(1).set_index("search_id")
    nxt = o.set_index("search_id").next_ts.dropna()
    both = last.join(nxt, how="inner")
    think = (both.next_ts - both.ts).dt.total_seconds() - both.dwell_ms / 1000
    assert think.between(5.0, 40.0).all()
    assert stats.kstest(think, stats.uniform(5, 35).cdf).pvalue > STRICT_P
    # no click: the next search U(1, 3) + 1.5 s x min(3, shown) + U(5, 40) s after the page
    quiet = o[~o.clicked & o.next_ts.notna()]
    wait = (quiet.next_ts - quiet.ts).dt.total_seconds() - 1.5 * np.minimum(quiet.n_results, 3)
    assert wait.between(6.0, 43.0).all()
    assert stats.kstest(wait, _cdf_sum_of_uniforms).pvalue > STRICT_P
    events = pd.concat([
        s[["experiment", "user_id", "ts", "session_id"]],
        c.merge(s[["search_id", "experiment", "user_id", "session_id"]], on="search_id")[
            ["experiment", "user_id", "ts", "session_id"]],
    ]).sort_values(["experiment", "user_id", "ts"], kind="stable")
    gap = events.groupby(["experiment", "user_id"]).ts.diff()
    derived_new = gap.isna() | (gap > pd.Timedelta(minutes=30))
    logged_new = events.session_id.ne(events.groupby(["experiment", "user_id"]).session_id.shift())
    assert (derived_new == logged_new).all()
    assert gap[logged_new].min() >= pd.Timedelta(minutes=35)
    assert gap[~logged_new].max() < pd.Timedelta(minutes=21)  # dwell cap 20 min + 40 s think


def test_sample_time_window_is_as_documented(sample: dict) -> None:
    """Sessions are planned over the 14 days from 2026-01-05; the few searches after the
    window (sessions running on, or moved later by the 35-minute rule) are stated exactly in
    sample_logs/README.md. Found by this audit: the README said only "14 days from
    2026-01-05" while 12 searches fall after 2026-01-19 00:00."""
    s, c = sample["searches"], sample["clicks"]
    end = START + pd.Timedelta(days=DAYS)
    assert s.ts.min() >= START and c.ts.min() >= START
    after = s[s.ts >= end]
    late = max(s.ts.max(), c.ts.max())
    stated = re.search(r"([\d,]+) of ([\d,]+) searches fall after (\d{4}-\d\d-\d\d) 00:00 "
                       r"\(the last event at (\d\d:\d\d)\)", " ".join(README.split()))
    assert stated is not None
    assert int(stated[1].replace(",", "")) == len(after)
    assert int(stated[2].replace(",", "")) == len(s)
    assert stated[3] == end.date().isoformat()
    assert stated[4] == late.strftime("%H:%M")
    # every session but those moved by the gap rule starts inside the window; those that
    # start later start within the moved amount (35 min + up to 1 h) of the end
    starts = s.groupby("session_id").ts.min()
    assert (starts < end + pd.Timedelta(minutes=35 + 60)).all()
    frac = ((starts - START).dt.total_seconds() / (DAYS * 86400)).clip(0, 1)
    assert stats.kstest(frac, "uniform").pvalue > STRICT_P


def _expected_clicks(grades: np.ndarray, nodes: int = 40) -> np.ndarray:
    """E_b[P(click at rank r)] for b ~ Normal(0, 0.8), rows of grades; by quadrature over b
    and the docstring's examination product."""
    # a page's expectation depends on its grades alone: compute it once per distinct row
    distinct, back = np.unique(grades, axis=0, return_inverse=True)
    return _expected_clicks_of_rows(distinct, nodes)[back.reshape(-1)]


def _expected_clicks_of_rows(grades: np.ndarray, nodes: int) -> np.ndarray:
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    logits = np.log(np.array(ATTRACT) / (1 - np.array(ATTRACT)))
    alpha = _sigmoid(logits[grades][None, :, :] + PROPENSITY_SD * x[:, None, None])
    sat = np.array(SATISFY)[grades][None, :, :]
    stay = GAMMA * (1 - alpha * sat)
    examine = np.concatenate([np.ones(stay.shape[:2] + (1,)), np.cumprod(stay, axis=2)[:, :, :-1]],
                             axis=2)
    return np.einsum("n,npr->pr", w, alpha * examine)


def test_sample_clicks_follow_the_click_model_with_user_propensity(sample: dict) -> None:
    """On the first page of each session (whose existence does not depend on the user's
    clicks) the logged clicks per rank match E_b[alpha_r P(E_r)], b ~ Normal(0, 0.8):
    a z-test per rank with users as clusters (a user's pages share b)."""
    o = _ordered(sample)
    first = o.groupby("session_id").head(1)
    first = first[first.n_results > 0]
    arm = {e["name"]: e for e in sample["manifest"]["experiments"]}
    rankers = [arm[e][v] for e, v in zip(first.experiment, first.variant, strict=True)]
    grades = np.array([[sample["qrels"][q][d] for d in sample["top10"][r][q]]
                       for r, q in zip(rankers, first.qid, strict=True)])
    expected = _expected_clicks(grades)
    clicks = sample["clicks"]
    clicks = clicks[clicks.search_id.isin(first.search_id)]
    observed = np.zeros_like(expected)
    row = pd.Series(np.arange(len(first)), index=first.search_id.to_numpy())
    observed[row[clicks.search_id].to_numpy(), clicks["rank"].to_numpy() - 1] = 1.0
    resid = pd.DataFrame(observed - expected).groupby(
        (first.experiment + "/" + first.user_id).to_numpy()).sum()
    z = resid.sum() / np.sqrt((resid**2).sum())
    assert (z.abs() < STRICT_Z).all(), z.round(2).tolist()
    total = resid.sum(axis=1)
    assert abs(total.sum() / math.sqrt((total**2).sum())) < STRICT_Z


def test_sample_readme_ctr_claim(sample: dict) -> None:
    """README: "The large margins (>= 0.18) move CTR by 10-19 points"."""
    s = sample["searches"].assign(clicked=lambda d: d.search_id.isin(sample["clicks"].search_id))
    ctr = s.groupby(["experiment", "variant"]).clicked.mean().unstack()
    points = 100 * (ctr.treatment - ctr.control)
    large = [e["name"] for e in sample["manifest"]["experiments"] if e["ndcg10_delta"] >= 0.18]
    assert "The large margins (≥ 0.18) move CTR by 10–19 points" in " ".join(README.split())
    assert len(large) == 2 and all(10 <= points[n] < 20 for n in large)
    assert points.drop(large).abs().max() < 10


# -- determinism ---------------------------------------------------------------------------------

SMALL = {"users_per_experiment": 120, "n_queries": 20, "docs_per_query": 15,
         "rankers": {"a": 0.5, "b": 2.0}}


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_byte_identical_files_other_seed_different(tmp_path: Path) -> None:
    from onlineeval.simulate import Pair

    pairs = (Pair("a", "b"), Pair("b", "b"))
    simulate(tmp_path / "one", 11, pairs=pairs, **SMALL)
    simulate(tmp_path / "two", 11, pairs=pairs, **SMALL)
    simulate(tmp_path / "other", 12, pairs=pairs, **SMALL)
    one, two, other = (_files(tmp_path / d) for d in ("one", "two", "other"))
    assert set(one) == {"qrels.txt", "manifest.json", "runs/a.run", "runs/b.run",
                        "ab/searches.parquet", "ab/results.parquet", "ab/clicks.parquet",
                        "ab/events.parquet"}
    assert one == two  # every file, Parquet included, byte for byte
    assert set(other) == set(one)
    assert all(other[name] != one[name] for name in one)


# -- calibrated.py: the default simulator's numbers quoted in its docstring -----------------------

def _page_moments(grades: np.ndarray, b: np.ndarray, attract: tuple, satisfy: tuple,
                  gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """P(click at r) (..., 10) and P(any click) (...) for one list and propensities b."""
    logits = np.log(np.array(attract) / (1 - np.array(attract)))[grades]
    alpha = _sigmoid(logits + b[..., None])
    stay = gamma * (1 - alpha * np.array(satisfy)[grades])
    examine = np.concatenate([np.ones(b.shape + (1,)), np.cumprod(stay, axis=-1)[..., :-1]],
                             axis=-1)
    # no click: the user leaves (w.p. 1 - gamma) after a run of non-clicks, or reaches the end
    skip = np.cumprod(np.concatenate([np.ones(b.shape + (1,)), (1 - alpha[..., :-1]) * gamma],
                                     axis=-1), axis=-1)
    leave = np.append(np.full(grades.size - 1, 1 - gamma), 1.0)
    none = (skip * (1 - alpha) * leave).sum(axis=-1)
    return alpha * examine, 1 - none


def _study_moments(sample: dict, ranker: str, attract: tuple, satisfy: tuple, gamma: float,
                   shift: float, query_sd: float, user_sd: float) -> tuple:
    x, w = np.polynomial.hermite_e.hermegauss(24)
    w = w / w.sum()
    u, v = np.meshgrid(x, x, indexing="ij")
    b = shift + query_sd * u + user_sd * v
    qids = sorted(sample["qrels"])
    pop = (np.arange(len(qids)) + 1.0) ** -0.8
    pop /= pop.sum()
    curve, page_ctr, topic_mean, topic_var = np.zeros(10), 0.0, [], []
    for p, q in zip(pop, qids, strict=True):
        g = np.array([sample["qrels"][q][d] for d in sample["top10"][ranker][q]])
        rank_p, any_p = _page_moments(g, b, attract, satisfy, gamma)
        curve += p * np.einsum("i,j,ijr->r", w, w, rank_p)
        per_u = any_p @ w  # E_v, per value of u
        m = float(w @ per_u)
        page_ctr += p * m
        topic_mean.append(m)
        topic_var.append(float(w @ (per_u - m) ** 2))
    between_sd = math.sqrt(np.var(topic_mean) + np.mean(topic_var))
    return page_ctr, curve, between_sd


def test_calibrated_docstring_numbers(sample: dict) -> None:
    """calibrated.py: the default simulator's page CTR is 86% (s100), its rank curve 0.664,
    0.226, 0.088, 0.049, its between-topic sd 0.106; page CTR s100 vs s200 0.861 vs 0.762
    (default) and 0.680 vs 0.637 (calibrated); the calibrated rank curve, no-click share
    0.320 and between-topic sd 0.155; HETEROGENEOUS' curve 0.452, 0.176, 0.073, 0.043.
    The published Yandex moments (and the fit) are checked in test_calibrated.py."""
    default = (ATTRACT, SATISFY, GAMMA, 0.0, 0.0, PROPENSITY_SD)
    ctr, curve, sd = _study_moments(sample, "s100", *default)
    assert round(ctr, 2) == 0.86 and round(ctr, 3) == 0.861
    assert np.round(curve[:4], 3).tolist() == [0.664, 0.226, 0.088, 0.049]
    assert round(sd, 3) == 0.106
    assert round(_study_moments(sample, "s200", *default)[0], 3) == 0.762
    cm = CALIBRATED.click_model
    c = 0.4483
    assert np.round(_sigmoid(c * np.log(np.array(ATTRACT) / (1 - np.array(ATTRACT)))), 4
                    ).tolist() == list(cm.attractiveness)
    cal = (cm.attractiveness, cm.satisfaction, cm.continuation, CALIBRATED.shift,
           CALIBRATED.query_sd, CALIBRATED.user_sd)
    ctr, curve, sd = _study_moments(sample, "s100", *cal)
    assert round(ctr, 3) == 0.680 and round(1 - ctr, 3) == 0.320 and round(sd, 3) == 0.155
    assert np.round(curve, 3).tolist() == [0.317, 0.239, 0.178, 0.141, 0.114, 0.081, 0.081,
                                           0.064, 0.052, 0.051]
    assert round(_study_moments(sample, "s200", *cal)[0], 3) == 0.637
    het = (ATTRACT, SATISFY, GAMMA, HETEROGENEOUS.shift, HETEROGENEOUS.query_sd,
           HETEROGENEOUS.user_sd)
    ctr, curve, sd = _study_moments(sample, "s100", *het)
    assert np.round(curve[:4], 3).tolist() == [0.452, 0.176, 0.073, 0.043]
    # "exact fit" to the Yandex no-click share 0.3169 and between-query sd 0.156
    assert round(1 - ctr, 4) == 0.3169 and round(sd, 3) == 0.156


def test_streams_are_the_documented_seed_sequence_children() -> None:
    """study.py: the collection comes from child 0 of SeedSequence(seed), ranker i from child
    1 + i (``spawn``), so pieces can be rebuilt one at a time."""
    from onlineeval.simulate import build_world, make_collection, make_run

    seed = 314
    collection, runs = build_world(seed, {"x": 0.7, "y": 1.9}, 12, 9)
    children = np.random.SeedSequence(seed).spawn(3)
    again = make_collection(np.random.default_rng(children[0]), 12, 9)
    assert again.qrels == collection.qrels and again.texts == collection.texts
    for i, (name, sd) in enumerate((("x", 0.7), ("y", 1.9))):
        run = make_run(again, name, sd, np.random.default_rng(children[1 + i]))
        assert run.docs == runs[name].docs and run.scores == runs[name].scores


def test_pre_period_sessions_are_the_documented_poisson_count() -> None:
    """TrafficConfig: with ``pre_days`` each user has Poisson(sessions_per_user * pre_days /
    days) extra sessions, uniform over the pre_days before start; the experiment period keeps
    its 1 + Poisson(sessions_per_user - 1) sessions."""
    from onlineeval.simulate import (
        ExperimentSpec,
        TrafficConfig,
        ab_page_builder,
        make_collection,
        make_run,
        simulate_experiment,
    )

    col = make_collection(np.random.default_rng(5), 15, 12)
    run = make_run(col, "r", 1.0, np.random.default_rng(6))
    cfg = TrafficConfig(pre_days=7.0)
    n_users = 2500
    t = simulate_experiment(col, ExperimentSpec("e", n_users), ab_page_builder({"r": run}, "r", "r"),
                            np.random.default_rng(7), traffic=cfg)
    starts = t.searches.groupby("session_id").agg(user=("user_id", "first"), ts=("ts", "min"))
    before = starts.ts < pd.Timestamp(cfg.start)
    users = pd.Index(sorted(t.searches.user_id.unique()))
    assert len(users) == n_users
    pre = starts[before].groupby("user").size().reindex(users, fill_value=0).to_numpy()
    main = starts[~before].groupby("user").size().reindex(users, fill_value=0).to_numpy()
    for counts, offset, mean in ((pre, 0, 2.0 * 7 / 14), (main, 1, 1.0)):
        k = np.minimum(counts - offset, 4)
        assert k.min() == 0
        pmf = stats.poisson(mean).pmf(np.arange(5))
        pmf[-1] += stats.poisson(mean).sf(4)
        assert stats.chisquare(np.bincount(k, minlength=5), pmf * n_users).pvalue > STRICT_P
    offset_days = (starts.ts[before] - pd.Timestamp(cfg.start)).dt.total_seconds() / 86400
    assert stats.kstest(offset_days, stats.uniform(-7, 7).cdf).pvalue > STRICT_P


def test_sample_interleaving_logs_are_team_draft_pages_with_teams(sample: dict) -> None:
    """sample_logs/interleaving/README.md: 1,000 users per pair ``iNN-u.....``, variant
    ``interleaved``, ``results.team`` = the ranker (``s100/control``, ``s100/treatment`` for
    the A/A pair), zero-result searches without results rows, and each page the team-draft
    merge of the two rankers' top 10: after every second pick both teams have as many
    results, and each pick is its team's best document not yet shown."""
    here = SAMPLE / "interleaving"
    con = duckdb.connect()
    rel = {t: con.read_parquet(str(here / f"{t}.parquet")) for t in ("searches", "results",
                                                                      "clicks")}
    assert dict(zip(rel["results"].columns, map(str, rel["results"].types), strict=True)) == {
        "search_id": "VARCHAR", "rank": "INTEGER", "doc_id": "VARCHAR", "team": "VARCHAR"}
    s, r, c = (rel[t].df() for t in ("searches", "results", "clicks"))
    assert (s.variant == "interleaved").all() and not r.team.isna().any()
    pairs = {e["name"]: e for e in sample["manifest"]["experiments"]}
    for i, name in enumerate(pairs):
        users = s[s.experiment == name].user_id.unique()
        assert sorted(users) == [f"i{i + 1:02d}-u{n:05d}" for n in range(1000)]
    assert not r.search_id.isin(s[s.n_results == 0].search_id).any()
    on_page = c.merge(r, on=["search_id", "rank", "doc_id"], how="left", indicator=True)
    assert (on_page["_merge"] == "both").all()
    # each page's documents and teams in rank order, cut from the sorted columns as plain
    # lists (a groupby(...).agg(list) and a DataFrame lookup per page cost a minute under load)
    r = r.sort_values(["search_id", "rank"])
    sids, all_docs, all_teams = r.search_id.tolist(), r.doc_id.tolist(), r.team.tolist()
    starts = [i for i in range(len(sids)) if i == 0 or sids[i] != sids[i - 1]]
    pages = [(sids[b], all_docs[b:e], all_teams[b:e])
             for b, e in zip(starts, [*starts[1:], len(sids)], strict=True)]
    assert len(pages) == r.search_id.nunique()
    meta = dict(zip(s.search_id, zip(s.experiment, s.qid, s.n_results, strict=True),
                    strict=True))
    for sid, docs, teams in pages:
        exp, qid, n = meta[sid]
        assert len(docs) == n == 10 and len(set(docs)) == 10
        e = pairs[exp]
        a, b = e["control"], e["treatment"]
        names = (a, b) if a != b else (f"{a}/control", f"{b}/treatment")
        lists = dict(zip(names, (sample["top10"][a][qid], sample["top10"][b][qid]),
                         strict=True))
        for j, (doc, team) in enumerate(zip(docs, teams, strict=True)):
            assert doc == next(d for d in lists[team] if d not in docs[:j])
            if j % 2 == 1:
                assert teams[: j + 1].count(names[0]) == (j + 1) // 2


def test_sample_interleaving_clicks_follow_the_same_click_model(sample: dict) -> None:
    """interleaving/README.md: "Clicks follow the same DBN-style cascade click model as the
    A/B logs" — per rank on each session's first page, users as clusters (as above)."""
    con = duckdb.connect()
    here = SAMPLE / "interleaving"
    s = con.read_parquet(str(here / "searches.parquet")).df().sort_values(
        ["user_id", "ts"], kind="stable")
    first = s.groupby("session_id").head(1)
    first = first[first.n_results > 0].reset_index(drop=True)
    shown = con.read_parquet(str(here / "results.parquet")).df()
    shown = shown[shown.search_id.isin(first.search_id)]
    doc = shown.pivot(index="search_id", columns="rank", values="doc_id").loc[first.search_id]
    grades = np.array([[sample["qrels"][q][d] for d in row]
                       for q, row in zip(first.qid, doc.to_numpy(), strict=True)])
    expected = _expected_clicks(grades)
    clicks = con.read_parquet(str(here / "clicks.parquet")).df()
    clicks = clicks[clicks.search_id.isin(first.search_id)]
    observed = np.zeros_like(expected)
    row = pd.Series(np.arange(len(first)), index=first.search_id.to_numpy())
    observed[row[clicks.search_id].to_numpy(), clicks["rank"].to_numpy() - 1] = 1.0
    resid = pd.DataFrame(observed - expected).groupby(first.user_id.to_numpy()).sum()
    z = resid.sum() / np.sqrt((resid**2).sum())
    assert (z.abs() < STRICT_Z).all(), z.round(2).tolist()


def test_pairs_may_be_given_as_name_tuples_and_bad_ones_are_named(tmp_path):
    from onlineeval.errors import InvalidParameterError
    from onlineeval.simulate.study import Pair, as_pairs

    assert as_pairs([("b", "a"), Pair("c", "d")]) == (Pair("b", "a"), Pair("c", "d"))
    for bad in (["b:a"], [("b", "a", "c")], [("b", 1)], "b:a"):
        with pytest.raises(InvalidParameterError, match="pair"):
            as_pairs(bad)
    manifest = onlineeval.simulate(tmp_path / "s", seed=1, users_per_experiment=5,
                                   n_queries=3, docs_per_query=4, pairs=[("s100", "s040")])
    assert [e["name"] for e in manifest["experiments"]] == ["s100_vs_s040"]
