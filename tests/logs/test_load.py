"""load_logs on hand-made logs: exact exclusion counts, clean views, filling, strict mode."""

from __future__ import annotations

import datetime as dt

import duckdb
import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import InvalidParameterError, StrictModeError

T = dt.datetime

# Worked out by hand from tests/data/logs/tiny (see its PROVENANCE.md, row by row).
TINY_EXCLUDED = {
    ("searches", "null_required"): 2,
    ("searches", "duplicate_search_id"): 2,
    ("results", "null_required"): 1,
    ("results", "rank_below_1"): 1,
    ("results", "duplicate_rank"): 2,
    ("results", "search_excluded"): 1,
    ("results", "unknown_search"): 1,
    ("clicks", "null_required"): 2,
    ("clicks", "rank_below_1"): 1,
    ("clicks", "search_excluded"): 2,
    ("clicks", "unknown_search"): 1,
    ("clicks", "not_on_page"): 4,
}


def test_public_names():
    assert onlineeval.load_logs is onlineeval.logs.load_logs
    assert onlineeval.Logs.__name__ == "Logs"
    assert onlineeval.LoadReport.__name__ == "LoadReport"


def test_tiny_exclusion_counts_are_exact(tiny_dir):
    logs = onlineeval.load_logs(tiny_dir)
    r = logs.report
    assert r.rows_read == {"searches": 8, "results": 11, "clicks": 14}
    assert r.excluded == TINY_EXCLUDED
    assert r.excluded_total == 20
    assert [r.rows_kept(t) for t in ("searches", "results", "clicks")] == [4, 5, 4]
    # the views hold exactly the kept rows
    for t, n in (("searches", 4), ("results", 5), ("clicks", 4)):
        assert logs.con.execute(f"SELECT count(*) FROM {t}").fetchall() == [(n,)]


def test_tiny_clean_views(tiny_dir, rows):
    logs = onlineeval.load_logs(tiny_dir)
    assert rows(logs, "searches") == [
        ("s1", "u1", T(2024, 5, 1, 10, 0), None, "q a", "e1", "control", 3),
        ("s2", "u1", T(2024, 5, 1, 10, 2), None, "q b", "e1", "control", 1),
        ("s3", "u2", T(2024, 5, 1, 11, 0), None, "q c", "e1", "treatment", 1),
        ("s7", "u4", T(2024, 5, 1, 13, 0), None, None, "e1", "control", 0),
    ]
    assert rows(logs, "results") == [
        ("s1", 1, "d1", None), ("s1", 2, "d2", None), ("s1", 3, "d3", None),
        ("s2", 1, "d4", None), ("s3", 1, "d6", None),
    ]
    # the click on s1 rank 3 gets doc d3, the click on s1 doc d2 gets rank 2
    assert rows(logs, "clicks") == [
        ("s1", 1, "d1", T(2024, 5, 1, 10, 0, 10), 5000.0),
        ("s1", 2, "d2", T(2024, 5, 1, 10, 1), 45000.0),
        ("s1", 3, "d3", T(2024, 5, 1, 10, 0, 40), None),
        ("s3", 1, "d6", T(2024, 5, 1, 11, 0, 20), None),
    ]


def test_view_columns_and_types(tiny_dir):
    logs = onlineeval.load_logs(tiny_dir)

    def schema(view):
        return [(c, t) for c, t, *_ in logs.con.execute(f"DESCRIBE {view}").fetchall()]

    assert schema("searches") == [
        ("search_id", "VARCHAR"), ("user_id", "VARCHAR"), ("ts", "TIMESTAMP"),
        ("session_id", "VARCHAR"), ("query", "VARCHAR"), ("experiment", "VARCHAR"),
        ("variant", "VARCHAR"), ("n_results", "INTEGER"),
    ]
    assert schema("results") == [
        ("search_id", "VARCHAR"), ("rank", "INTEGER"), ("doc_id", "VARCHAR"),
        ("team", "VARCHAR"),
    ]
    assert schema("clicks") == [
        ("search_id", "VARCHAR"), ("rank", "INTEGER"), ("doc_id", "VARCHAR"),
        ("ts", "TIMESTAMP"), ("dwell_ms", "DOUBLE"),
    ]


