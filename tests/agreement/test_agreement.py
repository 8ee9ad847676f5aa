"""Agreement statistics on hand-made tables with hand-computed expected values."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import onlineeval
from onlineeval.agreement import (
    DECISIONS,
    association,
    association_results,
    per_query_agreement,
    tau_matrix,
)
from onlineeval.errors import InputError, SchemaError

Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval written from its formula."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def table(off, on, offp=None, onp=None):
    df = pd.DataFrame({"experiment": [f"e{i}" for i in range(len(off))],
                       "offline_delta": off, "online_delta": on})
    if offp is not None:
        df["offline_p"] = offp
        df["online_p"] = onp
    return df


def test_perfect_agreement():
    r = onlineeval.agreement(table([1, 2, 3, 4, 5], [0.1, 0.2, 0.3, 0.4, 0.5]))
    s = r.stats
    assert (s["n"], s["n_agree"], s["n_disagree"], s["n_zero"]) == (5, 5, 0, 0)
    assert s["sign_agreement"] == 1.0
    lo, hi = wilson(5, 5)
    assert s["sign_ci_low"] == pytest.approx(lo, rel=1e-9)
    assert s["sign_ci_low"] == pytest.approx(1 / (1 + Z95 ** 2 / 5), rel=1e-9)
    assert s["sign_ci_high"] == pytest.approx(hi)
    assert s["kendall_tau"] == pytest.approx(1.0)
    # exact null distribution: only the identity permutation of 5! has tau = 1 (two-sided)
    assert s["kendall_p"] == pytest.approx(2 / 120)
    assert s["spearman_rho"] == pytest.approx(1.0)
    assert s["spearman_p"] == pytest.approx(2 / 120)  # exact: 2 of 5! pairings reach |rho|=1
    assert r.decisions is None
    assert r.experiments["sign_agrees"].tolist() == [True] * 5


def test_perfect_disagreement():
    s = onlineeval.agreement(table([1, 2, 3, 4, 5], [-1, -2, -3, -4, -5])).stats
    assert (s["n_agree"], s["n_disagree"]) == (0, 5)
    assert s["sign_agreement"] == 0.0
    lo, hi = wilson(0, 5)
    assert (s["sign_ci_low"], s["sign_ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
    assert s["kendall_tau"] == pytest.approx(-1.0)
    assert s["kendall_p"] == pytest.approx(2 / 120)
    assert s["spearman_rho"] == pytest.approx(-1.0)
    assert s["spearman_p"] == pytest.approx(2 / 120)


def test_ties_in_ranks():
    x, y = [1, 1, 2, 3], [1, 2, 2, 3]
    s = onlineeval.agreement(table(x, y)).stats
    # C = 4, D = 0, ties only in x = 1, only in y = 1: tau_b = 4 / sqrt(5 * 5)
    assert s["kendall_tau"] == pytest.approx(0.8)
    assert s["kendall_p"] == pytest.approx(stats.kendalltau(x, y).pvalue)
    # average ranks (1.5, 1.5, 3, 4) and (1, 2.5, 2.5, 4): Pearson = 3.75 / 4.5
    assert s["spearman_rho"] == pytest.approx(3.75 / 4.5)
    # n <= 8: exact p over all 4! pairings of the average ranks, enumerated here
    rx, ry = np.array([1.5, 1.5, 3, 4]), np.array([1, 2.5, 2.5, 4])

    def rho(a, b):
        return np.corrcoef(a, b)[0, 1]

    null = [rho(rx, ry[list(p)]) for p in itertools.permutations(range(4))]
    observed = rho(rx, ry)
    extreme = sum(1 for v in null if v >= observed - 1e-12)
    extreme_low = sum(1 for v in null if v <= observed + 1e-12)
    assert s["spearman_p"] == pytest.approx(min(1.0, 2 * min(extreme, extreme_low) / 24))


def test_zero_deltas_have_no_direction():
    r = onlineeval.agreement(table([0.1, -0.2, 0.0, 0.3, 0.4], [0.2, 0.1, 0.5, -0.1, 0.0]))
    s = r.stats
    assert (s["n"], s["n_agree"], s["n_disagree"], s["n_zero"]) == (5, 1, 2, 2)
    assert s["sign_agreement"] == pytest.approx(1 / 3)
    lo, hi = wilson(1, 3)
    assert (s["sign_ci_low"], s["sign_ci_high"]) == pytest.approx((lo, hi))
    assert r.experiments["sign_agrees"].tolist() == [True, False, pd.NA, False, pd.NA]


def test_decision_table_every_category():
    off = [0.1, 0.1, 0.1, 0.1, -0.1, 0.2]
    on = [0.2, -0.2, 0.2, 0.2, -0.3, 0.1]
    offp = [0.01, 0.01, 0.01, 0.30, 0.30, np.nan]
    onp = [0.02, 0.03, 0.20, 0.04, 0.50, 0.01]
    r = onlineeval.agreement(table(off, on, offp, onp), alpha=0.05)
    assert r.experiments["decision"].tolist() == [
        DECISIONS[0], DECISIONS[1], DECISIONS[2], DECISIONS[3], DECISIONS[4], DECISIONS[3]]
    assert r.decisions["count"].tolist() == [1, 1, 1, 2, 1]
    assert r.decisions["share"].sum() == pytest.approx(1.0)
    # a stricter alpha moves the 0.02/0.03/0.04 online results out of "significant"
    strict = onlineeval.agreement(table(off, on, offp, onp), alpha=0.015)
    assert strict.decisions["count"].tolist() == [0, 0, 3, 1, 2]


def test_missing_delta_rows_are_excluded_and_counted():
    r = onlineeval.agreement(table([0.1, None, 0.3], [0.2, 0.1, None]))
    assert r.excluded == ["e1", "e2"]
    assert r.stats["n_excluded"] == 2 and r.stats["n"] == 1
    assert math.isnan(r.stats["kendall_tau"])  # one pair: undefined, not made up


def test_constant_online_gives_null_correlation():
    s = onlineeval.agreement(table([1, 2, 3], [0.5, 0.5, 0.5])).stats
    assert math.isnan(s["kendall_tau"]) and math.isnan(s["spearman_rho"])
    assert s["sign_agreement"] == 1.0


def test_bad_tables(tmp_path):
    with pytest.raises(SchemaError, match="missing column"):
        onlineeval.agreement(pd.DataFrame({"offline_delta": [1.0]}))
    p = tmp_path / "exp.csv"
    p.write_text("experiment,offline_delta,online_delta\na,0.1,0.2\nb,0.2,abc\n")
    with pytest.raises(SchemaError, match=r"exp.csv line 3: column 'online_delta'.*'abc'"):
        onlineeval.agreement(p)
    with pytest.raises(SchemaError, match="both p-value columns"):
        onlineeval.agreement(table([1.0], [2.0]).assign(offline_p=[0.1]))
    with pytest.raises(SchemaError, match=r"table row 0: column 'offline_p' must be a p-value "
                                          r"in \[0, 1\], got 1.5"):
        onlineeval.agreement(table([1.0], [2.0], [1.5], [0.1]))
    with pytest.raises(InputError, match="does not exist"):
        onlineeval.agreement(tmp_path / "nope.csv")


def test_custom_column_names_and_csv(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("name,d_ndcg,d_ctr\nx,0.1,0.01\ny,-0.2,-0.03\nz,0.3,0.02\n")
    r = onlineeval.agreement(p, offline="d_ndcg", online="d_ctr", experiment="name")
    assert r.experiments["experiment"].tolist() == ["x", "y", "z"]
    # ranks (2,1,3) vs (2,1,3): perfect; exact p = 2/3! = 1/3
    assert r.stats["kendall_tau"] == pytest.approx(1.0)
    assert r.stats["kendall_p"] == pytest.approx(1 / 3)
    assert r.stats["spearman_p"] == pytest.approx(1 / 3)  # not scipy's t-approximation 0
    d = r.to_dict()
    assert d["summary"]["n"] == 3 and d["decisions"] is None


def test_spearman_p_switches_to_scipy_above_eight():
    rng = np.random.default_rng(3)
    x = rng.normal(size=9)
    y = x + rng.normal(size=9)
    assert association(x, y)["spearman_p"] == pytest.approx(stats.spearmanr(x, y).pvalue)
    x8, y8 = x[:8], y[:8]
    # exact: all 8! re-pairings of the ranks, enumerated here
    rx, ry = stats.rankdata(x8), stats.rankdata(y8)
    perms = np.array(list(itertools.permutations(range(8))))
    px = rx[perms] - rx.mean()
    null = (px * (ry - ry.mean())).sum(axis=1) / np.sqrt(
        (px ** 2).sum(axis=1) * ((ry - ry.mean()) ** 2).sum())
    obs = stats.spearmanr(x8, y8).statistic
    p = 2 * min(np.mean(null >= obs - 1e-12), np.mean(null <= obs + 1e-12))
    assert association(x8, y8)["spearman_p"] == pytest.approx(min(p, 1.0))


def test_association_matches_scipy_on_random_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    a = association(x, y)
    k, s = stats.kendalltau(x, y), stats.spearmanr(x, y)
    assert (a["kendall_tau"], a["kendall_p"]) == pytest.approx((k.statistic, k.pvalue))
    assert (a["spearman_rho"], a["spearman_p"]) == pytest.approx((s.statistic, s.pvalue))
    # tau-a = tau-b without ties: (C - D) / (n choose 2), counted here by brute force
    c = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
            for i in range(30) for j in range(i + 1, 30))
    assert a["kendall_tau"] == pytest.approx(c / (30 * 29 / 2))


def test_tau_matrix_hand_made():
    t = pd.DataFrame({
        "ndcg": [1, 2, 3, 4], "map": [4, 3, 2, 1],
        "ctr": [0.1, 0.2, 0.3, 0.4], "mrr": [0.1, 0.3, 0.2, None],
    })
    m = tau_matrix(t, ["ndcg", "map"], ["ctr", "mrr"])
    piv = m.pivot(index="offline", columns="online", values="kendall_tau")
    assert piv.loc["ndcg", "ctr"] == pytest.approx(1.0)
    assert piv.loc["map", "ctr"] == pytest.approx(-1.0)
    # mrr pairs use 3 experiments: ndcg (1,2,3) vs (0.1,0.3,0.2): C=2, D=1 -> 1/3
    assert piv.loc["ndcg", "mrr"] == pytest.approx(1 / 3)
    assert piv.loc["map", "mrr"] == pytest.approx(-1 / 3)
    assert m.set_index(["offline", "online"]).loc[("ndcg", "mrr"), "n"] == 3
    with pytest.raises(SchemaError, match="not in the table"):
        tau_matrix(t, ["err"], ["ctr"])


def test_per_query_agreement():
    off = pd.Series({"q1": 0.2, "q2": -0.1, "q3": 0.0, "q4": 0.3, "q9": 0.5})
    on = {"q1": 1.0, "q2": -1.0, "q3": 1.0, "q4": 0.5, "q7": 1.0}
    r = per_query_agreement(off, on)
    assert r["n"] == 4 and r["n_offline_only"] == 1 and r["n_online_only"] == 1
    # q3 has offline delta 0: no direction; q1, q2, q4 agree
    assert (r["n_agree"], r["n_zero"], r["sign_agreement"]) == (3, 1, 1.0)
    x, y = [0.2, -0.1, 0.0, 0.3], [1.0, -1.0, 1.0, 0.5]
    assert r["kendall_tau"] == pytest.approx(stats.kendalltau(x, y).statistic)
    with pytest.raises(InputError, match="more than once"):
        per_query_agreement(pd.Series([1.0, 2.0], index=["a", "a"]), on)
    with pytest.raises(InputError, match=r"online per-query value of query 'q2' is not a "
                                         r"number: 'x'"):
        per_query_agreement(off, {"q1": 1.0, "q2": "x"})


FIRST_IMPORTS = ("import onlineeval", "import onlineeval.agreement.core")


@pytest.fixture(scope="module")
def agreement_after(fresh_interpreters) -> dict[str, str]:
    """What ``onlineeval.agreement(table)`` printed after each of FIRST_IMPORTS, each in an
    interpreter that had imported no onlineeval module (one launch for both)."""
    code = ("{}\nimport onlineeval, pandas as pd\n"
            "t = pd.DataFrame({{'offline_delta': [1, 2, 3], 'online_delta': [1, 3, 2]}})\n"
            "print(onlineeval.agreement(t).stats['n_agree'])\n")
    outs = fresh_interpreters([code.format(first) for first in FIRST_IMPORTS])
    return dict(zip(FIRST_IMPORTS, outs, strict=True))


@pytest.mark.parametrize("first", FIRST_IMPORTS)
def test_onlineeval_agreement_is_callable_whatever_was_imported_first(first, agreement_after):
    assert agreement_after[first].strip() == "3"


@pytest.mark.parametrize("text,message", [
    # more fields than the header: pandas would silently turn the first into an index
    ("experiment,offline_delta,online_delta\na,0.1,0.2\nb,0.1,0.2,9\n",
     r"exp.csv line 3: 4 field\(s\), but the header has 3"),
    ("experiment,offline_delta,online_delta\na,0.1\n",
     r"exp.csv line 2: 2 field\(s\), but the header has 3"),
    ("experiment,offline_delta,online_delta,offline_p,online_p\na,0.1,0.2,0.01,0.5\n"
     "b,0.1,0.2,0.2,-0.1\n", r"exp.csv line 3: column 'online_p' must be a p-value in \[0, 1\], "
                             r"got -0.1"),
    ("experiment,offline_delta,online_delta\na,0.1,0.2\nb,0.3,0.1\na,0.2,0.2\n",
     r"experiment 'a' appears more than once \(.*exp.csv line 2, .*exp.csv line 4\)"),
    ("experiment,offline_delta,offline_delta\na,1,2\n",
     r"exp.csv line 1: the header names column\(s\) \['offline_delta'\] twice"),
    ("", r"exp.csv: the file is empty"),
    ("experiment,offline_delta,online_delta\n\n", r"exp.csv: the header has no rows"),
])
def test_csv_errors_name_file_line_and_column(tmp_path, text, message):
    p = tmp_path / "exp.csv"
    p.write_text(text)
    with pytest.raises(InputError, match=message):
        onlineeval.agreement(p)


def test_csv_line_numbers_count_blank_lines_and_quoted_commas(tmp_path):
    p = tmp_path / "exp.csv"
    p.write_text('experiment,offline_delta,online_delta\n"a, the first",0.1,0.2\n\n'
                 "b,0.2,zz\n")
    with pytest.raises(SchemaError, match=r"exp.csv line 4: column 'online_delta'.*'zz'"):
        onlineeval.agreement(p)
    p.write_text('experiment,offline_delta,online_delta\n"a, the first",0.1,0.2\n\n'
                 "b,0.2,-0.1\nc,,0.3\n")
    r = onlineeval.agreement(p)
    assert r.experiments["experiment"].tolist() == ["a, the first", "b"]
    assert r.excluded == ["c"] and (r.stats["n_agree"], r.stats["n_disagree"]) == (1, 1)


def test_rows_without_a_name_are_named_by_their_line(tmp_path):
    p = tmp_path / "exp.csv"
    p.write_text("offline_delta,online_delta\n0.1,0.2\n,0.3\n")
    r = onlineeval.agreement(p)
    assert r.excluded == [f"{p} line 3"]


def test_tau_matrix_refuses_a_non_numeric_cell_instead_of_dropping_it():
    # Audit: tau_matrix coerced a typo like "0.2O" to null and silently dropped that
    # experiment (n went from 4 to 3 and tau changed); agreement() refuses the same table.
    t = pd.DataFrame({"ndcg": [1, 2, 3, 4], "ctr": ["0.1", "0.2O", "0.3", "0.4"]})
    with pytest.raises(SchemaError, match=r"row 1.*'ctr'.*'0.2O'"):
        tau_matrix(t, ["ndcg"], ["ctr"])
    with pytest.raises(SchemaError, match="'0.2O'"):
        onlineeval.agreement(t.rename(columns={"ndcg": "offline_delta",
                                               "ctr": "online_delta"}))
    # numeric strings and genuinely missing values are fine (missing: pair left out, n says so)
    t.loc[1, "ctr"] = None
    m = tau_matrix(t, ["ndcg"], ["ctr"])
    assert m.loc[0, "n"] == 3 and m.loc[0, "kendall_tau"] == pytest.approx(1.0)


def test_correlation_intervals_by_hand():
    """Fisher z intervals: atanh(r) ± z sqrt(v), v = 0.437/(n-4) for τ-b and
    (1 + ρ²/2)/(n-3) for ρ, back through tanh."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=12)
    y = x + rng.normal(size=12)
    a = association(x, y, confidence=0.9)
    tau = stats.kendalltau(x, y).statistic
    rho = stats.spearmanr(x, y).statistic
    z = stats.norm.ppf(0.95)
    for key, r, v in (("kendall", tau, 0.437 / 8), ("spearman", rho, (1 + rho ** 2 / 2) / 9)):
        lo = math.tanh(math.atanh(r) - z * math.sqrt(v))
        hi = math.tanh(math.atanh(r) + z * math.sqrt(v))
        assert (a[f"{key}_ci_low"], a[f"{key}_ci_high"]) == pytest.approx((lo, hi), rel=1e-12)
    res = association_results(a, 0.9, "experiment")
    assert (res[1].ci_low, res[2].ci_high) == pytest.approx((a["kendall_ci_low"],
                                                             a["spearman_ci_high"]))


