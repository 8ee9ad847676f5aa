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
comparison of runs ``compare`` (in ``compare``).
"""

from __future__ import annotations

from onlineeval.offline.api import evaluate
from onlineeval.offline.compare import compare
from onlineeval.offline.rbo import rbo
from onlineeval.offline.trec_format import read_qrels, read_run

# Importing each function after its module keeps the package attribute bound to the function
# (``onlineeval.offline.compare(...)``) even though a submodule of the same name exists: Python
# binds a submodule to its package only when it first loads it, which happens just above.
__all__ = ["compare", "evaluate", "rbo", "read_qrels", "read_run"]