def test_has_and_has_results(tiny_dir):
    logs = onlineeval.load_logs(tiny_dir)
    assert logs.has("searches", "ts") and logs.has("clicks", "dwell_ms")
    assert not logs.has("searches", "session_id")
    assert not logs.has("searches", "n_results")  # derived, not provided
    assert logs.has("clicks", "doc_id") and logs.has("results", "rank")
    assert not logs.has("results", "team")
    assert logs.has_results
    assert logs.report.provided["searches"] == (
        "search_id", "user_id", "ts", "query", "experiment", "variant")
    with pytest.raises(InvalidParameterError, match="unknown table 'serches'"):
        logs.has("serches", "ts")
    assert str(tiny_dir) in logs.source


def test_summary_lists_counts_per_reason(tiny_dir):
    text = onlineeval.load_logs(tiny_dir).report.summary()
    assert "searches 8 rows (4 excluded), results 11 rows (6 excluded)" in text
    assert "clicks 14 rows (10 excluded)" in text
    assert ("clicks: 4 rows excluded (not_on_page): the clicked rank/doc_id is not among the "
            "page's results") in text
    assert ("searches: 2 rows excluded (duplicate_search_id): its search_id occurs on more than "
            "one searches row") in text
    clean = onlineeval.load_logs(
        searches=pd.DataFrame({"search_id": ["a"], "user_id": ["u"],
                               "ts": [pd.Timestamp("2024-01-01")]}),
        clicks=pd.DataFrame({"search_id": ["a"], "rank": [1]}),
    ).report.summary()
    assert "no rows excluded" in clean and "searches 1 row," in clean


def test_strict_mode_lists_counts_and_examples(tiny_dir):
    with pytest.raises(StrictModeError) as err:
        onlineeval.load_logs(tiny_dir, strict=True)
    msg = str(err.value)
    assert "20 rows" in msg
    assert ("searches: 2 rows (duplicate_search_id): its search_id occurs on more than one "
            "searches row") in msg
    assert "search_id='s4', user_id='u3', ts=2024-05-01 11:05:00, query='q e'" in msg
    assert "search_id='s8'" in msg
    assert "search_id=NULL, rank=1, doc_id='d1'" in msg
    assert ("clicks: 4 rows (not_on_page): the clicked rank/doc_id is not among the page's "
            "results") in msg
    # a clean log passes strict mode
    logs = onlineeval.load_logs(
        searches=pd.DataFrame({"search_id": ["a"], "user_id": ["u"],
                               "ts": [pd.Timestamp("2024-01-01")]}),
        clicks=pd.DataFrame({"search_id": ["a"], "rank": [1]}), strict=True)
    assert logs.report.excluded_total == 0


def test_no_results_table(rows):
    s = pd.DataFrame({"search_id": [1, 2], "user_id": [7, 7],
                      "ts": pd.to_datetime(["2024-01-01", "2024-01-02"])})
    c = pd.DataFrame({"search_id": [1, 1, 3], "rank": [1, 9, 1]})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    assert not logs.has_results
    assert logs.con.execute("SELECT count(*) FROM results").fetchall() == [(0,)]
    # without results nothing can be "not on the page"; the click on search 3 is unknown
    assert logs.report.excluded == {("clicks", "unknown_search"): 1}
    assert rows(logs, "clicks") == [(1, 1, None, None, None), (1, 9, None, None, None)]
    assert rows(logs, "searches") == [
        (1, 7, T(2024, 1, 1), None, None, None, None, None),
        (2, 7, T(2024, 1, 2), None, None, None, None, None),
    ]
    types = dict((c, t) for c, t, *_ in logs.con.execute("DESCRIBE results").fetchall())
    assert types["search_id"] == "BIGINT" and types["rank"] == "INTEGER"


