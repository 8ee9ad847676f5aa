"""Parity: every pipeline stage after loading gives the same numbers on Spark (local[2]) as on
DuckDB, over the sample logs and the hand-made edge-case logs: the same Python and the same
rendered SQL, translated by sqlglot for Spark. Integers, texts and NULLs identical; floats
within 1e-12 relative (1e-9 would miss the DECIMAL error of an untyped division)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from onlineeval import load_logs
from onlineeval.abtest.units import unit_rows
from onlineeval.interleaving import outcomes
from onlineeval.online import online_metrics, position_ctr, queries_over_time, top_queries

pytest.importorskip("pyspark")
ROOT = Path(__file__).resolve().parents[2]


def _hand_module():
    spec = importlib.util.spec_from_file_location("hand_log", ROOT / "tests/online/conftest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def assert_same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Same columns and rows (in any order): non-float values and NULLs identical, floats
    within 1e-12 relative."""
    assert list(a.columns) == list(b.columns)
    assert len(a) == len(b)
    floats = [c for c in a.columns if a[c].dtype.kind == "f" or b[c].dtype.kind == "f"]
    exact = [c for c in a.columns if c not in floats]
    if exact:
        a = a.sort_values(exact, na_position="last", kind="stable").reset_index(drop=True)
        b = b.sort_values(exact, na_position="last", kind="stable").reset_index(drop=True)
    for c in exact:
        left, right = a[c].astype(object), b[c].astype(object)
        assert left.isna().tolist() == right.isna().tolist(), c
        keep = ~left.isna()
        if a[c].dtype.kind == "M" or b[c].dtype.kind == "M":
            left, right = pd.to_datetime(left[keep]), pd.to_datetime(right[keep])
        else:
            left, right = left[keep], right[keep]
        assert [v.item() if hasattr(v, "item") else v for v in left] == \
               [v.item() if hasattr(v, "item") else v for v in right], c
    for c in floats:
        x, y = a[c].to_numpy(dtype=float), b[c].to_numpy(dtype=float)
        assert np.array_equal(np.isnan(x), np.isnan(y)), c
        ok = ~np.isnan(x)
        assert np.allclose(x[ok], y[ok], rtol=1e-12, atol=0), (c, x[ok], y[ok])


@pytest.fixture(scope="module")
def hand(module_spark):
    from onlineeval.logs.load import on_engine

    h = _hand_module()
    logs = load_logs(searches=h.searches_df(), clicks=h.clicks_df(), results=h.results_df())
    return logs, on_engine(logs, module_spark())


def _sample(folder: str, module_spark):
    """A sample log loaded by DuckDB and its clean tables on Spark, cached there: every query
    of the module's tests reads them (1.1 million result rows in the A/B sample), and a scan
    of Spark's in-memory cache is cheaper than decoding the Parquet file again. The cache
    holds the rows the scan gives, so the queries see the same rows."""
    from onlineeval.logs.load import on_engine

    logs = load_logs(ROOT / folder)
    spark = on_engine(logs, module_spark())
    names = [t for t in ("searches", "results", "clicks", "events")
             if t != "events" or logs.has_events]
    for t in names:
        spark.con.spark.catalog.cacheTable(t)
    yield logs, spark
    for t in names:
        spark.con.spark.catalog.uncacheTable(t)


@pytest.fixture(scope="module")
def ab(module_spark):
    yield from _sample("sample_logs/ab", module_spark)


@pytest.fixture(scope="module")
def interleaving(module_spark):
    yield from _sample("sample_logs/interleaving", module_spark)


@pytest.mark.parametrize("by", [(), ("day", "variant")])
def test_online_metrics_hand_log(hand, by):
    duck, spark = hand
    assert_same(online_metrics(duck, by=by), online_metrics(spark, by=by))


