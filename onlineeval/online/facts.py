"""Per-search facts: the one place sessions, dwell, satisfaction and reformulation are decided.

:func:`search_facts` creates, in ``logs.con``, a view with ONE ROW PER SEARCH of the clean
``searches`` view (query ``sql/online/search_facts.sql``, whose header is the reference).
Every online metric is a ratio of two sums of its columns (see
:data:`onlineeval.online.definitions.METRICS`), so the A/B code sums the same columns per
randomization unit and divides. Nothing is materialized: the view is one DuckDB plan (two
window passes over each user's event stream, a few hash joins and aggregations) that runs
when it is queried. On DuckDB the windows partition by a 64-bit hash of the user (integer sort keys)
only after :func:`hash_partition_ok` has checked that no two users of the log share a hash; otherwise they partition by the user_id strings. Both give the same numbers.

Rules (exact):

* Event stream: per user, the searches and the clicks that have a ts, ordered by ts; at equal
  ts a search comes before a click, then by search_id, rank and dwell_ms (NULLs last).
* Sessions: the given ``(user_id, session_id)`` pairs when the log has ``session_id``;
  otherwise derived per user: a new session starts when an event (search or click) comes
  MORE than ``session_gap_min`` minutes after the previous event of the user. A gap of exactly
  ``session_gap_min`` minutes stays in the session. A click counts for the session of the
  search it was made on.
* Dwell of a click: ``dwell_ms`` when given, else the time to the user's next event (search
  or click) in the same session; unknown when the click is the last event of its session or
  has no ts.
* A click is satisfied when its dwell >= ``sat_dwell_s``, or when its dwell is unknown and it
  is the last event of its session. A click with neither ts nor dwell is not satisfied.
* A search is reformulated when the next event after it in its session is a search (so no
  click in between) whose query is known and differs from its own known query, and it has no
  click without ts (such a click is taken to come before the next search).
* The first search of a session (by ts, then search_id) carries the session's outcomes.

Columns of the view, in order: every column of ``searches`` (``search_id, user_id, ts,
session_id, query, experiment, variant, n_results`` and any extra source columns), then the
facts :data:`FACT_COLUMNS`, each documented (type and meaning) in the header of
``sql/online/search_facts.sql``, which is read here: the header is their one description.
Those tagged ``summed`` there are :data:`STATISTICS`, the per-search statistics that
``online/metrics`` sums per group and ``ab/unit_sums`` per randomization unit.

:func:`click_facts` makes the same view without sessions: only the facts that need no event
stream (the search and its clicks), from the same definitions, without the windows. The
traffic summaries (top queries, queries over time) and the per-query CTR aggregate it.

Facts that need a column the log lacks (e.g. no ``ts``: sessions, dwell, reformulation,
time to first click) are meaningless in the view; :func:`onlineeval.online.online_metrics`
reports such metrics as NULL (see :func:`onlineeval.online.definitions.missing_requirements`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from onlineeval import engines, queries
from onlineeval.errors import InvalidParameterError, SchemaError
from onlineeval.logs.coerce import as_logs
from onlineeval.logs.mapping import API
from onlineeval.online.grouping import searches_columns

if TYPE_CHECKING:
    from onlineeval.logs import Logs

_QUERY = queries.load("online/search_facts")
#: adds the outcome facts of the attributed events (zeros for a log without events)
_EVENTS = queries.load("online/event_facts")

#: the outcome facts (from events) that come after the click facts, in order
EVENT_FACT_COLUMNS: tuple[str, ...] = tuple(c.name for c in _EVENTS.columns)

#: columns the facts view adds after the searches columns, in order (from the headers)
FACT_COLUMNS: tuple[str, ...] = (*(c.name for c in _QUERY.columns), *EVENT_FACT_COLUMNS)

#: the facts that need no event stream (:func:`click_facts` has only these)
CLICK_FACT_COLUMNS: tuple[str, ...] = tuple(
    c.name for c in _QUERY.columns if "sessions" not in c.tags)

#: the per-search statistics: facts summed per group (online/metrics) and per unit
#: (ab/unit_sums), under their own names; the header tags them ``summed``
STATISTICS: tuple[str, ...] = (*_QUERY.tagged("summed"), *_EVENTS.tagged("summed"))

#: names a searches column must not have (facts columns and the time-bucket helpers)
RESERVED: tuple[str, ...] = (*FACT_COLUMNS, "__hour", "__day", "__week")


def _number(name: str, value: object, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidParameterError(
            f"{name} must be a number; got {value!r} ({type(value).__name__})"
        )
    v = float(value)
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        need = "> 0" if positive else ">= 0"
        raise InvalidParameterError(f"{name} must be a finite number {need}; got {value!r}")
    return v


def _gap_us(gap_min: float) -> int:
    """The session gap in whole microseconds, rounded down: for a difference of timestamps
    d (an integer number of microseconds), ``d > gap`` exactly when ``d > floor(gap)``. A gap
    beyond any possible difference is clamped to the largest BIGINT."""
    return min(math.floor(gap_min * 60.0 * 1000000.0), 2**63 - 1)


def view_name(sat_dwell_s: float, session_gap_min: float) -> str:
    """Name of the facts view for these parameters (one view per parameter pair).

    The numbers are written exactly (``repr`` of the float): a rounded form such as ``:g``
    gave 30 and 30.0000001 the same name, so a name returned earlier could be redefined with
    other parameters.
    """
    return (f"online_search_facts__sat{float(sat_dwell_s)!r}s"
            f"__gap{float(session_gap_min)!r}min")


#: test hook: the key hash is ``hash(key) >> PK_SHIFT``; 0 in the product. Tests set 63, which
#: maps every key to 0 or 1, to force collisions and so the key-column fallback.
PK_SHIFT = 0

#: test hook: None lets online/partition_check decide (the product); True/False force the hash
#: or the key-column partitions (True only to show that without the check numbers go wrong).
FORCE_HASH_PARTITION: bool | None = None


def hash_partition_ok(logs: Logs, key: Sequence[str]) -> bool:
    """Whether ``hash(key) >> PK_SHIFT`` is one-to-one on the clean searches of ``logs``.

    Query ``online/partition_check``: the hash must take as many distinct values as the key.
    Only then may the facts windows partition by the 64-bit hash instead of the key strings;
    a collision would otherwise merge two users' event streams. It runs each time a facts view
    is made (0.01 s per million searches), not once per Logs: loading another log into the
    same connection replaces the views a Logs object reads.
    """
    if not engines.optimisations(logs.con, _QUERY)["hashed"]:
        return False  # DuckDB's 64-bit hash is a DuckDB-only optimisation
    if FORCE_HASH_PARTITION is not None:
        return FORCE_HASH_PARTITION
    q = queries.load("online/partition_check")
    n_keys, n_hashes = logs.con.execute(
        q.render(key=list(key)), q.bind(pk_shift=PK_SHIFT)).fetchall()[0]
    return n_keys == n_hashes


def search_facts(logs: Logs, *, sat_dwell_s: float = 30, session_gap_min: float = 30) -> str:
    """Create the per-search facts view in ``logs.con`` and return its name.

    Parameters
    ----------
    logs
        A log loaded with :func:`onlineeval.load_logs` (the view is made on its
        connection, so a path is refused).
    sat_dwell_s
        Dwell (seconds) from which a click is satisfied; >= 0.
    session_gap_min
        Minutes of inactivity after which a derived session ends (strictly more than this
        gap starts a new session); > 0. Ignored when the log has ``session_id``.

    Returns
    -------
    str
        Name of a temporary view (quote it with :func:`onlineeval.queries.quote_ident`) with
        one row per search and the columns described in this module's docstring. The view is
        lazy: each query over it reads the clean log views again, in one plan.
    """
    logs = as_logs(logs, loaded=True, what="onlineeval.online.search_facts")
    return facts_view(logs, sat_dwell_s=sat_dwell_s, session_gap_min=session_gap_min)[0]


def facts_view(logs: Logs, *, sat_dwell_s: float = 30, session_gap_min: float = 30,
               user_key: bool = False, outcomes: bool = True) -> tuple[str, str]:
    """:func:`search_facts`, optionally with a user key column for counting users.

    With ``user_key``, when sessions are derived and the 64-bit hash of ``user_id`` is
    one-to-one on the log (:func:`hash_partition_ok`), the view starts with a column
    ``_oe_pk`` = that hash, and the returned column name is ``"_oe_pk"``: counting its
    distinct values counts users exactly, and a query that does so never makes user_id ride
    through the sorts. Otherwise the view is :func:`search_facts`' and the name is
    ``"user_id"``.

    Returns
    -------
    tuple[str, str]
        The view name and the column that identifies a user in it.
    """
    name, stream = _stream(logs, sat_dwell_s, session_gap_min)
    derive = bool(stream["derive_sessions"])
    keyed = user_key and bool(stream["hashed"]) and derive
    name += "__keyed" if keyed else ""
    _create(logs, name + "__clicks", extra=["_oe_pk"] if keyed else [], **stream)
    session = ["user_id", "session_no" if derive else "session_id"]
    return (_with_events(logs, name, name + "__clicks", session, outcomes),
            "_oe_pk" if keyed else "user_id")


def satisfied_clicks(logs: Logs, *, sat_dwell_s: float = 30,
                     session_gap_min: float = 30) -> str:
    """Create the view of every click with whether it is satisfied in ``logs.con``; return
    its name.

    One row per click of the clean clicks view whose search is kept: ``search_id, rank,
    satisfied`` (BOOLEAN). ``satisfied`` is the rule of :func:`search_facts` (the same
    query, ``sql/online/search_facts.sql`` with its ``per_click`` switch, and the same
    parameters), so a search's rows with ``satisfied`` true are its ``n_sat_clicks``.
    Raises :class:`~onlineeval.errors.SchemaError` when the log has neither ``clicks.dwell_ms``
    nor ``clicks.ts``: no click could be judged satisfied.
    """
    if not (logs.has("clicks", "dwell_ms") or logs.has("clicks", "ts")):
        raise SchemaError(
            f"satisfied clicks are judged by their dwell, and the clicks of {logs.source} have "
            "neither dwell_ms nor ts; give the clicks one of them (or credit by clicks)")
    name, stream = _stream(logs, sat_dwell_s, session_gap_min)
    _create(logs, name + "__per_click", extra=[], per_click=True, **stream)
    return name + "__per_click"


def _stream(logs: Logs, sat_dwell_s: float, session_gap_min: float) -> tuple[str, dict]:
    """The base view name and the settings of the event stream (search_facts with sessions)
    for these parameters, checked: the searches columns, the stream key and partition, and
    the query's parameters."""
    sat = _number("sat_dwell_s", sat_dwell_s, positive=False)
    gap = _number("session_gap_min", session_gap_min, positive=True)
    available = _checked_columns(logs)
    derive = not logs.has("searches", "session_id")
    key = ["user_id"] if derive else ["user_id", "session_id"]
    hashed = hash_partition_ok(logs, key)
    return view_name(sat, gap), dict(
        available=available, key=key, part=["_oe_pk"] if hashed else key,
        sessions=True, hashed=hashed, gap_us=_gap_us(gap), sat_dwell_ms=sat * 1000.0,
        derive_sessions=derive)


