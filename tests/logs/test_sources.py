"""File formats and paths: every format gives the same views; bad paths are clear errors."""

from __future__ import annotations

import gzip
import shutil

import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import LogFormatError, SchemaError
from onlineeval.logs.sources import file_format

TABLES = ("searches", "results", "clicks")


def _snapshot(logs, rows):
    return ({t: rows(logs, t) for t in TABLES}, logs.report.rows_read, logs.report.excluded)


@pytest.mark.parametrize("fmt", ["csv", "csv.gz", "tsv", "parquet", "jsonl", "parts"])
def test_every_format_gives_identical_views(tmp_path, tiny_dir, fmt, tiny_frames, rows,
                                            write_frames):
    expected = _snapshot(onlineeval.load_logs(tiny_dir), rows)
    write_frames(tiny_frames(), tmp_path / fmt, fmt)
    assert _snapshot(onlineeval.load_logs(tmp_path / fmt), rows) == expected


def test_dataframes_and_single_paths_and_globs(tmp_path, tiny_dir, tiny_frames, rows,
                                               write_frames):
    expected = _snapshot(onlineeval.load_logs(tiny_dir), rows)
    frames = tiny_frames()
    assert _snapshot(onlineeval.load_logs(**frames), rows) == expected
    write_frames(frames, tmp_path / "parts", "parts")
    by_glob = onlineeval.load_logs(
        searches=str(tmp_path / "parts" / "searches" / "part-*.parquet"),
        results=tmp_path / "parts" / "results",
        clicks=tiny_dir / "clicks.csv",
    )
    assert _snapshot(by_glob, rows) == expected


def test_table_argument_overrides_the_directory(tiny_dir):
    clicks = pd.DataFrame({"search_id": ["s1"], "rank": ["1"]})
    logs = onlineeval.load_logs(tiny_dir, clicks=clicks)
    assert logs.report.rows_read["clicks"] == 1
    assert "clicks" not in {t for t, _ in logs.report.excluded}


def test_results_table_is_optional_on_disk(tmp_path, tiny_dir):
    shutil.copy(tiny_dir / "searches.csv", tmp_path)
    shutil.copy(tiny_dir / "clicks.csv", tmp_path)
    logs = onlineeval.load_logs(tmp_path)
    assert not logs.has_results
    assert "results" not in logs.report.rows_read


def test_file_format_by_extension():
    assert file_format("a/b.PARQUET") == "parquet"
    assert file_format("x.csv.gz") == "csv"
    assert file_format("x.ndjson") == "json"
    assert file_format("x.xlsx") is None


def test_missing_clicks_table_is_named(tmp_path, tiny_dir):
    shutil.copy(tiny_dir / "searches.csv", tmp_path)
    with pytest.raises(SchemaError, match=r"no clicks table found .*needs searches and clicks"):
        onlineeval.load_logs(tmp_path)


def test_path_must_be_a_directory(tiny_dir, tmp_path):
    with pytest.raises(SchemaError, match="must be a directory.*a file"):
        onlineeval.load_logs(tiny_dir / "searches.csv")
    with pytest.raises(SchemaError, match="missing"):
        onlineeval.load_logs(tmp_path / "nope")
    with pytest.raises(SchemaError, match="no such file or folder"):
        onlineeval.load_logs(searches=tmp_path / "nope.csv", clicks=tiny_dir / "clicks.csv")
    with pytest.raises(SchemaError, match="matches no file"):
        onlineeval.load_logs(searches=str(tmp_path / "*.csv"), clicks=tiny_dir / "clicks.csv")
    with pytest.raises(SchemaError, match="must be a path .* a pandas DataFrame, a pyarrow .* got int"):
        onlineeval.load_logs(searches=3, clicks=tiny_dir / "clicks.csv")


def test_two_files_for_one_table(tmp_path, tiny_dir):
    for name in ("searches.csv", "clicks.csv"):
        shutil.copy(tiny_dir / name, tmp_path)
    pd.read_csv(tiny_dir / "searches.csv").to_parquet(tmp_path / "searches.parquet")
    with pytest.raises(SchemaError, match="several files hold table 'searches'"):
        onlineeval.load_logs(tmp_path)


