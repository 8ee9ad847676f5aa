"""One result shape for every comparison (onlineeval.stats.results.ComparisonResult).

Every producer — the A/B readout, the interleaving readout and its per-user test, the paired
offline tests, the offline–online agreement, a confidence sequence read at looks, the two-arm
arithmetic — returns the shape: a frame carries RESULT_COLUMNS as one block, in order, with
their dtypes; a record is a ComparisonResult. Each producer is run on a small input and its
numbers are checked against a value computed here another way (by hand, or scipy).

The producers are found by reading the package's source: every function that builds the
result (constructs a ComparisonResult or one of its subclasses, or calls comparison_frame,
results_frame or adjust_family) must be covered by a case below.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import onlineeval
from onlineeval.stats.results import (
    RESULT_COLUMNS,
    RESULT_DTYPES,
    ComparisonResult,
    adjust_family,
    comparison_frame,
    result_columns_of,
    results_frame,
)

PACKAGE = Path(onlineeval.__file__).resolve().parent
TS = pd.Timestamp("2026-02-01 09:00")


# --- the shape's own rules ----------------------------------------------------------------

def _records(frame: pd.DataFrame) -> list[ComparisonResult]:
    """Each row's result block rebuilt as a ComparisonResult (validates it, e.g. ci_level)."""
    out = []
    for row in frame[list(RESULT_COLUMNS)].to_dict("records"):
        kwargs = {k: (None if v is pd.NA or (v is not None and not isinstance(v, str)
                                              and k in ("correction", "test", "unit")
                                              and pd.isna(v)) else v)
                  for k, v in row.items()}
        out.append(ComparisonResult(**kwargs))
    return out


def _check_frame(frame: pd.DataFrame) -> list[ComparisonResult]:
    assert result_columns_of(frame) == list(RESULT_COLUMNS)
    for col, dtype in RESULT_DTYPES.items():
        assert str(frame[col].dtype) == dtype, col
    return _check_records(_records(frame))


def _check_records(results: list[ComparisonResult]) -> list[ComparisonResult]:
    assert results and all(isinstance(r, ComparisonResult) for r in results)
    for r in results:
        assert 0 < r.ci_level < 1
        assert math.isnan(r.p_value) or 0 <= r.p_value <= 1
        assert r.n >= 0 and r.test and r.unit
        if r.correction is None:
            assert math.isnan(r.p_adjusted) and r.family_size is None
        else:
            assert r.family_size >= 1
            assert math.isnan(r.p_value) or r.p_adjusted >= r.p_value - 1e-15
        if not (math.isnan(r.ci_low) or math.isnan(r.ci_high)):
            assert r.ci_low <= r.ci_high
        d = r.to_dict()
        assert list(d) == list(RESULT_COLUMNS)
        assert result_columns_of(r.to_frame()) == list(RESULT_COLUMNS)
    return results


# --- the producers, each on a small input ------------------------------------------------

def _ab_logs():
    rng = np.random.default_rng(5)
    rows, clicks = [], []
    for i in range(40):
        variant = "control" if i % 2 else "treatment"
        for k in range(int(rng.integers(1, 4))):
            sid = f"s{i}-{k}"
            rows.append({"search_id": sid, "user_id": f"u{i}",
                         "ts": TS + pd.Timedelta(minutes=3 * i + k), "query": f"q{k}",
                         "experiment": "e", "variant": variant})
            if rng.random() < (0.7 if variant == "treatment" else 0.5):
                clicks.append({"search_id": sid, "rank": 1,
                               "ts": TS + pd.Timedelta(minutes=3 * i + k, seconds=9)})
    searches = pd.DataFrame(rows)
    return searches, pd.DataFrame(clicks)


