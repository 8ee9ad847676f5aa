"""The portable subset of ``sql/`` and its translation to other engines' SQL (sqlglot).

The files of ``sql/`` are written in DuckDB's dialect, restricted to a subset that sqlglot
translates to Spark, Trino, BigQuery and Snowflake with the same meaning
(``docs/sql-portability.md`` lists the rules and why each exists). :func:`violations` is that
subset as a check over the parsed query; :func:`translate` is the translation with the fixes
sqlglot's own rules lack. sqlglot is imported only here, and only when called.

A file's header may say ``-- engines: duckdb`` (with the reason): it is DuckDB-only (the
loader's file readers) and outside the subset. ``-- duckdb_only: SWITCH, ...`` names switches
that turn on a DuckDB-only optimisation; the portable form is the query with them off (the
definition), and a test shows both forms give the same numbers.
"""

from __future__ import annotations

from typing import Any

from onlineeval.errors import InvalidParameterError

#: the dialects the SQL translates to (sqlglot names)
DIALECTS: tuple[str, ...] = ("spark", "trino", "bigquery", "snowflake")

#: DataType names (sqlglot) outside the subset: unsigned and 128-bit integers
_TYPES = {"UTINYINT", "USMALLINT", "UINT", "UBIGINT", "UINT128", "INT128", "UINT256",
          "HUGEINT", "UHUGEINT", "UMEDIUMINT", "UDECIMAL", "UDOUBLE"}

#: functions sqlglot knows but whose meaning differs between engines
_FUNCTIONS = {"ArrayAgg": "list()/array_agg (array types and orders differ)",
              "Explode": "unnest (set-returning functions differ)",
              "Unnest": "unnest (set-returning functions differ)",
              "IntDiv": "// (integer division rounds differently)",
              "MD5Digest": "engine-specific hash", "SHA": "engine-specific hash"}


def _sqlglot() -> Any:
    try:
        import sqlglot
    except ImportError:  # pragma: no cover - depends on the installation
        raise InvalidParameterError(
            "translating SQL needs sqlglot: pip install 'onlineeval[spark]' "
            "(or 'onlineeval[dialects]')"
        ) from None
    return sqlglot


def _is_double(node: Any) -> bool:
    exp = _sqlglot().exp
    return isinstance(node, exp.Cast) and node.to.this in (exp.DataType.Type.DOUBLE,)


def violations(sql: str) -> list[str]:
    """The constructs of ``sql`` (DuckDB dialect, rendered) outside the portable subset, one
    line each; empty when it is inside."""
    sqlglot = _sqlglot()
    exp = sqlglot.exp
    found: list[str] = []
    tree = sqlglot.parse_one(sql, read="duckdb")
    for node in tree.walk():
        name = type(node).__name__
        if isinstance(node, exp.Anonymous):
            found.append(f"function {node.name}() is unknown to sqlglot, so it is copied "
                         f"untranslated (engine-specific: hash, epoch_us, getvariable, ...)")
        elif isinstance(node, exp.Columns):
            found.append("COLUMNS(...) is DuckDB-only")
        elif isinstance(node, exp.SetOperation) and node.args.get("by_name"):
            found.append("union ... by name is DuckDB-only: list the columns in order")
        elif isinstance(node, exp.CTE) and node.args.get("materialized") is not None:
            found.append(f"CTE {node.alias} AS [NOT] MATERIALIZED is DuckDB-only "
                         f"(a duckdb_only switch may add it)")
        elif isinstance(node, exp.Star) and any(
                node.args.get(k) for k in ("except_", "except", "replace", "rename")):
            found.append("select * exclude/replace is not in Spark 3.5: list the columns")
        elif isinstance(node, exp.Group) and node.args.get("all"):
            found.append("group by all is not in Trino: list the columns (a {{#by}} section "
                         "leaves out an empty group by)")
        elif isinstance(node, exp.Ordered) and isinstance(node.this, exp.Var | exp.Column) \
                and node.this.name.upper() == "ALL" and not node.this.args.get("table"):
            found.append("order by all is not in Spark 3.5 or Trino: list the columns")
        elif isinstance(node, exp.Join) and (node.args.get("kind") or "").upper() in (
                "ANTI", "SEMI") and node.args.get("using"):
            found.append("semi/anti join ... using does not translate: write on a = b")
        elif isinstance(node, exp.DataType) and node.this.name in _TYPES:
            found.append(f"type {node.this.name} is DuckDB-only")
        elif name == "ArrayAgg" and isinstance(node.parent, exp.ArraySort):
            pass  # an aggregated list sorted at once: its order is the sort's in every engine
        elif name in _FUNCTIONS:
            found.append(f"{_FUNCTIONS[name]} is outside the subset")
        elif isinstance(node, exp.Div) and not (
                _is_double(node.this) or _is_double(node.expression)):
            found.append(f"division {node.sql('duckdb')!r} without an operand CAST AS DOUBLE "
                         f"(Spark keeps DECIMAL, Trino divides integers as integers)")
        elif isinstance(node, exp.Literal) and not node.is_string and not node.this.isdigit() \
                and not _is_double(node.parent):
            found.append(f"number {node.this} is DECIMAL in Spark: write CAST({node.this} AS "
                         f"DOUBLE) or an integer")
        elif isinstance(node, exp.Table) and isinstance(node.this, exp.Func):
            found.append(f"table function {node.this.sql('duckdb')[:40]} reads files: "
                         f"DuckDB-only")
    return list(dict.fromkeys(found))


def _fix(tree: Any, dialect: str) -> Any:
    """Our fixes to sqlglot's translation, on the parsed DuckDB query."""
    exp = _sqlglot().exp

    def fix(node: Any) -> Any:
        # BigQuery's WEEK starts on Sunday; DuckDB's date_trunc('week') on Monday
        if dialect == "bigquery" and isinstance(node, exp.TimestampTrunc | exp.DateTrunc) \
                and node.text("unit").upper() == "WEEK":
            node.set("unit", exp.var("WEEK(MONDAY)"))
        # Trino's date_diff has no microsecond unit (sqlglot writes one Trino refuses): whole
        # milliseconds times 1000, exact for Trino's default TIMESTAMP(3); the caveat of
        # `onlineeval sql --dialect trino` says what a TIMESTAMP(6) column loses
        if dialect == "trino" and isinstance(node, exp.DateDiff) \
                and node.text("unit").upper() == "MICROSECOND":
            millis = exp.Anonymous(this="date_diff", expressions=[
                exp.Literal.string("millisecond"), node.expression.copy(), node.this.copy()])
            return exp.Paren(this=exp.Mul(this=millis, expression=exp.Literal.number(1000)))
        return node

    return tree.transform(fix)


def translate(sql: str, dialect: str) -> str:
    """``sql`` (DuckDB dialect, rendered from a ``sql/`` file) in ``dialect``; bind
    parameters ``$name`` become the dialect's named markers (``:name`` / ``@name``)."""
    sqlglot = _sqlglot()
    if dialect not in DIALECTS:
        raise InvalidParameterError(
            f"unknown SQL dialect {dialect!r}; choose one of {', '.join(DIALECTS)}")
    tree = sqlglot.parse_one(sql, read="duckdb")
    return _fix(tree, dialect).sql(dialect=dialect, pretty=True,
                                   unsupported_level=sqlglot.ErrorLevel.RAISE)
