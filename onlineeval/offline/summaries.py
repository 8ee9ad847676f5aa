"""trec_eval's treatment of per-query values: resets under -c and the summary over queries.

Both ``evaluate`` and the ``trec-eval`` command go through here, so the two never disagree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from onlineeval.offline.measures.base import Measure
from onlineeval.offline.ranking import Ranked

__all__ = ["reset_missing", "sequential_sum", "summary_value"]


def reset_missing(measure: Measure, value_name: str, values: np.ndarray,
                  ranked: Ranked) -> np.ndarray:
    """``values`` with what trec_eval -c resets for queries missing from the run.

    trec_eval computes every measure on a missing query's one-document stand-in ranking, then
    resets a few values by their printed name (each measure declares which: ``missing_reset``).
    A copy when anything changes.
    """
    missing = ranked.missing
    if missing is None or not missing.any():
        return values
    reset = measure.missing_value(value_name)
    if reset is None:
        return values
    values = np.array(values, copy=True)
    values[missing] = reset
    return values


def sequential_sum(values: np.ndarray) -> float:
    """Left-to-right sum (trec_eval's accumulation order); np.sum would pair terms."""
    vals = np.asarray(values, dtype=np.float64)
    return float(np.cumsum(vals)[-1]) if len(vals) else 0.0


def summary_value(measure: Measure, values: np.ndarray, ranked: Ranked,
                  as_trec_eval_prints: bool = False) -> Any:
    """The summary of one value over the evaluated queries (``measure.summary``).

    ``as_trec_eval_prints``: the ``all`` line of trec_eval, which under -c replaces a few
    summaries by a recount (``measure.complete_summary``: num_rel); ``evaluate`` keeps the
    summary of the per-query values. None for a measure without a numeric summary.
    """
    n_q = ranked.n_queries
    kind = measure.summary
    if as_trec_eval_prints and ranked.complete and measure.complete_summary is not None:
        return measure.complete_summary(ranked)
    if kind == "sum":
        return int(np.asarray(values, dtype=np.float64).sum())
    if kind == "count":
        return n_q
    if kind == "runid":
        return ranked.runid if as_trec_eval_prints else None
    if kind == "none":
        return None
    mean = sequential_sum(values) / n_q
    return float(np.exp(mean)) if kind == "gm" else mean
