"""Adversarial audit of the measures trec_eval does not define (and of RBO).

Each measure is recomputed here by a plain, per-query Python implementation written from the
published definition, independent of the vectorised engine, and compared on random qrels/runs
built to hit the edge cases: score ties (several documents per score), judgments with negative
grades, retrieved documents without a judgment, queries without a relevant document, queries
whose only judgments are negative, runs shorter than the cutoff, and grades up to 5.

The reference ranks as trec_eval does (score descending, ties by docno descending) — the
engine's documented rule; other tools (ranx) break ties differently, so their numbers are only
compared on tie-free runs (see the audit report).

Cross-tool results on the trec_eval test collection (tests/data/trec_eval, graded
qrels.rel_level with negative grades dropped for the other tools, tie-free run), recorded when
this audit was made (ranx 0.3.21, ir_measures 0.4.3; not re-run here, they are bench extras):
nDCG_exp@k = ranx ndcg_burges@k = ir_measures nDCG(gains={g: 2^g-1})@k; DCG@k = ranx dcg@k;
DCG_exp@k = ranx dcg_burges@k; RR@k = ranx mrr@k = ir_measures RR@k; F1@k = ranx f1@k;
Rprec = ranx r-precision; bpref = ranx bpref (all to 1e-15, k in 1, 5, 10, 20, 1000).
ERR@k(gmax=4) = ir_measures ERR@k (gdeval) to 5e-6: gdeval prints 5 decimals.
judged@k differs from ir_measures Judged@k when the run is shorter than k (ir_measures divides
by the number retrieved, we by k) — a documented choice, see ``judged``'s docstring.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest

from onlineeval.errors import InvalidParameterError
from onlineeval.offline.api import evaluate
from onlineeval.offline.rbo import rbo, rbo_lists

# the fixtures include judged queries the run lacks on purpose (trec_eval skips them);
# tests/offline/test_query_overlap.py checks the warning that says so
pytestmark = pytest.mark.filterwarnings("ignore::onlineeval.offline.SkippedQueriesWarning")

# --------------------------------------------------------------------------- reference


def _ranked(docs: dict[str, float]) -> list[str]:
    # trec_eval's order: score descending, then docno descending (ASCII ids: str order = bytes)
    return [d for d, _ in sorted(docs.items(), key=lambda t: (t[1], t[0]), reverse=True)]


def _grade(judg: dict[str, int], d: str) -> int | None:
    """The grade if judged with a grade >= 0, else None (not in qrels, or negative)."""
    g = judg.get(d)
    return g if g is not None and g >= 0 else None


def ref_measure(name: str, k: int | None, ranking: list[str], judg: dict[str, int],
                level: int, gmax: float) -> float:
    top = ranking if k is None else ranking[:k]
    grades = [_grade(judg, d) for d in top]
    gain = [g or 0 for g in grades]
    rel = [g is not None and g >= level for g in grades]
    n_rel = sum(1 for g in judg.values() if g >= level)
    judged_grades = sorted((g for g in judg.values() if g > 0), reverse=True)
    ideal = judged_grades if k is None else judged_grades[:k]

    def disc(i: int) -> float:
        return 1.0 / math.log2(i + 2)

    if name == "CG":
        return float(sum(gain))
    if name == "DCG":
        return sum(g * disc(i) for i, g in enumerate(gain))
    if name == "DCG_exp":
        return sum((2.0 ** g - 1) * disc(i) for i, g in enumerate(gain))
    if name == "nDCG_exp":
        idcg = sum((2.0 ** g - 1) * disc(i) for i, g in enumerate(ideal))
        dcg = sum((2.0 ** g - 1) * disc(i) for i, g in enumerate(gain))
        return dcg / idcg if idcg > 0 else 0.0
    if name == "RR":
        return next((1.0 / (i + 1) for i, r in enumerate(rel) if r), 0.0)
    if name == "ERR":
        # Chapelle et al. 2009, Algorithm 2
        p, total = 1.0, 0.0
        for i, g in enumerate(gain):
            stop = (2.0 ** g - 1) / 2.0 ** gmax
            total += p * stop / (i + 1)
            p *= 1 - stop
        return total
    if name == "R_cap":
        return sum(rel) / min(k, n_rel) if n_rel else 0.0
    if name == "Best":
        levels = [g for g in judg.values() if g >= 0]
        if not levels or max(levels) < level:
            return 0.0
        return float(any(g == max(levels) for g in grades if g is not None))
    if name == "fallout":
        n_nonrel = sum(1 for g in judg.values() if 0 <= g < level)
        hits = sum(1 for g in grades if g is not None and g < level)
        return hits / n_nonrel if n_nonrel else 0.0
    if name == "judged":
        return sum(g is not None for g in grades) / k
    if name == "F1":
        prec, recall = sum(rel) / k, (sum(rel) / n_rel if n_rel else 0.0)
        return 2 * prec * recall / (prec + recall) if prec + recall > 0 else 0.0
    raise KeyError(name)


def random_case(seed: int) -> tuple[dict, dict]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(12):
        q = f"q{qi:02d}"
        docs = [f"d{j:03d}" for j in range(rng.randint(1, 25))]
        kind = rng.random()
        judg = {}
        for d in docs:
            if rng.random() < 0.6:
                if kind < 0.15:
                    judg[d] = rng.choice([-1, -3])          # only negative judgments
                elif kind < 0.3:
                    judg[d] = rng.choice([0, -1])           # nothing relevant
                else:
                    judg[d] = rng.choice([-1, 0, 0, 1, 2, 3, 5])
        if not judg:
            judg[docs[0]] = rng.choice([0, 1])
        # judged documents the run never retrieves
        for j in range(rng.randint(0, 4)):
            judg[f"z{j}"] = rng.choice([0, 1, 2, 4])
        qrels[q] = judg
        retrieved = rng.sample(docs, rng.randint(1, len(docs)))
        # coarse scores: many ties
        run[q] = {d: float(rng.randint(0, 4)) for d in retrieved}
    # a run query without judgments (ignored) and a judged query without results (skipped)
    run["zz_unjudged"] = {"d000": 1.0}
    qrels["zz_missing"] = {"d000": 2}
    return qrels, run


MEASURES = ["CG", "DCG", "DCG_exp", "nDCG_exp", "RR", "ERR", "R_cap", "Best", "fallout",
            "judged", "F1"]
NEED_K = {"RR", "R_cap", "judged", "F1"}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", [1, 2])
def test_extra_measures_match_reference(seed: int, level: int) -> None:
    qrels, run = random_case(seed)
    gmax = float(max(g for judg in qrels.values() for g in judg.values()))
    names, specs = [], []
    for m in MEASURES:
        for k in ([1, 3, 10, 40] if m in NEED_K else [None, 1, 3, 10, 40]):
            names.append(m if k is None else f"{m}@{k}")
            specs.append((m, k))
    out = evaluate(qrels, run, names, per_query=True, relevance_level=level).set_index("qid")
    expected_q = sorted(set(qrels) & set(run))
    assert list(out.index) == expected_q
    for (m, k), col in zip(specs, out.columns, strict=True):
        for q in expected_q:
            want = ref_measure(m, k, _ranked(run[q]), qrels[q], level, gmax)
            assert out.at[q, col] == pytest.approx(want, rel=1e-12, abs=1e-12), (col, q)


def test_err_gmax_option_matches_reference() -> None:
    qrels, run = random_case(11)
    out = evaluate(qrels, run, ["ERR@5(gmax=7)", "ERR(gmax=5.5)"], per_query=True)
    out = out.set_index("qid")
    for q in out.index:
        ranking = _ranked(run[q])
        assert out.at[q, "ERR@5(gmax=7)"] == pytest.approx(
            ref_measure("ERR", 5, ranking, qrels[q], 1, 7.0), abs=1e-12)
        assert out.at[q, "ERR(gmax=5.5)"] == pytest.approx(
            ref_measure("ERR", None, ranking, qrels[q], 1, 5.5), abs=1e-12)


def test_err_worked_example_by_hand() -> None:
    # grades 2, 0, 1 on a 0..2 scale: R = 3/4, 0, 1/4
    # ERR = 3/4 + (1/4)(1)(0)/2 + (1/4)(1)(1/4)/3 = 3/4 + 1/48
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    got = evaluate(qrels, run, ["ERR@3", "ERR@1"])
    assert got["ERR@3"].iloc[0] == pytest.approx(3 / 4 + 1 / 48, abs=1e-15)
    assert got["ERR@1"].iloc[0] == pytest.approx(3 / 4, abs=1e-15)


# --------------------------------------------------------------------------- RBO


def ref_rbo(s_list: list, l_list: list, p: float, extrapolate: bool = True) -> float:
    """Webber, Moffat & Zobel 2010, Eq. 32 (RBO_EXT), from set overlaps at each depth."""
    if len(s_list) > len(l_list):
        s_list, l_list = l_list, s_list
    s, ln = len(s_list), len(l_list)

    def x(d: int) -> int:
        return len(set(s_list[:min(d, s)]) & set(l_list[:d]))

    if not extrapolate:
        return (1 - p) * sum(p ** (d - 1) * x(d) / d for d in range(1, ln + 1))
    a = sum(x(d) / d * p ** d for d in range(1, ln + 1))
    b = sum(x(s) * (d - s) / (s * d) * p ** d for d in range(s + 1, ln + 1))
    return (1 - p) / p * (a + b) + ((x(ln) - x(s)) / ln + x(s) / s) * p ** ln


def test_rbo_matches_paper_formula_on_random_lists() -> None:
    rng = random.Random(7)
    for _ in range(400):
        pool = list(range(rng.randint(1, 25)))
        a = rng.sample(pool, rng.randint(1, len(pool)))
        b = rng.sample(pool, rng.randint(1, len(pool)))
        p = rng.choice([0.1, 0.5, 0.9, 0.98])
        depth = rng.choice([None, 1, 3, 10])
        for ext in (True, False):
            cut_a = a if depth is None else a[:depth]
            cut_b = b if depth is None else b[:depth]
            assert rbo_lists(a, b, p, depth, ext) == pytest.approx(
                ref_rbo(cut_a, cut_b, p, ext), abs=1e-12)


def test_rbo_edge_values() -> None:
    # identical lists: RBO_EXT = 1 at every depth; truncated sum = 1 - p^k
    assert rbo_lists(list("abc"), list("abc"), 0.9) == pytest.approx(1.0, abs=1e-15)
    assert rbo_lists(list("abc"), list("abc"), 0.9, extrapolate=False) == pytest.approx(
        1 - 0.9 ** 3, abs=1e-15)
    # a prefix of the longer list: agreement 1 at every depth seen, extrapolated: 1
    assert rbo_lists(list("abc"), list("abcdef"), 0.9) == pytest.approx(1.0, abs=1e-12)
    assert rbo_lists(list("abc"), list("xyz"), 0.9) == 0.0
    # by hand, k = 2, p = 0.5: S = ab, T = ba: X1 = 0, X2 = 2
    # RBO_EXT = X2/2 p^2 + (1-p)/p (0 + 1 * p^2) = 0.25 + 0.25
    assert rbo_lists(["a", "b"], ["b", "a"], 0.5) == pytest.approx(0.5, abs=1e-15)
    assert math.isnan(rbo_lists([], [], 0.9))
    assert rbo_lists([], ["a"], 0.9) == 0.0


def test_rbo_runs_rank_ties_like_trec_eval() -> None:
    # ties broken by docno descending in both runs, so equal scores give the same order
    run_a = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    run_b = pd.DataFrame({"qid": ["q", "q", "q"], "docno": ["c", "b", "a"],
                          "score": [0.2, 3.0, 3.0]})
    got = rbo(run_a, run_b, p=0.8)
    assert got["rbo"].iloc[0] == pytest.approx(
        ref_rbo(["b", "a", "c"], ["b", "a", "c"], 0.8), abs=1e-15)
    assert got["rbo"].iloc[0] == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------- bad input


def test_err_gmax_below_a_judged_grade_is_an_error() -> None:
    qrels = {"q": {"a": 1, "b": 4}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    with pytest.raises(InvalidParameterError, match="gmax"):
        evaluate(qrels, run, ["ERR@2(gmax=2)"])


@pytest.mark.parametrize("k", [0, -1])
def test_non_positive_cutoffs_rejected(k: int) -> None:
    with pytest.raises(InvalidParameterError):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [f"ERR@{k}"])


def test_values_are_float64_and_finite() -> None:
    qrels, run = random_case(3)
    out = evaluate(qrels, run, ["nDCG_exp@5", "ERR@5", "F1@5", "R_cap@5", "judged@5"],
                   per_query=True)
    vals = out.drop(columns="qid").to_numpy()
    assert vals.dtype == np.float64
    assert np.isfinite(vals).all()
    assert ((vals >= 0) & (vals <= 1 + 1e-12)).all()


def test_err_gmax_checked_against_every_judged_grade() -> None:
    # Found by this audit: gmax=2 below the judged grade 4 was accepted whenever the grade-4
    # document sat below the cutoff, so ERR@1 scored and ERR@2 raised on the same input.
    qrels = {"q": {"a": 1, "b": 4}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    with pytest.raises(InvalidParameterError, match="gmax"):
        evaluate(qrels, run, ["ERR@1(gmax=2)"])
    # an unretrieved grade-4 judgment counts too
    with pytest.raises(InvalidParameterError, match="gmax"):
        evaluate(qrels, {"q": {"a": 1.0}}, ["ERR(gmax=3)"])


@pytest.mark.parametrize("name", ["RR@4", "R_cap@4", "F1@4", "fallout@4", "Best@4"])
def test_negative_relevance_level_rejected(name: str) -> None:
    # Found by this audit: relevance_level=-1 made retrieved documents without a judgment
    # (code -1) relevant while |R| counted judged documents only: R_cap@4 = 1.5, F1 = 1.
    qrels = {"q": {"a": 1, "b": 0, "c": -1}}
    run = {"q": {"a": 2.0, "b": 1.0, "c": 0.5, "x": 0.1}}
    with pytest.raises(InvalidParameterError, match="relevance_level"):
        evaluate(qrels, run, [name], relevance_level=-1)


def test_relevance_level_zero_counts_every_judged_document() -> None:
    qrels = {"q": {"a": 1, "b": 0, "c": -1}}
    run = {"q": {"a": 2.0, "b": 1.0, "c": 0.5, "x": 0.1}}
    got = evaluate(qrels, run, ["R_cap@4", "F1@4", "fallout@4", "RR@4"], relevance_level=0)
    assert got["R_cap@4"].iloc[0] == 1.0           # a, b of |R| = 2
    assert got["F1@4"].iloc[0] == pytest.approx(2 * 2 / (2 + 4))
    assert got["fallout@4"].iloc[0] == 0.0         # no judged non-relevant document
    assert got["RR@4"].iloc[0] == 1.0


def test_graded_measures_ignore_relevance_level() -> None:
    # the module docstring once said every measure scores 0 without a relevant document;
    # the graded ones use grades (trec_eval's ndcg does the same), checked by hand:
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    got = evaluate(qrels, run, ["CG@2", "DCG@2", "nDCG_exp@2", "ERR@2", "R_cap@2", "RR@2",
                                "ndcg_cut_2"], relevance_level=2)
    assert got["CG@2"].iloc[0] == 1.0
    assert got["DCG@2"].iloc[0] == pytest.approx(1 / math.log2(3), abs=1e-15)
    assert got["nDCG_exp@2"].iloc[0] == pytest.approx(1 / math.log2(3), abs=1e-15)
    assert got["ndcg_cut_2"].iloc[0] == pytest.approx(1 / math.log2(3), abs=1e-15)
    assert got["ERR@2"].iloc[0] == pytest.approx(0.5 / 2, abs=1e-15)  # R = (2-1)/2 at rank 2
    assert got["R_cap@2"].iloc[0] == 0.0
    assert got["RR@2"].iloc[0] == 0.0


# trec_eval measures on the same adversarial cases, against pytrec_eval (trec_eval's C code).
# Not compared: iprec_at_recall / 11pt_avg — pytrec_eval embeds trec_eval 9, which turns a
# recall level x into (long)(x·R + 0.9) relevant documents; trec_eval 10.0 (our golden files)
# uses lround(x·R), so e.g. 1 of 3 relevant found reaches level 0.4 in 10.0 only (checked:
# pytrec_eval 0.0, ours 1.0, as trec_eval 10.0's rule gives).
PYTREC = ["map", "Rprec", "bpref", "infAP", "recip_rank", "ndcg", "ndcg_cut_5", "P_5",
          "recall_10", "success_1", "set_F", "map_cut_10", "binG", "ndcg_rel", "gm_map"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", [1, 2])
def test_trec_measures_match_pytrec_eval_on_adversarial_cases(seed: int, level: int) -> None:
    import pytrec_eval  # a test dependency (pyproject: test extras)
    qrels, run = random_case(seed)
    families = {m.rsplit("_", 1)[0] if m[-1].isdigit() else m for m in PYTREC}
    ref = pytrec_eval.RelevanceEvaluator(qrels, families, relevance_level=level).evaluate(run)
    ours = evaluate(qrels, run, PYTREC, per_query=True, relevance_level=level).set_index("qid")
    assert sorted(ref) == list(ours.index)
    for m in PYTREC:
        for q in ours.index:
            assert ours.at[q, m] == pytest.approx(ref[q][m], abs=1e-12), (m, q)


def test_query_without_results_scores_zero_with_complete() -> None:
    # an empty result list (trec_eval -c): every extra measure 0, judged@k and fallout too
    qrels = {"q": {"a": 1, "b": 0}, "m": {"a": 2, "b": 0}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    names = ["ERR@2", "judged@2", "fallout@2", "nDCG_exp@2", "F1@2", "R_cap@2", "Best", "CG",
             "RR@3", "DCG_exp"]
    out = evaluate(qrels, run, names, per_query=True, complete=True).set_index("qid")
    assert (out.loc["m"] == 0.0).all()
    for col, name in zip(out.columns, names, strict=True):
        m, _, k = name.partition("@")
        want = ref_measure(m, int(k) if k else None, _ranked(run["q"]), qrels["q"], 1, 2.0)
        assert out.at["q", col] == pytest.approx(want, abs=1e-15), col
