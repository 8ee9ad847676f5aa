"""Paths are data: a name holding *, ? or [ is read as written, never as a pattern that
DuckDB would match to a sibling; lake-format folders are refused; Arrow tables are accepted.

Each case puts a decoy next to the named path (``exp1/`` beside ``exp[1]/``) holding other
rows, so reading the decoy instead shows up as other counts.
"""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import SchemaError

TABLES = ("searches", "results", "clicks")

# (literal name, a sibling the name matches as a glob pattern)
NAMES = [("exp[1]", "exp1"), ("run?", "runX"), ("a*b", "aXb"), ("x[!y]", "xz")]


def _snapshot(logs) -> tuple:
    views = {t: logs.con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in TABLES}
    return views, logs.report.rows_read, logs.report.excluded


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
@pytest.mark.parametrize(("name", "decoy"), NAMES)
def test_a_log_directory_with_glob_characters_is_read_literally(
        tmp_path, tiny_dir, tiny_frames, write_frames, fmt, name, decoy):
    # Was: DuckDB expanded 'exp[1]/searches.csv' as a pattern and read exp1/searches.csv.
    expected = _snapshot(onlineeval.load_logs(tiny_dir))
    frames = tiny_frames()
    write_frames(frames, tmp_path / name, fmt)
    write_frames({t: df.head(2) for t, df in frames.items()}, tmp_path / decoy, fmt)
    assert _snapshot(onlineeval.load_logs(tmp_path / name)) == expected


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_table_files_and_parts_with_glob_characters_are_read_literally(
        tmp_path, tiny_dir, tiny_frames, write_frames, fmt):
    expected = _snapshot(onlineeval.load_logs(tiny_dir))
    frames = tiny_frames()
    given = {}
    for t, df in frames.items():
        if t == "results":
            # a folder of parts, one of whose names is a pattern matching the other
            folder = tmp_path / "results[x]"
            half = len(df) // 2
            write_frames({"part[1]": df.iloc[:half]}, folder, fmt)
            write_frames({"part1": df.iloc[half:]}, folder, fmt)
            given[t] = folder
            write_frames({"part1": df.head(1)}, tmp_path / "resultsx", fmt)  # decoy folder
            continue
        write_frames({f"{t}?": df}, tmp_path, fmt)
        write_frames({f"{t}X": df.head(1)}, tmp_path, fmt)  # decoy file
        given[t] = tmp_path / f"{t}?.{fmt}"
    assert _snapshot(onlineeval.load_logs(**given)) == expected


def test_a_pattern_is_expanded_only_when_no_such_path_exists(tmp_path, tiny_dir, tiny_frames):
    frames = tiny_frames()
    s = frames["searches"]
    s.iloc[:4].to_csv(tmp_path / "s1.csv", index=False)
    s.iloc[4:].to_csv(tmp_path / "s2.csv", index=False)
    clicks = tiny_dir / "clicks.csv"
    by_pattern = onlineeval.load_logs(searches=str(tmp_path / "s[12].csv"), clicks=clicks)
    assert by_pattern.report.rows_read["searches"] == 8
    # once a file of that very name exists, the name means that file
    s.iloc[:1].to_csv(tmp_path / "s[12].csv", index=False)
    literal = onlineeval.load_logs(searches=str(tmp_path / "s[12].csv"), clicks=clicks)
    assert literal.report.rows_read["searches"] == 1


def test_the_cli_reads_the_named_directory(tmp_path, tiny_dir, tiny_frames, write_frames,
                                           capsys):
    from onlineeval.cli import main

    frames = tiny_frames()
    write_frames(frames, tmp_path / "exp[1]", "csv")
    write_frames({t: df.head(2) for t, df in frames.items()}, tmp_path / "exp1", "csv")
    assert main(["online", str(tmp_path / "exp[1]"), "--format", "csv", "--by", ""]) == 0
    got = capsys.readouterr()
    assert main(["online", str(tiny_dir), "--format", "csv", "--by", ""]) == 0
    assert got.out == capsys.readouterr().out
    assert "searches 8 rows" in got.err


def test_a_path_duckdb_cannot_take_literally_is_refused(tmp_path, tiny_dir, tiny_frames):
    # DuckDB's glob splits a path at a backslash: it cannot name 'a\\[1].csv' literally, so
    # the file is refused rather than another one read
    odd = tmp_path / "a\\b[1].csv"
    tiny_frames()["searches"].to_csv(odd, index=False)
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(searches=odd, clicks=tiny_dir / "clicks.csv")
    assert str(err.value).startswith(f"{odd}: DuckDB reads *, ? and [ in a path as a pattern")
    assert "rename the file or folder" in str(err.value)


