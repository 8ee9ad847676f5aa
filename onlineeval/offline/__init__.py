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
comparison of runs ``compare`` (in ``compare``).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from onlineeval.offline.api import evaluate
from onlineeval.offline.ranking import (
    NoSharedQueriesWarning,
    QueryMismatchWarning,
    SkippedQueriesWarning,
)
from onlineeval.offline.rbo import rbo
from onlineeval.offline.reading import read_qrels, read_run

__all__ = ["NoSharedQueriesWarning", "QueryMismatchWarning", "SkippedQueriesWarning", "compare",
           "evaluate", "rbo", "read_qrels", "read_run"]


class _Package(types.ModuleType):
    """This package, with ``compare`` loaded on first use.

    ``compare`` pulls in scipy.stats (about half a second), which ``evaluate`` and the
    trec-eval command never need. The package attribute ``compare`` is the function even
    though a submodule of that name exists: Python binds a submodule to its package by
    ``setattr`` when it loads it, and this class turns that binding into the function.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "compare" and isinstance(value, types.ModuleType):
            value = value.compare
        super().__setattr__(name, value)

    def __getattr__(self, name: str) -> Any:
        if name == "compare":
            import onlineeval.offline.compare  # noqa: F401  (binds the function, see above)

            return self.__dict__["compare"]
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")


sys.modules[__name__].__class__ = _Package
