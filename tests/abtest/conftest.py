"""Shared fixtures: small hand-built click logs and one simulated A/A population."""

import numpy as np
import pandas as pd
import pytest

import onlineeval


def make_tables(seed=0, users=None, start="2024-01-01", days=14, click_boost=None,
                experiment=None):
    """A small log: users with their own click propensity; every search has 10 results.

    ``users`` maps variant -> number of users; ``click_boost`` maps variant -> added click
    probability. Returns (searches, clicks) DataFrames.
    """
    users = users or {"control": 150, "treatment": 150}
    click_boost = click_boost or {}
    rng = np.random.default_rng(seed)
    searches, clicks = [], []
    sid = 0
    uid = 0
    t0 = pd.Timestamp(start)
    for variant, n in users.items():
        for _ in range(n):
            uid += 1
            p = min(1.0, rng.beta(2, 5) + click_boost.get(variant, 0.0))
            for _ in range(int(rng.poisson(3)) + 1):
                sid += 1
                ts = t0 + pd.Timedelta(seconds=int(rng.integers(0, days * 86400)))
                zero = rng.random() < 0.05
                searches.append({
                    "search_id": f"s{sid}", "user_id": f"u{uid}", "ts": ts,
                    "query": f"q{int(rng.integers(0, 20))}", "experiment": experiment,
                    "variant": variant, "n_results": 0 if zero else 10,
                })
                if not zero and rng.random() < p:
                    for k in range(int(rng.integers(1, 3))):
                        clicks.append({
                            "search_id": f"s{sid}", "rank": int(rng.integers(1, 11)),
                            "ts": ts + pd.Timedelta(seconds=5 + 60 * k),
                            "dwell_ms": float(rng.integers(1000, 90000)),
                        })
    s = pd.DataFrame(searches)
    if experiment is None:
        s = s.drop(columns="experiment")
    return s, pd.DataFrame(clicks)


def make_logs(**kwargs):
    s, c = make_tables(**kwargs)
    return onlineeval.load_logs(searches=s, clicks=c)


@pytest.fixture(name="make_tables")
def _make_tables_fixture():
    return make_tables


@pytest.fixture(name="make_logs")
def _make_logs_fixture():
    return make_logs


@pytest.fixture(scope="module")
def small_logs():
    return make_logs(seed=1)


@pytest.fixture(scope="session")
def aa_population():
    """Per-unit arrays of one simulated population (users differ in click propensity)."""
    from onlineeval.abtest.units import load_units
    from onlineeval.simulate import (
        ExperimentSpec,
        TrafficConfig,
        ab_page_builder,
        make_collection,
        make_run,
        simulate_experiment,
    )

    rng = np.random.default_rng(2024)
    col = make_collection(rng, n_queries=30, docs_per_query=20)
    run = make_run(col, "r", 0.5, rng)
    tables = simulate_experiment(
        col, ExperimentSpec("aa", 2000), ab_page_builder({"r": run}, "r", "r"), rng,
        traffic=TrafficConfig(sessions_per_user=3.0, propensity_sd=1.5),
    )
    logs = onlineeval.load_logs(searches=tables.searches, results=tables.results,
                                clicks=tables.clicks)
    data = load_units(logs)
    return data, np.concatenate(list(data.arms.values()))
