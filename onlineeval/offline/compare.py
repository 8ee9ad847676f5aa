"""Paired comparison of runs on the same queries: per-measure deltas, CIs, p-values.

``compare(qrels, run_a, run_b, measures)`` scores every run per query with
:func:`onlineeval.offline.evaluate`, pairs the scores by query, and tests the mean per-query
difference ``delta = run_b - run_a`` with one of the paired tests below. Several runs may be
compared against one baseline (``run_a``); the p-values of all runs × measures are then
adjusted together for multiple testing (Holm by default).

Which queries are compared
    Every judged query, as ``trec_eval -c`` averages (``evaluate(..., complete=True)``): a
    judged query that a run did not answer is scored as trec_eval -c scores it — 0 on every
    measure of the ranking (``num_rel``, a count of judgments, keeps its value) — so
    ``mean_a``/``mean_b`` are the values ``trec_eval -c -m MEASURE`` prints for each run.
    Queries of a run that have no judgments are ignored, as trec_eval ignores them.

Which measures
    Measures that trec_eval averages over queries, and the counts it totals (``num_ret``,
    ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``): for those ``mean_a``/``mean_b``
    are per-query means, i.e. trec_eval's total divided by ``n_queries``. Refused, with an
    error saying why: ``gm_map``/``gm_bpref`` (a geometric mean; their per-query values are
    logarithms, so a mean delta would not be a difference of what trec_eval prints — compare
    ``map``/``bpref``), ``num_q`` (not a per-query value), ``relstring`` and ``runid`` (text).

Paired tests (``test=``), all two-sided, on the per-query differences ``d_i = b_i - a_i``
    ``t``             Student's paired t test (``scipy.stats.ttest_rel(b, a)``).
    ``wilcoxon``      Wilcoxon signed-rank (``scipy.stats.wilcoxon(d)``; zero differences
                      dropped, the "wilcox" rule; exact for small n as scipy chooses).
    ``sign``          sign test: ``scipy.stats.binomtest(#{d>0}, #{d≠0}, 0.5)``; ties dropped.
    ``randomization`` paired randomization (permutation) test of the mean difference,
                      Smucker, Allan & Carterette (2007): ``scipy.stats.permutation_test`` with
                      ``permutation_type="samples"`` (swapping a_i and b_i = flipping the sign
                      of d_i). Exact — all 2^n sign flips — when 2^n <= ``n_resamples``:
                      p = #{flips with |mean| >= |observed mean|} / 2^n (the sign-flip null
                      is symmetric, so this equals scipy's twice-the-smaller-tail); a mean
                      difference within 1e-12·max|d_i| of 0 is 0 (p = 1). Otherwise
                      ``n_resamples`` seeded random flips with scipy's Monte Carlo p-value:
                      twice the smaller tail, each tail (count + 1) / (n_resamples + 1).
    ``bootstrap``     paired bootstrap over queries (``scipy.stats.bootstrap`` of the mean
                      difference, seeded). p-value of H0: E[d] = 0 from the bootstrap
                      distribution shifted to mean zero (Efron & Tibshirani 1993, §16.4):
                      ``(#{|m*_j - mean(d)| >= |mean(d)|} + 1) / (B + 1)``.

Reported with every test
    ``ci_low``/``ci_high``: confidence interval of the mean difference — the Student t interval
    (``ttest_rel(...).confidence_interval``) for every test except ``bootstrap``, which reports
    its percentile interval. ``effect_size``: Cohen's d_z = mean(d) / sd(d) (sd with n − 1);
    null when sd(d) = 0 (to float precision) or n < 2.

Edge cases: when every d_i is 0 the runs do not differ on these queries and the p-value is 1
for every test (scipy would return nan for t and Wilcoxon and refuse the sign test). With
fewer than two queries no test is possible: p-value and CI are null. A constant non-zero
difference (every d_i equal) gives the t test p = 0 (t = ∞, as scipy computes it) and the
bootstrap its smallest p, 1 / (B + 1); the rank tests are unaffected.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.levels import check_level
from onlineeval.namespace import make_callable
from onlineeval.progress import Progress
from onlineeval.registry import Registry
from onlineeval.stats.multiple import CORRECTIONS
from onlineeval.stats.results import ComparisonResult, adjust_family, comparison_frame

__all__ = [
    "PAIRED_TESTS", "PairedResult", "check_measures", "compare", "compare_scores",
    "paired_arrays", "paired_test", "per_query_scores",
]


@dataclass(frozen=True, kw_only=True)
class PairedResult(ComparisonResult):
    """One paired test on per-query scores ``a`` and ``b``: the shared result fields
    (``estimate`` = mean of b − a, formerly ``delta``; ``n`` the queries, each in both
    runs; ``unit`` "query") and the runs' means and the effect size."""

    mean_a: float
    mean_b: float
    effect_size: float


