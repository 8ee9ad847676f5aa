"""``prepare(qrels, run, ...) -> Ranked``: read, join and rank a qrels + run pair.

The steps, each in its own module: read (:mod:`onlineeval.offline.reading`), encode the
judgments (:mod:`~.judgments`) and the run (:mod:`~.run_codes`), rank the run and look up each
row's relevance — by query blocks for the usual layout (:mod:`~.grouped_sort`), else by a
general sort (:mod:`~.general_sort`) — and lay out the result (:mod:`~.layout`). After reading
everything is integer work on numpy arrays; no Python loop runs per query or per document.
Peak memory is about 0.8–1.0 GB for 10M run lines (end to end, reading included;
bench/offline_bench.py).
"""

from __future__ import annotations

from typing import Any

from onlineeval.errors import InvalidParameterError
from onlineeval.offline.hugepages import no_hugepage_advice
from onlineeval.offline.ranking import general_sort, grouped_sort
from onlineeval.offline.ranking.judgments import encode_judgments
from onlineeval.offline.ranking.layout import Options, finish
from onlineeval.offline.ranking.ranked import Ranked
from onlineeval.offline.ranking.run_codes import encode_run
from onlineeval.offline.reading import Columns, load_qrels, load_run


def prepare(qrels: Any, run: Any, relevance_level: int = 1, max_results: int | None = None,
            complete: bool = False, keep_docnos: bool = False) -> Ranked:
    """Join a run with its qrels and rank it as trec_eval does.

    Parameters
    ----------
    qrels, run : path, DataFrame or dict
        Anything :func:`onlineeval.offline.read_qrels` / ``read_run`` accept.
    relevance_level : int
        Minimum grade counted as relevant (trec_eval ``-l``).
    max_results : int, optional
        Keep only the first ``max_results`` ranked documents per query (trec_eval ``-M``).
    complete : bool
        Evaluate every judged query, giving those missing from the run trec_eval's stand-in
        ranking (trec_eval ``-c``).
    keep_docnos : bool
        Also return the ranked docnos (``Ranked.docno``); costs memory on big runs.

    Raises
    ------
    InputError
        Duplicated documents, or no query with both judgments and results.
    InvalidParameterError
        A negative ``relevance_level`` or ``max_results``.

    Warns
    -----
    NoSharedQueriesWarning, SkippedQueriesWarning
        The qrels and run disagree on their queries (package docstring).
    """
    if max_results is not None and int(max_results) < 0:
        raise InvalidParameterError(f"max_results must be >= 0, got {max_results}")
    if int(relevance_level) < 0:
        # below 0 a retrieved document missing from the qrels counts as a relevant hit while
        # the number of relevant documents counts judged ones only (recall above 1); trec_eval
        # itself is inconsistent there (map and P count such hits, num_rel_ret, set_P and
        # iprec_at_recall do not), so no number can be vouched for
        raise InvalidParameterError(
            f"relevance_level must be >= 0 (trec_eval -l); got {relevance_level}. Use 0 to "
            f"count every judged document as relevant"
        )
    options = Options(int(relevance_level), None if max_results is None else int(max_results),
                      bool(complete), bool(keep_docnos))
    with no_hugepage_advice():
        # no local references: prepare_columns frees the run's columns once encoded
        return prepare_columns(load_qrels(qrels), load_run(run), options)


def prepare_columns(q: Columns, r: Columns, options: Options) -> Ranked:
    """:func:`prepare` on columns already read (the callers keep no reference to ``r``)."""
    judgments = encode_judgments(q)
    del q
    run = encode_run(r, judgments)
    del r
    order = grouped_sort.rank_groups(run, judgments, options)
    if order is None:
        order = general_sort.rank_rows(run, judgments, options)
    return finish(judgments, run, order, options)
