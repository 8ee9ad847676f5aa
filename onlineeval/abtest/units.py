"""Per-randomization-unit rows of an experiment, from the logs through ``sql/ab/unit_sums``.

Which searches count (the header of ``sql/ab/unit_sums.sql`` is the reference):

- an **exposure** is a search of the experiment carrying a variant, inside the analysis
  window ``start <= ts < end`` (:class:`Window`); a unit's outcome is its exposures, from its
  first exposure on;
- the unit's searches before its first exposure are its **pre-period**: the CUPED covariate
  (with ``cuped``), never outcome. With a window start, every search before it is pre-period.

Only per-unit rows leave DuckDB. This module turns them into one numeric array per variant
(rows = units, columns = :data:`~onlineeval.abtest.metrics.UNIT_SUMS`, ``units`` and, with
CUPED, ``pre_<sum>`` and ``has_pre``) and counts every search it leaves out of the outcome
(:data:`EXCLUDED` names the reasons), so the counts and the analysed searches add up to the
log's searches. Units seen in more than one variant (``multi_variant_units``, with their
exposures) have a broken assignment and belong to no arm.

Within each arm the rows are in unit order, so results (the seeded bootstrap included) do
not depend on the order DuckDB happens to return groups in.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from onlineeval import engines, queries
from onlineeval.abtest.metrics import UNIT_SUMS
from onlineeval.db import fetch_arrays, fetch_df, release_memory
from onlineeval.errors import InputError, InvalidParameterError, SchemaError, UnknownNameError
from onlineeval.logs import variants
from onlineeval.queries import load
from onlineeval.stats.moments import Moments
from onlineeval.window import bounds, describe, timestamp

PrePeriod = tuple[pd.Timestamp | None, pd.Timestamp, pd.Timestamp]

#: searches left out of the outcome, by reason (the periods of sql/ab/unit_sums), in the
#: order they are reported; ``multi_variant_units`` counts units, the rest searches
EXCLUDED: dict[str, str] = {
    "null_unit_searches": "the randomization unit column is NULL",
    "unexposed_unit_searches": "their unit has no exposure (in the window)",
    "pre_exposure_searches": "before their unit's first exposure (the CUPED pre-period)",
    "before_pre_period_searches": "before their unit's first exposure and the pre-period "
                                  "start",
    "after_window_searches": "at or after the window end",
    "outside_experiment_searches": "after their unit's first exposure, of another "
                                   "experiment or none",
    "no_variant_searches": "after their unit's first exposure, of the experiment without a "
                           "variant",
    "multi_variant_units": "units with exposures in more than one variant",
    "multi_variant_searches": "the exposures of those units",
}
_PERIOD_KEYS = {
    "null_unit": "null_unit_searches", "unexposed": "unexposed_unit_searches",
    "pre": "pre_exposure_searches", "before_pre_period": "before_pre_period_searches",
    "after_window": "after_window_searches", "outside_experiment": "outside_experiment_searches",
    "no_variant": "no_variant_searches",
}


@dataclass(frozen=True)
class Window:
    """The analysis window (``start <= ts < end``; None: unbounded), the CUPED pre-period's
    lower bound and whether CUPED is on. Timestamps are naive, in the log's time (UTC)."""

    start: pd.Timestamp | None = None
    end: pd.Timestamp | None = None
    pre_start: pd.Timestamp | None = None
    cuped: bool = False

    @property
    def needs_ts(self) -> bool:
        return self.cuped or self.start is not None or self.end is not None


@dataclass
class UnitData:
    """Per-unit arrays by variant, the column names, what was left out, and the window."""

    arms: dict[str, np.ndarray]
    columns: list[str]
    known_variants: list[str]
    excluded: dict[str, int] = field(default_factory=dict)
    #: the experiment analysed (None: the log has no experiment values)
    experiment: str | None = None
    #: the window used: start, end (as given, or None), first_exposure and last_exposure
    #: (of the analysed units), pre_period_start, cuped
    window: dict[str, Any] = field(default_factory=dict)
    #: the unit values of each arm's rows, in row order
    ids: dict[str, np.ndarray] = field(default_factory=dict)

    def col(self, name: str) -> int:
        return self.columns.index(name)


