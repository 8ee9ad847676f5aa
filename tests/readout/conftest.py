"""Small A/B logs built here, with the per-unit sums worked out from the tables in pandas
(never through the package's SQL), for hand computations."""

import numpy as np
import pandas as pd
import pytest

import onlineeval


def make_tables(seed=0, users=None, boost=None, days=7):
    """Searches and clicks: each user has their own click probability (plus ``boost`` of
    their variant), 1 to 6 searches, 5% without results; a clicked search gets 1 or 2 clicks."""
    users = users or {"control": 80, "treatment": 80}
    boost = boost or {}
    rng = np.random.default_rng(seed)
    searches, clicks = [], []
    t0 = pd.Timestamp("2026-01-05 08:00")
    sid = uid = 0
    for variant, n in users.items():
        for _ in range(n):
            uid += 1
            p = float(np.clip(rng.beta(2, 3) + boost.get(variant, 0.0), 0.0, 1.0))
            for _ in range(int(rng.integers(1, 7))):
                sid += 1
                ts = t0 + pd.Timedelta(seconds=int(rng.integers(0, days * 86400)))
                zero = rng.random() < 0.05
                searches.append({"search_id": f"s{sid}", "user_id": f"u{uid:04d}", "ts": ts,
                                 "query": f"q{int(rng.integers(0, 8))}",
                                 "experiment": "exp1", "variant": variant,
                                 "n_results": 0 if zero else 10})
                if not zero and rng.random() < p:
                    for k in range(int(rng.integers(1, 3))):
                        clicks.append({"search_id": f"s{sid}", "rank": k + 1,
                                       "ts": ts + pd.Timedelta(seconds=3 + 30 * k),
                                       "dwell_ms": 20000.0})
    return pd.DataFrame(searches), pd.DataFrame(clicks)


def unit_sums(searches, clicks):
    """Per user: searches, clicked searches, searches with results, abandoned searches."""
    clicked = set(clicks["search_id"])
    s = searches.assign(has_click=searches["search_id"].isin(clicked).astype(float),
                        nonzero=(searches["n_results"] > 0).astype(float))
    s["abandoned"] = s["nonzero"] * (1 - s["has_click"])
    s["one"] = 1.0
    return s.groupby(["variant", "user_id"])[["one", "has_click", "nonzero", "abandoned"]].sum()


@pytest.fixture(scope="module")
def tables():
    return make_tables(seed=3, boost={"treatment": 0.08})


@pytest.fixture(scope="module")
def logs(tables):
    s, c = tables
    return onlineeval.load_logs(searches=s, clicks=c)
