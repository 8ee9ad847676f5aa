"""Convert a source column to its canonical type, and find values that do not convert.

Every conversion is written with ``TRY_CAST`` semantics so the same expression serves both
validation (``raw IS NOT NULL AND converted IS NULL`` marks a bad value) and the views. When a
source column already has the canonical type the expression is the bare column: no cast, so
Parquet logs in the canonical layout are scanned as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from onlineeval.queries import quote_ident

INT_TYPES = frozenset({
    "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
    "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
})
FLOAT_TYPES = frozenset({"FLOAT", "DOUBLE", "DECIMAL", "REAL"})
NAIVE_TS_TYPES = frozenset({
    "TIMESTAMP", "TIMESTAMP_NS", "TIMESTAMP_MS", "TIMESTAMP_S", "DATE", "TIMESTAMP_US",
})
TZ_TS_TYPES = frozenset({"TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ"})

# A time followed by anything but its fraction of a second -- a UTC offset (+02:00), Z, a zone
# name (UTC, EST, Europe/Berlin), AM/PM or other text: such text is read as an instant with
# DuckDB's TIMESTAMPTZ cast and shown in UTC, and text that cast cannot read is a bad value.
# DuckDB's plain TIMESTAMP cast would silently ignore whatever follows the time
# ('12:00:00 EST' -> 12:00, '01:00:00 PM' -> 01:00).
_OFFSET = r"[0-9]:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?\s*[^0-9\s.:]"
# A time as text starts with its year. DuckDB's casts also take words ('epoch' is 1970-01-01,
# 'infinity' and '-infinity' the ends of time, and so on), which in a log are placeholders,
# not times: any text not starting with a digit is a bad value.
_STARTS_WITH_DIGIT = r"^\s*[0-9]"


class UnsupportedType(Exception):
    """The source type cannot hold this kind of column; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Conversion:
    """SQL expression giving the canonical value, and whether values must be checked."""

    expr: str
    checked: bool  # True: a non-null source value may convert to NULL (a bad value)
    sql_type: str  # resulting SQL type
    # a condition the converted value must meet, with @v@ standing for it (e.g. @v@ >= 0);
    # a value failing it is a bad value like one that does not convert
    valid: str = ""

    def bad(self, source: str) -> str:
        """SQL condition: the (quoted) source column holds a value that is bad."""
        cond = f"({self.expr}) IS NULL"
        if self.valid:
            cond = f"({cond} OR NOT ({self.valid.replace('@v@', f'({self.expr})')}))"
        return f"({source} IS NOT NULL AND {cond})"


def recast(conv: Conversion, target: str, checked: bool | None = None) -> Conversion:
    """``conv`` followed by a cast to ``target`` (ids of the tables made one type)."""
    return replace(conv, expr=f"CAST({conv.expr} AS {target})", sql_type=target,
                   checked=conv.checked if checked is None else checked)


def null_of(sql_type: str) -> str:
    """A NULL of ``sql_type``: the value of a column the source does not have."""
    return f"CAST(NULL AS {sql_type})"


def named(expr: str, name: str) -> str:
    """``expr`` as the output column ``name`` of a view's select list."""
    return f"{expr} AS {quote_ident(name)}"


# kinds that are another kind restricted to a range: (base kind, condition on the value)
_RANGED = {
    "count": ("integer", "@v@ >= 0"),
    # finite: NaN sorts above every number (DuckDB and Spark alike), so abs < inf is false
    # for NaN and the infinities; portable, where isfinite() is DuckDB's alone
    "duration": ("double", "abs(@v@) < CAST('Infinity' AS DOUBLE) AND @v@ >= 0"),
    # an event's value (revenue): a refund may be negative, but NaN or infinity would make
    # every sum it enters meaningless (finite written as for duration)
    "amount": ("double", "abs(@v@) < CAST('Infinity' AS DOUBLE)"),
}
# an infinite timestamp ('infinity' in a TIMESTAMP column of a Parquet file) is no time
_FINITE_TIME = "isfinite(@v@)"


def base_type(sql_type: str) -> str:
    """``DECIMAL(18,3)`` → ``DECIMAL``; ``VARCHAR`` → ``VARCHAR``."""
    t = str(sql_type).upper().strip('"')  # DuckDB prints the type of an all-null column "NULL"
    if t.startswith("TIMESTAMP WITH TIME ZONE"):
        return "TIMESTAMP WITH TIME ZONE"
    return re.sub(r"\(.*\)$", "", t).strip()


def _integral(x: str, limit: str) -> str:
    return f"CASE WHEN {x} = trunc({x}) AND abs({x}) <= {limit} THEN {x} END"


