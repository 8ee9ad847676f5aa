"""Converter output handling shared by all formats: existing tables, empty inputs, .gz."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from onlineeval.cli import main
from onlineeval.errors import InputError, OutputError
from onlineeval.logs.convert import convert

DATA = Path(__file__).resolve().parents[1] / "data"
AOL = DATA / "aol" / "sample.txt"
YANDEX = DATA / "yandex_wscd" / "testSample.head5000"


def test_refuses_to_overwrite_without_force_and_replaces_stale_tables(tmp_path: Path) -> None:
    out = tmp_path / "out"
    convert(YANDEX, out, "yandex-wscd")
    assert (out / "results.parquet").exists()
    with pytest.raises(OutputError, match="already holds converted tables"):
        convert(AOL, out, "aol")
    # with overwrite, the yandex results table must not survive next to AOL searches
    report = convert(AOL, out, "aol", overwrite=True)
    assert not (out / "results.parquet").exists()
    assert sorted(p.name for p in out.iterdir()) == ["clicks.parquet", "searches.parquet"]
    assert report.rows["searches"] == 9


def test_foreign_tables_in_outdir_are_an_error_even_with_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "clicks.csv").write_text("search_id,rank\n")
    with pytest.raises(OutputError, match="clicks.csv"):
        convert(AOL, out, "aol", overwrite=True)
    assert not (out / "searches.parquet").exists()


@pytest.mark.parametrize("fmt", ["aol", "yandex-wscd"])
def test_empty_input_is_an_error(tmp_path: Path, fmt: str) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n" if fmt == "aol" else " ;  ; \n")
    with pytest.raises(InputError, match=f"found no {fmt} records in .*empty.txt"):
        convert(empty, tmp_path / "out", fmt)
    assert not (tmp_path / "out").exists()


def test_empty_directory_and_gzip_input(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(InputError, match="holds no files"):
        convert(tmp_path / "d", tmp_path / "out", "aol")
    gz = tmp_path / "d" / "sample.gz"
    gz.write_bytes(gzip.compress(YANDEX.read_bytes()))
    report = convert(tmp_path / "d", tmp_path / "out", "yandex-wscd")
    assert report.rows["searches"] == 5000
    assert report.counts["clicks_on_unshown_documents"] == 87


def test_truncated_gzip_is_a_format_error(tmp_path: Path) -> None:
    gz = tmp_path / "cut.txt.gz"
    gz.write_bytes(gzip.compress(AOL.read_bytes())[:-12])
    with pytest.raises(InputError, match="cut.txt.gz"):
        convert(gz, tmp_path / "out", "aol")


def test_cli_force(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = str(tmp_path / "o")
    assert main(["convert", "--from", "aol", str(AOL), out]) == 0
    assert main(["convert", "--from", "aol", str(AOL), out]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["convert", "--from", "aol", str(AOL), out, "--force"]) == 0


@pytest.mark.parametrize("fmt,path", [("aol", AOL), ("yandex-wscd", YANDEX)])
def test_chunked_writing_gives_the_same_tables(tmp_path: Path, fmt: str, path: Path) -> None:
    import duckdb

    small = tmp_path / "small.txt"
    if fmt == "yandex-wscd":  # 30 records, then 10 with clicks on unshown documents
        records = [r for r in path.read_text().split(";") if r.strip()]

        def unshown(record: str) -> bool:
            docs, clicks = record.split("\t")[1].split(":")
            return any(c.strip() not in docs.strip().split(",") for c in clicks.split(",")
                       if c.strip())

        odd = [r for r in records if unshown(r)][:10]
        assert len(odd) == 10
        small.write_text(";".join(records[:30] + odd) + ";")
    else:
        small = path
    convert(small, tmp_path / "one", fmt)
    convert(small, tmp_path / "chunked", fmt, chunk_rows=1)
    con = duckdb.connect()
    for table in ("searches", "results", "clicks"):
        a, b = tmp_path / "one" / f"{table}.parquet", tmp_path / "chunked" / f"{table}.parquet"
        assert a.exists() == b.exists()
        if a.exists():
            ra, rb = con.read_parquet(str(a)), con.read_parquet(str(b))
            assert ra.types == rb.types and ra.fetchall() == rb.fetchall()


def test_writer_treats_column_names_with_quotes_and_sql_as_data(tmp_path: Path) -> None:
    import duckdb
    import pandas as pd

    from onlineeval.logs.convert import LogTables, write_logs

    odd = 'we"ird"); DROP TABLE searches; --'
    searches = pd.DataFrame({"search_id": ["2", "1"], "user_id": ["u", "v"], odd: [7, 8]})
    clicks = pd.DataFrame({"search_id": ["1"], "rank": [1]})
    written = write_logs(LogTables(searches, pd.DataFrame(), clicks), tmp_path / "o")
    assert set(written) == {"searches", "clicks"}
    rel = duckdb.connect().read_parquet(str(written["searches"]))
    assert rel.columns == ["search_id", "user_id", odd]
    assert rel.fetchall() == [("1", "v", 8), ("2", "u", 7)]  # sorted by search_id


def test_progress_on_a_tty_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tty_stderr,
        capsys: pytest.CaptureFixture) -> None:
    tty = tty_stderr()
    convert(YANDEX, tmp_path / "tty", "yandex-wscd")
    assert "\rconverting yandex-wscd: pages: 1" in "".join(tty.parts)
    monkeypatch.undo()
    assert main(["convert", "--from", "aol", str(AOL), str(tmp_path / "quiet"),
                 "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out.startswith("{")