def test_online_metrics_hand_log_given_sessions(spark_con):
    from onlineeval.logs.load import on_engine

    h = _hand_module()
    duck = load_logs(searches=h.searches_df(session_id={"s2": "y", "s8": "y"}),
                     clicks=h.clicks_df(), results=h.results_df())
    assert_same(online_metrics(duck, by=()), online_metrics(on_engine(duck, spark_con), by=()))


def test_online_metrics_tiny_edge_log(spark_con):
    from onlineeval.logs.load import on_engine

    with pytest.warns(Warning):
        duck = load_logs(ROOT / "tests/data/logs/tiny")
    spark = on_engine(duck, spark_con)
    assert_same(online_metrics(duck, by=("variant",)), online_metrics(spark, by=("variant",)))
    assert_same(position_ctr(duck), position_ctr(spark))


@pytest.mark.slow
def test_online_metrics_sample_ab(ab):
    duck, spark = ab
    by = ("experiment", "variant")
    assert_same(online_metrics(duck, by=by), online_metrics(spark, by=by))


@pytest.mark.slow
def test_unit_sums_sample_ab(ab):
    duck, spark = ab
    a, known_a = unit_rows(duck, experiment="s100_vs_s080")
    b, known_b = unit_rows(spark, experiment="s100_vs_s080")
    assert known_a == known_b
    assert_same(a, b)


def test_positions_and_top_queries(hand):
    duck, spark = hand
    assert_same(position_ctr(duck, by=("variant",)), position_ctr(spark, by=("variant",)))
    assert_same(top_queries(duck, n=3, by=("variant",)), top_queries(spark, n=3, by=("variant",)))
    assert_same(queries_over_time(duck, by=("day",)), queries_over_time(spark, by=("day",)))


@pytest.mark.slow
def test_interleaving_outcomes(interleaving):
    duck, spark = interleaving
    ca, cb = outcomes.page_outcomes(duck), outcomes.page_outcomes(spark)
    assert ca == cb
    assert_same(outcomes.user_stats(duck, by=("variant",)),
                outcomes.user_stats(spark, by=("variant",)))


@pytest.mark.slow
def test_window_bound_as_utc_text(interleaving):
    """A window bound is bound as UTC text: a bound given in another time zone and the same
    instant as naive UTC select the same pages, on both engines."""
    from onlineeval.engines.spark import bind_value

    duck, spark = interleaving
    (mid,) = duck.con.execute("SELECT quantile_disc(ts, 0.5) FROM searches").fetchall()[0]
    naive = pd.Timestamp(mid)
    aware = naive.tz_localize("UTC").tz_convert("America/Los_Angeles")
    assert bind_value(aware) == bind_value(naive) == naive.isoformat(sep=" ",
                                                                      timespec="microseconds")
    counts = {outcomes.page_outcomes(logs, start=start).rows
              for logs in (duck, spark) for start in (naive, aware)}
    full = outcomes.page_outcomes(duck).rows
    assert len(counts) == 1 and 0 < counts.pop() < full


@pytest.mark.parametrize("command", [["online", "--by", "variant"], ["top-queries", "-n", "2"],
                                     ["positions"]])
def test_cli_engine_spark_same_json(spark_session, command, capsys):
    """``onlineeval --engine spark COMMAND ... --format json`` prints what DuckDB prints."""
    import json

    from onlineeval.cli import main

    log = str(ROOT / "tests/data/logs/tiny")
    out = {}
    for engine in ("duckdb", "spark"):
        assert main(["--engine", engine, *command[:1], log, *command[1:],
                     "--format", "json"]) == 0
        out[engine] = json.loads(capsys.readouterr().out)
    assert out["spark"] == out["duckdb"] and out["duckdb"]


