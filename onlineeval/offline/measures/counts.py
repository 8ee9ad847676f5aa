"""Counting measures: runid, num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret.

Summaries are totals over queries, printed as integers (not means). ``num_q`` and ``runid``
have no per-query line.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from onlineeval.offline.measures.base import (
    Measure,
    register,
    trec_eval_match,
    trec_eval_source,
)
from onlineeval.offline.ranking import Ranked


def _runid(r: Ranked, params: Any) -> list[np.ndarray]:
    return [np.zeros(r.n_queries)]


def _num_q(r: Ranked, params: Any) -> list[np.ndarray]:
    return [np.ones(r.n_queries)]


def _num_ret(r: Ranked, params: Any) -> list[np.ndarray]:
    return [r.num_ret.astype(np.float64)]


def _num_rel(r: Ranked, params: Any) -> list[np.ndarray]:
    return [r.num_rel.astype(np.float64)]


def complete_num_rel(r: Ranked) -> int:
    """The ``num_rel`` summary under ``-c``: judgments with grade > 0 in the whole qrels.

    trec_eval's m_num_rel.c recounts the qrels for this line instead of adding the per-query
    values, and counts grade > 0 whatever ``-l`` says: with ``-l 2`` (or ``-l 0``) the line
    differs from the sum of the per-query num_rel. Under ``-c`` every judged query is
    evaluated, so ``rel_levels`` holds the whole qrels.
    """
    return int(r.rel_levels[:, 1:].sum())


def _num_rel_ret(r: Ranked, params: Any) -> list[np.ndarray]:
    return [r.num_rel_ret.astype(np.float64)]


def _num_nonrel_judged_ret(r: Ranked, params: Any) -> list[np.ndarray]:
    judged_nonrel = r.num_ret - r.num_nonpool - r.num_unjudged - r.num_rel_ret
    return [judged_nonrel.astype(np.float64)]


_TOTAL = "The summary line is the total over the evaluated queries, printed as an integer."

register(Measure(
    "runid", 0, _runid, summary="runid", value_format="string", per_query=False,
    title="the run's id",
    formula="The tag (6th field) of the run's last line.",
    edge_cases="A DataFrame or dict run without a tag column is named `run`. Not a per-query "
               "value: `evaluate` refuses it (read it from `read_run`).",
    citation=trec_eval_source("m_runid.c, get_trec_results.c"),
    matches=trec_eval_match(pytrec=False)))
register(Measure(
    "num_q", 1, _num_q, summary="count", value_format="long", per_query=False,
    title="number of evaluated queries",
    formula="The number of queries averaged: judged queries with results (every judged query "
            "with -c / `complete=True`).",
    edge_cases="No per-query value.",
    citation=trec_eval_source("m_num_q.c"),
    matches=trec_eval_match(pytrec=False)))
register(Measure(
    "num_ret", 2, _num_ret, summary="sum", value_format="long", missing_reset="default",
    title="documents retrieved",
    formula="n = the number of ranked documents of the query (after -M).",
    edge_cases=f"A query missing from the run has 0 under -c. {_TOTAL}",
    citation=trec_eval_source("m_num_ret.c"),
    matches=trec_eval_match()))
register(Measure(
    "num_rel", 3, _num_rel, summary="sum", value_format="long",
    complete_summary=complete_num_rel,
    title="relevant documents judged",
    formula="R = judged documents with grade >= the relevance level, retrieved or not.",
    edge_cases=f"{_TOTAL} Under -c trec_eval prints, as the summary, the number of judgments "
               "with grade > 0 in the whole qrels whatever -l is; the `trec-eval` command "
               "does the same, `evaluate` keeps the sum of the per-query values.",
    citation=trec_eval_source("m_num_rel.c"),
    matches=trec_eval_match()))
register(Measure(
    "num_rel_ret", 4, _num_rel_ret, summary="sum", value_format="long",
    title="relevant documents retrieved",
    formula="Rr = retrieved documents with grade >= the relevance level.",
    edge_cases=_TOTAL,
    citation=trec_eval_source("m_num_rel_ret.c"),
    matches=trec_eval_match()))
register(Measure(
    "num_nonrel_judged_ret", 35, _num_nonrel_judged_ret, summary="sum", value_format="long",
    title="judged non-relevant documents retrieved",
    formula="Retrieved documents judged with 0 <= grade < the relevance level: n − (not in "
            "the qrels) − (negative grade) − Rr.",
    edge_cases=_TOTAL,
    citation=trec_eval_source("m_num_nonrel_judged_ret.c"),
    matches=trec_eval_match()))
