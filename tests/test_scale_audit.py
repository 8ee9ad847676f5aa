"""Scale audit: what each user-facing path pulls out of DuckDB into Python.

Logs larger than memory must be aggregated in DuckDB; only results that are small by
construction (per group, per rank, per top-n query, per metric) or per randomization unit
(the A/B readout and the interleaving readout need one row per unit for their bootstraps)
may come back to Python. These tests load a small log whose searches far outnumber its users,
wrap the connection so every fetch into Python is counted, and check the largest fetch
against a bound computed from the log's own shape (groups, ranks, units), never against the
number of search, result or click rows. ``bench/scale_audit.py`` measures the same paths on
10M searches under a memory limit.

They also pin the memory controls of :func:`onlineeval.db.connect` (the only ones a CLI user
has: the environment variables ``ONLINEEVAL_MEMORY_LIMIT`` and ``ONLINEEVAL_THREADS``).
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.abtest.metrics import UNIT_SUMS
from onlineeval.errors import InputError, InvalidParameterError
from onlineeval.stats.moments import Moments, ratio

USERS = 40
SEARCHES_PER_USER = 30
RANKS = 10


class _Result:
    """A DuckDB result (connection after execute, or relation) whose fetches are counted."""

    def __init__(self, inner: Any, log: list[int]) -> None:
        self._inner = inner
        self._log = log

    def _count(self, out: Any) -> Any:
        if isinstance(out, pd.DataFrame | list):
            self._log.append(len(out))
        elif isinstance(out, dict):  # fetchnumpy
            self._log.append(max((len(v) for v in out.values()), default=0))
        elif out is not None and hasattr(out, "num_rows"):  # arrow
            self._log.append(out.num_rows)
        elif isinstance(out, tuple):  # fetchone
            self._log.append(1)
        return out

    def df(self, *a: Any, **k: Any) -> Any:
        return self._count(self._inner.df(*a, **k))

    fetchdf = df

    def fetchall(self) -> Any:
        return self._count(self._inner.fetchall())

    def fetchone(self) -> Any:
        return self._count(self._inner.fetchone())

    def fetchmany(self, *a: Any) -> Any:
        return self._count(self._inner.fetchmany(*a))

    def fetchnumpy(self) -> Any:
        return self._count(self._inner.fetchnumpy())

    def arrow(self, *a: Any, **k: Any) -> Any:
        return self._count(self._inner.arrow(*a, **k))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class CountingConnection:
    """Delegates to a DuckDB connection; ``fetched`` holds the rows of every fetch."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con
        self.fetched: list[int] = []

    def execute(self, *a: Any, **k: Any) -> _Result:
        return _Result(self._con.execute(*a, **k), self.fetched)

    def sql(self, *a: Any, **k: Any) -> _Result:
        return _Result(self._con.sql(*a, **k), self.fetched)

    query = sql

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def _tables(team: bool = False) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(7)
    n = USERS * SEARCHES_PER_USER
    users = np.repeat([f"u{i:03d}" for i in range(USERS)], SEARCHES_PER_USER)
    ts = pd.Timestamp("2024-03-01") + pd.to_timedelta(rng.integers(0, 6 * 86400, n), unit="s")
    sid = [f"s{i:05d}" for i in range(n)]
    searches = pd.DataFrame({
        "search_id": sid, "user_id": users, "ts": ts,
        "query": [f"q{j}" for j in rng.integers(0, 60, n)],
        "experiment": "e1",
        # randomised by user
        "variant": np.where(np.repeat(np.arange(USERS) % 2, SEARCHES_PER_USER) == 0,
                            "control", "treatment"),
    })
    results = pd.DataFrame({
        "search_id": np.repeat(sid, RANKS),
        "rank": np.tile(np.arange(1, RANKS + 1), n),
        "doc_id": [f"d{j}" for j in rng.integers(0, 500, n * RANKS)],
    })
    if team:
        first = rng.integers(0, 2, n)
        results["team"] = np.where((np.tile(np.arange(RANKS), n) + np.repeat(first, RANKS)) % 2,
                                   "A", "B")
    clicked = rng.random(n) < 0.6
    rank = rng.integers(1, RANKS + 1, n)
    clicks = pd.DataFrame({
        "search_id": np.asarray(sid)[clicked], "rank": rank[clicked],
        "ts": ts[clicked] + pd.to_timedelta(rng.integers(1, 60, clicked.sum()), unit="s"),
        "dwell_ms": rng.integers(1000, 90000, clicked.sum()).astype(float),
    })
    clicks = clicks.merge(results[["search_id", "rank", "doc_id"]], on=["search_id", "rank"])
    return searches, results, clicks