def _same_json(a, b, where: str = "") -> None:
    """The parity rule on a JSON document: the same keys, lengths, texts, integers, booleans
    and nulls; floats within 1e-12 relative (the engines add floats in different orders)."""
    assert type(a) is type(b), (where, a, b)
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for key in a:
            _same_json(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same_json(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=0), (where, a, b)
    else:
        assert a == b, (where, a, b)


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    ["online", "sample_logs/ab", "--by", "experiment,variant"],
    ["abtest", "sample_logs/ab", "--experiment", "s130_vs_s080", "--metrics", "ctr,click_mrr"],
    ["interleave", "sample_logs/interleaving", "--experiment", "s200_vs_s100"],
])
def test_cli_engine_spark_same_json_on_the_sample_logs(spark_session, command, capsys):
    """The commands of the README's examples, on the bundled sample logs: ``--engine spark``
    prints the document DuckDB prints (floats within 1e-12 relative)."""
    import json

    from onlineeval.cli import main

    out = {}
    for engine in ("duckdb", "spark"):
        assert main(["--engine", engine, command[0], str(ROOT / command[1]), *command[2:],
                     "--format", "json"]) == 0
        out[engine] = json.loads(capsys.readouterr().out)
    assert out["duckdb"]
    _same_json(out["duckdb"], out["spark"])


def test_load_logs_engine_spark_keeps_the_report(spark_session):
    with pytest.warns(Warning):
        duck = load_logs(ROOT / "tests/data/logs/tiny")
    with pytest.warns(Warning):
        spark = load_logs(ROOT / "tests/data/logs/tiny", engine="spark")
    assert spark.con.engine == "spark" and spark.report == duck.report
    assert spark.con.execute("SELECT count(*) FROM searches").fetchall() == \
        duck.con.execute("SELECT count(*) FROM searches").fetchall()


@pytest.mark.slow
def test_per_query_ab_ctr(ab):
    from onlineeval.online.per_query import ab_ctr_per_query

    duck, spark = ab
    args = ("s100_vs_s080", "control", "treatment")
    assert_same(ab_ctr_per_query(duck, *args), ab_ctr_per_query(spark, *args))


def _sample_slice(folder: Path, users: int) -> dict:
    """The sample A/B log's rows of its first ``users`` users (sorted ids): their searches,
    the results and clicks of those searches and their events, every row as the sample has
    it (attribution is per user, so a user's events keep every candidate search)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    tables = {t: pq.read_table(folder / f"{t}.parquet")
              for t in ("searches", "results", "clicks", "events")}
    chosen = pc.unique(tables["searches"]["user_id"]).sort()[:users]
    searches = tables["searches"].filter(pc.is_in(tables["searches"]["user_id"], chosen))
    out = {"searches": searches,
           "events": tables["events"].filter(pc.is_in(tables["events"]["user_id"], chosen))}
    for t in ("results", "clicks"):
        out[t] = tables[t].filter(pc.is_in(tables[t]["search_id"], searches["search_id"]))
    return out


@pytest.mark.slow
def test_outcome_metrics_sample_slice(module_spark):
    """The events SQL (online/attribution, online/event_facts) and the outcome metrics on
    real-shaped events: a slice of the sample A/B log, both event types and one, the default
    24 h window and a 30-minute one."""
    from onlineeval.logs.load import on_engine
    from onlineeval.online.attribution import attribute_events, attribution_counts

    duck = load_logs(**_sample_slice(ROOT / "sample_logs/ab", 60))
    assert duck.report.rows_read["events"] > 30
    spark = on_engine(duck, module_spark())
    by = ("experiment", "variant")
    with pytest.warns(Warning):
        for kw in ({}, {"event_type": "purchase", "attribution_window": "30min"}):
            a, b = online_metrics(duck, by=by, **kw), online_metrics(spark, by=by, **kw)
            assert a["conversion_rate"].gt(0).all()
            assert_same(a, b)
            events = attribute_events(duck, **kw)
            assert_same(events, attribute_events(spark, **kw))
    counts = attribution_counts(duck.with_events(attribution_window="30min"))
    assert counts == attribution_counts(spark.with_events(attribution_window="30min"))
    assert counts["outside_window"] > 0 and counts["search_id"] > 0
