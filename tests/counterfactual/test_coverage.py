"""Across seeds, each estimator's interval covers the candidate's true clicks@k (computed
from the simulation's parameters) about 95% of the time where the theory says it is
unbiased, and the estimators are biased where it says they are.

The per-unit sums of the replicates come from the numpy implementation in conftest, which
``test_numpy_rows_are_the_sql_rows`` holds equal to the package's SQL; the interval is the
package's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

REPS = 400


def _numeric(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.drop(columns="unit").astype(float).reset_index(drop=True)


@pytest.mark.parametrize("estimator,setup", [
    ("ips", {}), ("ips", {"clip": 1.5}), ("snips", {}), ("snips", {"p": "flat"}),
    ("dr", {}), ("dr", {"clip": 1.5}), ("dr", {"model": "right"}),
    ("dr", {"model": "wrong", "clip": 1.5}), ("dr", {"model": "wrong", "p": "flat"}),
])
def test_numpy_rows_are_the_sql_rows(cf, estimator, setup):
    world = cf.make_world(1, rankers=3, shown=3)
    p = np.r_[np.nan, np.ones(5)] if setup.get("p") == "flat" else cf.EXAM
    model = {"right": world.model(), "wrong": world.model(alpha=world.alpha[::-1]),
             None: None}[setup.get("model")]
    for seed in range(2):
        sim = world.simulate(seed, users=60)
        ours = world.rows(sim, estimator, p=p, model=model, clip=setup.get("clip"))
        sql = cf.sql_rows(sim, world, estimator, p=p, model=model, clip=setup.get("clip"))
        assert sql["unit"].tolist() == ours["unit"].tolist()
        got, want = _numeric(sql[ours.columns]), _numeric(ours)
        pd.testing.assert_frame_equal(got, want, rtol=1e-12, atol=1e-12)


def _runs(cf, world, estimators, reps=REPS):
    out = {name: [] for name in estimators}
    for seed in range(reps):
        sim = world.simulate(seed)
        for name, (est, kw) in estimators.items():
            res = cf.estimate(world.rows(sim, est, **kw), est)
            out[name].append((res["value"], res["ci_low"], res["ci_high"]))
    return {k: np.array(v) for k, v in out.items()}


def _check(runs, truth):
    value, lo, hi = runs.T
    cover = float(np.mean((lo <= truth) & (truth <= hi)))
    assert 0.92 <= cover <= 0.98, cover
    # unbiased: the mean of the estimates is within 3 standard errors of the truth
    assert abs(value.mean() - truth) < 3 * value.std(ddof=1) / np.sqrt(len(value))
    return value.var(ddof=1)


@pytest.mark.slow
def test_ips_and_snips_cover_when_the_logged_rank_varies(cf):
    """Three logging rankers, every document shown: ips and snips are both unbiased;
    snips, which weighs a page by its examination instead of its inverse, varies less."""
    world = cf.make_world(2, rankers=3, shown=5)
    runs = _runs(cf, world, {"ips": ("ips", {}), "snips": ("snips", {})})
    var_ips = _check(runs["ips"], world.true_value)
    var_sn = _check(runs["snips"], world.true_value)
    assert var_sn / var_ips < 0.9, var_sn / var_ips


@pytest.mark.slow
def test_snips_and_dr_cover_when_pages_show_part_of_the_candidate(cf):
    """Three rankers, each page shows 3 of 5 documents: a candidate document is missing
    from some pages. ips counts those slots 0 and is biased low; snips (every pair was shown
    on some page), dr with the right click model and dr with the log's own model (whose
    estimation noise is in the interval) are unbiased and cover."""
    world = cf.make_world(1, rankers=3, shown=3)
    runs = _runs(cf, world, {"snips": ("snips", {}), "dr": ("dr", {"model": world.model()}),
                             "dr_own": ("dr", {}), "ips": ("ips", {})})
    for name in ("snips", "dr", "dr_own"):
        _check(runs[name], world.true_value)
    ips = runs["ips"][:, 0]
    assert ips.mean() < world.true_value - 10 * ips.std(ddof=1) / np.sqrt(len(ips))


@pytest.mark.slow
def test_ips_covers_when_logging_is_deterministic_and_snips_equals_it(cf):
    world = cf.make_world(0)
    runs = _runs(cf, world, {"ips": ("ips", {}), "snips": ("snips", {})})
    _check(runs["ips"], world.true_value)
    # one logged ranking per query: the examination mass of a pair is its pages times one
    # propensity, and snips is ips
    np.testing.assert_allclose(runs["snips"], runs["ips"], rtol=1e-12)
    # propensities saying there is no position bias: clicks counted as they came, biased
    flat = _runs(cf, world, {"ips": ("ips", {"p": np.r_[np.nan, np.ones(5)]})}, 40)["ips"]
    value = flat[:, 0]
    assert abs(value.mean() - world.true_value) > 6 * value.std(ddof=1) / np.sqrt(40)


def _supported_truth(cf, world, sim):
    """The candidate's clicks@k per page counting only the (query, doc) pairs some page of
    the query showed: what snips estimates without bias given the pages' layouts."""
    n_q, n_d = world.alpha.shape
    seen = np.zeros((n_q, n_d), bool)
    seen[np.repeat(sim.query, sim.layout.shape[1]), sim.layout.ravel()] = True
    q = sim.query[:, None]
    top = world.cand[sim.query, :world.k]
    return float((cf.EXAM[1:world.k + 1] * world.alpha[q, top] * seen[q, top]).sum(1).mean())


@pytest.mark.slow
def test_snips_is_biased_in_small_logs_and_consistent(cf):
    """snips is a ratio per (query, doc): given the pages' layouts its rates are unbiased, but
    a pair no page showed counts 0, so a small log is biased low by exactly those pairs;
    the bias and the error vanish as the log grows."""
    world = cf.make_world(1, rankers=3, shown=3)
    small, supported = [], []
    for seed in range(REPS):
        sim = world.simulate(seed, users=6, max_pages=4)
        small.append(cf.estimate(world.rows(sim, "snips"), "snips")["value"])
        supported.append(_supported_truth(cf, world, sim))
    small, supported = np.array(small), np.array(supported)
    gap = small - supported
    # biased low, by the pairs the small logs did not show, and by nothing else
    assert supported.mean() < world.true_value - 0.05
    assert small.mean() < world.true_value - 5 * small.std(ddof=1) / np.sqrt(REPS)
    assert abs(gap.mean()) < 3 * gap.std(ddof=1) / np.sqrt(REPS)
    large = np.array([cf.estimate(world.rows(world.simulate(seed, users=1200), "snips"),
                                  "snips")["value"] for seed in range(100)])
    assert abs(large.mean() - world.true_value) < 3 * large.std(ddof=1) / 10
    rmse = [np.sqrt(np.mean((v - world.true_value) ** 2)) for v in (small, large)]
    assert rmse[1] < rmse[0] / 8, rmse