def test_unknown_extension_and_mixed_parts(tmp_path, tiny_dir):
    (tmp_path / "s.txt").write_text("search_id\n")
    with pytest.raises(SchemaError, match=r"s\.txt: cannot tell the format"):
        onlineeval.load_logs(searches=tmp_path / "s.txt", clicks=tiny_dir / "clicks.csv")
    mixed = tmp_path / "searches"
    mixed.mkdir()
    shutil.copy(tiny_dir / "searches.csv", mixed / "a.csv")
    pd.read_csv(tiny_dir / "searches.csv").to_parquet(mixed / "b.parquet")
    with pytest.raises(SchemaError, match="mix formats"):
        onlineeval.load_logs(searches=mixed, clicks=tiny_dir / "clicks.csv")
    empty = tmp_path / "empty_folder"
    empty.mkdir()
    with pytest.raises(SchemaError, match="holds no part files"):
        onlineeval.load_logs(searches=empty, clicks=tiny_dir / "clicks.csv")


@pytest.mark.parametrize("name", ["searches.csv", "searches.parquet", "searches.jsonl"])
def test_empty_file_is_a_clear_error(tmp_path, tiny_dir, name):
    (tmp_path / name).write_bytes(b"")
    shutil.copy(tiny_dir / "clicks.csv", tmp_path)
    with pytest.raises(SchemaError, match=rf"{name}: the file is empty; table 'searches' needs"):
        onlineeval.load_logs(tmp_path)


def test_header_only_searches_is_an_error_but_header_only_clicks_is_fine(tmp_path, tiny_dir, rows):
    (tmp_path / "searches.csv").write_text("search_id,user_id,ts\n")
    shutil.copy(tiny_dir / "clicks.csv", tmp_path)
    with pytest.raises(SchemaError, match=r"searches\.csv: the searches table has no rows"):
        onlineeval.load_logs(tmp_path)
    logs = onlineeval.load_logs(searches=tiny_dir / "searches.csv",
                                clicks=pd.DataFrame({"search_id": pd.Series([], dtype=str),
                                                     "rank": pd.Series([], dtype="int64")}))
    assert logs.report.rows_read["clicks"] == 0
    assert logs.con.execute("SELECT count(*) FROM clicks").fetchall() == [(0,)]


def test_malformed_csv_names_the_file(tmp_path, tiny_dir):
    (tmp_path / "searches.csv").write_text(
        "search_id,user_id,ts\ns1,u1,2024-01-01\ns2,u1,2024-01-01,extra,fields\n")
    shutil.copy(tiny_dir / "clicks.csv", tmp_path)
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(tmp_path)
    # the file and the line number (1-based, header = line 1), the problem, the line itself
    assert str(err.value) == (
        f"{tmp_path / 'searches.csv'}:3: cannot read as csv: the line has 5 fields, the "
        "header 3; the line starts 's2,u1,2024-01-01,extra,fields'")
    assert err.value.line == 3
    # a ragged line far beyond the part DuckDB samples is caught while validating
    good = "".join(f"s{i},u1,2024-01-01\n" for i in range(30000))
    (tmp_path / "searches.csv").write_text(
        "search_id,user_id,ts\n" + good + "sX,u1,2024-01-01,extra\n")
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(tmp_path)
    assert str(err.value) == (
        f"{tmp_path / 'searches.csv'}:30002: cannot read as csv: the line has 4 fields, the "
        "header 3; the line starts 'sX,u1,2024-01-01,extra'")


