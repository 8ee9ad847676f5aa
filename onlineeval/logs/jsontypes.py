"""JSON lines: every column the loader uses holds one JSON type in every row.

DuckDB types a JSON column from a sample of the first rows. A value of another type inside
the sample turns the column into JSON text (ids become ``"s1"``, quotes included, and match
nothing); outside it, the value is cast to the sampled type without a word (``1.5`` becomes
rank 2, an object becomes an id). So one pass reads the used columns as raw JSON and counts
the JSON type of every value; a value of another type than its column's is an error naming
the file, the line and the column. A column without any value in the sample (typed NULL) but
with values later is read again with the type those values have, and keys that first appear
after the sample (which DuckDB does not read at all) are added as columns.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import duckdb

from onlineeval import queries
from onlineeval.errors import LogFormatError
from onlineeval.logs import readers
from onlineeval.logs.casting import FLOAT_TYPES, INT_TYPES, base_type
from onlineeval.logs.locate import json_lines, one_line, read_failure
from onlineeval.logs.sources import Source

# the JSON types json_type() reports, grouped by what a column may mix
_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"VARCHAR"}), frozenset({"UBIGINT", "BIGINT", "DOUBLE"}),
    frozenset({"BOOLEAN"}), frozenset({"OBJECT"}), frozenset({"ARRAY"}),
)
_TYPES = ("VARCHAR", "UBIGINT", "BIGINT", "DOUBLE", "BOOLEAN", "OBJECT", "ARRAY")
_WORDS = {"VARCHAR": "a string", "UBIGINT": "a whole number", "BIGINT": "a whole number",
          "DOUBLE": "a number with a fraction or exponent", "BOOLEAN": "true or false",
          "OBJECT": "an object", "ARRAY": "an array", "OTHER": "a number too large to read"}
_PLURAL = {"VARCHAR": "strings", "UBIGINT": "whole numbers", "BIGINT": "whole numbers",
           "DOUBLE": "numbers", "BOOLEAN": "true or false", "OBJECT": "objects",
           "ARRAY": "arrays"}
# the DuckDB type a column of one group is read as, when the sample had no value
_READ_AS = {"VARCHAR": "VARCHAR", "BOOLEAN": "BOOLEAN", "OBJECT": "JSON", "ARRAY": "JSON"}


def _allowed(sql_type: str) -> frozenset[str] | None:
    """JSON types a column DuckDB typed ``sql_type`` takes without a cast; None: no type
    was sampled (JSON: mixed; NULL: no value)."""
    t = base_type(sql_type)
    if t == "VARCHAR":
        return frozenset({"VARCHAR"})
    if t in INT_TYPES:
        return frozenset({"UBIGINT", "BIGINT"})
    if t in FLOAT_TYPES:
        return frozenset({"UBIGINT", "BIGINT", "DOUBLE"})
    if t == "BOOLEAN":
        return frozenset({"BOOLEAN"})
    if t.startswith(("STRUCT", "MAP")):
        return frozenset({"OBJECT"})
    if t.endswith("]") or t.startswith("LIST"):
        return frozenset({"ARRAY"})
    return None


def _json_type(value: Any) -> str:
    """json_type() of a value json.loads returned."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        if 0 <= value < 2**64:
            return "UBIGINT"
        return "BIGINT" if value >= -(2**63) else "DOUBLE"
    return {float: "DOUBLE", str: "VARCHAR", dict: "OBJECT", list: "ARRAY"}.get(
        type(value), "OTHER")


