"""The sample logs: SRM on their real unit counts, the 1%-drop detection and its scale,
and readouts of their A/A and large-margin experiments.

The issue asks that "a 50/50 split with 1% of treatment units dropped is flagged at the
sample sizes of the sample logs". That is impossible, and the test shows why instead of
pretending otherwise. With N control units and 0.99 N treatment units the expected count per
arm is 0.995 N, so chi-square = 2 (0.005 N)^2 / (0.995 N) = N * 0.01^2 / 1.99, and p < 0.001
(chi-square > 10.83, one degree of freedom) needs N > ~215,500 units per arm. Even then a
real experiment, whose split is itself random, is flagged only about half the time; being
flagged 80% of the time needs ~340,000 units per arm (non-central chi-square). The sample
logs have ~1,450-1,550 units per arm and experiment: at that size only a loss of more than
~12% of the treatment units is flagged.
"""

from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

import onlineeval
from onlineeval.abtest.units import load_units
from onlineeval.stats.srm import srm_test

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "ab"


@pytest.fixture(scope="module")
def sample_counts():
    logs = onlineeval.load_logs(SAMPLE)
    direct = logs.con.execute(
        "SELECT experiment, variant, count(DISTINCT user_id) FROM searches GROUP BY ALL"
    ).fetchall()
    counts: dict[str, dict[str, int]] = {}
    for e, v, n in direct:
        counts.setdefault(e, {})[v] = n
    return logs, counts


def test_sample_log_splits_pass_and_match_unit_aggregation(sample_counts):
    logs, counts = sample_counts
    assert len(counts) == 10
    for e in ("s100_vs_s100", "s260_vs_s040"):
        data = load_units(logs, experiment=e)
        assert {v: len(a) for v, a in data.arms.items()} == counts[e]
    for e, units in counts.items():
        res = srm_test(units)
        assert not res.mismatch, (e, units, res.p_value)


def _dropped(n, share_lost=0.01):
    return {"control": n, "treatment": round(n * (1 - share_lost))}


def test_one_percent_drop_needs_about_215k_units_per_arm(sample_counts):
    _, counts = sample_counts
    per_arm = max(max(u.values()) for u in counts.values())
    assert 1_400 < per_arm < 1_600
    # at the sample logs' size the 1% drop is far from detectable
    small = srm_test(_dropped(per_arm))
    assert not small.mismatch and small.p_value > 0.1
    # the closed form of the module docstring, against the statistic computed from counts
    for n in (1_500, 10_000, 215_000):  # multiples of 100: exactly 1% lost
        assert srm_test(_dropped(n)).statistic == pytest.approx(n * 0.01**2 / 1.99, rel=1e-12)
    needed = sps.chi2.isf(0.001, 1) * 1.99 / 0.01**2
    assert 215_000 < needed < 216_000
    # the boundary, as srm_test draws it
    assert not srm_test(_dropped(215_000)).mismatch
    assert srm_test(_dropped(216_000)).mismatch
    # the smallest loss flagged at the sample logs' size: ~12% of the treatment units
    assert not srm_test(_dropped(per_arm, 0.10)).mismatch
    assert srm_test(_dropped(per_arm, 0.13)).mismatch


def test_one_percent_drop_with_random_assignment_needs_340k_for_80_percent():
    # units are assigned by coin flips, then 1% of treatment units are lost; the share of
    # such experiments flagged follows the non-central chi-square with lambda = N 0.01^2/1.99
    crit = sps.chi2.isf(0.001, 1)
    lam = (sps.norm.isf(0.0005) + sps.norm.isf(0.2)) ** 2  # 80% power, two-sided z
    assert sps.ncx2.sf(crit, 1, lam) == pytest.approx(0.8, abs=1e-6)
    n = round(lam * 1.99 / 0.01**2)
    assert 339_000 < n < 341_000
    rng = np.random.default_rng(3)
    control = rng.binomial(2 * n, 0.5, size=400)
    treatment = rng.binomial(2 * n - control, 0.99)
    flagged = np.mean([srm_test({"control": int(a), "treatment": int(b)}).mismatch
                       for a, b in zip(control, treatment, strict=True)])
    assert 0.74 <= flagged <= 0.86  # 0.8 +- 3 binomial sd of 400 experiments
    # a fair split of the same size is flagged at the 0.001 rate only
    fair = rng.binomial(2 * n, 0.5, size=400)
    assert sum(srm_test({"control": int(k), "treatment": int(2 * n - k)}).mismatch
               for k in fair) <= 3


def test_readout_on_sample_logs_aa_and_large_margin(sample_counts):
    logs, _ = sample_counts
    aa = onlineeval.abtest(logs, experiment="s100_vs_s100")
    assert not aa["significant"].any()
    big = onlineeval.abtest(logs, experiment="s260_vs_s040", metrics="ctr,click_mrr")
    assert big["significant"].all() and (big["estimate"] > 0).all()