def test_duckdb_path_names_exactly_one_file(tmp_path):
    import duckdb

    from onlineeval.logs.paths import duckdb_path

    con = duckdb.connect()
    for name in ["plain.csv", "b]c[.csv", "d[!a].csv", "e[a-c].csv", "f**g.csv", ".h[1].csv"]:
        (tmp_path / name).write_text("x\n1\n")
    for decoy in ["bc.csv", "dx.csv", "eb.csv", "fg.csv", ".h1.csv"]:
        (tmp_path / decoy).write_text("x\n2\n")
    for name in ["plain.csv", "b]c[.csv", "d[!a].csv", "e[a-c].csv", "f**g.csv", ".h[1].csv"]:
        path = str(tmp_path / name)
        found = con.execute("SELECT file FROM glob($p)", {"p": duckdb_path(con, path)}).fetchall()
        assert found == [(path,)]


# --- lake formats -------------------------------------------------------------------------------

def _delta(folder, frame):
    (folder / "_delta_log").mkdir(parents=True)
    (folder / "_delta_log" / "00000000000000000000.json").write_text("{}\n")
    frame.to_parquet(folder / "part-00000.parquet")
    frame.head(1).to_parquet(folder / "part-00001.parquet")  # a version no longer current


def _iceberg(folder, frame):
    (folder / "metadata").mkdir(parents=True)
    (folder / "metadata" / "v1.metadata.json").write_text("{}\n")
    (folder / "data").mkdir()
    frame.to_parquet(folder / "data" / "00000-0.parquet")


@pytest.mark.parametrize(("make", "words"), [
    (_delta, ("a Delta Lake table", "_delta_log/", "deltalake")),
    (_iceberg, ("an Apache Iceberg table", "metadata/", "pyiceberg")),
])
def test_lake_folders_are_refused_with_how_to_read_them(tmp_path, tiny_dir, tiny_frames, make,
                                                        words):
    # Was: every Parquet file of the folder was read, old versions included.
    table = tmp_path / "searches"
    make(table, tiny_frames()["searches"])
    clicks = tiny_dir / "clicks.csv"
    data = table / "data" if (table / "data").is_dir() else table
    for given in (table, data, next(data.glob("*.parquet"))):
        with pytest.raises(SchemaError) as err:
            onlineeval.load_logs(searches=given, clicks=clicks)
        text = str(err.value)
        assert text.startswith(f"{table}: this folder is {words[0]} (it holds {words[1]})")
        assert words[2] in text and "pass it as searches=" in text
        assert "old versions" in text
    # inside a log directory too
    shutil.copy(clicks, tmp_path / "clicks.csv")
    with pytest.raises(SchemaError, match="old versions"):
        onlineeval.load_logs(tmp_path)


def test_a_hudi_folder_is_refused(tmp_path, tiny_dir, tiny_frames):
    table = tmp_path / "searches"
    (table / ".hoodie").mkdir(parents=True)
    tiny_frames()["searches"].to_parquet(table / "p.parquet")
    with pytest.raises(SchemaError, match=r"an Apache Hudi table \(it holds \.hoodie/\)"):
        onlineeval.load_logs(searches=table, clicks=tiny_dir / "clicks.csv")


def test_arrow_tables_and_datasets_are_read_like_dataframes(tmp_path, tiny_dir, tiny_frames):
    import pyarrow as pa
    import pyarrow.dataset as pads

    expected = _snapshot(onlineeval.load_logs(tiny_dir))
    frames = tiny_frames()
    frames["results"].to_parquet(tmp_path / "results.parquet")
    logs = onlineeval.load_logs(
        searches=pa.Table.from_pandas(frames["searches"], preserve_index=False),
        results=pads.dataset(tmp_path / "results.parquet"),
        clicks=frames["clicks"])
    assert _snapshot(logs) == expected
    twice = pa.table({"search_id": ["a"], "Search_ID": ["b"], "user_id": ["u"]})
    with pytest.raises(SchemaError, match="Arrow table given as searches= has columns "
                                          "'search_id' and 'Search_ID'"):
        onlineeval.load_logs(searches=twice, clicks=frames["clicks"])


def test_arrow_input_keeps_the_loaded_values(tiny_dir, tiny_frames):
    import pyarrow as pa

    s = pd.DataFrame({"search_id": ["a", "b"], "user_id": ["u", "v"],
                      "ts": pd.to_datetime(["2024-05-01 10:00", "2024-05-01 11:00"])})
    c = pd.DataFrame({"search_id": ["a"], "rank": [1]})
    logs = onlineeval.load_logs(searches=pa.Table.from_pandas(s), clicks=pa.Table.from_pandas(c))
    got = logs.con.execute("SELECT search_id, user_id, ts FROM searches ORDER BY 1").fetchall()
    assert got == [(r.search_id, r.user_id, r.ts.to_pydatetime()) for r in s.itertuples()]


def test_a_log_beside_an_iceberg_tables_metadata_is_not_refused(tmp_path, tiny_dir):
    # metadata/ makes its folder an Iceberg table for the files in its data/ only
    (tmp_path / "metadata").mkdir()
    (tmp_path / "metadata" / "v1.metadata.json").write_text("{}\n")
    shutil.copytree(tiny_dir, tmp_path / "logs" / "tiny")
    logs = onlineeval.load_logs(tmp_path / "logs" / "tiny")
    assert logs.report.rows_read == {"searches": 8, "results": 11, "clicks": 14}
