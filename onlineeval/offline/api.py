"""``evaluate``: judged measures by name, per query or averaged, on the trec_eval engine.

Measure names
    Every name resolves through one registry, :data:`onlineeval.offline.measures.MEASURES` —
    the one the ``trec-eval`` command reads — by :func:`~onlineeval.offline.measures.names.
    parse_measure` (accepted forms there; every measure in docs/reference/offline-measures.md):
    trec_eval's names (``ndcg_cut.10``, ``P_10``), ``NAME@K`` (``nDCG@10``, ``MRR@10``,
    ``F0.5@10``), aliases (``AP``, ``R-prec``) and options (``ERR@10(gmax=4)``). Output columns
    carry canonical names: trec_eval's value names for trec_eval measures (``nDCG@10`` →
    ``ndcg_cut_10``, ``AP`` → ``map``) and ``STEM@K`` for the others (``MRR@10`` → ``RR@10``).
    Asking for the same value twice yields one column.

Which queries, and the summary row
    As trec_eval: the queries that have judgments and results (a run query without judgments
    is ignored, a judged query missing from the run is skipped — with a
    ``SkippedQueriesWarning`` — unless ``complete=True``, which is ``trec_eval -c``: it then
    scores 0 on every measure; see :mod:`onlineeval.offline.ranking` for the warnings). The summary is trec_eval's: the
    arithmetic mean over those queries (summed in qid byte order), the geometric mean for
    ``gm_map``/``gm_bpref``, totals for ``num_ret``/``num_rel``/``num_rel_ret``/
    ``num_nonrel_judged_ret``; ``num_q`` is the number of queries averaged.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from onlineeval.errors import InvalidParameterError
from onlineeval.offline.hugepages import no_hugepage_advice
from onlineeval.offline.measures.base import Measure
from onlineeval.offline.measures.names import MeasureSpec, parse_measure
from onlineeval.offline.ranking import Ranked, prepare
from onlineeval.offline.reading import Labelled, read_run
from onlineeval.offline.summaries import reset_missing, summary_value

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["as_run_frame", "evaluate", "pr_curve"]


def _import_in_background(name: str) -> None:
    """Start importing module ``name`` in a daemon thread, unless it is already imported.

    ``evaluate`` returns a pandas DataFrame but needs pandas for nothing else; importing it
    (about 0.2 s, mostly Python bytecode) overlaps with reading the files, whose parsing runs
    in pyarrow threads without the GIL. A later ``import`` in the caller waits for this one
    (Python's per-module import lock) and raises any import error itself.
    """
    if name in sys.modules:
        return

    def load() -> None:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001  (the caller's own import reports it)
            return

    threading.Thread(target=load, name=f"import-{name}", daemon=True).start()


def _compute(specs: list[MeasureSpec],
             ranked: Ranked) -> tuple[dict[str, np.ndarray], dict[str, Measure]]:
    """Per-query values of every requested value name, and the measure that gave each."""
    columns: dict[str, np.ndarray] = {}
    owner: dict[str, Measure] = {}
    for spec in specs:
        if spec.measure.summary == "runid":
            raise InvalidParameterError(
                f"measure {spec.text!r} is the run's id, not a per-query value; read it "
                f"with onlineeval.offline.read_run(...)['tag'] instead"
            )
        new = [n for n in spec.names if n not in columns]
        if not new:
            continue
        for value_name, values in zip(spec.names, spec.compute(ranked), strict=True):
            if value_name in columns:
                continue
            columns[value_name] = reset_missing(spec.measure, value_name, np.asarray(values),
                                                ranked)
            owner[value_name] = spec.measure
    return columns, owner


def evaluate(
    qrels: Any, run: Any, measures: Sequence[str] | str, per_query: bool = False,
    relevance_level: int = 1, *, complete: bool = False, run_label: str = "run",
) -> pd.DataFrame:
    """Score a run against relevance judgments.

    Parameters
    ----------
    qrels : path to a TREC qrels file, DataFrame (qid, docno, rel) or ``{qid: {docno: rel}}``.
    run : path to a TREC run file, DataFrame (qid, docno, score) or
        ``{qid: {docno: score}}``. Ranked as trec_eval ranks: score descending, ties by docno
        descending; the rank column is ignored.
    measures : one name or a list (see the module docstring for the accepted forms).
    per_query : one row per query instead of the summary row.
    relevance_level : grade (>= 0) from which a document counts as relevant (trec_eval ``-l``).
    complete : also score judged queries absent from the run, as 0 (trec_eval ``-c``).
    run_label : names a DataFrame or dict run in error messages (a bad score, a duplicate
        document, no query in common), so a caller scoring several runs can say which one is
        bad, e.g. ``"second run (run_b)"``; a file is named by its path and line instead.

    Returns
    -------
    DataFrame
        ``per_query``: column ``qid`` then one column per measure value, one row per evaluated
        query in qid byte order. Otherwise a single row: one column per measure value with
        trec_eval's summary (the mean for almost all), then ``num_q``.

    Raises
    ------
    UnknownNameError, InvalidParameterError
        A measure name or parameter is not valid.
    InputError (LogFormatError, SchemaError)
        The qrels or run cannot be read, a document is listed twice, or no query has both
        judgments and results.
    """
    if isinstance(measures, str):
        measures = [measures]
    if not isinstance(measures, Sequence | set | frozenset):
        raise InvalidParameterError(
            f"measures must be a name or a list of names, e.g. ['ndcg@10', 'AP']; got "
            f"{type(measures).__name__}"
        )
    measures = list(measures)
    if not measures:
        raise InvalidParameterError("evaluate needs at least one measure name, e.g. ['ndcg@10']")
    if not isinstance(run_label, str) or not run_label:
        raise InvalidParameterError(
            f"run_label must be a non-empty string naming the run; got {run_label!r}"
        )
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, int | np.integer):
        raise InvalidParameterError(
            f"relevance_level must be an integer grade (trec_eval -l); got {relevance_level!r}"
        )
    specs = [parse_measure(m) for m in measures]
    _import_in_background("pandas")  # needed for the result only; loads while files are read
    with no_hugepage_advice():
        ranked = prepare(qrels, Labelled(run, run_label), relevance_level=int(relevance_level),
                         complete=complete)
        columns, owner = _compute(specs, ranked)

    import pandas as pd

    if per_query:
        out = pd.DataFrame({"qid": ranked.qids.astype(str)})
        for value_name, values in columns.items():
            if owner[value_name].summary != "count":  # num_q: not per query
                out[value_name] = values
        return out
    row = {name: [summary_value(owner[name], vals, ranked)] for name, vals in columns.items()}
    row["num_q"] = [ranked.n_queries]
    return pd.DataFrame(row)


def pr_curve(qrels: Any, run: Any, relevance_level: int = 1) -> pd.DataFrame:
    """Points of the interpolated precision–recall curve, for plotting.

    trec_eval's ``iprec_at_recall`` averaged over queries: at recall levels 0.0, 0.1, ..., 1.0
    the interpolated precision ``max_{r' >= r} P(r')``. Returns columns ``recall`` and
    ``precision`` (11 rows); their mean is ``11pt_avg``.
    """
    import pandas as pd

    out = evaluate(qrels, run, ["iprec_at_recall"], relevance_level=relevance_level)
    cols = [c for c in out.columns if c.startswith("iprec_at_recall_")]
    return pd.DataFrame({
        "recall": [float(c.rsplit("_", 1)[1]) for c in cols],
        "precision": [float(out[c].iloc[0]) for c in cols],
    })


def as_run_frame(run: Any, what: str = "run") -> pd.DataFrame:
    """A run (path, DataFrame or ``{qid: {docno: score}}``) as DataFrame (qid, docno, score).

    Validated as :func:`~onlineeval.offline.reading.read_run` validates it. ``what`` names
    a DataFrame or dict input in error messages (e.g. ``"rbo second run (run_b)"``), so a
    caller taking several runs can say which one is bad; a file is named by its path and line.
    """
    return read_run(Labelled(run, what))[["qid", "docno", "score"]]
