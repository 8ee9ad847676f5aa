"""DuckDB relations over the files of one table, with the reader settings every format needs.

Files are read by DuckDB's relational API, so paths are passed as data and never pasted into
SQL text, and every name goes through :func:`onlineeval.logs.paths.duckdb_path`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from onlineeval.logs.paths import duckdb_paths

_TEMPORAL = ("TIMESTAMP", "DATE", "TIME", "INTERVAL")


def separator(fmt: str) -> str:
    """The field separator of a text format (``tsv``: tab, else comma)."""
    return "\t" if fmt == "tsv" else ","


def read(con: duckdb.DuckDBPyConnection, fmt: str, files: list[str], hive: bool = False,
         columns: dict[str, str] | None = None) -> duckdb.DuckDBPyRelation:
    """A relation over ``files`` (all of format ``fmt``); ``columns`` (JSON only) fixes the
    type of the named columns and reads only those."""
    arg: Any = duckdb_paths(con, files)
    extra: dict[str, Any] = {"hive_partitioning": True} if hive else {}
    if len(files) > 1 and fmt != "json":
        # Parts are matched by column name: by default DuckDB takes the columns of the first
        # part and reads the others by position, so a part with its columns in another order
        # would swap values silently, and a column only some parts have would be dropped.
        # (JSON lines are always matched by name.)
        extra["union_by_name"] = True
    if fmt == "parquet":
        return con.read_parquet(arg, **extra)
    if fmt in ("csv", "tsv"):
        # A fixed delimiter: left to guess, the sniffer reads a file with a ragged line as
        # one single text column instead of failing.
        # skiprows=0: the header is the first line, never a guessed later one.
        # Standard double-quote quoting, fixed: left to guess, the sniffer picks "no quoting"
        # for a file with one unterminated quote and then keeps the quotes of every properly
        # quoted value ('"s1"' instead of 's1'), silently.
        return con.read_csv(arg, header=True, all_varchar=True, skiprows=0,
                            sep=separator(fmt), quotechar='"', escapechar='"', **extra)
    if columns is not None:
        return con.read_json(arg, format="auto", columns=columns, **extra)
    rel = con.read_json(arg, format="auto", **extra)
    # DuckDB types a JSON column TIMESTAMP or DATE from a sample of the first rows; a later
    # row is then parsed without its zone ('... 12:00:00+02:00' and '... 12:00:00 EST' both
    # become 12:00, '01:00:00 PM' becomes 01:00). Such columns are read as text instead, so
    # the loader converts every value itself (see casting.py) and refuses what it cannot read.
    partitions = partition_names(files) if hive else set()
    types = {c: str(t) for c, t in zip(rel.columns, rel.types, strict=True)
             if c not in partitions}
    if not any(t.startswith(_TEMPORAL) for t in types.values()):
        return rel
    fixed = {c: "VARCHAR" if t.startswith(_TEMPORAL) else t for c, t in types.items()}
    return con.read_json(arg, format="auto", columns=fixed, **extra)


def read_objects(con: duckdb.DuckDBPyConnection, files: list[str],
                 hive: bool = False) -> duckdb.DuckDBPyRelation:
    """JSON ``files`` as one column ``json`` holding each object whole."""
    extra: dict[str, Any] = {"hive_partitioning": True} if hive else {}
    return con.read_json(duckdb_paths(con, files), format="auto", records="false",
                         columns={"json": "JSON"}, **extra)


def read_strict_csv(con: duckdb.DuckDBPyConnection, file: str, sep: str,
                    header: list[str]) -> duckdb.DuckDBPyRelation:
    """``file`` read with the standard dialect and nothing guessed (to find a bad line)."""
    return con.read_csv(duckdb_paths(con, [file]), header=True, auto_detect=False, sep=sep,
                        quotechar='"', escapechar='"', columns=dict.fromkeys(header, "VARCHAR"))


def partition_names(files: list[str]) -> set[str]:
    """Columns given by ``key=value`` folders on the way to ``files``."""
    return {part.split("=", 1)[0] for f in files for part in Path(f).parts[:-1] if "=" in part}