def parse_pre_period(value: Any) -> PrePeriod | None:
    """``(pre_start, pre_end, experiment_start)`` from the ``pre_period`` argument.

    Accepted: ``None`` (no CUPED); ``(START, END)`` or ``"START,END"`` — the pre-period is
    ``START <= ts < END`` and the experiment period ``ts >= END``; a single timestamp (or
    ``"START"``) — the experiment start: pre-period ``ts < START``, experiment ``ts >= START``.
    """
    if value is None:
        return None
    if isinstance(value, str):
        parts = [p for p in (s.strip() for s in value.split(",")) if p]
    elif isinstance(value, tuple | list):
        parts = list(value)
    elif isinstance(value, datetime | pd.Timestamp | np.datetime64):
        parts = [value]
    else:
        raise InvalidParameterError(
            "pre_period must be (START, END), 'START,END' or an experiment start timestamp; "
            f"got {value!r}"
        )
    if len(parts) == 1:
        start = timestamp(parts[0], "the experiment start")
        return None, start, start
    if len(parts) != 2:
        raise InvalidParameterError(
            f"pre_period must have a start and an end (START,END); got {value!r}"
        )
    start = timestamp(parts[0], "the pre-period start")
    end = timestamp(parts[1], "the pre-period end")
    if not start < end:
        raise InvalidParameterError(
            f"the pre-period start must be before its end; got {start} .. {end}"
        )
    return start, end, end


def analysis_window(
    start: Any = None, end: Any = None, pre_period: PrePeriod | None = None,
    cuped: bool | None = None,
) -> Window:
    """The :class:`Window` of ``start``/``end`` (timestamps; one with a zone is converted to
    UTC) and a parsed ``pre_period`` (:func:`parse_pre_period`), checked.

    A ``pre_period`` turns CUPED on and its end is where the experiment starts, so it sets
    the window start (a different ``start`` as well is an error). ``cuped`` defaults to
    whether a pre-period is given.
    """
    lo, hi = bounds(start, end)
    pre_start = None
    if pre_period is not None:
        pre_start, exp_start = pre_period[0], pre_period[2]
        if lo is not None and lo != exp_start:
            raise InvalidParameterError(
                f"the pre-period ends where the experiment starts ({exp_start}), but start is "
                f"{lo}; give one of them (or the same timestamp)"
            )
        lo = exp_start
        if cuped is False:
            raise InvalidParameterError("a pre-period is for CUPED; drop it or cuped=False")
        cuped = True
    if not isinstance(cuped, bool | None):
        raise InvalidParameterError(f"cuped must be True or False; got {cuped!r}")
    if lo is not None and hi is not None and not lo < hi:
        raise InvalidParameterError(
            f"the window end {hi} must come after the experiment start {lo}"
        )
    return Window(start=lo, end=hi, pre_start=pre_start, cuped=bool(cuped))


def load_units(
    logs: Any, unit: str = "user_id", pre_period: PrePeriod | None = None,
    experiment: str | None = None, *, start: Any = None, end: Any = None,
    cuped: bool | None = None, outcomes: bool = True, sums: list[str] | None = None,
) -> UnitData:
    """Run the unit aggregation and return per-variant arrays (see the module docstring).

    ``pre_period`` is a parsed one (:func:`parse_pre_period`); ``start``, ``end`` and
    ``cuped`` as for :func:`analysis_window`. With ``sums`` (names of
    :data:`~onlineeval.abtest.metrics.UNIT_SUMS`) the arms hold only those columns (and
    ``units``; with CUPED their ``pre_`` columns and ``has_pre``) and ``ids`` is empty: the
    per-unit rows stay in DuckDB, which counts what is left out, and each arm's columns come
    over as float64 arrays (:func:`lean_units`), the same numbers as the whole rows give.
    """
    window = analysis_window(start, end, pre_period, cuped)
    sql, params, known = unit_sums_query(logs, unit, experiment, window=window,
                                         outcomes=outcomes)
    if sums is not None:
        data = lean_units(logs.con, sql, params, known, window.cuped, sums)
    else:
        # one row per unit: fetched once DuckDB has let go of the aggregation's memory
        data = unit_arrays(fetch_df(logs.con, sql, params, name="_oe_unit_sums"), known,
                           window.cuped)
    data.experiment = params["experiment"]
    # the arrays know the first and last exposure analysed; the bounds come from the window
    data.window = {"start": window.start, "end": window.end, **data.window,
                   "pre_period_start": window.pre_start, "cuped": window.cuped}
    return data


