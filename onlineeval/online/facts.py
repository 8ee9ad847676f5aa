"""Per-search facts: the one place sessions, dwell, satisfaction and reformulation are decided.

:func:`search_facts` creates, in ``logs.con``, a view with ONE ROW PER SEARCH of the clean
``searches`` view (query ``sql/online/search_facts.sql``, whose header is the reference).
Every online metric is a ratio of two sums of its columns (see
:data:`onlineeval.online.definitions.METRICS`), so the A/B code sums the same columns per
randomization unit and divides. Nothing is materialized: the view is one DuckDB plan (two
window passes over each user's event stream, a few hash joins and aggregations) that runs
when it is queried.

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
session_id, query, experiment, variant, n_results`` and any extra source columns), then:

``session_no`` BIGINT
    derived sessions: the number of sessions the user's events have started up to this
    search (1-based; a session made only of late clicks also counts, so numbers can skip);
    NULL when sessions are given. ``(user_id, session_id, session_no)`` identifies a session.
``session_first`` INTEGER
    1 on the first search of its session, else 0. ``sum`` = sessions.
``has_click`` INTEGER
    1 when the search has at least one click.
``n_clicks`` BIGINT
    clicks on the search.
``n_sat_clicks`` BIGINT
    satisfied clicks on the search.
``min_click_rank`` INTEGER
    lowest clicked rank (NULL without a ranked click).
``rr`` DOUBLE
    ``1 / min_click_rank``; 0 without a click; NULL when clicked but no rank is known.
``known_rr`` INTEGER
    1 when ``rr`` is not NULL.
``first_click_ts`` TIMESTAMP
    earliest click ts (NULL without a timed click).
``ttfc_s`` DOUBLE
    ``first_click_ts - ts`` in seconds (NULL without a timed click or search ts).
``has_ttfc`` INTEGER
    1 when ``ttfc_s`` is not NULL.
``known_n_results`` INTEGER
    1 when ``n_results`` is not NULL.
``nonzero`` INTEGER
    1 when ``n_results > 0``.
``zero_result`` INTEGER
    1 when ``n_results = 0``.
``abandoned`` INTEGER
    1 when ``n_results > 0`` and no click.
``known_query`` INTEGER
    1 when ``query`` is not NULL.
``reformulated`` INTEGER
    1 when the search is reformulated (rule above).
``session_has_click`` INTEGER
    on session_first rows: 1 when the session has a click; 0 on other rows.
``session_success`` INTEGER
    on session_first rows: 1 when the session has a satisfied click; 0 on other rows.
``session_abandoned`` INTEGER
    on session_first rows: 1 when the session has no click; 0 on other rows.

Facts that need a column the log lacks (e.g. no ``ts``: sessions, dwell, reformulation,
time to first click) are meaningless in the view; :func:`onlineeval.online.online_metrics`
reports such metrics as NULL (see :func:`onlineeval.online.definitions.missing_requirements`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from onlineeval import queries
from onlineeval.errors import InvalidParameterError, SchemaError

if TYPE_CHECKING:
    from onlineeval.logs import Logs

#: columns the facts query adds after the searches columns, in order
FACT_COLUMNS: tuple[str, ...] = (
    "session_no", "session_first", "has_click", "n_clicks", "n_sat_clicks", "min_click_rank",
    "rr", "known_rr", "first_click_ts", "ttfc_s", "has_ttfc", "known_n_results", "nonzero",
    "zero_result", "abandoned", "known_query", "reformulated", "session_has_click",
    "session_success", "session_abandoned",
)

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


def view_name(sat_dwell_s: float, session_gap_min: float) -> str:
    """Name of the facts view for these parameters (one view per parameter pair)."""
    return f"online_search_facts__sat{sat_dwell_s:g}s__gap{session_gap_min:g}min"


def search_facts(logs: Logs, *, sat_dwell_s: float = 30, session_gap_min: float = 30) -> str:
    """Create the per-search facts view in ``logs.con`` and return its name.

    Parameters
    ----------
    logs
        A loaded log (:func:`onlineeval.load_logs`).
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
    sat = _number("sat_dwell_s", sat_dwell_s, positive=False)
    gap = _number("session_gap_min", session_gap_min, positive=True)
    clash = sorted(set(logs.con.table("searches").columns) & set(RESERVED))
    if clash:
        raise SchemaError(
            f"the searches table of {logs.source} has column(s) {', '.join(clash)}, names the "
            f"online metrics compute themselves; rename them when loading, e.g. "
            f"load_logs(..., columns={{'searches': {{{clash[0]!r}: 'src_{clash[0]}'}}}})"
        )
    derive = not logs.has("searches", "session_id")
    q = queries.load("online/search_facts")
    rel = logs.con.sql(
        q.render(part=["user_id"] if derive else ["user_id", "session_id"]),
        params=q.bind(gap_s=gap * 60.0, sat_dwell_ms=sat * 1000.0, derive_sessions=derive),
    )
    name = view_name(sat, gap)
    rel.create_view(name, replace=True)
    return name
