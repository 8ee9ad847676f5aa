"""Open one log table (a file, a folder or glob of parts, a DataFrame, an Arrow table, dataset
or record batch reader, a Delta or Iceberg table) as a DuckDB relation.

The format is decided by the file extension (see :mod:`onlineeval.logs.paths`):

=====================================  ===========================
extension                              format
=====================================  ===========================
``.parquet``, ``.pq``                  Parquet
``.csv``, ``.csv.gz``                  CSV with a header line
``.tsv``, ``.tsv.gz``                  tab-separated, header line
``.jsonl``, ``.ndjson``, ``.json``     JSON lines (``.gz`` too)
=====================================  ===========================

Parts of one table are matched by column name (a column missing from some parts is NULL
there), never by position. JSON columns that DuckDB would type as dates or times (from a
sample of the first rows) are read as text too, and converted by the loader. CSV and TSV are
read with every column as text; the loader converts and validates each
canonical column itself, so a bad value is reported with its file and column. A folder of parts
written partitioned (``searches/variant=control/part-0.parquet``) gets the partition columns.
A byte-order mark at the start of a text file is dropped (by DuckDB, and by the checks here).
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from onlineeval import queries
from onlineeval.errors import LogFormatError, SchemaError
from onlineeval.logs import readers
from onlineeval.logs.locate import locate_error, one_line, open_text, read_failure, remember
from onlineeval.logs.paths import EXTENSIONS, duckdb_path, file_format, find_table, resolve_files

__all__ = ["EXTENSIONS", "Source", "file_format", "find_table", "one_line", "open_table"]


@dataclass
class Source:
    """One opened table: where it came from (for messages), its format and relation."""

    table: str
    label: str
    format: str
    relation: duckdb.DuckDBPyRelation
    files: tuple[str, ...] = ()
    hive: bool = False  # partition columns come from key=value folders
    rows: int | None = None  # rows of an in-memory table, when known without a query


def _hive(files: list[str], root: str) -> bool:
    # parts in key=value folders (Spark/DuckDB partitioned writes) carry a column in the path
    return any(
        "=" in part for f in files for part in Path(os.path.relpath(f, root)).parts[:-1]
    )


def _check_names(names: list[str], what: str) -> None:
    """Column names must be text and distinct ignoring case (SQL cannot tell ``a`` and
    ``A`` apart); ``what`` names the table in the message."""
    bad = [c for c in names if not isinstance(c, str)]
    if bad:
        raise SchemaError(
            f"{what} has non-text column names {bad!r}; column names must be strings"
        )
    lowered: dict[str, str] = {}
    for c in names:
        if c.lower() in lowered:
            raise SchemaError(
                f"{what} has columns {lowered[c.lower()]!r} and {c!r}, which SQL cannot tell "
                "apart (names ignore case); rename one"
            )
        lowered[c.lower()] = c


def _lake_table(table: str, spec: Any) -> tuple[str, Any] | None:
    """A Delta table (``deltalake.DeltaTable``), an Iceberg table or scan (``pyiceberg``)
    given as a table: its kind and the Arrow object DuckDB reads; None for anything else.

    Recognised by the class's module, so neither package is imported here. A Delta table is
    read as a pyarrow Dataset of the version it was opened at (DuckDB scans it lazily, once
    per pass); an Iceberg table's current snapshot (or a scan with its filter) as a record
    batch reader, which :func:`_in_memory` reads once.
    """
    module = type(spec).__module__.split(".")[0]
    if module == "deltalake" and hasattr(spec, "to_pyarrow_dataset"):
        kind, read = "Delta table", spec.to_pyarrow_dataset
    elif module == "pyiceberg" and (hasattr(spec, "scan")
                                    or hasattr(spec, "to_arrow_batch_reader")):
        scan = spec.scan() if hasattr(spec, "scan") else spec
        kind, read = "Iceberg table", scan.to_arrow_batch_reader
    else:
        return None
    try:
        return kind, read()
    except Exception as exc:  # the package's own errors: an unsupported feature, a lost file
        raise SchemaError(
            f"the {kind} given as {table}= cannot be read as Arrow ({one_line(str(exc))}); "
            "export its current version to Parquet and pass that folder instead"
        ) from None


def _in_memory(con: duckdb.DuckDBPyConnection, table: str, spec: Any) -> Source | None:
    """A DataFrame, a pyarrow Table, Dataset or RecordBatchReader, or a Delta or Iceberg table
    as a Source; None for anything else."""
    if isinstance(spec, pd.DataFrame):
        kind, names = "DataFrame", list(spec.columns)
    elif type(spec).__module__.split(".")[0] == "pyspark":
        return _spark(con, table, spec)
    else:
        import pyarrow as pa
        import pyarrow.dataset as pads

        lake = _lake_table(table, spec)
        kind, spec = lake if lake is not None else ("Arrow table", spec)
        if not isinstance(spec, pa.Table | pads.Dataset | pa.RecordBatchReader):
            return None
        if lake is None and isinstance(spec, pa.RecordBatchReader):
            kind = "Arrow record batch reader"
        names = list(spec.schema.names)
    what = f"the {kind} given as {table}="
    if not names:
        raise SchemaError(f"{what} has no columns")
    _check_names(names, what)
    label = f"{kind} {table}="
    if kind == "DataFrame":
        return Source(table, label, "dataframe", con.from_df(spec), rows=len(spec))
    if isinstance(spec, pa.RecordBatchReader):
        return Source(table, label, "arrow", _copied(con, table, spec))
    return Source(table, label, "arrow", con.from_arrow(spec))


def _spark(con: Any, table: str, frame: Any) -> Source:
    """A Spark DataFrame as a Source, on the Spark connection load_logs made for its session
    (the loader validates it there, with the same SQL)."""
    from onlineeval.engines import spark

    what = f"the Spark DataFrame given as {table}="
    if not spark.is_dataframe(frame):
        raise SchemaError(f"{table}= is a pyspark {type(frame).__name__}, not a DataFrame; "
                          "pass spark.table(name) or a DataFrame")
    if getattr(con, "engine", "duckdb") != "spark" or con.spark is not frame.sparkSession:
        raise SchemaError(f"{what} needs every table given as a DataFrame of one Spark "
                          "session (the log is validated there)")
    relation = spark.Frame(frame)
    if not relation.columns:
        raise SchemaError(f"{what} has no columns")
    _check_names(relation.columns, what)
    return Source(table, f"Spark DataFrame {table}=", "spark", relation)


def _copied(con: duckdb.DuckDBPyConnection, table: str, reader: Any) -> duckdb.DuckDBPyRelation:
    """The rows of a record batch reader, copied into a temporary table of ``con``: a reader
    gives its rows once, and validation reads each table more than once. (DuckDB's own
    storage: it spills to DuckDB's temporary directory under a memory limit.)"""
    stream = f"_oe_stream_{table}"  # the loader's prefix (onlineeval.logs.tables.PREFIX)
    con.register(stream + "_reader", reader)
    try:
        queries.create(con, stream, queries.load("logs/copy").render(
            source=[stream + "_reader"]), table=True)
    finally:
        con.unregister(stream + "_reader")
    return con.table(stream)


def open_table(
    con: duckdb.DuckDBPyConnection, table: str, spec: Any,
) -> Source:
    """Open ``spec`` (path, folder, glob, pandas DataFrame, pyarrow Table or Dataset) as
    table ``table``."""
    if getattr(con, "engine", "duckdb") == "spark" and \
            type(spec).__module__.split(".")[0] != "pyspark":
        raise SchemaError(
            f"{table}= is a {type(spec).__name__} beside tables given as Spark DataFrames: "
            "every table of the log must be a DataFrame of one Spark session (the log is "
            "validated there)")
    source = _in_memory(con, table, spec)
    if source is not None:
        return source
    if not isinstance(spec, str | os.PathLike):
        raise SchemaError(
            f"{table}= must be a path (str or pathlib.Path), a pandas DataFrame, a pyarrow "
            f"Table, Dataset or RecordBatchReader, a deltalake DeltaTable or a pyiceberg table; "
            f"got {type(spec).__name__}"
        )
    fmt, files = resolve_files(spec, table)
    label = files[0] if len(files) == 1 else f"{os.fspath(spec)} ({len(files)} parts)"
    given = Path(os.fspath(spec))
    root = str(given.resolve()) if given.is_dir() else os.path.dirname(files[0])
    hive = _hive(files, root)
    if fmt in ("csv", "tsv"):
        for f in files:
            _check_header(f, readers.separator(fmt), table)
    remember(fmt, files)
    try:
        rel = readers.read(con, fmt, files, hive)
    except duckdb.Error as exc:
        hint = (f" (check that every line has as many {'tab' if fmt == 'tsv' else 'comma'}-"
                "separated fields as the header)" if fmt in ("csv", "tsv") else "")
        raise read_failure(con, exc, fmt, files, label, f"read as {fmt}", hint) from None
    if fmt == "json" and list(rel.columns) == ["json"]:
        locate_error(con, fmt, files)
        # DuckDB falls back to one column 'json' when the lines are not all JSON objects
        raise LogFormatError(
            label, None, "cannot read as JSON lines: every line must be one JSON object "
            "({\"search_id\": ..., ...}); some line is an array or a bare value"
        )
    if fmt == "parquet":
        _check_parquet_names(con, files, list(rel.columns))
    return Source(table, label, fmt, rel, tuple(files), hive)


_RENAMED = re.compile(r"^(.*)_[0-9]+$")


def _parquet_top_level(rows: list[tuple[str, int | None]]) -> list[str]:
    """Top-level column names from parquet_schema() rows (depth first, root first)."""
    names: list[str] = []
    remaining = [rows[0][1] or 0] if rows else []
    for name, children in rows[1:]:
        if len(remaining) == 1:
            names.append(name)
        remaining[-1] -= 1
        if children:
            remaining.append(children)
        while len(remaining) > 1 and remaining[-1] == 0:
            remaining.pop()
    return names


def _check_parquet_names(con: duckdb.DuckDBPyConnection, files: list[str],
                         columns: list[str]) -> None:
    """A Parquet file naming one column twice (or twice ignoring case) is an error, as for
    CSV headers: DuckDB renames the second copy (``search_id_1``) and the loader would use
    the first. Files are looked at only when the columns DuckDB gives suggest a renaming."""
    lowered = {c.lower() for c in columns}
    if not any((m := _RENAMED.match(c)) and m.group(1).lower() in lowered for c in columns):
        return
    for f in files:
        q = queries.load("logs/parquet_schema")
        rows = con.execute(q.render(), q.bind(p=duckdb_path(con, f))).fetchall()
        names = _parquet_top_level(rows)
        seen: dict[str, str] = {}
        for name in names:
            if name.lower() in seen:
                first = seen[name.lower()]
                raise SchemaError(
                    f"{one_line(f)}: the Parquet file names column {one_line(repr(first))} "
                    f"twice{'' if name == first else f' (as {one_line(repr(name))})'}; SQL "
                    "cannot tell them apart (names ignore case): rename or drop one"
                )
            seen[name.lower()] = name


def _check_header(file: str, sep: str, table: str) -> None:
    """A header naming one column twice is an error (DuckDB would rename the second copy,
    and the loader would silently use the first)."""
    try:
        with open_text(file) as fh:
            header = next(csv.reader(fh, delimiter=sep), None)
    except (OSError, UnicodeDecodeError, EOFError, csv.Error):
        return  # DuckDB's reader reports unreadable files
    seen: dict[str, str] = {}
    for name in header or []:
        if name.lower() in seen:
            raise SchemaError(
                f"{one_line(file)}: the header of table {table!r} names column "
                f"{one_line(repr(seen[name.lower()]))} twice"
                f"{'' if name == seen[name.lower()] else f' (as {one_line(repr(name))})'}"
                "; SQL cannot tell them apart (names ignore case): rename or drop one"
            )
        seen[name.lower()] = name
