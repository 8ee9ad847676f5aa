"""DuckDB connections configured for logs larger than memory."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import weakref
from typing import TYPE_CHECKING

import duckdb

from onlineeval.errors import InvalidParameterError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

#: environment variables every connection reads when no argument is given (the CLI's global
#: --memory-limit and --threads set them for one command)
MEMORY_LIMIT_ENV = "ONLINEEVAL_MEMORY_LIMIT"
THREADS_ENV = "ONLINEEVAL_THREADS"


#: the memory limit each connection of :func:`connect` was given, exactly as given: what
#: :func:`release_memory` sets again (DuckDB reports it rounded to 0.1 MiB)
_LIMITS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def set_memory_limit(con: duckdb.DuckDBPyConnection, limit: str, name: str) -> None:
    """``SET memory_limit`` on ``con``; a size DuckDB cannot read is an error naming ``name``
    (the argument, variable or option it came from)."""
    try:
        con.execute("SET memory_limit = $v", {"v": limit})
    except duckdb.Error:
        raise InvalidParameterError(
            f"{name} must be a size such as 4GB or 500MB; got {limit!r}"
        ) from None


def connect(
    database: str = ":memory:", *, memory_limit: str | None = None,
    threads: int | None = None, temp_directory: str | None = None,
) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB connection that may spill to disk.

    ``memory_limit`` (e.g. ``"4GB"``) defaults to the environment variable
    ``ONLINEEVAL_MEMORY_LIMIT`` or DuckDB's own default (80% of RAM); ``threads`` to the
    environment variable ``ONLINEEVAL_THREADS`` or one per core; ``temp_directory`` to a fresh
    directory under the system temp dir, so large sorts and joins spill instead of failing;
    that directory is removed when the connection is garbage-collected or the process exits.
    The environment variables are how a command-line user limits memory and threads: every
    command opens its connection here.

    Raises
    ------
    InvalidParameterError
        The memory limit is not a size DuckDB understands, or threads is not a positive
        integer.
    """
    con = duckdb.connect(database)
    limit, limit_from = memory_limit, "memory_limit"
    if not limit and os.environ.get(MEMORY_LIMIT_ENV):
        limit, limit_from = os.environ[MEMORY_LIMIT_ENV], MEMORY_LIMIT_ENV
    if limit:
        set_memory_limit(con, limit, limit_from)
        _LIMITS[con] = limit
    n_threads: object = threads
    threads_from = "threads"
    if not threads and os.environ.get(THREADS_ENV):
        n_threads, threads_from = os.environ[THREADS_ENV], THREADS_ENV
    if n_threads:
        try:
            count = int(str(n_threads))
        except ValueError:
            count = 0
        if count < 1:
            raise InvalidParameterError(
                f"{threads_from} must be a positive whole number of threads; got {n_threads!r}"
            )
        con.execute("SET threads = $v", {"v": count})
    tmp = temp_directory
    if tmp is None:
        tmp = tempfile.mkdtemp(prefix="onlineeval-duckdb-")
        # the directory (and whatever DuckDB spilled into it) goes with the connection, or at
        # exit at the latest; each command, test and API call opens a connection, so leaving
        # them would fill the temp dir with empty directories
        weakref.finalize(con, shutil.rmtree, tmp, ignore_errors=True)
    con.execute("SET temp_directory = $v", {"v": tmp})
    con.execute("SET preserve_insertion_order = false")
    # DuckDB draws its own progress bar for long queries even into pipes; keep it for terminals.
    if not sys.stderr.isatty():
        con.execute("SET enable_progress_bar = false")
    return con


_UNITS = {"bytes": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0, "TiB": 1024.0**2,
          "KB": 1e3 / 2**20, "MB": 1e6 / 2**20, "GB": 1e9 / 2**20, "TB": 1e12 / 2**20}


def memory_limit_mb(con: duckdb.DuckDBPyConnection) -> float | None:
    """The memory limit of the DuckDB connection ``con`` in MiB (None when DuckDB reports
    none, or one this module cannot read)."""
    number, _, unit = setting(con, "memory_limit").partition(" ")
    try:
        return float(number) * _UNITS[unit]
    except (KeyError, ValueError):
        return None


def threads(con: duckdb.DuckDBPyConnection) -> int:
    """The number of threads DuckDB runs the queries of ``con`` on."""
    value = setting(con, "threads")
    return max(1, int(value)) if value else 1