def _type_counts(con: duckdb.DuckDBPyConnection, source: Source, columns: list[str],
                 table: str) -> dict[str, dict[str, int]]:
    """For each of ``columns``: how many values have each JSON type (NULL left out)."""
    raw = readers.read(con, "json", list(source.files), source.hive,
                       columns=dict.fromkeys(columns, "JSON"))
    q = queries.load("logs/json_types")
    con.register("_oe_json_columns", raw)
    try:
        row = con.execute(q.render(source=["_oe_json_columns"], columns=columns)).fetchall()[0]
    except duckdb.Error as exc:
        raise read_failure(con, exc, "json", source.files, source.label,
                           f"read the {table} table") from None
    finally:
        con.unregister("_oe_json_columns")
    out: dict[str, dict[str, int]] = {}
    for c, counts in zip(columns, row, strict=True):
        counts = dict(counts or {})
        seen = {t: int(counts[t]) for t in _TYPES if counts.get(t)}
        other = sum(int(n) for t, n in counts.items() if t not in _TYPES and t != "NULL")
        if other:
            seen["OTHER"] = other
        out[c] = seen
    return out


def _sql_types(source: Source) -> tuple[dict[str, str], set[str]]:
    """The relation's column types (partition columns left out), and the partition names."""
    partitions = readers.partition_names(list(source.files)) if source.hive else set()
    types = {c: str(t) for c, t in zip(source.relation.columns, source.relation.types,
                                        strict=True) if c not in partitions}
    return types, partitions


def check(con: duckdb.DuckDBPyConnection, source: Source, columns: Sequence[str],
          table: str, optional: Sequence[str] = ()) -> Source:
    """``source`` (JSON) if each of ``columns`` holds one JSON type in every row; read again
    when a column typed NULL from the sample has values later. Raises LogFormatError naming
    the first value of another type (and, for the ``optional`` columns, how to leave the
    column out)."""
    types, _ = _sql_types(source)
    used = [c for c in dict.fromkeys(columns) if c in types]
    if not used:
        return source
    retype: dict[str, str] = {}
    for c, seen in _type_counts(con, source, used, table).items():
        allowed = _allowed(types[c])
        if not seen or (allowed is not None and set(seen) <= allowed):
            continue
        groups = [g for g in _GROUPS if set(seen) & g]
        if allowed is None and len(groups) == 1 and "OTHER" not in seen:
            if base_type(types[c]) == "NULL":
                retype[c] = _type_of(seen)
            continue  # a JSON column whose values all have one type (e.g. objects)
        if allowed is None:
            allowed = max(groups or _GROUPS[:1],
                          key=lambda g: (sum(seen.get(t, 0) for t in g), -_GROUPS.index(g)))
        _raise(source, table, c, allowed, seen,
               sampled=base_type(types[c]) not in ("JSON", "NULL"), optional=c in optional)
    if not retype:
        return source
    fixed = {c: retype.get(c, t) for c, t in types.items()}
    return replace(source, relation=readers.read(con, "json", list(source.files), source.hive,
                                                 columns=fixed))


# DuckDB's JSON reader takes the columns from a sample: the first 20,480 objects of at most
# 32 files. A key that first appears later (an experiment's variant, added to a log mid-way)
# is not read at all.
_SAMPLE_ROWS = 20_480
_SAMPLE_FILES = 32
_SHORTEST_LINE = 3  # bytes: "{}\n"


