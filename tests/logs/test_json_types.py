"""JSON lines: a value whose JSON type differs from the rest of its column is an error naming
the file, the line and the column, wherever it is; a key first seen after DuckDB's sample of
the first rows is read, not dropped.

Was: inside DuckDB's sample an off-type value turned the column into JSON text (ids '"s1"',
quotes included, so every click was an unknown search and the CTR 0); after it, the value was
cast without a word (rank 1.5 became 2) and a key that first appeared late was not read.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import LogFormatError

TS = "2024-05-01 10:00:00"
SAMPLE = 20_480  # objects DuckDB reads to choose the columns and their types


def _lines(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _searches(n):
    return [{"search_id": f"s{i}", "user_id": f"u{i % 7}", "ts": TS} for i in range(n)]


def _clicks(n):
    return [{"search_id": f"s{i}", "rank": 1, "dwell_ms": 10} for i in range(n)]


# (table, column, odd value, words naming its type, words naming the others)
OFF_TYPE = [
    ("searches", "search_id", 7, "a whole number (7)", "strings"),
    ("searches", "search_id", {"a": 1}, 'an object ({"a": 1})', "strings"),
    ("searches", "search_id", ["s3"], 'an array (["s3"])', "strings"),
    ("searches", "user_id", 3.5, "a number with a fraction or exponent (3.5)", "strings"),
    ("searches", "ts", 1714557600, "a whole number (1714557600)", "strings"),
    ("searches", "ts", {"t": TS}, "an object", "strings"),
    ("clicks", "rank", "1", 'a string ("1")', "whole numbers"),
    ("clicks", "rank", True, "true or false (true)", "whole numbers"),
    ("clicks", "dwell_ms", "10", 'a string ("10")', "whole numbers"),
    ("clicks", "dwell_ms", [10], "an array ([10])", "whole numbers"),
    ("clicks", "ts", 5, "a whole number (5)", "strings"),
]


@pytest.mark.parametrize(("late", "line"), [(False, 4), (True, SAMPLE + 5)])
@pytest.mark.parametrize(("table", "column", "odd", "odd_words", "others"), OFF_TYPE)
def test_one_value_of_another_json_type_is_an_error_naming_file_line_and_column(
        tmp_path, table, column, odd, odd_words, others, late, line):
    n = line + 2
    searches, clicks = _searches(n), _clicks(n)
    if column == "ts" and table == "clicks":
        for c in clicks:
            c["ts"] = TS
    rows = searches if table == "searches" else clicks
    rows[line - 1][column] = odd
    s = _lines(tmp_path / "searches.jsonl", searches)
    c = _lines(tmp_path / "clicks.jsonl", clicks)
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(searches=s, clicks=c)
    path = s if table == "searches" else c
    text = str(err.value)
    why = ("a value does not have the type DuckDB chose for its column from the file's first "
           "rows: " if late else "")
    assert text.startswith(f"{path}: cannot read the {table} table: {why}line {line} holds "
                           f"{odd_words}")
    assert f"in column {column!r}, whose other values are {others}" in text
    assert "give each column one JSON type in every row" in text
    assert "\n" not in text


def test_a_first_row_of_another_type_is_named_too(tmp_path):
    rows = _searches(5)
    rows[0]["search_id"] = 1
    s = _lines(tmp_path / "s.jsonl", rows)
    c = _lines(tmp_path / "c.jsonl", _clicks(3))
    with pytest.raises(LogFormatError, match=r"s\.jsonl: cannot read the searches table: line 1 "
                                             r"holds a whole number \(1\) in column 'search_id', "
                                             r"whose other values are strings"):
        onlineeval.load_logs(searches=s, clicks=c)


def test_an_extra_column_of_mixed_types_says_how_to_leave_it_out(tmp_path):
    rows = _searches(4)
    for r in rows:
        r["country"] = "DE"
    rows[2]["country"] = 49
    s = _lines(tmp_path / "s.jsonl", rows)
    c = _lines(tmp_path / "c.jsonl", _clicks(3))
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(searches=s, clicks=c)
    assert "line 3 holds a whole number (49) in column 'country'" in str(err.value)
    assert "columns={'searches': {'country': None}}" in str(err.value)
    logs = onlineeval.load_logs(searches=s, clicks=c, columns={"searches": {"country": None}})
    assert logs.report.rows_read == {"searches": 4, "clicks": 3}


def test_whole_and_fractional_numbers_mix_in_a_number_column(tmp_path):
    # one JSON type "number": 10 and 2.5 are both dwell times
    clicks = _clicks(4)
    clicks[1]["dwell_ms"] = 2.5
    s = _lines(tmp_path / "s.jsonl", _searches(4))
    c = _lines(tmp_path / "c.jsonl", clicks)
    logs = onlineeval.load_logs(searches=s, clicks=c)
    got = logs.con.execute("SELECT sum(dwell_ms) FROM clicks").fetchall()[0][0]
    assert got == sum(r["dwell_ms"] for r in clicks)


def test_a_column_without_values_in_the_sample_keeps_its_later_values(tmp_path):
    # DuckDB types the column NULL from the sample; the later values were lost (dwell absent)
    n = SAMPLE + 100
    clicks = _clicks(n)
    for i, r in enumerate(clicks):
        r["dwell_ms"] = None if i < SAMPLE + 50 else i
    s = _lines(tmp_path / "s.jsonl", _searches(n))
    c = _lines(tmp_path / "c.jsonl", clicks)
    logs = onlineeval.load_logs(searches=s, clicks=c)
    assert logs.has("clicks", "dwell_ms")
    got = logs.con.execute("SELECT count(dwell_ms), sum(dwell_ms) FROM clicks").fetchall()[0]
    values = [r["dwell_ms"] for r in clicks if r["dwell_ms"] is not None]
    assert got == (len(values), sum(values))


def test_a_key_first_seen_after_the_sample_is_read(tmp_path):
    # an experiment starting mid-log: its variant key appears only in later rows, and was
    # not read at all (every search counted in one group)
    n = SAMPLE + 1000
    searches = _searches(n)
    for i in range(SAMPLE + 10, n):
        searches[i]["variant"] = "treatment" if i % 3 else "control"
    s = _lines(tmp_path / "s.jsonl", searches)
    c = _lines(tmp_path / "c.jsonl", _clicks(10))
    logs = onlineeval.load_logs(searches=s, clicks=c)
    assert logs.has("searches", "variant")
    got = dict(logs.con.execute("SELECT variant, count(*) FROM searches GROUP BY ALL").fetchall())
    expected = pd.Series([r.get("variant") for r in searches]).value_counts(dropna=False)
    assert got == {(None if pd.isna(k) else k): v for k, v in expected.items()}


def test_a_late_key_differing_from_a_column_only_in_case_is_named(tmp_path):
    n = SAMPLE + 10
    searches = _searches(n)
    searches[SAMPLE + 3]["Search_ID"] = searches[SAMPLE + 3].pop("search_id")
    s = _lines(tmp_path / "s.jsonl", searches)
    c = _lines(tmp_path / "c.jsonl", _clicks(3))
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(searches=s, clicks=c)
    assert str(err.value) == (
        f"{s}:{SAMPLE + 4}: cannot read the searches table: key 'Search_ID' differs from "
        "column 'search_id' only in case, which SQL cannot tell apart (names ignore case); "
        "give the key one spelling")


def test_keys_differing_only_in_case_in_one_object_name_the_line(tmp_path):
    s = tmp_path / "s.jsonl"
    s.write_text('{"search_id": "a", "user_id": "u"}\n'
                 '{"search_id": "b", "Search_ID": "c", "user_id": "u"}\n', encoding="utf-8")
    c = _lines(tmp_path / "c.jsonl", _clicks(1))
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(searches=s, clicks=c)
    assert str(err.value) == (
        f"{s}:2: cannot read as JSON lines: the object holds keys 'search_id' and 'Search_ID', "
        "which SQL cannot tell apart (names ignore case); rename or drop one")


def test_consistent_json_logs_load_as_before(tmp_path, tiny_dir, tiny_frames):
    expected = onlineeval.load_logs(tiny_dir)
    for t, df in tiny_frames().items():
        df.to_json(tmp_path / f"{t}.jsonl", orient="records", lines=True)
    logs = onlineeval.load_logs(tmp_path)
    for view in ("searches", "results", "clicks"):
        q = f"SELECT * FROM {view} ORDER BY ALL"
        assert logs.con.execute(q).fetchall() == expected.con.execute(q).fetchall()
    assert logs.report.excluded == expected.report.excluded
