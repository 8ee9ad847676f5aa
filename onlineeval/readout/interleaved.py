"""The interleaving part of the readout: the treatment team's Δ_AB and its per-query variant
(:func:`onlineeval.interleaving_readout`, users as the independent units), the per-query
table, and the sensitivity figure against the A/B readout (:class:`Sensitivity`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from onlineeval.readout.result import EventCredit, InterleavingSection, MetricRow, Sensitivity
from onlineeval.stats.results import RESULT_COLUMNS, ComparisonResult


def _result(rec: pd.Series) -> ComparisonResult:
    values = {k: (None if pd.isna(rec[k]) else rec[k]) if k in (
        "correction", "family_size") else rec[k] for k in RESULT_COLUMNS}
    values["p_adjusted"] = float("nan") if pd.isna(values["p_adjusted"]) else \
        values["p_adjusted"]
    for k in ("n", "units_control", "units_treatment"):
        values[k] = int(values[k])
    return ComparisonResult(**values)


def interleaving_part(logs: Any, experiment: str | None, *, treatment: str | None,
                      control: str | None, alpha: float, n_resamples: int, seed: int,
                      start: Any, end: Any) -> InterleavingSection:
    """The interleaving section, from the treatment team's side (the teams by
    :mod:`onlineeval.interleaving.teams`; an error says how to name them). The log's pages
    are read once: the per-query variant and table reuse the readout's page outcomes."""
    from onlineeval.interleaving import interleaving_readout, outcomes
    from onlineeval.interleaving.readout import per_query_rows
    from onlineeval.interleaving.teams import of_experiment, one_pair

    common = dict(team_a=treatment, control=control, treatment_first=True, alpha=alpha,
                  n_resamples=n_resamples, seed=seed)
    pages = interleaving_readout(logs, experiment, start=start, end=end, **common)
    rec = one_pair(pages, experiment, treatment, control)
    a, b = str(rec["team_a"]), str(rec["team_b"])
    exp = rec["experiment"]
    queries = per_query_rows(logs, **common)
    q = queries[(queries["team_a"] == a) & (queries["team_b"] == b)
                & of_experiment(queries["experiment"], exp)].iloc[0]
    # by the query text, as the per-query Δ_AB above (the agreement joins qrels on qid)
    table = outcomes.per_query(logs, a, b, "query").rename(columns={"qid": "query"})
    user_t = t_statistic(float(rec["p_value"]), float(rec["user_delta"]), float(rec["df"]))
    events, why_not = _event_credit(logs, exp, a, b, common, start, end)
    return InterleavingSection(
        experiment=exp, treatment_team=a, control_team=b, result=_result(rec),
        impressions=int(rec["impressions"]),
        impressions_with_clicks=int(rec["impressions_with_clicks"]),
        wins=int(rec["wins_a"]), losses=int(rec["wins_b"]), ties=int(rec["ties"]),
        users=int(rec["users"]), winner=rec["winner"], t_statistic=user_t,
        per_query=_result(q), n_queries=int(q["queries_decided"]),
        queries=table.reset_index(drop=True), event_credit=events,
        event_credit_note=why_not,
    )


#: how to ask for event credit, in the note that says why the readout shows none
_CHOOSE = "choose one with --event-type TYPE (event_type=)"


def _event_credit(logs: Any, experiment: Any, a: str, b: str, common: dict[str, Any],
                  start: Any, end: Any) -> tuple[EventCredit | None, str | None]:
    """The comparison of teams ``a`` (treatment) and ``b`` credited by events, when the log
    has an events table: of the readout's event type, or of the log's only type; else None
    and the one line the readout shows instead, saying why and how to get it. With several
    types and none chosen there is no one credit: none is read out, and that line is a
    note, not a warning (the click credit is the readout's; event credit is an extra the
    user asks for with event_type=, and a warning on every readout of a log with carts and
    purchases would be noise)."""
    from onlineeval.interleaving import interleaving_readout
    from onlineeval.online.attribution import event_types

    if not getattr(logs, "has_events", False):
        return None, ("no credit by events: the interleaving log has no events table (give "
                      "one to credit purchases, bookings, ...: docs/conversions.md)")
    credit = logs.events.event_type
    if credit is None:
        types = list(event_types(logs))
        if len(types) != 1:
            which = f"of {len(types)} types ({', '.join(types)})" if types else "of no type"
            return None, (f"no credit by events: the log's events are {which} and none was "
                          f"chosen; {_CHOOSE}")
        credit = types[0]
    out = interleaving_readout(logs, None if experiment is None else str(experiment),
                               start=start, end=end, credit=credit, **common)
    out = out[(out["team_a"] == a) & (out["team_b"] == b)]
    if out.empty:
        return None, f"no credit by {credit} events: no interleaved page of {a} and {b} has one"
    rec = out.iloc[0]
    return EventCredit(
        credit=credit, result=_result(rec),
        impressions_with_events=int(rec["impressions_with_clicks"]),
        wins=int(rec["wins_a"]), losses=int(rec["wins_b"]), ties=int(rec["ties"]),
        unmatched=int(rec["clicks_unmatched"]), winner=rec["winner"]), None


def t_statistic(p_value: float, estimate: float, df: float) -> float:
    """The signed t (or z, without df) that gives a two-sided ``p_value``."""
    if not (np.isfinite(p_value) and np.isfinite(estimate)) or estimate == 0:
        return math.nan
    dist = stats.norm if df is None or not np.isfinite(df) else stats.t(df)
    return float(np.sign(estimate) * dist.isf(p_value / 2.0))


def sensitivity(section: InterleavingSection, ab_row: MetricRow) -> Sensitivity:
    """The A/B units the interleaving decision would need (:class:`Sensitivity`):
    ``ab_units (t_IL / t_AB)^2`` with both t read back from the two-sided p-values."""
    r = ab_row.result
    ab_units = int((r.units_control or 0) + (r.units_treatment or 0))
    ab_t = t_statistic(r.p_value, r.estimate, ab_row.df)
    interleaving_t = section.t_statistic
    # opposite signs: the A/B effect points the other way, so no number of A/B units
    # gives the interleaving's decision
    same_way = np.isfinite(ab_t) and np.isfinite(interleaving_t) and \
        np.sign(ab_t) == np.sign(interleaving_t) and ab_t != 0
    need = float(ab_units * (interleaving_t / ab_t) ** 2) if same_way else math.nan
    users = int(section.result.n)
    ratio = need / users if users and np.isfinite(need) else math.nan
    return Sensitivity(metric=ab_row.metric, ab_units=ab_units, ab_t=ab_t,
                       interleaving_users=users, interleaving_t=interleaving_t,
                       ab_units_needed=need, ratio=ratio)
