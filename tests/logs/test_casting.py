"""Column types: conversions to the canonical types, and unreadable values as clear errors."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import SchemaError
from onlineeval.logs.casting import common_id_type

T = dt.datetime


def _searches(**cols):
    base = {"search_id": ["a", "b"], "user_id": ["u", "v"], "ts": ["2024-01-01", "2024-01-02"]}
    base.update(cols)
    return pd.DataFrame(base)


CLICKS = pd.DataFrame({"search_id": ["a"], "rank": [1]})


def _write_csv(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    return tmp_path / name


def test_unparsable_ts_names_file_column_and_example(tmp_path):
    path = _write_csv(tmp_path, "searches.csv",
                      "search_id,user_id,ts\na,u,2024-01-01 10:00:00\nb,u,yesterday\nc,u,\n")
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=path, clicks=CLICKS)
    msg = str(err.value)
    assert str(path) in msg
    assert "column 'ts' (searches.ts) must hold a timestamp" in msg
    assert "1 of 3 rows" in msg and "'yesterday'" in msg


def test_mapped_column_error_names_the_source_column(tmp_path):
    path = _write_csv(tmp_path, "clicks.csv", "qid,position\na,first\na,2.5\na,3\n")
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=_searches(), clicks=path,
                             columns={"clicks": {"qid": "search_id", "position": "rank"}})
    msg = str(err.value)
    assert "clicks.csv: column 'position' (clicks.rank) must hold a whole number" in msg
    assert "2 of 3 rows" in msg and "'first'" in msg and "'2.5'" in msg


@pytest.mark.parametrize("values, bad", [
    ([1.0, 2.5], "2.5"), (["1", "x"], "'x'"), (["1", "1e12"], "'1e12'"),
])
def test_bad_ranks_in_results(values, bad):
    r = pd.DataFrame({"search_id": ["a", "a"], "rank": values, "doc_id": ["x", "y"]})
    with pytest.raises(SchemaError, match=rf"column 'rank' \(results.rank\) must hold a whole "
                                          rf"number \(at most 2,147,483,647\); 1 of 2 rows "
                                          rf".*e\.g\. .*{bad}"):
        onlineeval.load_logs(searches=_searches(), results=r, clicks=CLICKS)


def test_bad_dwell_and_numeric_ts():
    c = pd.DataFrame({"search_id": ["a"], "rank": [1], "dwell_ms": ["long"]})
    with pytest.raises(SchemaError, match=r"dwell_ms.*must hold a finite number >= 0.*'long'"):
        onlineeval.load_logs(searches=_searches(), clicks=c)
    with pytest.raises(SchemaError, match=r"searches.ts\) must be a timestamp.*BIGINT; numbers "
                                          r"are ambiguous .*to_datetime"):
        onlineeval.load_logs(searches=_searches(ts=[1714550400, 1714550401]), clicks=CLICKS)
    with pytest.raises(SchemaError, match=r"user_id\) must be an id .*not BOOLEAN"):
        onlineeval.load_logs(searches=_searches(user_id=[True, False]), clicks=CLICKS)


@pytest.mark.parametrize(("values", "shown"), [
    ([3, -1], "'-1'"), ([3.0, -1.0], "'-1.0'"), (["3", "-1"], "'-1'"),
    (pd.array([3, -1], dtype="Int8"), "'-1'"),
])
def test_negative_n_results_is_an_error_naming_file_and_column(values, shown):
    s = _searches(n_results=values)
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=s, clicks=CLICKS)
    assert str(err.value).startswith(
        "DataFrame searches=: column 'n_results' (searches.n_results) must hold a whole number "
        ">= 0 (at most 2,147,483,647); 1 of 2 rows hold values that cannot be read as one, "
        f"e.g. {shown}")
    # zero is a zero-result page, not an error
    logs = onlineeval.load_logs(searches=_searches(n_results=[0, 2]), clicks=CLICKS)
    assert logs.con.execute("SELECT n_results FROM searches ORDER BY 1").fetchall() == [(0,), (2,)]


@pytest.mark.parametrize(("values", "shown"), [
    ([5.0, -5.0], "'-5.0'"), ([5, -5], "'-5'"), (["5", "-5"], "'-5'"),
    ([5.0, float("inf")], "'inf'"), (["5", "1e400"], "'1e400'"),
])
def test_negative_or_infinite_dwell_is_an_error(values, shown):
    c = pd.DataFrame({"search_id": ["a", "a"], "rank": [1, 1], "dwell_ms": values})
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=_searches(), clicks=c)
    assert str(err.value).startswith(
        "DataFrame clicks=: column 'dwell_ms' (clicks.dwell_ms) must hold a finite number >= 0; "
        f"1 of 2 rows hold values that cannot be read as one, e.g. {shown}")


def test_text_timestamps_with_offsets_are_converted_to_utc():
    s = _searches(ts=["2024-05-01 12:00:00+02:00", "2024-05-01T10:30:00Z"])
    c = pd.DataFrame({"search_id": ["a", "b"], "rank": [1, 1],
                      "ts": ["2024-05-01 10:00:05", "2024-05-01 08:30:00-02"]})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    assert logs.con.execute("SELECT search_id, ts FROM searches ORDER BY 1").fetchall() == [
        ("a", T(2024, 5, 1, 10, 0)), ("b", T(2024, 5, 1, 10, 30))]
    assert logs.con.execute("SELECT ts FROM clicks ORDER BY 1").fetchall() == [
        (T(2024, 5, 1, 10, 0, 5),), (T(2024, 5, 1, 10, 30),)]


def test_timezone_aware_and_nanosecond_timestamps(rows):
    aware = pd.to_datetime(["2024-05-01 12:00:00+02:00", "2024-05-01 12:00:00+00:00"],
                           utc=True)
    logs = onlineeval.load_logs(searches=_searches(ts=aware), clicks=CLICKS)
    assert [r[2] for r in rows(logs, "searches")] == [T(2024, 5, 1, 10), T(2024, 5, 1, 12)]
    ns = pd.to_datetime(["2024-05-01 12:00:00.000000001", "2024-05-02 00:00:00.000000000"])
    logs = onlineeval.load_logs(searches=_searches(ts=ns), clicks=CLICKS)
    assert [r[2] for r in rows(logs, "searches")] == [T(2024, 5, 1, 12), T(2024, 5, 2)]


def test_integer_ids_with_missing_values_arrive_as_floats(rows):
    # pandas stores integer ids with a gap as float64; they must still join integer ids
    s = pd.DataFrame({"search_id": [1, 2, 3], "user_id": [10.0, np.nan, 11.0],
                      "ts": pd.to_datetime(["2024-01-01"] * 3)})
    c = pd.DataFrame({"search_id": [1.0, 3.0, np.nan], "rank": [1, 2, 1]})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    assert logs.report.excluded == {("searches", "null_required"): 1,
                                    ("clicks", "null_required"): 1}
    assert [r[:2] for r in rows(logs, "searches")] == [(1, 10), (3, 11)]
    assert [r[:2] for r in rows(logs, "clicks")] == [(1, 1), (3, 2)]
    bad = pd.DataFrame({"search_id": [1.5], "rank": [1]})
    with pytest.raises(SchemaError, match=r"search_id' \(clicks.search_id\) must hold an id.*'1\.5'"):
        onlineeval.load_logs(searches=s, clicks=bad)


def test_id_types_are_unified_across_tables(tmp_path, rows):
    # searches ids as integers (Parquet), clicks ids as text (CSV): joined as text
    s = pd.DataFrame({"search_id": np.array([1, 2], dtype="int32"), "user_id": [5, 6],
                      "ts": pd.to_datetime(["2024-01-01", "2024-01-02"])})
    s.to_parquet(tmp_path / "searches.parquet")
    (tmp_path / "clicks.csv").write_text("search_id,rank\n1,1\n3,1\n")
    r = pd.DataFrame({"search_id": np.array([1, 2], dtype="int64"), "rank": [1, 1],
                      "doc_id": [7, 8]})
    logs = onlineeval.load_logs(tmp_path, results=r)
    types = {v: dict((c, t) for c, t, *_ in logs.con.execute(f"DESCRIBE {v}").fetchall())
             for v in ("searches", "results", "clicks")}
    assert {types[v]["search_id"] for v in types} == {"VARCHAR"}
    assert types["results"]["doc_id"] == types["clicks"]["doc_id"] == "BIGINT"
    assert logs.report.excluded == {("clicks", "unknown_search"): 1}
    assert rows(logs, "clicks") == [("1", 1, 7, None, None)]


def test_common_id_type():
    assert common_id_type(["VARCHAR", "VARCHAR"]) is None
    assert common_id_type(["INTEGER", "BIGINT"]) == "BIGINT"
    assert common_id_type(["UBIGINT", "BIGINT"]) == "HUGEINT"
    assert common_id_type(["BIGINT", "VARCHAR"]) == "VARCHAR"
    assert common_id_type(["BIGINT", "NULL"]) == "BIGINT"
    assert common_id_type(["NULL"]) == "VARCHAR"


def test_json_columns_without_any_value(tmp_path, tiny_dir, rows):
    # JSON gives an all-null column the type NULL; it must still load with canonical types
    (tmp_path / "clicks.jsonl").write_text(
        '{"search_id": "s1", "rank": 1, "doc_id": null, "dwell_ms": null, "ts": null}\n'
        '{"search_id": "s1", "rank": 2, "doc_id": null, "dwell_ms": null, "ts": null}\n')
    logs = onlineeval.load_logs(searches=tiny_dir / "searches.csv",
                                results=tiny_dir / "results.csv",
                                clicks=tmp_path / "clicks.jsonl")
    assert rows(logs, "clicks") == [("s1", 1, "d1", None, None), ("s1", 2, "d2", None, None)]
    types = [t for _, t, *_ in logs.con.execute("DESCRIBE clicks").fetchall()]
    assert types == ["VARCHAR", "INTEGER", "VARCHAR", "TIMESTAMP", "DOUBLE"]
    (tmp_path / "searches.jsonl").write_text(
        '{"search_id": "s1", "user_id": "u", "ts": "2024-01-01", "session_id": null}\n')
    logs = onlineeval.load_logs(searches=tmp_path / "searches.jsonl",
                                clicks=tmp_path / "clicks.jsonl")
    types = dict((c, t) for c, t, *_ in logs.con.execute("DESCRIBE searches").fetchall())
    assert types["session_id"] == "VARCHAR" and types["ts"] == "TIMESTAMP"
    # a column without any value is treated as absent
    assert not logs.has("searches", "session_id")
    assert not logs.has("clicks", "dwell_ms") and not logs.has("clicks", "doc_id")
    assert logs.report.empty_columns == {"searches": ("session_id",),
                                         "clicks": ("doc_id", "ts", "dwell_ms")}


def test_empty_ts_column_means_a_log_without_times(tmp_path, rows):
    (tmp_path / "searches.csv").write_text("search_id,user_id,ts,query\na,u,,x\nb,u,,\n")
    (tmp_path / "clicks.csv").write_text("search_id,rank,ts\na,1,\n")
    logs = onlineeval.load_logs(tmp_path)
    assert logs.report.excluded == {}
    assert not logs.has("searches", "ts") and not logs.has("clicks", "ts")
    assert logs.has("searches", "query")
    assert rows(logs, "searches") == [("a", "u", None, None, "x", None, None, None),
                                      ("b", "u", None, None, None, None, None, None)]
    assert "searches: column(s) ts hold no value; treated as absent" in logs.report.summary()
    # one ts present: the column is real, and a row without ts is excluded
    (tmp_path / "searches.csv").write_text(
        "search_id,user_id,ts\na,u,2024-01-01 10:00:00\nb,u,\n")
    logs = onlineeval.load_logs(tmp_path)
    assert logs.has("searches", "ts")
    assert logs.report.excluded == {("searches", "null_required"): 1}


def test_non_text_query_becomes_text_and_an_integer_variant_stays_integer(rows):
    # a variant is compared as the log writes it (control=0), so its type is kept (issue 19)
    s = _searches(variant=[0, 1], query=[1.5, None])
    logs = onlineeval.load_logs(searches=s, clicks=CLICKS)
    assert [(r[4], r[6]) for r in rows(logs, "searches")] == [("1.5", 0), (None, 1)]
    # whole numbers pandas made floats (a missing value) are whole numbers again; a boolean
    # is text
    logs = onlineeval.load_logs(searches=_searches(variant=[1.0, None]), clicks=CLICKS)
    assert [r[6] for r in rows(logs, "searches")] == [1, None]
    logs = onlineeval.load_logs(searches=_searches(variant=[True, False]), clicks=CLICKS)
    assert [r[6] for r in rows(logs, "searches")] == ["true", "false"]


# --- words DuckDB takes for a time ----------------------------------------------------------------

# DuckDB reads 'epoch' as 1970-01-01 and 'infinity' as the end of time (so an 'epoch' search
# gave a time to first click of 54 years); PostgreSQL's other words may be taken by other
# DuckDB versions. In a log they are placeholders: every one is a bad value.
WORDS = ["epoch", "EPOCH", " epoch ", "infinity", "-infinity", "+infinity", "Infinity", "inf",
         "-inf", "now", "today", "yesterday", "tomorrow", "allballs"]


def _write_ts(tmp_path, fmt, table, value):
    """A two-row table of ``fmt`` whose second row's ts is ``value`` (text)."""
    rows = {"searches": {"search_id": ["a", "b"], "user_id": ["u", "u"]},
            "clicks": {"search_id": ["a", "a"], "rank": ["1", "2"]}}[table]
    df = pd.DataFrame({**rows, "ts": ["2024-05-01 10:00:00", value]})
    if fmt == "frame":
        return df, "DataFrame clicks=" if table == "clicks" else "DataFrame searches=", None
    path = tmp_path / f"{table}.{fmt}"
    if fmt == "csv":
        df.to_csv(path, index=False)
        where = "line 3"
    elif fmt == "jsonl":
        df.to_json(path, orient="records", lines=True)
        where = "line 2"
    else:
        df.to_parquet(path, index=False)  # ts is a string column
        where = "row 2"
    return path, str(path), where


