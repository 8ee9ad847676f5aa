"""Audit of the loader and converters: inputs that once gave wrong or silently changed rows.

Each test is a case found by comparing the loader/converters with an independent reading of
the same input (plain Python or pandas written in the test); expectations come from the input
text and the contract (issue 2 §2-§3), never from the code under test.
"""

from __future__ import annotations

import warnings
from datetime import datetime
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import LogFormatError, SchemaError
from onlineeval.logs.convert import convert

T = datetime
CLICKS = pd.DataFrame({"search_id": ["s1"], "rank": [1]})


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _searches(logs: onlineeval.Logs) -> list[tuple]:
    return logs.con.execute(
        "SELECT search_id, user_id, ts, variant FROM searches ORDER BY search_id").fetchall()


# --- parts of one table -----------------------------------------------------------------------

def test_csv_parts_with_columns_in_another_order_are_matched_by_name(tmp_path):
    # Read by position, part b's user id became the search id and the reverse.
    _write(tmp_path / "searches" / "a.csv", "search_id,user_id,ts\ns1,u1,2024-05-01 12:00:00\n")
    _write(tmp_path / "searches" / "b.csv", "user_id,search_id,ts\nu2,s2,2024-05-01 13:00:00\n")
    logs = onlineeval.load_logs(searches=tmp_path / "searches", clicks=CLICKS)
    assert _searches(logs) == [("s1", "u1", T(2024, 5, 1, 12), None),
                               ("s2", "u2", T(2024, 5, 1, 13), None)]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_column_only_some_parts_have_keeps_its_values(tmp_path, fmt):
    # With the first part's columns, the variant of part b was dropped without a word (Parquet)
    # or the table could not be read (CSV).
    a = pd.DataFrame({"search_id": ["s1"], "user_id": ["u1"], "ts": ["2024-05-01 12:00:00"]})
    b = pd.DataFrame({"search_id": ["s2"], "user_id": ["u2"], "ts": ["2024-05-01 13:00:00"],
                      "variant": ["treatment"]})
    folder = tmp_path / "searches"
    folder.mkdir()
    for name, df in (("a", a), ("b", b)):
        if fmt == "parquet":
            df.to_parquet(folder / f"{name}.parquet")
        else:
            df.to_csv(folder / f"{name}.csv", index=False)
    logs = onlineeval.load_logs(searches=folder, clicks=CLICKS)
    assert _searches(logs) == [("s1", "u1", T(2024, 5, 1, 12), None),
                               ("s2", "u2", T(2024, 5, 1, 13), "treatment")]
    assert logs.report.rows_read == {"searches": 2, "clicks": 1}


# --- timestamps given as text -----------------------------------------------------------------

def test_text_timestamps_with_a_zone_name_are_converted_to_utc(tmp_path):
    # DuckDB's TIMESTAMP cast ignores a trailing zone name, so these were read as 12:00.
    # Expected by hand: EST is UTC-5 all year; Berlin is on summer time (UTC+2) on 1 May;
    # GMT is UTC.
    path = _write(tmp_path / "searches.csv", (
        "search_id,user_id,ts\n"
        "a,u,2024-05-01 12:00:00 EST\n"
        "b,u,2024-05-01 12:00:00 Europe/Berlin\n"
        "c,u,2024-05-01 12:00:00 GMT\n"
        "d,u,2024-05-01 12:00:00\n"
    ))
    logs = onlineeval.load_logs(searches=path, clicks=CLICKS)
    assert [(r[0], r[2]) for r in _searches(logs)] == [
        ("a", T(2024, 5, 1, 17)), ("b", T(2024, 5, 1, 10)), ("c", T(2024, 5, 1, 12)),
        ("d", T(2024, 5, 1, 12))]


@pytest.mark.parametrize("text", ["2024-05-01 01:00:00 PM", "2024-05-01 12:00:00 XYZ"])
def test_text_after_the_time_that_is_no_zone_is_an_error(tmp_path, text):
    # '01:00:00 PM' was read as 01:00 (13:00 meant), 'XYZ' ignored: now a bad value that
    # names the file and column.
    path = _write(tmp_path / "searches.jsonl",
                  f'{{"search_id": "a", "user_id": "u", "ts": "{text}"}}\n')
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=path, clicks=CLICKS)
    assert str(err.value).startswith(f"{path}: column 'ts' (searches.ts) must hold a timestamp")
    assert repr(text) in str(err.value)


# --- aol ----------------------------------------------------------------------------------