def test_sample_log_readout_matches_pandas_and_statsmodels(sample_counts):
    # every number of the readout for metrics with different denominators (searches,
    # searches with results, sessions, units), recomputed from the parquet files with pandas:
    # per-user sums, the delta-method t from per-user linearisations with Satterthwaite df
    # by hand, Welch's t from scipy, the relative interval from the linearisation of R_t / R_c
    import pandas as pd
    from statsmodels.stats.multitest import multipletests

    logs, _ = sample_counts
    exp = "s200_vs_s100"
    s = pd.read_parquet(SAMPLE / "searches.parquet")
    c = pd.read_parquet(SAMPLE / "clicks.parquet")
    s = s[s["experiment"] == exp]
    s = s.assign(
        n_clicks=s["search_id"].map(c.groupby("search_id").size()).fillna(0.0),
        rr=(1.0 / s["search_id"].map(c.groupby("search_id")["rank"].min())).fillna(0.0),
        one=1.0, nonzero=(s["n_results"] > 0).astype(float),
    )
    s = s.assign(has_click=(s["n_clicks"] > 0).astype(float))
    s = s.assign(abandoned=s["nonzero"] * (1 - s["has_click"]))
    sess = s.groupby(["user_id", "session_id"]).agg(
        variant=("variant", "first"), clicked=("has_click", "max")).reset_index()
    sess = sess.assign(sessions=1.0, sess_abandoned=1.0 - sess["clicked"])
    users = s.groupby(["variant", "user_id"])[
        ["one", "has_click", "n_clicks", "rr", "nonzero", "abandoned"]].sum()
    users = users.join(sess.groupby(["variant", "user_id"])[["sessions", "sess_abandoned"]].sum())
    users["unit"] = 1.0
    defs = {"ctr": ("has_click", "one"), "abandonment_rate": ("abandoned", "nonzero"),
            "click_mrr": ("rr", "one"), "session_abandonment_rate": ("sess_abandoned", "sessions"),
            "queries_per_session": ("one", "sessions"), "clicks_per_unit": ("n_clicks", "unit")}
    df = onlineeval.abtest(logs, experiment=exp, metrics=list(defs), correction="bh")
    uc, ut = users.loc["control"], users.loc["treatment"]
    for metric, (x, y) in defs.items():
        row = df.set_index("metric").loc[metric]
        rc, rt = uc[x].sum() / uc[y].sum(), ut[x].sum() / ut[y].sum()
        if y == "unit":
            w = sps.ttest_ind(ut[x], uc[x], equal_var=False)
            p, (lo, hi) = w.pvalue, w.confidence_interval(0.95)
            vt, vc = ut[x].var() / len(ut), uc[x].var() / len(uc)
            q = sps.t.isf(0.025, (vt + vc) ** 2 / (vt**2 / (len(ut) - 1) + vc**2 / (len(uc) - 1)))
            se_rel = np.sqrt(vt / rc**2 + rt**2 * vc / rc**4)
        else:
            # delta-method variances from the per-user linearisations; Welch-Satterthwaite
            # df counting the users with a nonzero denominator
            vt = ((ut[x] - rt * ut[y]) / ut[y].mean()).var() / len(ut)
            vc = ((uc[x] - rc * uc[y]) / uc[y].mean()).var() / len(uc)
            nt, nc = int((ut[y] > 0).sum()), int((uc[y] > 0).sum())
            dof = (vt + vc) ** 2 / (vt**2 / (nt - 1) + vc**2 / (nc - 1))
            q = sps.t.isf(0.025, dof)
            se = np.sqrt(vt + vc)
            p = 2 * sps.t.sf(abs(rt - rc) / se, dof)
            lo, hi = rt - rc - q * se, rt - rc + q * se
            assert row["df"] == pytest.approx(dof, rel=1e-9)
            lin_t = (ut[x] - rt * ut[y]) / (ut[y].mean() * rc)
            lin_c = -rt * (uc[x] - rc * uc[y]) / (uc[y].mean() * rc**2)
            se_rel = np.sqrt(lin_t.var() / len(ut) + lin_c.var() / len(uc))
        expected = {"control_value": rc, "treatment_value": rt, "estimate": rt - rc,
                    "ci_low": lo, "ci_high": hi, "p_value": p, "rel_diff": rt / rc - 1,
                    "rel_ci_low": rt / rc - 1 - q * se_rel, "rel_ci_high": rt / rc - 1 + q * se_rel}
        for key, value in expected.items():
            assert row[key] == pytest.approx(value, rel=1e-9), (metric, key)
        assert (row["units_control"], row["units_treatment"]) == (len(uc), len(ut))
    bh = multipletests(df["p_value"], method="fdr_bh")[1]
    np.testing.assert_allclose(df["p_adjusted"], bh, rtol=1e-12)
