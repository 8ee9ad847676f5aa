"""``evaluate``: judged measures by name, per query or averaged, on the trec_eval engine.

Measure names
    Every name resolves through one registry, :data:`onlineeval.offline.measures.base.MEASURES`
    — the one the ``trec-eval`` command reads. It holds trec_eval's measures, the measures of
    :mod:`onlineeval.offline.extra_measures`, and the familiar spellings as aliases. Lookups are
    case-insensitive. A name is read as

    * a registered name or alias without parameters: ``map``, ``AP``, ``MRR``, ``R-prec``,
      ``ndcg``, ``11pt`` (= ``11pt_avg``), ``pr_curve`` (= ``iprec_at_recall``), ``bpref``;
    * ``NAME@K`` (familiar form; ``K`` a positive integer or a comma-separated list):
      ``P@10``, ``R@100``, ``nDCG@10`` (= trec_eval ``ndcg_cut_10``, linear gain),
      ``AP@10`` / ``MAP@10`` (= ``map_cut_10``: divisor is the number of relevant documents,
      as trec_eval and BEIR), ``success@1``, ``RR@10`` / ``MRR@10``, ``nDCG_exp@10``,
      ``DCG@10``, ``DCG_exp@10``, ``CG@10``, ``ERR@10``, ``R_cap@10``, ``Best@10``,
      ``fallout@10``, ``judged@10``, ``F@10`` / ``F1@10`` / ``F0.5@10`` (β in the name);
    * trec_eval's ``-m`` syntax ``NAME.PARAMS`` (``P.5,10``, ``ndcg.1=3,2=9``) or its printed
      value names ``NAME_PARAM`` (``P_10``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``);
    * options in parentheses after any extra measure: ``ERR@10(gmax=4)``, ``F@10(beta=2)``.

    Output columns carry canonical names: trec_eval's value names for trec_eval measures
    (``nDCG@10`` → ``ndcg_cut_10``, ``AP`` → ``map``, ``MRR`` → ``recip_rank``) and
    ``STEM@K`` for the others (``MRR@10`` → ``RR@10``, ``F@10`` → ``F1@10``). Asking for the
    same value twice yields one column.

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
import re
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from onlineeval.errors import InvalidParameterError
from onlineeval.offline import extra_measures as _extra  # registers extras and aliases
from onlineeval.offline.measures.base import MEASURES, Params
from onlineeval.offline.ranking import Ranked, no_hugepage_advice, prepare
from onlineeval.offline.trec_eval import _fix_missing, _sequential_sum
from onlineeval.offline.trec_format import Labelled, read_run

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MeasureSpec", "as_run_frame", "evaluate", "parse_measure", "pr_curve"]

_OPTIONS = re.compile(r"^(?P<head>[^()]*)\((?P<opts>[^()]*)\)$")
_AT = re.compile(r"^(?P<base>[^@]+)@(?P<params>[^@]*)$")
_UNDERSCORE = re.compile(r"^(?P<base>.+?)_(?P<params>[0-9]+(?:\.[0-9]+)?)$")
_FBETA = re.compile(r"^f(?P<beta>[0-9]+(?:\.[0-9]+)?)$", re.IGNORECASE)
_CUTOFFS = re.compile(r"^[0-9]+(?:,[0-9]+)*$")


@dataclass(frozen=True)
class MeasureSpec:
    """A parsed measure name: the registry entry, its parameters and its value names."""

    text: str
    measure: Any
    params: Params

    @property
    def names(self) -> tuple[str, ...]:
        return self.params.names

    def compute(self, ranked: Ranked) -> list[np.ndarray]:
        return list(self.measure.compute(ranked, self.params.values))


def _parse_options(text: str, name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise InvalidParameterError(
                f"measure {name!r}: option {item!r} is not key=value; write e.g. "
                f"ERR@10(gmax=4) or F@10(beta=2)"
            )
        out[key.strip().lower()] = value.strip()
    return out


def parse_measure(name: str) -> MeasureSpec:
    """Resolve one measure name (see the module docstring) to a :class:`MeasureSpec`.

    Raises
    ------
    UnknownNameError
        The name is not a measure (the message suggests the closest one).
    InvalidParameterError
        The parameters or options do not fit the measure.
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidParameterError(f"a measure name must be a non-empty string; got {name!r}")
    text = name.strip()
    options: dict[str, str] = {}
    m = _OPTIONS.match(text)
    if m:
        text = m.group("head").strip()
        options = _parse_options(m.group("opts"), name)

    measure: Any = None
    params_text: str | None = None
    if text in MEASURES and not text.endswith("@"):
        measure = MEASURES.get(text)
    elif (m := _AT.match(text)) is not None:
        base, params_text = m.group("base"), m.group("params")
        if not _CUTOFFS.match(params_text) or any(int(c) < 1 for c in params_text.split(",")):
            raise InvalidParameterError(
                f"measure {name!r}: the cutoff after '@' must be a positive integer (or a "
                f"comma-separated list), e.g. {base}@10"
            )
        if (fb := _FBETA.match(base)) is not None:
            measure = MEASURES.get("F")
            if "beta" in options:
                raise InvalidParameterError(
                    f"measure {name!r}: beta is given twice (in the name and as an option)"
                )
            options["beta"] = fb.group("beta")
        elif f"{base}@" in MEASURES:
            measure = MEASURES.get(f"{base}@")
        else:
            measure = MEASURES.get(base)
        if measure.params != "cutoffs":
            raise InvalidParameterError(
                f"measure {name!r}: {measure.name!r} does not take a rank cutoff '@k'"
                + ("" if measure.params == "none" else
                   f"; give its parameters as {measure.name}.PARAMS")
            )
    elif "." in text and text.split(".", 1)[0] in MEASURES:
        base, params_text = text.split(".", 1)
        measure = MEASURES.get(base)
    elif (m := _UNDERSCORE.match(text)) is not None and m.group("base") in MEASURES:
        measure, params_text = MEASURES.get(m.group("base")), m.group("params")
    else:
        MEASURES.get(text)  # raises UnknownNameError with a did-you-mean hint

    if isinstance(measure, _extra.ExtraMeasure):
        params = measure.parse(params_text, options)
    else:
        if options:
            raise InvalidParameterError(
                f"measure {name!r}: trec_eval measure {measure.name!r} takes no options in "
                f"parentheses; give its parameters as {measure.name}.PARAMS"
            )
        params = measure.parse(params_text)
    return MeasureSpec(text=name, measure=measure, params=params)


