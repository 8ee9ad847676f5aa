"""``onlineeval sql QUERY --dialect D``: a query of ``sql/`` translated for a warehouse or Spark,
to run there by hand. Unverified on real accounts: the header says so, with the known caveats."""

from __future__ import annotations

import argparse
import sys

NAME = "sql"
HELP = ("print a query of sql/ translated to Spark, Trino, BigQuery or Snowflake SQL "
        "(unverified on those engines; caveats in its header)")

#: what we know differs, per dialect, beyond what the translation already handles
CAVEATS: dict[str, tuple[str, ...]] = {
    "all": (
        "UNVERIFIED: translated by sqlglot from the DuckDB original; never run on a real "
        "account of this engine. Compare a few numbers with onlineeval (DuckDB) first.",
        "Run the session in UTC: timestamps are UTC throughout onlineeval.",
        "Bind every :name / @name parameter as a typed value (timestamps as UTC text); "
        "never paste values into the text.",
        "The tables searches, results and clicks must be the CLEAN tables of onlineeval's "
        "loader (validation and exclusions are not part of this query).",
    ),
    "spark": (
        "Translated for Spark 3.4+ with spark.sql.ansi.enabled=false (Spark 4 turns ANSI "
        "mode on; unverified there). The parity suite checks Spark 3.5 local.",
    ),
    "trino": (
        "Trino's date_diff has no 'microsecond' unit: a time difference in microseconds "
        "(session gaps, time to first click, time to conversion, the attribution window, "
        "days since exposure) is translated as date_diff('millisecond', a, b) * 1000, exact "
        "for TIMESTAMP(3) columns (Trino's default); on TIMESTAMP(6) columns the "
        "sub-millisecond part is lost, so times and window edges may differ by < 1 ms.",
        "Trino divides integers as integers: the queries cast one operand to DOUBLE; keep it.",
    ),
    "bigquery": (
        "date_trunc('week') becomes TIMESTAMP_TRUNC(ts, WEEK(MONDAY)): BigQuery's bare WEEK "
        "starts on Sunday.",
        "Identifiers are backquoted; parameters are @name (query parameters).",
        "Time differences come out as DATE_DIFF(b, a, MICROSECOND): on TIMESTAMP columns "
        "write TIMESTAMP_DIFF, on DATETIME columns DATETIME_DIFF (same arguments).",
    ),
    "snowflake": (
        "Snowflake rounds a division of integers to 6 decimals: the queries cast one operand "
        "to DOUBLE; keep it.",
        "Snowflake compares strings by collation if the column has one; the queries assume "
        "byte order (team and query ordering).",
    ),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="query name below sql/, e.g. online/top_queries "
                                      "(onlineeval sql --list lists them)", nargs="?")
    parser.add_argument("--dialect", required=False, default="spark",
                        choices=("spark", "trino", "bigquery", "snowflake"),
                        help="target SQL dialect (default spark)")
    parser.add_argument("--ident", action="append", default=[], metavar="NAME=A,B",
                        help="names for an identifier placeholder of the query (repeatable; "
                             "an empty list as NAME=)")
    parser.add_argument("--on", action="append", default=[], metavar="SWITCH",
                        help="turn on a switch of the query (repeatable; others are off)")
    parser.add_argument("--list", action="store_true", help="list the queries and exit")


def run(args: argparse.Namespace) -> int:
    from onlineeval import queries
    from onlineeval.engines import dialects
    from onlineeval.errors import InvalidParameterError

    if args.list:
        for name in queries.available():
            print(name if queries.load(name).portable else f"{name}  (DuckDB-only)")
        return 0
    if not args.query:
        raise InvalidParameterError("name a query (onlineeval sql --list lists them)")
    q = queries.load(args.query)
    if not q.portable:
        raise InvalidParameterError(
            f"query {q.name!r} is DuckDB-only: {q.meta['engines'].split(' ', 1)[-1]}")
    unknown = [s for s in args.on if s not in q.switches or s in q.duckdb_only]
    if unknown:
        raise InvalidParameterError(
            f"unknown switch {unknown[0]!r}; query {q.name!r} has "
            f"{', '.join(s for s in q.switches if s not in q.duckdb_only) or 'none'}")
    chosen: dict[str, object] = {}
    for item in args.ident:
        name, sep, names = item.partition("=")
        if not sep or name not in q.identifiers:
            raise InvalidParameterError(
                f"--ident takes NAME=A,B with NAME one of {', '.join(q.identifiers) or '(none)'}"
                f"; got {item!r}")
        chosen[name] = [n for n in names.split(",") if n]
    missing = [i for i in q.identifiers if i not in chosen]
    if missing:
        raise InvalidParameterError(
            f"query {q.name!r} needs names for {', '.join(missing)}: give --ident "
            f"{missing[0]}=COLUMN[,COLUMN...] (see its header: onlineeval sql is a translator, "
            "it does not read a log)")
    chosen.update({s: s in args.on for s in q.switches})
    sql = q.render(**chosen)
    found = dialects.violations(sql)
    if found:  # the lint test keeps this from happening to a shipped file
        raise InvalidParameterError(f"{q.name} is outside the portable subset: {found[0]}")
    text = dialects.translate(sql, args.dialect)
    lines = [f"-- {q.name}, translated to {args.dialect} by onlineeval (sqlglot)"]
    lines += [f"-- caveat: {c}" for c in (*CAVEATS["all"], *CAVEATS[args.dialect])]
    if q.params:
        lines.append(f"-- parameters to bind: {', '.join(q.params)}")
    sys.stdout.write("\n".join(lines) + "\n" + text + ";\n")
    return 0