def test_n_results_given_is_kept_not_recounted(rows):
    s = pd.DataFrame({"search_id": ["a", "b"], "user_id": ["u", "u"],
                      "ts": pd.to_datetime(["2024-01-01", "2024-01-02"]),
                      "n_results": [10, 0]})
    r = pd.DataFrame({"search_id": ["a"], "rank": [1], "doc_id": ["x"]})
    c = pd.DataFrame({"search_id": ["a"], "doc_id": ["x"]})
    logs = onlineeval.load_logs(searches=s, results=r, clicks=c)
    assert logs.has("searches", "n_results")
    assert logs.con.execute(
        "SELECT search_id, n_results FROM searches ORDER BY 1").fetchall() == [("a", 10), ("b", 0)]
    # rank filled from results for a doc-only click log
    assert rows(logs, "clicks") == [("a", 1, "x", None, None)]
    assert not logs.has("clicks", "rank")


def test_doc_only_click_on_doc_shown_twice_gets_its_best_rank(rows):
    s = pd.DataFrame({"search_id": ["a"], "user_id": ["u"], "ts": [pd.Timestamp("2024-01-01")]})
    r = pd.DataFrame({"search_id": ["a", "a", "a"], "rank": [1, 2, 3], "doc_id": ["x", "y", "x"]})
    c = pd.DataFrame({"search_id": ["a", "a"], "doc_id": ["x", "z"]})
    logs = onlineeval.load_logs(searches=s, results=r, clicks=c)
    assert rows(logs, "clicks") == [("a", 1, "x", None, None)]
    assert logs.report.excluded == {("clicks", "not_on_page"): 1}


def test_duplicate_ranks_above_63_are_found_exactly(rows):
    # ranks > 63 fall outside the per-search bitmask; the exact check must still count them
    s = pd.DataFrame({"search_id": ["a", "b"], "user_id": ["u", "u"],
                      "ts": pd.to_datetime(["2024-01-01", "2024-01-02"])})
    r = pd.DataFrame({"search_id": ["a", "a", "a", "b", "b", "b"],
                      "rank": [100, 100, 64, 64, 65, 1], "doc_id": list("xyzuvw")})
    c = pd.DataFrame({"search_id": ["a", "b"], "rank": [64, 65]})
    logs = onlineeval.load_logs(searches=s, results=r, clicks=c)
    assert logs.report.excluded == {("results", "duplicate_rank"): 2}
    assert rows(logs, "results") == [("a", 64, "z", None), ("b", 1, "w", None),
                                     ("b", 64, "u", None), ("b", 65, "v", None)]
    assert logs.con.execute(
        "SELECT search_id, n_results FROM searches ORDER BY 1").fetchall() == [("a", 1), ("b", 3)]


def test_clean_log_views_have_no_joins(tmp_path):
    """Performance contract: a log without exclusions is read through plain projections."""
    s = pd.DataFrame({"search_id": ["a", "b"], "user_id": ["u", "v"],
                      "ts": pd.to_datetime(["2024-01-01", "2024-01-02"]), "n_results": [2, 1]})
    r = pd.DataFrame({"search_id": ["a", "a", "b"], "rank": [1, 2, 1],
                      "doc_id": ["x", "y", "z"]}).astype({"rank": "int32"})
    c = pd.DataFrame({"search_id": ["a"], "rank": [2], "doc_id": ["y"]}).astype({"rank": "int32"})
    for name, df in (("searches", s), ("results", r), ("clicks", c)):
        df.to_parquet(tmp_path / f"{name}.parquet")
    logs = onlineeval.load_logs(tmp_path)
    assert logs.report.excluded_total == 0
    views = dict(logs.con.execute(
        "SELECT view_name, sql FROM duckdb_views() WHERE view_name IN "
        "('searches', 'results', 'clicks', '_oe_base_searches', '_oe_typed_searches', "
        "'_oe_typed_results', '_oe_typed_clicks')").fetchall())
    assert len(views) == 7
    for name, sql in views.items():
        assert "JOIN" not in sql.upper(), name
    # canonical Parquet columns are not converted
    assert "rank AS rank" in views["_oe_typed_results"]
    assert "CAST(rank" not in views["_oe_typed_results"]


