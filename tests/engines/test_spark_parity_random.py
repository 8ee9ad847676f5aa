"""Parity over seeded random logs: loaded and validated on Spark from typed tables (as a
lake table is read) and on DuckDB from the same tables, every later stage gives the same
rows: the load report (every exclusion reason of the loader), the clean views, the online
metrics with the outcome (event) metrics, event attribution with every rule and reason,
positions, top queries, queries over time, A/B unit sums, the click models' sufficient
statistics and the counterfactual estimators' per-unit sums. Integers, texts and NULLs
identical; floats within 1e-12 relative (``assert_same`` of test_spark_parity).

The generator draws small logs (tens of searches) whose times lie on a coarse grid over three
days (so ties in search, click and event times occur), with NULLs in every optional column,
and plants at least one row for each exclusion reason and each attribution outcome, among
them events exactly at the attribution window's end and one microsecond past it. Each
seed's log is loaded once per engine and shared by the assertions; the Spark load of the
seeds after the first, the A/B readout queries and the click-model and counterfactual sums
are marked slow (left out of the README's quick test command: 20-50 s each on this 2-core
machine); the later stages run on the first seed's log.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import onlineeval
from onlineeval.logs.report import REASONS

pytest.importorskip("pyspark")
ROOT = Path(__file__).resolve().parents[2]
SEEDS = (1, 2, 3)
T0 = pd.Timestamp("2026-03-01 22:00:00")
#: the attribution window of the tests: 1 h, on the generator's 10-minute grid
WINDOW_H = 1
HOUR = pd.Timedelta(hours=1)


def _parity_module():
    spec = importlib.util.spec_from_file_location(
        "spark_parity", ROOT / "tests/engines/test_spark_parity.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


assert_same = _parity_module().assert_same

TYPES = {
    "searches": [("search_id", pa.string()), ("user_id", pa.string()),
                 ("ts", pa.timestamp("us")), ("query", pa.string()),
                 ("experiment", pa.string()), ("variant", pa.string())],
    "results": [("search_id", pa.string()), ("rank", pa.int32()), ("doc_id", pa.string())],
    "clicks": [("search_id", pa.string()), ("rank", pa.int32()), ("doc_id", pa.string()),
               ("ts", pa.timestamp("us")), ("dwell_ms", pa.float64())],
    "events": [("user_id", pa.string()), ("ts", pa.timestamp("us")), ("type", pa.string()),
               ("value", pa.float64()), ("search_id", pa.string()), ("doc_id", pa.string())],
}


def random_log(seed: int) -> dict[str, pa.Table]:
    """A seeded random log with every exclusion reason and attribution outcome (see the
    module docstring): searches, results, clicks, events as typed Arrow tables."""
    rng = np.random.default_rng(seed)
    grid = [T0 + pd.Timedelta(minutes=10 * int(k)) for k in range(3 * 24 * 6)]
    docs = [f"d{i}" for i in range(6)]
    users = [f"u{i}" for i in range(6)]

    def pick(seq):
        return seq[int(rng.integers(len(seq)))]

    def maybe(value, p_null=0.15):
        return None if rng.random() < p_null else value

    searches, results, clicks, events = [], [], [], []
    for i in range(int(rng.integers(24, 32))):
        user = pick(users)
        # few distinct times per user: ties in search times within a user
        ts = grid[int(rng.integers(0, 40)) * 7 % len(grid)]
        # a user's variant, except for a few searches (the unit is then left out of A/B)
        arm = "AB"[(users.index(user) + (rng.random() < 0.04)) % 2]
        searches.append((f"s{i}", user, ts, maybe(pick("abcd")), "e1", arm))
        shown = list(rng.permutation(docs)[: int(rng.integers(0, 5))])
        for rank, doc in enumerate(shown, start=1):
            results.append((f"s{i}", rank, doc))
            if rng.random() < 0.45:
                click_ts = maybe(ts + pd.Timedelta(minutes=10 * int(rng.integers(0, 3))), 0.2)
                form = rng.random()
                # a click names its rank, its doc_id, or both (the loader fills the other)
                clicks.append((f"s{i}", None if form < 0.2 else rank,
                               doc if form < 0.2 or form > 0.6 else None, click_ts,
                               maybe(float(rng.integers(0, 90_000)), 0.3)))
                if rng.random() < 0.5:  # an event on the clicked doc, after the click
                    at = (click_ts or ts) + pd.Timedelta(minutes=10 * int(rng.integers(0, 8)))
                    events.append((user, at, pick(["purchase", "cart"]),
                                   maybe(round(float(rng.normal(20, 15)), 2)), None, doc))
        if rng.random() < 0.4:  # an event after the search, named by user only
            at = ts + pd.Timedelta(minutes=10 * int(rng.integers(0, 9)))
            events.append((user, at, pick(["purchase", "cart"]), maybe(5.0), None, None))
        if rng.random() < 0.2:  # an event naming its search, maybe before it
            at = ts + pd.Timedelta(minutes=10 * int(rng.integers(-2, 4)))
            events.append((maybe(user, 0.5), at, "purchase", 12.5, f"s{i}", None))
    first, second = searches[0], searches[1]
    t1 = first[2]
    searches += [
        ("s_nouser", None, T0, "a", "e1", "A"),           # searches: null_required
        ("s_nots", "u0", None, "b", "e1", "B"),           # searches: null_required
        ("s_dup", "u1", T0, "a", "e1", "A"),              # searches: duplicate_search_id
        ("s_dup", "u2", T0 + HOUR, "b", "e1", "B"),
        ("s_edge", "u_edge", T0 + pd.Timedelta(minutes=5), "a", "e1", "A"),  # off the grid
    ]
    results += [
        (first[0], 7, None),                              # results: null_required
        (first[0], 0, "d1"),                              # results: rank_below_1
        (second[0], 8, "d2"), (second[0], 8, "d3"),       # results: duplicate_rank
        ("s_dup", 1, "d1"),                               # results: search_excluded
        ("s_gone", 1, "d1"),                              # results: unknown_search
        ("s_edge", 1, "d1"),
    ]
    clicks += [
        (None, 1, "d1", t1, 10.0),                        # clicks: null_required
        (first[0], None, None, t1, 10.0),                 # clicks: null_required
        (first[0], 0, None, t1, 10.0),                    # clicks: rank_below_1
        ("s_dup", 1, "d1", T0, 10.0),                     # clicks: search_excluded
        ("s_gone", 1, "d1", T0, 10.0),                    # clicks: unknown_search
        (first[0], 9, "d5", t1, 10.0),                    # clicks: not_on_page
        (second[0], 8, None, second[2], None),            # clicks: not_on_page (dup rank)
        ("s_edge", 1, "d1", T0 + pd.Timedelta(minutes=15), 10.0),
    ]
    user = first[1]
    events += [
        (user, None, "purchase", 1.0, None, None),        # events: null_required
        (user, t1, None, 1.0, None, None),                # events: null_required
        (None, t1, "purchase", 1.0, None, None),          # events: null_required
        (user, t1 + HOUR, "purchase", 3.0, None, None),
        (user, t1 + HOUR, "purchase", 3.0, None, None),   # an identical event
        (user, t1 - 100 * HOUR, "purchase", 2.0, None, None),  # no_earlier_search
        ("u_nobody", t1, "purchase", 2.0, None, None),    # unknown_user
        (user, t1, "purchase", 2.0, "s_gone", None),      # unknown_search
        (user, t1 + 5 * HOUR, "purchase", 2.0, "s_dup", None),  # unknown_search (excluded)
    ] + [
        # at the window's end (inclusive) and one microsecond past it, after the search
        # (last_search, then outside_window) and after the click on d1 (clicked_doc, then
        # outside_window: the search is 10 minutes earlier than the click)
        ("u_edge", start + HOUR + past, kind, value + i, None, doc)
        for start, doc, kind, value in (
            (T0 + pd.Timedelta(minutes=5), None, "cart", 100.0),
            (T0 + pd.Timedelta(minutes=15), "d1", "purchase", 200.0))
        for i, past in enumerate((pd.Timedelta(0), pd.Timedelta(microseconds=1)))
    ]
    rows = {"searches": searches, "results": results, "clicks": clicks, "events": events}
    out = {}
    for t, fields in TYPES.items():
        names = [n for n, _ in fields]
        out[t] = pa.Table.from_pylist(
            [dict(zip(names, [v.to_pydatetime() if isinstance(v, pd.Timestamp) else v
                              for v in r], strict=True)) for r in rows[t]],
            schema=pa.schema([pa.field(n, k) for n, k in fields]))
    return out


def _load(**tables):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return onlineeval.load_logs(**tables)


@pytest.fixture(scope="module", params=[
    pytest.param(seed, marks=pytest.mark.slow if seed != SEEDS[0] else ()) for seed in SEEDS])
def loaded(request, spark_session, tmp_path_factory):
    """One seed's log loaded by DuckDB (from Arrow) and by Spark (from Parquet DataFrames:
    every validation rule and exclusion count runs in Spark)."""
    tables = random_log(request.param)
    folder = tmp_path_factory.mktemp(f"random{request.param}")
    session = spark_session.newSession()
    frames = {}
    for t, table in tables.items():
        pq.write_table(table, folder / f"{t}.parquet")
        frames[t] = session.read.parquet(str(folder / f"{t}.parquet"))
    return _load(**tables), _load(**frames)


@pytest.fixture(scope="module")
def pair(module_spark):
    """The first seed's log loaded by DuckDB, and its clean tables on Spark: the later stages
    (one Spark load per seed is dear on a small machine; the load is compared above)."""
    from onlineeval.logs.load import on_engine

    duck = _load(**random_log(SEEDS[0]))
    return duck, on_engine(duck, module_spark())


def test_the_generator_plants_every_reason_and_outcome():
    """Every exclusion reason of the loader in every table it applies to, and every rule and
    reason of attribution, on every seed (counted by DuckDB)."""
    from onlineeval.online.attribution import REASONS as UNATTRIBUTED
    from onlineeval.online.attribution import RULES, attribute_events

    for seed in SEEDS:
        logs = _load(**random_log(seed))
        reasons = {r for (_, r) in logs.report.excluded}
        assert reasons == set(REASONS)
        assert logs.report.excluded[("events", "null_required")] == 3
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            attributed = attribute_events(logs, attribution_window=WINDOW_H)
        outcomes = set(attributed["rule"].dropna()) | set(attributed["reason"].dropna())
        assert outcomes == set(RULES) | set(UNATTRIBUTED)
        edge = attributed[attributed["user_id"] == "u_edge"]
        assert dict(zip(edge["value"], edge["rule"].fillna(edge["reason"]), strict=True)) == {
            100.0: "last_search", 101.0: "outside_window",
            200.0: "clicked_doc", 201.0: "outside_window"}
        assert len(set(pd.to_datetime(attributed["ts"]).dt.date)) >= 3


def test_load_report_and_clean_rows(loaded):
    duck, spark = loaded
    assert spark.con.engine == "spark"
    assert spark.report.rows_read == duck.report.rows_read
    assert spark.report.excluded == duck.report.excluded
    for t in ("searches", "results", "clicks", "events"):
        assert_same(duck.con.table(t).df(), spark.con.table(t).df())


def test_metrics_with_events(pair):
    from onlineeval.online import online_metrics, position_ctr, queries_over_time, top_queries
    from onlineeval.online.attribution import attribute_events

    duck, spark = pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # every event type (one type and the default window: test_spark_parity's sample slice)
        assert_same(online_metrics(duck, by=("day", "variant"), attribution_window=WINDOW_H),
                    online_metrics(spark, by=("day", "variant"), attribution_window=WINDOW_H))
        assert_same(attribute_events(duck, attribution_window=WINDOW_H),
                    attribute_events(spark, attribution_window=WINDOW_H))
    assert_same(position_ctr(duck), position_ctr(spark))
    assert_same(top_queries(duck, n=3), top_queries(spark, n=3))
    assert_same(queries_over_time(duck, by=("day",)), queries_over_time(spark, by=("day",)))


@pytest.mark.slow  # ~20-50 s on 2 loaded cores
def test_ab_readout_queries(pair):
    """The A/B unit sums with the outcome metrics, the cumulative effect over time
    (ab/over_time_units with its calendar) and the quantile effects (ab/quantile_values,
    ab/quantile_cdf_units with their request tables)."""
    from onlineeval.abtest.over_time import effect_over_time
    from onlineeval.abtest.quantiles import quantile_effects
    from onlineeval.abtest.units import unit_rows

    duck, spark = pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, known_a = unit_rows(duck, experiment="e1")
        b, known_b = unit_rows(spark, experiment="e1")
        assert known_a == known_b
        assert_same(a, b)
        # cumulative by calendar day: the calendar table (by exposure day reads no calendar)
        assert_same(effect_over_time(duck, "A", "B", "conversion_rate", min_units=2),
                    effect_over_time(spark, "A", "B", "conversion_rate", min_units=2))
        assert_same(quantile_effects(duck, "A", "B", q=(0.25, 0.5), min_units=2),
                    quantile_effects(spark, "A", "B", q=(0.25, 0.5), min_units=2))


@pytest.mark.slow  # ~20-50 s on 2 loaded cores
def test_click_model_statistics_and_counterfactual_sums(pair):
    from onlineeval.clickmodels.harvest import read_rank_counts
    from onlineeval.clickmodels.patterns import read_patterns
    from onlineeval.counterfactual.evaluation import prepare

    duck, spark = pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pa_, pb = read_patterns(duck, max_rank=4), read_patterns(spark, max_rank=4)
        assert pa_.counts == pb.counts and pa_.n_patterns > 3
        for name in ("pair", "rank", "click", "mask", "weight"):
            assert np.array_equal(getattr(pa_, name), getattr(pb, name)), name
        assert_same(pa_.pairs, pb.pairs)
        assert_same(read_rank_counts(duck, max_rank=4), read_rank_counts(spark, max_rank=4))
        run = pd.DataFrame({"qid": ["a", "a", "a", "b", "b", "c"],
                            "docno": ["d1", "d2", "d3", "d0", "d5", "d4"],
                            "score": [3.0, 2.0, 1.0, 2.0, 1.0, 1.0]})
        propensities = {1: 1.0, 2: 0.7, 3: 0.45, 4: 0.3}
        for estimator in ("ips", "snips", "dr"):
            rows = [prepare(logs, metric="clicks@3", propensities=propensities,
                            estimator=estimator, max_rank=4).result(run, warn=False)
                    for logs in (duck, spark)]
            assert_same(rows[0][1], rows[1][1])
            assert (rows[0][0].value, rows[0][0].pages) == pytest.approx(
                (rows[1][0].value, rows[1][0].pages), rel=1e-12)
