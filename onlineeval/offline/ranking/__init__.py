"""The prepared (ranked, judged) form of a qrels + run pair that every measure reads.

``prepare(qrels, run, relevance_level=1, max_results=None, complete=False) -> Ranked``

Which queries are evaluated (trec_eval 10.0, ``trec_eval.c``)
    Queries are those of the qrels, in byte order of their qid (C ``strcmp``; so "10" sorts
    before "9"). A run query without judgments is ignored (counted in
    ``Ranked.ignored_run_queries``). A judged query missing from the run is skipped, unless
    ``complete=True`` (``trec_eval -c``): then it gets trec_eval's stand-in ranking of one
    unjudged document and ``Ranked.missing`` marks it; each measure declares what trec_eval
    then resets for it (num_ret, utility, unj, rbp_resid, relstring).

When the queries of the two sides disagree (:class:`QueryMismatchWarning`, also printed by
the CLI)
    * no judged query has results: without ``complete`` an :class:`InputError` (trec_eval:
      "No queries with both results and relevance info"); with it a
      :class:`NoSharedQueriesWarning`, since every judged query would be scored on the
      stand-in ranking — numbers that look like a run's but only say the qids do not match;
    * without ``complete``, some judged queries have no results: a
      :class:`SkippedQueriesWarning` with their count, since leaving them out raises the
      means (trec_eval 10.0 stops with an error here, trec_eval 9 skipped them silently; we
      skip them, as documented, and say so);
    * run queries without judgments are ignored without a warning (``ignored_run_queries``
      counts them): a run over more queries than were judged is normal. Both messages give a
      few qids of each side, which shows a mismatch such as ``301`` against ``q301``.

Ranking (``form_res_rels.c``)
    Within a query documents are ordered by score descending; equal scores are ordered by
    docno descending in byte order (strcmp(b, a)). The run's rank column is never used.
    ``max_results=M`` (``-M``) keeps the first M documents of that order.
    A document listed twice for one query (within the kept M) is an error, as in trec_eval
    ("duplicate docs"); so is a document judged twice for one evaluated query.

Relevance of a retrieved document — ``Ranked.rel`` (one per retrieved row; int8 when the
grades fit, see :func:`rel_dtype`)
    the qrels grade (>= 0) if judged; ``NONPOOL = -1`` if the docno is not in the qrels for
    that query; ``UNJUDGED = -2`` if it is in the qrels with a negative grade (trec_eval's
    "in the pool but unjudged"; such judgments also do not count in ``rel_levels``).
    A document is *relevant* when ``rel >= relevance_level`` (``-l``, default 1); a judged
    document with ``0 <= rel < relevance_level`` is judged non-relevant.

Modules (each one job)
    :mod:`~.ranked`          the :class:`Ranked` structure and its per-row helpers
    :mod:`~.preparation`     ``prepare``: the steps below, in order
    :mod:`~.judgments`       the qrels encoded: queries in byte order, grade counts
    :mod:`~.run_codes`       the run encoded against the judged queries
    :mod:`~.string_codes`    codes, byte-order ranks and lookups of string columns
    :mod:`~.docno_keys`      hashed docno keys, exact comparison and ranks of chosen rows
    :mod:`~.grouped_sort`    ranking and relevance of the usual layout (one block per query)
    :mod:`~.general_sort`    ranking of any other layout; the duplicate-document error
    :mod:`~.layout`          -M, -c, duplicate judgments, the final CSR layout
    :mod:`~.query_overlap`   the error and warnings when the two sides' queries differ
"""

from onlineeval.offline.ranking.preparation import prepare
from onlineeval.offline.ranking.query_overlap import (
    NoSharedQueriesWarning,
    QueryMismatchWarning,
    SkippedQueriesWarning,
)
from onlineeval.offline.ranking.ranked import (
    MISSING_DOCNO,
    NONPOOL,
    UNJUDGED,
    Ranked,
    rel_dtype,
)

__all__ = ["MISSING_DOCNO", "NONPOOL", "UNJUDGED", "NoSharedQueriesWarning",
           "QueryMismatchWarning", "Ranked", "SkippedQueriesWarning", "prepare", "rel_dtype"]