def _with_events(logs: Logs, name: str, facts: str, session: list[str],
                 outcomes: bool = True) -> str:
    """The view ``name``: the click facts ``facts`` with the outcome facts of the attributed
    events (online/event_facts); its name carries the attribution settings when the log has
    events, since another window or type gives other facts. ``outcomes`` false: the caller
    reads no outcome column, so the events are neither attributed (the attribution costs a
    join of every event with its user's searches) nor reported (a warning about events would
    be noise beside a click metric); the outcome columns of that view are 0 and its name
    says so."""
    attribution: list[str] = []
    events = bool(getattr(logs, "has_events", False))
    if events and not outcomes:
        events = False
        name += "__no_outcomes"
    if events:
        from onlineeval.online.attribution import attribution_view, warn_events

        view = attribution_view(logs)
        warn_events(logs, view, stacklevel=5)
        attribution = [view]
        name += view.removeprefix("online_attribution")
    sessions = logs.has("searches", "session_id") or logs.has("searches", "ts")
    sql = _EVENTS.render(facts=[facts], attribution=attribution, session=session,
                         events=events, sessions=sessions)
    queries.create(logs.con, name, sql)
    return name


def click_facts(logs: Logs) -> str:
    """Create the per-search facts view WITHOUT sessions in ``logs.con``; return its name.

    One row per search: every searches column, then :data:`CLICK_FACT_COLUMNS` (has_click,
    n_clicks, ranks, first click, results, query), with the definitions of
    :func:`search_facts`, from one aggregate of the clicks joined to the searches: no event
    stream, no window, so a summary that needs no session pays for none.
    """
    available = _checked_columns(logs)
    key = ["user_id"]
    _create(logs, CLICK_VIEW, available=available, key=key, part=key, extra=[], sessions=False,
            hashed=False, gap_us=0, sat_dwell_ms=0.0, derive_sessions=False)
    return CLICK_VIEW