@pytest.mark.parametrize("rank", ["\u00b2", "\u0661", "2147483648", "99999999999"])
def test_aol_item_rank_outside_ascii_or_integer_range_names_file_and_line(tmp_path, rank):
    # '²' made int() raise a bare ValueError, '١' (Arabic-Indic one) became rank 1, and a rank
    # beyond INTEGER failed deep inside DuckDB while writing Parquet.
    path = _write(tmp_path / "aol.txt", (
        "1\tq\t2006-03-01 07:17:12\t\t\n"
        f"1\tq\t2006-03-01 07:17:12\t{rank}\thttp://x\n"
    ))
    with pytest.raises(LogFormatError) as err:
        convert(path, tmp_path / "out", "aol")
    assert str(err.value).startswith(f"{path}:2: ItemRank (field 4) must be a positive integer (1 to 2,147,483,647, digits 0-9); got {rank!r}")
    assert not (tmp_path / "out").exists()


def _aol_reference(text: str) -> tuple[list[tuple], list[tuple]]:
    """An independent AOL reader: pages are runs of lines with equal user, query, time."""
    searches, clicks, key = [], [], None
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip() or (number == 1 and line.startswith("AnonID\t")):
            continue
        user, query, when, rank, url = (line.split("\t") + ["", ""])[:5]
        page = (user.strip(), query, datetime.strptime(when, "%Y-%m-%d %H:%M:%S"))
        if page != key:
            key = page
            searches.append((f"a{len(searches) + 1}", *page))
        if rank.strip():
            clicks.append((searches[-1][0], int(rank), url.strip()))
    return searches, clicks


def test_aol_adversarial_file_matches_an_independent_reader(tmp_path):
    text = (
        "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\r\n"
        "007\tfoo\t2006-03-01 07:17:12\t\t\r\n"              # page, then its clicks
        "007\tfoo\t2006-03-01 07:17:12\t2\thttp://x\r\n"
        "007\tfoo\t2006-03-01 07:17:12\t2\thttp://x\r\n"     # a repeated click line
        "007\tfoo\t2006-03-01 07:17:12\t\t\r\n"              # no-click line of the same page
        "007\tfoo\t2006-03-01 07:17:13\t1\thttp://y\r\n"     # same query, later: a new page
        "007\tfoo \t2006-03-01 07:17:13\t\t\r\n"             # other query text: a new page
        "007\tfo\ro\t2006-03-01 07:17:13\t\t\r\n"            # a CR inside the query is kept
        "\n"
        "008\t\t2006-03-01 07:17:13\n"                       # empty query, three fields
    )
    path = tmp_path / "aol.txt"
    path.write_bytes(text.encode("utf-8"))
    report = convert(path, tmp_path / "out", "aol")
    searches, clicks = _aol_reference(text)
    got_s = duckdb.sql(f"SELECT search_id, user_id, query, ts FROM "
                       f"read_parquet('{tmp_path / 'out' / 'searches.parquet'}')").fetchall()
    got_c = duckdb.sql(f"SELECT search_id, rank, doc_id FROM "
                       f"read_parquet('{tmp_path / 'out' / 'clicks.parquet'}')").fetchall()
    assert got_s == searches
    assert got_c == clicks
    assert len(searches) == 5 and len(clicks) == 3
    assert report.counts["pages"] == 5 and report.counts["clicks"] == 3
    assert report.counts["pages_with_clicks"] == len({c[0] for c in clicks}) == 2


# --- JSON lines: types DuckDB guesses from the first rows ---------------------------------------

def _json_searches(path: Path, n: int, last: str) -> Path:
    # more rows than DuckDB's type-detection sample (20,480), the odd one last
    lines = [f'{{"search_id": "s{i}", "user_id": "u", "ts": "2024-05-01 12:00:00"}}\n'
             for i in range(n)]
    lines.append(f'{{"search_id": "last", "user_id": "u", "ts": "{last}"}}\n')
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(("last", "utc"), [
    ("2024-05-01 12:00:00+02:00", T(2024, 5, 1, 10)),   # by hand: 12:00 at UTC+2
    ("2024-05-01 12:00:00 EST", T(2024, 5, 1, 17)),     # EST = UTC-5
    ("2024-05-01T12:00:00Z", T(2024, 5, 1, 12)),
])
def test_json_timestamp_with_a_zone_after_the_sample_rows_is_converted(tmp_path, last, utc):
    # DuckDB typed the column TIMESTAMP from the first rows and parsed the last row without
    # its zone (12:00).
    path = _json_searches(tmp_path / "searches.jsonl", 25_000, last)
    logs = onlineeval.load_logs(searches=path, clicks=CLICKS)
    got = logs.con.execute("SELECT ts FROM searches WHERE search_id = 'last'").fetchall()
    assert got == [(utc,)]
    assert logs.report.rows_read["searches"] == 25_001


