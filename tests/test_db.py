"""onlineeval.db.connect: memory and thread controls, spilling, progress bar, temp directory."""

from __future__ import annotations

import gc
import os
from typing import Any

import duckdb
import pandas as pd
import pytest

from onlineeval.db import connect


def _setting(con: duckdb.DuckDBPyConnection, name: str) -> Any:
    return con.execute("SELECT current_setting($n)", {"n": name}).fetchone()[0]


def test_connect_memory_limit_from_argument_and_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ONLINEEVAL_MEMORY_LIMIT", raising=False)
    assert _setting(connect(memory_limit="300MB"), "memory_limit") in ("286.1 MiB", "300.0 MB")
    monkeypatch.setenv("ONLINEEVAL_MEMORY_LIMIT", "200MB")
    assert _setting(connect(), "memory_limit") in ("190.7 MiB", "200.0 MB")
    # the argument wins over the environment
    assert _setting(connect(memory_limit="300MB"), "memory_limit") in ("286.1 MiB", "300.0 MB")


def test_connect_threads_from_argument_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONLINEEVAL_THREADS", "1")
    assert _setting(connect(), "threads") == 1
    assert _setting(connect(threads=2), "threads") == 2


@pytest.mark.parametrize("bad", ["0", "two", "-1"])
def test_connect_rejects_a_bad_threads_variable(monkeypatch: pytest.MonkeyPatch,
                                                bad: str) -> None:
    from onlineeval.errors import InvalidParameterError

    monkeypatch.setenv("ONLINEEVAL_THREADS", bad)
    with pytest.raises(InvalidParameterError, match="ONLINEEVAL_THREADS"):
        connect()


def test_connect_rejects_a_bad_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from onlineeval.errors import InvalidParameterError

    monkeypatch.setenv("ONLINEEVAL_MEMORY_LIMIT", "lots")
    with pytest.raises(InvalidParameterError, match="ONLINEEVAL_MEMORY_LIMIT.*'lots'"):
        connect()


def _bar_on_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    # DuckDB's own default depends on the process's file descriptors (pytest captures them):
    # start every connection with the bar on, so only connect() can turn it off
    real = duckdb.connect

    def bar_on(*a: Any, **k: Any) -> duckdb.DuckDBPyConnection:
        con = real(*a, **k)
        con.execute("SET enable_progress_bar = true")
        return con

    monkeypatch.setattr("onlineeval.db.duckdb.connect", bar_on)


def test_connect_spills_and_draws_no_progress_bar_off_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _bar_on_by_default(monkeypatch)
    con = connect()
    assert _setting(con, "temp_directory")
    # pytest captures stderr, so it is not a terminal here
    assert _setting(con, "enable_progress_bar") is False


def test_connect_keeps_duckdb_progress_bar_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tty_stderr: Any,
) -> None:
    _bar_on_by_default(monkeypatch)
    tty_stderr()
    assert _setting(connect(), "enable_progress_bar") is True


def test_connect_removes_its_own_temp_directory() -> None:
    con = connect(memory_limit="40MB", threads=1)
    tmp = con.sql("SELECT current_setting('temp_directory')").fetchall()[0][0]
    # make DuckDB spill into it, so the directory is not empty when it goes
    con.sql("SELECT count(*) FROM (SELECT * FROM range(3000000) ORDER BY random())").fetchall()
    assert os.path.isdir(tmp)
    del con
    gc.collect()
    assert not os.path.exists(tmp)


def test_connect_leaves_a_given_temp_directory(tmp_path) -> None:
    con = connect(temp_directory=str(tmp_path))
    assert con.sql("SELECT current_setting('temp_directory')").fetchall()[0][0] == str(tmp_path)
    del con
    gc.collect()
    assert tmp_path.is_dir()


def _rss_mb() -> float:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    pytest.skip("no resident-set size in /proc/self/status on this system")


def test_release_memory_keeps_the_limit_and_returns_duckdbs_cached_memory() -> None:
    from onlineeval.db import release_memory

    con = connect(memory_limit="500MB", threads=2)
    # a hash aggregation of 3M groups leaves its freed memory cached in DuckDB's allocator
    con.execute("SELECT count(*) FROM (SELECT i, count(*) FROM range(3000000) t(i) "
                "GROUP BY i)").fetchall()
    before = _rss_mb()
    release_memory(con)
    assert before - _rss_mb() > 50
    assert _setting(con, "memory_limit") == "476.8 MiB"
    # a connection not made by connect(): the reported limit, never drifting lower
    for limit, shown in (("500MB", "476.8 MiB"), ("2GB", "1.8 GiB"), ("123MB", "117.3 MiB")):
        raw = duckdb.connect()
        raw.execute("SET memory_limit = $v", {"v": limit})
        for _ in range(5):
            release_memory(raw)
        assert _setting(raw, "memory_limit") == shown


def test_fetch_df_gives_the_rows_of_df_in_order() -> None:
    from onlineeval.db import fetch_df

    con = connect(threads=4)
    # HUGEINT sums (Arrow: decimal128), NULLs, texts, timestamps, doubles; 200k groups, so
    # the table's scan order is not the query's
    sql = ("SELECT i % 100000 AS k, CASE WHEN i % 7 = 0 THEN NULL ELSE 'u' || (i % 13) END "
           "AS name, sum(i) AS s, sum(i * 0.5) AS d, max(TIMESTAMP '2024-01-01' + "
           "INTERVAL (i) SECOND) AS ts, count(*) FILTER (WHERE i % 3 = 0) AS n "
           "FROM range($n) t(i) GROUP BY ALL ORDER BY k, name")
    want = con.execute(sql, {"n": 400_000}).df()
    got = fetch_df(con, sql, {"n": 400_000}, order=["k", "name"])
    pd.testing.assert_frame_equal(got, want)
    assert "_oe_fetched" not in {r[0] for r in con.execute("SHOW TABLES").fetchall()}


def test_fetch_arrays_gives_the_columns_of_df_in_order_nulls_as_nan() -> None:
    import numpy as np

    from onlineeval.db import fetch_arrays

    con = connect(threads=4)
    # a HUGEINT sum (Arrow: decimal128), an integer count, doubles with NULLs; 100k groups
    # in the query's ORDER BY, which the arrays must keep
    sql = ("SELECT sum(i) AS s, count(*) AS n, CASE WHEN k % 7 = 0 THEN NULL ELSE "
           "sum(i * 0.25) END AS d FROM (SELECT i, i % 100000 AS k FROM range($n) t(i)) "
           "GROUP BY k ORDER BY k DESC")
    want = con.execute(sql, {"n": 300_000}).df()
    got = fetch_arrays(con, sql, {"n": 300_000})
    assert list(got) == ["s", "n", "d"]
    for name in want.columns:
        assert got[name].dtype == np.float64
        np.testing.assert_array_equal(got[name], want[name].to_numpy(dtype=float))
    assert np.isnan(got["d"]).sum() == len(range(0, 100_000, 7))
