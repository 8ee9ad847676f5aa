"""Offline evaluation against relevance judgments (qrels): trec_eval-exact measures and more.

Engine (this package's lower layer, see each package's docstring):

- :mod:`~onlineeval.offline.reading` — ``read_qrels`` / ``read_run`` (files, DataFrames,
  dicts) and the loaders the engine uses (pyarrow's CSV reader, a line scanner).
- :mod:`~onlineeval.offline.ranking` — ``prepare(qrels, run, ...) -> Ranked``: trec_eval's
  ranking and relevance lookup in one CSR structure over all queries.
- :mod:`~onlineeval.offline.measures` — every measure (trec_eval's and the others), declared
  with its formula, edge cases and source in one registry; the reference page
  docs/reference/offline-measures.md is generated from it.
- :mod:`~onlineeval.offline.summaries` — trec_eval's -c resets and summaries over queries.
- :mod:`~onlineeval.offline.trec_eval` — ``trec_eval(...)``: selection, summaries and the exact
  text output behind ``onlineeval trec-eval``.

User API: ``evaluate`` (familiar metric names, in ``api``), ``rbo`` (in ``rbo``) and the paired
comparison of runs ``compare`` (in ``compare``); ``onlineeval.offline.rbo`` and
``onlineeval.offline.compare`` are those modules, and calling one calls its function.
"""

from __future__ import annotations

# rbo is the module, callable as rbo(); compare too, and it is imported only when first named
# (it pulls in scipy.stats, about half a second, which evaluate and trec-eval never need);
# see onlineeval.namespace
from onlineeval.namespace import lazy_submodules
from onlineeval.offline import rbo
from onlineeval.offline.api import evaluate
from onlineeval.offline.ranking import (
    NoSharedQueriesWarning,
    QueryMismatchWarning,
    SkippedQueriesWarning,
)
from onlineeval.offline.reading import read_qrels, read_run

__all__ = ["NoSharedQueriesWarning", "QueryMismatchWarning", "SkippedQueriesWarning", "compare",
           "evaluate", "rbo", "read_qrels", "read_run"]

__getattr__ = lazy_submodules(__name__)
