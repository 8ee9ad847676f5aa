"""Per-query online deltas of one experiment, and their agreement with per-query offline deltas.

The within-experiment agreement pairs, query by query, the offline delta of a measure with an
online delta of the same experiment:

- :func:`per_query_interleaving` — Δ_q of one team against another on the interleaved pages
  of the query (``sql/agreement/per_query_interleaving.sql``);
- :func:`per_query_ab_ctr` — the CTR difference treatment − control over the query's A/B
  searches (``sql/agreement/per_query_ab_ctr.sql``);
- :func:`within_experiment` — :func:`onlineeval.agreement.per_query_agreement` of the offline
  deltas with one of those, counting what is left out.

Queries are matched on the logs' ``qid`` searches column when the log has it (the simulator
writes it), else on the query text (:func:`query_column`). The SQL runs in
:func:`onlineeval.interleaving.outcomes.per_query` and
:func:`onlineeval.online.per_query.ab_ctr_per_query`; each call here makes sure that what it
reads is its experiment's, so the result does not depend on what ran before on the same logs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from onlineeval.agreement.within import per_query_agreement
from onlineeval.levels import check_level


@dataclass(frozen=True)
class PerQueryOnline:
    """The per-query online deltas of one experiment.

    ``table`` is the query's output as it is: one row per query value (``qid``), the
    delta in column ``value`` (null where it is undefined: ``undefined_reason`` says when),
    and the searches or pages behind it in the columns ``counts``; plus, when some
    searches or pages have no query value, one row with ``qid`` null counting them (they
    name no topic, so they are not a query). ``unit`` names what ``counts`` count.
    """

    table: pd.DataFrame
    value: str
    counts: tuple[str, ...]
    unit: str
    undefined_reason: str


def query_column(logs: Any) -> str:
    """The searches column naming the judged topic: ``qid`` when the log carries it as an
    extra column (the simulator writes it), else the query text."""
    return "qid" if "qid" in logs.extra_columns("searches") else "query"


def per_query_interleaving(logs: Any, experiment: str | None, team: str, other: str, *,
                           start: Any = None, end: Any = None) -> PerQueryOnline:
    """Per-query Δ_q of ``team`` against ``other`` on the interleaved pages of
    ``experiment`` (pages with ``start <= ts < end``; None: unbounded): positive when
    ``team`` won more of the query's pages. Only pages comparing exactly this pair count.

    Reads the page outcomes (:func:`onlineeval.interleaving.outcomes.page_outcomes`) of this
    experiment and window, whatever ran before on ``logs``: when ``logs.con`` holds them
    already (a readout of the same experiment and window just defined them) they are
    reused, so the log is not counted again and their warnings are not repeated; otherwise
    they are defined here, with page_outcomes' errors and warnings.
    """
    from onlineeval.interleaving import outcomes

    logs = outcomes.as_logs(logs)
    if not _page_outcomes_defined(logs, experiment, start, end):
        outcomes.page_outcomes(logs, experiment, start=start, end=end)
    table = outcomes.per_query(logs, team, other, query_column(logs))
    return PerQueryOnline(table, "delta_q", ("pages",), "pages",
                          "with no click on either team's results")


def _page_outcomes_defined(logs: Any, experiment: str | None, start: Any, end: Any) -> bool:
    """Whether ``logs.con`` defines the page outcomes of exactly this experiment and window:
    the view reads its bound parameters from session variables named after it
    (:func:`onlineeval.queries.create`), so the view answers for whatever they hold."""
    import duckdb

    from onlineeval.interleaving import outcomes
    from onlineeval.queries import view_parameters
    from onlineeval.window import bounds

    lo, hi = bounds(start, end)
    # page_outcomes reads its one-row count with fetchone(), which leaves that result open;
    # a relation may not run on the connection before it is finished
    logs.con.complete()
    try:
        logs.con.table(outcomes.PAGE_TABLE)
    except duckdb.CatalogException:
        return False
    held = view_parameters(logs.con, outcomes.PAGE_TABLE,
                           ("experiment", "win_start", "win_end"))
    held_experiment, held_start, held_end = held.values()
    return (held_experiment == (None if experiment is None else str(experiment))
            and _same_time(held_start, lo) and _same_time(held_end, hi))


def _same_time(held: Any, wanted: Any) -> bool:
    if held is None or wanted is None:
        return held is None and wanted is None
    return pd.Timestamp(held) == pd.Timestamp(wanted)


def per_query_ab_ctr(logs: Any, experiment: str, control: str, treatment: str,
                     ) -> PerQueryOnline:
    """Per-query CTR difference treatment − control over the searches of ``experiment``'s two
    variants; undefined for a query searched in one arm only."""
    from onlineeval.online.per_query import ab_ctr_per_query

    table = ab_ctr_per_query(logs, experiment, control, treatment, query_column(logs))
    return PerQueryOnline(table, "ctr_delta", ("searches_control", "searches_treatment"),
                          "searches", "in one arm only")


def within_experiment(offline: pd.Series, online: PerQueryOnline,
                      confidence: float = 0.95) -> dict[str, Any]:
    """:func:`onlineeval.agreement.per_query_agreement` of the per-query offline deltas
    (indexed by qid) with the per-query online deltas, and what was left out, counted:

    ``n_online_undefined`` queries whose online delta is undefined (of them
    ``n_undefined_judged`` judged, so also among ``n_offline_only``), with
    ``online_undefined_reason``; ``n_without_query`` searches or pages
    (``without_query_unit``) without a query value.
    """
    confidence = check_level(confidence, "confidence")
    table = online.table
    no_query = table["qid"].isna()
    # (a table with the deltas only, without the count columns, counts no row without a query)
    present = [c for c in online.counts if c in table.columns]
    n_without_query = int(table.loc[no_query, present].to_numpy().sum())
    named = table[~no_query]
    undefined = named[online.value].isna()
    out = per_query_agreement(offline, named.set_index("qid")[online.value].dropna(),
                              confidence)
    out["n_online_undefined"] = int(undefined.sum())
    judged = offline.dropna().index.astype(str)
    out["n_undefined_judged"] = int(named.loc[undefined, "qid"].astype(str).isin(judged).sum())
    out["online_undefined_reason"] = online.undefined_reason
    out["n_without_query"] = n_without_query
    out["without_query_unit"] = online.unit
    return out
