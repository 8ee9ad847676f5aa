"""``load_logs``: open a click log as three clean DuckDB views (four with events), with a
LoadReport.

The plan keeps the data where it is. Each source table becomes a view over its files (or
DataFrame); a second view converts columns to canonical names and types; validation runs a
few aggregate queries (one or two passes per table, more only when something is wrong); the
clean views ``searches``, ``results`` and ``clicks`` add a filter or an anti-join against a
small temporary table of bad keys only for the kinds of exclusion that actually occurred. A
log without problems is therefore read through plain projections.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb

from onlineeval import queries
from onlineeval.errors import (
    ExcludedRowsWarning,
    InvalidParameterError,
    LogFormatError,
    SchemaError,
    StrictModeError,
)
from onlineeval.logs import casting, jsontypes, mapping
from onlineeval.logs.events import EventSettings
from onlineeval.logs.events import settings as event_settings
from onlineeval.logs.locate import one_line
from onlineeval.logs.paths import EXTENSIONS, find_table, refuse_lake_folder
from onlineeval.logs.report import EMPTY_RESULTS, REASONS, LoadReport
from onlineeval.logs.schema import SCHEMA, SQL_TYPE, TABLES, Column, column_names
from onlineeval.logs.sources import Source, open_table
from onlineeval.logs.tables import PREFIX as _PREFIX
from onlineeval.logs.tables import Table as _Table
from onlineeval.logs.validate import storable, validate
from onlineeval.queries import quote_ident as qi


class Logs:
    """A loaded click log: clean views in a DuckDB connection, and the load report.

    Attributes
    ----------
    con
        DuckDB connection holding the views ``searches``, ``results`` and ``clicks``
        (canonical columns, excluded rows removed; see the README's log-schema section).
    report
        :class:`LoadReport` — rows read and rows excluded per table and reason.
    source
        Human description of where the log came from.
    has_results
        Whether a results table was given (``results`` is an empty view otherwise).
    has_events
        Whether an events table was given (there is no ``events`` view otherwise).
    """

    def __init__(
        self, con: duckdb.DuckDBPyConnection, report: LoadReport, source: str,
        provided: dict[str, frozenset[str]], extras: dict[str, tuple[str, ...]],
        types: dict[str, dict[str, str]] | None = None,
        sources: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.con = con
        self.report = report
        self.source = source
        self._provided = provided
        self._extras = extras
        self._types = types or {}
        self._sources = sources or {}
        #: how events are attributed to searches (window, type): see with_events
        self.events = EventSettings()
        #: the attribution counts of this log per attribution view (whose name carries the
        #: window and the event type), shared by its copies: a readout that reads the facts
        #: several times counts (and warns) once. The clean views never change once loaded.
        self.attributed: dict[str, dict[str, int]] = {}
        #: how the column mapping was written (the API's columns= or the command line's
        #: options), for advice given after the load
        self.spelling = mapping.spelling()

    @property
    def has_results(self) -> bool:
        """True when a results table was given."""
        return "results" in self._provided

    @property
    def has_events(self) -> bool:
        """True when an events table (downstream outcomes: purchases, bookings, ...) was
        given."""
        return "events" in self._provided

    def with_events(self, attribution_window: Any = None, event_type: Any = None) -> Logs:
        """This log with other event attribution settings (a copy sharing the connection; the
        arguments left None keep this log's): ``attribution_window`` a number of hours or a
        duration such as ``"30min"``, ``event_type`` the one type of event the outcome
        metrics count (None: every type). See :mod:`onlineeval.logs.events`."""
        if attribution_window is None and event_type is None:
            return self
        out = copy.copy(self)
        out.events = event_settings(attribution_window, event_type, self.events)
        return out

    def has(self, table: str, column: str) -> bool:
        """Did the source provide ``column`` of ``table`` (after the column mapping)?

        Derived or filled columns (``n_results`` counted from results, a click's rank or
        doc_id looked up in results, ``session_id``) are not "provided".
        """
        if table not in TABLES:
            raise InvalidParameterError(
                f"unknown table {table!r}; the log tables are {', '.join(TABLES)}"
            )
        return column in self._provided.get(table, frozenset())

    def column_type(self, table: str, column: str) -> str | None:
        """The SQL type of a canonical column in the clean view as the source gave it
        (``BIGINT``, ``VARCHAR``, ...), or None when the source did not provide it."""
        return self._types.get(table, {}).get(column)

    def source_column(self, table: str, column: str) -> str | None:
        """The source column a canonical column was read from (after the column mapping),
        or None when the source did not provide it."""
        return self._sources.get(table, {}).get(column)

    def extra_columns(self, table: str = "searches") -> tuple[str, ...]:
        """Non-canonical source columns kept in a view (only ``searches`` keeps any)."""
        return self._extras.get(table, ())

    def __repr__(self) -> str:
        counts = ", ".join(f"{t}={self.report.rows_kept(t):,}" for t in self.report.rows_read)
        return f"<Logs {self.source}: {counts}>"


def _table_dict(tables: Mapping[Any, Any], given: dict[str, Any]) -> dict[str, Any]:
    """A dict of log tables, checked: known table names, none also given as a keyword."""
    unknown = [k for k in tables if k not in TABLES]
    if unknown:
        raise InvalidParameterError(
            f"a dict of log tables has the keys {', '.join(TABLES)}; got "
            f"{', '.join(repr(k) for k in unknown)} (for a column mapping or strict mode "
            "load first: onlineeval.load_logs(..., columns=..., strict=...))")
    twice = [k for k in tables if given.get(k) is not None]
    if twice:
        raise InvalidParameterError(
            f"table {twice[0]!r} is given twice, in the dict of tables and as {twice[0]}=; "
            "give it once")
    return dict(tables)


def load_logs(
    path: str | os.PathLike[str] | None = None, *,
    searches: Any = None, results: Any = None, clicks: Any = None, events: Any = None,
    columns: dict[str, Any] | None = None, strict: bool = False,
    con: duckdb.DuckDBPyConnection | None = None, engine: Any = None,
) -> Logs:
    """Load a click log into DuckDB views and validate it.

    Parameters
    ----------
    path
        Directory holding ``searches.*``, ``clicks.*`` and optionally ``results.*`` and
        ``events.*``: each a CSV, CSV.gz, TSV, Parquet or JSON-lines file, or a folder of such
        part files. A dict of tables (``{"searches": df, "clicks": ...}``) is taken as the
        table keywords below, as every function taking a log takes it.
    searches, results, clicks, events
        A table given directly: a path (file, folder of parts, or glob pattern), a pandas
        or Spark DataFrame, a pyarrow Table, Dataset or RecordBatchReader (copied once into a
        DuckDB temporary table), a ``deltalake.DeltaTable`` (its version as opened) or a
        ``pyiceberg`` table or scan (copied like a reader). Overrides the table of the same
        name found under ``path``.
    columns
        Column mapping, source name -> canonical name, either per table
        (``{"searches": {"qid": "search_id"}}``) or flat (``{"qid": "search_id"}``, applied
        to every table having that column). Map a column to ``None`` to ignore it.
    strict
        Raise :class:`~onlineeval.errors.StrictModeError` (with counts and example rows)
        instead of excluding any row.
    con
        DuckDB connection to create the views in (default: a new
        :func:`onlineeval.db.connect` connection). Views and helper tables it creates are
        temporary and named ``searches``, ``results``, ``clicks`` and ``_oe_*`` (so they are
        visible on this connection only, not on ``con.cursor()``); loading a second log into
        the same connection replaces them.
    engine
        Where the queries after loading run: ``"duckdb"`` (the default, or the environment
        variable ``ONLINEEVAL_ENGINE``), ``"spark"``, a SparkSession or an
        :class:`onlineeval.engines.spark.SparkConnection`. The log is read and validated by
        DuckDB either way (every rule and exclusion count); with Spark, its clean tables are
        then copied into Spark temp views and ``logs.con`` is the Spark connection, so
        metrics, A/B sums and interleaving run there (``docs/sql-portability.md``). Tables
        given as Spark DataFrames (all of one session; ``spark.table(name)`` for a table) are
        validated in Spark instead, with the same SQL, and stay there; their times and
        numbers must be typed columns (text is not parsed on Spark).

    Returns
    -------
    Logs
        ``logs.con`` holds the clean views ``searches(search_id, user_id, ts, session_id,
        query, experiment, variant, n_results)``, ``results(search_id, rank, doc_id, team)``
        and ``clicks(search_id, rank, doc_id, ts, dwell_ms)``; with an events table also
        ``events(user_id, ts, type, value, search_id, doc_id)`` (see
        ``docs/conversions.md``).

    Raises
    ------
    SchemaError
        A table or required column is missing, a file is empty, a column mapping names a
        column that does not exist, or a value cannot be read as its column's type.
    LogFormatError
        A file cannot be parsed.
    StrictModeError
        ``strict=True`` and some rows would be excluded.
    """
    from onlineeval import engines

    if isinstance(path, Mapping):
        given = {"searches": searches, "results": results, "clicks": clicks,
                 "events": events}
        tables = _table_dict(path, given)
        path = None
        searches, results, clicks, events = (tables.get(t, given[t]) for t in given)
    elif path is not None and not isinstance(path, str | os.PathLike):
        raise InvalidParameterError(
            f"path must be a log directory (a str or Path) or a dict of tables; got "
            f"{type(path).__name__} (a table goes in searches=, results=, clicks=, events=)")
    frames = [v for v in (searches, results, clicks, events)
              if type(v).__module__.startswith("pyspark")]
    target: Any = "duckdb"
    if frames:
        if con is not None:
            raise InvalidParameterError(
                "con= is a DuckDB connection; tables given as Spark DataFrames are loaded on "
                "their Spark session: leave con= out")
        con = _spark_connection(frames[0], engine)  # validated in Spark, on their session
    else:
        target = engines.resolve(engine)
        if con is None:
            from onlineeval.db import connect

            con = connect()
    try:
        with mapping.spelled_as(columns):
            logs = _load(path, {"searches": searches, "results": results, "clicks": clicks,
                                "events": events}, columns, strict, con)
    except (SchemaError, LogFormatError) as exc:
        # a path or column name may hold a line break: keep the message on one line
        exc.args = (one_line(str(exc)),)
        raise
    return logs if target == "duckdb" else on_engine(logs, target)


def _spark_connection(frame: Any, engine: Any) -> Any:
    """The Spark connection on which tables given as Spark DataFrames are loaded: their
    session's (a SparkConnection's views hold one log, as a DuckDB connection's do)."""
    from onlineeval.engines import spark

    if not spark.is_dataframe(frame):
        raise SchemaError(f"a pyspark {type(frame).__name__} was given as a table, not a "
                          "DataFrame; pass spark.table(name) or a DataFrame")
    session = frame.sparkSession
    if engine not in (None, "spark", session) and getattr(engine, "spark", None) is not session:
        raise InvalidParameterError(
            "tables given as Spark DataFrames are loaded on their own Spark session; leave "
            "engine= out (or pass 'spark' or that session)")
    if isinstance(engine, spark.SparkConnection):
        return engine
    return spark.SparkConnection(session)


def on_engine(logs: Logs, con: Any) -> Logs:
    """The clean tables of a log loaded (and validated, every exclusion counted) by DuckDB,
    as the same :class:`Logs` on another engine's connection (an
    :class:`onlineeval.engines.spark.SparkConnection`): every query after loading runs there.
    The connection holds one log: its views ``searches``, ``results`` and ``clicks`` (and
    ``events`` when given) are replaced."""
    for name in TABLES:
        if name != "events" or logs.has_events:
            con.register(name, logs.con.table(name))
    out = Logs(con, logs.report, logs.source, logs._provided, logs._extras)
    out.events = logs.events
    return out


def _load(
    path: str | os.PathLike[str] | None, given: dict[str, Any],
    columns: dict[str, Any] | None, strict: bool, con: duckdb.DuckDBPyConnection,
) -> Logs:
    specs, source = _collect(path, given)
    opened = {t: open_table(con, t, spec) for t, spec in specs.items()}
    opened = {t: jsontypes.late_keys(con, s, t) if s.format == "json" else s
              for t, s in opened.items()}
    available = {t: (s.label, list(s.relation.columns)) for t, s in opened.items()}
    maps = mapping.per_table(columns, available)
    tables = {t: _prepare(con, t, s, maps[t]) for t, s in opened.items()}
    _unify_ids(tables)
    for t in tables.values():
        _create_source_views(con, t, tables)
    report = LoadReport(source=source)
    classified = validate(con, tables, report)
    if report.rows_read.get("results") == 0:
        warnings.warn(f"{tables['results'].source.label}: {EMPTY_RESULTS}", UserWarning,
                      stacklevel=3)
    report.provided = {
        t: tuple(c for c in column_names(t)
                 if tb.has(c) and c not in report.empty_columns.get(t, ()))
        for t, tb in tables.items()
    }
    if strict and report.excluded:
        raise StrictModeError(_strict_message(con, report, classified, tables))
    if report.excluded:
        warnings.warn(_excluded_message(report), ExcludedRowsWarning, stacklevel=3)
    provided = {t: frozenset(report.provided[t]) | frozenset(tb.extras)
                for t, tb in tables.items()}
    extras = {t: tuple(tb.extras) for t, tb in tables.items() if tb.extras}
    types = {t: dict(tb.types) for t, tb in tables.items()}
    sources = {t: {c: tb.columns[c] for c in tb.conversions} for t, tb in tables.items()}
    return Logs(con, report, source, provided, extras, types, sources)


# --- collecting and preparing the tables -------------------------------------------------

def _collect(
    path: str | os.PathLike[str] | None, given: dict[str, Any],
) -> tuple[dict[str, Any], str]:
    specs = {t: v for t, v in given.items() if v is not None}
    if path is not None:
        directory = Path(os.fspath(path))
        if directory.is_dir():
            refuse_lake_folder(directory.resolve(), "a log directory",
                               "each table (searches=, clicks=, results=)")
        else:
            what = "a file" if directory.exists() else "missing"
            raise SchemaError(
                f"{directory}: a log path must be a directory holding searches.*, clicks.* and "
                f"optionally results.* ({what}); to load single files pass searches=, "
                "clicks=, results="
            )
        for t in TABLES:
            if t not in specs:
                found = find_table(directory, t)
                if found is not None:
                    specs[t] = found
        source = one_line(str(directory))
    else:
        source = one_line(", ".join(
            f"{t}={v}" if isinstance(v, str | os.PathLike) else f"{t}={type(v).__name__}"
            for t, v in specs.items()
        )) or "nothing"
    for t in ("searches", "clicks"):
        if t not in specs:
            where = (
                f"{path}: no {t} table found (looked for {t}"
                f"{{{','.join(EXTENSIONS)}}} and a {t}/ folder of parts)"
                if path is not None else f"no {t} table given"
            )
            raise SchemaError(
                f"{where}; a log needs searches and clicks tables (results is optional). "
                f"Pass {t}= a path or DataFrame."
            )
    return specs, source


def _prepare(con: duckdb.DuckDBPyConnection, name: str, source: Source,
             table_map: dict[str, str | None]) -> _Table:
    cols = list(source.relation.columns)
    out = mapping.resolve(name, source.label, cols, table_map)
    required = [c.name for c in SCHEMA[name] if c.required]
    missing = [c for c in required if c not in out]
    if name == "clicks" and "rank" not in out and "doc_id" not in out:
        missing.append("rank or doc_id")
    if name == "events" and "user_id" not in out and "search_id" not in out:
        missing.append("user_id or search_id")
    if missing:
        other_sep = next((c for c in ";|\t," if len(cols) == 1 and c in cols[0]), None)
        hint = (
            f" The header holds {other_sep!r}: the file seems to be separated by it, but "
            f"{source.format.upper()} files must be separated by "
            f"{'a tab' if source.format == 'tsv' else 'commas'}."
            if other_sep and source.format in ("csv", "tsv") else ""
        )
        raise SchemaError(
            f"{source.label}: the {name} table lacks required column(s) "
            f"{', '.join(repr(m) for m in missing)}; its columns are: {', '.join(cols)}.{hint} "
            f"Rename them in the file or pass a mapping, e.g. "
            f"{mapping.spelling().fix(name, '<your column>', missing[0].split()[0])}"
        )
    extras: list[str] = []
    if name == "searches":
        # Extra searches columns (e.g. a country to group by) are kept unless their name is
        # canonical in another table, which would make joins ambiguous.
        # Names starting with _oe_ are the loader's own.
        # (the events' own columns, type and value, are not among them: events are joined
        # with qualified names, and a searches column so named stays as it always was)
        others = {c.name for t, cs in SCHEMA.items() if t != "events" for c in cs}
        extras = [c for c in out if c.lower() not in others
                  and not c.lower().startswith(_PREFIX)]
    if source.format == "json":
        used = [out[c.name] for c in SCHEMA[name] if c.name in out] + [out[x] for x in extras]
        source = jsontypes.check(con, source, used, name, [out[x] for x in extras])
    types = dict(zip(cols, (str(t) for t in source.relation.types), strict=True))
    table = _Table(name, source, out, extras=extras)
    for col in SCHEMA[name]:
        if col.name not in out:
            continue
        src = out[col.name]
        try:
            conv = casting.convert(col.kind, types[src], qi(src))
        except casting.UnsupportedType as exc:
            raise SchemaError(
                f"{source.label}: column {src!r} ({name}.{col.name}) must be "
                f"{casting.KIND_WORDS[col.kind]}; {exc.reason}"
            ) from None
        if source.format == "spark":
            conv = _on_spark(conv, source, name, col, src, types[src])
        table.conversions[col.name] = conv
        table.types[col.name] = conv.sql_type
    return table


def _on_spark(conv: casting.Conversion, source: Source, name: str, col: Column, src: str,
              source_type: str) -> casting.Conversion:
    """The conversion of a column of a Spark DataFrame: the same, but text is not parsed into
    times or numbers (Spark's parsers accept other text than DuckDB's, so the numbers would
    depend on the engine), and a Spark time cannot be infinite."""
    if source_type == "VARCHAR" and col.kind not in ("id", "text", "label"):
        raise SchemaError(
            f"{source.label}: column {src!r} ({name}.{col.name}) is text; on Spark the loader "
            f"takes {casting.KIND_WORDS[col.kind]} typed, as text is parsed differently by "
            f"each engine: cast it in Spark first (e.g. to_timestamp / CAST(... AS INT)), or "
            f"load the table with DuckDB"
        )
    if col.kind == "timestamp":
        return dataclasses.replace(conv, valid="")
    return conv


def _unify_ids(tables: dict[str, _Table]) -> None:
    for column, members in (("search_id", TABLES), ("doc_id", ("results", "clicks", "events")),
                            ("user_id", ("searches", "events"))):
        present = [tables[t] for t in members if t in tables and tables[t].has(column)]
        target = casting.common_id_type([t.types[column] for t in present])
        if target is None:
            continue
        for t in present:
            if t.types[column] != target:
                conv = t.conversions[column]
                t.conversions[column] = casting.recast(conv, target)
                t.types[column] = target
    for t in tables.values():  # an all-null id column (JSON types it NULL) becomes text
        for column, conv in list(t.conversions.items()):
            if conv.sql_type == "NULL":
                t.conversions[column] = casting.recast(conv, "VARCHAR", checked=False)
                t.types[column] = "VARCHAR"


def _id_type(tables: dict[str, _Table], column: str, prefer: tuple[str, ...]) -> str:
    for t in prefer:
        if t in tables and tables[t].has(column):
            return tables[t].types[column]
    return "VARCHAR"


def _placeholder(tables: dict[str, _Table], table: str, col: Column) -> str:
    if col.name == "search_id":
        sql_type = _id_type(tables, "search_id", TABLES)
    elif col.name == "doc_id":
        sql_type = _id_type(tables, "doc_id", ("results", "clicks", "events"))
    elif col.name == "user_id":
        sql_type = _id_type(tables, "user_id", ("searches", "events"))
    elif col.kind == "id":
        sql_type = "VARCHAR"
    else:
        sql_type = SQL_TYPE[col.kind]
    return casting.null_of(sql_type)


def _create_source_views(
    con: duckdb.DuckDBPyConnection, t: _Table, all_tables: dict[str, _Table],
) -> None:
    """The raw view (the source as read), the typed view (canonical names and types; not
    for a table validation will store, whose copy holds these columns) and the check view
    (typed, plus per value-checked column its bad-value flag and its source value), all
    lazy."""
    # register() makes a temporary view, even on a file-backed connection
    con.register(t.raw, t.source.relation)
    check_cols, typed_cols = [], []
    for col in SCHEMA[t.name]:
        if t.has(col.name):
            conv = t.conversions[col.name]
            expr = conv.expr
            if conv.checked:
                src = qi(t.columns[col.name])
                check_cols.append(casting.named(conv.bad(src), _PREFIX + "bad_" + col.name))
                check_cols.append(casting.named(src, _PREFIX + "src_" + col.name))
        else:
            expr = _placeholder(all_tables, t.name, col)
        typed_cols.append(casting.named(expr, col.name))
    typed_cols += [casting.named(qi(t.columns[x]), x) for x in t.extras]
    t.store_rows = storable(con, t)
    try:
        if not t.store_rows:  # a stored table's typed columns are read from its copy
            queries.project(con, t.typed, t.raw, typed_cols)
        queries.project(con, t.check, t.raw, typed_cols + check_cols)
    except duckdb.Error as exc:
        text = str(exc).strip().splitlines()
        raise SchemaError(
            f"{t.source.label}: cannot use the columns of the {t.name} table "
            f"({', '.join(t.source.relation.columns)}): {text[0] if text else exc!r}"
        ) from None


# --- validation and the clean views ------------------------------------------------------

def _excluded_message(report: LoadReport) -> str:
    """One line for the ExcludedRowsWarning: rows excluded per table and reason."""
    parts = []
    for t in TABLES:
        reasons = [f"{n:,} {reason}" for (table, reason), n in report.excluded.items()
                   if table == t]
        if reasons:
            parts.append(f"{t}: {', '.join(reasons)}")
    n = report.excluded_total
    return (f"{report.source}: {n:,} row{'' if n == 1 else 's'} excluded from the clean views "
            f"({'; '.join(parts)}); logs.report lists them and what each reason means")


def _strict_message(
    con: duckdb.DuckDBPyConnection, report: LoadReport, classified: dict[str, str],
    tables: dict[str, _Table],
) -> str:
    lines = [
        f"strict mode: {report.excluded_total:,} row{'' if report.excluded_total == 1 else 's'} "
        f"of {report.source} would be excluded "
        "(load without strict=True / --strict to exclude and count them instead):"
    ]
    examples = queries.load("logs/examples")
    for (table, reason), n in report.excluded.items():
        lines.append(f"  {table}: {n:,} row{'' if n == 1 else 's'} ({reason}): "
                     f"{REASONS[reason]}; e.g.")
        names = [c for c in column_names(table) if tables[table].has(c)]
        sql = examples.render(classified=[classified[table]], columns=names)
        for row in con.execute(sql, examples.bind(reason=reason)).fetchall():
            shown = ", ".join(f"{c}={_show(v)}" for c, v in zip(names, row, strict=True))
            lines.append(f"    {shown}")
    return "\n".join(lines)


def _show(value: Any) -> str:
    if value is None:
        return "NULL"
    return repr(value) if isinstance(value, str) else str(value)


__all__ = ["Logs", "load_logs"]