def case_abtest():
    import warnings

    searches, clicks = _ab_logs()
    logs = onlineeval.load_logs(searches=searches, clicks=clicks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # too few units for a verdict: warned, not our point
        df = onlineeval.abtest(logs, metrics="ctr,searches_per_unit", alpha=0.1)
    results = _check_frame(df)
    # by hand: CTR per unit pooled as a ratio of sums, units per arm, Holm over 2 p-values
    clicked = searches["search_id"].isin(clicks["search_id"])
    for arm, col in (("control", "control_value"), ("treatment", "treatment_value")):
        part = searches["variant"] == arm
        assert df.loc[0, col] == pytest.approx(clicked[part].mean(), rel=1e-12)
    units = searches.groupby("variant")["user_id"].nunique()
    for r, row in zip(results, df.itertuples(), strict=True):
        assert r.estimate == pytest.approx(row.treatment_value - row.control_value, rel=1e-12)
        assert (r.units_control, r.units_treatment) == (units["control"], units["treatment"])
        assert r.n == units.sum() and r.unit == "user_id" and r.ci_level == pytest.approx(0.9)
        assert (r.correction, r.family_size) == ("holm", 2)
    p = sorted(df["p_value"])
    assert sorted(df["p_adjusted"]) == pytest.approx([min(1, 2 * p[0]), min(1, max(2 * p[0],
                                                                                   p[1]))])


def _ab_readout_case(fn, *args, **kwargs):
    """A readout of abtest's small log (one day, 40 users, every unit's first query q0)
    and the CTR row of abtest itself."""
    import warnings

    searches, clicks = _ab_logs()
    logs = onlineeval.load_logs(searches=searches, clicks=clicks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = fn(logs, *args, **kwargs)
        ab = onlineeval.abtest(logs, metrics="ctr", alpha=0.1).iloc[0]
    return _check_frame(df), ab


def case_effect_over_time():
    from onlineeval.abtest import effect_over_time

    (r,), ab = _ab_readout_case(effect_over_time, "control", "treatment", alpha=0.1)
    # one calendar day: the whole experiment, i.e. abtest's row; pointwise, no correction
    assert (r.estimate, r.ci_low, r.ci_high) == pytest.approx(
        (ab["estimate"], ab["ci_low"], ab["ci_high"]), rel=1e-12)
    assert (r.units_control, r.units_treatment) == (ab["units_control"], ab["units_treatment"])
    assert r.correction is None and r.ci_level == pytest.approx(0.9)


def case_segment_effects():
    from onlineeval.abtest import segment_effects

    (r,), ab = _ab_readout_case(segment_effects, "query", "control", "treatment", alpha=0.1)
    # every unit's first search has query q0: one segment, the whole experiment
    assert r.estimate == pytest.approx(ab["estimate"], rel=1e-12)
    assert r.p_value == pytest.approx(ab["p_value"], rel=1e-12)
    assert (r.correction, r.family_size, r.p_adjusted) == ("holm", 1, r.p_value)


def case_quantile_effects():
    from onlineeval.abtest import quantile_effects

    results, _ = _ab_readout_case(quantile_effects, "control", "treatment", q=(0.5, 0.9),
                                  alpha=0.1)
    # every click comes 9 s after its search: both quantiles are 9 in both arms, and with
    # no spread the test is undefined (null p and interval), not certain
    for r in results:
        assert r.estimate == 0 and math.isnan(r.p_value) and math.isnan(r.ci_low)
        assert r.correction is None and r.ci_level == pytest.approx(0.9)


def _il_logs():
    # users u1..u4 see pages of teams A and B; credit by clicked ranks (hand-counted below)
    pages = [("p1", "u1", "A"), ("p2", "u1", "A"), ("p3", "u2", "B"), ("p4", "u3", "A"),
             ("p5", "u3", None), ("p6", "u4", "A"), ("p7", "u4", "B")]
    searches = pd.DataFrame({"search_id": [p for p, _, _ in pages],
                             "user_id": [u for _, u, _ in pages],
                             "ts": [TS + pd.Timedelta(minutes=i) for i in range(len(pages))],
                             "query": "q", "experiment": "e"})
    results = pd.DataFrame({"search_id": [p for p, _, _ in pages for _ in range(2)],
                            "rank": [1, 2] * len(pages), "doc_id": [f"d{i}" for i in
                                                                    range(2 * len(pages))],
                            "team": ["A", "B"] * len(pages)})
    rank = {"A": 1, "B": 2}
    clicked = [(p, rank[w]) for p, _, w in pages if w]
    clicks = pd.DataFrame({"search_id": [p for p, _ in clicked], "rank": [r for _, r in clicked],
                           "ts": TS + pd.Timedelta(hours=1)})
    return onlineeval.load_logs(searches=searches, results=results, clicks=clicks)


def case_interleaving_readout():
    df = onlineeval.interleaving_readout(_il_logs(), alpha=0.2, n_resamples=200)
    (r,) = _check_frame(df)
    # pages won: A 4 (p1, p2, p4, p6), B 2 (p3, p7), none 1 (p5): Δ_AB = 4/6 − 1/2
    assert r.estimate == pytest.approx(4 / 6 - 0.5)
    # users with a decided page: all four; per-user Δ_u: u1 +.5, u2 −.5, u3 +.5, u4 0
    d_u = np.array([0.5, -0.5, 0.5, 0.0])
    assert r.p_value == pytest.approx(stats.ttest_1samp(d_u, 0).pvalue, rel=1e-12)
    assert (r.n, r.units_control, r.units_treatment, r.unit) == (4, 4, 4, "user")
    assert r.correction is None and r.ci_level == pytest.approx(0.8)


def case_user_test():
    from onlineeval.interleaving.significance import user_test

    wa, wb, t = np.array([3, 0, 1, 0]), np.array([1, 2, 1, 0]), np.array([0, 1, 0, 0])
    r = user_test(wa, wb, t, alpha=0.1)
    _check_records([r])
    d_u = (wa[:3] + t[:3] / 2) / (wa + wb + t)[:3] - 0.5
    ref = stats.ttest_1samp(d_u, 0)
    ci = ref.confidence_interval(0.9)
    assert (r.estimate, r.p_value) == pytest.approx((d_u.mean(), ref.pvalue), rel=1e-12)
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert (r.n, r.units_control, r.unit) == (3, 4, "user")


QRELS = {"1": {"a": 1, "b": 0}, "2": {"c": 1}, "3": {"d": 1, "e": 1}}
RUN_A = {"1": {"b": 2.0, "a": 1.0}, "2": {"c": 1.0}, "3": {"x": 2.0, "d": 1.0}}
RUN_B = {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0}, "3": {"d": 2.0, "e": 1.0}}


def case_offline_compare():
    from onlineeval.offline.compare import compare

    df = compare(QRELS, RUN_A, RUN_B, ["P@1", "map"], alpha=0.1)
    results = _check_frame(df)
    # P@1 per query by hand: a = (0, 1, 0), b = (1, 1, 1)
    a, b = np.array([0.0, 1.0, 0.0]), np.array([1.0, 1.0, 1.0])
    p1 = results[0]
    assert p1.estimate == pytest.approx(2 / 3)
    assert p1.p_value == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-12)
    assert (p1.n, p1.units_control, p1.units_treatment, p1.unit) == (3, 3, 3, "query")
    assert all((r.correction, r.family_size) == ("holm", 2) for r in results)
    assert df["estimate"].tolist() == pytest.approx((df["mean_b"] - df["mean_a"]).tolist())


