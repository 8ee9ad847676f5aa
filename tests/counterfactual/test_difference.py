"""The counterfactual Δ of two rankings on one log (``onlineeval.counterfactual.compare``):
the number and its interval against a pandas computation from the definitions, coverage
of the true Δ (from the simulation's parameters) across seeds, and the sign of the A/B
effect on the sample study."""

from __future__ import annotations

import dataclasses
import json
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import onlineeval
from onlineeval.counterfactual import compare, compare_pairs, evaluate
from onlineeval.counterfactual.difference import difference, paired_units

ROOT = Path(__file__).resolve().parents[2]
PROP = pd.DataFrame({"rank": range(1, 6), "propensity": [1.0, 0.55, 0.35, 0.25, 0.18]})


def _two(cf, seed=2):
    """A world whose pages show all 5 documents (three logging rankers) and two candidate
    rankings: the world's own and another random order."""
    a = cf.make_world(seed, rankers=3, shown=5)
    rng = np.random.default_rng(seed + 100)
    b = dataclasses.replace(a, cand=np.array([rng.permutation(a.cand.shape[1])
                                              for _ in range(len(a.cand))]))
    return a, b


def _ips_by_hand(tables, world, p):
    """Per user: the ips numerator of the candidate (sum over clicked shown candidate
    top-k documents of p(candidate rank) / p(logged rank)) and the pages."""
    t = tables["results"].merge(tables["searches"], on="search_id")
    t = t.merge(tables["clicks"].assign(clicked=1), on=["search_id", "rank"], how="left")
    t["clicked"] = t["clicked"].fillna(0)
    rank_in = {(q, d): r + 1 for q in range(len(world.cand))
               for r, d in enumerate(world.cand[q, :world.k])}
    t["cand_rank"] = [rank_in.get((q, d), 0) for q, d in zip(t["query"], t["doc_id"],
                                                             strict=True)]
    t = t[(t["cand_rank"] > 0) & (t["clicked"] == 1)]
    w = t["cand_rank"].map(p).to_numpy() / t["rank"].map(p).to_numpy()
    y = pd.Series(w, index=t["user_id"].to_numpy()).groupby(level=0).sum()
    pages = tables["searches"].groupby("user_id").size()
    return y.reindex(pages.index, fill_value=0.0), pages


def test_ips_delta_is_the_difference_of_the_definitions(cf):
    a, b = _two(cf)
    tables = a.simulate(5, users=150).tables()
    logs = onlineeval.load_logs(**tables)
    p = dict(zip(PROP["rank"], PROP["propensity"], strict=True))
    y_a, n = _ips_by_hand(tables, a, p)
    y_b, _ = _ips_by_hand(tables, b, p)
    delta = (y_b.sum() - y_a.sum()) / n.sum()
    # every page is used by both candidates: Δ is one ratio, (y_B - y_A) / pages, and its
    # delta-method se is the sd of the per-user linearisation over sqrt(users)
    z = (y_b - y_a - delta * n) / n.mean()
    se = z.std(ddof=1) / np.sqrt(len(z))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = compare(logs, a.run(), b.run(), metric=f"clicks@{a.k}", propensities=PROP,
                      max_rank=5, confidence=0.9)
        alone = evaluate(logs, b.run(), metric=f"clicks@{a.k}", propensities=PROP,
                         max_rank=5)
    r = got.result
    assert r.estimate == pytest.approx(delta, rel=1e-12)
    assert got.se == pytest.approx(se, rel=1e-9)
    zq = stats.norm.ppf(0.95)
    assert (r.ci_low, r.ci_high) == pytest.approx((delta - zq * se, delta + zq * se),
                                                  rel=1e-9)
    assert r.p_value == pytest.approx(2 * stats.norm.sf(abs(delta) / se), rel=1e-9)
    assert (r.n, r.units_control, r.units_treatment, r.unit, r.ci_level) == (
        150, 150, 150, "user_id", 0.9)
    assert got.treatment.value == pytest.approx(alone.value, rel=1e-12)
    assert got.treatment.value == pytest.approx(y_b.sum() / n.sum(), rel=1e-12)


