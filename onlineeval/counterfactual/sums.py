"""One SQL pass over the log per estimate: the per-unit sums the estimators are ratios of."""

from __future__ import annotations

import uuid
from typing import Any

import duckdb
import pandas as pd

from onlineeval import queries

#: the SQL file each estimator's per-unit sums come from
QUERY = {"ips": "counterfactual/unit_sums", "dr": "counterfactual/unit_sums",
         "snips": "counterfactual/normalised_sums"}


def per_unit(con: duckdb.DuckDBPyConnection, estimator: str, *, candidate: pd.DataFrame,
             propensity: pd.DataFrame, max_rank: int, clip: float | None = None,
             searches: str = "searches", query: str = "query", unit: str = "user_id"
             ) -> pd.DataFrame:
    """The rows of the estimator's SQL (see its header) on the views of ``con``.

    ``candidate``: query, doc_id, cand_rank, dm_alpha; ``propensity``: rank, propensity,
    dm_exam (:func:`onlineeval.counterfactual.propensities.rank_table`)."""
    name = QUERY[estimator]
    q = queries.load(name)
    tag = uuid.uuid4().hex[:12]
    tables = {"candidate": f"counterfactual_candidate_{tag}",
              "propensity": f"counterfactual_propensity_{tag}"}
    con.register(tables["candidate"], candidate)
    con.register(tables["propensity"], propensity)
    params: dict[str, Any] = {"max_rank": int(max_rank)}
    if "clip" in q.params:
        params["clip"] = None if clip is None else float(clip)
    try:
        return con.execute(
            q.render(searches=[searches], query=[query], unit=[unit],
                     candidate=[tables["candidate"]], propensity=[tables["propensity"]]),
            q.bind(**params)).df()
    finally:
        for t in tables.values():
            con.unregister(t)
