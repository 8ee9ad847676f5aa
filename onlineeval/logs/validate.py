"""Validation of the loaded tables and creation of the clean views (``sql/logs/``).

A handful of aggregate queries, each one pass: searches (nulls, duplicate ids, values that do
not convert); clicks alone (values, which of rank/doc_id they carry); results joined to the kept
searches (nulls, ranks < 1, rows of excluded or unknown searches), then results grouped by a hash
of search_id (repeated ranks, via a bitmask); clicks joined to the kept results (not on the
page), then, only when some click is off its page, to the kept searches (which tells a click of
an excluded or unknown search from one off its page). Only when a pass finds a problem does another
query materialize the offending keys into a small temporary table, which the clean view
anti-joins; a kind of problem that does not occur adds nothing to the views (the queries'
switches). Reasons (see :data:`onlineeval.logs.report.REASONS`) are assigned per row in a
fixed order, so every excluded row is counted exactly once; when a log has repeated ranks the
counts come from an explicit row-by-row classification instead.

A small text table or DataFrame (STORE_BYTES, STORE_ROWS) is first copied, with its
conversions, into a temporary table that every later query of the table reads: on a small
log planning the queries costs more than reading, and the copy is cheaper to plan over.

On Parquet results whose footers show every row valid (no null search_id, rank or doc_id, no
rank < 1; no column needing a value check), the first results pass reads only search_id for
its join: the footer statistics answer the rest without reading data.

The SQL is in ``sql/logs/`` (one file per query, its header says what it computes); this
module chooses which query runs, with which switches, and reads the counts back.
"""

from __future__ import annotations

import os
from typing import Any

import duckdb

from onlineeval import engines, queries
from onlineeval.errors import LogFormatError, SchemaError
from onlineeval.logs.casting import KIND_WORDS
from onlineeval.logs.locate import may_be_data, query_failure, read_error, value_place
from onlineeval.logs.report import LoadReport
from onlineeval.logs.schema import SCHEMA, column_names
from onlineeval.logs.tables import PREFIX, Table
from onlineeval.progress import Progress

# the loader's helper tables and views (their names are written in the SQL files)
_BASE_SEARCHES = "_oe_base_searches"
_DUP_SIDS = "_oe_dup_search_ids"
_EXCL_SIDS = "_oe_excluded_search_ids"
_DUP_RANKS = "_oe_dup_ranks"
_RES_BAD_SIDS = "_oe_results_bad_sids"
_CLK_BAD_SIDS = "_oe_clicks_bad_sids"
_CLK_BAD_KEYS = "_oe_clicks_bad_keys"
_DOC_RANK = "_oe_doc_rank"
_ON_PAGE = "_oe_clicks_on_page"
_BY_SEARCH = "_oe_clicks_by_search"


def _query(con: duckdb.DuckDBPyConnection, t: Table, name: str,
           params: dict[str, Any] | None = None, **chosen: Any) -> list[tuple[Any, ...]]:
    """Run ``sql/<name>.sql`` on table ``t``'s views. An error the data can cause (a
    malformed line, a damaged file) names the file, and the line when one can be found; any
    other DuckDB error here is a bug of ours and is left to surface."""
    q = queries.load(name)
    return _guard(con, t, lambda: con.execute(q.render(**chosen), params or {}).fetchall())


def _create(con: duckdb.DuckDBPyConnection, t: Table, view: str, name: str, *,
            table: bool = False, **chosen: Any) -> None:
    """Store ``sql/<name>.sql`` as the temporary view (or table) ``view``."""
    sql = queries.load(name).render(**chosen)
    _guard(con, t, lambda: queries.create(con, view, sql, table=table))


