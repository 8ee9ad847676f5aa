"""The online, positions and top-queries commands, run through onlineeval.cli.main."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from onlineeval.cli import main
from onlineeval.online.definitions import COLUMNS


@pytest.fixture
def log_dir(tmp_path, hand):
    hand.searches_df().to_csv(tmp_path / "searches.csv", index=False)
    hand.clicks_df().to_csv(tmp_path / "clicks.csv", index=False)
    hand.results_df().to_csv(tmp_path / "results.csv", index=False)
    return tmp_path


def test_online_json(log_dir, capsys):
    assert main(["online", str(log_dir), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    rows = json.loads(out)
    assert [list(r) for r in rows] == [["variant", *COLUMNS]] * 2
    control = rows[0]
    assert control["variant"] == "control"
    assert control["searches"] == 5 and control["sessions"] == 2 and control["users"] == 1
    assert control["ctr"] == pytest.approx(0.6)
    assert control["mean_time_to_first_click_s"] == pytest.approx(50 / 3)
    # the load report goes to stderr, with the excluded rows
    assert "searches 12 rows (2 excluded)" in err
    assert "clicks 9 rows (2 excluded)" in err


def test_online_csv_by_day_and_parameters(log_dir, capsys):
    assert main(["online", str(log_dir), "--by", "day", "--format", "csv",
                 "--session-gap-min", "20", "--sat-dwell-s", "5"]) == 0
    df = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(df.columns) == ["day", *COLUMNS]
    assert df["searches"].tolist() == [9, 1]
    # day 1 with a 20-minute gap: u1 has 3 sessions, u2 has 2
    assert df["sessions"].tolist() == [5, 1]


def test_online_table_whole_log(log_dir, capsys):
    assert main(["online", str(log_dir), "--by", ""]) == 0
    out = capsys.readouterr().out
    header, row = out.strip().splitlines()
    assert header.split() == list(COLUMNS)
    assert row.split()[:3] == ["10", "5", "3"]
    assert row.split()[3] == "0.6000"


def test_online_strict_fails_on_excluded_rows(log_dir, capsys):
    assert main(["online", str(log_dir), "--strict"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("onlineeval online: error:")
    assert len(err.strip().splitlines()) >= 1


def test_online_unknown_by_is_one_line_error(log_dir, capsys):
    assert main(["online", str(log_dir), "--by", "nope"]) == 2
    err = capsys.readouterr().err
    assert "cannot group by 'nope'" in err and "Traceback" not in err


def test_positions_and_top_queries(log_dir, capsys):
    assert main(["positions", str(log_dir), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["rank"], r["shown"], r["clicked"]) for r in rows] == [
        (1, 9, 3), (2, 7, 2), (3, 3, 1), (4, 1, 1)]
    assert main(["top-queries", str(log_dir), "-n", "2", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["query"], r["searches"]) for r in rows] == [("a", 2), ("c", 2)]


def test_log_without_ts_warns_on_stderr(tmp_path, hand, capsys):
    hand.searches_df(ts=False).to_csv(tmp_path / "searches.csv", index=False)
    hand.clicks_df(ts=False).to_csv(tmp_path / "clicks.csv", index=False)
    assert main(["online", str(tmp_path), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    rows = json.loads(out)
    assert all(r["sessions"] is None and r["session_success_rate"] is None for r in rows)
    assert rows[0]["ctr"] == pytest.approx(0.6)
    assert "warning: sessions is NULL" in err


def test_default_by_falls_back_to_whole_log_without_variant(tmp_path, hand, capsys):
    hand.searches_df().drop(columns="variant").to_csv(tmp_path / "searches.csv", index=False)
    hand.clicks_df().to_csv(tmp_path / "clicks.csv", index=False)
    assert main(["online", str(tmp_path), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    rows = json.loads(out)
    assert len(rows) == 1 and "variant" not in rows[0]
    assert rows[0]["searches"] == 10
    assert "grouping by" not in err
