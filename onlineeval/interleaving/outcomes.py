"""Interleaving outcomes from click logs: the SQL of ``sql/interleaving/`` run on loaded logs.

``page_outcomes`` defines the per-page credit and outcome (``interleaving/page_outcomes``) as
the temp view ``interleaving_page_outcomes`` in the log's connection; ``user_stats`` and
``per_query`` aggregate it, each streaming the log through it (nothing per page is stored, so
a memory limit holds on logs of any size). Large logs stay in DuckDB: only per-user sufficient statistics
(one row per user and ranker pair) come back to Python, and for the per-query readout one row
per (query, user) as codes and counts (:func:`query_user_stats`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from onlineeval import engines
from onlineeval.db import fetch_df, memory_limit_mb, release_memory, threads
from onlineeval.errors import InputError, InvalidParameterError, SchemaError
from onlineeval.progress import Elapsed
from onlineeval.queries import create, drop_table, load, set_view_parameters, view_parameters
from onlineeval.window import bounds

PAGE_TABLE = "interleaving_page_outcomes"
#: the teams of the experiments the page outcomes read out (DuckDB, switch bucketed)
TEAMS_TABLE = "interleaving_page_outcome_teams"
#: ... and as a view (another name: a log read both ways keeps one of each)
TEAMS_VIEW = "interleaving_page_outcome_teams_view"
#: DuckDB memory (bytes) that reading the page outcomes per user takes per row of the view
#: (pages x pairs), and (MiB) per DuckDB thread whatever the rows: the smallest limits that
#: completed on generated logs (bench/README.md, memory section: about 230 bytes a row
#: beyond 37 MiB a thread, DuckDB 2.0), the rows with a margin of 2. A bucket holds the
#: pages of 1/K of the users, so both its joins (per page) and its sums (per user, at most
#: one a row) shrink with K
BUCKET_BYTES_PER_ROW = 500
BUCKET_THREAD_MB = 40
# extra grouping columns the readout accepts (all are columns of the page-outcome table)
GROUPINGS: tuple[str, ...] = ("variant", "day")


def _has(logs: Any, table: str, column: str) -> bool:
    has = getattr(logs, "has", None)
    if callable(has):
        return bool(has(table, column))
    try:
        return column in logs.con.table(table).columns
    except duckdb.CatalogException:
        return False


def check_by(logs: Any, by: Sequence[str]) -> list[str]:
    """The grouping columns, checked: only variant and day, and day needs searches.ts."""
    if isinstance(by, str):
        by = [b.strip() for b in by.split(",") if b.strip()]
    out = list(dict.fromkeys(by))
    bad = [b for b in out if b not in GROUPINGS]
    if bad:
        raise InvalidParameterError(
            f"interleaving can be broken down by {', '.join(GROUPINGS)}; got {', '.join(bad)}"
        )
    if "day" in out and not _has(logs, "searches", "ts"):
        raise SchemaError(
            "a breakdown by day needs searches.ts, which this log does not have; "
            "drop 'day' from the breakdown"
        )
    return out


#: what a team is credited for, besides an event type of the log: its clicked results, or
#: its results with a satisfied click (the rule of onlineeval.online.search_facts)
CREDITS: tuple[str, ...] = ("clicks", "satisfied")


def _credit_view(logs: Any, credit: Any, sat_dwell_s: float = 30,
                 session_gap_min: float = 30) -> list[str]:
    """The view to credit by (empty for clicks; the per-click satisfaction for satisfied;
    the attribution of an event type), after checking ``credit``."""
    if credit == "clicks":
        return []
    if credit == "satisfied":
        from onlineeval.online.facts import satisfied_clicks

        return [satisfied_clicks(logs, sat_dwell_s=sat_dwell_s,
                                 session_gap_min=session_gap_min)]
    if not isinstance(credit, str) or not credit:
        raise InvalidParameterError(
            "credit must be 'clicks', 'satisfied' or an event type of the log's events; got "
            f"{credit!r}")
    if not getattr(logs, "has_events", False):
        raise InputError(
            f"credit={credit!r} credits by events, but the log {logs.source} has no events "
            "table; credit by 'clicks' or 'satisfied', or give events (docs/conversions.md)")
    from onlineeval.online.attribution import attribution_view, warn_events

    typed = logs.with_events(event_type=credit)
    view = attribution_view(typed)
    warn_events(typed, view, stacklevel=5)
    return [view]


@dataclass(frozen=True)
class PageCounts:
    """What :func:`page_outcomes` defined: the view's rows and the pages it leaves out."""

    #: rows of the page-outcomes view (one per page in the window and pair of teams)
    rows: int
    #: pages in the window whose experiment has a single team there (left out, warned)
    lonely: int = 0
    #: interleaved pages before ``start`` / at or after ``end`` (left out)
    before_window: int = 0
    after_window: int = 0
    #: earliest and latest ts of the pages read out (None without ts)
    first_page: pd.Timestamp | None = None
    last_page: pd.Timestamp | None = None