@pytest.mark.parametrize(("fmt", "table", "word"), [
    *(("csv", "searches", w) for w in WORDS),
    *((f, t, w) for f in ("csv", "jsonl", "parquet", "frame") for t in ("searches", "clicks")
      for w in ("epoch", "-infinity")),
])
def test_words_that_duckdb_reads_as_times_are_bad_values(tmp_path, fmt, table, word):
    given, label, where = _write_ts(tmp_path, fmt, table, word)
    other = {"searches": _searches(ts=["2024-05-01 09:00:00", "2024-05-01 09:00:00"]),
             "clicks": CLICKS}
    other[table] = given
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=other["searches"], clicks=other["clicks"])
    msg = str(err.value)
    assert msg.startswith(f"{label}: column 'ts' ({table}.ts) must hold a timestamp")
    assert f"1 of 2 rows hold values that cannot be read as one, e.g. {word!r}" in msg
    if where:
        assert f"(on {where})" in msg if where.startswith("line") else f"(in {where})" in msg


def test_an_infinite_timestamp_in_a_timestamp_column_is_a_bad_value(tmp_path):
    import duckdb

    path = tmp_path / "searches.parquet"
    duckdb.connect().execute(
        "COPY (SELECT * FROM (VALUES ('a', 'u', TIMESTAMP '2024-05-01 10:00:00'), "
        "('b', 'u', 'infinity'::TIMESTAMP), ('c', 'u', '-infinity'::TIMESTAMP)) "
        "t(search_id, user_id, ts)) TO '" + str(path) + "' (FORMAT parquet)")
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=path, clicks=CLICKS)
    msg = str(err.value)
    assert msg.startswith(f"{path}: column 'ts' (searches.ts) must hold a timestamp")
    assert "2 of 3 rows" in msg and "'infinity'" in msg and "'-infinity'" in msg


def test_text_times_still_read_as_before():
    # leading blanks, ISO 'T', an offset: unchanged by the refusal of words
    s = _searches(ts=[" 2024-05-01 10:00:00", "2024-05-01T12:00:00+02:00"])
    logs = onlineeval.load_logs(searches=s, clicks=CLICKS)
    got = logs.con.execute("SELECT ts FROM searches ORDER BY search_id").fetchall()
    assert got == [(T(2024, 5, 1, 10),), (T(2024, 5, 1, 10),)]