def _guard(con: duckdb.DuckDBPyConnection, t: Table, run: Any) -> Any:
    try:
        return run()
    except duckdb.Error as exc:
        if not may_be_data(exc):
            raise
        if t.source.format == "arrow":
            # an Arrow source (a Delta or Iceberg table, a dataset) lost or damaged a file: its
            # reader's message says which; no file opened for another log is to blame
            raise LogFormatError(t.source.label, None,
                                 f"cannot read the {t.name} table: {read_error(exc)[2]}") from None
        error = query_failure(con, exc, t.source.format, t.source.files, t.source.label,
                              f"read the {t.name} table")
        if error is None:
            raise
        raise error from None


#: a text table (CSV, TSV) of at most this many bytes, or a DataFrame of at most this many
#: rows, is read once into a temporary table that validation and the clean views read
#: instead: on a small log the cost of a query is planning it, and a plan over a stored
#: table is cheaper than one over the file reader and the conversions. Larger tables stay
#: where they are (read lazily: the copy would cost memory and a pass).
STORE_BYTES = 1 << 20
STORE_ROWS = 20_000


def storable(con: duckdb.DuckDBPyConnection, t: Table) -> bool:
    """Whether validation will store the check view's rows of ``t`` (see STORE_BYTES)."""
    if not engines.is_duckdb(con):
        return False
    src = t.source
    if src.format in ("csv", "tsv"):
        return sum(_file_size(f) for f in src.files) <= STORE_BYTES
    return src.format == "dataframe" and src.rows is not None and src.rows <= STORE_ROWS


def _store(con: duckdb.DuckDBPyConnection, t: Table) -> None:
    """Store the check view's rows of a small text table or DataFrame (``t.store_rows``, see
    STORE_BYTES); called before the table's first pass, so a file that cannot be read fails
    where it did."""
    if t.stored:
        return
    if t.store_rows:
        _create(con, t, t.store, "logs/copy", table=True, source=[t.check])
        t.stored = True
    elif engines.is_duckdb(con):  # one a log loaded earlier into this connection stored
        queries.drop_table(con, t.store)


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return STORE_BYTES + 1  # not a plain local file: leave it where it is


def _bad_flags(t: Table) -> list[str]:
    return [f"{PREFIX}bad_{c}" for c in t.checked()]


def _raise_bad_values(con: duckdb.DuckDBPyConnection, t: Table, counts: list[int],
                      total: int) -> None:
    for col, n in zip(t.checked(), counts, strict=True):
        if not n:
            continue
        src = t.columns[col]
        rows = _query(con, t, "logs/bad_values", source=[t.check],
                      value=[f"{PREFIX}src_{col}"], flag=[f"{PREFIX}bad_{col}"])
        values = [r[0] for r in rows]
        examples = ", ".join(repr(v) for v in values)
        kind = next(c.kind for c in SCHEMA[t.name] if c.name == col)
        raise SchemaError(
            f"{t.source.label}: column {src!r} ({t.name}.{col}) must hold "
            f"{KIND_WORDS[kind]}; {n:,} of {total:,} rows hold values that cannot be read as "
            f"one, e.g. {examples}{_place(t, src, values)}. Fix these values, or map another "
            "column with columns=."
        )


def _place(t: Table, column: str, values: list[str]) -> str:
    """Where one of the bad ``values`` is: `` (on line 3)``, `` ('x' in row 3 of f.parquet)``;
    empty when unknown."""
    found = value_place(t.source.format, t.source.files, column, values)
    if found is None:
        return ""
    file, where, value = found
    which = f"{value!r} " if len(values) > 1 else ""
    of = f" of {file}" if len(t.source.files) > 1 else ""
    return f" ({which}{'on' if where.startswith('line') else 'in'} {where}{of})"


def _reason_counts(report: LoadReport, table: str, names: list[str], values: list[int]) -> None:
    for reason, n in zip(names, values, strict=True):
        if n:
            report.excluded[(table, reason)] = int(n)


def _counted(con: duckdb.DuckDBPyConnection, t: Table, view: str,
             reasons: list[str]) -> list[int]:
    """The rows of the classified ``view`` excluded for each of ``reasons``."""
    got = dict(_query(con, t, "logs/reason_counts", classified=[view]))
    return [int(got.get(r, 0)) for r in reasons]