def test_exclusions_only_add_the_filters_needed():
    s = pd.DataFrame({"search_id": ["a", "b", "b"], "user_id": ["u", "v", "v"],
                      "ts": pd.to_datetime(["2024-01-01"] * 3)})
    c = pd.DataFrame({"search_id": ["a"], "rank": [1]})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    sql = dict(logs.con.execute("SELECT view_name, sql FROM duckdb_views()").fetchall())
    assert "ANTI JOIN" in sql["_oe_base_searches"]
    assert "WHERE" not in sql["_oe_base_searches"]  # no null rows, so no null filter
    assert "JOIN" not in sql["clicks"]


def test_second_load_into_same_connection_replaces_views(tiny_dir):
    con = duckdb.connect()
    onlineeval.load_logs(tiny_dir, con=con)
    logs = onlineeval.load_logs(
        searches=pd.DataFrame({"search_id": ["z"], "user_id": ["u"],
                               "ts": [pd.Timestamp("2024-01-01")]}),
        clicks=pd.DataFrame({"search_id": ["z"], "rank": [1]}), con=con)
    assert logs.con is con
    assert con.execute("SELECT search_id FROM searches").fetchall() == [("z",)]
    assert con.execute("SELECT count(*) FROM results").fetchall() == [(0,)]
    assert con.execute("SELECT count(*) FROM clicks").fetchall() == [(1,)]


def test_file_backed_connection_gets_only_temporary_objects(tiny_dir, tmp_path):
    con = duckdb.connect(str(tmp_path / "db.duckdb"))
    onlineeval.load_logs(tiny_dir, con=con)
    persistent = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT temporary UNION ALL "
        "SELECT view_name FROM duckdb_views() WHERE NOT temporary AND NOT internal").fetchall()
    assert persistent == []


# --- excluded rows reach Python users as a warning ------------------------------------------

def _excluded_warnings(caught):
    from onlineeval.errors import ExcludedRowsWarning

    return [w for w in caught if issubclass(w.category, ExcludedRowsWarning)]


def test_load_logs_warns_once_with_the_excluded_rows_by_table_and_reason(tiny_dir):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        onlineeval.load_logs(tiny_dir)
    found = _excluded_warnings(caught)
    assert len(found) == 1
    text = str(found[0].message)
    total = sum(TINY_EXCLUDED.values())
    assert text.startswith(f"{tiny_dir}: {total} rows excluded from the clean views (")
    for (table, reason), n in TINY_EXCLUDED.items():
        assert f"{n} {reason}" in text.split(f"{table}: ", 1)[1].split(";")[0]
    assert found[0].filename == __file__  # points at the caller's line


def test_a_clean_log_and_strict_mode_do_not_warn(tiny_frames):
    import warnings

    frames = tiny_frames()
    s = frames["searches"].dropna().drop_duplicates("search_id", keep=False)
    c = pd.DataFrame({"search_id": s.search_id.iloc[:1], "rank": ["1"]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        logs = onlineeval.load_logs(searches=s, clicks=c)
        assert logs.report.excluded_total == 0
        with pytest.raises(StrictModeError):
            onlineeval.load_logs(searches=frames["searches"], clicks=c, strict=True)
    assert _excluded_warnings(caught) == []


@pytest.mark.parametrize("command", ["online", "positions", "abtest"])
def test_the_cli_prints_the_exclusions_once(tiny_dir, capsys, command):
    from onlineeval.cli import main

    main([command, str(tiny_dir)])
    err = capsys.readouterr().err
    assert err.count("searches: 2 rows excluded (null_required)") == 1
    assert "excluded from the clean views" not in err
