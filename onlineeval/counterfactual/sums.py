"""One SQL pass over the log per estimate: the per-unit sums the estimators are ratios of."""

from __future__ import annotations

import uuid

import duckdb
import pandas as pd

from onlineeval import queries

#: per slot (ips; dr with a given model) and per (query, document) pooled (snips; dr with
#: the log's own model)
SLOTS, POOLED = "counterfactual/unit_sums", "counterfactual/normalised_sums"
#: the temporary views both read (made by per_unit)
PAGES_VIEW, SLOTS_VIEW = "counterfactual_pages", "counterfactual_slots"


def query_for(estimator: str, has_model: bool) -> str:
    """The SQL file whose rows the estimator is computed from."""
    return POOLED if estimator == "snips" or (estimator == "dr" and not has_model) else SLOTS


def per_unit(con: duckdb.DuckDBPyConnection, name: str, *, candidate: pd.DataFrame,
             propensity: pd.DataFrame, max_rank: int, clip: float | None = None,
             searches: str = "searches", query: str = "query", unit: str = "user_id"
             ) -> pd.DataFrame:
    """The rows of the SQL file ``name`` (see its header) on the views of ``con``.

    ``candidate``: query, doc_id, cand_rank, dm_alpha, dm_seen; ``propensity``: rank,
    propensity, dm_exam (:func:`onlineeval.counterfactual.propensities.rank_table`). The
    pages and slots both estimates sum are temporary views of ``counterfactual/pages`` and
    ``counterfactual/slots``, replaced on each call."""
    tag = uuid.uuid4().hex[:12]
    tables = {"candidate": f"counterfactual_candidate_{tag}",
              "propensity": f"counterfactual_propensity_{tag}"}
    con.register(tables["candidate"], candidate)
    con.register(tables["propensity"], propensity)
    try:
        pages = queries.load("counterfactual/pages")
        queries.create(con, PAGES_VIEW, pages.render(
            searches=[searches], query=[query], unit=[unit], candidate=[tables["candidate"]],
            propensity=[tables["propensity"]]))
        slots = queries.load("counterfactual/slots")
        queries.create(con, SLOTS_VIEW, slots.render(
            pages=[PAGES_VIEW], candidate=[tables["candidate"]],
            propensity=[tables["propensity"]]),
            params={"max_rank": int(max_rank), "clip": None if clip is None else float(clip)})
        q = queries.load(name)
        return con.execute(q.render(pages=[PAGES_VIEW], slots=[SLOTS_VIEW])).df()
    finally:
        for t in tables.values():
            con.unregister(t)