def test_stray_quote_in_a_quoted_csv_names_the_line(tmp_path, tiny_dir):
    # with quoted fields elsewhere DuckDB's sniffer gives up without a line number
    (tmp_path / "searches.csv").write_text(
        'search_id,user_id,ts,query\ns1,u1,2024-01-01,"a, b"\ns2,u1,2024-01-01,b\n'
        's3,u2,2024-01-01,"oops\ns4,u2,2024-01-02,c\n')
    shutil.copy(tiny_dir / "clicks.csv", tmp_path)
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(tmp_path)
    assert str(err.value) == (
        f"{tmp_path / 'searches.csv'}:4: cannot read as csv: Value with unterminated quote "
        """found; the line starts 's3,u2,2024-01-01,"oops'""")
    # without a field that needs quoting too: DuckDB's sniffer would fall back to "no
    # quoting" and keep the quotes of s1's value ('"a"'), silently
    (tmp_path / "searches.csv").write_text(
        'search_id,user_id,ts,query\ns1,u1,2024-01-01,"a"\ns3,u2,2024-01-01,"oops\n'
        's4,u2,2024-01-02,c\n')
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(tmp_path)
    assert err.value.line == 3
    # quotes inside an unquoted value are kept as characters; quoted values lose their quotes
    (tmp_path / "searches.csv").write_text(
        'search_id,user_id,ts,query\n"s1",u1,2024-01-01,"a, ""b"""\ns3,u2,2024-01-01,5" tall\n')
    logs = onlineeval.load_logs(tmp_path)
    assert logs.con.execute("SELECT search_id, query FROM searches ORDER BY 1").fetchall() == [
        ("s1", 'a, "b"'), ("s3", '5" tall')]


def test_bad_json_lines_name_file_and_line(tmp_path, tiny_dir):
    path = tmp_path / "searches.jsonl"
    path.write_text('{"search_id": "a", "user_id": "u", "ts": "2024-01-01"}\n'
                    '{"search_id": "b", "user_id": "u", "ts": 2024-01-01}\n')
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(searches=path, clicks=tiny_dir / "clicks.csv")
    # DuckDB itself says "line 3" here (its JSON line numbers are off by one)
    assert err.value.line == 2
    assert str(err.value) == (
        f"{path}:2: cannot read as JSON lines: malformed JSON (Expecting ',' delimiter at "
        "column 46); every line must be one JSON object")
    path.write_text('{"search_id": "a", "user_id": "u", "ts": "2024-01-01"}\n[1, 2]\n')
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(searches=path, clicks=tiny_dir / "clicks.csv")
    assert str(err.value) == (f"{path}:2: cannot read as JSON lines: the line is a JSON list, "
                              "not an object; every line must be one JSON object")
    # a bad line far beyond what DuckDB samples is found while validating
    good = '{"search_id": "s%d", "user_id": "u", "ts": "2024-01-01"}\n'
    path.write_text("".join(good % i for i in range(25000)) + '{"search_id": "x", \n')
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(searches=path, clicks=tiny_dir / "clicks.csv")
    assert err.value.line == 25001


def test_line_breaks_in_paths_and_column_names_stay_on_one_line(tmp_path, tiny_dir):
    weird = tmp_path / "new\nline;'x\""
    weird.mkdir()
    frames = {"searches": pd.DataFrame({"search_id": ["s1"], "user\nid": ["u1"],
                                        "ts": pd.to_datetime(["2024-01-01"])}),
              "clicks": pd.DataFrame({"search_id": ["s1"], "rank": [1]})}
    for t, df in frames.items():
        df.to_parquet(weird / f"{t}.parquet")
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(weird)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(str(weird).replace("\n", "\\n") + "/searches.parquet: ")
    assert "its columns are: search_id, user\\nid, ts." in message
    logs = onlineeval.load_logs(weird, columns={"searches": {"user\nid": "user_id"}})
    assert logs.con.execute("SELECT user_id FROM searches").fetchall() == [("u1",)]
    assert "\n" not in logs.report.source


def test_quotes_and_sql_in_paths_are_data(tmp_path, tiny_dir, tiny_frames):
    weird = tmp_path / """it's "x"; DROP TABLE searches; --"""
    weird.mkdir()
    for t in TABLES:
        shutil.copy(tiny_dir / f"{t}.csv", weird / f"{t}.csv")
    logs = onlineeval.load_logs(weird)
    assert logs.report.excluded_total == 20
    assert logs.con.execute("SELECT count(*) FROM searches").fetchall() == [(4,)]
    bracket = tmp_path / "we[i]rd"
    bracket.mkdir()
    frames = tiny_frames()
    frames["searches"].to_parquet(bracket / "searches.parquet")
    frames["clicks"].to_parquet(bracket / "clicks.parquet")
    assert onlineeval.load_logs(bracket).report.rows_read == {"searches": 8, "clicks": 14}


