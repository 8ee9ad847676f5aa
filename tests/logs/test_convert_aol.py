"""The aol converter on a hand-written file whose expected tables are written out below."""

from __future__ import annotations

import gzip
import shutil
from datetime import datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import onlineeval
from onlineeval.errors import LogFormatError
from onlineeval.logs.convert import convert

DATA = Path(__file__).resolve().parents[1] / "data" / "aol" / "sample.txt"


def _t(text: str) -> datetime:
    return datetime.fromisoformat(text)


# pages: consecutive lines with the same AnonID, Query and QueryTime (see the data file)
EXPECTED_SEARCHES = [
    ("a1", "142", _t("2006-03-01 07:17:12"), "rentdirect.com"),
    ("a2", "142", _t("2006-03-01 07:17:18"), "staple.com"),
    ("a3", "142", _t("2006-03-01 07:18:02"), "staple.com"),
    ("a4", "142", _t("2006-03-01 07:30:00"), "-"),
    ("a5", "217", _t("2006-03-01 11:58:51"), "lottery"),
    ("a6", "217", _t("2006-03-01 11:59:10"), "lottery numbers"),
    ("a7", "217", _t("2006-03-01 11:58:51"), "lottery"),
    ("a8", "993", _t("2006-03-02 23:59:59"), "car  rental"),
    ("a9", "993", _t("2006-03-03 00:00:01"), "car  rental"),
]
EXPECTED_CLICKS = [
    ("a2", 1, "http://www.staples.com"),
    ("a2", 3, "http://www.officedepot.com"),
    ("a5", 1, "http://www.calottery.com"),
    ("a5", 1, "http://www.calottery.com"),
    ("a7", 2, "http://www.lottery.com"),
    ("a8", 12, "http://www.hertz.com"),
]


def _read(path: Path) -> tuple[list[str], list[tuple]]:
    # pyarrow takes the path as written (DuckDB would expand 'out[1]' as a pattern)
    table = pq.read_table(path)
    return table.column_names, [tuple(r.values()) for r in table.to_pylist()]


def _check(out: Path) -> None:
    cols, rows = _read(out / "searches.parquet")
    assert cols == ["search_id", "user_id", "ts", "query"]
    assert rows == EXPECTED_SEARCHES
    cols, rows = _read(out / "clicks.parquet")
    assert cols == ["search_id", "rank", "doc_id"]
    assert rows == EXPECTED_CLICKS
    assert not (out / "results.parquet").exists()


def test_hand_written_file(tmp_path: Path) -> None:
    report = convert(DATA, tmp_path, "aol")
    _check(tmp_path)
    assert report.rows["searches"] == 9 and report.rows["clicks"] == 6
    assert report.counts == {"input_lines": 12, "header_lines_skipped": 1,
                             "blank_lines_skipped": 0, "pages": 9, "pages_with_clicks": 4,
                             "clicks": 6}
    assert "results: 0 rows (not written)" in report.summary()


def test_gzip_and_directory_input(tmp_path: Path) -> None:
    gz = tmp_path / "in" / "part-01.txt.gz"
    gz.parent.mkdir()
    with DATA.open("rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    convert(gz, tmp_path / "one", "aol")
    _check(tmp_path / "one")
    # a directory: files in name order, pages numbered across files
    shutil.copy(DATA, tmp_path / "in" / "part-02.txt")
    report = convert(tmp_path / "in", tmp_path / "two", "aol")
    assert report.rows["searches"] == 18 and report.counts["header_lines_skipped"] == 2
    _, rows = _read(tmp_path / "two" / "searches.parquet")
    assert rows[9][0] == "a10" and rows[9][1:] == EXPECTED_SEARCHES[0][1:]


def test_loads_with_the_loader(tmp_path: Path) -> None:
    import onlineeval

    convert(DATA, tmp_path, "aol")
    logs = onlineeval.load_logs(tmp_path)
    assert logs.report.excluded_total == 0
    assert not logs.has_results and not logs.has("searches", "n_results")
    n, clicked = logs.con.execute(
        "SELECT count(DISTINCT s.search_id), count(DISTINCT c.search_id) FROM searches s "
        "LEFT JOIN clicks c USING (search_id)").fetchall()[0]
    assert (n, clicked) == (9, 4)


@pytest.mark.parametrize(("line", "reason"), [
    ("142\tquery", "expected 3 to 5 tab-separated fields"),
    ("142\tq\t2006-03-01 07:17:12\t1\thttp://x\textra", "found 6"),
    ("\tq\t2006-03-01 07:17:12\t\t", "AnonID (field 1) is empty"),
    ("142\tq\t2006-03-01T07:17\t\t", "QueryTime (field 3)"),
    ("142\tq\t2006-03-01 07:17:12\t1\t", "must both be present"),
    ("142\tq\t2006-03-01 07:17:12\t\thttp://x", "must both be present"),
    ("142\tq\t2006-03-01 07:17:12\t0\thttp://x", "positive integer"),
    ("142\tq\t2006-03-01 07:17:12\tone\thttp://x", "positive integer"),
])
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "bad.txt"
    lines = DATA.read_text(encoding="utf-8").splitlines()
    lines.insert(4, line)  # becomes line 5 of the file
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(LogFormatError) as err:
        convert(path, tmp_path / "out", "aol")
    assert str(err.value).startswith(f"{path}:5: ")
    assert reason in str(err.value)


def test_not_utf8_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"142\tq\t2006-03-01 07:17:12\t\t\n142\tcaf\xe9\t2006-03-01 07:17:13\t\t\n")
    with pytest.raises(LogFormatError, match=r"latin1.txt:2: .*UTF-8"):
        convert(path, tmp_path / "out", "aol")


def test_byte_order_mark_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    text = DATA.read_text(encoding="utf-8").replace("\n", "\r\n")
    path.write_bytes("\ufeff".encode() + text.encode("utf-8"))
    report = convert(path, tmp_path / "out", "aol")
    assert report.counts["header_lines_skipped"] == 1
    _check(tmp_path / "out")


def test_glob_characters_in_input_and_output_paths_are_literal(tmp_path: Path) -> None:
    # The input is read by Python and the tables are written by DuckDB (which expands
    # patterns only when reading): decoys matching the names as patterns are never touched.
    given = tmp_path / "aol[1].txt"
    shutil.copy(DATA, given)
    decoy = tmp_path / "aol1.txt"
    decoy.write_text("999\tdecoy\t2006-03-01 07:17:12\t\t\n")
    convert(decoy, tmp_path / "out1", "aol")
    before = {p.name: p.read_bytes() for p in (tmp_path / "out1").iterdir()}
    convert(given, tmp_path / "out[1]", "aol")
    _check(tmp_path / "out[1]")
    assert {p.name: p.read_bytes() for p in (tmp_path / "out1").iterdir()} == before
    # and the loader reads the written directory, not the decoy beside it
    logs = onlineeval.load_logs(tmp_path / "out[1]")
    assert logs.report.rows_read == {"searches": len(EXPECTED_SEARCHES),
                                     "clicks": len(EXPECTED_CLICKS)}