def setting(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """The DuckDB setting ``name`` of ``con`` as DuckDB reports it ('' when unknown)."""
    from onlineeval.queries import load

    q = load("logs/setting")
    row = con.execute(q.render(), q.bind(name=name)).fetchone()
    return str(row[0]) if row and row[0] is not None else ""


def _is_duckdb(con: object) -> bool:
    # another engine's connection (onlineeval.engines) names itself in con.engine
    return getattr(con, "engine", "duckdb") == "duckdb" and isinstance(
        con, duckdb.DuckDBPyConnection)


def release_memory(con: object) -> None:
    """Make DuckDB hand back to the system the memory its allocator keeps after queries.

    A finished query's hash tables and sort runs are freed inside DuckDB but stay in the
    process (RSS) until something flushes the allocator; setting the memory limit does, and
    nothing else reachable from SQL does promptly (measured on DuckDB 2.0: after a load at
    500MB, RSS stayed ~400 MB with every allocator setting, and fell to ~170 MB once the
    limit was set). Callers use it between a DuckDB phase and a Python phase, so that the two
    peaks do not add up. The limit set is the one :func:`connect` was given, else the one
    DuckDB reports (cut to one decimal) raised by half of that decimal, so repeated calls never drift
    lower. Another engine's connection is left alone.
    """
    if not _is_duckdb(con):
        return
    limit = _LIMITS.get(con)
    if limit is None:
        number, _, unit = setting(con, "memory_limit").partition(" ")
        try:
            limit = f"{float(number) + 0.05:.2f}{unit}"
        except ValueError:
            return
    set_memory_limit(con, limit, "memory_limit")


def fetch_df(con: object, sql: str, params: dict | None = None, *,
             name: str = "_oe_fetched", order: list[str] | None = None) -> pd.DataFrame:
    """The rows of the rendered query ``sql`` as a DataFrame, as ``con.execute(sql).df()``
    gives them (DuckDB's integer sums, HUGEINT, as float64), with a lower peak: for queries
    that return one row per unit, user or (query, user).

    DuckDB first stores the rows in the temporary table ``name`` and lets go of the query's
    working memory (:func:`release_memory`), so its peak and the frame's do not coincide;
    the table then comes over as Arrow, converted column by column into pandas, which
    needs about half of what ``.df()`` takes on the way (measured: 500k rows x 29 columns,
    a 134 MB frame, peaked 600 MB above the start through ``.df()`` and 366 MB through
    Arrow). A table keeps no row order, so a query whose order matters names its ORDER BY
    columns in ``order`` (ascending, NULLs last, as DuckDB sorts by default). Another
    engine's connection runs ``sql`` as usual.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from onlineeval.queries import create, drop_table, quote_ident

    if not _is_duckdb(con):
        return con.execute(sql, params or {}).df()
    create(con, name, sql, table=True, params=params)
    release_memory(con)
    try:
        rows = con.table(name)
        if order:
            rows = rows.order(", ".join(quote_ident(c) + " ASC NULLS LAST" for c in order))
        table = rows.to_arrow_table()
    finally:
        drop_table(con, name)
        release_memory(con)
    for i, column in enumerate(table.schema):
        # HUGEINT sums arrive as decimal128(38, 0); .df() gives them as float64
        if pa.types.is_decimal(column.type):
            table = table.set_column(i, column.name, pc.cast(table.column(i), pa.float64()))
    frame = table.to_pandas(self_destruct=True)
    del table
    pa.default_memory_pool().release_unused()
    return frame


def fetch_arrays(con: object, sql: str, params: dict | None = None) -> dict[str, np.ndarray]:
    """The columns of the rendered query ``sql`` (numeric, in the query's row order) as
    float64 arrays by name, NULL as nan: for a few columns of many rows, which then never
    become a DataFrame (nor, on DuckDB, a pandas conversion: Arrow straight to numpy)."""
    import numpy as np

    if not _is_duckdb(con):
        frame = con.execute(sql, params or {}).df()
        return {c: frame[c].to_numpy(dtype=float, na_value=np.nan) for c in frame.columns}
    import pyarrow as pa
    import pyarrow.compute as pc

    table = con.sql(sql, params=params or {}).to_arrow_table()
    out = {}
    for name in table.column_names:
        column = table.column(name)
        if not pa.types.is_floating(column.type):
            column = pc.cast(column, pa.float64())
        out[name] = column.to_numpy(zero_copy_only=False).astype(float, copy=False)
    return out