def test_json_am_pm_time_after_the_sample_rows_is_an_error(tmp_path):
    # was read as 01:00 (13:00 meant)
    path = _json_searches(tmp_path / "searches.jsonl", 25_000, "2024-05-01 01:00:00 PM")
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=path, clicks=CLICKS)
    assert str(err.value).startswith(
        f"{path}: column 'ts' (searches.ts) must hold a timestamp (e.g. 2024-05-01 12:30:00); "
        "1 of 25,001 rows hold values that cannot be read as one, e.g. '2024-05-01 01:00:00 PM'")


def test_json_id_changing_type_after_the_sample_rows_is_explained(tmp_path):
    # DuckDB's message named a wrong line (it counts within a buffer) and no fix
    lines = [f'{{"search_id": {i}, "user_id": "u", "ts": "2024-05-01 12:00:00"}}\n'
             for i in range(25_000)]
    lines.append('{"search_id": "007", "user_id": "u", "ts": "2024-05-01 12:00:00"}\n')
    path = tmp_path / "searches.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(searches=path, clicks=CLICKS)
    text = str(err.value)
    assert text.startswith(f"{path}: cannot read the searches table: a value does not have the "
                           "type DuckDB chose for its column from the file's first rows")
    assert '"007"' in text and "give each column one JSON type in every row" in text
    assert "in line" not in text


# --- text in another encoding -------------------------------------------------------------------

@pytest.mark.parametrize("name", ["searches.csv", "searches.csv.gz", "searches.jsonl"])
def test_a_line_that_is_not_utf8_is_named(tmp_path, name):
    # DuckDB's message ended in one of its settings ("all_varchar = 1") and showed the header
    # as the bad line.
    import gzip

    if name.endswith("jsonl"):
        body = ('{"search_id": "s1", "user_id": "u1", "ts": "2024-05-01 12:00:00"}\n'
                '{"search_id": "s2", "user_id": "u1", "ts": "2024-05-01 12:00:00", '
                '"query": "caf\u00e9"}\n')
    else:
        body = "search_id,user_id,ts,query\ns1,u1,2024-05-01 12:00:00,caf\u00e9\n"
    data = body.encode("latin-1")
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(searches=path, clicks=CLICKS)
    # the e-acute is the only non-ASCII byte, on line 2
    line = body.splitlines()[1]
    assert str(err.value) == (
        f"{path}:2: the line is not valid UTF-8 text (invalid continuation byte at byte "
        f"{line.index(chr(0xE9)) + 1} of the line); text files must be UTF-8: convert it first "
        "(e.g. iconv -f latin1 -t utf-8)")


# --- folders of parts ---------------------------------------------------------------------------

def _part(path: Path, sid: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"search_id": [sid], "user_id": ["u"], "ts": ["2024-05-01 12:00:00"]}
                 ).to_parquet(path)


def test_parts_inside_an_underscore_folder_are_skipped(tmp_path):
    # Spark's _temporary/ holds attempt copies of the parts: reading them repeated s1, and
    # every row of s1 was then excluded as a duplicate search_id.
    folder = tmp_path / "searches"
    _part(folder / "part-0.parquet", "s1")
    _part(folder / "part-1.parquet", "s2")
    _part(folder / "_temporary" / "0" / "task" / "part-0.parquet", "s1")
    _part(folder / ".hidden" / "part-0.parquet", "s1")
    logs = onlineeval.load_logs(searches=folder, clicks=CLICKS)
    assert logs.report.rows_read["searches"] == 2
    assert logs.report.excluded == {}
    assert [r[0] for r in _searches(logs)] == ["s1", "s2"]


@pytest.mark.parametrize("name", ["part-2.csv.bz2", "000000_0"])
def test_a_part_without_a_known_extension_is_an_error(tmp_path, name):
    # it was skipped without a word, and its rows with it
    folder = tmp_path / "searches"
    _part(folder / "part-0.parquet", "s1")
    (folder / name).write_bytes(b"search_id,user_id,ts\ns2,u,2024-05-01 12:00:00\n")
    (folder / "_SUCCESS").write_text("")
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=folder, clicks=CLICKS)
    assert str(err.value).startswith(
        f"{folder}: the folder of table 'searches' holds file(s) without a known extension (")
    assert f"): {folder / name}; their rows would not be read." in str(err.value)


# --- duplicate search ids -------------------------------------------------------------------------

