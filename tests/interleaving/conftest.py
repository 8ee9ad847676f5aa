"""Shared hand-made interleaving logs for the interleaving tests."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from onlineeval.logs import load_logs

T0 = pd.Timestamp("2024-03-01 10:00:00")

# experiment e1, teams x and y. Page by page (hand-computed credit x/y -> outcome):
#   p1 u1 q1: results x y x y; clicks ranks 1, 3            -> 2/0 -> a (x wins)
#   p2 u1 q1: results x y x y; rank 2 clicked twice          -> 0/1 -> b; 1 repeat click
#   p3 u2 q2: results y x;     clicks ranks 1, 2             -> 1/1 -> tie
#   p4 u2 q2: results x y;     no click                      -> none, no click
#   p5 u3 q1: results x - y (rank 2 has no team); click 2    -> 0/0 -> none, clicked,
#             1 clicked result without team (reported, not credited)
#   p6 u3 q3: results x y x;   clicks 2, 3, 1 (doc_id only)  -> 2/1 -> a
#   p7 u4 q3: results x y;     click rank 1 at day 2          -> 1/0 -> a
#   p8 u4 q3: results without team (not interleaved)         -> not a page of the readout
# experiment e2 (multileaved, teams r, s, t):
#   m1 u5 q1: results r s t; clicks 1, 3 -> r/s 1/0 a, r/t 1/1 tie, s/t 0/1 b
#   m2 u6 q1: results t s;   click 2     -> r/s 0/1 b, r/t 0/0 none, s/t 1/0 a
SEARCHES = [
    ("p1", "u1", "q1", "e1", 0), ("p2", "u1", "q1", "e1", 0), ("p3", "u2", "q2", "e1", 0),
    ("p4", "u2", "q2", "e1", 0), ("p5", "u3", "q1", "e1", 0), ("p6", "u3", "q3", "e1", 0),
    ("p7", "u4", "q3", "e1", 1), ("p8", "u4", "q3", "e1", 1),
    ("m1", "u5", "q1", "e2", 0), ("m2", "u6", "q1", "e2", 0),
]
RESULTS = {
    "p1": "xyxy", "p2": "xyxy", "p3": "yx", "p4": "xy", "p5": "x-y", "p6": "xyx", "p7": "xy",
    "p8": "--", "m1": "rst", "m2": "ts",
}
CLICKS = [("p1", 1), ("p1", 3), ("p2", 2), ("p2", 2), ("p3", 1), ("p3", 2), ("p5", 2),
          ("p6", 2), ("p6", 3), ("p7", 1), ("m1", 1), ("m1", 3), ("m2", 2)]


def frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    searches = pd.DataFrame(
        [(sid, u, q, e, T0 + pd.Timedelta(days=d, minutes=i))
         for i, (sid, u, q, e, d) in enumerate(SEARCHES)],
        columns=["search_id", "user_id", "query", "experiment", "ts"],
    )
    results = pd.DataFrame(
        [(sid, r + 1, f"{sid}-d{r + 1}", None if t == "-" else t)
         for sid, teams in RESULTS.items() for r, t in enumerate(teams)],
        columns=["search_id", "rank", "doc_id", "team"],
    )
    clicks = pd.DataFrame(CLICKS, columns=["search_id", "rank"])
    clicks["doc_id"] = [f"{s}-d{r}" for s, r in CLICKS]
    clicks["rank"] = clicks["rank"].astype("Int64")
    # p6's click on rank 1 is logged with its doc_id only
    extra = pd.DataFrame({"search_id": ["p6"], "rank": pd.array([None], "Int64"),
                          "doc_id": ["p6-d1"]})
    return searches, results, pd.concat([clicks, extra], ignore_index=True)


@pytest.fixture
def hand_frames():
    """Fresh copies of the hand-made searches, results and clicks frames."""
    return frames()


@pytest.fixture
def logs():
    """The hand-made pages loaded with onlineeval.load_logs."""
    s, r, c = frames()
    return load_logs(searches=s, results=r, clicks=c)


def _raw_logs(searches: pd.DataFrame, results: pd.DataFrame, clicks: pd.DataFrame):
    """Views made directly in DuckDB, bypassing load_logs (which excludes bad clicks and fills
    a click's missing rank), so the interleaving SQL sees the rows as given;
    interleaving_readout accepts any object whose ``con`` holds the three views."""
    import types

    import duckdb

    ts = "ts" if "ts" in searches.columns else "NULL AS ts"
    con = duckdb.connect()
    for name, df, cols in (
        ("searches", searches, f"search_id, user_id, {ts}, NULL AS session_id, query, "
                               "experiment, NULL AS variant, NULL AS n_results"),
        ("results", results, "search_id, rank, doc_id, team"),
        ("clicks", clicks, "search_id, rank, doc_id, NULL AS ts, NULL AS dwell_ms"),
    ):
        con.register(f"src_{name}", df)
        con.execute(f"CREATE VIEW {name} AS SELECT {cols} FROM src_{name}")
    return types.SimpleNamespace(con=con)


@pytest.fixture(scope="session")
def raw_logs():
    """Build raw (unvalidated) log views: ``raw_logs(searches, results, clicks)``."""
    return _raw_logs



def _summary_oracle(logs, experiment=None, by=(), *, start=None, end=None) -> pd.DataFrame:
    """The interleaving outcome per experiment and team pair from the test oracle
    ``summary_oracle.sql`` (Δ_AB, share_a and the per-query Δ written in SQL, independently
    of the package), over the page outcomes of ``experiment`` in the window."""
    from pathlib import Path

    from onlineeval import queries
    from onlineeval.interleaving import outcomes

    by = outcomes.check_by(logs, by)
    outcomes.page_outcomes(logs, experiment, start=start, end=end)
    path = Path(__file__).with_name("summary_oracle.sql")
    q = queries.parse("tests/interleaving/summary_oracle", path, path.read_text("utf-8"))
    return logs.con.execute(q.render(by=by)).df()


@pytest.fixture(scope="session")
def summary_oracle():
    """``summary_oracle(logs, experiment=None, by=(), start=None, end=None)``: the SQL
    oracle's readout (see ``_summary_oracle``)."""
    return _summary_oracle


def _bootstrap_as_before(wa, wb, t, users, groups, n_resamples, rng, confidence=0.95):
    """The bootstrap as it was before the counts were indexed by group (users x groups
    matrices built from coordinates), kept to show the new one draws the same intervals."""
    from scipy import sparse

    from onlineeval.interleaving.significance import delta_ab

    users = np.asarray(users, dtype=np.int64)
    n_users = int(users.max()) + 1
    g = np.zeros_like(users) if groups is None else np.asarray(groups, dtype=np.int64)
    n_groups = int(g.max()) + 1
    counts = [sparse.csr_matrix((np.asarray(x, dtype=float), (users, g)),
                                shape=(n_users, n_groups)) for x in (wa, wb, t)]
    gen = np.random.default_rng(rng)
    chunk = max(1, min(n_resamples, 2_000_000 // max(n_users, n_groups)))
    draws = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        c = min(chunk, n_resamples - start)
        picked = gen.integers(0, n_users, size=(c, n_users))
        offsets = (np.arange(c) * n_users)[:, None]
        weights = np.bincount((picked + offsets).ravel(), minlength=c * n_users)
        weights = weights.reshape(c, n_users).astype(float)
        draws[start:start + c] = delta_ab(*[np.asarray(m.T @ weights.T).T for m in counts])
    finite = draws[np.isfinite(draws)]
    if finite.size == 0 or np.ptp(finite) == 0:
        return math.nan, math.nan
    lo, hi = np.quantile(finite, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(lo), float(hi)



@pytest.fixture(scope="session")
def bootstrap_as_before():
    """The bootstrap before the counts were indexed by group (an independent reference)."""
    return _bootstrap_as_before
