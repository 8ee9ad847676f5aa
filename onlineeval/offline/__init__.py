"""Offline evaluation against relevance judgments (qrels): trec_eval-exact measures and more.

Engine (this package's lower layer, see each module's docstring):

- :mod:`~onlineeval.offline.trec_format` — ``read_qrels`` / ``read_run`` (files, DataFrames,
  dicts) and the fast (pyarrow) loaders used by the engine.
- :mod:`~onlineeval.offline.ranking` — ``prepare(qrels, run, ...) -> Ranked``: trec_eval's
  ranking and relevance lookup in one CSR structure over all queries.
- :mod:`~onlineeval.offline.measures` — every trec_eval ``all_trec`` measure, registered by name.
- :mod:`~onlineeval.offline.trec_eval` — ``trec_eval(...)``: selection, summaries and the exact
  text output behind ``onlineeval trec-eval``.

User API: ``evaluate`` (familiar metric names) and ``rbo`` live in ``api`` / ``rbo``.
"""

from __future__ import annotations

from typing import Any

from onlineeval.offline.trec_format import read_qrels, read_run

__all__ = ["evaluate", "rbo", "read_qrels", "read_run"]


def __getattr__(name: str) -> Any:
    # evaluate and rbo come from modules built on this engine; import them on first use so
    # the readers and the trec_eval engine never depend on them.
    if name == "evaluate":
        from onlineeval.offline.api import evaluate
        return evaluate
    if name == "rbo":
        from onlineeval.offline.rbo import rbo
        return rbo
    raise AttributeError(f"module 'onlineeval.offline' has no attribute {name!r}")
