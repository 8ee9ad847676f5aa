"""The columns= mapping: per-table and flat forms, and every way it can be wrong."""

from __future__ import annotations

import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import SchemaError


def _renamed(tiny_frames):
    """The tiny log with the names a foreign log might use."""
    f = tiny_frames()
    f["searches"] = f["searches"].rename(columns={"search_id": "qid", "user_id": "uid",
                                                  "ts": "time", "variant": "arm"})
    f["results"] = f["results"].rename(columns={"search_id": "qid", "rank": "pos"})
    f["clicks"] = f["clicks"].rename(columns={"search_id": "qid", "rank": "pos", "ts": "time"})
    return f


def _expected(tiny_dir, rows):
    logs = onlineeval.load_logs(tiny_dir)
    return {t: rows(logs, t) for t in ("searches", "results", "clicks")}, logs.report.excluded


def _got(logs, rows):
    return ({t: rows(logs, t) for t in ("searches", "results", "clicks")}, logs.report.excluded)


def test_per_table_mapping(tiny_dir, rows, tiny_frames):
    columns = {
        "searches": {"qid": "search_id", "uid": "user_id", "time": "ts", "arm": "variant"},
        "results": {"qid": "search_id", "pos": "rank"},
        "clicks": {"qid": "search_id", "pos": "rank", "time": "ts"},
    }
    logs = onlineeval.load_logs(**_renamed(tiny_frames), columns=columns)
    assert _got(logs, rows) == _expected(tiny_dir, rows)
    assert logs.has("searches", "variant") and logs.has("clicks", "ts")


def test_flat_mapping_applies_to_every_table_with_the_column(tiny_dir, rows, tiny_frames):
    columns = {"qid": "search_id", "uid": "user_id", "time": "ts", "arm": "variant",
               "pos": "rank"}
    logs = onlineeval.load_logs(**_renamed(tiny_frames), columns=columns)
    assert _got(logs, rows) == _expected(tiny_dir, rows)


def test_mapping_to_none_drops_a_column(tiny_dir, rows):
    logs = onlineeval.load_logs(tiny_dir, columns={"clicks": {"dwell_ms": None}})
    assert not logs.has("clicks", "dwell_ms")
    assert {r[4] for r in rows(logs, "clicks")} == {None}


def test_mapping_naming_a_missing_column_names_file_and_column(tiny_dir, tiny_frames):
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(tiny_dir, columns={"searches": {"sid": "search_id"}})
    msg = str(err.value)
    assert "searches.csv" in msg and "no column 'sid'" in msg
    assert "its columns are: search_id, user_id, ts, query, experiment, variant" in msg
    with pytest.raises(SchemaError, match="no table has a column 'quid'"):
        onlineeval.load_logs(tiny_dir, columns={"quid": "search_id"})
    with pytest.raises(SchemaError, match=r"did you mean 'qid'\?"):
        onlineeval.load_logs(**_renamed(tiny_frames), columns={"searches": {"qidd": "search_id"}})


def test_mapping_to_a_non_canonical_name(tiny_dir):
    with pytest.raises(SchemaError, match=r"'sesion_id', which is not a canonical searches "
                                          r"column \(did you mean 'session_id'\?\)"):
        onlineeval.load_logs(tiny_dir, columns={"searches": {"user_id": "sesion_id"}})
    with pytest.raises(SchemaError, match="not a canonical column"):
        onlineeval.load_logs(tiny_dir, columns={"query": "querry"})


def test_mapping_onto_an_existing_column_is_a_conflict(tiny_dir):
    with pytest.raises(SchemaError, match="both 'search_id' and 'query' would become searches "
                                          "column 'search_id'"):
        onlineeval.load_logs(tiny_dir, columns={"searches": {"query": "search_id"}})


def test_mapping_for_a_table_not_given(tiny_dir):
    with pytest.raises(SchemaError, match="no results table was given"):
        onlineeval.load_logs(searches=tiny_dir / "searches.csv", clicks=tiny_dir / "clicks.csv",
                             columns={"results": {"a": "rank"}})