def case_offline_compare_scores():
    from onlineeval.offline.compare import compare_scores

    base = pd.DataFrame({"m": [0.1, 0.4, 0.3, 0.8]}, index=["q1", "q2", "q3", "q4"])
    other = pd.DataFrame({"m": [0.3, 0.5, 0.2, 0.9]}, index=["q1", "q2", "q3", "q4"])
    df = compare_scores(base, {"b": other}, "wilcoxon", correction="bh")
    (r,) = _check_frame(df)
    d = other["m"] - base["m"]
    assert r.estimate == pytest.approx(d.mean())
    assert r.p_value == pytest.approx(stats.wilcoxon(d).pvalue, rel=1e-12)
    assert (r.correction, r.family_size, r.p_adjusted) == ("bh", 1, pytest.approx(r.p_value))


def case_paired_test():
    from onlineeval.offline.compare import PairedResult, paired_test

    a, b = [0.2, 0.4, 0.1, 0.5], [0.3, 0.6, 0.1, 0.9]
    r = paired_test(a, b, "t", confidence=0.8)
    _check_records([r])
    assert isinstance(r, PairedResult)
    ci = stats.ttest_rel(b, a).confidence_interval(0.8)
    assert (r.ci_low, r.ci_high, r.ci_level) == pytest.approx((ci.low, ci.high, 0.8))
    assert (r.n, r.unit, r.correction) == (4, "query", None)


TABLE = pd.DataFrame({"experiment": list("abcde"), "offline_delta": [0.1, 0.2, -0.1, 0.3, 0.0],
                      "online_delta": [0.05, 0.1, -0.02, 0.01, 0.2]})