def lean_units(con: Any, unit_sql: str, params: dict[str, Any], known: list[str],
               cuped: bool, sums: list[str]) -> UnitData:
    """The :class:`UnitData` of :func:`unit_arrays` with only the columns ``sums`` (in
    :data:`~onlineeval.abtest.metrics.UNIT_SUMS` order) and no ``ids``, without fetching the
    per-unit rows: they are stored in DuckDB (``_oe_lean_unit_rows``), the exclusions
    counted there (:func:`excluded_of_view`, warned about), and each arm's columns fetched
    in unit order (``sql/ab/arm_rows.sql``). A 500k-unit readout fetched a frame of every
    sum with the unit values and copied it into arrays, the peak of ``abtest`` at 5M
    searches; an arm's chosen columns are a fraction of it."""
    unknown = [c for c in sums if c not in UNIT_SUMS]
    if unknown or not sums:
        raise InvalidParameterError(f"sums must name per-unit sums of {list(UNIT_SUMS)}; "
                                    f"got {sums!r}")
    chosen = [c for c in UNIT_SUMS if c in sums]
    rows = queries.create(con, "_oe_lean_unit_rows", unit_sql, params=params, table=True)
    try:
        # the warnings point where unit_arrays's do: at load_units's caller
        excluded = excluded_of_view(con, rows, stacklevel=5)
        exposure = queries.create(con, "_oe_lean_exposure_rows",
                                  load("ab/exposure_rows").render(unit_rows=[rows]))
        release_memory(con)
        columns = [*chosen, "units"]
        if cuped:
            columns += [f"pre_{c}" for c in chosen] + ["has_pre"]
        q = load("ab/arm_rows")
        sql = q.render(exposure_rows=[exposure], unit_rows=[rows], sums=chosen, cuped=cuped,
                       pre=[(c, f"pre_{c}") for c in chosen])
        arms: dict[str, np.ndarray] = {}
        for variant in sorted(known):
            got = fetch_arrays(con, sql, q.bind(sql, variant=variant))
            n = len(got[chosen[0]])
            if not n:
                continue
            out = np.empty((n, len(columns)), dtype=float)
            for j, c in enumerate(columns):
                out[:, j] = 1.0 if c == "units" else got.pop(c)
            arms[variant] = out
        span = load("ab/exposure_span")
        first, last = con.execute(span.render(exposure_rows=[exposure])).fetchone()
    finally:
        if engines.is_duckdb(con):
            queries.drop_table(con, rows)
            release_memory(con)
    window = {"first_exposure": None if first is None else pd.Timestamp(first),
              "last_exposure": None if last is None else pd.Timestamp(last)}
    return UnitData(arms=arms, columns=columns, known_variants=known, excluded=excluded,
                    window=window)


