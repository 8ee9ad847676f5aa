"""Per-randomization-unit rows of an experiment, from the logs through ``sql/ab/unit_sums``.

Only per-unit rows leave DuckDB. This module turns them into one numeric array per variant
(rows = units, columns = :data:`~onlineeval.abtest.metrics.UNIT_SUMS`, ``units`` and, with a
pre-period, ``pre_<sum>`` and ``has_pre``) and counts everything it leaves out:

- searches without a variant in the experiment period (``no_variant_searches``);
- searches whose unit value is NULL (``null_unit_searches``);
- units seen in more than one variant (``multi_variant_units``, with their searches): their
  assignment is broken, so they belong to no arm;
- with a pre-period, searches in neither period (``outside_period_searches``).

Within each arm the rows are in unit order, so results (the seeded bootstrap included) do
not depend on the order DuckDB happens to return groups in.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.abtest.metrics import UNIT_SUMS
from onlineeval.errors import InputError, InvalidParameterError, SchemaError, UnknownNameError
from onlineeval.queries import load, quote_ident

PrePeriod = tuple[pd.Timestamp | None, pd.Timestamp, pd.Timestamp]


@dataclass
class UnitData:
    """Per-unit arrays by variant, the column names, and what was left out."""

    arms: dict[str, np.ndarray]
    columns: list[str]
    known_variants: list[str]
    excluded: dict[str, int] = field(default_factory=dict)

    def col(self, name: str) -> int:
        return self.columns.index(name)


def as_logs(logs: Any) -> Any:
    """Accept a :class:`~onlineeval.logs.Logs` or a path to a log directory."""
    if isinstance(logs, str | Path):
        from onlineeval.logs import load_logs

        return load_logs(logs)
    if not hasattr(logs, "con") or not hasattr(logs, "has"):
        raise InvalidParameterError(
            "logs must be a Logs object from onlineeval.load_logs or a path to a log "
            f"directory; got {type(logs).__name__}"
        )
    return logs


def _timestamp(value: Any, what: str) -> pd.Timestamp:
    if isinstance(value, str):
        value = value.strip()
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as exc:
        raise InvalidParameterError(
            f"{what} must be a timestamp like 2024-03-01 or 2024-03-01T12:00:00; got {value!r}"
        ) from exc
    if pd.isna(ts):
        raise InvalidParameterError(f"{what} must be a timestamp; got {value!r}")
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    return ts


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
        start = _timestamp(parts[0], "the experiment start")
        return None, start, start
    if len(parts) != 2:
        raise InvalidParameterError(
            f"pre_period must have a start and an end (START,END); got {value!r}"
        )
    start = _timestamp(parts[0], "the pre-period start")
    end = _timestamp(parts[1], "the pre-period end")
    if not start < end:
        raise InvalidParameterError(
            f"the pre-period start must be before its end; got {start} .. {end}"
        )
    return start, end, end


def _columns(con: Any, view: str) -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE {quote_ident(view)}").fetchall()]


def load_units(
    logs: Any, unit: str = "user_id", pre_period: PrePeriod | None = None,
    experiment: str | None = None,
) -> UnitData:
    """Run the unit aggregation and return per-variant arrays (see the module docstring)."""
    df, known = unit_rows(logs, unit, pre_period, experiment)
    return _arrays(df, known, pre_period is not None)


def unit_rows(
    logs: Any, unit: str = "user_id", pre_period: PrePeriod | None = None,
    experiment: str | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ``sql/ab/unit_sums`` (one per unit, period and variant) and the variant
    names of the log (of ``experiment`` when given), after checking the arguments."""
    sql, params, known = unit_sums_query(logs, unit, pre_period, experiment)
    return logs.con.execute(sql, params).df(), known


