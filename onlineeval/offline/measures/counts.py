"""Counting measures: runid, num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret.

Matches trec_eval 10.0 ``m_runid.c``, ``m_num_q.c``, ``m_num_ret.c``, ``m_num_rel.c``,
``m_num_rel_ret.c``, ``m_num_nonrel_judged_ret.c``. Per query (all integers):

- ``num_ret``: documents ranked for the query (after ``-M``). With ``-c`` a query missing
  from the run has 0.
- ``num_rel``: judged documents with grade >= relevance level (whether retrieved or not).
- ``num_rel_ret``: retrieved documents with grade >= relevance level.
- ``num_nonrel_judged_ret``: retrieved documents judged with 0 <= grade < relevance level
  (``num_ret - not in qrels - negative grade - num_rel_ret``).

Summaries are totals over queries, printed as integers (not means). ``num_q`` is the number of
evaluated queries; ``runid`` prints the run's tag (last line of the run file). Neither has a
per-query line.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from onlineeval.offline.measures.base import TrecMeasure, register
from onlineeval.offline.ranking import Ranked


def _runid(r: Ranked, params: Any) -> list[np.ndarray]:
    return [np.zeros(r.n_queries)]


def _num_q(r: Ranked, params: Any) -> list[np.ndarray]:
    return [np.ones(r.n_queries)]


def _num_ret(r: Ranked, params: Any) -> list[np.ndarray]:
    return [r.num_ret.astype(np.float64)]


def _num_rel(r: Ranked, params: Any) -> list[np.ndarray]:
    return [r.num_rel.astype(np.float64)]


def _num_rel_ret(r: Ranked, params: Any) -> list[np.ndarray]:
    return [r.num_rel_ret.astype(np.float64)]


def _num_nonrel_judged_ret(r: Ranked, params: Any) -> list[np.ndarray]:
    judged_nonrel = r.num_ret - r.num_nonpool - r.num_unjudged - r.num_rel_ret
    return [judged_nonrel.astype(np.float64)]


RUNID = register(TrecMeasure("runid", 0, _runid, summary="runid", value_format="string",
                             per_query=False, doc="the run's tag"))
NUM_Q = register(TrecMeasure("num_q", 1, _num_q, summary="count", value_format="long",
                             per_query=False, doc="number of evaluated queries"))
NUM_RET = register(TrecMeasure("num_ret", 2, _num_ret, summary="sum", value_format="long",
                               doc="documents retrieved"))
NUM_REL = register(TrecMeasure("num_rel", 3, _num_rel, summary="sum", value_format="long",
                               doc="relevant documents judged"))
NUM_REL_RET = register(TrecMeasure("num_rel_ret", 4, _num_rel_ret, summary="sum",
                                   value_format="long", doc="relevant documents retrieved"))
NUM_NONREL_JUDGED_RET = register(TrecMeasure(
    "num_nonrel_judged_ret", 35, _num_nonrel_judged_ret, summary="sum", value_format="long",
    doc="judged non-relevant documents retrieved"))
