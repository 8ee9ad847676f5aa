"""Small text tables and DataFrames are read once into a temporary table before their first
validation pass (``onlineeval.logs.validate._store``), so each later query plans over a table
instead of the file reader and the conversions. Counts, clean views, warnings and error
messages must be those of the same log read lazily from its files: each test loads both ways
(the lazy way by setting the size limits below every table) and checks both against the
same expectation."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import LogFormatError, SchemaError, StrictModeError
from onlineeval.logs import validate

from .test_validate import _random_log, _reference

_STORED = ("_oe_stored_searches", "_oe_stored_results", "_oe_stored_clicks")


def _stored_tables(logs) -> set[str]:
    return {r[0] for r in logs.con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE table_name LIKE '_oe_stored_%'"
    ).fetchall()}


def _lazy(monkeypatch) -> None:
    monkeypatch.setattr(validate, "STORE_BYTES", -1)
    monkeypatch.setattr(validate, "STORE_ROWS", -1)


def _load(**kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        logs = onlineeval.load_logs(**kwargs)
    return logs, [str(w.message) for w in caught]


def _everything(logs) -> tuple:
    q = logs.con.execute
    r = logs.report
    return (r.rows_read, r.excluded, r.empty_columns, r.provided,
            q("SELECT * FROM searches ORDER BY ALL").fetchall(),
            q("SELECT * FROM results ORDER BY ALL").fetchall(),
            q("SELECT * FROM clicks ORDER BY ALL").fetchall())


def _write_csv(log: dict[str, pd.DataFrame], directory) -> None:
    directory.mkdir()
    for name, frame in log.items():
        frame.to_csv(directory / f"{name}.csv", index=False)


@pytest.mark.parametrize("seed", range(4))
def test_random_csv_logs_stored_or_lazy_match_the_pandas_reference(seed, tmp_path,
                                                                    monkeypatch):
    log = _random_log(seed)
    excluded, searches, results, clicks = _reference(log)
    _write_csv(log, tmp_path / "log")
    got = []
    for lazy in (False, True):
        if lazy:
            _lazy(monkeypatch)
        logs, messages = _load(path=tmp_path / "log")
        assert _stored_tables(logs) == (set() if lazy else set(_STORED))
        typed = {r[0] for r in logs.con.execute(
            "SELECT view_name FROM duckdb_views() WHERE view_name LIKE '_oe_typed_%'").fetchall()}
        # a stored table's typed columns are read from its copy: no typed view is made
        assert len(typed) == (3 if lazy else 0)
        assert logs.report.excluded == excluded
        q = logs.con.execute
        assert q("SELECT search_id, n_results FROM searches ORDER BY 1").fetchall() == searches
        assert q("SELECT search_id, rank, doc_id FROM results ORDER BY ALL").fetchall() == results
        assert q("SELECT search_id, rank, doc_id FROM clicks ORDER BY ALL").fetchall() == clicks
        got.append((_everything(logs), messages))
    assert got[0] == got[1]


def test_small_dataframes_are_stored_and_read_the_same(monkeypatch):
    log = _random_log(3)
    stored, stored_messages = _load(**log)
    assert _stored_tables(stored) == set(_STORED)
    _lazy(monkeypatch)
    lazy, lazy_messages = _load(**log)
    assert _stored_tables(lazy) == set()
    assert _everything(stored) == _everything(lazy)
    assert stored_messages == lazy_messages


def test_tiny_log_report_views_and_strict_message_are_the_same(tiny_dir, monkeypatch):
    stored, stored_messages = _load(path=tiny_dir)
    with pytest.raises(StrictModeError) as stored_strict:
        onlineeval.load_logs(tiny_dir, strict=True)
    _lazy(monkeypatch)
    lazy, lazy_messages = _load(path=tiny_dir)
    with pytest.raises(StrictModeError) as lazy_strict:
        onlineeval.load_logs(tiny_dir, strict=True)
    # the hand-counted report of tests/data/logs/tiny/PROVENANCE.md
    assert stored.report.excluded_total == 4 + 6 + 10
    assert _everything(stored) == _everything(lazy)
    assert stored_messages == lazy_messages
    assert str(stored_strict.value) == str(lazy_strict.value)


def test_bad_values_and_bad_lines_give_the_same_message(tmp_path, monkeypatch):
    log = {"searches": pd.DataFrame({"search_id": ["a", "b"], "user_id": ["u", "v"],
                                     "ts": ["2024-01-01", "2024-01-02"]}),
           "clicks": pd.DataFrame({"search_id": ["a", "b", "b"], "rank": ["1", "x", "y"]})}
    _write_csv(log, tmp_path / "values")
    ragged = tmp_path / "ragged"
    _write_csv({"searches": log["searches"]}, ragged)
    (ragged / "clicks.csv").write_text("search_id,rank\na,1\nb,2,3\n")
    messages = []
    for lazy in (False, True):
        if lazy:
            _lazy(monkeypatch)
        with pytest.raises(SchemaError) as bad_value:
            onlineeval.load_logs(tmp_path / "values")
        with pytest.raises(LogFormatError) as bad_line:
            onlineeval.load_logs(ragged)
        messages.append((str(bad_value.value), str(bad_line.value)))
    assert "'x'" in messages[0][0] and "clicks.csv" in messages[0][1]
    assert messages[0] == messages[1]


def test_a_larger_table_stays_in_its_file_and_a_stale_copy_is_dropped(tiny_dir, monkeypatch):
    logs, _ = _load(path=tiny_dir)
    assert _stored_tables(logs) == set(_STORED)
    # clicks.csv is the largest of the three tiny files: only it is over the limit
    sizes = {t: (tiny_dir / f"{t}.csv").stat().st_size for t in ("searches", "results",
                                                                  "clicks")}
    assert max(sizes.values()) == sizes["clicks"] > sorted(sizes.values())[1]
    monkeypatch.setattr(validate, "STORE_BYTES", sizes["clicks"] - 1)
    again, _ = _load(path=tiny_dir, con=logs.con)
    assert _stored_tables(again) == {"_oe_stored_searches", "_oe_stored_results"}
    _lazy(monkeypatch)
    lazy, _ = _load(path=tiny_dir, con=logs.con)
    assert _stored_tables(lazy) == set()
    assert _everything(again) == _everything(lazy)