def _logs(team: bool = False) -> tuple[Any, CountingConnection]:
    s, r, c = _tables(team)
    logs = onlineeval.load_logs(searches=s, results=r, clicks=c)
    counting = CountingConnection(logs.con)
    logs.con = counting
    return logs, counting


def test_log_shape_makes_per_row_pulls_visible() -> None:
    # the bounds below are only meaningful if rows far outnumber units and groups
    s, r, c = _tables()
    assert len(s) == USERS * SEARCHES_PER_USER >= 20 * USERS
    assert len(r) == len(s) * RANKS
    assert len(c) > 10 * USERS


def test_counting_connection_sees_a_per_row_pull() -> None:
    # the guard itself can fail: a plain per-row fetch is counted at its full size
    logs, con = _logs()
    logs.con.sql("SELECT * FROM results").df()
    logs.con.execute("SELECT * FROM searches").fetchall()
    assert con.fetched == [USERS * SEARCHES_PER_USER * RANKS, USERS * SEARCHES_PER_USER]


@pytest.mark.parametrize(("by", "groups"), [
    ("variant", 2), ("day", 6), (["experiment", "variant"], 2),
])
def test_online_metrics_fetch_one_row_per_group(by: Any, groups: int) -> None:
    logs, con = _logs()
    out = onlineeval.online_metrics(logs, by=by)
    assert len(out) == groups
    assert con.fetched and max(con.fetched) <= groups


def test_position_ctr_fetches_one_row_per_rank_and_group() -> None:
    logs, con = _logs()
    out = onlineeval.position_ctr(logs, by="variant")
    assert len(out) == 2 * RANKS
    assert max(con.fetched) <= 2 * RANKS
    # and the counts are the per-search ones, computed here from the tables
    s, r, c = _tables()
    clicked = c.merge(s[["search_id", "variant"]]).groupby(["variant", "rank"]).search_id
    ctrl = out[out["variant"] == "control"].set_index("rank")
    assert ctrl["shown"].tolist() == [(s.variant == "control").sum()] * RANKS
    assert ctrl["clicked"].tolist() == clicked.nunique().loc["control"].tolist()


def test_top_queries_and_traffic_fetch_per_group_rows() -> None:
    logs, con = _logs()
    top = onlineeval.top_queries(logs, n=5, by="variant")
    assert len(top) == 10 and max(con.fetched) <= 10
    con.fetched.clear()
    hours = onlineeval.queries_over_time(logs, freq="day", by="variant")
    assert len(hours) == 12 and max(con.fetched) <= 12


def test_abtest_fetches_per_unit_rows_not_per_search() -> None:
    # the readout bootstraps over units, so one row per (unit, period, variant) comes back
    logs, con = _logs()
    onlineeval.abtest(logs, metrics="ctr,click_mrr")
    assert max(con.fetched) <= USERS
    con.fetched.clear()
    onlineeval.abtest(logs, metrics="ctr", pre_period="2024-03-01,2024-03-04")
    assert max(con.fetched) <= 2 * USERS


def test_power_fetches_no_per_unit_rows() -> None:
    # power needs only n, means and (co)variances of per-unit sums: aggregated in SQL
    logs, con = _logs()
    out = onlineeval.power(logs, metrics="ctr,click_mrr")
    assert len(out) == 2
    assert max(con.fetched) < USERS


def test_power_matches_moments_of_per_unit_sums() -> None:
    # independent: per-unit sums in pandas from the tables, then Moments.from_units
    logs, _ = _logs()
    out = onlineeval.power(logs, metrics="ctr", variant="control").set_index("metric")
    s, _, c = _tables()
    s = s[s.variant == "control"].copy()
    s["has_click"] = s.search_id.isin(c.search_id).astype(float)
    per_unit = s.groupby("user_id").agg(x=("has_click", "sum"), y=("search_id", "size"))
    est = ratio(Moments.from_units(per_unit[["x", "y"]].to_numpy(float)), 0, 1)
    n = len(per_unit)
    assert "has_click" in UNIT_SUMS
    assert out.loc["ctr", "baseline_units"] == n
    assert out.loc["ctr", "baseline_value"] == pytest.approx(s.has_click.mean(), rel=1e-12)
    assert out.loc["ctr", "unit_sd"] == pytest.approx(float(np.sqrt(est.var * n)), rel=1e-9)