_TestFn = Callable[[np.ndarray, np.ndarray, float, int, int], tuple[float, float, float]]
PAIRED_TESTS: Registry[_TestFn] = Registry("paired test")


def _t_interval(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float]:
    ci = stats.ttest_rel(b, a).confidence_interval(confidence_level=confidence)
    return float(ci.low), float(ci.high)


def _t(a: np.ndarray, b: np.ndarray, confidence: float, n_resamples: int,
       seed: int) -> tuple[float, float, float]:
    res = stats.ttest_rel(b, a)
    ci = res.confidence_interval(confidence_level=confidence)
    return float(res.pvalue), float(ci.low), float(ci.high)


def _wilcoxon(a: np.ndarray, b: np.ndarray, confidence: float, n_resamples: int,
              seed: int) -> tuple[float, float, float]:
    p = float(stats.wilcoxon(b - a).pvalue)
    return (p, *_t_interval(a, b, confidence))


def _sign(a: np.ndarray, b: np.ndarray, confidence: float, n_resamples: int,
          seed: int) -> tuple[float, float, float]:
    d = b - a
    wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
    p = float(stats.binomtest(wins, wins + losses, 0.5).pvalue)
    return (p, *_t_interval(a, b, confidence))


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(y - x, axis=axis)


def _randomization(a: np.ndarray, b: np.ndarray, confidence: float, n_resamples: int,
                   seed: int) -> tuple[float, float, float]:
    d = b - a
    # A mean difference that is 0 in exact arithmetic often comes out as ~1e-17; scipy's tie
    # tolerance is relative to that observed value, so flips whose mean is 0 (or -1e-17) would
    # not count as ">= |observed|" and p would drop below 1. Every flip has |mean| >= 0, so
    # the exact p of a zero mean difference is 1.
    if abs(float(np.mean(d))) <= 1e-12 * float(np.max(np.abs(d), initial=0.0)):
        return (1.0, *_t_interval(a, b, confidence))
    res = stats.permutation_test(
        (a, b), _mean_diff, permutation_type="samples", vectorized=True,
        n_resamples=n_resamples, alternative="two-sided", random_state=seed,
    )
    return (float(res.pvalue), *_t_interval(a, b, confidence))


