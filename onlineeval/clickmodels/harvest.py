"""Position bias from interventions harvested out of logs (Agarwal et al., WSDM 2019).

When the same (query, doc) was shown at rank 1 on some pages and at rank k on others — as
happens when several rankers served the same query, e.g. in an A/B test or interleaving —
its click-through rate at each rank is the same relevance seen through two examination
probabilities. Over the set S_k of such pairs (the *interventional set* of ranks 1 and k),
under the position-based model,

    relative_k = sum over S_k of CTR(q, d, k) / sum over S_k of CTR(q, d, 1)

estimates p_k / p_1, the examination at rank k relative to rank 1, with no model of
relevance at all: each pair is its own control. (This is the paper's harvested swap
estimator with the empirical weights: CTR(q, d, k) is the pair's clicks at rank k over its
impressions at rank k.) It needs the rankers to have been shown to comparable users for the
same query (randomised assignment, as in an A/B test or interleaving).

The confidence interval is a percentile bootstrap that resamples *queries* with replacement
(every page of a query stays together, so the pages a pair's two ranks come from, and
clicks on one page, are never treated as independent); it assumes queries, not users, are
independent. Ranks whose interventional set holds fewer than ``min_queries`` queries get no
interval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from onlineeval import queries
from onlineeval.clickmodels.patterns import DEFAULT_MAX_RANK, check_max_rank
from onlineeval.errors import InvalidParameterError, SchemaError
from onlineeval.levels import check_level
from onlineeval.logs.coerce import as_logs

if TYPE_CHECKING:
    from onlineeval.logs import Logs


def read_rank_counts(logs: Logs, searches: str = "searches", query: str = "query",
                     max_rank: int = DEFAULT_MAX_RANK) -> pd.DataFrame:
    """Impressions and clicked impressions per (query, doc_id, rank)
    (``sql/clickmodels/rank_counts.sql``)."""
    logs = as_logs(logs)
    if not logs.has_results:
        raise SchemaError(f"intervention harvesting needs the results table; the log "
                          f"{logs.source} has none")
    if not (logs.has("searches", query) or query in logs.extra_columns("searches")):
        raise SchemaError(f"the log {logs.source} has no searches.{query} column")
    q = queries.load("clickmodels/rank_counts")
    return logs.con.execute(q.render(searches=[searches], query=[query]),
                            q.bind(max_rank=check_max_rank(max_rank))).df()


def harvest_from_counts(counts: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0,
                        confidence: float = 0.95, min_queries: int = 5) -> pd.DataFrame:
    """:func:`harvest_position_bias` on counts (query, doc_id, rank, shown, clicked)."""
    confidence = check_level(confidence, "confidence")
    if n_boot < 1:
        raise InvalidParameterError(f"n_boot must be >= 1; got {n_boot!r}")
    c = counts[counts["shown"] > 0]
    ctr = (c["clicked"] / c["shown"]).to_numpy()
    top = c[c["rank"] == 1].assign(ctr1=ctr[(c["rank"] == 1).to_numpy()])
    top = top[["query", "doc_id", "ctr1"]]
    rows = []
    rng = np.random.default_rng(seed)
    lo_q, hi_q = (1 - confidence) / 2, (1 + confidence) / 2
    # every rank's pairs in one merge (left order kept, so each (rank, query) sum adds the
    # same rows in the same order as a merge per rank would)
    both = c[c["rank"] > 1].merge(top, on=["query", "doc_id"], how="inner")
    both = both.assign(ctrk=both["clicked"] / both["shown"])
    pairs = both["rank"].value_counts()
    sums = both.groupby(["rank", "query"], sort=True)[["ctrk", "ctr1"]].sum()
    for k in sorted(int(r) for r in c["rank"].unique() if r > 1):
        per_query = sums.xs(k, level="rank") if k in pairs.index else sums.iloc[:0]
        n_q = len(per_query)
        num, den = per_query["ctrk"].to_numpy(), per_query["ctr1"].to_numpy()
        est = num.sum() / den.sum() if den.sum() > 0 else float("nan")
        lo = hi = float("nan")
        if n_q >= min_queries:
            draws = rng.multinomial(n_q, np.full(n_q, 1.0 / n_q), size=n_boot)
            with np.errstate(invalid="ignore", divide="ignore"):
                boot = (draws @ num) / (draws @ den)
            lo, hi = np.nanquantile(boot, [lo_q, hi_q])
        rows.append({"rank": k, "pairs": int(pairs.get(k, 0)), "queries": n_q, "relative": est,
                     "ci_low": lo, "ci_high": hi})
    out = pd.DataFrame([{"rank": 1, "pairs": len(top), "queries": top["query"].nunique(),
                         "relative": 1.0, "ci_low": 1.0, "ci_high": 1.0}] + rows)
    return out


def harvest_position_bias(logs: Logs, *, searches: str = "searches", query: str = "query",
                          max_rank: int = DEFAULT_MAX_RANK, n_boot: int = 1000, seed: int = 0,
                          confidence: float = 0.95, min_queries: int = 5) -> pd.DataFrame:
    """Examination per rank relative to rank 1, from (query, doc) pairs shown at both ranks.

    Returns one row per rank: ``pairs`` (the size of the interventional set of ranks 1 and
    k), ``queries`` (how many queries those pairs come from), ``relative`` (p_k / p_1; 1 at
    rank 1 by definition, NaN when no pair was shown at both ranks) and the bootstrap
    interval ``ci_low``, ``ci_high`` (``confidence``, ``n_boot`` query resamples drawn from
    ``numpy.random.default_rng(seed)``; NaN with fewer than ``min_queries`` queries).
    """
    check_level(confidence, "confidence")  # argument checks before the log is read
    logs = as_logs(logs)
    counts = read_rank_counts(logs, searches, query, max_rank)
    return harvest_from_counts(counts, n_boot=n_boot, seed=seed, confidence=confidence,
                               min_queries=min_queries)