def late_keys(con: duckdb.DuckDBPyConnection, source: Source, table: str) -> Source:
    """``source`` (JSON) with the keys DuckDB's sample missed read as columns too (typed by
    their values). A key that differs from a column only in case is an error naming its line.
    When the files are too small to hold more objects than the sample, nothing is read."""
    files = list(source.files)
    if (len(files) <= _SAMPLE_FILES and not any(f.endswith(".gz") for f in files)
            and sum(os.path.getsize(f) for f in files) < _SAMPLE_ROWS * _SHORTEST_LINE):
        return source
    types, _ = _sql_types(source)
    known = list(types)
    con.register("_oe_objects", readers.read_objects(con, files, source.hive))
    try:
        q = queries.load("logs/json_late_keys")
        keys = [r[0] for r in con.execute(q.render(objects=["_oe_objects"]),
                                          q.bind(known=known)).fetchall()]
    except duckdb.Error as exc:
        raise read_failure(con, exc, "json", source.files, source.label,
                           f"read the {table} table") from None
    finally:
        con.unregister("_oe_objects")
    new = sorted(k for k in keys if k not in types)
    if not new:
        return source
    lowered = {c.lower(): c for c in known}
    for k in new:
        if k.lower() in lowered:
            _raise_case_clash(source, table, lowered[k.lower()], k)
        lowered[k.lower()] = k
    # a key holding values of several types is read as JSON, and refused by check() if used
    added = {k: "VARCHAR" if not seen else _type_of(seen)
             if len([g for g in _GROUPS if set(seen) & g]) == 1 and "OTHER" not in seen
             else "JSON" for k, seen in _type_counts(con, source, new, table).items()}
    return replace(source, relation=readers.read(con, "json", files, source.hive,
                                                 columns={**types, **added}))


def _raise_case_clash(source: Source, table: str, column: str, key: str) -> None:
    where: tuple[str, int] | None = None
    try:
        where = next(((f, n) for f in source.files for n, text in json_lines(f)
                      if key in (json.loads(text) or {})), None)
    except (OSError, UnicodeDecodeError, EOFError, ValueError, TypeError):
        pass
    file, line = where if where else (source.label, None)
    raise LogFormatError(one_line(file), line, one_line(
        f"cannot read the {table} table: key {key!r} differs from column {column!r} only in "
        "case, which SQL cannot tell apart (names ignore case); give the key one spelling"))


def _type_of(seen: dict[str, int]) -> str:
    if "DOUBLE" in seen:
        return "DOUBLE"
    if "UBIGINT" in seen or "BIGINT" in seen:
        return "BIGINT" if "BIGINT" in seen else "UBIGINT"
    return _READ_AS[next(iter(seen))]


def _raise(source: Source, table: str, column: str, allowed: frozenset[str],
           seen: dict[str, int], sampled: bool, optional: bool) -> None:
    shown = (allowed & set(seen)) or allowed
    expected = ("numbers" if "DOUBLE" in shown
                else " or ".join(dict.fromkeys(_PLURAL[t] for t in _TYPES if t in shown)))
    why = ("a value does not have the type DuckDB chose for its column from the file's first "
           "rows: " if sampled else "")
    fix = ("give each column one JSON type in every row "
           '(e.g. every id a string: "search_id": "7")')
    if optional:
        fix += f", or leave the column out with columns={{{table!r}: {{{column!r}: None}}}}"
    place = _first_other(source.files, column, allowed)
    if place is None:
        others = ", ".join(f"{_WORDS[t]} on {n:,} row{'' if n == 1 else 's'}"
                           for t, n in seen.items() if t not in allowed)
        raise LogFormatError(source.label, None, one_line(
            f"cannot read the {table} table: {why}column {column!r} holds {expected} and also "
            f"{others}; {fix}"))
    file, line, kind, value = place
    shown = json.dumps(value, ensure_ascii=False)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    raise LogFormatError(one_line(file), None, one_line(
        f"cannot read the {table} table: {why}line {line} holds {_WORDS[kind]} ({shown}) in "
        f"column {column!r}, whose other values are {expected}; {fix}"))


def _first_other(files: Sequence[str], column: str, allowed: frozenset[str],
                 ) -> tuple[str, int, str, Any] | None:
    """(file, line, JSON type, value) of the first value of ``column`` whose type is not
    ``allowed``, or None (a file that is not JSON lines has no line to name)."""
    try:
        for f in files:
            for number, text in json_lines(f):
                obj = json.loads(text)
                value = obj.get(column) if isinstance(obj, dict) else None
                kind = _json_type(value)
                if kind != "NULL" and kind not in allowed:
                    return f, number, kind, value
    except (OSError, UnicodeDecodeError, EOFError, ValueError):
        return None
    return None