def unit_rows(
    logs: Any, unit: str = "user_id", pre_period: PrePeriod | None = None,
    experiment: str | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ``sql/ab/unit_sums`` by exposure (one per unit and variant, per unit of
    the pre-period with ``pre_period``, or per period left out) and the variant names of the
    experiment, after checking the arguments."""
    window = analysis_window(pre_period=pre_period)
    sql, params, known = unit_sums_query(logs, unit, experiment, window=window)
    return logs.con.execute(sql, params).df(), known


def unit_sums_query(
    logs: Any, unit: str = "user_id", experiment: str | None = None, *,
    window: Window | None = None, key: str | None = None, daily: bool = False,
    hourly: bool = False, outcomes: bool = True,
) -> tuple[str, dict[str, Any], list[str]]:
    """``sql/ab/unit_sums`` rendered for ``logs`` with its bind parameters, and the variant
    names of the log (of the experiment when there is one), after checking the arguments.

    Without ``window`` the rows are every search of ``experiment`` (the whole log when None)
    per unit and variant: the baseline of :func:`onlineeval.power`. With a :class:`Window`
    they are by exposure (see the query's header); the experiment is then ``experiment``, or
    the log's only one (bound as ``params["experiment"]``). A log holding several experiments
    needs ``experiment`` either way.

    For callers that aggregate the per-unit rows further in DuckDB (as a subquery) instead of
    fetching them. ``key`` (a column of the facts view, checked by the caller) and ``daily``
    split each unit's exposure rows further, by that column's value and by day (the query's
    header: ``key``, ``daily``; with ``hourly`` as well, by hour).
    """
    from onlineeval.online.facts import STATISTICS, facts_view
    from onlineeval.online.grouping import experiment_names

    con = logs.con
    if window is not None and window.needs_ts and not logs.has("searches", "ts"):
        given = [name for name, on in (("a pre-period (CUPED)", window.cuped),
                                       ("a window start", window.start is not None),
                                       ("a window end", window.end is not None)) if on]
        raise InputError(
            f"{' and '.join(given)} needs search timestamps, but the log {logs.source} has no "
            "searches.ts column; drop --pre-period/--cuped/--start/--end or supply ts"
        )
    searches_cols = list(con.table("searches").columns)
    if not isinstance(unit, str) or unit not in searches_cols:
        raise UnknownNameError(
            f"unknown randomization unit column {unit!r}; the searches of {logs.source} have "
            f"columns: {', '.join(searches_cols)}"
        )
    names = experiment_names(logs)
    if experiment is None and len(names) > 1:
        raise InvalidParameterError(
            f"the log {logs.source} holds several experiments ({', '.join(names)}); "
            "choose one with experiment=... (CLI: --experiment NAME)"
        )
    if experiment is not None and experiment not in names:
        raise UnknownNameError(
            f"unknown experiment {experiment!r}; the log has: "
            f"{', '.join(names) or '(no experiment column values)'}"
        )
    if experiment is None and window is not None and names:
        # the log's only experiment: searches outside it are left out and counted, never
        # pooled with its exposures
        experiment = names[0]
    known = variants.names(logs, experiment)
    # outcomes: whether the caller reads an outcome metric, and so whether the events'
    # attribution is reported (online.facts); the numbers are the same either way
    facts = facts_view(logs, outcomes=outcomes)[0]
    q = load("ab/unit_sums")
    w = window or Window()
    params = q.bind(by_exposure=window is not None, cuped=w.cuped, experiment=experiment,
                    win_start=w.start, win_end=w.end, pre_start=w.pre_start)
    sql = q.render(facts=[facts], unit=[unit], stats=list(STATISTICS),
                   key=[] if key is None else [key], keyed=key is not None, daily=daily,
                   hourly=hourly)
    return sql, params, known


def excluded_of_view(con: Any, unit_rows: str, stacklevel: int = 4) -> dict[str, int]:
    """The :data:`EXCLUDED` counts of a view of ``sql/ab/unit_sums`` rows by exposure,
    aggregated in DuckDB (``sql/ab/excluded_counts.sql``): for callers that never fetch the
    per-unit rows. Warns about them as the readout does (``stacklevel`` as for
    :func:`warn_excluded`, counted from here)."""
    q = load("ab/excluded_counts")
    rows = con.execute(q.render(unit_rows=[unit_rows])).fetchall()
    excluded: dict[str, int] = dict.fromkeys(EXCLUDED, 0)
    for period, searches, units in rows:
        if period == "multi_variant":
            excluded["multi_variant_units"] = int(units)
            excluded["multi_variant_searches"] = int(searches)
        elif period in _PERIOD_KEYS:
            excluded[_PERIOD_KEYS[period]] = int(searches)
    warn_excluded(excluded, stacklevel=stacklevel)
    return excluded


def warn_excluded(excluded: dict[str, int], stacklevel: int = 3) -> None:
    """Warn about the searches and units left out of the outcome (:data:`EXCLUDED` counts):
    NULL units, searches after the first exposure that are not exposures, units in more
    than one variant. ``stacklevel`` 3 points at the caller of the caller."""
    if excluded["null_unit_searches"]:
        warnings.warn(
            f"{excluded['null_unit_searches']} searches have no value in the randomization "
            "unit column and are left out",
            stacklevel=stacklevel,
        )
    stray = excluded["outside_experiment_searches"] + excluded["no_variant_searches"]
    if stray:
        warnings.warn(
            f"{stray:,} searches made after their unit's first exposure are not exposures and "
            f"are left out: {excluded['outside_experiment_searches']:,} of another experiment "
            f"or none, {excluded['no_variant_searches']:,} of the experiment without a variant",
            stacklevel=stacklevel,
        )
    if excluded["multi_variant_units"]:
        warnings.warn(
            f"{excluded['multi_variant_units']} units appear in more than one variant "
            f"({excluded['multi_variant_searches']} searches); they are left out of every arm",
            stacklevel=stacklevel,
        )


def unit_arrays(df: pd.DataFrame, known: list[str], cuped: bool) -> UnitData:
    """The :class:`UnitData` of the rows of ``sql/ab/unit_sums`` by exposure (one per unit
    and variant of the outcome), counting and warning about what is left out."""
    excluded: dict[str, int] = dict.fromkeys(EXCLUDED, 0)
    df["variant"] = df["variant"].astype(object).where(df["variant"].notna(), None)
    for period, key in _PERIOD_KEYS.items():
        excluded[key] = int(df.loc[df["period"] == period, "searches"].sum())
    # Only the unit and variant of the outcome rows are copied into frames; the sums are read
    # column by column into each arm's array. (Copies of the whole frame, one row per unit
    # with ~30 columns, were what took an A/B readout of 500k units over its memory budget.)
    # frames below are indexed by row position in df
    is_exp = (df["period"] == "exp").to_numpy(dtype=bool)
    exp = df.loc[is_exp, ["unit", "variant"]].set_axis(np.flatnonzero(is_exp))
    n_var = exp.groupby("unit", sort=False)["variant"].transform("size")
    multi = n_var > 1
    excluded["multi_variant_units"] = int(exp.loc[multi, "unit"].nunique())
    excluded["multi_variant_searches"] = int(df["searches"].iloc[exp.index[multi]].sum())
    exp = exp[~multi]
    warn_excluded(excluded, stacklevel=4)
    sums = list(UNIT_SUMS)
    columns = [*sums, "units"]
    pre_index = pre_rows = None
    if cuped:
        is_pre = (df["period"] == "pre").to_numpy(dtype=bool)
        pre_index = pd.Index(df["unit"][is_pre])
        if not pre_index.is_unique:
            raise pd.errors.MergeError("a unit has two pre-period rows")
        pre_rows = np.flatnonzero(is_pre)
        columns += [f"pre_{c}" for c in sums] + ["has_pre"]
    # DuckDB returns groups in no fixed order (it varies between runs with threads and with
    # the input's row order); the seeded bootstrap indexes units by row, and float sums depend
    # on their order, so rows are put in unit order for reproducible numbers.
    exp = exp.sort_values("unit", kind="stable")
    arms: dict[str, np.ndarray] = {}
    ids: dict[str, np.ndarray] = {}
    for variant, rows in exp.groupby("variant", sort=True):
        at = rows.index.to_numpy()
        out = np.zeros((len(at), len(columns)), dtype=float)
        for j, c in enumerate(sums):
            out[:, j] = df[c].to_numpy(dtype=float)[at]
        out[:, len(sums)] = 1.0
        if pre_index is not None:
            # the unit's pre-period sums, 0 without a pre-period row (and for a NULL sum)
            k = pre_index.get_indexer(rows["unit"].to_numpy())
            has = k >= 0
            src = pre_rows[k[has]]
            for j, c in enumerate(sums):
                out[has, len(sums) + 1 + j] = np.nan_to_num(
                    df[c].to_numpy(dtype=float)[src], nan=0.0)
            out[:, -1] = has
        arms[str(variant)] = out
        ids[str(variant)] = rows["unit"].to_numpy()
    window = {
        "first_exposure": _ts(df["first_ts"].iloc[exp.index].min()) if len(exp) else None,
        "last_exposure": _ts(df["last_ts"].iloc[exp.index].max()) if len(exp) else None,
    }
    return UnitData(arms=arms, columns=columns, known_variants=known, excluded=excluded,
                    window=window, ids=ids)


def _ts(value: Any) -> pd.Timestamp | None:
    return None if pd.isna(value) else pd.Timestamp(value)


def describe_window(window: dict[str, Any]) -> str:
    """One line stating an A/B readout's window (``abtest(...).attrs["window"]``): the
    bounds given, the first and last exposure analysed, and the CUPED pre-period."""
    line = describe(window, "exposures")
    if window.get("cuped"):
        pre = window.get("pre_period_start")
        line += ("; CUPED pre-period: each unit's searches before its first exposure"
                 + ("" if pre is None else f", from {pre} on"))
    return line


def check_variants(
    data: UnitData, control: str, treatments: list[str] | str | None,
) -> list[str]:
    """Validate the control and treatment names; return the treatments to analyse."""
    available = ", ".join(
        f"{v} ({len(data.arms.get(v, ())):,} units)" for v in data.known_variants
    ) or "(no variant values in the log)"

    def known(name: Any, role: str) -> str:
        if not isinstance(name, str) or name not in data.known_variants:
            raise UnknownNameError(
                f"unknown {role} variant {name!r}; the log's variants are: {available}"
            )
        if len(data.arms.get(name, ())) == 0:
            raise SchemaError(
                f"variant {name!r} has 0 units in the analysed period, so it cannot be "
                f"compared; variants: {available}"
            )
        return name

    known(control, "control")
    if treatments is None:
        chosen = [v for v in data.known_variants if v != control and len(data.arms.get(v, ()))]
        empty = [v for v in data.known_variants if v != control and v not in chosen]
        if empty:
            warnings.warn(
                f"variants with 0 units in the analysed period are left out: {empty}",
                stacklevel=3,
            )
        if not chosen:
            raise SchemaError(
                f"no treatment variant to compare with control {control!r}; variants: "
                f"{available}"
            )
        return chosen
    if isinstance(treatments, str):
        treatments = [t.strip() for t in treatments.split(",") if t.strip()]
    out = []
    for t in treatments:
        known(t, "treatment")
        if t == control:
            raise InvalidParameterError(
                f"variant {t!r} is the control; list only treatments in treatment"
            )
        if t not in out:
            out.append(t)
    if not out:
        raise InvalidParameterError("treatment is empty; give at least one variant name")
    return out


def check_arms(logs: Any, known: list[str], control: Any, treatment: Any) -> tuple[str, str]:
    """``control`` and ``treatment``: two different variants of the experiment, each given
    in the type of the log's variant column; their keys (texts, ``known``'s spelling), as
    :mod:`onlineeval.logs.variants` makes them."""
    keys = []
    for role, name in (("control", control), ("treatment", treatment)):
        text = variants.key(logs, name, role, known)
        if text not in known:
            raise UnknownNameError(
                f"unknown {role} variant {name!r}; the experiment's variants are: "
                f"{variants.shown(logs, known) or '(none)'}"
            )
        keys.append(text)
    if keys[0] == keys[1]:
        raise InvalidParameterError(f"the treatment {treatment!r} is the control")
    return keys[0], keys[1]


#: inside :func:`shared_unit_rows`: per-unit rows table -> (connection, (query, params))
#: it holds
_SHARED: ContextVar[dict[str, tuple[Any, Any]] | None] = ContextVar(
    "onlineeval_shared_unit_rows", default=None)


@contextmanager
def shared_unit_rows() -> Iterator[None]:
    """In the block, :func:`exposure_rows` stores the per-unit rows of a rendered query once
    per DuckDB connection: a call with the same query and parameters as the one that filled
    the table reads that table instead of running the log's sessionization again (a
    readout's effect over time, per day and per day since exposure, and the sequential and
    A/A loops over metrics render one query for each). For callers that read one log and
    change none of its tables in the block; each call still counts and warns about what
    its outcome leaves out."""
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def exposure_rows(con: Any, name: str, unit_sql: str, params: dict[str, Any],
                  ) -> tuple[str, dict[str, int]]:
    """The rendered ``ab/unit_sums`` query's rows (``<name>_unit_rows``, a temporary table)
    and a view of their outcome rows of the analysed units
    (``sql/ab/exposure_rows.sql``), for queries that
    aggregate them further in DuckDB: the latter's name, and what the outcome leaves out
    (:func:`onlineeval.abtest.units.excluded_of_view`, warned about)."""
    # the per-unit rows are stored once: every query reading them (the exclusions, the
    # moments, the quantiles' counts and order statistics) would otherwise run the log's
    # sessionization again (a readout at 5M searches ran it ~10 times on DuckDB); on Spark
    # each would also analyse and optimise the whole chain of views again
    rows = f"{name}_unit_rows"
    shared = _SHARED.get() if engines.is_duckdb(con) else None
    made = (unit_sql, tuple(sorted(params.items())))
    if not (shared is not None and shared.get(rows, (None, None))[0] is con
            and shared[rows][1] == made):
        queries.create(con, rows, unit_sql, params=params, table=True)
        if shared is not None:
            shared[rows] = (con, made)
    excluded = excluded_of_view(con, rows)
    q = load("ab/exposure_rows")
    return queries.create(con, f"{name}_exposure_rows", q.render(unit_rows=[rows])), excluded


def xy_moments(con: Any, name: str, units_sql: str,
               params: dict[str, Any] | None = None) -> pd.DataFrame:
    """The per-unit ``(variant, key, x, y)`` rows of the rendered ``units_sql`` (kept in
    DuckDB as the view ``name``) reduced to their moments per variant and key
    (``sql/ab/xy_moments.sql``); :func:`moments_of` reads them."""
    return xy_moments_of_view(con, queries.create(con, name, units_sql, params=params))


def xy_moments_of_view(con: Any, view: str) -> pd.DataFrame:
    """:func:`xy_moments` of rows already kept in DuckDB as ``view``."""
    q = load("ab/xy_moments")
    return con.execute(q.render(rows=[view])).df()


def moments_of(rows: pd.DataFrame) -> Moments:
    """:class:`~onlineeval.stats.moments.Moments` of ``(x, y)``, one per row, from the
    columns n, mean_x, mean_y, var_x, var_y, cov_xy that the moments queries return (a NULL
    variance, below 2 units, is nan)."""
    col = {name: rows[name].to_numpy(dtype=float) for name in
           ("n", "mean_x", "mean_y", "var_x", "var_y", "cov_xy")}
    mean = np.stack([col["mean_x"], col["mean_y"]], axis=-1)
    cov = np.stack([np.stack([col["var_x"], col["cov_xy"]], axis=-1),
                    np.stack([col["cov_xy"], col["var_y"]], axis=-1)], axis=-2)
    return Moments(col["n"], mean, cov)