def test_interleaving_fetches_per_user_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    import onlineeval.interleaving.readout as readout

    logs, con = _logs(team=True)
    # as_logs insists on a real DuckDB connection; the wrapper stands in for one here
    monkeypatch.setattr(readout, "as_logs", lambda x, **_: x)
    out = onlineeval.interleaving_readout(logs)
    assert len(out) == 1
    assert max(con.fetched) <= USERS


def test_interleaving_page_outcomes_are_streamed_not_stored() -> None:
    # a stored copy has one row per page: on 10M pages it broke a 3 GB limit (see the module
    # docstring of onlineeval.interleaving.outcomes); the view streams within 1 GB
    from onlineeval.interleaving.outcomes import PAGE_TABLE

    s, r, c = _tables(team=True)
    logs = onlineeval.load_logs(searches=s, results=r, clicks=c)
    out = onlineeval.interleaving_readout(logs, experiment="e1")
    kinds = dict(logs.con.execute(
        "SELECT table_name, table_type FROM information_schema.tables").fetchall())
    assert kinds[PAGE_TABLE] == "VIEW"
    # the view still holds the readout's pages, filtered by its experiment: one per search
    n_pages, n_users = logs.con.execute(
        f"SELECT count(*), count(DISTINCT user_id) FROM {PAGE_TABLE}").fetchone()
    assert n_pages == len(s) == out.loc[0, "impressions"]
    assert n_users == USERS == out.loc[0, "users"]
    # a second readout for an experiment without pages replaces the filter of the view
    with pytest.raises(InputError, match="no interleaved pages"):
        onlineeval.interleaving_readout(logs, experiment="nope")
    assert logs.con.execute(f"SELECT count(*) FROM {PAGE_TABLE}").fetchone() == (0,)


def test_page_outcome_counts_match_the_view_with_multileaving_and_a_lonely_experiment() -> None:
    # page_outcomes counts the view's rows and the left-out pages without reading the view:
    # check both against the view on a log with 3 teams in e1 (3 pairs per page) and an
    # experiment whose pages all carry one team (left out, with a warning)
    from onlineeval.interleaving.outcomes import PAGE_TABLE, page_outcomes

    s, r, c = _tables(team=True)
    r.loc[r["rank"] == RANKS, "team"] = "C"
    solo = s["user_id"].isin(["u000", "u001"])
    s.loc[solo, "experiment"] = "solo"
    r.loc[r.search_id.isin(s.search_id[solo]), "team"] = "A"
    logs = onlineeval.load_logs(searches=s, results=r, clicks=c)
    with pytest.warns(UserWarning, match=f"^{solo.sum():,} interleaved pages belong"):
        n = page_outcomes(logs)
    rows, pairs = logs.con.execute(
        f"SELECT count(*), count(DISTINCT (team_a, team_b)) FROM {PAGE_TABLE}").fetchone()
    assert n.rows == rows == 3 * (~solo).sum()
    assert pairs == 3


def test_power_counts_null_unit_searches_and_keeps_the_variant_baseline() -> None:
    s, r, c = _tables()
    # a unit column of the log's own (user_id may not be NULL; an extra column may)
    s["cookie"] = s["user_id"].astype(object)
    s.loc[s.index[:7], "cookie"] = None  # 7 searches of control user u000 lose their unit
    logs = onlineeval.load_logs(searches=s, results=r, clicks=c)
    # 20 baseline units make 10 per arm, fewer than the A/B readout's minimum: no MDE
    with pytest.warns(UserWarning, match="fewer than the 50"):
        out = onlineeval.power(logs, metrics="ctr", variant="treatment", unit="cookie")
    assert out.attrs["excluded"] == {"null_unit_searches": 7}
    treated = s[s.variant == "treatment"]
    assert out.loc[0, "baseline_units"] == treated.user_id.nunique() == USERS // 2
    assert out.loc[0, "baseline_value"] == pytest.approx(
        treated.search_id.isin(c.search_id).mean(), rel=1e-12)
    # every unit has the same number of searches: searches_per_unit has zero variance, from
    # which no sample size follows (an error since issue 12; it was unit_sd 0)
    with pytest.raises(InvalidParameterError, match="zero variance.*searches_per_unit"):
        onlineeval.power(logs, metrics="searches_per_unit", variant="treatment", unit="cookie")