def case_agreement_results():
    res = onlineeval.agreement(TABLE, confidence=0.9)
    df = res.results()
    sign, tau, rho = _check_frame(df)
    assert df["statistic"].tolist() == ["sign agreement", "Kendall tau-b", "Spearman rho"]
    # sign: a, b, c, d agree, e has a zero offline delta (left out) -> 4 of 4
    assert (sign.estimate, sign.n) == (1.0, 4)
    ci = stats.binomtest(4, 4).proportion_ci(0.9, method="wilson")
    assert (sign.ci_low, sign.ci_high) == pytest.approx((ci.low, ci.high))
    k = stats.kendalltau(TABLE["offline_delta"], TABLE["online_delta"])
    assert (tau.estimate, tau.p_value, tau.n) == (pytest.approx(k.statistic),
                                                  pytest.approx(k.pvalue), 5)
    assert rho.estimate == pytest.approx(stats.spearmanr(TABLE["offline_delta"],
                                                         TABLE["online_delta"]).statistic)
    assert all(r.unit == "experiment" and r.units_control is None for r in (sign, tau, rho))
    # the JSON of the agreement carries the same records
    assert res.to_dict()["results"][1]["estimate"] == pytest.approx(k.statistic)


def case_association_results():
    from onlineeval.agreement import association, association_results

    x, y = np.array([0.1, -0.2, 0.3]), np.array([0.2, -0.1, 0.05])
    results = _check_records(association_results(association(x, y), 0.95, "query"))
    assert [r.unit for r in results] == ["query"] * 3
    assert results[0].estimate == 1.0  # every sign agrees


def case_sequence_results():
    from onlineeval.stats.sequential import confidence_sequence

    seq = confidence_sequence(np.array([0.3, 0.2, 0.25]), np.array([0.2, 0.1, 0.05]),
                              np.array([20, 40, 80]), alpha=0.1, n_opt=80)
    results = _check_records(seq.results(unit="user_id", units_control=[10, 21, 40],
                                         units_treatment=[10, 19, 40]))
    assert [r.n for r in results] == [20, 40, 80]
    assert [r.units_control for r in results] == [10, 21, 40]
    assert [r.ci_low for r in results] == pytest.approx(seq.ci_low.tolist())
    assert all(r.ci_level == pytest.approx(0.9) and r.correction is None for r in results)
    assert seq.results(unit="user")[0].units_treatment is None


def case_two_arm_stats():
    from onlineeval.stats.moments import Moments
    from onlineeval.stats.tests import welch

    c, t = np.array([1.0, 2.0, 4.0, 3.0]), np.array([3.0, 5.0, 4.0, 6.0, 7.0])
    res = welch(Moments.from_units(c[:, None]), Moments.from_units(t[:, None]), 0, alpha=0.1)
    r = res.result(ci_level=0.9, units_control=4, units_treatment=5, unit="user_id")
    _check_records([r])
    ref = stats.ttest_ind(t, c, equal_var=False)
    assert (r.estimate, r.p_value) == pytest.approx((t.mean() - c.mean(), ref.pvalue))
    ci = ref.confidence_interval(0.9)
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high))
    assert r.n == 9