def _bootstrap(a: np.ndarray, b: np.ndarray, confidence: float, n_resamples: int,
               seed: int) -> tuple[float, float, float]:
    d = b - a
    res = stats.bootstrap(
        (d,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
        method="percentile", random_state=seed, vectorized=True,
    )
    mean = float(np.mean(d))
    shifted = np.asarray(res.bootstrap_distribution) - mean
    # a small tolerance so floating-point noise in the resampled means does not decide ties
    tol = 1e-12 * max(1.0, abs(mean))
    count = int(np.sum(np.abs(shifted) >= abs(mean) - tol))
    p = (count + 1) / (n_resamples + 1)
    return p, float(res.confidence_interval.low), float(res.confidence_interval.high)


PAIRED_TESTS.register("t", _t, aliases=("ttest", "paired-t", "student"))
PAIRED_TESTS.register("wilcoxon", _wilcoxon, aliases=("signed-rank",))
PAIRED_TESTS.register("sign", _sign, aliases=("sign-test",))
PAIRED_TESTS.register("randomization", _randomization, aliases=("permutation", "fisher"))
PAIRED_TESTS.register("bootstrap", _bootstrap)


def paired_arrays(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
                  what: str) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` as float arrays, or :class:`InvalidParameterError` unless they are two
    1-d sequences of equal length (``what`` names them in the message)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise InvalidParameterError(
            f"{what} must be two 1-d arrays of equal length; got shapes {x.shape} and {y.shape}"
        )
    return x, y


def paired_test(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
                test: str = "t", *, confidence: float = 0.95, n_resamples: int = 10_000,
                seed: int = 0) -> PairedResult:
    """Test the mean of the paired differences ``b - a`` with one of :data:`PAIRED_TESTS`.

    Parameters
    ----------
    a, b : per-query scores of the baseline and the other run, aligned by query.
    test : ``t`` | ``wilcoxon`` | ``sign`` | ``randomization`` | ``bootstrap`` (module doc).
    confidence : confidence level of the interval of the mean difference.
    n_resamples : resamples of the randomization and bootstrap tests.
    seed : seed of the randomization and bootstrap tests (results are reproducible).
    """
    confidence = check_level(confidence, "confidence")
    name = PAIRED_TESTS.canonical(test)
    fn = PAIRED_TESTS.get(name)
    if int(n_resamples) < 1:
        raise InvalidParameterError(f"n_resamples must be at least 1, got {n_resamples!r}")
    x, y = paired_arrays(a, b, "paired scores")
    if np.isnan(x).any() or np.isnan(y).any():
        raise InvalidParameterError("paired scores contain NaN; every query needs a score")
    n = len(x)
    nan = float("nan")
    mean_a = float(np.mean(x)) if n else nan
    mean_b = float(np.mean(y)) if n else nan
    d = y - x
    delta = float(np.mean(d)) if n else nan
    sd = float(np.std(d, ddof=1)) if n > 1 else nan
    # sd below float noise (a constant difference) would give an absurd d_z of ~1e16
    effect = delta / sd if n > 1 and sd > 1e-12 * max(1.0, abs(delta)) else nan
    if n < 2:
        p, lo, hi = nan, nan, nan
    elif not np.any(d):
        p, lo, hi = 1.0, 0.0, 0.0
    else:
        with warnings.catch_warnings():
            # scipy warns about exactness choices and precision loss on near-constant input;
            # the results are still the ones scipy defines, which is what we report
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", UserWarning)
            p, lo, hi = fn(x, y, confidence, int(n_resamples), int(seed))
    return PairedResult(estimate=delta, ci_low=lo, ci_high=hi, ci_level=confidence,
                        p_value=p, test=name, n=n, units_control=n, units_treatment=n,
                        unit="query", mean_a=mean_a, mean_b=mean_b, effect_size=effect)


# --- comparing runs ---------------------------------------------------------------------

def _run_name(run: object, default: str) -> str:
    if isinstance(run, str | Path):
        return Path(run).name
    return default


def _named_runs(run_b: object) -> list[tuple[str, object, str]]:
    """(name in the result, run, label for errors in a DataFrame/dict run) of each run."""
    if isinstance(run_b, Mapping) and run_b and all(
        isinstance(v, str | Path | pd.DataFrame) or _is_nested(v) for v in run_b.values()
    ):
        return [(str(k), v, f"compare run {str(k)!r} (run_b[{k!r}])") for k, v in run_b.items()]
    if isinstance(run_b, list | tuple):
        names = [_run_name(r, f"run_{i + 1}") for i, r in enumerate(run_b)]
        if len(set(names)) != len(names):
            names = [f"{n}#{i + 1}" for i, n in enumerate(names)]
        return [(n, r, f"compare run {n!r} (run_b[{i}])")
                for i, (n, r) in enumerate(zip(names, run_b, strict=True))]
    return [(_run_name(run_b, "run_b"), run_b, "compare second run (run_b)")]


def _is_nested(value: object) -> bool:
    """A run given as ``{qid: {docno: score}}`` (as opposed to one query's ``{doc: score}``)."""
    return (isinstance(value, Mapping) and bool(value)
            and all(isinstance(x, Mapping) for x in value.values()))


_REFUSED = {
    "gm": "is a geometric mean over queries (its per-query values are logarithms); compare "
          "the arithmetic measure instead (map, bpref) or read trec_eval's summary",
    "count": "counts queries; it has no per-query value to compare",
    "none": "is text, not a number",
    "runid": "is the run's id, not a per-query value",
}


def check_measures(measures: Sequence[str]) -> None:
    """Raise :class:`InvalidParameterError` for a measure a paired comparison cannot use
    (see the module docstring); unknown names raise the registry's did-you-mean error."""
    from onlineeval.offline.api import parse_measure

    for name in measures:
        kind = getattr(parse_measure(name).measure, "summary", "mean")
        if kind in _REFUSED:
            raise InvalidParameterError(
                f"measure {name!r} {_REFUSED[kind]}; a paired comparison needs a numeric "
                "per-query measure that trec_eval averages or totals, e.g. ndcg@10, map, P@10"
            )


def per_query_scores(qrels: object, run: object, measures: Sequence[str], *,
                     run_label: str = "run") -> pd.DataFrame:
    """Per-query scores of ``run`` (index: qid as text), one column per measure value.

    Scored as ``trec_eval -c`` scores (:func:`onlineeval.offline.evaluate` with
    ``complete=True``): every judged query is present, 0 where the run did not answer it.
    Columns keep the names evaluate() gives them (``ndcg@10`` -> ``ndcg_cut_10``).
    ``run_label`` names a DataFrame or dict run in error messages (evaluate's ``run_label``).
    """
    from onlineeval.offline import evaluate

    check_measures(measures)
    pq = evaluate(qrels, run, list(measures), per_query=True, complete=True,
                  run_label=run_label)
    pq = pq.set_index("qid")
    pq.index = pq.index.astype(str)
    return pq.astype(float)


def compare(qrels: object, run_a: object, run_b: object, measures: Sequence[str] | str,
            test: str = "t", alpha: float = 0.05, correction: str = "holm", *,
            confidence: float | None = None, n_resamples: int = 10_000,
            seed: int = 0) -> pd.DataFrame:
    """Compare runs against a baseline on the same queries, per measure, with paired tests.

    Parameters
    ----------
    qrels : path to a TREC qrels file, a (qid, docno, rel) DataFrame or ``{qid: {doc: rel}}``.
    run_a : the baseline run (path, DataFrame (qid, docno, score) or ``{qid: {doc: score}}``).
    run_b : one run, a list of runs, or a dict ``{name: run}``; each is compared with run_a.
    measures : measure names as :func:`onlineeval.offline.evaluate` accepts them.
    test : paired test (see the module docstring): t, wilcoxon, sign, randomization, bootstrap.
    alpha : significance level applied to the adjusted p-value.
    correction : ``holm`` | ``bh`` | ``none``, over all runs × measures
        (:func:`onlineeval.stats.multiple.adjust`).
    confidence : level of the CI of the mean delta; default ``1 - alpha``.
    n_resamples, seed : for the randomization and bootstrap tests.

    Returns
    -------
    DataFrame, one row per (run, measure): baseline, run, measure, mean_a, mean_b, then the
    result block every comparison shares (:class:`onlineeval.stats.results.ComparisonResult`):
    estimate (= mean_b − mean_a; formerly ``delta``), ci_low, ci_high, ci_level, p_value,
    p_adjusted (by ``correction`` over the ``family_size`` runs × measures), correction,
    family_size, test, n (the queries; formerly ``n_queries``), units_control,
    units_treatment (both n: a paired design), unit ("query"); then significant
    (``p_adjusted < alpha``) and effect_size (Cohen's d_z).

    Raises
    ------
    InputError (LogFormatError, SchemaError)
        A qrels or run cannot be read or scored. A bad file is named by its path and line; a
        bad DataFrame or dict run by its place: ``compare baseline run (run_a)``,
        ``compare second run (run_b)``, ``compare run 'NAME' (run_b[1])`` for a list or
        ``(run_b['NAME'])`` for a dict.
    """
    if isinstance(measures, str):
        measures = [measures]
    measures = list(measures)
    if not measures:
        raise InvalidParameterError("compare needs at least one measure, e.g. ['ndcg@10']")
    _check(test, alpha, correction, confidence)
    if isinstance(qrels, str | Path):
        from onlineeval.offline import read_qrels

        qrels = read_qrels(qrels)  # read once, not once per run
    base = per_query_scores(qrels, run_a, measures, run_label="compare baseline run (run_a)")
    others = {name: per_query_scores(qrels, run, measures, run_label=label)
              for name, run, label in _named_runs(run_b)}
    return compare_scores(base, others, test, alpha, correction,
                          baseline=_run_name(run_a, "run_a"), confidence=confidence,
                          n_resamples=n_resamples, seed=seed)


def _check(test: str, alpha: float, correction: str, confidence: float | None) -> None:
    check_level(alpha)
    if confidence is not None:
        check_level(confidence, "confidence")
    PAIRED_TESTS.canonical(test)
    CORRECTIONS.canonical(correction)  # validate the names before the work


def compare_scores(base: pd.DataFrame, others: Mapping[str, pd.DataFrame], test: str = "t",
                   alpha: float = 0.05, correction: str = "holm", *,
                   baseline: str = "run_a", confidence: float | None = None,
                   n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """:func:`compare` on per-query scores already computed (e.g. by
    :func:`per_query_scores`): ``base`` and each of ``others`` are indexed by qid with one
    column per measure. A qid missing from one side scores 0 there, trec_eval -c's value for
    a query without results on every measure of the ranking; :func:`per_query_scores` gives
    every judged query its exact trec_eval -c value, so nothing is filled in for its frames.
    Progress (runs × measures tests) shows on a TTY."""
    _check(test, alpha, correction, confidence)
    test = PAIRED_TESTS.canonical(test)
    if not len(base.columns):
        raise InvalidParameterError("compare_scores: the baseline scores have no measure column")
    conf = 1 - alpha if confidence is None else confidence
    lead: list[dict[str, Any]] = []
    results: list[PairedResult] = []
    with Progress(f"paired {test} tests", len(others) * len(base.columns)) as bar:
        for name, other in others.items():
            qids = base.index.union(other.index)
            a_scores = base.reindex(qids).fillna(0.0)
            b_scores = other.reindex(qids).fillna(0.0)
            for col in base.columns:
                if col not in b_scores.columns:
                    raise InvalidParameterError(
                        f"run {name!r} has no scores for measure {col!r}; it has "
                        f"{list(b_scores.columns)}"
                    )
                r = paired_test(a_scores[col].to_numpy(), b_scores[col].to_numpy(), test,
                                confidence=conf, n_resamples=n_resamples, seed=seed)
                lead.append({"baseline": baseline, "run": name, "measure": col,
                             "mean_a": r.mean_a, "mean_b": r.mean_b})
                results.append(r)
                bar.update()
    adjusted = adjust_family(results, correction)
    extra = [{"significant": bool(a.p_adjusted < alpha), "effect_size": r.effect_size}
             for r, a in zip(results, adjusted, strict=True)]
    return comparison_frame(lead, adjusted, extra)


# the module is callable as compare(), so this name is the module in every import order
# (onlineeval.namespace)
make_callable(__name__)
