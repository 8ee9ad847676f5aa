"""trec_eval 10.0, reproduced: measure selection, per-query values, summaries and its output.

``trec_eval(qrels, run, measures=("official",), relevance_level=1, max_results=None,
complete=False) -> TrecEvalResult`` evaluates like ``trec_eval [-c] [-M N] [-l N] -m ...``;
``TrecEvalResult.format(per_query)`` is the text trec_eval prints (``-q`` when ``per_query``).
:func:`evaluate_ranked` does the same on an already prepared
:class:`~onlineeval.offline.ranking.Ranked`, and :func:`parse_measures` turns ``-m`` arguments
into (measure, parameters) pairs.

Measure arguments (trec_eval ``mark_measure``): ``name`` or ``name.params`` (split at the
first '.'); ``official``, ``all_trec`` and ``set`` select trec_eval's sets. When a measure is
named several times, the first occurrence that carries parameters wins, as in trec_eval.
Output lines come in trec_eval's measure order, whatever the order of the arguments.

Summary over queries (the ``all`` lines): means of per-query values added in query order and
divided by the number of evaluated queries (with ``complete`` — trec_eval ``-c`` — every judged
query, missing ones scored on trec_eval's stand-in ranking); gm_map / gm_bpref are geometric
means with floor 1e-5; num_ret, num_rel, num_rel_ret and num_nonrel_judged_ret are totals;
num_q counts queries; runid is the run's tag. One exception, as in trec_eval: under ``-c`` the
``num_rel`` line counts the judgments with grade > 0 whatever ``-l`` is (so with ``-l 2`` it is
not the sum of the per-query num_rel); :func:`onlineeval.offline.evaluate` keeps the sum.

For a query missing from the run under ``complete``, trec_eval computes every measure on its
one-document stand-in ranking and then zeroes the values named ``num_ret``, ``utility``,
``rbp_resid`` and any starting ``unj``, and empties ``relstring`` (exact names: ``utility_2,...``
or ``relstring_20`` keep their stand-in values). We do the same: each measure declares its
reset (``Measure.missing_reset``; :mod:`onlineeval.offline.summaries`).

Print format (``meas_print_single.c`` / ``meas_print_final.c``): ``%-22s\\t%s\\t%6.4f`` for
values, ``%ld`` for counts, ``'%s'`` for relstring, the run id as text. An undefined value
(NaN: Rndcg without a positive ideal gain, iprec_at_recall/11pt_avg under ``-M 0``, and any
mean over such a query) prints as ``  -nan``: trec_eval's NaNs come from a C 0.0/0.0, which on
x86-64 is the negative default NaN, and glibc's printf shows its sign (Python's format would
print ``   nan``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from onlineeval.errors import InvalidParameterError
from onlineeval.offline.hugepages import no_hugepage_advice
from onlineeval.offline.measures import MEASURES, NICKNAMES, Measure, Params, ordered
from onlineeval.offline.ranking import Ranked, prepare
from onlineeval.offline.summaries import reset_missing, summary_value

if TYPE_CHECKING:
    import pandas as pd

Request = tuple[Measure, Params]


def parse_measures(specs: Sequence[str]) -> list[Request]:
    """(measure, parsed parameters) for ``-m`` arguments, in trec_eval's print order."""
    names: list[str] = []
    params_text: dict[str, str] = {}
    for spec in specs:
        name, dot, text = str(spec).partition(".")
        if name in NICKNAMES:
            if dot:
                raise InvalidParameterError(
                    f"measure set {name!r} takes no parameters; got {spec!r}"
                )
            names.extend(NICKNAMES[name])
            continue
        if name not in MEASURES or MEASURES.canonical(name) != name:
            hint = _alias_hint(name, text if dot else "")
            if hint is not None:
                raise InvalidParameterError(hint)
            MEASURES.get(name)  # unknown: raises with a did-you-mean hint
            raise InvalidParameterError(
                f"trec_eval measure names are case-sensitive: write "
                f"{MEASURES.canonical(name)!r}, not {name!r}"
            )
        names.append(name)
        if dot:
            params_text.setdefault(name, text)
    return [(m, m.parse(params_text.get(m.name))) for m in ordered(names)]


def _alias_hint(name: str, params: str) -> str | None:
    """The message for a familiar alias (``AP``, ``nDCG@10``) given to ``-m``; else None.

    trec_eval's ``-m`` takes only trec_eval's own (case-sensitive) names; the aliases belong
    to :func:`onlineeval.offline.evaluate`. Case variants of a real name return None.
    """
    head, at, cutoff = name.partition("@")
    key = f"{head}@" if at else head
    if key not in MEASURES:
        return None
    canonical = MEASURES.canonical(key)
    if canonical.lower() == key.lower():
        return None
    given = name + (f".{params}" if params else "")
    if at and cutoff:
        use = f"write {canonical}.{cutoff!s}"
    elif params:
        use = f"write {canonical}, with trec_eval's parameters after a dot"
    else:
        use = f"write {canonical}"
    return (f"{given!r} is a measure name of the Python API (onlineeval.offline.evaluate), "
            f"not of trec_eval; trec_eval calls this measure {canonical!r}: for -m {use}")