def _size(con: duckdb.DuckDBPyConnection, t: Table, table: str) -> tuple[int, int]:
    """Keys in one of the helper tables and the rows they stand for (its column n)."""
    keys, n = _query(con, t, "logs/helper_size", table=[table])[0]
    return int(keys), int(n or 0)


def validate(con: duckdb.DuckDBPyConnection, tables: dict[str, Table],
             report: LoadReport) -> dict[str, str]:
    """Validate, fill ``report``, create the clean views; return the classified view of each
    table (every row with ``_oe_reason``)."""
    classified: dict[str, str] = {}
    # steps: searches, clicks values, results, clicks; shown on a terminal only
    with Progress(f"checking {report.source}", total=4) as bar:
        excluded_sids = _searches(con, tables["searches"], report, classified)
        bar.update()
        facts = _clicks_prepass(con, tables, report)
        bar.update()
        if "results" in tables:
            _results(con, tables["results"], report, classified, excluded_sids)
        else:
            _create(con, tables["searches"], "results", "logs/results/empty",
                    searches=[tables["searches"].typed_rows],
                    clicks=[tables["clicks"].typed_rows])
        bar.update()
        _clicks(con, tables, report, classified, excluded_sids, facts)
        _final_searches(con, tables)
        if "events" in tables:
            _events(con, tables["events"], report, classified)
        bar.update()
    return classified


# --- searches -------------------------------------------------------------------------------

# Optional columns whose absence changes what the metrics do (derive sessions, n_results or
# dwell; drop time-based metrics); an entirely empty one is treated as absent. Text columns
# (query, variant, ...) are not checked: reading them costs, and empty they change nothing.
_MAY_BE_EMPTY = frozenset({"ts", "session_id", "n_results", "rank", "doc_id", "dwell_ms",
                           # optional in the events only (required elsewhere)
                           "user_id", "search_id", "value"})


def _optional(t: Table) -> list[str]:
    """Provided optional columns checked for having no value at all."""
    return [c.name for c in SCHEMA[t.name]
            if not c.required and c.name in _MAY_BE_EMPTY and t.has(c.name)]


def _note_empty(report: LoadReport, t: Table, counts: list[int], n: int) -> None:
    empty = tuple(c for c, k in zip(_optional(t), counts, strict=True) if n and not k)
    if empty:
        report.empty_columns[t.name] = empty


#: optional searches columns that become required when the log has them: a search without
#: its ts cannot be placed in time, and one without its session_id in a log that gives
#: sessions belongs to no session (it would silently join every other such search of its user)
_REQUIRED_WHEN_GIVEN = ("ts", "session_id")


