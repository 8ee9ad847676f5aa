"""Judged measures that trec_eval does not have, computed on the engine's ranked form.

Each function takes a :class:`onlineeval.offline.ranking.Ranked` (the run ranked exactly as
trec_eval ranks it, joined with the qrels; see that module) and returns one float64 per
evaluated query. Which queries are evaluated, ranking and tie-breaking are the engine's
(trec_eval's) rules, so these measures and the trec_eval ones always score the same lists.

Conventions shared by every measure here
    * rank ``r`` counts from 1; ``k`` is a cutoff (``None``: the whole list). When the list is
      shorter than ``k`` the missing positions contribute nothing (gain 0, not relevant, not
      judged); judged@k still divides by ``k``, as trec_eval's P@k does.
    * A retrieved document without a qrels line (``NONPOOL``) is unjudged: gain 0, not
      relevant, not judged. A qrels line with a *negative* grade (``UNJUDGED``) is read as
      trec_eval reads it — in the pool but not judged (its bpref and num_nonrel_judged_ret
      skip such documents): gain 0, not relevant, not judged, not judged non-relevant.
    * *relevant* means grade >= ``relevance_level`` (trec_eval's ``-l``, default 1; must be
      >= 0 here). Graded measures (CG, DCG, DCG_exp, nDCG_exp, ERR) use the grades themselves
      and ignore ``relevance_level``, as trec_eval's ndcg does: a grade-1 document still has
      gain 1 at ``-l 2``. Best compares grades and needs the top grade to be relevant.
    * A query with no relevant document scores 0 on RR, R_cap, F and Best (trec_eval's rule
      for its own measures). The graded measures score 0 when the query has no positive
      grade (CG, DCG, ERR: nothing retrieved has one; nDCG_exp: IDCG = 0). fallout@k and
      judged@k do not depend on relevant documents.
    * An empty result list scores 0 everywhere.

Discount ``1 / log2(r + 1)`` as in trec_eval's ndcg. Linear gain = grade (trec_eval's ndcg,
Järvelin & Kekäläinen 2002); exponential gain = ``2^grade - 1`` (Burges et al. 2005).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import onlineeval.offline.measures  # noqa: F401  (registers trec_eval's measures first)
from onlineeval.errors import InvalidParameterError
from onlineeval.offline.measures.base import MEASURES, Params, ratio
from onlineeval.offline.ranking import Ranked

__all__ = [
    "ExtraMeasure", "best", "cg", "dcg", "err", "f_measure", "fallout", "ideal_dcg", "judged",
    "max_judged_grade", "ndcg_exp", "recall_capped", "reciprocal_rank",
]


def check_cutoff(k: object) -> None:
    """Raise unless ``k`` is None or a positive integer."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1):
        raise InvalidParameterError(f"a cutoff k must be a positive integer; got {k!r}")


def _top(data: Ranked, k: int | None) -> np.ndarray:
    """Boolean mask of the rows at ranks <= k."""
    check_cutoff(k)
    if k is None:
        return np.ones(len(data.rel), dtype=bool)
    return data.pos < k


def _relevant(data: Ranked) -> np.ndarray:
    """``data.is_rel``, refusing a negative relevance level.

    Below 0 the engine's codes for "not in the qrels" (-1) and "negative grade" (-2) would
    pass ``rel >= level`` while |R| counts judged grades >= 0 only, so a measure could count
    an unjudged document as a relevant hit (R_cap above 1). Level 0 already makes every judged
    document relevant, so nothing is lost.
    """
    if data.relevance_level < 0:
        raise InvalidParameterError(
            f"relevance_level must be >= 0 for the measures beyond trec_eval (RR@k, R_cap, "
            f"F, fallout, Best); got {data.relevance_level}. Use 0 to count every judged "
            f"document as relevant"
        )
    return data.is_rel