def page_outcomes(logs: Any, experiment: str | None = None, *, start: Any = None,
                  end: Any = None, credit: str = "clicks", sat_dwell_s: float = 30,
                  session_gap_min: float = 30, hourly: bool = False) -> PageCounts:
    """Create the temp view ``interleaving_page_outcomes`` in ``logs.con``; return its row
    count, the pages it leaves out and the first and last page it reads out.

    Only pages with ``start <= ts < end`` are read out (None: unbounded; timestamps as for
    :func:`onlineeval.window.timestamp`). Raises :class:`~onlineeval.errors.InputError` when
    the log has no interleaved page (no ``results.team``), or when ``experiment`` names no
    experiment with interleaved pages in the window. Warns with their count when some
    interleaved pages are left out because their experiment's pages name a single team
    (nothing to compare it with).

    ``credit`` is ``"clicks"`` (a team is credited for its clicked results), ``"satisfied"``
    (for its results with a satisfied click: :func:`onlineeval.online.facts.satisfied_clicks`
    with ``sat_dwell_s`` and ``session_gap_min``; switch ``satisfied``) or an event type of
    the log's events table (for its results that led to an attributed event of that type:
    ``sql/interleaving/page_outcomes.sql``, switch ``events``). ``hourly``: the view's
    ``day`` is each page's hour (its ts truncated to the hour) instead of its date.
    """
    con = logs.con
    start, end = bounds(start, end)
    if (start is not None or end is not None) and not _has(logs, "searches", "ts"):
        raise SchemaError(
            "a window (start/end) needs searches.ts, which this log does not have; drop "
            "--start/--end"
        )
    if not _has(logs, "results", "team"):
        raise SchemaError(
            "interleaving needs results.team (the ranker that placed each result); this log "
            "has no team column in results. Give the results table a team column, or map one "
            "with columns={'results': {'<your column>': 'team'}}"
        )
    attribution = _credit_view(logs, credit, sat_dwell_s, session_gap_min)
    satisfied = credit == "satisfied"
    # the view's rows and the pages it leaves out, without crediting clicks (the query's
    # header says why the view itself is not counted)
    counts = load("interleaving/page_counts")
    # what the load's queries freed is still in the process: give it back before DuckDB
    # fills its limit again, or the two add up (5M searches at 500MB: RSS 460 MiB after the
    # load with nothing held, and 757 MiB at the peak of the counts)
    release_memory(con)
    n, lonely, before, after, first, last = con.execute(
        counts.render(), counts.bind(experiment=experiment, win_start=start, win_end=end)
    ).fetchall()[0]
    n, lonely = int(n or 0), int(lonely or 0)
    q = load("interleaving/page_outcomes")
    # A view, not a table: the page outcomes have one row per page and team pair, and a
    # materialized copy of a large log does not fit a memory limit that the streamed query
    # respects (DuckDB could not spill it: 10M pages failed at 3 GB). The view keeps the
    # bound parameters; $bucket stays NULL (every page) except while user_stats reads it.
    switches = engines.optimisations(con, q)
    # the teams of every page's experiment (sql/interleaving/teams.sql): a view, or with
    # bucketed a table read once for all buckets. A log that fits in one bucket is read
    # without the bucket's join of the searches
    teams = load("interleaving/teams")
    buckets = _buckets(con, n)
    switches["bucketed"] = bucketed = bool(switches["bucketed"]) and buckets > 1
    teams_table = [create(con, TEAMS_TABLE if bucketed else TEAMS_VIEW, teams.render(),
                          table=bucketed,
                          params=teams.bind(experiment=experiment, win_start=start,
                                            win_end=end))]
    sql = q.render(**switches, events=bool(attribution) and not satisfied,
                   satisfied=satisfied, attribution=attribution, hourly=hourly,
                   teams_table=teams_table)
    create(con, PAGE_TABLE, sql,
           params=q.bind(sql, experiment=experiment, win_start=start, win_end=end,
                         bucket=None, buckets=buckets))
    if engines.is_duckdb(con):
        # what user_stats reads the view by, bound even when the text does not use it: a
        # count left from an earlier bucketed view of this connection would read it K times
        set_view_parameters(con, PAGE_TABLE, bucket=None, buckets=buckets)
    if n == 0:
        known = [e for (e,) in con.execute(load("interleaving/experiments").render()).fetchall()]
        where = ""
        if before or after:
            where = (f" in the window ({int(before or 0):,} interleaved pages before its start, "
                     f"{int(after or 0):,} at or after its end)")
        if experiment is not None:
            raise InputError(
                f"experiment {experiment!r} has no interleaved pages with two or more "
                f"teams{where}; experiments with interleaved pages: "
                f"{', '.join(map(str, known)) or 'none'}"
            )
        raise InputError(
            f"the log has no interleaved pages with two or more teams{where} (an interleaved "
            "page is a search whose results carry a team; a comparison needs two team names "
            "in one experiment)"
        )
    if lonely:  # (when n == 0 the error above says it)
        # a page whose experiment has a single team name cannot be compared with anything
        warnings.warn(
            f"{lonely:,} interleaved pages belong to experiments whose pages name only one team "
            "and were left out of the readout (check the team names and the experiment column)",
            stacklevel=3,
        )
    return PageCounts(rows=n, lonely=lonely, before_window=int(before or 0),
                      after_window=int(after or 0),
                      first_page=None if first is None else pd.Timestamp(first),
                      last_page=None if last is None else pd.Timestamp(last))