def test_broken_json_and_parquet_name_the_file(tmp_path, tiny_dir):
    (tmp_path / "searches.jsonl").write_text(
        '{"search_id": "a", "user_id": "u", "ts": "2024-01-01"}\n{"search_id": "b", "user_\n')
    with pytest.raises(LogFormatError, match=r"searches\.jsonl:2: cannot read as JSON lines"):
        onlineeval.load_logs(searches=tmp_path / "searches.jsonl", clicks=tiny_dir / "clicks.csv")
    (tmp_path / "clicks.parquet").write_bytes(b"this is not parquet at all")
    with pytest.raises(LogFormatError, match=r"clicks\.parquet: cannot read as parquet"):
        onlineeval.load_logs(searches=tiny_dir / "searches.csv", clicks=tmp_path / "clicks.parquet")


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_partitioned_folders_keep_the_partition_column(tmp_path, tiny_dir, fmt):
    import duckdb

    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT * FROM read_csv($p, all_varchar=true)) TO '{tmp_path}/searches' "
        f"(FORMAT {fmt}, PARTITION_BY (variant))", {"p": str(tiny_dir / "searches.csv")})
    logs = onlineeval.load_logs(searches=tmp_path / "searches", clicks=tiny_dir / "clicks.csv",
                                results=tiny_dir / "results.csv")
    assert logs.has("searches", "variant")
    expected = onlineeval.load_logs(tiny_dir)
    q = "SELECT search_id, variant FROM searches ORDER BY 1"
    assert logs.con.execute(q).fetchall() == expected.con.execute(q).fetchall()
    assert logs.report.excluded == expected.report.excluded


def test_semicolon_separated_csv_is_named_as_such(tmp_path, tiny_dir):
    (tmp_path / "searches.csv").write_text("search_id;user_id;ts\ns1;u1;2024-01-01\n")
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=tmp_path / "searches.csv", clicks=tiny_dir / "clicks.csv")
    assert str(err.value) == (
        f"{tmp_path / 'searches.csv'}: the searches table lacks required column(s) 'search_id', "
        "'user_id'; its columns are: search_id;user_id;ts. The header holds ';': the file seems "
        "to be separated by it, but CSV files must be separated by commas. Rename them in the "
        "file or pass a mapping, e.g. columns={'searches': {'<your column>': 'search_id'}}")


def test_cli_prints_a_malformed_line_as_one_line(tmp_path, tiny_dir, capsys):
    from onlineeval.cli import main

    weird = tmp_path / "a\nb"
    weird.mkdir()
    shutil.copy(tiny_dir / "clicks.csv", weird)
    (weird / "searches.csv").write_text(
        'search_id,user_id,ts\ns0,u1,"2024-01-01"\ns1,u1,"2024-01-01\n')
    assert main(["online", str(weird)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"onlineeval online: error: {tmp_path}/a\\nb/searches.csv:3: cannot read as "
                   "csv: Value with unterminated quote found; the line starts "
                   "'s1,u1,\"2024-01-01'\n")


@pytest.mark.parametrize(("header", "named"), [
    ("search_id,user_id,ts,user_id", "'user_id' twice;"),
    ("search_id,user_id,ts,USER_ID", "'user_id' twice (as 'USER_ID');"),
])
def test_csv_header_naming_a_column_twice_is_an_error(tmp_path, tiny_dir, header, named):
    (tmp_path / "searches.csv").write_text(f"{header}\ns1,u1,2024-01-01,u2\n")
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=tmp_path / "searches.csv", clicks=tiny_dir / "clicks.csv")
    assert str(err.value).startswith(
        f"{tmp_path / 'searches.csv'}: the header of table 'searches' names column {named}")