#: name of the view :func:`click_facts` makes (it has no parameters)
CLICK_VIEW = "online_click_facts"


def _checked_columns(logs: Logs) -> list[str]:
    """The searches columns, after checking that none has a name the facts use."""
    available = searches_columns(logs)
    clash = sorted(set(available) & set(RESERVED))
    if clash:
        spelling = getattr(logs, "spelling", API)
        # a mapping renames to canonical names only: such a column can only be left out
        fix = spelling.fix("searches", clash[0], None)
        raise SchemaError(
            f"the searches table of {logs.source} has column(s) {', '.join(clash)}, names the "
            f"online metrics compute themselves; leave them out when loading, e.g. "
            f"{fix if spelling.cli else f'load_logs(..., {fix})'}"
        )
    return available


def _create(logs: Logs, name: str, *, available: list[str], key: list[str], part: list[str],
            extra: list[str], sessions: bool, hashed: bool, per_click: bool = False,
            **params: object) -> None:
    # search_id, ts, query and the key columns are in the stream anyway; the other searches
    # columns ride on the search rows (DuckDB drops those a query over the view does not use)
    fixed = {"search_id", "ts", "query", *key}
    carry = [] if per_click else [c for c in available if c not in fixed]
    sql = _QUERY.render(key=key, part=part, carry=carry, out=available, extra=extra,
                        sessions=sessions, hashed=hashed, per_click=per_click,
                        materialize=engines.optimisations(logs.con, _QUERY)["materialize"])
    queries.create(logs.con, name, sql,
                   params=_QUERY.bind(sql, pk_shift=PK_SHIFT, **params))