def _searches(con: duckdb.DuckDBPyConnection, t: Table, report: LoadReport,
              classified: dict[str, str],
              when_given: tuple[str, ...] = _REQUIRED_WHEN_GIVEN) -> bool:
    _store(con, t)
    required = ["search_id", "user_id"] + [c for c in when_given if t.has(c)]
    # an empty text id is missing too (logs/searches/flag says why)
    text = [c for c in required if t.types.get(c) == "VARCHAR"]
    null = {"text_required": text, "other_required": [c for c in required if c not in text]}
    _create(con, t, t.flagged, "logs/searches/flag", source=[t.check_rows], **null)
    optional, bad = _optional(t), _bad_flags(t)
    row = list(_query(con, t, "logs/searches/pass", source=[t.check_rows], optional=optional,
                      bad=bad, **null)[0])
    filled, bad_counts = row[:len(optional)], row[len(optional):len(optional) + len(bad)]
    n, n_null, n_distinct, n_sid = row[len(optional) + len(bad):]
    _raise_bad_values(con, t, bad_counts, n)
    if n == 0:
        raise SchemaError(f"{t.source.label}: the searches table has no rows")
    _note_empty(report, t, filled, n)
    t.rows, t.non_null = n, dict(zip(optional, filled, strict=True))
    empty = set(report.empty_columns.get("searches", ()))
    if empty & set(required):
        # a ts (session_id) column without a single value is a log without times (sessions),
        # not a log whose every row lacks a required value
        return _searches(con, t, report, classified,
                         tuple(c for c in when_given if c not in empty))
    report.rows_read["searches"] = n
    report.excluded.update({("searches", "null_required"): n_null} if n_null else {})
    dup = n_distinct < n_sid
    if dup:
        _create(con, t, _DUP_SIDS, "logs/searches/duplicate_ids", table=True,
                source=[t.flagged])
        n_dup = _size(con, t, _DUP_SIDS)[1]
        if n_dup:
            report.excluded[("searches", "duplicate_search_id")] = n_dup
    _create(con, t, t.classified, "logs/searches/classified", source=[t.flagged], dup=dup)
    classified["searches"] = t.classified
    _create(con, t, _BASE_SEARCHES, "logs/searches/kept", source=[t.flagged], dup=dup,
            nulls=bool(n_null))
    if n_null or dup:
        _create(con, t, _EXCL_SIDS, "logs/searches/excluded_ids", table=True,
                classified=[t.classified])
        return True
    return False


def _final_searches(con: duckdb.DuckDBPyConnection, tables: dict[str, Table]) -> None:
    t = tables["searches"]
    given = t.has("n_results")
    counted = "results" in tables and not (given and t.non_null.get("n_results") == t.rows)
    # absent, or null on some (or every) row: the number of results rows of the search
    _create(con, t, "searches", "logs/searches/clean",
            columns=[c for c in column_names("searches") if c != "n_results"],
            extras=list(t.extras), count_results=counted, given=given)


# --- results --------------------------------------------------------------------------------

RESULT_REASONS = ["null_required", "rank_below_1", "duplicate_rank", "search_excluded",
                  "unknown_search"]


def _results(con: duckdb.DuckDBPyConnection, t: Table, report: LoadReport,
             classified: dict[str, str], excluded_sids: bool) -> None:
    """Validate results and create their view."""
    _store(con, t)
    _create(con, t, t.flagged, "logs/results/flag", source=[t.check_rows])
    bad, optional = _bad_flags(t), _optional(t)
    # Pass 1, row by row joined to the kept searches: rows, nulls, ranks < 1, rows of
    # excluded or unknown searches, bad values, filled optional columns.
    row = _results_pass1_from_footer(con, t, optional, excluded_sids)
    if row is None:
        got = [int(v or 0) for v in _query(
            con, t, "logs/results/pass", source=[t.check_rows], bad=bad, optional=optional,
            excluded=excluded_sids)[0]]
        bad_counts, filled = got[:len(bad)], got[len(bad):len(bad) + len(optional)]
        row = [*got[len(bad) + len(optional):], *bad_counts, *filled]
    n = row[0]
    _raise_bad_values(con, t, row[5:5 + len(bad)], n)
    _note_empty(report, t, row[5 + len(bad):], n)
    report.rows_read["results"] = n
    reasons = [row[1], row[2], 0, row[3], row[4]]
    # Pass 2, repeated ranks (logs/results/rank_suspects says how), confirmed exactly
    # (a DuckDB-only pre-check: on another engine every log is a suspect)
    suspect = not engines.is_duckdb(con) or _query(
        con, t, "logs/results/rank_suspects", source=[t.typed_rows])[0][0]
    dup = False
    if suspect:
        _create(con, t, _DUP_RANKS, "logs/results/duplicate_ranks", table=True,
                source=[t.typed_rows])
        dup = _size(con, t, _DUP_RANKS)[0] > 0
    _create(con, t, t.classified, "logs/results/classified", source=[t.flagged], dup=dup,
            excluded=excluded_sids)
    classified["results"] = t.classified
    if dup:
        reasons = _counted(con, t, t.classified, RESULT_REASONS)
    _reason_counts(report, "results", RESULT_REASONS, reasons)
    by = dict(zip(RESULT_REASONS, reasons, strict=True))
    orphans = bool(by["search_excluded"] or by["unknown_search"])
    if orphans:
        _create(con, t, _RES_BAD_SIDS, "logs/results/orphan_ids", table=True,
                source=[t.typed_rows])
    _create(con, t, "results", "logs/results/clean", source=[t.flagged], dup=dup,
            orphans=orphans, nulls=bool(by["null_required"]),
            low_ranks=bool(by["rank_below_1"]))