def test_correlation_intervals_are_null_where_undefined():
    small = association(np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4]))
    assert math.isnan(small["kendall_ci_low"])       # n = 4: no τ interval
    assert not math.isnan(small["spearman_ci_low"])  # n > 3
    perfect = association(np.arange(10.0), np.arange(10.0) ** 2)
    assert math.isnan(perfect["kendall_ci_high"]) and math.isnan(perfect["spearman_ci_low"])


@pytest.mark.slow
def test_correlation_intervals_cover_the_population_values():
    """Bivariate normal with correlation 0.6, 30 pairs, 600 samples: the 95% intervals
    cover the population τ = (2/π) asin(0.6) and ρ_s = (6/π) asin(0.3) in 92–98% of them."""
    rng = np.random.default_rng(11)
    r = 0.6
    tau, rho = 2 / np.pi * np.arcsin(r), 6 / np.pi * np.arcsin(r / 2)
    hit = np.zeros(2)
    reps = 600
    for _ in range(reps):
        x, e = rng.normal(size=(2, 30))
        a = association(x, r * x + np.sqrt(1 - r * r) * e)
        hit += [a["kendall_ci_low"] <= tau <= a["kendall_ci_high"],
                a["spearman_ci_low"] <= rho <= a["spearman_ci_high"]]
    cover = hit / reps
    assert ((0.92 <= cover) & (cover <= 0.98)).all(), cover