@pytest.mark.parametrize(("names", "named"), [
    (["search_id", "user_id", "search_id"], "'search_id' twice;"),
    (["search_id", "user_id", "Search_ID"], "'search_id' twice (as 'Search_ID');"),
])
def test_parquet_naming_a_column_twice_is_an_error(tmp_path, tiny_dir, names, named):
    # Was: DuckDB renamed the second copy search_id_1 and the loader used the first silently.
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "searches.parquet"
    pq.write_table(pa.table([pa.array(["s1"]), pa.array(["u1"]), pa.array(["s9"])],
                            names=names), path)
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=path, clicks=tiny_dir / "clicks.csv")
    assert str(err.value) == (
        f"{path}: the Parquet file names column {named} SQL cannot tell them apart (names "
        "ignore case): rename or drop one")


def test_parquet_with_a_column_named_like_a_renamed_copy_is_fine(tmp_path, tiny_dir):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "searches.parquet"
    pq.write_table(pa.table({"search_id": ["s1"], "user_id": ["u1"], "search_id_1": ["x"],
                             "meta": [{"search_id": 1, "search_id_1": 2}]}), path)
    logs = onlineeval.load_logs(searches=path, clicks=tiny_dir / "clicks.csv")
    assert logs.extra_columns() == ("search_id_1", "meta")


# --- byte-order marks -------------------------------------------------------------------------

BOM = "\ufeff"


@pytest.mark.parametrize("fmt", ["csv", "csv.gz", "tsv", "jsonl", "jsonl.gz"])
def test_a_byte_order_mark_and_crlf_lines_change_nothing(tmp_path, tiny_dir, tiny_frames, rows,
                                                          fmt):
    expected = _snapshot(onlineeval.load_logs(tiny_dir), rows)
    for t, df in tiny_frames().items():
        if fmt.startswith("jsonl"):
            text = df.to_json(orient="records", lines=True)
        else:
            text = df.to_csv(index=False, sep="\t" if fmt == "tsv" else ",", lineterminator="\n")
        data = (BOM + text.replace("\n", "\r\n")).encode("utf-8")
        path = tmp_path / f"{t}.{fmt}"
        path.write_bytes(gzip.compress(data) if fmt.endswith(".gz") else data)
    assert _snapshot(onlineeval.load_logs(tmp_path), rows) == expected


def test_a_byte_order_mark_does_not_hide_a_header_naming_a_column_twice(tmp_path, tiny_dir):
    # Was: the first name read as '\ufeffsearch_id', so the repeat went unnoticed and the
    # second column was dropped silently.
    path = tmp_path / "searches.csv"
    path.write_text(f"{BOM}search_id,user_id,search_id\r\ns1,u1,s2\r\n", encoding="utf-8")
    with pytest.raises(SchemaError, match="names column 'search_id' twice"):
        onlineeval.load_logs(searches=path, clicks=tiny_dir / "clicks.csv")


def test_a_byte_order_mark_does_not_hide_the_line_of_a_json_error(tmp_path, tiny_dir):
    # Was: the first line did not start with '{', so no line was named.
    path = tmp_path / "searches.jsonl"
    path.write_text(f'{BOM}{{"search_id": "a", "user_id": "u"}}\n{{"search_id": "b",\n',
                    encoding="utf-8")
    with pytest.raises(LogFormatError) as err:
        onlineeval.load_logs(searches=path, clicks=tiny_dir / "clicks.csv")
    assert err.value.line == 2


def test_a_byte_order_mark_in_a_later_part_is_dropped_too(tmp_path, tiny_dir, tiny_frames, rows):
    expected = _snapshot(onlineeval.load_logs(tiny_dir), rows)
    frames = tiny_frames()
    for t, df in frames.items():
        (tmp_path / t).mkdir()
        half = len(df) // 2
        (tmp_path / t / "part-0.csv").write_text(df.iloc[:half].to_csv(index=False))
        (tmp_path / t / "part-1.csv").write_text(BOM + df.iloc[half:].to_csv(index=False),
                                                 encoding="utf-8")
    assert _snapshot(onlineeval.load_logs(tmp_path), rows) == expected
