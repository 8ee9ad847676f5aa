"""From ranked run rows to :class:`Ranked`: -M, -c, duplicate judgments, the CSR layout."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from onlineeval.errors import InputError
from onlineeval.offline.ranking import string_codes as sc
from onlineeval.offline.ranking.judgments import Judgments
from onlineeval.offline.ranking.query_overlap import check_overlap
from onlineeval.offline.ranking.ranked import MISSING_DOCNO, NONPOOL, Ranked
from onlineeval.offline.ranking.run_codes import RunCodes


@dataclass(frozen=True)
class Options:
    """How to prepare (the arguments of :func:`~onlineeval.offline.ranking.prepare`)."""

    relevance_level: int = 1
    max_results: int | None = None      # trec_eval -M
    complete: bool = False              # trec_eval -c
    keep_docnos: bool = False


@dataclass
class RunOrder:
    """The run's rows of judged queries in rank order (query by query, in query order)."""

    rel: np.ndarray                  # rel code of each row (Ranked.rel's type)
    score: Any                       # float64 score of each row, or a callable giving them
    counts: np.ndarray               # int64[Q]: rows per judged query (0: not in the run)
    rows: np.ndarray                 # the run row (RunCodes order) of each ranked row
    pos: np.ndarray | None           # 0-based rank within the query (when -M needs it)


def positions(counts: np.ndarray) -> np.ndarray:
    """0-based rank of each row within its query, for CSR rows with these counts."""
    starts = np.concatenate(([0], np.cumsum(counts)))[:-1]
    return np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)


def finish(judgments: Judgments, run: RunCodes, order: RunOrder, options: Options) -> Ranked:
    """Apply -M and -c, refuse duplicate judgments of evaluated queries, lay out the CSR."""
    qids, n_q = judgments.qids, judgments.n_queries
    rel, score, counts = order.rel, order.score, order.counts
    max_results, complete = options.max_results, options.complete
    docno = None
    if options.keep_docnos:
        docno = sc.to_object(sc.take(run.docno, order.rows))
    if callable(score) and (max_results is not None or complete):
        score = score()
    # a query is in the run if it has lines there, even when -M 0 keeps none of them
    # (trec_eval evaluates it on an empty ranking)
    in_run = counts > 0
    if max_results is not None:
        keep = order.pos < int(max_results)
        score, rel = score[keep], rel[keep]
        docno = docno[keep] if docno is not None else None
        counts = np.minimum(counts, int(max_results))

    check_overlap(in_run, qids, judgments.name, run.name, run.ignored, run.examples, complete)
    _refuse_duplicate_judgments(judgments, np.ones(n_q, dtype=bool) if complete else in_run)
    rel_levels = judgments.rel_levels
    if complete:
        missing = ~in_run
        if missing.any() and max_results != 0:
            # trec_eval -c: a one-document stand-in ranking (an unjudged docno, score 1);
            # -M 0 cuts it too
            where = np.concatenate(([0], np.cumsum(counts)))[:-1][missing]
            counts = np.where(missing, 1, counts)
            score = np.insert(score, where, 1.0)
            rel = np.insert(rel, where, NONPOOL)
            if docno is not None:
                docno = np.insert(docno, where, MISSING_DOCNO)
        keep_q = np.ones(n_q, dtype=bool)
    else:
        missing = np.zeros(n_q, dtype=bool)
        keep_q = in_run
    if not keep_q.all():
        counts, qids = counts[keep_q], qids[keep_q]
        rel_levels, missing = rel_levels[keep_q], missing[keep_q]
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return Ranked(
        qids=qids, offsets=offsets, rel=rel, score_source=score, rel_levels=rel_levels,
        relevance_level=options.relevance_level, missing=missing, runid=run.runid,
        n_qrels_queries=n_q, ignored_run_queries=int(run.ignored), complete=bool(complete),
        docno=docno,
    )


def _refuse_duplicate_judgments(judgments: Judgments, evaluated: np.ndarray) -> None:
    """An InputError when a query that is evaluated has a docno judged twice (trec_eval)."""
    dup_rows = judgments.duplicate_rows
    if dup_rows is None:
        return
    query = judgments.query
    bad = dup_rows[evaluated[query[dup_rows]]]
    if not len(bad):
        return
    row = int(bad[0])
    same = bad[query[bad] == query[row]]
    texts = sc.to_object(sc.take(judgments.docno, same))
    docno_text = sc.item(judgments.docno, row)
    count = int(np.count_nonzero(texts == docno_text))
    raise InputError(
        f"{judgments.name}: document {docno_text!r} is judged {count} times for query "
        f"{str(judgments.qids[query[row]])!r}; trec_eval refuses duplicate judgments too. "
        f"Keep one judgment per (qid, docno)."
    )
