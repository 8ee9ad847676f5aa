"""Intervention harvesting: exact on known counts, covers the truth, agrees with PBM."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from onlineeval.clickmodels import fit
from onlineeval.clickmodels.harvest import harvest_from_counts, harvest_position_bias

EXAM = np.array([np.nan, 1.0, 0.6, 0.4, 0.3])


def _counts(seed: int, n_queries: int = 60, pages_per_query: int = 200) -> pd.DataFrame:
    """PBM clicks on pages of two random rankings of 4 documents per query."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_queries):
        alpha = rng.uniform(0.1, 0.9, 4)
        split = rng.binomial(pages_per_query, 0.5)
        for n_pages in (split, pages_per_query - split):
            order = rng.permutation(4)
            for r, d in enumerate(order, start=1):
                clicked = rng.binomial(n_pages, EXAM[r] * alpha[d])
                rows.append((f"q{q}", f"d{d}", r, n_pages, clicked))
    df = pd.DataFrame(rows, columns=["query", "doc_id", "rank", "shown", "clicked"])
    return df.groupby(["query", "doc_id", "rank"], as_index=False)[["shown", "clicked"]].sum()


def test_the_estimate_is_the_ratio_of_summed_ctrs_over_the_interventional_set():
    counts = pd.DataFrame({
        "query": ["a", "a", "a", "a", "b", "b", "b"],
        "doc_id": ["x", "x", "y", "y", "z", "z", "w"],
        "rank": [1, 2, 1, 3, 1, 2, 2],
        "shown": [10, 20, 4, 8, 5, 5, 7],
        "clicked": [5, 4, 2, 1, 1, 1, 3],
    })
    out = harvest_from_counts(counts, min_queries=1, n_boot=50).set_index("rank")
    # rank 2: pairs (a,x) and (b,z): (4/20 + 1/5) / (5/10 + 1/5); w was never at rank 1
    assert out.loc[2, "relative"] == pytest.approx((0.2 + 0.2) / (0.5 + 0.2))
    assert out.loc[2, "pairs"] == 2 and out.loc[2, "queries"] == 2
    assert out.loc[3, "relative"] == pytest.approx((1 / 8) / (2 / 4))
    assert out.loc[1, "relative"] == 1.0
    assert np.isnan(harvest_from_counts(counts, min_queries=3).set_index("rank")
                    .loc[3, "ci_low"])


@pytest.mark.slow
def test_the_interval_covers_the_true_bias_about_95_percent_of_the_time():
    hits = np.zeros(3)
    reps = 200
    for seed in range(reps):
        out = harvest_from_counts(_counts(seed), n_boot=400, seed=seed).set_index("rank")
        for i, k in enumerate((2, 3, 4)):
            hits[i] += out.loc[k, "ci_low"] <= EXAM[k] <= out.loc[k, "ci_high"]
    coverage = hits / reps
    # binomial sd of a 95% coverage over 200 runs is 1.5 points
    assert np.all(coverage >= 0.90) and np.all(coverage <= 0.99), coverage


def test_harvested_bias_from_logs_agrees_with_pbm(sim):
    docs = {f"q{i}": [f"d{i}_{j}" for j in range(4)] for i in range(40)}
    rng = np.random.default_rng(3)
    alpha = {(q, d): float(rng.uniform(0.1, 0.9)) for q in docs for d in docs[q]}
    params = {"alpha": alpha, "exam": dict(enumerate(EXAM[1:], start=1))}
    rankings = {q: [list(rng.permutation(ds)) for _ in range(2)] for q, ds in docs.items()}
    pages = []
    names = sorted(docs)
    for _ in range(16000):
        q = names[rng.integers(len(names))]
        shown = rankings[q][rng.integers(2)]
        pages.append((q, shown, sim.program("pbm", params, q, shown,
                                            lambda p: rng.random() < p)))
    logs = sim.load(pages)
    out = harvest_position_bias(logs, seed=1).set_index("rank")
    assert out["relative"].loc[2:4].to_numpy() == pytest.approx(EXAM[2:], abs=0.08)
    assert np.all(out["ci_low"].loc[2:4] <= EXAM[2:])
    assert np.all(out["ci_high"].loc[2:4] >= EXAM[2:])
    pbm = fit(logs, "pbm").position_bias.set_index("rank")["relative"]
    assert pbm.loc[2:4].to_numpy() == pytest.approx(out["relative"].loc[2:4].to_numpy(),
                                                    abs=0.08)


def test_cli_harvest_prints_both_estimates(sim, tmp_path, capsys):
    import json

    from onlineeval.cli import main

    rng = np.random.default_rng(0)
    docs = {f"q{i}": [f"d{i}_{j}" for j in range(3)] for i in range(10)}
    params = {"alpha": {(q, d): 0.5 for q in docs for d in docs[q]},
              "exam": {1: 1.0, 2: 0.6, 3: 0.4}}
    pages = []
    for _ in range(3000):
        q = f"q{rng.integers(10)}"
        shown = list(rng.permutation(docs[q]))
        pages.append((q, shown, sim.program("pbm", params, q, shown,
                                            lambda p: rng.random() < p)))
    d = tmp_path / "logs"
    d.mkdir()
    for name, df in sim.tables(pages).items():
        df.to_csv(d / f"{name}.csv", index=False)
    assert main(["clickmodel", "harvest", str(d), "--n-boot", "200", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert rows[1]["relative"] == pytest.approx(0.6, abs=0.1)
    assert rows[1]["pbm"] == pytest.approx(0.6, abs=0.1)
    assert rows[1]["ci_low"] < rows[1]["relative"] < rows[1]["ci_high"]