def unit_sums_query(
    logs: Any, unit: str = "user_id", pre_period: PrePeriod | None = None,
    experiment: str | None = None,
) -> tuple[str, dict[str, Any], list[str]]:
    """``sql/ab/unit_sums`` rendered for ``logs`` with its bind parameters, and the variant
    names of the log (of ``experiment`` when given), after checking the arguments.

    For callers that aggregate the per-unit rows further in DuckDB (as a subquery) instead of
    fetching them.
    """
    from onlineeval.online import search_facts

    con = logs.con
    if pre_period is not None and not logs.has("searches", "ts"):
        raise InputError(
            f"a pre-period (CUPED) needs search timestamps, but the log {logs.source} has no "
            "searches.ts column; drop --pre-period or supply ts"
        )
    searches_cols = _columns(con, "searches")
    if not isinstance(unit, str) or unit not in searches_cols:
        raise UnknownNameError(
            f"unknown randomization unit column {unit!r}; the searches of {logs.source} have "
            f"columns: {', '.join(searches_cols)}"
        )
    experiments = [
        r[0] for r in con.execute(
            "SELECT DISTINCT CAST(experiment AS VARCHAR) FROM searches "
            "WHERE experiment IS NOT NULL ORDER BY 1"
        ).fetchall()
    ]
    if experiment is None and len(experiments) > 1:
        raise InvalidParameterError(
            f"the log {logs.source} holds several experiments ({', '.join(experiments)}); "
            "choose one with experiment=... (CLI: --experiment NAME)"
        )
    if experiment is not None and experiment not in experiments:
        raise UnknownNameError(
            f"unknown experiment {experiment!r}; the log has: "
            f"{', '.join(experiments) or '(no experiment column values)'}"
        )
    known = [
        r[0] for r in con.execute(
            "SELECT DISTINCT CAST(variant AS VARCHAR) FROM searches WHERE variant IS NOT NULL "
            "AND (CAST($e AS VARCHAR) IS NULL OR CAST(experiment AS VARCHAR) = $e) ORDER BY 1",
            {"e": experiment},
        ).fetchall()
    ]
    facts = search_facts(logs)
    q = load("ab/unit_sums")
    pre_start, pre_end, exp_start = pre_period if pre_period else (None, None, None)
    params = q.bind(use_periods=pre_period is not None, exp_start=exp_start,
                    pre_start=pre_start, pre_end=pre_end, experiment=experiment)
    return q.render(facts=[facts], unit=[unit]), params, known


def _arrays(df: pd.DataFrame, known: list[str], cuped: bool) -> UnitData:
    excluded: dict[str, int] = {}
    df["variant"] = df["variant"].astype(object).where(df["variant"].notna(), None)
    null_unit = df["unit"].isna()
    excluded["null_unit_searches"] = int(df.loc[null_unit, "searches"].sum())
    if excluded["null_unit_searches"]:
        warnings.warn(
            f"{excluded['null_unit_searches']} searches have no value in the randomization "
            "unit column and are left out",
            stacklevel=3,
        )
    df = df[~null_unit]
    outside = df["period"] == "none"
    excluded["outside_period_searches"] = int(df.loc[outside, "searches"].sum())
    exp = df[df["period"] == "exp"]
    no_var = exp["variant"].isna()
    excluded["no_variant_searches"] = int(exp.loc[no_var, "searches"].sum())
    exp = exp[~no_var]
    n_var = exp.groupby("unit", sort=False)["variant"].transform("size")
    multi = n_var > 1
    excluded["multi_variant_units"] = int(exp.loc[multi, "unit"].nunique())
    excluded["multi_variant_searches"] = int(exp.loc[multi, "searches"].sum())
    exp = exp[~multi]
    if excluded["multi_variant_units"]:
        warnings.warn(
            f"{excluded['multi_variant_units']} units appear in more than one variant "
            f"({excluded['multi_variant_searches']} searches); they are left out of every arm",
            stacklevel=3,
        )
    sums = list(UNIT_SUMS)
    columns = [*sums, "units"]
    exp = exp.copy()
    exp["units"] = 1
    if cuped:
        pre = df[df["period"] == "pre"][["unit", *sums]].rename(
            columns={c: f"pre_{c}" for c in sums}
        )
        pre["has_pre"] = 1
        exp = exp.merge(pre, on="unit", how="left", validate="one_to_one")
        pre_cols = [f"pre_{c}" for c in sums] + ["has_pre"]
        exp[pre_cols] = exp[pre_cols].fillna(0)
        columns += pre_cols
    # DuckDB returns groups in no fixed order (it varies between runs with threads and with
    # the input's row order); the seeded bootstrap indexes units by row, and float sums depend
    # on their order, so rows are put in unit order for reproducible numbers.
    exp = exp.sort_values("unit", kind="stable")
    arms: dict[str, np.ndarray] = {}
    for variant, rows in exp.groupby("variant", sort=True):
        arms[str(variant)] = rows[columns].to_numpy(dtype=float)
    return UnitData(arms=arms, columns=columns, known_variants=known, excluded=excluded)


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
                f"variant {t!r} is the control; list only treatments in treatments"
            )
        if t not in out:
            out.append(t)
    if not out:
        raise InvalidParameterError("treatments is empty; give at least one variant name")
    return out