def _sum(data: Ranked, mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per-query sum of ``values`` over the rows in ``mask``."""
    return np.bincount(data.seg[mask], weights=values[mask],
                       minlength=data.n_queries).astype(np.float64)


def _gain(grade: np.ndarray, exponential: bool) -> np.ndarray:
    # NONPOOL / UNJUDGED rows (negative codes) carry no gain
    g = np.maximum(grade, 0).astype(np.float64)
    return np.exp2(g) - 1.0 if exponential else g


def _discount(pos: np.ndarray) -> np.ndarray:
    return 1.0 / np.log2(pos + 2.0)


def max_judged_grade(data: Ranked) -> np.ndarray:
    """Highest grade >= 0 judged for each query (-1 when it has no such judgment)."""
    present = data.rel_levels > 0
    highest = present.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1)
    return np.where(present.any(axis=1), highest, -1).astype(np.int64)


def cg(data: Ranked, k: int | None = None) -> np.ndarray:
    """CG@k, cumulated gain: ``Σ_{r<=k} g_r`` with linear gain (unjudged/negative → 0)."""
    top = _top(data, k)
    return _sum(data, top, _gain(data.rel, False))


def dcg(data: Ranked, k: int | None = None, exponential: bool = False) -> np.ndarray:
    """DCG@k = ``Σ_{r<=k} gain(g_r) / log2(r + 1)``; unnormalised, not bounded by 1.

    Linear gain (``DCG@k``: the numerator of trec_eval's ndcg_cut) or exponential gain
    ``2^g - 1`` (``DCG_exp@k``, Burges et al.).
    """
    top = _top(data, k)
    return _sum(data, top, _gain(data.rel, exponential) * _discount(data.pos))


def ideal_dcg(data: Ranked, k: int | None = None, exponential: bool = False) -> np.ndarray:
    """DCG@k of the ideal ranking: the query's judged positive grades, highest first."""
    check_cutoff(k)
    levels = data.rel_levels[:, 1:]  # grades 1..G-1; grade 0 adds nothing
    n_q, n_g = levels.shape
    if n_g == 0:
        return np.zeros(n_q)
    # the ideal list of each query, grade G-1 repeated, then G-2, ... (CSR)
    counts = levels[:, ::-1]
    grades = np.arange(n_g, 0, -1)
    per_row = counts.ravel()
    qi = np.repeat(np.repeat(np.arange(n_q), n_g), per_row)
    g = np.repeat(np.tile(grades, n_q), per_row)
    lengths = counts.sum(axis=1)
    starts = np.concatenate(([0], np.cumsum(lengths)))[:-1]
    pos = np.arange(len(g)) - np.repeat(starts, lengths)
    keep = np.ones(len(g), dtype=bool) if k is None else pos < k
    vals = _gain(g[keep], exponential) * _discount(pos[keep])
    return np.bincount(qi[keep], weights=vals, minlength=n_q).astype(np.float64)


def ndcg_exp(data: Ranked, k: int | None = None) -> np.ndarray:
    """nDCG_exp@k = DCG_exp@k / IDCG_exp@k with gain ``2^g - 1`` (Burges et al. 2005).

    The ideal ranking lists the query's judged grades in descending order, cut at k (as
    trec_eval's ndcg_cut builds its ideal). A query without a positive grade (IDCG = 0)
    scores 0, as trec_eval's ndcg does. Equals ranx's ``ndcg_burges@k`` and ir_measures'
    ``nDCG(gains={g: 2^g - 1})@k`` on runs without score ties (ranx orders tied documents
    differently; checked on trec_eval's graded test collection, tests/offline/test_audit.py).
    Negative grades have gain 0, as in ranx.
    """
    return ratio(dcg(data, k, exponential=True), ideal_dcg(data, k, exponential=True))


def reciprocal_rank(data: Ranked, k: int | None = None) -> np.ndarray:
    """RR@k = 1 / rank of the first relevant document within the top k, else 0.

    Without k this is trec_eval's recip_rank; with k, relevant documents below rank k do not
    count (equal to ranx's ``mrr@k`` and ir_measures' ``RR@k`` on runs without score ties).
    MRR@k is its mean over queries.
    """
    first = data.first_pos(_relevant(data) & _top(data, k))
    return ratio(np.ones(len(first)), np.where(first >= 0, first + 1.0, 0.0))


def err(data: Ranked, k: int | None, gmax: float) -> np.ndarray:
    """ERR@k, expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan 2009).

    ``ERR@k = Σ_{r<=k} (1/r) R_r Π_{i<r} (1 - R_i)`` with stop probability
    ``R = (2^g - 1) / 2^gmax`` (unjudged and negative grades: g = 0, R = 0). ``gmax`` is the
    highest grade of the scale; :func:`onlineeval.offline.evaluate` defaults it to the highest
    grade anywhere in the qrels (queries not evaluated included: the qrels define the scale,
    so a query's ERR does not depend on which other queries were retrieved). It must be >=
    every judged grade of the evaluated queries, retrieved or not, so that R < 1 and the scale
    is the same at every cutoff; a lower gmax is an error.

    Tools differ only in gmax: gdeval (ir_measures' ``ERR@k``) fixes gmax = 4 —
    ``ERR@k(gmax=4)`` reproduces it (to the 5 decimals gdeval prints); some libraries use
    the query's own highest grade, which is not Chapelle et al.'s definition.
    """
    gmax = float(gmax)
    if not np.isfinite(gmax):
        raise InvalidParameterError(f"ERR's gmax must be a finite number; got {gmax!r}")
    top = _top(data, k)
    g = np.maximum(data.rel[top], 0).astype(np.float64)
    # every judged grade of the evaluated queries, retrieved or not, above the cutoff or not:
    # the scale does not depend on k
    highest = int(max_judged_grade(data).max(initial=-1))
    if highest > gmax:
        raise InvalidParameterError(
            f"ERR's gmax ({gmax:g}) is below a grade in the judgments ({highest}); gmax "
            f"must be the highest grade of the scale, e.g. ERR@10(gmax={highest})"
        )
    stop = (np.exp2(g) - 1.0) / np.exp2(gmax)
    qi = data.seg[top]
    pos = data.pos[top]
    # walk down the ranks, all queries at once: reach[q] = Π_{i<r} (1 - R_i) for query q
    reach = np.ones(data.n_queries)
    total = np.zeros(data.n_queries)
    order = np.argsort(pos, kind="stable")
    bounds = np.searchsorted(pos[order], np.arange(int(pos.max(initial=-1)) + 2))
    for r in range(len(bounds) - 1):
        sel = order[bounds[r]:bounds[r + 1]]
        q = qi[sel]  # each query appears at most once per rank
        total[q] += reach[q] * stop[sel] / (r + 1.0)
        reach[q] *= 1.0 - stop[sel]
    return total


def recall_capped(data: Ranked, k: int) -> np.ndarray:
    """R_cap@k = relevant in the top k / min(k, |R|) (BEIR's capped recall); 0 if |R| = 0."""
    top = _top(data, k)
    hits = _sum(data, top, _relevant(data).astype(np.float64))
    return ratio(hits, np.minimum(float(k), data.num_rel.astype(np.float64)))


def best(data: Ranked, k: int | None = None) -> np.ndarray:
    """Best@k = 1 if a document of the query's highest judged grade is in the top k, else 0.

    0 when that grade is below ``relevance_level`` (the query has no relevant document).
    """
    top = _top(data, k)
    _relevant(data)
    highest = max_judged_grade(data)
    hit = top & (data.rel == highest[data.seg]) & (data.rel >= 0)
    found = np.bincount(data.seg[hit], minlength=data.n_queries) > 0
    return (found & (highest >= data.relevance_level) & (data.num_rel > 0)).astype(np.float64)


def fallout(data: Ranked, k: int | None = None) -> np.ndarray:
    """fallout@k = judged non-relevant in the top k / judged non-relevant in the qrels.

    Judged non-relevant: ``0 <= grade < relevance_level``. 0 when the query has none.
    """
    top = _top(data, k)
    nonrel = (data.rel >= 0) & ~_relevant(data)
    num = _sum(data, top, nonrel.astype(np.float64))
    lvl = min(max(data.relevance_level, 0), data.rel_levels.shape[1])
    den = data.rel_levels[:, :lvl].sum(axis=1).astype(np.float64)
    return ratio(num, den)


def judged(data: Ranked, k: int) -> np.ndarray:
    """judged@k = documents in the top k judged with a grade >= 0, divided by k.

    Divides by k even when fewer than k documents were retrieved (as P@k does), so a short
    list counts its missing positions as unjudged. A qrels line with a negative grade is not a
    judgment (trec_eval's reading). ir_measures' ``Judged@k`` (from OpenNIR) differs on both
    points: it divides by ``min(k, retrieved)`` and counts any qrels line as judged, so the
    two agree only when at least k documents are retrieved and no grade is negative. No paper
    fixes the short-list case; we keep P@k's rule so judged@k and P@k share a denominator.
    """
    top = _top(data, k)
    return _sum(data, top, (data.rel >= 0).astype(np.float64)) / float(k)


def f_measure(data: Ranked, k: int, beta: float = 1.0) -> np.ndarray:
    """F_β@k = (1 + β²) P@k R@k / (β² P@k + R@k) = (1 + β²) rel_k / (β² |R| + k).

    P@k = rel_k / k (trec_eval's P, dividing by k), R@k = rel_k / |R| (trec_eval's recall).
    0 when no relevant document is in the top k (including |R| = 0). F1@k equals ranx's
    ``f1@k`` on runs without score ties (ranx also divides P@k by k).
    """
    beta = float(beta)
    if not (np.isfinite(beta) and beta > 0):
        raise InvalidParameterError(f"F's beta must be a positive number; got {beta!r}")
    top = _top(data, k)
    hits = _sum(data, top, _relevant(data).astype(np.float64))
    b2 = beta * beta
    return (1.0 + b2) * hits / (b2 * data.num_rel.astype(np.float64) + float(k))


# --------------------------------------------------------------------------- registration

@dataclass(frozen=True)
class ExtraMeasure:
    """A measure family beyond trec_eval, registered in the trec_eval measure registry.

    It answers the same calls as :class:`~onlineeval.offline.measures.base.TrecMeasure`
    (``parse(text)`` → :class:`Params`, ``compute(ranked, params.values)`` → arrays), so
    ``evaluate`` and the ``trec-eval`` command can use it (``-m ERR.10`` prints ``ERR@10``).
    Its values are named ``STEM@K`` (``STEM`` without a cutoff), plus ``(key=value)`` for
    options that differ from their defaults.
    """

    name: str
    stem: str
    score: Callable[..., np.ndarray]  # score(ranked, k, **options) -> float64[Q]
    cutoff: str = "optional"          # "optional" | "required"
    options: tuple[tuple[str, Any], ...] = ()  # (option, default); default None = from data
    doc: str = ""
    order: int = 1_000  # printed after every trec_eval measure by the trec-eval command
    params: str = "cutoffs"
    defaults: tuple[Any, ...] = ()
    summary: str = "mean"
    value_format: str = "float"
    per_query: bool = True

    def parse(self, text: str | None, options: dict[str, str] | None = None) -> Params:
        opts = dict(self.options)
        for key, raw in (options or {}).items():
            if key not in opts:
                known = ", ".join(opts) or "none"
                raise InvalidParameterError(
                    f"measure {self.stem!r} has no option {key!r} (its options: {known})"
                )
            try:
                opts[key] = float(raw)
            except ValueError:
                raise InvalidParameterError(
                    f"measure {self.stem!r}: option {key}={raw!r} must be a number"
                ) from None
        if text is None or text == "":
            if self.cutoff == "required":
                raise InvalidParameterError(
                    f"measure {self.stem!r} needs a cutoff, e.g. {self.stem}@10"
                )
            cutoffs: list[int | None] = [None]
        else:
            try:
                cutoffs = sorted({int(t) for t in text.split(",")})
            except ValueError:
                raise InvalidParameterError(
                    f"measure {self.stem!r}: cutoffs {text!r} must be positive integers, "
                    f"e.g. {self.stem}@10"
                ) from None
            if cutoffs[0] < 1:
                raise InvalidParameterError(
                    f"measure {self.stem!r}: cutoffs must be positive; got {text!r}"
                )
        stem = self.stem
        shown = dict(opts)
        if self.name == "F":
            beta = shown.pop("beta")
            if not (np.isfinite(beta) and beta > 0):
                raise InvalidParameterError(f"F's beta must be a positive number; got {beta!r}")
            stem = f"F{beta:g}"
        suffix = ",".join(f"{k}={v:g}" for k, v in shown.items()
                          if v is not None and v != dict(self.options)[k])
        suffix = f"({suffix})" if suffix else ""
        names = tuple(f"{stem}{'' if k is None else f'@{k}'}{suffix}" for k in cutoffs)
        values = tuple((k, tuple(opts.items())) for k in cutoffs)
        return Params(values, names, text is not None or bool(options))

    def compute(self, ranked: Ranked, values: tuple[Any, ...]) -> list[np.ndarray]:
        return [self.score(ranked, k, **dict(opts)) for k, opts in values]


def _err_score(data: Ranked, k: int | None, gmax: float | None = None) -> np.ndarray:
    if gmax is None:
        # the highest grade in the qrels (rel_levels has one column per grade 0..max)
        gmax = float(data.rel_levels.shape[1] - 1)
    return err(data, k, gmax)


def _register_extras() -> None:
    specs = [
        ExtraMeasure("nDCG_exp", "nDCG_exp", ndcg_exp, doc=ndcg_exp.__doc__ or ""),
        ExtraMeasure("DCG", "DCG", lambda d, k: dcg(d, k, False), doc=dcg.__doc__ or ""),
        ExtraMeasure("DCG_exp", "DCG_exp", lambda d, k: dcg(d, k, True),
                     doc=dcg.__doc__ or ""),
        ExtraMeasure("CG", "CG", cg, doc=cg.__doc__ or ""),
        ExtraMeasure("RR_cut", "RR", reciprocal_rank, cutoff="required",
                     doc=reciprocal_rank.__doc__ or ""),
        ExtraMeasure("ERR", "ERR", _err_score, options=(("gmax", None),),
                     doc=err.__doc__ or ""),
        ExtraMeasure("R_cap", "R_cap", recall_capped, cutoff="required",
                     doc=recall_capped.__doc__ or ""),
        ExtraMeasure("Best", "Best", best, doc=best.__doc__ or ""),
        ExtraMeasure("fallout", "fallout", fallout, doc=fallout.__doc__ or ""),
        ExtraMeasure("judged", "judged", judged, cutoff="required", doc=judged.__doc__ or ""),
        ExtraMeasure("F", "F", f_measure, cutoff="required", options=(("beta", 1.0),),
                     doc=f_measure.__doc__ or ""),
    ]
    aliases = {
        "RR_cut": ("RR@", "MRR@"),
        "R_cap": ("Rcap", "recall_cap"),
        "F": ("F1@", "F@"),
    }
    for spec in specs:
        MEASURES.register(spec.name, spec, aliases=aliases.get(spec.name, ()))
    # familiar spellings of trec_eval measures: a trailing "@" marks the NAME@K form
    trec_aliases = {
        "map": ("AP", "MAP"),
        "map_cut": ("AP@", "MAP@"),
        "ndcg_cut": ("nDCG@",),
        "P": ("P@", "precision", "precision@"),
        "recall": ("R@", "recall@"),
        "recip_rank": ("RR", "MRR"),
        "Rprec": ("R-prec", "R_prec", "Rprecision"),
        "success": ("success@",),
        "11pt_avg": ("11pt", "11pt_avg_prec"),
        "iprec_at_recall": ("pr_curve", "iprec"),
    }
    for name, extra in trec_aliases.items():
        MEASURES.register(name, MEASURES.get(name), aliases=extra)


_register_extras()
