"""The warehouse recipes of docs/bring-your-own-logs.md ("Exporting from a warehouse") hold:
files shaped as BigQuery, Snowflake and Spark write them load with the numbers of the same
log written canonically (upper-case names, DECIMAL ids and ranks, zone-aware timestamps,
folders of part files with a _SUCCESS marker, Hive partition folders)."""

from __future__ import annotations

import warnings

import duckdb
import pytest

import onlineeval
from onlineeval.errors import OnlineEvalError

# ten searches of three users, one minute apart; clicks on every other search at rank 1
_SEARCHES = ("SELECT {sid} AS {SEARCH_ID}, 'u' || (i % 3) AS {USER_ID}, {ts} AS {TS}, "
             "CASE WHEN i % 2 = 0 THEN 'control' ELSE 'treatment' END AS {VARIANT}, "
             "'e1' AS {EXPERIMENT} FROM range(10) t(i)")
_CLICKS = ("SELECT {sid} AS {SEARCH_ID}, {rank} AS {RANK}, {ts} + INTERVAL 30 second AS {TS} "
           "FROM range(0, 10, 2) t(i)")
_UTC = "TIMESTAMP '2026-03-02 09:00:00' + i * INTERVAL 1 minute"
_ZONED = "TIMESTAMPTZ '2026-03-02 10:00:00+01' + i * INTERVAL 1 minute"


def _write(con, sql: str, target: str, options: str = "") -> None:
    con.execute(f"COPY ({sql}) TO '{target}' (FORMAT parquet{options})")


def _names(upper: bool) -> dict[str, str]:
    names = ("SEARCH_ID", "USER_ID", "TS", "VARIANT", "EXPERIMENT", "RANK")
    return {n: n if upper else n.lower() for n in names}


def _numbers(path) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # metrics the tiny log cannot have are NULL
        logs = onlineeval.load_logs(path)
        m = onlineeval.online_metrics(logs, by=["variant"])
    rows = logs.con.execute(
        "SELECT CAST(search_id AS VARCHAR), user_id, ts, variant FROM searches ORDER BY ts"
    ).fetchall()
    assert logs.report.excluded_total == 0
    return rows, m[["variant", "searches", "ctr"]].to_dict("records")


@pytest.fixture
def canonical(tmp_path):
    con = duckdb.connect()
    (tmp_path / "canonical").mkdir()
    _write(con, _SEARCHES.format(sid="i", ts=_UTC, **_names(False)),
           tmp_path / "canonical" / "searches.parquet")
    _write(con, _CLICKS.format(sid="i", rank="1", ts=_UTC, **_names(False)),
           tmp_path / "canonical" / "clicks.parquet")
    rows, metrics = _numbers(tmp_path / "canonical")
    assert [r["ctr"] for r in metrics] == [1.0, 0.0]  # control clicked on every search
    return rows, metrics


def test_bigquery_export_parts_int64_ids_and_utc_timestamps(tmp_path, canonical):
    for t in ("searches", "clicks"):
        (tmp_path / "export" / t).mkdir(parents=True)
    con = duckdb.connect()
    # EXPORT DATA writes part-*.parquet files; TIMESTAMP arrives zone-aware (UTC)
    zoned_utc = "TIMESTAMPTZ '2026-03-02 09:00:00+00' + i * INTERVAL 1 minute"
    for part, where in (("000000000000", "i < 5"), ("000000000001", "i >= 5")):
        _write(con, f"SELECT * FROM ({_SEARCHES}) WHERE {where.replace('i', 'search_id')}"
               .format(sid="CAST(i AS BIGINT)", ts=zoned_utc, **_names(False)),
               tmp_path / "export" / "searches" / f"part-{part}.parquet")
    _write(con, _CLICKS.format(sid="CAST(i AS BIGINT)", rank="1", ts=zoned_utc,
                               **_names(False)),
           tmp_path / "export" / "clicks" / "part-000000000000.parquet")
    assert _numbers(tmp_path / "export") == canonical


def test_snowflake_upper_case_names_decimals_and_zoned_timestamps(tmp_path, canonical):
    for t in ("searches", "clicks"):
        (tmp_path / "export" / t).mkdir(parents=True)
    con = duckdb.connect()
    up = _names(True)
    dec = "CAST(i AS DECIMAL(38, 0))"
    _write(con, _SEARCHES.format(sid=dec, ts=_ZONED, **up),
           tmp_path / "export" / "searches" / "data_0_0_0.snappy.parquet")
    _write(con, _CLICKS.format(sid=dec, rank="CAST(1 AS DECIMAL(38, 0))", ts=_ZONED, **up),
           tmp_path / "export" / "clicks" / "data_0_0_0.snappy.parquet")
    assert _numbers(tmp_path / "export") == canonical
    # a fraction in a NUMBER rank is an error naming the file and the column
    _write(con, _CLICKS.format(sid=dec, rank="CAST(1.5 AS DECIMAL(38, 1))", ts=_ZONED, **up),
           tmp_path / "export" / "clicks" / "data_0_0_0.snappy.parquet")
    with pytest.raises(OnlineEvalError) as err:
        onlineeval.load_logs(tmp_path / "export")
    message = str(err.value)
    assert "data_0_0_0.snappy.parquet" in message and "RANK" in message.upper()
    assert "\n" not in message


def test_spark_part_folders_with_success_marker_and_hive_partitions(tmp_path, canonical):
    con = duckdb.connect()
    (tmp_path / "export").mkdir()
    # partitionBy("variant"): variant=control/ and variant=treatment/ folders
    _write(con, _SEARCHES.format(sid="'' || i", ts=_UTC, **_names(False)),
           tmp_path / "export" / "searches", ", PARTITION_BY (variant)")
    _write(con, _CLICKS.format(sid="'' || i", rank="1", ts=_UTC, **_names(False)),
           tmp_path / "export" / "clicks", ", PER_THREAD_OUTPUT")
    for t in ("searches", "clicks"):
        (tmp_path / "export" / t / "_SUCCESS").write_text("")
    assert {p.name for p in (tmp_path / "export" / "searches").iterdir()} == {
        "variant=control", "variant=treatment", "_SUCCESS"}
    assert _numbers(tmp_path / "export") == canonical