def _results_pass1_from_footer(con: duckdb.DuckDBPyConnection, t: Table, optional: list[str],
                               excluded_sids: bool) -> list[Any] | None:
    """Pass 1 of the results for a Parquet table whose rows are all valid, else None.

    On Parquet, DuckDB answers ``count(column)`` and ``min(rank)`` from the file footers without
    reading the data. When they show no null required field and no rank < 1, and no column
    needs a value check, every row is valid, so the row-by-row pass reduces to the join of
    search_id with the kept searches (one column read instead of three). Any other case, or
    a footer without statistics (then this query scans, once), takes the full pass 1.
    Returns the row of pass 1: rows, nulls, ranks < 1, rows of excluded searches, rows of
    unknown searches, (no bad-value counts), filled counts of the ``optional`` columns.
    """
    if t.source.format != "parquet" or t.checked():
        return None
    stats = _query(con, t, "logs/results/footer", source=[t.typed], optional=optional)[0]
    filled, (n, sids, ranks, docs, min_rank) = list(stats[:len(optional)]), stats[len(optional):]
    if not (sids == ranks == docs == n) or (n and min_rank < 1):
        return None
    lost = _query(con, t, "logs/results/unknown_searches", source=[t.typed_rows],
                  excluded=excluded_sids)[0]
    return [n, 0, 0, lost[0], lost[1], *filled]


# --- clicks ---------------------------------------------------------------------------------

CLICK_REASONS = ["null_required", "rank_below_1", "search_excluded", "unknown_search",
                 "not_on_page"]


def _clicks_prepass(con: duckdb.DuckDBPyConnection, tables: dict[str, Table],
                    report: LoadReport) -> dict[str, int]:
    """Count clicks, check their values, count clicks with only a rank or only a doc_id, and
    those excluded as lacking a required value or for a rank below 1."""
    t = tables["clicks"]
    _store(con, t)
    _create(con, t, t.flagged, "logs/clicks/flag", source=[t.check_rows])
    bad, optional = _bad_flags(t), _optional(t)
    row = _query(con, t, "logs/clicks/pass", source=[t.flagged], bad=bad, optional=optional)[0]
    n, rank_only, doc_only, n_null, n_low = row[len(bad) + len(optional):]
    _raise_bad_values(con, t, list(row[:len(bad)]), n)
    _note_empty(report, t, list(row[len(bad):len(bad) + len(optional)]), n)
    report.rows_read["clicks"] = n
    return {"rank_only": rank_only, "doc_only": doc_only, "null_required": int(n_null),
            "rank_below_1": int(n_low)}


