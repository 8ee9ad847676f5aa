"""Logs from data lakes: a Delta table (``deltalake``), an Iceberg table (``pyiceberg``, SQLite
catalog) and Arrow streams reach DuckDB through Arrow and give the numbers of the same log read
from its Parquet or CSV files: the same load report (rows read, every exclusion reason), the
same clean rows, the same metrics.

The metrics are compared exactly on one-thread connections: with several threads DuckDB may
add a column's floats in another order on each run, whatever the source.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import onlineeval
from onlineeval import db
from onlineeval.errors import OnlineEvalError, SchemaError
from onlineeval.interleaving import outcomes
from onlineeval.online import online_metrics, position_ctr

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs" / "interleaving"
TABLES = ("searches", "results", "clicks")


def _snapshot(logs) -> tuple:
    views = {t: logs.con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in TABLES}
    return views, logs.report.rows_read, logs.report.excluded, logs.report.empty_columns


def _load(**tables):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tiny log's exclusions; compared in the report
        return onlineeval.load_logs(**tables, con=db.connect(threads=1))


def _numbers(logs) -> tuple:
    by = ("experiment", "variant")
    return (online_metrics(logs, by=by), position_ctr(logs, by=by),
            outcomes.page_outcomes(logs))


def _assert_same_numbers(got, expected) -> None:
    for a, b in zip(_numbers(got), _numbers(expected), strict=True):
        if hasattr(a, "equals"):
            assert a.equals(b), (a, b)
        else:
            assert a == b


@pytest.fixture(scope="module")
def sample_arrow():
    """The first 4,000 searches of the interleaving sample log, with their results and
    clicks (typed Parquet columns: timestamps, integers, text)."""
    import pyarrow.compute as pc

    searches = pq.read_table(SAMPLE / "searches.parquet").slice(0, 4000)
    keep = searches.column("search_id")
    tables = {"searches": searches}
    for t in ("results", "clicks"):
        table = pq.read_table(SAMPLE / f"{t}.parquet")
        tables[t] = table.filter(pc.is_in(table.column("search_id"), value_set=keep))
    return tables


@pytest.fixture(scope="module")
def parquet_reference(tmp_path_factory, sample_arrow):
    root = tmp_path_factory.mktemp("parquet")
    for t, table in sample_arrow.items():
        pq.write_table(table, root / f"{t}.parquet")
    return _load(**{t: root / f"{t}.parquet" for t in TABLES})


# --- Delta -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def delta_dir(tmp_path_factory, sample_arrow):
    deltalake = pytest.importorskip("deltalake")
    root = tmp_path_factory.mktemp("delta")
    for t, table in sample_arrow.items():
        deltalake.write_deltalake(root / t, table)
    return root


def test_a_delta_table_gives_the_numbers_of_its_parquet_files(delta_dir, parquet_reference):
    import deltalake

    logs = _load(**{t: deltalake.DeltaTable(delta_dir / t) for t in TABLES})
    assert logs.source == "searches=DeltaTable, results=DeltaTable, clicks=DeltaTable"
    assert _snapshot(logs) == _snapshot(parquet_reference)
    _assert_same_numbers(logs, parquet_reference)


def test_a_delta_table_is_read_at_the_version_it_was_opened(tmp_path, tiny_dir, tiny_frames):
    """Rows deleted in a later version are not counted (their files are still in the
    folder), and a DeltaTable opened at an older version reads that version."""
    deltalake = pytest.importorskip("deltalake")
    frames = tiny_frames()
    expected = _snapshot(_load(searches=tiny_dir / "searches.csv",
                               results=tiny_dir / "results.csv", clicks=tiny_dir / "clicks.csv"))
    for t, df in frames.items():
        deltalake.write_deltalake(tmp_path / t, pa.Table.from_pandas(df, preserve_index=False))
    version0 = {t: deltalake.DeltaTable(tmp_path / t) for t in TABLES}
    assert _snapshot(_load(**version0)) == expected
    deltalake.DeltaTable(tmp_path / "searches").delete("search_id = 's7'")
    now = _load(**{t: deltalake.DeltaTable(tmp_path / t) for t in TABLES})
    assert now.report.rows_read["searches"] == expected[1]["searches"] - 1
    assert ("s7",) not in now.con.execute("SELECT search_id FROM searches").fetchall()
    # s7's click (not on the page: it had no results) is now a click of an unknown search
    assert now.report.excluded[("clicks", "unknown_search")] == \
        expected[2][("clicks", "unknown_search")] + 1
    old = _load(**{t: deltalake.DeltaTable(tmp_path / t, version=0) for t in TABLES})
    assert _snapshot(old) == expected
    # the folder itself is still refused: its files hold both versions
    with pytest.raises(SchemaError, match="Delta Lake table"):
        onlineeval.load_logs(searches=tmp_path / "searches", clicks=tmp_path / "clicks")


# --- Iceberg ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def iceberg_catalog(tmp_path_factory, sample_arrow):
    pytest.importorskip("pyiceberg")
    pytest.importorskip("sqlalchemy")
    from pyiceberg.catalog.sql import SqlCatalog

    root = tmp_path_factory.mktemp("iceberg")
    catalog = SqlCatalog("local", uri=f"sqlite:///{root}/catalog.db",
                         warehouse=(root / "warehouse").as_uri())
    catalog.create_namespace("sample")
    for t, table in sample_arrow.items():
        catalog.create_table(f"sample.{t}", schema=table.schema).append(table)
    return catalog


def test_an_iceberg_table_gives_the_numbers_of_its_parquet_files(iceberg_catalog,
                                                                 parquet_reference):
    logs = _load(**{t: iceberg_catalog.load_table(f"sample.{t}") for t in TABLES})
    assert _snapshot(logs) == _snapshot(parquet_reference)
    _assert_same_numbers(logs, parquet_reference)


def test_an_iceberg_scan_is_read_as_filtered_and_current(iceberg_catalog, tiny_dir, tiny_frames):
    """A scan given as the table reads its rows (its filter applied); rows an overwrite
    replaced are not counted."""
    frames = tiny_frames()
    for t, df in frames.items():
        table = pa.Table.from_pandas(df, preserve_index=False)
        iceberg_catalog.create_table(f"sample.tiny_{t}", schema=table.schema).append(table)
    tiny = {t: iceberg_catalog.load_table(f"sample.tiny_{t}") for t in TABLES}
    expected = _snapshot(_load(**{t: tiny_dir / f"{t}.csv" for t in TABLES}))
    assert _snapshot(_load(**tiny)) == expected

    from pyiceberg.expressions import NotEqualTo

    scan = tiny["searches"].scan(row_filter=NotEqualTo("search_id", "s7"))
    filtered = _load(searches=scan, results=tiny["results"], clicks=tiny["clicks"])
    assert filtered.report.rows_read["searches"] == expected[1]["searches"] - 1
    # an overwrite keeps the old data files in the table's folder; they are not read
    tiny["searches"].overwrite(pa.Table.from_pandas(frames["searches"].head(2),
                                                    preserve_index=False))
    now = _load(**{t: iceberg_catalog.load_table(f"sample.tiny_{t}") for t in TABLES})
    assert now.report.rows_read["searches"] == 2


# --- Arrow -----------------------------------------------------------------------------------

def test_a_record_batch_reader_is_read_once_and_validated_like_a_file(tiny_dir, tiny_frames):
    """A reader gives its rows once; the loader copies them into a temporary table, so
    validation's several passes see every row (was: not accepted)."""
    expected = _snapshot(_load(**{t: tiny_dir / f"{t}.csv" for t in TABLES}))
    readers = {}
    for t, df in tiny_frames().items():
        table = pa.Table.from_pandas(df, preserve_index=False)
        readers[t] = pa.RecordBatchReader.from_batches(table.schema,
                                                       table.to_batches(max_chunksize=3))
    logs = _load(**readers)
    assert _snapshot(logs) == expected
    assert logs.source == ("searches=RecordBatchReader, results=RecordBatchReader, "
                           "clicks=RecordBatchReader")


def test_a_lake_table_that_cannot_be_read_is_one_line(tmp_path, tiny_dir):
    deltalake = pytest.importorskip("deltalake")
    deltalake.write_deltalake(tmp_path / "s", pa.table({"search_id": ["a"], "user_id": ["u"]}))
    table = deltalake.DeltaTable(tmp_path / "s")
    shutil.rmtree(tmp_path / "s")
    # a broken file opened for another log just before is not blamed (was: it was named)
    (tmp_path / "other.jsonl").write_text('{"search_id": "a", "Search_ID": "b"}\n')
    with pytest.raises(OnlineEvalError, match="other.jsonl"):
        onlineeval.load_logs(searches=tmp_path / "other.jsonl", clicks=tiny_dir / "clicks.csv")
    with pytest.raises(OnlineEvalError) as err:
        onlineeval.load_logs(searches=table, clicks=tiny_dir / "clicks.csv")
    assert "\n" not in str(err.value)
    assert str(err.value).startswith("Delta table searches=: cannot read the searches table")