def test_a_search_id_with_a_twin_row_lacking_its_user_is_a_duplicate():
    # The README: a search_id on more than one searches row excludes every row of that id
    # ("which one is the page is unknowable"). A twin without user_id used to be excluded as
    # null_required alone, and the other row was kept with every click of the id.
    searches = pd.DataFrame({
        "search_id": ["s1", "s1", "s2", "s3", "s3"],
        "user_id": ["u1", None, "u2", None, None],
        "ts": ["2024-05-01 12:00:00"] * 5,
    })
    clicks = pd.DataFrame({"search_id": ["s1", "s1", "s2", "s3"], "rank": [1, 2, 1, 1]})
    logs = onlineeval.load_logs(searches=searches, clicks=clicks)
    # by hand: null_required = the three rows without user (s1's twin, both s3 rows);
    # duplicate_search_id = the remaining s1 row; s1's and s3's clicks: search_excluded
    assert logs.report.excluded == {
        ("searches", "null_required"): 3, ("searches", "duplicate_search_id"): 1,
        ("clicks", "search_excluded"): 3}
    assert logs.con.execute("SELECT search_id FROM searches").fetchall() == [("s2",)]
    assert logs.con.execute("SELECT search_id, rank FROM clicks").fetchall() == [("s2", 1)]


def test_a_rank_with_a_twin_row_lacking_its_doc_is_a_duplicate():
    # Same rule for results: (s1, 2, NULL) and (s1, 2, 'b') both claim rank 2. The second row
    # used to be kept (and a click at rank 2 credited to doc 'b').
    searches = pd.DataFrame({"search_id": ["s1"], "user_id": ["u1"],
                             "ts": ["2024-05-01 12:00:00"]})
    results = pd.DataFrame({"search_id": ["s1", "s1", "s1"], "rank": [1, 2, 2],
                            "doc_id": ["a", None, "b"]})
    clicks = pd.DataFrame({"search_id": ["s1", "s1"], "rank": [1, 2]})
    logs = onlineeval.load_logs(searches=searches, results=results, clicks=clicks)
    assert logs.report.excluded == {
        ("results", "null_required"): 1, ("results", "duplicate_rank"): 1,
        ("clicks", "not_on_page"): 1}
    assert logs.con.execute("SELECT rank, doc_id FROM results").fetchall() == [(1, "a")]
    assert logs.con.execute("SELECT rank, doc_id FROM clicks").fetchall() == [(1, "a")]


@pytest.mark.parametrize("fmt", ["frame", "parquet", "csv"])
def test_empty_text_ids_are_missing_in_every_format(tmp_path, fmt):
    # CSV reads "" as NULL; Parquet and DataFrames kept '' as a real id, so every search with
    # an empty user_id became one user (and per-user statistics one giant unit)
    s = pd.DataFrame({"search_id": ["a", "b", "", "d", "e"],
                      "user_id": ["u1", "", "u2", "u3", "u4"],
                      "ts": pd.to_datetime(["2024-01-01 10:00"] * 5),
                      "session_id": ["s1", "s2", "s3", "", "s4"]})
    c = pd.DataFrame({"search_id": ["a", "b", "", "e"], "rank": [1, 1, 1, 2]})
    if fmt == "frame":
        logs = onlineeval.load_logs(searches=s, clicks=c)
    else:
        for name, df in (("searches", s), ("clicks", c)):
            if fmt == "parquet":
                df.to_parquet(tmp_path / f"{name}.parquet")
            else:
                df.to_csv(tmp_path / f"{name}.csv", index=False)
        logs = onlineeval.load_logs(tmp_path)
    # b (no user), '' (no search_id) and d (no session in a log that gives sessions)
    assert logs.report.excluded[("searches", "null_required")] == 3
    kept = sorted(r[0] for r in logs.con.sql("SELECT search_id FROM searches").fetchall())
    assert kept == ["a", "e"]
    n_clicks = logs.con.sql("SELECT count(*) FROM clicks").fetchall()[0][0]
    assert n_clicks == 2  # the clicks of b and of the empty id go with their searches


def test_an_empty_results_table_warns_what_it_does():
    # a header-only results file makes every search zero-result and excludes every click:
    # true to the schema, but almost always a mistake, so it is said, not left to the numbers
    s = pd.DataFrame({"search_id": ["a", "b"], "user_id": ["u1", "u2"]})
    c = pd.DataFrame({"search_id": ["a"], "rank": [1]})
    r = pd.DataFrame({"search_id": pd.Series([], dtype=str), "rank": pd.Series([], dtype=int),
                      "doc_id": pd.Series([], dtype=str)})
    with pytest.warns(UserWarning, match="results table|no rows") as caught:
        logs = onlineeval.load_logs(searches=s, clicks=c, results=r)
    assert any("not_on_page" in str(w.message) for w in caught)
    assert logs.report.excluded == {("clicks", "not_on_page"): 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        onlineeval.load_logs(searches=s, clicks=c)  # no results table: no warning
