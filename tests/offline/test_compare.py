"""Paired offline comparison: each test against scipy called directly, the randomization test
against an exhaustive enumeration of sign flips, corrections against statsmodels."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from onlineeval.errors import InvalidParameterError, UnknownNameError
from onlineeval.offline.compare import compare, paired_test


def _pair(n: int, seed: int, shift: float = 0.05):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = np.clip(a + rng.normal(shift, 0.15, n), 0, 1)
    return a, b


def test_t_matches_scipy_ttest_rel():
    a, b = _pair(30, 1)
    r = paired_test(a, b, "t", confidence=0.9)
    ref = stats.ttest_rel(b, a)
    ci = ref.confidence_interval(confidence_level=0.9)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert r.estimate == pytest.approx(np.mean(b) - np.mean(a), rel=1e-12)
    assert (r.mean_a, r.mean_b) == pytest.approx((np.mean(a), np.mean(b)))
    # t interval by hand: mean ± t_{0.95, n-1} · sd / sqrt(n)
    d = b - a
    half = stats.t.ppf(0.95, len(d) - 1) * np.std(d, ddof=1) / np.sqrt(len(d))
    assert r.ci_low == pytest.approx(d.mean() - half, rel=1e-10)
    assert r.effect_size == pytest.approx(d.mean() / np.std(d, ddof=1), rel=1e-12)


def test_wilcoxon_matches_scipy():
    a, b = _pair(25, 2)
    assert paired_test(a, b, "wilcoxon").p_value == pytest.approx(
        stats.wilcoxon(b - a).pvalue, rel=1e-12)


def test_sign_test_counts_wins_and_drops_ties():
    a = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    b = np.array([0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.6, 0.8, 0.9, 1.0])  # 6 wins, 1 loss, 3 ties
    r = paired_test(a, b, "sign")
    assert r.p_value == pytest.approx(stats.binomtest(6, 7, 0.5).pvalue, rel=1e-12)
    # by hand: P(X >= 6 or X <= 1) for Binomial(7, 1/2) = 2 * (1 + 7 + ... ) -> (1+7)*2/128
    assert r.p_value == pytest.approx(16 / 128)


def _exhaustive_sign_flip_p(d: np.ndarray) -> float:
    """Two-sided p of the mean difference over all 2^n sign flips, written independently."""
    observed = abs(d.mean())
    hits = 0
    total = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        total += 1
        if abs(np.dot(signs, d) / len(d)) >= observed - 1e-12:
            hits += 1
    return hits / total


def test_randomization_equals_exhaustive_enumeration():
    a, b = _pair(10, 3, shift=0.08)
    r = paired_test(a, b, "randomization")
    assert r.p_value == pytest.approx(_exhaustive_sign_flip_p(b - a), rel=1e-12)


def test_randomization_exact_on_symmetric_case():
    # differences +1 x 9 and -1 x 1: |mean| >= 0.8 only when at most one sign is negative or
    # at most one is positive: 2 * (1 + 10) / 1024
    a = np.zeros(10)
    b = np.array([1.0] * 9 + [-1.0])
    assert paired_test(a, b, "randomization").p_value == pytest.approx(22 / 1024)


def test_randomization_zero_mean_difference_has_p_one():
    # the mean of these differences is 0 exactly but ~1e-17 in floating point; scipy's
    # tolerance, relative to that value, gave p = 0.921875 (found by the statistics audit).
    # Every one of the 2^9 flips has |mean| >= 0, so p = 1, as the other tests give.
    a = np.zeros(9)
    b = np.array([-0.4, -0.2, 0.3, 0.2, 0.3, -0.1, 0.0, -0.2, 0.1])
    assert np.mean(b - a) != 0.0  # the rounding this test is about
    assert _exhaustive_sign_flip_p(b - a) == 1.0
    assert paired_test(a, b, "randomization").p_value == 1.0
    for test in ("t", "wilcoxon", "sign", "bootstrap"):
        assert paired_test(a, b, test).p_value == pytest.approx(1.0)


def test_randomization_monte_carlo_matches_scipy_and_enumeration():
    a, b = _pair(16, 4, shift=0.04)
    r = paired_test(a, b, "randomization", n_resamples=4000, seed=7)
    ref = stats.permutation_test(
        (a, b), lambda x, y, axis: np.mean(y - x, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=4000, random_state=7,
    )
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    d = b - a
    signs = 1 - 2 * ((np.arange(2 ** 16)[:, None] >> np.arange(16)) & 1)
    exact = np.mean(np.abs(signs @ d / 16) >= abs(d.mean()) - 1e-12)
    se = np.sqrt(exact * (1 - exact) / 4000)
    assert abs(r.p_value - exact) < 4 * se + 1 / 4000


def test_bootstrap_matches_scipy_bootstrap():
    a, b = _pair(40, 5)
    r = paired_test(a, b, "bootstrap", n_resamples=2000, seed=11, confidence=0.95)
    d = b - a
    ref = stats.bootstrap((d,), np.mean, n_resamples=2000, method="percentile",
                          random_state=11, confidence_level=0.95)
    assert (r.ci_low, r.ci_high) == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high), rel=1e-12)
    # p from the bootstrap distribution shifted to mean zero, counted here with a loop
    dist = ref.bootstrap_distribution
    count = sum(1 for m in dist if abs(m - d.mean()) >= abs(d.mean()) - 1e-12)
    assert r.p_value == pytest.approx((count + 1) / 2001)


def test_bootstrap_p_is_close_to_t_on_large_normal_sample():
    rng = np.random.default_rng(9)
    a = rng.normal(0, 1, 400)
    b = a + rng.normal(0.08, 1, 400)
    p_boot = paired_test(a, b, "bootstrap", n_resamples=4000, seed=1).p_value
    p_t = paired_test(a, b, "t").p_value
    assert abs(p_boot - p_t) < 0.03


def test_seeded_tests_are_reproducible():
    a, b = _pair(40, 6)
    for t in ("bootstrap", "randomization"):
        assert paired_test(a, b, t, seed=3) == paired_test(a, b, t, seed=3)


@pytest.mark.parametrize("test", ["t", "wilcoxon", "sign", "randomization", "bootstrap"])
def test_identical_runs_give_p_one(test):
    a = np.array([0.1, 0.5, 0.3, 0.9])
    r = paired_test(a, a.copy(), test)
    assert r.p_value == 1.0 and r.estimate == 0.0
    assert np.isnan(r.effect_size)


def test_single_query_has_no_test():
    r = paired_test([0.2], [0.5], "t")
    assert r.estimate == pytest.approx(0.3)
    assert np.isnan(r.p_value) and np.isnan(r.ci_low)


def test_bad_input():
    with pytest.raises(UnknownNameError, match="did you mean 'wilcoxon'"):
        paired_test([1, 2], [2, 3], "wilcoxn")
    with pytest.raises(InvalidParameterError, match="equal length"):
        paired_test([1, 2, 3], [2, 3], "t")
    with pytest.raises(InvalidParameterError, match="NaN"):
        paired_test([1, np.nan], [2, 3], "t")


def test_aliases():
    a, b = _pair(12, 8)
    assert paired_test(a, b, "permutation") == paired_test(a, b, "randomization")


def test_pandas_series_input():
    a, b = _pair(8, 10)
    r = paired_test(pd.Series(a), pd.Series(b), "t")
    assert r.p_value == pytest.approx(stats.ttest_rel(b, a).pvalue)


# --- compare(): runs scored by evaluate(), paired by query ---------------------------------

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 a 1\nq2 0 d 1\nq3 0 x 1\n"
RUN_A = "q1 Q0 a 1 3 A\nq1 Q0 b 2 2 A\nq1 Q0 c 3 1 A\nq2 Q0 d 1 2 A\nq2 Q0 a 2 1 A\n"
RUN_B = ("q1 Q0 c 1 3 B\nq1 Q0 a 2 2 B\nq1 Q0 b 3 1 B\nq2 Q0 a 1 2 B\nq2 Q0 d 2 1 B\n"
         "q3 Q0 x 1 1 B\n")
# run C: worse than A on q1 (b first), same elsewhere, q3 missing
RUN_C = "q1 Q0 b 1 3 C\nq1 Q0 a 2 2 C\nq1 Q0 c 3 1 C\nq2 Q0 d 1 2 C\nq2 Q0 a 2 1 C\n"

# by hand (q3 is missing from A and C and scores 0 there, as trec_eval -c):
#   P@1   A: 1, 1, 0   B: 1, 1, 1   C: 0, 1, 0
#   AP    A: (1 + 2/3)/2, 1, 0   B: 1, 1, 1   C: (1/2 + 2/3)/2, 1, 0
P1 = {"A": [1, 1, 0], "B": [1, 1, 1], "C": [0, 1, 0]}
AP = {"A": [5 / 6, 1, 0], "B": [1, 1, 1], "C": [7 / 12, 1, 0]}


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (("qrels", QRELS), ("A", RUN_A), ("B", RUN_B), ("C", RUN_C)):
        p = tmp_path / f"{name}.txt"
        p.write_text(text)
        out[name] = p
    return out


def test_compare_means_and_deltas_by_hand(files):
    df = compare(files["qrels"], files["A"], files["B"], ["P@1", "map"], test="t")
    assert df["measure"].tolist() == ["P_1", "map"]
    p1, ap = df.iloc[0], df.iloc[1]
    assert (p1["mean_a"], p1["mean_b"], p1["estimate"]) == pytest.approx((2 / 3, 1, 1 / 3))
    assert (ap["mean_a"], ap["mean_b"]) == pytest.approx((11 / 18, 1))
    assert p1["n"] == 3 and p1["baseline"] == "A.txt" and p1["run"] == "B.txt"
    for row, values in ((p1, P1), (ap, AP)):
        ref = stats.ttest_rel(values["B"], values["A"])
        assert row["p_value"] == pytest.approx(ref.pvalue)
        ci = ref.confidence_interval(0.95)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high))


def test_compare_several_runs_holm_over_runs_and_measures(files):
    df = compare(files["qrels"], files["A"], [files["B"], files["C"]], ["P@1", "map"],
                 test="randomization", correction="holm")
    assert df["run"].tolist() == ["B.txt", "B.txt", "C.txt", "C.txt"]
    expected = [
        paired_test(P1["A"], P1["B"], "randomization").p_value,
        paired_test(AP["A"], AP["B"], "randomization").p_value,
        paired_test(P1["A"], P1["C"], "randomization").p_value,
        paired_test(AP["A"], AP["C"], "randomization").p_value,
    ]
    np.testing.assert_allclose(df["p_value"], expected)
    # Holm by hand: sort ascending, multiply by m - i, running max, cap at 1
    order = np.argsort(expected, kind="stable")
    adj = np.empty(4)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (4 - i) * expected[j]))
        adj[j] = running
    np.testing.assert_allclose(df["p_adjusted"], adj)
    assert df["significant"].tolist() == list(adj < 0.05)


def test_compare_dict_runs_and_errors(files):
    df = compare(files["qrels"], files["A"], {"better": files["B"]}, "P@1", test="sign")
    assert df["run"].tolist() == ["better"]
    assert df["p_value"].iloc[0] == pytest.approx(1.0)  # one win, no loss: 2 * 1/2
    with pytest.raises(UnknownNameError):
        compare(files["qrels"], files["A"], files["B"], ["P@1"], correction="bonf")
    with pytest.raises(InvalidParameterError, match="at least one measure"):
        compare(files["qrels"], files["A"], files["B"], [])


def test_cli_compare(files, capsys):
    import json

    from onlineeval.cli import main

    rc = main(["compare", str(files["qrels"]), str(files["A"]), str(files["B"]),
               str(files["C"]), "-m", "P@1", "-m", "map", "--format", "json"])
    assert rc == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["run"], r["measure"]) for r in rows] == [
        ("B.txt", "P_1"), ("B.txt", "map"), ("C.txt", "P_1"), ("C.txt", "map")]
    assert rows[3]["estimate"] == pytest.approx((7 / 12 - 5 / 6) / 3)
    rc = main(["compare", str(files["qrels"]), str(files["A"]), str(files["B"]), "-m", "P@1",
               "--test", "wilcoxn"])
    assert rc == 2
    assert "did you mean 'wilcoxon'" in capsys.readouterr().err


def test_constant_nonzero_difference():
    a, b = np.zeros(4), np.ones(4)
    with pytest.warns(RuntimeWarning, match="Precision loss"):
        ref = stats.ttest_rel(b, a).pvalue
    assert paired_test(a, b, "t").p_value == ref == 0.0
    # 4 positive differences: sign test = 2 * (1/2)^4; randomization: 2 of 16 sign patterns
    assert paired_test(a, b, "sign").p_value == pytest.approx(2 / 16)
    assert paired_test(a, b, "randomization").p_value == pytest.approx(2 / 16)
    assert paired_test(a, b, "bootstrap", n_resamples=999).p_value == pytest.approx(1 / 1000)
    assert np.isnan(paired_test(a, b, "t").effect_size)


def test_compare_accepts_dicts():
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    run_a = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}}   # b first on q1: P@1 = 0, 1
    run_b = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}   # P@1 = 1, 1
    single = compare(qrels, run_a, run_b, ["P@1"])
    assert single["run"].tolist() == ["run_b"] and single["baseline"].tolist() == ["run_a"]
    assert single["estimate"].iloc[0] == pytest.approx(0.5)
    named = compare(qrels, run_a, {"mine": run_b, "same": run_a}, ["P@1"], correction="none")
    assert named["run"].tolist() == ["mine", "same"]
    assert named["estimate"].tolist() == pytest.approx([0.5, 0.0])
    assert named["p_value"].iloc[1] == 1.0


# --- trec_eval -c golden: a query missing from one run ------------------------------------

TREC = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
GOLDEN_MEASURES = ["map", "P_10", "ndcg_cut_10", "recip_rank", "bpref", "num_ret", "num_rel",
                   "num_rel_ret"]
TOTALS = {"num_ret", "num_rel", "num_rel_ret"}  # trec_eval prints the total, not the mean


def _golden(name: str) -> dict[tuple[str, str], float]:
    """``(measure, qid) -> value`` from a trec_eval 10.0 -q output file."""
    out = {}
    for line in (TREC / name).read_text().splitlines():
        measure, qid, value = (f.strip() for f in line.split("\t"))
        try:
            out[(measure, qid)] = float(value)
        except ValueError:
            continue
    return out


def test_missing_query_scores_as_trec_eval_c_golden():
    """results.trunc lacks topic 302: compare() must score it as ``trec_eval -c`` did when it
    wrote out.test.aqc (0 on the ranking measures, num_rel kept at 77), and the full run as
    out.test.aq. The paired t test is then recomputed from the golden per-query values."""
    aqc, aq = _golden("out.test.aqc"), _golden("out.test.aq")
    df = compare(TREC / "qrels.test", TREC / "results.trunc", TREC / "results.test",
                 GOLDEN_MEASURES, correction="none").set_index("measure")
    assert set(df.index) == set(GOLDEN_MEASURES) and (df["n"] == 3).all()
    qids = ["301", "302", "303"]
    assert aqc[("num_rel", "302")] == 77 and aqc[("map", "302")] == 0
    for m in GOLDEN_MEASURES:
        a = np.array([aqc[(m, q)] for q in qids])
        b = np.array([aq[(m, q)] for q in qids])
        scale = 3 if m in TOTALS else 1  # per-query mean x 3 queries = trec_eval's total
        assert df.loc[m, "mean_a"] * scale == pytest.approx(aqc[(m, "all")], abs=6e-5), m
        assert df.loc[m, "mean_b"] * scale == pytest.approx(aq[(m, "all")], abs=6e-5), m
        assert df.loc[m, "estimate"] == pytest.approx(b.mean() - a.mean(), abs=6e-5), m
        # golden per-query values carry 4 decimals: the p-value agrees to that precision
        # (num_rel is the same for both runs: no difference, p = 1 by compare's rule)
        expected_p = 1.0 if (a == b).all() else stats.ttest_rel(b, a).pvalue
        assert df.loc[m, "p_value"] == pytest.approx(expected_p, abs=2e-3), m


@pytest.mark.parametrize("measure,why", [
    ("gm_map", "geometric mean"), ("gm_bpref", "geometric mean"), ("num_q", "counts queries"),
    ("relstring", "text"), ("runid", "run's id"),
])
def test_measures_without_a_per_query_mean_are_refused(files, measure, why):
    with pytest.raises(InvalidParameterError, match=why):
        compare(files["qrels"], files["A"], files["B"], ["map", measure])


def test_cli_refused_measure_is_one_line(files, capsys):
    from onlineeval.cli import main

    assert main(["compare", str(files["qrels"]), str(files["A"]), str(files["B"]),
                 "-m", "relstring"]) == 2
    err = capsys.readouterr().err
    assert "relstring" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_compare_is_quiet_off_a_terminal(files, capsys):
    compare(files["qrels"], files["A"], [files["B"], files["C"]], ["map"], test="bootstrap",
            n_resamples=200)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


# --------------------------------------------------------------------------- which run is bad

_QRELS = {"1": {"a": 1, "b": 0}, "2": {"a": 1, "c": 1}}
_GOOD = {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0, "a": 0.5}}
_BAD_RUNS = [
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, "high"]}),
     r" column 'score' row 1: 'high' is not a number"),
    ({"1": {"a": 1.0, "b c": 2.0}}, r" column 'docno' row 1: 'b c' is empty or contains"),
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "a"], "score": [1.0, 2.0]}),
     r": document 'a' is listed 2 times for query '1'"),
    (pd.DataFrame({"qid": ["1"], "docno": ["a"]}), r" DataFrame needs columns qid, docno, score"),
]


@pytest.mark.parametrize(("bad", "problem"), _BAD_RUNS)
def test_a_bad_dataframe_or_dict_run_is_named_by_its_place(bad, problem):
    from onlineeval.errors import InputError

    with pytest.raises(InputError, match=r"^compare second run \(run_b\)" + problem) as second:
        compare(_QRELS, _GOOD, bad, "map")
    assert "baseline" not in str(second.value)
    with pytest.raises(InputError, match=r"^compare baseline run \(run_a\)" + problem) as first:
        compare(_QRELS, bad, _GOOD, "map")
    assert "second" not in str(first.value)
    with pytest.raises(InputError, match=r"^compare run 'run_2' \(run_b\[1\]\)" + problem):
        compare(_QRELS, _GOOD, [_GOOD, bad], "map")
    with pytest.raises(InputError, match=r"^compare run 'theirs' \(run_b\['theirs'\]\)" + problem):
        compare(_QRELS, _GOOD, {"mine": _GOOD, "theirs": bad}, "map")


def test_a_bad_run_file_in_compare_is_named_by_path_and_line(tmp_path):
    from onlineeval.errors import LogFormatError

    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 high t\n")
    with pytest.raises(LogFormatError, match=r"bad\.run:2: score \(5th field\) must be a number"):
        compare(_QRELS, _GOOD, [_GOOD, bad], "map")


def test_labels_do_not_change_the_comparison():
    # per_query_scores with a label gives the plain evaluate(..., complete=True) values
    from onlineeval.offline import evaluate
    from onlineeval.offline.compare import per_query_scores

    labelled = per_query_scores(_QRELS, _GOOD, ["map", "P@1"], run_label="my run")
    plain = evaluate(_QRELS, _GOOD, ["map", "P@1"], per_query=True, complete=True)
    assert labelled.index.tolist() == plain["qid"].tolist() == ["1", "2"]
    assert labelled["map"].tolist() == plain["map"].tolist() == [1.0, 1.0]
    assert labelled["P_1"].tolist() == plain["P_1"].tolist() == [1.0, 1.0]