@dataclass
class TrecEvalResult:
    """Per-query values and summaries of a trec_eval run (see module docstring)."""

    ranked: Ranked
    requests: list[Request]
    values: dict[str, np.ndarray]      # value name -> per-query values (after -c fix-ups)
    summary: dict[str, Any]            # value name -> summary value (float, int or str)

    @property
    def qids(self) -> np.ndarray:
        return self.ranked.qids

    def per_query_frame(self) -> pd.DataFrame:
        """One row per evaluated query: ``qid`` then one column per value name."""
        import pandas as pd

        cols: dict[str, Any] = {"qid": self.ranked.qids.astype(str)}
        for measure, params in self.requests:
            if measure.summary in ("runid", "count"):
                continue
            for name in params.names:
                cols[name] = self.values[name]
        return pd.DataFrame(cols)

    def format(self, per_query: bool = False, summary: bool = True) -> str:
        """The text trec_eval prints (per-query lines first when ``per_query``)."""
        lines: list[str] = []
        if per_query:
            cols = [(m, n, self.values[n]) for m, p in self.requests if m.per_query
                    for n in p.names]
            for q, qid in enumerate(self.ranked.qids):
                for measure, name, vals in cols:
                    lines.append(_line(name, qid, vals[q], measure.value_format))
        if summary:
            for measure, params in self.requests:
                if measure.summary == "none":
                    continue
                for name in params.names:
                    fmt = "float" if measure.summary in ("mean", "gm") else measure.value_format
                    lines.append(_line(name, "all", self.summary[name], fmt))
        return "".join(lines)


def _line(name: str, qid: str, value: Any, fmt: str) -> str:
    # C's "%-22s\t%s\t%6.4f\n" (values), "%ld" (counts), "'%s'" (relstring)
    if fmt == "float":
        if math.isnan(value):
            return f"{name:<22}\t{qid}\t{'-nan':>6}\n"
        return f"{name:<22}\t{qid}\t{value:6.4f}\n"
    if fmt == "long":
        return f"{name:<22}\t{qid}\t{int(value)}\n"
    if name.startswith("relstring"):
        return f"{name:<22}\t{qid}\t'{value}'\n"
    return f"{name:<22}\t{qid}\t{value}\n"


def evaluate_ranked(ranked: Ranked, measures: Sequence[str] = ("official",)) -> TrecEvalResult:
    """Compute the requested measures on a prepared ranking, trec_eval's way."""
    requests = parse_measures(measures)
    values: dict[str, np.ndarray] = {}
    summary: dict[str, Any] = {}
    for measure, params in requests:
        arrays = measure.compute(ranked, params.values)
        for name, arr in zip(params.names, arrays, strict=True):
            values[name] = reset_missing(measure, name, np.array(arr, copy=True), ranked)
            summary[name] = summary_value(measure, values[name], ranked,
                                          as_trec_eval_prints=True)
    return TrecEvalResult(ranked, requests, values, summary)


def trec_eval(qrels: Any, run: Any, measures: Sequence[str] = ("official",),
              relevance_level: int = 1, max_results: int | None = None,
              complete: bool = False) -> TrecEvalResult:
    """Evaluate ``run`` against ``qrels`` exactly as trec_eval 10.0 does.

    Parameters
    ----------
    qrels, run : path, DataFrame or dict
        See :func:`onlineeval.offline.read_qrels` / :func:`~onlineeval.offline.read_run`.
    measures : sequence of str
        trec_eval ``-m`` arguments: names, ``name.params`` or the sets ``official``,
        ``all_trec``, ``set``.
    relevance_level : int
        ``-l``: the minimum grade that counts as relevant.
    max_results : int, optional
        ``-M``: evaluate only the first N ranked documents of each query.
    complete : bool
        ``-c``: average over every judged query; queries missing from the run score as
        trec_eval scores them.
    """
    if max_results is not None and int(max_results) < 0:
        raise InvalidParameterError(f"max_results (-M) must be >= 0, got {max_results}")
    parse_measures(measures)  # fail on a bad measure name before reading big files
    with no_hugepage_advice():  # a performance hint only (see offline.hugepages)
        ranked = prepare(qrels, run, relevance_level=relevance_level, max_results=max_results,
                         complete=complete)
        return evaluate_ranked(ranked, measures)