def test_the_same_ranking_twice_is_zero_with_p_one(cf):
    a, _ = _two(cf)
    logs = onlineeval.load_logs(**a.simulate(3, users=40).tables())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = compare(logs, a.run(), a.run(), metric=f"clicks@{a.k}", propensities=PROP,
                      max_rank=5, estimator="snips")
    r = got.result
    assert (r.estimate, r.ci_low, r.ci_high, r.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_rounding_noise_between_identical_rankings_is_no_difference():
    """DuckDB sums in no fixed order: the same ranking's per-unit sums may differ in the
    last bit between two estimates. That is Δ = 0 with p = 1, not a tiny Δ with a null p."""
    y = np.array([1.0, 0.5, 0.25])
    n = np.array([2.0, 1.0, 3.0])
    v = np.c_[y, n, y, n]
    v[0, 2] = 1.0 + 1e-14  # a few ulps of the sum
    d = difference(v)
    assert (d["value"], d["se"], d["p_value"]) == (0.0, 0.0, 1.0)
    v[0, 2] = 1.01  # a real difference stays
    assert difference(v)["value"] == pytest.approx(0.01 / 6)


def test_units_with_pages_for_one_candidate_only_count_zero_on_the_other():
    """Δ = sum y_T / sum n_T − sum y_C / sum n_C over the union of units."""
    c = pd.DataFrame({"unit": [1, 2], "ips": [1.0, 2.0], "pages": [2, 3]})
    t = pd.DataFrame({"unit": [2, 3], "ips": [4.0, 1.0], "pages": [3, 1]})
    v = paired_units(c, t, "ips")
    assert v.tolist() == [[1, 2, 0, 0], [2, 3, 4, 3], [0, 0, 1, 1]]
    d = difference(v)
    assert d["value"] == pytest.approx(5 / 4 - 3 / 5)
    assert d["units"] == 3


def test_compare_pairs_rows_are_compare(cf):
    a, b = _two(cf)
    logs = onlineeval.load_logs(**a.simulate(4, users=60).tables())
    opts = dict(metric=f"clicks@{a.k}", propensities=PROP, max_rank=5, estimator="snips")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = compare_pairs(logs, {"ab": (a.run(), b.run()), "ba": (b.run(), a.run())},
                              **opts)
        one = compare(logs, a.run(), b.run(), **opts)
    assert frame["experiment"].tolist() == ["ab", "ba"]
    assert frame["estimate"].tolist() == pytest.approx([one.result.estimate,
                                                        -one.result.estimate], rel=1e-12)
    assert frame["ci_high"].iloc[0] == pytest.approx(one.result.ci_high, rel=1e-12)
    assert frame["se"].tolist() == pytest.approx([one.se, one.se], rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("estimator", ["ips", "snips"])
def test_delta_interval_covers_the_true_delta(cf, estimator):
    """400 simulated logs of position-based clicks: the 95% interval of Δ covers the true
    Δ (the two candidates' clicks@k computed from the simulation's parameters) in 92–98%
    of them, and the mean estimate is within 3 standard errors of it. The per-unit rows
    are conftest's numpy rows, which test_coverage holds equal to the package's SQL."""
    a, b = _two(cf)
    truth = b.true_value - a.true_value
    assert abs(truth) > 0.03
    found = []
    for seed in range(400):
        sim = a.simulate(seed)
        v = paired_units(a.rows(sim, estimator), b.rows(sim, estimator), estimator)
        d = difference(v)
        found.append((d["value"], d["ci_low"], d["ci_high"]))
    value, lo, hi = np.array(found).T
    cover = float(np.mean((lo <= truth) & (truth <= hi)))
    assert 0.92 <= cover <= 0.98, cover
    assert abs(value.mean() - truth) < 3 * value.std(ddof=1) / np.sqrt(len(value))


def sample_table() -> pd.DataFrame:
    study = tomllib.loads((ROOT / "sample_logs" / "study.toml").read_text())
    return pd.DataFrame([{"experiment": e["name"],
                          "control_run": str(ROOT / "sample_logs" / e["control_run"]),
                          "treatment_run": str(ROOT / "sample_logs" / e["treatment_run"])}
                         for e in study["experiment"]])


@pytest.mark.slow
def test_sample_study_counterfactual_signs_agree_with_the_ab_tests(sample_experiment_logs):
    """On the sample study, the counterfactual Δ clicks@10 of each pair, estimated (snips,
    PBM propensities) on the study's whole A/B log (nine rankers shown), has the sign of
    the A/B Δ clicks per search wherever the A/B test finds a significant effect, and is
    exactly 0 for the pair that compares a ranker with itself. The sample's clicks come
    from a cascade model, not a position-based one, so only signs are compared."""
    logs = onlineeval.load_logs(ROOT / "sample_logs" / "ab")
    table = sample_table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf = compare_pairs(logs, {r.experiment: (r.control_run, r.treatment_run)
                                  for r in table.itertuples()},
                           query="qid", estimator="snips").set_index("experiment")
        significant = 0
        for name in cf.index:
            # the A/B test reads the experiment's users' rows (the whole log's numbers)
            ab = onlineeval.abtest(sample_experiment_logs(name) / "ab",
                                   metrics=["clicks_per_search"], experiment=name)
            row = ab.iloc[0]
            if name == "s100_vs_s100":
                assert cf.loc[name, "estimate"] == 0
            if row["p_value"] < 0.05:
                significant += 1
                assert np.sign(cf.loc[name, "estimate"]) == np.sign(row["estimate"]), name
    assert significant >= 4  # 4 of the 10 pairs at this sample size


def _write_run(path, world):
    run = world.run()
    lines = [f"{q} Q0 {d} {i + 1} {s} x\n" for i, (q, d, s) in enumerate(run.itertuples(
        index=False))]
    path.write_text("".join(lines))


def test_agree_takes_the_counterfactual_delta_as_a_third_source(cf, tmp_path, capsys):
    """``onlineeval agree TABLE --counterfactual LOGS``: each experiment's Δ is compare()'s
    on the logging log, and the agreement of counterfactual with online and with offline
    deltas is scipy's on those values."""
    from onlineeval.cli import main

    a, b = _two(cf)
    tables = a.simulate(6, users=80).tables()
    logdir = tmp_path / "logs"
    logdir.mkdir()
    for name, df in tables.items():
        df.to_parquet(logdir / f"{name}.parquet", index=False)
    worlds = {"a": a, "b": b}
    rng = np.random.default_rng(1)
    for i in range(2, 5):
        worlds[f"r{i}"] = dataclasses.replace(a, cand=np.array(
            [rng.permutation(a.cand.shape[1]) for _ in range(len(a.cand))]))
    (tmp_path / "runs").mkdir()
    for name, w in worlds.items():
        _write_run(tmp_path / "runs" / f"{name}.run", w)
    pairs = [("a", "b"), ("b", "a"), ("a", "r2"), ("r3", "r4"), ("r2", "b")]
    table = pd.DataFrame({"experiment": [f"{c}_vs_{t}" for c, t in pairs],
                          "offline_delta": [0.1, -0.2, 0.05, 0.3, -0.1],
                          "online_delta": [0.02, -0.01, 0.03, -0.02, 0.01],
                          "control_run": [f"runs/{c}.run" for c, _ in pairs],
                          "treatment_run": [f"runs/{t}.run" for _, t in pairs]})
    table.to_csv(tmp_path / "t.csv", index=False)
    PROP.to_csv(tmp_path / "p.csv", index=False)
    assert main(["agree", str(tmp_path / "t.csv"), "--counterfactual", str(logdir),
                 "--propensities", str(tmp_path / "p.csv"), "--metric", f"clicks@{a.k}",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    logs = onlineeval.load_logs(logdir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [compare(logs, str(tmp_path / r.control_run), str(tmp_path / r.treatment_run),
                        metric=f"clicks@{a.k}", propensities=PROP, max_rank=10,
                        estimator="snips").result.estimate for r in table.itertuples()]
    got = [e["counterfactual_delta"] for e in out["experiments"]]
    assert got == pytest.approx(want, rel=1e-12)
    cf_on = out["pairs"]["counterfactual vs online"]
    k = stats.kendalltau(want, table["online_delta"])
    assert (cf_on["kendall_tau"], cf_on["kendall_p"]) == pytest.approx((k.statistic, k.pvalue))
    agree = int(np.sum(np.sign(want) == np.sign(table["online_delta"])))
    assert (cf_on["n_agree"], cf_on["n"]) == (agree, 5)
    off_cf = out["pairs"]["offline vs counterfactual"]
    assert off_cf["spearman_rho"] == pytest.approx(
        stats.spearmanr(table["offline_delta"], want).statistic)
    pair_rows = [r["pair"] for r in out["results"]]
    assert pair_rows == ["offline vs online"] * 3 + ["counterfactual vs online"] * 3 + [
        "offline vs counterfactual"] * 3
    # the table output says the same
    assert main(["agree", str(tmp_path / "t.csv"), "--counterfactual", str(logdir),
                 "--propensities", str(tmp_path / "p.csv"), "--metric", f"clicks@{a.k}"]) == 0
    text = capsys.readouterr().out
    assert f"counterfactual vs online: sign agreement {agree}/5" in text


def test_agree_counterfactual_needs_the_run_columns(tmp_path, capsys):
    from onlineeval.cli import main

    pd.DataFrame({"experiment": ["e"], "offline_delta": [0.1], "online_delta": [0.2]}).to_csv(
        tmp_path / "t.csv", index=False)
    assert main(["agree", str(tmp_path / "t.csv"), "--counterfactual",
                 str(ROOT / "sample_logs" / "ab")]) == 2
    err = capsys.readouterr().err
    assert "control_run" in err and len(err.strip().splitlines()) == 1
