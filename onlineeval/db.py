"""DuckDB connections configured for logs larger than memory."""

from __future__ import annotations

import os
import sys
import tempfile

import duckdb


def connect(
    database: str = ":memory:", *, memory_limit: str | None = None,
    threads: int | None = None, temp_directory: str | None = None,
) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB connection that may spill to disk.

    ``memory_limit`` defaults to the environment variable ``ONLINEEVAL_MEMORY_LIMIT`` or
    DuckDB's own default (80% of RAM); ``temp_directory`` to a fresh directory under the system
    temp dir, so large sorts and joins spill instead of failing.
    """
    con = duckdb.connect(database)
    limit = memory_limit or os.environ.get("ONLINEEVAL_MEMORY_LIMIT")
    if limit:
        con.execute("SET memory_limit = $v", {"v": limit})
    if threads:
        con.execute("SET threads = $v", {"v": int(threads)})
    tmp = temp_directory or tempfile.mkdtemp(prefix="onlineeval-duckdb-")
    con.execute("SET temp_directory = $v", {"v": tmp})
    con.execute("SET preserve_insertion_order = false")
    # DuckDB draws its own progress bar for long queries even into pipes; keep it for terminals.
    if not sys.stderr.isatty():
        con.execute("SET enable_progress_bar = false")
    return con