def bucket_count(rows: int, limit_mb: float, threads: int) -> int:
    """How many buckets of users ``rows`` rows of the page-outcomes view are read in under a
    DuckDB memory limit of ``limit_mb`` MiB on ``threads`` threads: enough that one bucket's
    rows fit what the threads leave of the limit (at least a quarter of it: a limit below
    the threads' own needs is DuckDB's to refuse, with a bucket as small as it allows)."""
    room = max(limit_mb - threads * BUCKET_THREAD_MB, limit_mb / 4)
    return max(1, math.ceil(rows * BUCKET_BYTES_PER_ROW / (room * 2**20)))


def _buckets(con: Any, rows: int) -> int:
    """How many buckets DuckDB reads the page outcomes in (:func:`bucket_count`; 1 on other
    engines and without a memory limit)."""
    if not engines.is_duckdb(con):
        return 1
    limit = memory_limit_mb(con)
    if limit is None:
        return 1
    return bucket_count(rows, limit, threads(con))


def user_stats(logs: Any, by: Sequence[str] = ()) -> pd.DataFrame:
    """Per-user sufficient statistics (``interleaving/user_stats``) of the page outcomes.

    ``by`` may include ``query`` besides variant and day (used for the per-query variant).
    Call :func:`page_outcomes` first. When the view is too large for DuckDB's memory limit
    (:func:`_buckets`), the pages are read in disjoint buckets of users (``bucketed`` in
    ``sql/interleaving/page_outcomes.sql``) and the buckets' rows put together
    (``interleaving/user_stats_parts``): the same rows, as each user's pages are all in one
    bucket.
    """
    con = logs.con
    q = load("interleaving/user_stats")
    sql = q.render(by=list(by))
    # one row per user (and query): fetched once DuckDB has let go of its working memory,
    # in the query's order (the bootstrap numbers users by first appearance)
    order = ["experiment", *by, "team_a", "team_b", "user_id"]
    name = f"{PAGE_TABLE}_users"
    with Elapsed("reading out interleaved pages"), _in_buckets(con, sql, {}, name) as parts:
        if not parts:
            return fetch_df(con, sql, q.bind(), name=name, order=order)
        total = load("interleaving/user_stats_parts")
        return fetch_df(con, total.render(parts=parts), total.bind(), name=name, order=order)


@dataclass(frozen=True)
class QueryUserStats:
    """The per-(query, user) statistics of the page outcomes, kept in DuckDB (the temporary
    table ``codes``, ``interleaving/query_user_codes``) while :func:`query_user_stats` runs:
    the comparisons with their counts, and per comparison the rows as numbers."""

    con: Any
    codes: str
    by: tuple[str, ...]
    #: one row per comparison: experiment, by, team_a, team_b, its number ``comparison``,
    #: its ``rows`` and the sums of the counts (``interleaving/query_user_comparisons``)
    comparisons: pd.DataFrame

    def rows(self, comparison: int) -> dict[str, np.ndarray]:
        """The comparison's rows, ordered by query and user code: ``query_code``,
        ``user_code`` (int32) and ``wins_a``, ``wins_b``, ``ties`` (float64)."""
        q = load("interleaving/query_user_rows")
        frame = fetch_df(self.con, q.render(codes=[self.codes]),
                         q.bind(comparison=int(comparison)), name=f"{self.codes}_rows",
                         order=["query_code", "user_code"])
        return {c: frame[c].to_numpy() for c in frame.columns}

    def user_id(self, comparison: int, user_code: int) -> Any:
        """The user_id of the user coded ``user_code`` in ``comparison``."""
        q = load("interleaving/query_user_id")
        row = self.con.execute(q.render(codes=[self.codes]), q.bind(
            comparison=int(comparison), user_code=int(user_code))).fetchone()
        return None if row is None else row[0]


