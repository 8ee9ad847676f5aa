"""Offline evaluation against relevance judgments (qrels): trec_eval-exact measures and more.

Engine (this package's lower layer, see each module's docstring):

- :mod:`~onlineeval.offline.trec_format` — ``read_qrels`` / ``read_run`` (files, DataFrames,
  dicts) and the fast (pyarrow) loaders used by the engine.
- :mod:`~onlineeval.offline.ranking` — ``prepare(qrels, run, ...) -> Ranked``: trec_eval's
  ranking and relevance lookup in one CSR structure over all queries.
- :mod:`~onlineeval.offline.measures` — every trec_eval ``all_trec`` measure, registered by name.
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
from onlineeval.offline.trec_format import read_qrels, read_run

__all__ = ["NoSharedQueriesWarning", "QueryMismatchWarning", "SkippedQueriesWarning", "compare",
           "evaluate", "rbo", "read_qrels", "read_run"]

__getattr__ = lazy_submodules(__name__)
