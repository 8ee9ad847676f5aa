"""The per-query readout reads its (query, user) rows from DuckDB as codes and counts
(onlineeval.interleaving.outcomes.query_user_stats); it used to fetch them with their strings
into pandas and number them there. Both ways are computed here and must agree."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from onlineeval.db import connect
from onlineeval.interleaving import interleaving_readout, outcomes, readout
from onlineeval.interleaving._random import derived_generator
from onlineeval.interleaving.significance import user_test
from onlineeval.logs import load_logs


def _random_log(seed: int):
    """Interleaved pages of 40 users over 9 queries (one of them missing), in a two-team
    experiment, a three-team one (multileaved), and pages without an experiment, two
    variants; users share queries in every order."""
    rng = np.random.default_rng(seed)
    n = 400
    queries = np.array([f"q{i}" for i in range(8)] + [None], dtype=object)
    experiments = np.array(["e2", "e3", None], dtype=object)
    sid = [f"s{i:04d}" for i in range(n)]
    searches = pd.DataFrame({
        "search_id": sid,
        "user_id": [f"u{i:02d}" for i in rng.integers(0, 40, n)],
        "query": queries[rng.integers(0, len(queries), n)],
        "experiment": experiments[rng.integers(0, 3, n)],
        "variant": np.where(rng.random(n) < 0.5, "v1", "v2"),
        "ts": pd.Timestamp("2024-03-01") + pd.to_timedelta(np.arange(n), unit="min"),
    })
    teams = {"e2": "ab", "e3": "abc", None: "xy"}
    results, clicks = [], []
    for s, e in zip(sid, searches["experiment"], strict=True):
        names = teams[None if pd.isna(e) else e]
        for r in range(4):
            results.append((s, r + 1, f"{s}-d{r + 1}", names[rng.integers(0, len(names))]))
            if rng.random() < 0.3:
                clicks.append((s, r + 1, f"{s}-d{r + 1}"))
    return load_logs(searches=searches,
                     results=pd.DataFrame(results, columns=["search_id", "rank", "doc_id",
                                                            "team"]),
                     clicks=pd.DataFrame(clicks, columns=["search_id", "rank", "doc_id"]))


def _pandas_per_query(logs, by, bootstrap, team_a=None, control=None, treatment_first=False,
                      n_resamples=200, seed=0) -> pd.DataFrame:
    """The per-query readout as it was computed before: the (query, user) rows fetched with
    their strings, users and queries numbered by first appearance in pandas, per-query sums
    by a pandas groupby, the bootstrap on users x queries matrices."""
    outcomes.page_outcomes(logs)
    stats = readout._orient(outcomes.user_stats(logs, [*by, "query"]), team_a, control,
                            treatment_first)
    keys = ["experiment", *by, "team_a", "team_b"]
    out = []
    for key, part in stats.groupby(keys, dropna=False, sort=True):
        wa, wb, t = (part[c].to_numpy(dtype=float) for c in ("wins_a", "wins_b", "ties"))
        users, ids = pd.factorize(part["user_id"], use_na_sentinel=False)
        groups = pd.factorize(part["query"], use_na_sentinel=False)[0]
        q = pd.DataFrame({"g": groups, "a": wa, "b": wb, "t": t}).groupby("g").sum()
        decided = q["a"] + q["b"] + q["t"]
        d_q = ((q["a"] + q["t"] / 2) / decided - 0.5).where(decided > 0)
        shares = q["a"] / (q["a"] + q["b"])
        n_users = int(users.max()) + 1
        per_user = [np.bincount(users, weights=x, minlength=n_users) for x in (wa, wb, t)]
        test = user_test(*per_user)
        names = [None if pd.isna(k) else str(k) for k in key]
        gen = derived_generator(seed, (*names[:-2], *sorted(names[-2:])))
        lo, hi = bootstrap(wa, wb, t, users, groups, n_resamples, gen, 1 - 0.05)
        out.append({**dict(zip(keys, names, strict=True)),
                    "wins_a": int(wa.sum()), "wins_b": int(wb.sum()),
                    "impressions": int(part["impressions"].sum()),
                    "estimate": d_q.mean(), "ci_low": lo, "ci_high": hi,
                    "p_value": test.p_value, "user_delta": test.estimate,
                    "share_a": shares.mean(), "queries_decided": int(d_q.notna().sum()),
                    "users": n_users, "top_user": str(ids[test.top_user])})
    return pd.DataFrame(out)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_codes_are_the_first_appearance_numbers_of_the_fetched_rows(seed):
    # the users and queries coded in SQL are numbered as pd.factorize numbered the rows of
    # interleaving/user_stats in their order: what the seeded bootstrap draws by
    logs = _random_log(seed)
    for by in ([], ["variant"]):
        outcomes.page_outcomes(logs)
        frame = outcomes.user_stats(logs, [*by, "query"])
        keys = ["experiment", *by, "team_a", "team_b"]
        with outcomes.query_user_stats(logs, by) as stats:
            comparisons = stats.comparisons.groupby(keys, dropna=False, sort=True)
            parts = frame.groupby(keys, dropna=False, sort=True)
            assert comparisons.ngroups == parts.ngroups >= 4
            for (key, part), (key2, row) in zip(parts, comparisons, strict=True):
                assert key == key2
                rows = stats.rows(int(row["comparison"].iloc[0]))
                users = pd.factorize(part["user_id"], use_na_sentinel=False)[0]
                queries = pd.factorize(part["query"], use_na_sentinel=False)[0]
                got = pd.DataFrame({c: rows[c] for c in ("user_code", "query_code", "wins_a",
                                                        "wins_b", "ties")})
                want = pd.DataFrame({"user_code": users, "query_code": queries,
                                     "wins_a": part["wins_a"].to_numpy(dtype=float),
                                     "wins_b": part["wins_b"].to_numpy(dtype=float),
                                     "ties": part["ties"].to_numpy(dtype=float)})
                order = ["query_code", "user_code"]
                pd.testing.assert_frame_equal(
                    got.sort_values(order, ignore_index=True),
                    want.sort_values(order, ignore_index=True), check_dtype=False)
                for code in (0, int(users.max())):
                    assert stats.user_id(int(row["comparison"].iloc[0]), code) == \
                        part["user_id"].iloc[np.flatnonzero(users == code)[0]]
                for c in ("impressions", "wins_a", "ties", "one_sided_pages"):
                    assert int(row[c].iloc[0]) == int(part[c].sum())
        # the tables are dropped afterwards
        assert not [t for (t,) in logs.con.execute("SHOW TABLES").fetchall()
                    if t.startswith(outcomes.PAGE_TABLE + "_query")]
    assert frame["query"].isna().any()


@pytest.mark.parametrize(("by", "options"), [
    ([], {}), (["variant"], {}), ([], {"team_a": "b"}), ([], {"treatment_first": True}),
    (["variant"], {"control": "a"}),
])
def test_per_query_readout_is_the_pandas_computation(by, options, bootstrap_as_before):
    logs = _random_log(3)
    want = _pandas_per_query(logs, by, bootstrap_as_before, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = interleaving_readout(logs, by=by, per_query=True, n_resamples=200, **options)
    assert len(got) == len(want) >= 4
    for c in want.columns:
        if want[c].dtype == float:
            np.testing.assert_allclose(got[c].to_numpy(dtype=float), want[c], rtol=1e-12,
                                       atol=0)
        else:
            def plain(values):
                return [None if pd.isna(v) else v for v in values]

            assert plain(got[c]) == plain(want[c]), c
    # the bootstrap draws the same users: the intervals agree to the last bit
    assert list(got["ci_low"]) == list(want["ci_low"])
    assert all(math.isfinite(x) for x in got["ci_low"])


def test_per_query_readout_fetches_numbers_not_the_rows_strings(monkeypatch):
    # what makes the per-query readout fit a memory limit: every frame Python fetches is
    # either one row per comparison or numbers only (codes and counts), never the (query,
    # user) rows with their strings
    logs = _random_log(4)
    fetched = []
    real = outcomes.fetch_df

    def spy(con, sql, params=None, **kw):
        frame = real(con, sql, params, **kw)
        fetched.append(frame)
        return frame

    monkeypatch.setattr(outcomes, "fetch_df", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = interleaving_readout(logs, per_query=True, n_resamples=50)
    monkeypatch.undo()
    rows = outcomes.user_stats(logs, ["query"])
    big = [f for f in fetched if len(f) > len(out)]
    assert big and sum(map(len, big)) == len(rows)
    for frame in big:
        assert all(dt.kind in "if" for dt in frame.dtypes), frame.dtypes


def test_per_query_readout_at_a_small_limit_is_the_one_at_a_large_one(monkeypatch):
    # 64MB and one thread, the pages read in 3 buckets of users whose (query, user) rows
    # are put together in DuckDB, against 2GB in one read: the same readout
    s, r, c = (_random_log(5).con.table(t).df() for t in ("searches", "results", "clicks"))
    out = {}
    for limit, buckets in (("64MB", 3), ("2GB", 1)):
        monkeypatch.setattr(outcomes, "_buckets", lambda con, rows, k=buckets: k)
        con = connect(memory_limit=limit, threads=1)
        logs = load_logs(searches=s, results=r, clicks=c, con=con)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[limit] = interleaving_readout(logs, per_query=True, n_resamples=100)
        assert outcomes._bound_buckets(con) == buckets
    pd.testing.assert_frame_equal(out["64MB"], out["2GB"])
