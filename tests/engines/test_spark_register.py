"""Registering Arrow data on Spark: the Parquet file's schema is given, not read by a Spark
job, and it is the schema Spark would have read."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("pyspark")

#: one column of every type the schema is given for, and two it is not (read from the file)
TABLE = pa.table({
    "text": pa.array(["a", None], pa.string()),
    "long_text": pa.array(["b", "c"], pa.large_string()),
    "i8": pa.array([1, None], pa.int8()), "i16": pa.array([2, 3], pa.int16()),
    "i32": pa.array([4, 5], pa.int32()), "i64": pa.array([6, None], pa.int64()),
    "f32": pa.array([0.5, 1.5], pa.float32()), "f64": pa.array([0.1, None], pa.float64()),
    "flag": pa.array([True, None], pa.bool_()),
    "day": pa.array([dt.date(2024, 1, 2), None], pa.date32()),
    "amount": pa.array([decimal.Decimal("1.25"), None], pa.decimal128(10, 2)),
    "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 6), None], pa.timestamp("us")),
})


def _jobs(con) -> int:
    return con.spark.sparkContext._jsc.sc().dagScheduler().nextJobId()


def test_the_schema_is_given_and_is_the_one_spark_reads(spark_con, tmp_path):
    from onlineeval.engines.spark import _parquet_schema

    before = _jobs(spark_con)
    spark_con.register("plain", TABLE)
    assert _jobs(spark_con) == before  # no job read the file's schema
    view = spark_con.spark.table("plain")
    pq.write_table(TABLE.drop_columns(["ts"]), tmp_path / "t.parquet")
    read = spark_con.spark.read.parquet(str(tmp_path / "t.parquet")).schema
    assert _parquet_schema(TABLE.drop_columns(["ts"]).schema) == read
    assert [(f.name, f.dataType) for f in view.schema.fields][:-1] == \
        [(f.name, f.dataType) for f in read.fields]
    rows = [tuple(r)[:-1] for r in view.collect()]
    assert rows == [tuple(r.values())[:-1] for r in TABLE.to_pylist()]


@pytest.mark.parametrize("kind", [pa.uint32(), pa.null(), pa.list_(pa.int64())])
def test_other_types_are_read_from_the_file(kind):
    from onlineeval.engines.spark import _parquet_schema

    assert _parquet_schema(pa.schema([("x", pa.int64()), ("y", kind)])) is None
    assert _parquet_schema(pa.schema([])) is None