def case_readout():
    import warnings

    searches, clicks = _ab_logs()
    logs = onlineeval.load_logs(searches=searches, clicks=clicks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # too few units for a verdict: warned, not our point
        ro = onlineeval.readout(logs, primary="ctr", secondary="searches_per_unit",
                                alpha=0.1, design="ab")
        plain = onlineeval.abtest(logs, metrics="ctr,searches_per_unit", alpha=0.1,
                                  correction="none").set_index("metric")
    rows = {row.metric: row for row in ro.metrics}
    _check_records([row.result for row in ro.metrics])
    for name, row in rows.items():
        r = row.result
        assert r.estimate == pytest.approx(plain.loc[name, "estimate"], rel=1e-12)
        assert r.p_value == pytest.approx(plain.loc[name, "p_value"], rel=1e-12)
        assert (r.units_control, r.units_treatment) == (
            plain.loc[name, "units_control"], plain.loc[name, "units_treatment"])
    # the primary family is ctr alone: Holm over one p-value leaves it as it is
    assert (rows["ctr"].result.correction, rows["ctr"].result.family_size) == ("holm", 1)
    assert rows["ctr"].result.p_adjusted == pytest.approx(rows["ctr"].result.p_value)
    # a secondary metric is not in the family
    assert rows["searches_per_unit"].result.correction is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        il = onlineeval.readout(_il_logs(), design="interleaving", alpha=0.2,
                                n_resamples=200, treatment_team="B",
                                control_team="A").interleaving
    _check_records([il.result])
    # case_interleaving_readout's log: Δ_AB of A is 4/6 − 1/2; the treatment B's is its negative
    assert il.treatment_team == "B"
    assert il.result.estimate == pytest.approx(-(4 / 6 - 0.5))
    d_u = np.array([0.5, -0.5, 0.5, 0.0])
    assert il.result.p_value == pytest.approx(stats.ttest_1samp(d_u, 0).pvalue, rel=1e-12)


def case_counterfactual_compare_pairs():
    """Two users, one page each of query q; ips with propensities 1, 0.5. Control ranks
    d1, d2; treatment d2, d1. User 1 saw d1, d2 and clicked d2 (rank 2); user 2 saw d2, d1
    and clicked d2 (rank 1). Control: 1 + 0.5/1; treatment: 1/0.5 + 1: Δ per user 1, 0.5,
    Δ = 0.75, se = sd(1, 0.5) / sqrt(2) = 0.25."""
    import warnings

    from onlineeval.counterfactual import compare_pairs

    logs = onlineeval.load_logs(
        searches=pd.DataFrame({"search_id": [1, 2], "user_id": ["u1", "u2"],
                               "query": ["q", "q"]}),
        results=pd.DataFrame({"search_id": [1, 1, 2, 2], "rank": [1, 2, 1, 2],
                              "doc_id": ["d1", "d2", "d2", "d1"]}),
        clicks=pd.DataFrame({"search_id": [1, 2], "rank": [2, 1]}))

    def run(*docs):
        return pd.DataFrame({"qid": "q", "docno": list(docs), "score": [2.0, 1.0]})

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = compare_pairs(logs, {"e": (run("d1", "d2"), run("d2", "d1"))}, metric="clicks@2",
                           propensities={1: 1.0, 2: 0.5}, max_rank=2)
    (r,) = _check_frame(df)
    z = stats.norm.ppf(0.975)
    assert (r.estimate, r.ci_low, r.ci_high) == pytest.approx((0.75, 0.75 - z * 0.25,
                                                               0.75 + z * 0.25))
    assert r.p_value == pytest.approx(2 * stats.norm.sf(3.0))
    assert (df["control_value"].iloc[0], df["treatment_value"].iloc[0]) == pytest.approx(
        (0.75, 1.5))
    assert (r.n, r.units_control, r.units_treatment, r.unit) == (2, 2, 2, "user_id")


CASES = {
    "onlineeval.counterfactual.difference.compare_pairs": case_counterfactual_compare_pairs,
    "onlineeval.abtest.readout.abtest": case_abtest,
    "onlineeval.interleaving.readout.interleaving_readout": case_interleaving_readout,
    "onlineeval.interleaving.significance.user_test": case_user_test,
    "onlineeval.offline.compare.compare_scores": case_offline_compare_scores,
    "onlineeval.offline.compare.compare": case_offline_compare,
    "onlineeval.offline.compare.paired_test": case_paired_test,
    "onlineeval.agreement.across.AgreementResult.results": case_agreement_results,
    "onlineeval.agreement.core.association_results": case_association_results,
    "onlineeval.stats.sequential.SequenceResult.results": case_sequence_results,
    "onlineeval.stats.results.TwoArmStats.result": case_two_arm_stats,
    "onlineeval.abtest.over_time.effect_over_time": case_effect_over_time,
    "onlineeval.abtest.segments.segment_effects": case_segment_effects,
    "onlineeval.abtest.quantiles.quantile_effects": case_quantile_effects,
    "onlineeval.readout.compute.readout": case_readout,
}

#: private helpers that build results for a public producer (covered through it)
COVERED_BY = {
    "onlineeval.counterfactual.difference.compare_prepared":
        "onlineeval.counterfactual.difference.compare_pairs",
    "onlineeval.interleaving.readout._compare":
        "onlineeval.interleaving.readout.interleaving_readout",
    "onlineeval.abtest.over_time._frame": "onlineeval.abtest.over_time.effect_over_time",
    "onlineeval.interleaving.readout._rows":
        "onlineeval.interleaving.readout.interleaving_readout",
    "onlineeval.readout.ab._row": "onlineeval.readout.compute.readout",
    "onlineeval.readout.interleaved._result": "onlineeval.readout.compute.readout",
}

#: the shape's own helpers (stats/results.py), which are what producers call
SHAPE = {"onlineeval.stats.results.ComparisonResult.to_frame",
         "onlineeval.stats.results.ComparisonResult.adjusted",
         "onlineeval.stats.results.results_frame", "onlineeval.stats.results.comparison_frame",
         "onlineeval.stats.results.adjust_family"}

BUILDERS = {"ComparisonResult", "PairedResult", "UserTest", "comparison_frame",
            "results_frame", "adjust_family"}


def producers_in_source() -> set[str]:
    """Qualified names of the functions (outermost; methods as Class.method) that build a
    result: they construct the shape or call its frame builders."""
    out = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(p for p in rel.parts if p != "__init__")
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def calls_builder(node: ast.AST) -> bool:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call):
                    f = sub.func
                    name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                    if name in BUILDERS:
                        return True
            return False

        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and calls_builder(node):
                out.add(f"{module}.{node.name}")
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and calls_builder(item):
                        out.add(f"{module}.{node.name}.{item.name}")
    return out - SHAPE


