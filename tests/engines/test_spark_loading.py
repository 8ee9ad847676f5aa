"""Tables given as Spark DataFrames are loaded and validated in Spark, with the loader's own
SQL translated: the same load report (rows read, every exclusion reason), the same clean
rows and the same errors as DuckDB loading the same typed tables.

The hostile log is tests/data/logs/tiny (one or more rows for every exclusion reason, its
counts worked out by hand in its PROVENANCE.md), typed as a Spark table would be.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import onlineeval
import onlineeval.db
from onlineeval.errors import InvalidParameterError, SchemaError, StrictModeError

pytest.importorskip("pyspark")

TINY = Path(__file__).resolve().parents[1] / "data" / "logs" / "tiny"
TABLES = ("searches", "results", "clicks")
#: the tiny log's columns as typed Spark columns
SCHEMAS = {
    "searches": "search_id string, user_id string, ts timestamp, query string, "
                "experiment string, variant string",
    "results": "search_id string, rank int, doc_id string",
    "clicks": "search_id string, rank int, doc_id string, ts timestamp, dwell_ms double",
}


def _typed_rows() -> dict[str, list[tuple]]:
    """The tiny log's rows with each column converted as its Spark type says (by DuckDB,
    reading the CSV files as text: the typed copy a warehouse would hold)."""
    import duckdb

    con = duckdb.connect()
    out = {}
    for t, schema in SCHEMAS.items():
        cols = [c.split() for c in schema.split(", ")]
        types = {"string": "VARCHAR", "int": "INTEGER", "timestamp": "TIMESTAMP",
                 "double": "DOUBLE"}
        rel = con.read_csv(str(TINY / f"{t}.csv"), all_varchar=True, header=True)
        exprs = ", ".join(f"CAST({n} AS {types[k]}) AS {n}" for n, k in cols)
        out[t] = rel.select(exprs).fetchall()
    return out


ROWS = _typed_rows()


def _arrow(rows: dict[str, list[tuple]]) -> dict[str, pa.Table]:
    types = {"string": pa.string(), "int": pa.int32(), "timestamp": pa.timestamp("us"),
             "double": pa.float64()}
    out = {}
    for t, schema in SCHEMAS.items():
        fields = [pa.field(n, types[k]) for n, k in (c.split() for c in schema.split(", "))]
        out[t] = pa.Table.from_pylist([dict(zip([f.name for f in fields], r, strict=True))
                                       for r in rows[t]], schema=pa.schema(fields))
    return out


def _frames(session, rows: dict[str, list[tuple]], folder: Path) -> dict:
    """Spark DataFrames over Parquet files of ``rows`` (as a lake table is read; a DataFrame
    made from Python rows runs every query through Python workers, slowly)."""
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    frames = {}
    for t, table in _arrow(rows).items():
        pq.write_table(table, folder / f"{t}.parquet")
        frames[t] = session.read.parquet(str(folder / f"{t}.parquet"))
    return frames


def _snapshot(logs) -> tuple:
    views = {t: sorted(logs.con.table(t).fetchall(), key=repr) for t in TABLES}
    return views, logs.report.rows_read, logs.report.excluded, logs.report.empty_columns


def _load(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return onlineeval.load_logs(**kwargs)


@pytest.fixture
def session(spark_session):
    return spark_session.newSession()


def test_a_hostile_log_gets_the_same_report_and_rows_on_spark(session, tmp_path):
    duck = _load(**_arrow(ROWS))
    # the counts of tiny/PROVENANCE.md, worked out by hand
    assert duck.report.rows_read == {"searches": 8, "clicks": 14, "results": 11}
    assert sum(duck.report.excluded.values()) == 4 + 6 + 10
    with pytest.warns(onlineeval.errors.ExcludedRowsWarning) as caught:
        spark = onlineeval.load_logs(**_frames(session, ROWS, tmp_path))
    assert spark.con.engine == "spark" and spark.con.spark is session
    assert _snapshot(spark) == _snapshot(duck)
    assert any("20 rows excluded" in str(w.message) for w in caught)


@pytest.mark.slow
def test_strict_mode_lists_the_same_rows(session, tmp_path):
    messages = []
    for tables in (_arrow(ROWS), _frames(session, ROWS, tmp_path)):
        with pytest.raises(StrictModeError) as err:
            onlineeval.load_logs(**tables, strict=True)
        # the first line names the source (Arrow table / DataFrame); the example rows are
        # the first three of each reason in no set order
        messages.append(sorted(str(err.value).splitlines()[1:]))
    assert messages[0] == messages[1]


def _with(table: str, column: str, values: list) -> dict[str, list[tuple]]:
    rows = {t: list(r) for t, r in ROWS.items()}
    names = [c.split()[0] for c in SCHEMAS[table].split(", ")]
    at = names.index(column)
    rows[table] = [r[:at] + (v,) + r[at + 1:] for r, v in zip(rows[table], values,
                                                              strict=False)] + rows[table][len(values):]
    return rows


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_a_bad_dwell_is_the_same_error(session, bad, tmp_path):
    """A dwell time must be a finite number >= 0 (the portable finiteness check: NaN and the
    infinities fail it on both engines)."""
    rows = _with("clicks", "dwell_ms", [5000.0, bad])
    errors = []
    for tables in (_arrow(rows), _frames(session, rows, tmp_path)):
        with pytest.raises(SchemaError) as err:
            onlineeval.load_logs(**tables)
        errors.append(str(err.value))
    # the bad value as each engine writes a double as text (nan / NaN, inf / Infinity)
    shape = [re.sub(r"e\.g\. .*?\. Fix", "e.g. <value>. Fix", e.split(": ", 1)[1])
             for e in errors]
    assert shape[0] == shape[1]
    assert "column 'dwell_ms' (clicks.dwell_ms) must hold a finite number >= 0; 1 of 14" in \
        errors[1]


def test_text_that_needs_parsing_is_refused_on_spark(session, tmp_path):
    frames = _frames(session, ROWS, tmp_path)
    frames["clicks"] = frames["clicks"].selectExpr("search_id", "CAST(rank AS string) AS rank",
                                                   "doc_id")
    with pytest.raises(SchemaError) as err:
        onlineeval.load_logs(**frames)
    text = str(err.value)
    assert text.startswith("Spark DataFrame clicks=: column 'rank' (clicks.rank) is text")
    assert "\n" not in text and "cast it in Spark first" in text


def test_tables_must_be_dataframes_of_one_session(session, spark_session, tmp_path):
    frames = _frames(session, ROWS, tmp_path)
    other = spark_session.newSession()
    with pytest.raises(SchemaError, match="one Spark session"):
        onlineeval.load_logs(searches=frames["searches"],
                             clicks=_frames(other, ROWS, tmp_path / "other")["clicks"])
    with pytest.raises(SchemaError, match="one Spark session"):
        onlineeval.load_logs(searches=frames["searches"], clicks=TINY / "clicks.csv")
    with pytest.raises(InvalidParameterError, match="own Spark session"):
        onlineeval.load_logs(**frames, engine="duckdb")
    with pytest.raises(InvalidParameterError, match="leave con= out"):
        onlineeval.load_logs(**frames, con=onlineeval.db.connect())
