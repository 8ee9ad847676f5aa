"""The yandex-wscd converter against counts made independently from the raw text.

The expected values are computed here with a regular expression over the whole file (not the
converter's record splitter), so a bug in either shows up as a mismatch.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from onlineeval.cli import main
from onlineeval.errors import LogFormatError
from onlineeval.logs.convert import FORMATS, convert

DATA = Path(__file__).resolve().parents[1] / "data" / "yandex_wscd" / "testSample.head5000"

RECORD = re.compile(r"(\d+)_(\d+)\t([0-9,]+) :([0-9 ,]*);")


def _independent(text: str) -> list[tuple[str, str, list[str], list[str]]]:
    pages = []
    for m in RECORD.finditer(text):
        docs = m.group(3).split(",")
        clicks = [c for c in m.group(4).replace(" ", "").split(",") if c]
        pages.append((m.group(1), m.group(2), docs, clicks))
    return pages


@pytest.fixture(scope="module")
def raw() -> list[tuple[str, str, list[str], list[str]]]:
    text = DATA.read_text(encoding="utf-8")
    pages = _independent(text)
    # the regex must account for every record of the slice: 5000 separators
    assert len(pages) == text.count(";") == 5000
    return pages


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("yandex")
    report = convert(DATA, out, "yandex-wscd")
    return out, report


def _rows(path: Path, sql_cols: str, order: str) -> list[tuple]:
    con = duckdb.connect()
    rel = con.read_parquet(str(path))
    return rel.project(sql_cols).order(order).fetchall()


def test_report_counts_match_raw_text(raw, converted) -> None:
    _, report = converted
    shown_clicks = sum(sum(c in d for c in cl) for _, _, d, cl in raw)
    unshown = sum(sum(c not in d for c in cl) for _, _, d, cl in raw)
    repeated = sum(len(cl) - len(set(cl)) for _, _, _, cl in raw)
    assert report.rows == {"searches": 5000, "results": 50000,
                           "clicks": shown_clicks + unshown}
    assert report.counts["pages"] == 5000
    assert report.counts["clicks_on_unshown_documents"] == unshown == 87
    assert report.counts["clicks_on_shown_documents"] == shown_clicks
    assert report.counts["repeated_clicks"] == repeated
    assert report.counts["pages_with_clicks"] == sum(bool(cl) for *_, cl in raw) == 3460
    assert report.counts["pages_with_clicks_on_shown_documents"] == sum(
        any(c in d for c in cl) for _, _, d, cl in raw)
    assert "87" in report.summary()


def test_tables_hold_exactly_the_raw_records(raw, converted) -> None:
    out, _ = converted
    searches = _rows(out / "searches.parquet", "search_id, user_id, query, region, n_results",
                     "search_id")
    expected = [(f"p{i + 1:06d}", f"u{i + 1:06d}", q, reg, len(d))
                for i, (q, reg, d, _) in enumerate(raw)]
    assert searches == expected
    results = _rows(out / "results.parquet", "search_id, rank, doc_id", "search_id, rank")
    assert results == [(f"p{i + 1:06d}", r + 1, doc)
                       for i, (_, _, d, _) in enumerate(raw) for r, doc in enumerate(d)]
    # clicks keep their order within a page (the file is written in input order)
    con = duckdb.connect()
    clicks = con.read_parquet(str(out / "clicks.parquet")).project(
        "search_id, rank, doc_id").fetchall()
    expected_clicks = [(f"p{i + 1:06d}", (d.index(c) + 1) if c in d else None, c)
                       for i, (_, _, d, cl) in enumerate(raw) for c in cl]
    assert clicks == expected_clicks


def test_no_time_user_or_session_columns(converted) -> None:
    out, _ = converted
    con = duckdb.connect()
    cols = con.read_parquet(str(out / "searches.parquet")).columns
    assert "ts" not in cols and "session_id" not in cols
    assert set(con.read_parquet(str(out / "clicks.parquet")).columns) == {
        "search_id", "rank", "doc_id"}
    types = dict(zip(cols, map(str, con.read_parquet(str(out / "searches.parquet")).types),
                     strict=True))
    assert types["search_id"] == "VARCHAR" and types["n_results"] == "INTEGER"


def test_loaded_log_ctr_and_abandonment_match_raw_count(raw, converted) -> None:
    """CTR and abandonment through the loader, against a count from the raw text.

    A click on an id that was not shown is excluded by the loader (counted in its report), so a
    page counts as clicked when at least one click is on a shown document.
    """
    import onlineeval

    out, _ = converted
    logs = onlineeval.load_logs(out)
    n = len(raw)
    clicked = sum(any(c in d for c in cl) for _, _, d, cl in raw)
    shown_clicks = sum(sum(c in d for c in cl) for _, _, d, cl in raw)
    mrr = sum(1.0 / min(d.index(c) + 1 for c in cl if c in d)
              for _, _, d, cl in raw if any(c in d for c in cl)) / n
    assert logs.report.excluded_total == 87
    got = logs.con.execute(
        "WITH c AS (SELECT search_id, count(*) AS k, min(rank) AS r FROM clicks GROUP BY 1) "
        "SELECT count(*), count(c.search_id), sum(coalesce(c.k, 0)), "
        "sum(CASE WHEN s.n_results > 0 AND c.search_id IS NULL THEN 1 ELSE 0 END), "
        "sum(coalesce(1.0 / c.r, 0)) "
        "FROM searches s LEFT JOIN c USING (search_id)").fetchall()[0]
    assert got[0] == n and got[1] == clicked and got[2] == shown_clicks
    assert got[3] == n - clicked
    assert got[4] / n == pytest.approx(mrr, rel=1e-12)
    ctr = clicked / n
    assert 0.6 < ctr < 0.75  # about 68% of the sample's pages have a click (README of the data)


def test_malformed_records_name_file_and_line(tmp_path: Path) -> None:
    good = "1_2\t10,11,12 : 11;\n"
    cases = {
        "no tab": "1_2 10,11,12 : 11;",
        "no colon": "1_2\t10,11,12;",
        "token": "12\t10,11,12 : 11;",
        "empty doc": "1_2\t10,,12 : 11;",
        "twice": "1_2\t10,11,10 : 11;",
        "empty click": "1_2\t10,11,12 : 11 , , 12;",
        "space in doc": "1_2\t10,1 1,12 : 11;",
    }
    for name, bad in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.txt"
        path.write_text(good + good + bad + "\n", encoding="utf-8")
        with pytest.raises(LogFormatError) as err:
            convert(path, tmp_path / "out", "yandex-wscd")
        assert f"{path}:3:" in str(err.value), (name, str(err.value))
        assert err.value.line == 3


def test_records_spanning_separators_and_missing_final_semicolon(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text("5_0\t1,2,3 : 3 , 9  ;  \n\n 6_1\t4,5 :; 7_0\t8 : 8", encoding="utf-8")
    report = convert(path, tmp_path / "out", "yandex-wscd")
    assert report.rows == {"searches": 3, "results": 6, "clicks": 3}
    assert report.counts["clicks_on_unshown_documents"] == 1
    rows = _rows(tmp_path / "out" / "clicks.parquet", "search_id, rank, doc_id",
                 "search_id, doc_id")
    assert rows == [("p000001", 3, "3"), ("p000001", None, "9"), ("p000003", 1, "8")]


def test_cli_convert_and_unknown_format(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["convert", "--from", "yandex", str(DATA), str(tmp_path / "o"),
                 "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["format"] == "yandex-wscd" and payload["rows"]["searches"] == 5000
    assert payload["counts"]["clicks_on_unshown_documents"] == 87
    assert main(["convert", "--from", "yandx", str(DATA), str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'yandex-wscd'" in err
    assert main(["convert", "--from", "aol", str(tmp_path / "missing.txt"),
                 str(tmp_path / "q")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert set(FORMATS) == {"aol", "yandex-wscd"}


def test_online_metrics_on_converted_slice_match_raw_count(raw, converted) -> None:
    """onlineeval.online_metrics on the converted slice against the raw-text count.

    Metrics needing no time are numbers; the time-based ones are null (no ts in the sample).
    """
    import onlineeval

    out, _ = converted
    logs = onlineeval.load_logs(out)
    with pytest.warns(UserWarning):
        m = onlineeval.online_metrics(logs, by=())
    assert len(m) == 1
    row = m.iloc[0]
    n = len(raw)
    clicked = [any(c in d for c in cl) for _, _, d, cl in raw]
    shown_clicks = sum(sum(c in d for c in cl) for _, _, d, cl in raw)
    mrr = sum(1.0 / min(d.index(c) + 1 for c in cl if c in d)
              for (_, _, d, cl), k in zip(raw, clicked, strict=True) if k) / n
    assert row["searches"] == n
    assert row["users"] == n  # each page is its own user
    assert row["ctr"] == pytest.approx(sum(clicked) / n, abs=1e-12)
    assert row["clicks_per_search"] == pytest.approx(shown_clicks / n, abs=1e-12)
    # every page shows 10 documents, so abandonment = pages without a click on a shown doc
    assert row["abandonment_rate"] == pytest.approx((n - sum(clicked)) / n, abs=1e-12)
    assert row["zero_result_rate"] == 0
    assert row["click_mrr"] == pytest.approx(mrr, abs=1e-12)
    for name in ("session_success_rate", "mean_time_to_first_click_s", "reformulation_rate"):
        assert pd.isna(row[name]), name


def test_byte_order_mark_and_crlf_change_nothing(tmp_path: Path, raw) -> None:
    path = tmp_path / "bom.txt"
    text = DATA.read_text(encoding="utf-8").replace("\n", "\r\n")
    path.write_bytes("\ufeff".encode() + text.encode("utf-8"))
    report = convert(path, tmp_path / "out", "yandex-wscd")
    assert report.rows["searches"] == len(raw)
    con = duckdb.connect()
    first = con.execute("SELECT query, region FROM read_parquet($p) WHERE search_id = 'p000001'",
                        {"p": str(tmp_path / "out" / "searches.parquet")}).fetchall()
    assert first == [(raw[0][0], raw[0][1])]
