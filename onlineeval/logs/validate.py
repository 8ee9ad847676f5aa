"""Validation of the loaded tables and creation of the clean views.

A handful of aggregate queries, each one pass: searches (nulls, duplicate ids, values that do
not convert); clicks alone (values, which of rank/doc_id they carry); results joined to the kept
searches (nulls, ranks < 1, rows of excluded or unknown searches), then results grouped by a hash
of search_id (repeated ranks, via a bitmask); clicks joined to the kept searches, then clicks
joined to the kept results (not on the page). Only when a pass finds a problem does another
query materialize the offending keys into a small temporary table, which the clean view
anti-joins; a kind of problem that does not occur adds nothing to the views. Reasons (see
:data:`onlineeval.logs.report.REASONS`) are assigned per row in a fixed order, so every
excluded row is counted exactly once; when a log has repeated ranks the counts come from an
explicit row-by-row classification instead.

On Parquet results whose footers show every row valid (no null search_id, rank or doc_id, no
rank < 1; no column needing a value check), the first results pass reads only search_id for
its join: the footer statistics answer the rest without reading data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb

from onlineeval.errors import SchemaError
from onlineeval.logs.casting import KIND_WORDS
from onlineeval.logs.locate import may_be_data, query_failure, value_place
from onlineeval.logs.report import LoadReport
from onlineeval.logs.schema import SCHEMA, column_names
from onlineeval.progress import Progress
from onlineeval.queries import quote_ident as qi

if TYPE_CHECKING:
    from onlineeval.logs.load import _Table

_BASE_SEARCHES = qi("_oe_base_searches")
_DUP_SIDS = qi("_oe_dup_search_ids")
_EXCL_SIDS = qi("_oe_excluded_search_ids")
_DUP_RANKS = qi("_oe_dup_ranks")
_RES_BAD_SIDS = qi("_oe_results_bad_sids")
_CLK_BAD_SIDS = qi("_oe_clicks_bad_sids")
_CLK_BAD_KEYS = qi("_oe_clicks_bad_keys")
_DOC_RANK = qi("_oe_doc_rank")

SID, RANK, DOC = qi("search_id"), qi("rank"), qi("doc_id")

def _query(con: duckdb.DuckDBPyConnection, t: _Table, sql: str,
           params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    """Run a validation query on table ``t``. An error the data can cause (a malformed line, a
    damaged file) names the file, and the line when one can be found; any other DuckDB error
    here is a bug of ours and is left to surface."""
    try:
        return con.execute(sql, params or {}).fetchall()
    except duckdb.Error as exc:
        if not may_be_data(exc):
            raise
        error = query_failure(con, exc, t.source.format, t.source.files, t.source.label,
                              f"read the {t.name} table")
        if error is None:
            raise
        raise error from None


def _checked(t: _Table) -> list[str]:
    return [c for c, conv in t.conversions.items() if conv.checked]


def _bad_counts(t: _Table) -> list[str]:
    return [f"count(*) FILTER (WHERE {qi('_oe_bad_' + c)})" for c in _checked(t)]


def _raise_bad_values(con: duckdb.DuckDBPyConnection, t: _Table, counts: list[int],
                      total: int) -> None:
    for col, n in zip(_checked(t), counts, strict=True):
        if not n:
            continue
        src = t.columns[col]
        conv = t.conversions[col]
        rows = _query(con, t, f"SELECT DISTINCT CAST({qi(src)} AS VARCHAR) FROM {t.raw} "
                              f"WHERE {conv.bad(qi(src))} LIMIT 3")
        values = [r[0] for r in rows]
        examples = ", ".join(repr(v) for v in values)
        kind = next(c.kind for c in SCHEMA[t.name] if c.name == col)
        raise SchemaError(
            f"{t.source.label}: column {src!r} ({t.name}.{col}) must hold "
            f"{KIND_WORDS[kind]}; {n:,} of {total:,} rows hold values that cannot be read as "
            f"one, e.g. {examples}{_place(t, src, values)}. Fix these values, or map another "
            "column with columns=."
        )


def _place(t: _Table, column: str, values: list[str]) -> str:
    """Where one of the bad ``values`` is: `` (on line 3)``, `` ('x' in row 3 of f.parquet)``;
    empty when unknown."""
    found = value_place(t.source.format, t.source.files, column, values)
    if found is None:
        return ""
    file, where, value = found
    which = f"{value!r} " if len(values) > 1 else ""
    of = f" of {file}" if len(t.source.files) > 1 else ""
    return f" ({which}{'on' if where.startswith('line') else 'in'} {where}{of})"


def _create(con: duckdb.DuckDBPyConnection, t: _Table, kind: str, name: str, sql: str) -> None:
    _query(con, t, f"CREATE OR REPLACE TEMP {kind} {name} AS {sql}")


def _reason_counts(report: LoadReport, table: str, names: list[str], values: list[int]) -> None:
    for reason, n in zip(names, values, strict=True):
        if n:
            report.excluded[(table, reason)] = int(n)


def validate(con: duckdb.DuckDBPyConnection, tables: dict[str, _Table],
             report: LoadReport) -> dict[str, str]:
    """Validate, fill ``report``, create the clean views; return classified SQL per table."""
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
            _empty_results(con, tables)
        bar.update()
        _clicks(con, tables, report, classified, excluded_sids, facts)
        _final_searches(con, tables)
        bar.update()
    return classified


# --- searches -------------------------------------------------------------------------------

# Optional columns whose absence changes what the metrics do (derive sessions, n_results or
# dwell; drop time-based metrics); an entirely empty one is treated as absent. Text columns
# (query, variant, ...) are not checked: reading them costs, and empty they change nothing.
_MAY_BE_EMPTY = frozenset({"ts", "session_id", "n_results", "rank", "doc_id", "dwell_ms"})


def _optional(t: _Table) -> list[str]:
    """Provided optional columns checked for having no value at all."""
    return [c.name for c in SCHEMA[t.name]
            if not c.required and c.name in _MAY_BE_EMPTY and t.has(c.name)]


def _note_empty(report: LoadReport, t: _Table, counts: list[int], n: int) -> None:
    empty = tuple(c for c, k in zip(_optional(t), counts, strict=True) if n and not k)
    if empty:
        report.empty_columns[t.name] = empty


#: optional searches columns that become required when the log has them: a search without
#: its ts cannot be placed in time, and one without its session_id in a log that gives
#: sessions belongs to no session (it would silently join every other such search of its user)
_REQUIRED_WHEN_GIVEN = ("ts", "session_id")


def _searches(con: duckdb.DuckDBPyConnection, t: _Table, report: LoadReport,
              classified: dict[str, str],
              when_given: tuple[str, ...] = _REQUIRED_WHEN_GIVEN) -> bool:
    required = ["search_id", "user_id"] + [c for c in when_given if t.has(c)]
    # an empty text id is missing too: CSV reads "" as NULL, and Parquet, JSON and DataFrames
    # must not instead make every id-less row one shared user (or session, or page)
    null = " OR ".join(
        f"(s.{qi(c)} IS NULL OR s.{qi(c)} = '')" if t.types.get(c) == "VARCHAR"
        else f"s.{qi(c)} IS NULL" for c in required)
    bad = _bad_counts(t)
    optional = _optional(t)
    # A search_id is a duplicate when it is on more than one row, whatever the other columns
    # of those rows hold: with a twin row (even one lacking its user), which row is "the" page
    # is unknowable, so no row of the id is kept.
    row = _query(con, t, f"SELECT count(*), count(*) FILTER (WHERE {null}), "
                         f"count(DISTINCT s.{SID}), count(s.{SID})"
                         f"{''.join(f', count(s.{qi(c)})' for c in optional)}"
                         f"{''.join(', ' + b for b in bad)} FROM {t.check} s")[0]
    n, n_null, n_distinct, n_sid = row[0], row[1], row[2], row[3]
    _raise_bad_values(con, t, list(row[4 + len(optional):]), n)
    if n == 0:
        raise SchemaError(f"{t.source.label}: the searches table has no rows")
    _note_empty(report, t, list(row[4:4 + len(optional)]), n)
    t.rows, t.non_null = n, dict(zip(optional, row[4:4 + len(optional)], strict=True))
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
        # n: rows of the id not already excluded as null_required (the reason that comes first)
        _create(con, t, "TABLE", _DUP_SIDS,
                f"SELECT s.{SID}, count(*) FILTER (WHERE NOT ({null})) AS n FROM {t.typed} s "
                f"WHERE s.{SID} IS NOT NULL GROUP BY s.{SID} HAVING count(*) > 1")
        n_dup = _query(con, t, f"SELECT sum(n) FROM {_DUP_SIDS}")[0][0]
        if n_dup:
            report.excluded[("searches", "duplicate_search_id")] = int(n_dup)
    reason = (f"CASE WHEN {null} THEN 'null_required'"
              + (f" WHEN d.{SID} IS NOT NULL THEN 'duplicate_search_id'" if dup else "")
              + " END")
    join = f" LEFT JOIN {_DUP_SIDS} d ON s.{SID} = d.{SID}" if dup else ""
    classified["searches"] = f"SELECT s.*, {reason} AS _oe_reason FROM {t.typed} s{join}"
    where = f" WHERE NOT ({null})" if n_null else ""
    anti = f" ANTI JOIN {_DUP_SIDS} d ON s.{SID} = d.{SID}" if dup else ""
    _create(con, t, "VIEW", _BASE_SEARCHES, f"SELECT s.* FROM {t.typed} s{anti}{where}")
    if n_null or dup:
        _create(con, t, "TABLE", _EXCL_SIDS,
                f"SELECT DISTINCT {SID} FROM ({classified['searches']}) "
                f"WHERE _oe_reason IS NOT NULL AND {SID} IS NOT NULL")
        return True
    return False


def _final_searches(con: duckdb.DuckDBPyConnection, tables: dict[str, _Table]) -> None:
    t = tables["searches"]
    cols = [f"s.{qi(c)}" for c in column_names("searches") if c != "n_results"]
    join = ""
    given = t.has("n_results")
    if "results" not in tables or (given and t.non_null.get("n_results") == t.rows):
        cols.append(f"s.{qi('n_results')}")
    else:
        # absent, or null on some (or every) row: the number of results rows of the search
        n = f"coalesce(s.{qi('n_results')}, n.n, 0)" if given else "coalesce(n.n, 0)"
        cols.append(f"CAST({n} AS INTEGER) AS {qi('n_results')}")
        join = (f" LEFT JOIN (SELECT {SID}, count(*) AS n FROM {qi('results')} GROUP BY {SID})"
                f" n ON s.{SID} = n.{SID}")
    cols += [f"s.{qi(x)}" for x in t.extras]
    _create(con, t, "VIEW", qi("searches"),
            f"SELECT {', '.join(cols)} FROM {_BASE_SEARCHES} s{join}")


# --- results --------------------------------------------------------------------------------

def _results_reason(null: str, dup: bool, excluded_sids: bool) -> str:
    unknown = (f"CASE WHEN e.{SID} IS NOT NULL THEN 'search_excluded' ELSE 'unknown_search' END"
               if excluded_sids else "'unknown_search'")
    return (f"CASE WHEN {null} THEN 'null_required' WHEN r.{RANK} < 1 THEN 'rank_below_1'"
            + (f" WHEN dr.{SID} IS NOT NULL THEN 'duplicate_rank'" if dup else "")
            + f" WHEN k.{SID} IS NULL THEN {unknown} END")


def _results_from(base: str, dup: bool, excluded_sids: bool) -> str:
    sql = f"{base} r LEFT JOIN {_BASE_SEARCHES} k ON r.{SID} = k.{SID}"
    if excluded_sids:
        sql += f" LEFT JOIN {_EXCL_SIDS} e ON r.{SID} = e.{SID}"
    if dup:
        sql += f" LEFT JOIN {_DUP_RANKS} dr ON r.{SID} = dr.{SID} AND r.{RANK} = dr.{RANK}"
    return sql


RESULT_REASONS = ["null_required", "rank_below_1", "duplicate_rank", "search_excluded",
                  "unknown_search"]


def _results(con: duckdb.DuckDBPyConnection, t: _Table, report: LoadReport,
             classified: dict[str, str], excluded_sids: bool) -> None:
    """Validate results and create their view."""
    null = f"r.{SID} IS NULL OR r.{RANK} IS NULL OR r.{DOC} IS NULL"
    valid = f"NOT ({null}) AND r.{RANK} >= 1"
    n_bad = len(_checked(t))
    optional = _optional(t)
    # Pass 1, row by row joined to the kept searches: rows, nulls, ranks < 1, rows of
    # excluded or unknown searches, bad values, filled optional columns.
    excl = f"e.{SID} IS NOT NULL" if excluded_sids else "false"
    lost = f"{valid} AND k.{SID} IS NULL"
    frm = f"{t.check} r LEFT JOIN {_BASE_SEARCHES} k ON r.{SID} = k.{SID}"
    if excluded_sids:
        frm += f" LEFT JOIN {_EXCL_SIDS} e ON r.{SID} = e.{SID}"
    row = _results_pass1_from_footer(con, t, optional, excluded_sids)
    if row is None:
        row = _query(con, t, (
            f"SELECT count(*), count(*) FILTER (WHERE {null}), "
            f"count(*) FILTER (WHERE NOT ({null}) AND r.{RANK} < 1), "
            f"count(*) FILTER (WHERE {lost} AND {excl}), "
            f"count(*) FILTER (WHERE {lost} AND NOT {excl})"
            f"{''.join(', ' + b for b in _bad_counts(t))}"
            f"{''.join(f', count(r.{qi(c)})' for c in optional)} FROM {frm}"))[0]
    row = [int(v or 0) for v in row]
    n = row[0]
    _raise_bad_values(con, t, row[5:5 + n_bad], n)
    _note_empty(report, t, row[5 + n_bad:], n)
    report.rows_read["results"] = n
    reasons = [row[1], row[2], 0, row[3], row[4]]
    # Pass 2, repeated ranks: grouped by a hash of search_id, a bitmask of the ranks 1..63
    # seen shows a repeat as fewer bits than rows, without counting distinct (search_id, rank)
    # pairs. A hash collision or more than one rank above 63 in a group only makes it suspect
    # a repeat, which the exact GROUP BY below then confirms or rules out.
    # Like a repeated search_id, a rank is repeated whatever the other row holds: a twin
    # lacking its doc_id (excluded as null_required) still leaves the shown doc unknowable.
    paired = f"r.{SID} IS NOT NULL AND r.{RANK} >= 1"
    small = f"r.{RANK} BETWEEN 1 AND 63"
    suspect = _query(con, t, (
        f"SELECT count(*) FILTER (WHERE n_small <> bit_count(mask) OR n_big > 1) FROM ("
        f"SELECT hash(r.{SID}) AS h, count(*) FILTER (WHERE {small}) AS n_small, "
        f"coalesce(bit_or(CASE WHEN {small} THEN CAST(1 AS UBIGINT) << "
        f"CAST(r.{RANK} AS UBIGINT) END), CAST(0 AS UBIGINT)) AS mask, "
        f"count(*) FILTER (WHERE r.{RANK} > 63) AS n_big "
        f"FROM {t.typed} r WHERE {paired} GROUP BY h)"))[0][0]
    dup = False
    if suspect:
        _create(con, t, "TABLE", _DUP_RANKS,
                f"SELECT r.{SID}, r.{RANK} FROM {t.typed} r WHERE {paired} "
                f"GROUP BY r.{SID}, r.{RANK} HAVING count(*) > 1")
        dup = _query(con, t, f"SELECT count(*) FROM {_DUP_RANKS}")[0][0] > 0
    classified["results"] = (
        f"SELECT r.*, {_results_reason(null, dup, excluded_sids)} AS _oe_reason "
        f"FROM {_results_from(t.typed, dup, excluded_sids)}")
    if dup:
        sel = ", ".join(f"count(*) FILTER (WHERE _oe_reason = '{r}')" for r in RESULT_REASONS)
        reasons = list(_query(con, t, f"SELECT {sel} FROM ({classified['results']})")[0])
    _reason_counts(report, "results", RESULT_REASONS, reasons)
    by = dict(zip(RESULT_REASONS, reasons, strict=True))
    sql = f"SELECT r.{SID}, r.{RANK}, r.{DOC}, r.{qi('team')} FROM {t.typed} r"
    if dup:
        sql += f" ANTI JOIN {_DUP_RANKS} dr ON r.{SID} = dr.{SID} AND r.{RANK} = dr.{RANK}"
    if by["search_excluded"] or by["unknown_search"]:
        _create(con, t, "TABLE", _RES_BAD_SIDS,
                f"SELECT DISTINCT r.{SID} FROM {t.typed} r "
                f"ANTI JOIN {_BASE_SEARCHES} k ON r.{SID} = k.{SID} WHERE r.{SID} IS NOT NULL")
        sql += f" ANTI JOIN {_RES_BAD_SIDS} b ON r.{SID} = b.{SID}"
    _create(con, t, "VIEW", qi("results"), _filtered(sql, by, null, f"r.{RANK} >= 1"))


def _results_pass1_from_footer(con: duckdb.DuckDBPyConnection, t: _Table, optional: list[str],
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
    if t.source.format != "parquet" or _checked(t):
        return None
    stats = _query(con, t, (
        f"SELECT count(*), count(r.{SID}), count(r.{RANK}), count(r.{DOC}), min(r.{RANK})"
        f"{''.join(f', count(r.{qi(c)})' for c in optional)} FROM {t.typed} r"))[0]
    n = stats[0]
    if not (stats[1] == stats[2] == stats[3] == n) or (n and stats[4] < 1):
        return None
    excl = f"e.{SID} IS NOT NULL" if excluded_sids else "false"
    frm = f"{t.typed} r LEFT JOIN {_BASE_SEARCHES} k ON r.{SID} = k.{SID}"
    if excluded_sids:
        frm += f" LEFT JOIN {_EXCL_SIDS} e ON r.{SID} = e.{SID}"
    lost = _query(con, t, (
        f"SELECT count(*) FILTER (WHERE k.{SID} IS NULL AND {excl}), "
        f"count(*) FILTER (WHERE k.{SID} IS NULL AND NOT {excl}) FROM {frm}"))[0]
    return [n, 0, 0, lost[0], lost[1], *stats[5:]]


def _filtered(sql: str, by: dict[str, int], null: str, rank_ok: str) -> str:
    """``sql`` with the row filters for the exclusion reasons that occurred (``by``: counts)."""
    where = []
    if by["null_required"]:
        where.append(f"NOT ({null})")
    if by["rank_below_1"]:
        where.append(rank_ok)
    return sql + (" WHERE " + " AND ".join(where) if where else "")


def _empty_results(con: duckdb.DuckDBPyConnection, tables: dict[str, _Table]) -> None:
    sid = next(t.types["search_id"] for t in tables.values())
    doc = tables["clicks"].types.get("doc_id", "VARCHAR")
    _create(con, tables["searches"], "VIEW", qi("results"),
            f"SELECT CAST(NULL AS {sid}) AS {SID}, CAST(NULL AS INTEGER) AS {RANK}, "
            f"CAST(NULL AS {doc}) AS {DOC}, CAST(NULL AS VARCHAR) AS {qi('team')} WHERE false")


# --- clicks ---------------------------------------------------------------------------------

CLICK_REASONS = ["null_required", "rank_below_1", "search_excluded", "unknown_search",
                 "not_on_page"]


def _clicks_prepass(con: duckdb.DuckDBPyConnection, tables: dict[str, _Table],
                    report: LoadReport) -> dict[str, int]:
    """Count clicks, check their values, count clicks with only a rank or only a doc_id."""
    t = tables["clicks"]
    bad = _bad_counts(t)
    optional = _optional(t)
    row = _query(con, t, f"SELECT count(*), "
                         f"count(*) FILTER (WHERE c.{RANK} IS NOT NULL AND c.{DOC} IS NULL), "
                         f"count(*) FILTER (WHERE c.{RANK} IS NULL AND c.{DOC} IS NOT NULL)"
                         f"{''.join(', ' + b for b in bad)}"
                         f"{''.join(f', count(c.{qi(c)})' for c in optional)} "
                         f"FROM {t.check} c")[0]
    n, rank_only, doc_only = row[0], row[1], row[2]
    _raise_bad_values(con, t, list(row[3:3 + len(bad)]), n)
    _note_empty(report, t, list(row[3 + len(bad):]), n)
    report.rows_read["clicks"] = n
    return {"rank_only": rank_only, "doc_only": doc_only}


def _clicks(con: duckdb.DuckDBPyConnection, tables: dict[str, _Table], report: LoadReport,
            classified: dict[str, str], excluded_sids: bool, facts: dict[str, int]) -> None:
    """Classify clicks (joined to the kept searches and results) and create their view."""
    t = tables["clicks"]
    has_results = "results" in tables
    null = f"c.{SID} IS NULL OR (c.{RANK} IS NULL AND c.{DOC} IS NULL)"
    rank_only, doc_only = facts["rank_only"], facts["doc_only"]
    # joins to the results, needed to check (and fill) what was clicked
    use_r1 = has_results and t.has("rank")
    use_r2 = has_results and doc_only > 0
    if use_r2:
        _create(con, t, "VIEW", _DOC_RANK,
                f"SELECT {SID}, {DOC}, min({RANK}) AS {RANK} FROM {qi('results')} "
                f"GROUP BY {SID}, {DOC}")
    page_joins = ""
    if use_r1:
        page_joins += (f" LEFT JOIN {qi('results')} r1 ON c.{SID} = r1.{SID} "
                       f"AND c.{RANK} = r1.{RANK}")
    if use_r2:
        page_joins += f" LEFT JOIN {_DOC_RANK} r2 ON c.{SID} = r2.{SID} AND c.{DOC} = r2.{DOC}"
    found2 = f"r2.{SID} IS NOT NULL" if use_r2 else "false"
    if use_r1:
        on_page = (f"CASE WHEN c.{RANK} IS NOT NULL THEN r1.{SID} IS NOT NULL AND "
                   f"(c.{DOC} IS NULL OR r1.{DOC} = c.{DOC}) ELSE {found2} END")
    else:
        on_page = found2
    unknown = (f"CASE WHEN e.{SID} IS NOT NULL THEN 'search_excluded' ELSE 'unknown_search' END"
               if excluded_sids else "'unknown_search'")
    # reasons that need only the searches; then, with results, "not on the page"
    row_reasons = (f"WHEN {null} THEN 'null_required' WHEN c.{RANK} < 1 THEN 'rank_below_1' "
                   f"WHEN k.{SID} IS NULL THEN {unknown}")
    search_joins = f" LEFT JOIN {_BASE_SEARCHES} k ON c.{SID} = k.{SID}"
    if excluded_sids:
        search_joins += f" LEFT JOIN {_EXCL_SIDS} e ON c.{SID} = e.{SID}"
    by_search = (f"SELECT c.*, CASE {row_reasons} END AS _oe_reason "
                 f"FROM {t.typed} c{search_joins}")
    if has_results:
        classified["clicks"] = (
            f"SELECT c.*, CASE {row_reasons} WHEN NOT ({on_page}) THEN 'not_on_page' END "
            f"AS _oe_reason FROM {t.typed} c{search_joins}{page_joins}")
    else:
        classified["clicks"] = by_search
    sel = ", ".join(f"count(*) FILTER (WHERE _oe_reason = '{r}')" for r in CLICK_REASONS[:4])
    reasons = list(_query(con, t, f"SELECT {sel} FROM ({by_search})")[0])
    not_on_page = 0
    if has_results:
        # Counted over all clicks with a usable rank/doc, whatever their search: the kept
        # results hold only kept searches, so every click of an excluded or unknown search is
        # among them too, and is subtracted. This keeps the searches out of this join.
        off_page = _query(con, t, (
            f"SELECT count(*) FROM {t.typed} c{page_joins} WHERE NOT ({null}) "
            f"AND (c.{RANK} IS NULL OR c.{RANK} >= 1) AND NOT ({on_page})"))[0][0]
        not_on_page = off_page - reasons[2] - reasons[3]
    reasons.append(not_on_page)
    _reason_counts(report, "clicks", CLICK_REASONS, list(reasons))
    by = dict(zip(CLICK_REASONS, reasons, strict=True))

    fill_doc = use_r1 and rank_only > 0
    rank = f"coalesce(c.{RANK}, r2.{RANK})" if use_r2 else f"c.{RANK}"
    doc = f"coalesce(c.{DOC}, r1.{DOC})" if fill_doc else f"c.{DOC}"
    sql = (f"SELECT c.{SID}, {rank} AS {RANK}, {doc} AS {DOC}, c.{qi('ts')}, "
           f"c.{qi('dwell_ms')} FROM {t.typed} c")
    if fill_doc:
        sql += (f" LEFT JOIN {qi('results')} r1 ON c.{SID} = r1.{SID} "
                f"AND c.{RANK} = r1.{RANK}")
    if use_r2:
        sql += f" LEFT JOIN {_DOC_RANK} r2 ON c.{SID} = r2.{SID} AND c.{DOC} = r2.{DOC}"
    if by["search_excluded"] or by["unknown_search"]:
        _create(con, t, "TABLE", _CLK_BAD_SIDS,
                f"SELECT DISTINCT {SID} FROM ({by_search}) "
                "WHERE _oe_reason IN ('search_excluded', 'unknown_search')")
        sql += f" ANTI JOIN {_CLK_BAD_SIDS} b ON c.{SID} = b.{SID}"
    if by["not_on_page"]:
        _create(con, t, "TABLE", _CLK_BAD_KEYS,
                f"SELECT DISTINCT {SID}, {RANK}, {DOC} FROM ({classified['clicks']}) "
                "WHERE _oe_reason = 'not_on_page'")
        sql += (f" ANTI JOIN {_CLK_BAD_KEYS} x ON c.{SID} = x.{SID} "
                f"AND c.{RANK} IS NOT DISTINCT FROM x.{RANK} "
                f"AND c.{DOC} IS NOT DISTINCT FROM x.{DOC}")
    _create(con, t, "VIEW", qi("clicks"),
            _filtered(sql, by, null, f"(c.{RANK} IS NULL OR c.{RANK} >= 1)"))