def test_malformed_mappings():
    s = pd.DataFrame({"search_id": ["a"], "user_id": ["u"]})
    c = pd.DataFrame({"search_id": ["a"], "rank": [1]})
    with pytest.raises(SchemaError, match="columns= must be a dict; got list"):
        onlineeval.load_logs(searches=s, clicks=c, columns=["a"])
    with pytest.raises(SchemaError, match="mixes per-table entries"):
        onlineeval.load_logs(searches=s, clicks=c,
                             columns={"searches": {"a": "search_id"}, "b": {"x": "y"}})
    with pytest.raises(SchemaError, match="keys and values must be column names"):
        onlineeval.load_logs(searches=s, clicks=c, columns={"search_id": 3})


def test_missing_required_column_suggests_a_mapping(tiny_dir, tiny_frames):
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(**_renamed(tiny_frames))
    msg = str(err.value)
    assert "DataFrame searches=: the searches table lacks required column(s) 'search_id', " \
           "'user_id'" in msg
    assert "its columns are: qid, uid, time" in msg
    assert "columns={'searches': {'<your column>': 'search_id'}}" in msg
    clicks = pd.DataFrame({"search_id": ["s1"], "dwell_ms": [1.0]})
    with pytest.raises(SchemaError, match="lacks required column.*'rank or doc_id'"):
        onlineeval.load_logs(searches=tiny_dir / "searches.csv", clicks=clicks)


def test_quotes_and_sql_in_column_names_are_data():
    evil = 'x"; DROP TABLE searches; --'
    quote = "it's"
    s = pd.DataFrame({evil: ["a", "b"], quote: ["u", "v"],
                      "ts": pd.to_datetime(["2024-01-01", "2024-01-02"]),
                      'country "code"': ["de", "fr"]})
    c = pd.DataFrame({evil: ["a", "zz"], "rank": [1, 1]})
    logs = onlineeval.load_logs(
        searches=s, clicks=c,
        columns={"searches": {evil: "search_id", quote: "user_id"},
                 "clicks": {evil: "search_id"}})
    assert logs.report.excluded == {("clicks", "unknown_search"): 1}
    assert logs.con.execute(
        'SELECT search_id, user_id, "country ""code""" FROM searches ORDER BY 1').fetchall() == [
        ("a", "u", "de"), ("b", "v", "fr")]
    assert logs.extra_columns("searches") == ('country "code"',)
    with pytest.raises(SchemaError, match="no column 'x\"; DROP TABLE"):
        onlineeval.load_logs(searches=s, clicks=c, columns={"clicks": {evil + "2": "rank"}})


def test_extra_columns_only_kept_in_searches_and_never_shadow_other_tables():
    s = pd.DataFrame({"search_id": ["a"], "user_id": ["u"], "ts": [pd.Timestamp("2024-01-01")],
                      "country": ["de"], "dwell_ms": [3.0]})
    c = pd.DataFrame({"search_id": ["a"], "rank": [1], "user_id": ["u"]})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    assert logs.extra_columns("searches") == ("country",)
    cols = [r[0] for r in logs.con.execute("DESCRIBE searches").fetchall()]
    assert cols[-1] == "country" and "dwell_ms" not in cols
    assert [r[0] for r in logs.con.execute("DESCRIBE clicks").fetchall()] == [
        "search_id", "rank", "doc_id", "ts", "dwell_ms"]
    assert logs.has("searches", "country") and not logs.has("clicks", "user_id")


def test_column_names_differing_only_in_case_are_matched():
    s = pd.DataFrame({"Search_ID": ["a"], "USER_ID": ["u"], "Ts": [pd.Timestamp("2024-01-01")],
                      "Query": ["shoes"], "Country": ["de"]})
    c = pd.DataFrame({"search_id": ["a"], "Rank": [1]})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    assert logs.con.execute("SELECT search_id, user_id, query, country FROM searches").fetchall() \
        == [("a", "u", "shoes", "de")]
    assert logs.has("searches", "query") and logs.has("clicks", "rank")
    assert logs.extra_columns("searches") == ("Country",)
    # a mapped column may not collide with another spelling of its target
    with pytest.raises(SchemaError, match="both 'Search_ID' and 'Query' would become searches "
                                          r"column 'search_id' \(SQL names ignore case\)"):
        onlineeval.load_logs(searches=s, clicks=c, columns={"searches": {"Query": "search_id"}})
    with pytest.raises(SchemaError, match="has columns 'Query' and 'query', which SQL cannot "
                                          "tell apart"):
        onlineeval.load_logs(searches=s.assign(query=["boots"]), clicks=c)