def _summary(measure: Any, values: np.ndarray, n_q: int) -> Any:
    """trec_eval's summary of one value over the evaluated queries (see module docstring)."""
    kind = getattr(measure, "summary", "mean")
    if kind == "sum":
        return int(np.asarray(values, dtype=np.float64).sum())
    if kind == "count":
        return n_q
    if kind in ("none", "runid"):
        return None
    mean = _sequential_sum(values) / n_q
    return float(np.exp(mean)) if kind == "gm" else mean


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
             ranked: Ranked) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Per-query values of every requested value name, and the measure that gave each."""
    columns: dict[str, np.ndarray] = {}
    owner: dict[str, Any] = {}
    for spec in specs:
        if getattr(spec.measure, "summary", "mean") == "runid":
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
            columns[value_name] = _fix_missing(value_name, np.asarray(values), ranked.missing)
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
            if getattr(owner[value_name], "summary", "mean") != "count":  # num_q: not per query
                out[value_name] = values
        return out
    n_q = ranked.n_queries
    row = {name: [_summary(owner[name], vals, n_q)] for name, vals in columns.items()}
    row["num_q"] = [n_q]
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

    Validated as :func:`~onlineeval.offline.trec_format.read_run` validates it. ``what`` names
    a DataFrame or dict input in error messages (e.g. ``"rbo second run (run_b)"``), so a
    caller taking several runs can say which one is bad; a file is named by its path and line.
    """
    return read_run(Labelled(run, what))[["qid", "docno", "score"]]