def convert(kind: str, source_type: str, q: str) -> Conversion:
    """Conversion of quoted column ``q`` with DuckDB type ``source_type`` to ``kind``."""
    if kind in _RANGED:
        base, valid = _RANGED[kind]
        conv = convert(base, source_type, q)
        if conv.sql_type == "NULL" or base_type(source_type) == "NULL":
            return conv
        return Conversion(conv.expr, True, conv.sql_type, valid)
    t = base_type(source_type)
    if t == "NULL":
        # a column with no value at all (JSON gives it no type); ids take the type of the
        # other tables' ids (see common_id_type)
        if kind == "id":
            return Conversion(q, False, "NULL")
        target = {"text": "VARCHAR", "label": "VARCHAR", "timestamp": "TIMESTAMP",
                  "integer": "INTEGER", "double": "DOUBLE"}[kind]
        return Conversion(f"CAST({q} AS {target})", False, target)
    if kind == "text":
        if t == "VARCHAR":
            return Conversion(q, False, "VARCHAR")
        return Conversion(f"CAST({q} AS VARCHAR)", False, "VARCHAR")
    if kind in ("id", "label"):
        # ids, and variants (labels: the control is named as the log names it, control=0 for
        # an integer column), keep their values as written: whole numbers or text
        if t == "VARCHAR" or t in INT_TYPES:
            return Conversion(q, False, t)
        if t in FLOAT_TYPES:
            # pandas turns integer ids into floats when a value is missing
            inner = _integral(q, "9.2e18")
            return Conversion(f"CAST({inner} AS BIGINT)", True, "BIGINT")
        if kind == "id" and (t in ("BOOLEAN",) or t.endswith("]")
                             or t.startswith(("STRUCT", "MAP", "LIST"))):
            raise UnsupportedType(f"an id must be text or an integer, not {source_type}")
        return Conversion(f"CAST({q} AS VARCHAR)", False, "VARCHAR")
    if kind == "timestamp":
        if t == "TIMESTAMP":
            return Conversion(q, True, "TIMESTAMP", _FINITE_TIME)
        if t in NAIVE_TS_TYPES:
            return Conversion(f"CAST({q} AS TIMESTAMP)", True, "TIMESTAMP", _FINITE_TIME)
        if t in TZ_TS_TYPES:
            return Conversion(f"timezone('UTC', {q})", True, "TIMESTAMP", _FINITE_TIME)
        if t == "VARCHAR":
            expr = (
                f"CASE WHEN NOT regexp_matches({q}, '{_STARTS_WITH_DIGIT}') THEN NULL "
                f"WHEN regexp_matches({q}, '{_OFFSET}') "
                f"THEN timezone('UTC', TRY_CAST({q} AS TIMESTAMPTZ)) "
                f"ELSE TRY_CAST({q} AS TIMESTAMP) END"
            )
            return Conversion(expr, True, "TIMESTAMP", _FINITE_TIME)
        if t in INT_TYPES or t in FLOAT_TYPES:
            raise UnsupportedType(
                f"a timestamp must be a TIMESTAMP or text like '2024-05-01 12:30:00', not "
                f"{source_type}; numbers are ambiguous (seconds? milliseconds?), so convert "
                "epoch numbers to timestamps first (e.g. pandas.to_datetime(x, unit='s'))"
            )
        raise UnsupportedType(f"a timestamp must be a TIMESTAMP or text, not {source_type}")
    if kind == "integer":
        if t == "INTEGER":
            return Conversion(q, False, "INTEGER")
        if t in INT_TYPES:
            return Conversion(f"TRY_CAST({q} AS INTEGER)", True, "INTEGER")
        if t in FLOAT_TYPES:
            x = f"CAST({q} AS DOUBLE)"
            return Conversion(f"CAST({_integral(x, '2147483647')} AS INTEGER)", True, "INTEGER")
        if t == "VARCHAR":
            x = f"TRY_CAST({q} AS DOUBLE)"
            return Conversion(f"CAST({_integral(x, '2147483647')} AS INTEGER)", True, "INTEGER")
        raise UnsupportedType(f"an integer column cannot be {source_type}")
    if kind == "double":
        if t == "DOUBLE":
            return Conversion(q, False, "DOUBLE")
        if t in INT_TYPES or t in FLOAT_TYPES:
            return Conversion(f"CAST({q} AS DOUBLE)", False, "DOUBLE")
        if t == "VARCHAR":
            return Conversion(f"TRY_CAST({q} AS DOUBLE)", True, "DOUBLE")
        raise UnsupportedType(f"a number column cannot be {source_type}")
    raise ValueError(f"unknown column kind {kind!r}")


KIND_WORDS = {
    "id": "an id (text or integer)",
    "timestamp": "a timestamp (e.g. 2024-05-01 12:30:00)",
    "integer": "a whole number (at most 2,147,483,647)",
    "double": "a number",
    "count": "a whole number >= 0 (at most 2,147,483,647)",
    "duration": "a finite number >= 0",
    "amount": "a finite number",
    "text": "text",
    "label": "text or a whole number",
}


def common_id_type(types: list[str]) -> str | None:
    """The type every id column is cast to so joins work, or None if they already agree.

    ``NULL`` (a column without any value) takes the type of the others, VARCHAR if alone.
    """
    distinct = set(types)
    real = distinct - {"NULL"}
    if len(distinct) <= 1 and "NULL" not in distinct:
        return None
    if not real:
        return "VARCHAR"
    if len(real) == 1:
        return next(iter(real))
    if real <= INT_TYPES:
        return "HUGEINT" if real & {"HUGEINT", "UBIGINT", "UHUGEINT"} else "BIGINT"
    return "VARCHAR"