@contextmanager
def query_user_stats(logs: Any, by: Sequence[str] = ()) -> Iterator[QueryUserStats]:
    """:func:`user_stats` by ``by`` and query, kept in DuckDB with integer codes for the
    queries and users (:class:`QueryUserStats`) while the block runs, then dropped.

    The per-query readout resamples users and adds up per query, so it reads one row per
    (query, user): millions on a large log. Fetched with their five strings they took GBs
    in pandas (4.5M rows: 1.9 GB at 5M searches); as codes and counts they take 28 bytes a
    row, fetched one comparison at a time. Call :func:`page_outcomes` first.
    """
    con = logs.con
    q = load("interleaving/user_stats")
    sql = q.render(by=[*by, "query"])
    stats, codes = f"{PAGE_TABLE}_query_users", f"{PAGE_TABLE}_query_codes"
    try:
        with Elapsed("reading out interleaved pages"):
            with _in_buckets(con, sql, {}, stats) as parts:
                if parts:
                    total = load("interleaving/user_stats_parts")
                    sql = total.render(parts=parts)
                release_memory(con)
                create(con, stats, sql, table=True)
            c = load("interleaving/query_user_codes")
            release_memory(con)
            create(con, codes, c.render(stats=[stats], by=list(by)), table=True)
            drop_table(con, stats)
            s = load("interleaving/query_user_comparisons")
            comparisons = fetch_df(con, s.render(codes=[codes], by=list(by)), s.bind(),
                                   name=f"{codes}_comparisons", order=["comparison"])
        yield QueryUserStats(con, codes, tuple(by), comparisons)
    finally:
        drop_table(con, stats)
        drop_table(con, codes)


def _bound_buckets(con: Any) -> int:
    """The buckets the page-outcomes view of ``con`` is read in (1 on other engines)."""
    if not engines.is_duckdb(con):
        return 1
    return int(view_parameters(con, PAGE_TABLE, ["buckets"])["buckets"] or 1)


@contextmanager
def _in_buckets(con: Any, sql: str, params: dict[str, Any], name: str) -> Iterator[list[str]]:
    """Store the rendered query ``sql`` over each bucket of the page-outcomes view as the
    tables ``name_0``, ``name_1``, ...; yield their names (none when the view is read in one
    bucket: read it as usual), and drop them afterwards."""
    buckets = _bound_buckets(con)
    parts = [f"{name}_{b}" for b in range(buckets)] if buckets > 1 else []
    try:
        for b, part in enumerate(parts):
            set_view_parameters(con, PAGE_TABLE, bucket=b)
            # each bucket starts from what DuckDB holds (the earlier buckets' rows), not
            # from what the previous ones freed and the allocator kept
            release_memory(con)
            create(con, part, sql, table=True, params=params)
        if parts:
            set_view_parameters(con, PAGE_TABLE, bucket=None)
        yield parts
    finally:
        if parts:
            set_view_parameters(con, PAGE_TABLE, bucket=None)
        for part in parts:
            drop_table(con, part)


def per_query(logs: Any, team: str, other: str, query: str = "query") -> pd.DataFrame:
    """Per query value (of the searches column ``query``) of the comparison of ``team`` with
    ``other``: ``experiment, team, other_team, qid, pages, wins_t, wins_o, ties``
    (``agreement/per_query_interleaving``) and ``delta_q``, the preference
    for ``team`` on the query's pages (:func:`onlineeval.interleaving.significance.preference`;
    NaN without a decided page, and on the row with ``qid`` null, which counts the pages
    without a query value). Call :func:`page_outcomes` first.
    """
    from onlineeval.interleaving.significance import preference

    q = load("agreement/per_query_interleaving")
    sql, params = q.render(query=[query]), q.bind(team=team, other=other)
    # a query's pages are those of many users: the buckets' counts are added per query
    with _in_buckets(logs.con, sql, params, f"{PAGE_TABLE}_queries") as parts:
        if parts:
            total = load("agreement/per_query_interleaving_parts")
            sql, params = total.render(parts=parts), total.bind()
        df = logs.con.execute(sql, params).df()
    delta = preference(df["wins_t"], df["wins_o"], df["ties"])
    df["delta_q"] = pd.Series(delta, index=df.index).where(df["qid"].notna())
    return df