def test_every_function_that_builds_a_result_is_a_case_here():
    found = producers_in_source()
    # the reading works: it finds the readouts (else this test would check nothing)
    assert {"onlineeval.abtest.readout.abtest", "onlineeval.offline.compare.compare_scores",
            "onlineeval.interleaving.readout._compare"} <= found
    missing = sorted(f for f in found if f not in CASES and f not in COVERED_BY)
    assert not missing, f"functions that build a result without a case here: {missing}"


@pytest.mark.parametrize("producer", sorted(CASES))
def test_every_producer_returns_the_shape(producer):
    CASES[producer]()


# --- the shape's helpers ----------------------------------------------------------------

def _result(p: float, **kw) -> ComparisonResult:
    return ComparisonResult(estimate=0.1, ci_low=0.0, ci_high=0.2, ci_level=0.95, p_value=p,
                            test="t", n=10, unit="query", **kw)


def test_adjust_family_is_holm_by_hand_and_leaves_null_p_values_out():
    got = adjust_family([_result(0.01), _result(float("nan")), _result(0.04),
                         _result(0.03)], "holm")
    # three defined p-values: sorted 0.01, 0.03, 0.04 -> 0.03, 0.06, max(0.06, 0.04)
    assert [r.p_adjusted for r in got[::2]] == pytest.approx([0.03, 0.06])
    assert got[3].p_adjusted == pytest.approx(0.06)
    assert math.isnan(got[1].p_adjusted)
    assert {(r.correction, r.family_size) for r in got} == {("holm", 3)}


def test_comparison_frame_puts_the_block_between_lead_and_extra_columns():
    df = comparison_frame([{"metric": "ctr"}, {"metric": "mrr"}],
                          [_result(0.01), _result(0.2)], [{"df": 3.0}, {"df": 4.0}])
    assert list(df.columns) == ["metric", *RESULT_COLUMNS, "df"]
    assert df["correction"].tolist() == [None, None] and df["family_size"].isna().all()
    with pytest.raises(ValueError, match="result columns"):
        comparison_frame([{"estimate": 1}], [_result(0.01)])


def test_results_frame_of_no_result_has_the_columns():
    df = results_frame([])
    assert list(df.columns) == list(RESULT_COLUMNS) and len(df) == 0


def test_a_result_refuses_a_level_outside_0_1():
    from onlineeval.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match=r"ci_level must be a number in \(0, 1\)"):
        ComparisonResult(estimate=0.1, ci_low=0.0, ci_high=0.2, ci_level=95, p_value=0.5,
                         test="t", n=1, unit="query")


def test_the_cli_json_of_every_comparison_command_carries_the_block(tmp_path, capsys):
    import json

    from onlineeval.cli import main

    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in QRELS.items()
                                            for d, r in docs.items()))
    for name, run in (("a.run", RUN_A), ("b.run", RUN_B)):
        (tmp_path / name).write_text("".join(
            f"{q} Q0 {d} {i + 1} {s} x\n" for q, docs in run.items()
            for i, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]))))
    assert main(["compare", str(tmp_path / "qrels"), str(tmp_path / "a.run"),
                 str(tmp_path / "b.run"), "-m", "P@1", "--format", "json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    keys = list(rec)
    start = keys.index("estimate")
    assert keys[start:start + len(RESULT_COLUMNS)] == list(RESULT_COLUMNS)
    TABLE.to_csv(tmp_path / "t.csv", index=False)
    assert main(["agree", str(tmp_path / "t.csv"), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [list(r)[1:] for r in rows] == [list(RESULT_COLUMNS)] * 3