def _clicks(con: duckdb.DuckDBPyConnection, tables: dict[str, Table], report: LoadReport,
            classified: dict[str, str], excluded_sids: bool, facts: dict[str, int]) -> None:
    """Classify clicks (joined to the kept searches and results) and create their view."""
    t = tables["clicks"]
    has_results = "results" in tables
    # joins to the results, needed to check (and fill) what was clicked
    by_rank = has_results and t.has("rank")
    by_doc = has_results and facts["doc_only"] > 0
    if by_doc:
        _create(con, t, _DOC_RANK, "logs/clicks/doc_rank")
    # reasons that need only the searches; then, with results, "not on the page"
    _create(con, t, _BY_SEARCH, "logs/clicks/classified", source=[t.flagged],
            excluded=excluded_sids, page=False)
    if has_results:
        _create(con, t, _ON_PAGE, "logs/clicks/on_page", source=[t.flagged],
                by_rank=by_rank, by_doc=by_doc)
        _create(con, t, t.classified, "logs/clicks/classified", source=[_ON_PAGE],
                excluded=excluded_sids, page=True)
        classified["clicks"] = t.classified
    else:
        classified["clicks"] = _BY_SEARCH
    off_page = None
    if has_results:
        # Counted over all clicks with a usable rank/doc, whatever their search: the kept
        # results hold only kept searches, so every click of an excluded or unknown search is
        # among them too, and is subtracted. This keeps the searches out of this join.
        off_page = _query(con, t, "logs/clicks/off_page", source=[_ON_PAGE])[0][0]
    reasons = _search_reasons(con, t, facts, off_page)
    reasons.append(0 if off_page is None else off_page - reasons[2] - reasons[3])
    _reason_counts(report, "clicks", CLICK_REASONS, list(reasons))
    by = dict(zip(CLICK_REASONS, reasons, strict=True))
    orphans = bool(by["search_excluded"] or by["unknown_search"])
    if orphans:
        _create(con, t, _CLK_BAD_SIDS, "logs/clicks/orphan_ids", table=True,
                classified=[_BY_SEARCH])
    if by["not_on_page"]:
        _create(con, t, _CLK_BAD_KEYS, "logs/clicks/off_page_keys", table=True,
                classified=[classified["clicks"]])
    _create(con, t, "clicks", "logs/clicks/clean", source=[t.flagged], fill_rank=by_doc,
            fill_doc=by_rank and facts["rank_only"] > 0, orphans=orphans,
            off_page=bool(by["not_on_page"]), nulls=bool(by["null_required"]),
            low_ranks=bool(by["rank_below_1"]))


def _search_reasons(con: duckdb.DuckDBPyConnection, t: Table, facts: dict[str, int],
                    off_page: int | None) -> list[int]:
    """The clicks excluded for each of the first four CLICK_REASONS (``off_page``: the count
    of logs/clicks/off_page, None without results).

    With results and no click off its page, every click that lacks no required value and
    has no rank below 1 is on its page, i.e. matches a row of the clean results, which hold
    only rows of kept searches: so no click is of an excluded or unknown search, and the
    first pass's two counts are all there is. Only otherwise are the clicks joined to the
    kept searches (logs/reason_counts over the clicks classified by search)."""
    if off_page == 0:
        return [facts["null_required"], facts["rank_below_1"], 0, 0]
    return _counted(con, t, _BY_SEARCH, CLICK_REASONS[:4])


# --- events ---------------------------------------------------------------------------------

def _events(con: duckdb.DuckDBPyConnection, t: Table, report: LoadReport,
            classified: dict[str, str]) -> None:
    """Validate the events and create their view. Only rows lacking a required value are
    excluded here; whether an event belongs to a search of the log is attribution's question
    (online/attribution counts the ones that do not, by reason)."""
    _store(con, t)
    _create(con, t, t.flagged, "logs/events/flag", source=[t.check_rows],
            text_user=t.types.get("user_id") == "VARCHAR",
            text_search=t.types.get("search_id") == "VARCHAR")
    bad, optional = _bad_flags(t), _optional(t)
    row = _query(con, t, "logs/events/pass", source=[t.flagged], bad=bad, optional=optional)[0]
    n, n_null = row[len(bad) + len(optional):]
    _raise_bad_values(con, t, list(row[:len(bad)]), n)
    _note_empty(report, t, list(row[len(bad):len(bad) + len(optional)]), n)
    report.rows_read["events"] = n
    _reason_counts(report, "events", ["null_required"], [n_null])
    _create(con, t, t.classified, "logs/events/classified", source=[t.flagged])
    classified["events"] = t.classified
    _create(con, t, "events", "logs/events/clean", source=[t.flagged], nulls=bool(n_null))
