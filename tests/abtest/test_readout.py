"""onlineeval.abtest end to end, against statistics computed independently from per-user
aggregates in pandas (statsmodels, scipy)."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

import onlineeval
from onlineeval.abtest import COLUMNS
from onlineeval.abtest.metrics import ORDER
from onlineeval.errors import (
    InvalidParameterError,
    SampleRatioMismatchWarning,
    SchemaError,
    UnknownNameError,
)
from onlineeval.stats.srm import srm_test
from onlineeval.stats.tests import DELTA_T, MANN_WHITNEY, WELCH_T


def _per_user(s, c):
    n = c.groupby("search_id").size()
    s = s.assign(n_clicks=s["search_id"].map(n).fillna(0))
    s = s.assign(has_click=(s["n_clicks"] > 0).astype(float), one=1.0)
    return s.groupby(["variant", "user_id"])[["has_click", "n_clicks", "one"]].sum()


def _lin(u):
    r = u["has_click"].sum() / u["one"].sum()
    return r + (u["has_click"] - r * u["one"]) / u["one"].mean()


def test_ab_readout_matches_independent_statistics(make_tables):
    s, c = make_tables(seed=11, users={"control": 300, "treatment": 300},
                       click_boost={"treatment": 0.12})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = onlineeval.abtest(logs, metrics=["ctr", "searches_per_unit", "clicks_per_unit"])
    assert list(df.columns) == list(COLUMNS)
    assert list(df["metric"]) == ["ctr", "searches_per_unit", "clicks_per_unit"]
    users = _per_user(s, c)
    uc, ut = users.loc["control"], users.loc["treatment"]

    row = df.set_index("metric").loc["ctr"]
    # the delta-method t is Welch's test on the per-user linearised values (every user has
    # searches, so every user counts for the degrees of freedom)
    cm = CompareMeans(DescrStatsW(_lin(ut).to_numpy()), DescrStatsW(_lin(uc).to_numpy()))
    _, p, dof = cm.ttest_ind(usevar="unequal")
    lo, hi = cm.tconfint_diff(usevar="unequal")
    assert row["df"] == pytest.approx(dof, rel=1e-9)
    ctr_c = uc["has_click"].sum() / uc["one"].sum()
    ctr_t = ut["has_click"].sum() / ut["one"].sum()
    assert row["control_value"] == pytest.approx(ctr_c, rel=1e-12)
    assert row["treatment_value"] == pytest.approx(ctr_t, rel=1e-12)
    assert row["rel_diff"] == pytest.approx(ctr_t / ctr_c - 1, rel=1e-12)
    assert row["p_value"] == pytest.approx(p, rel=1e-9)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi), rel=1e-9)
    assert row["units_control"] == len(uc) and row["units_treatment"] == len(ut)

    row = df.set_index("metric").loc["searches_per_unit"]
    w = sps.ttest_ind(ut["one"], uc["one"], equal_var=False)
    assert row["p_value"] == pytest.approx(w.pvalue, rel=1e-9)
    ci = w.confidence_interval(0.95)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high),
                                                                    rel=1e-9)

    holm = multipletests(df["p_value"], method="holm")[1]
    np.testing.assert_allclose(df["p_adjusted"], holm, rtol=1e-12)
    assert (df["significant"] == (df["p_adjusted"] < 0.05)).all()
    # a +0.12 click probability on 300 users per arm is detected
    assert df.set_index("metric").loc["ctr", "significant"]
    srm = srm_test({"control": len(uc), "treatment": len(ut)})
    assert df.attrs["srm"] == srm.to_dict()
    assert df.attrs["tests"] == {"ctr": DELTA_T, "searches_per_unit": WELCH_T,
                                 "clicks_per_unit": WELCH_T}
    assert list(df["test"]) == [DELTA_T, WELCH_T, WELCH_T]
    assert list(df["verdict"]) == ["significant" if s else "not significant"
                                   for s in df["significant"]]


def test_abn_each_treatment_against_control_with_bh(make_tables):
    s, c = make_tables(seed=12, users={"control": 120, "t1": 120, "t2": 120})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    df = onlineeval.abtest(logs, metrics="ctr,clicks_per_search", correction="bh")
    assert list(zip(df["metric"], df["variant"], strict=True)) == [
        ("ctr", "t1"), ("ctr", "t2"), ("clicks_per_search", "t1"), ("clicks_per_search", "t2")]
    users = _per_user(s, c)
    for _, row in df[df["metric"] == "ctr"].iterrows():
        ut = users.loc[row["variant"]]
        assert row["treatment_value"] == pytest.approx(ut["has_click"].sum() / ut["one"].sum())
    assert df["control_value"].iloc[0] == df["control_value"].iloc[1]
    bh = multipletests(df["p_value"], method="fdr_bh")[1]
    np.testing.assert_allclose(df["p_adjusted"], bh, rtol=1e-12)
    assert df.attrs["srm"]["expected_shares"] == pytest.approx(
        {"control": 1 / 3, "t1": 1 / 3, "t2": 1 / 3})
    only = onlineeval.abtest(logs, treatments=["t2"], metrics="ctr", correction="none")
    assert list(only["variant"]) == ["t2"]
    assert only["p_adjusted"].iloc[0] == only["p_value"].iloc[0]
    assert only["p_value"].iloc[0] == pytest.approx(df["p_value"].iloc[1])


def test_srm_mismatch_warns_and_is_flagged(make_tables):
    s, c = make_tables(seed=13, users={"control": 300, "treatment": 200})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    # a warning of its own class, so a caller can tell it from the others without reading
    # its text (the CLI and the report show it as a banner instead)
    with pytest.warns(SampleRatioMismatchWarning, match="SAMPLE RATIO MISMATCH"):
        df = onlineeval.abtest(logs, metrics="ctr")
    assert df.attrs["srm"]["mismatch"] is True
    assert df.attrs["srm"]["units"] == {"control": 300, "treatment": 200}
    # the same counts fit a declared 60/40 split
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = onlineeval.abtest(logs, metrics="ctr",
                               expected_split={"control": 0.6, "treatment": 0.4})
    assert df.attrs["srm"]["mismatch"] is False


def _cuped_by_hand(uc, ut, x, y, xp, yp):
    """CUPED from per-unit sums in pandas, written independently of onlineeval.stats.cuped:
    each arm's per-unit linearisations (x - R y)/mean(y) and (x' - R' y')/mean(y') and the
    indicator h give the covariance of (R, R', mean h) as cov(L)/n; theta minimises the
    variance of the adjusted difference; arm values are adjusted to the pooled covariates."""
    arms = []
    for u in (uc, ut):
        r, rp = u[x].sum() / u[y].sum(), u[xp].sum() / u[yp].sum()
        lin = np.column_stack([(u[x] - r * u[y]) / u[y].mean(),
                               (u[xp] - rp * u[yp]) / u[yp].mean(), u["h"]])
        arms.append((len(u), r, np.array([rp, u["h"].mean()]),
                     np.cov(lin, rowvar=False, ddof=1) / len(u)))
    theta = np.linalg.solve(arms[0][3][1:, 1:] + arms[1][3][1:, 1:],
                            arms[0][3][1:, 0] + arms[1][3][1:, 0])
    var = [v[0, 0] - 2 * theta @ v[1:, 0] + theta @ v[1:, 1:] @ theta for *_, v in arms]
    diff = arms[1][1] - arms[0][1] - theta @ (arms[1][2] - arms[0][2])
    (nc, *_), (nt, *_) = arms
    dist = sps.t((var[0] + var[1]) ** 2 / (var[0] ** 2 / (nc - 1) + var[1] ** 2 / (nt - 1)))
    se = np.sqrt(var[0] + var[1])
    both = pd.concat([uc, ut])
    pooled = np.array([both[xp].sum() / both[yp].sum(), both["h"].mean()])
    adj = [r - theta @ (cov - pooled) for _, r, cov, _ in arms]
    q = dist.isf(0.025)
    return {"estimate": diff, "ci_low": diff - q * se, "ci_high": diff + q * se,
            "p_value": 2 * dist.sf(abs(diff) / se), "rel_diff": adj[1] / adj[0] - 1,
            "cuped_variance_reduction":
                1 - (var[0] + var[1]) / (arms[0][3][0, 0] + arms[1][3][0, 0])}


def test_cuped_through_the_api_matches_pandas_by_hand(make_tables):
    s, c = make_tables(seed=14, days=28, click_boost={"treatment": 0.05})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    df = onlineeval.abtest(logs, metrics=["ctr", "searches_per_unit"],
                           pre_period="2024-01-01,2024-01-15")
    assert list(df.columns) == [*COLUMNS, "cuped_variance_reduction", "cuped_applied"]
    start = pd.Timestamp("2024-01-15")
    s = s.assign(x=s["search_id"].isin(c["search_id"]).astype(float), y=1.0)
    exp = s[s["ts"] >= start].groupby("user_id").agg(
        variant=("variant", "first"), x=("x", "sum"), y=("y", "sum"))
    pre = s[s["ts"] < start].groupby("user_id")[["x", "y"]].sum().add_prefix("pre_")
    u = exp.join(pre).fillna({"pre_x": 0.0, "pre_y": 0.0})
    u["h"] = (u["pre_y"] > 0).astype(float)
    u["one"] = 1.0
    # units without pre-period data exist, so the indicator covariate is exercised
    assert 0 < u["h"].sum() < len(u)
    uc, ut = u[u["variant"] == "control"], u[u["variant"] == "treatment"]
    for metric, cols in (("ctr", ("x", "y", "pre_x", "pre_y")),
                         ("searches_per_unit", ("y", "one", "pre_y", "h"))):
        row = df.set_index("metric").loc[metric]
        assert row["cuped_applied"] and row["test"].endswith(" + CUPED")
        for key, value in _cuped_by_hand(uc, ut, *cols).items():
            assert row[key] == pytest.approx(value, rel=1e-9), (metric, key)
        # control/treatment values are the plain experiment-period values
        assert row["control_value"] == pytest.approx(uc[cols[0]].sum() / uc[cols[1]].sum(),
                                                     rel=1e-12)
        assert row["treatment_value"] == pytest.approx(ut[cols[0]].sum() / ut[cols[1]].sum(),
                                                       rel=1e-12)
        assert row["units_control"] == len(uc) and row["units_treatment"] == len(ut)


def test_other_tests_and_missing_columns(make_tables):
    s, c = make_tables(seed=15)
    logs = onlineeval.load_logs(searches=s, clicks=c)
    mw = onlineeval.abtest(logs, metrics="searches_per_unit,ctr", test="mannwhitney")
    users = _per_user(s, c)
    p = sps.mannwhitneyu(users.loc["treatment"]["one"], users.loc["control"]["one"]).pvalue
    assert mw["p_value"].iloc[0] == pytest.approx(p, rel=1e-12)
    assert mw.attrs["tests"] == {"searches_per_unit": MANN_WHITNEY, "ctr": DELTA_T}
    bs = onlineeval.abtest(logs, metrics="ctr", test="bootstrap", bootstrap_reps=500, seed=3)
    again = onlineeval.abtest(logs, metrics="ctr", test="bootstrap", bootstrap_reps=500, seed=3)
    pd.testing.assert_frame_equal(bs, again)
    assert bs["ci_low"].iloc[0] < bs["estimate"].iloc[0] < bs["ci_high"].iloc[0]

    no_ts = onlineeval.load_logs(searches=s.drop(columns="ts"), clicks=c.drop(columns="ts"))
    default = onlineeval.abtest(no_ts)
    assert "session_success_rate" not in set(default["metric"])
    assert "ctr" in set(default["metric"])
    assert list(default["metric"]) == [m for m in ORDER if m in set(default["metric"])]
    with pytest.warns(UserWarning, match="session_success_rate needs"):
        asked = onlineeval.abtest(no_ts, metrics="session_success_rate,ctr")
    assert asked["p_value"].isna().tolist() == [True, False]


def test_bad_input_errors_list_what_is_available(make_tables):
    s, c = make_tables(seed=16, users={"control": 30, "treatment": 30})
    # a variant whose searches all come before the experiment period: 0 units in it
    late = s.iloc[:3].copy()
    late["search_id"] = ["late1", "late2", "late3"]
    late["user_id"] = "late-user"
    late["variant"] = "late"
    late["ts"] = pd.Timestamp("2023-12-01")
    s = pd.concat([s, late], ignore_index=True)
    logs = onlineeval.load_logs(searches=s, clicks=c)
    with pytest.raises(UnknownNameError, match=r"'ctrl'.*control \(30 units\).*treatment"):
        onlineeval.abtest(logs, control="ctrl")
    with pytest.raises(UnknownNameError, match="unknown treatment variant 'b'"):
        onlineeval.abtest(logs, treatments=["b"])
    with pytest.raises(UnknownNameError, match="did you mean 'ctr'.*click_mrr"):
        onlineeval.abtest(logs, metrics=["ctrr"])
    with pytest.raises(SchemaError, match="'late' has 0 units"):
        onlineeval.abtest(logs, treatments=["late"], pre_period="2024-01-01")
    with pytest.raises(InvalidParameterError, match="no metrics.*ctr"):
        onlineeval.abtest(logs, metrics=[])
    with pytest.raises(InvalidParameterError, match="is the control"):
        onlineeval.abtest(logs, treatments=["control"])
    with pytest.raises(InvalidParameterError, match="alpha"):
        onlineeval.abtest(logs, alpha=0)
    with pytest.raises(UnknownNameError, match="bh, holm, none"):
        onlineeval.abtest(logs, correction="bonferroni")
    with pytest.raises(InvalidParameterError, match="test='auto' only"):
        onlineeval.abtest(logs, test="bootstrap", pre_period="2024-01-05")
    with pytest.raises(InvalidParameterError, match="Logs object"):
        onlineeval.abtest(42)


def test_results_do_not_depend_on_row_order(make_tables):
    # DuckDB returns groups in an order that varies with the input's row order (and between
    # runs with threads); the seeded bootstrap indexes units by position, so before units
    # were sorted the same seed gave different intervals for the same data.
    s, c = make_tables(seed=15)
    shuffled = s.sample(frac=1, random_state=1).reset_index(drop=True)
    kwargs = dict(metrics="ctr,searches_per_unit", test="bootstrap", bootstrap_reps=300, seed=3)
    a = onlineeval.abtest(onlineeval.load_logs(searches=s, clicks=c), **kwargs)
    b = onlineeval.abtest(onlineeval.load_logs(searches=shuffled, clicks=c), **kwargs)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    plain_a = onlineeval.abtest(onlineeval.load_logs(searches=s, clicks=c), metrics="ctr")
    plain_b = onlineeval.abtest(onlineeval.load_logs(searches=shuffled, clicks=c), metrics="ctr")
    pd.testing.assert_frame_equal(plain_a, plain_b, check_exact=True)


def test_srm_covers_every_variant_not_only_the_analysed_ones(make_tables):
    # t1 lost a third of its units; analysing control vs t2 alone must still flag it
    s, c = make_tables(seed=16, users={"control": 300, "t1": 200, "t2": 300})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    with pytest.warns(UserWarning, match="SAMPLE RATIO MISMATCH"):
        df = onlineeval.abtest(logs, treatments=["t2"], metrics="ctr")
    assert df.attrs["srm"]["units"] == {"control": 300, "t1": 200, "t2": 300}
    assert list(df.attrs["srm"]["units"]) == ["control", "t1", "t2"]  # control first
    chi2 = sps.chisquare([300, 200, 300])
    assert df.attrs["srm"]["statistic"] == pytest.approx(chi2.statistic, rel=1e-12)
    assert df.attrs["srm"]["p_value"] == pytest.approx(chi2.pvalue, rel=1e-12)
    # the declared 3:2:3 design fits; a split naming a variant the log lacks is an error
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ok = onlineeval.abtest(logs, treatments=["t2"], metrics="ctr",
                               expected_split={"control": 0.375, "t1": 0.25, "t2": 0.375})
    assert ok.attrs["srm"]["mismatch"] is False
    with pytest.raises(UnknownNameError, match=r"\['t3'\].*control, t1, t2"):
        onlineeval.abtest(logs, metrics="ctr",
                          expected_split={"control": 0.25, "t1": 0.25, "t2": 0.25, "t3": 0.25})
    with pytest.raises(InvalidParameterError, match=r"missing \['t2'\]"):
        onlineeval.abtest(logs, metrics="ctr", expected_split={"control": 0.5, "t1": 0.5})
    # weights that do not sum to 1 are refused, not rescaled (issue 12)
    with pytest.raises(InvalidParameterError, match=r"sum to 1.*sum 8\)"):
        onlineeval.abtest(logs, treatments=["t2"], metrics="ctr",
                          expected_split={"control": 3, "t1": 2, "t2": 3})


def test_zero_baseline_and_single_unit_arm_give_null_not_inf(make_tables):
    # Audit: a control with no zero-result searches (zero_result_rate = 0) reported
    # rel_diff = inf; the relative change from a zero baseline is undefined, so null.
    s, c = make_tables(seed=21, users={"control": 60, "treatment": 60})
    s.loc[s["variant"] == "control", "n_results"] = 10
    logs = onlineeval.load_logs(searches=s, clicks=c)
    with pytest.warns(UserWarning, match=r"one arm has zero variance.*zero_result_rate/"
                                         r"treatment \(control\)"):
        df = onlineeval.abtest(logs, metrics="zero_result_rate,ctr").set_index("metric")
    zero = df.loc["zero_result_rate"]
    treated = s[s["variant"] == "treatment"]
    assert zero["control_value"] == 0.0
    assert zero["treatment_value"] == pytest.approx((treated["n_results"] == 0).mean())
    assert np.isnan(zero[["rel_diff", "rel_ci_low", "rel_ci_high"]].astype(float)).all()
    assert np.isfinite(zero["p_value"])  # the absolute difference is still tested
    assert np.isfinite(df.loc["ctr", "rel_diff"])

    # one control unit: no variance estimate, so null p-values and intervals, with a warning
    first = s.loc[s["variant"] == "control", "user_id"].iloc[0]
    s1 = s[(s["variant"] == "treatment") | (s["user_id"] == first)]
    logs1 = onlineeval.load_logs(searches=s1, clicks=c[c["search_id"].isin(s1["search_id"])])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        one = onlineeval.abtest(logs1, metrics="ctr,searches_per_unit")
    messages = [str(w.message) for w in rec]
    assert any("SAMPLE RATIO MISMATCH" in m for m in messages)
    assert any("insufficient data" in m and "ctr/treatment (1 control and 60 treatment" in m
               for m in messages)
    assert one["units_control"].tolist() == [1, 1]
    assert one[["p_value", "p_adjusted", "ci_low", "ci_high"]].isna().all().all()
    assert not one["significant"].any()
    assert (one["verdict"] == "insufficient data").all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        boot = onlineeval.abtest(logs1, metrics="ctr", test="bootstrap", bootstrap_reps=200)
    assert boot[["p_value", "ci_low", "ci_high"]].isna().all().all()


def _two_per_arm():
    # issue 12: 2 users per arm, 10 searches each; CTR 0.2 and 0.4 in control, 0.6 and 0.8
    # in treatment; one click per clicked search (so clicks_per_unit = 10 x CTR per user)
    rates = {"c1": ("control", 2), "c2": ("control", 4), "t1": ("treatment", 6),
             "t2": ("treatment", 8)}
    s = pd.DataFrame([(f"{u}-{i}", u, v) for u, (v, _) in rates.items() for i in range(10)],
                     columns=["search_id", "user_id", "variant"])
    c = pd.DataFrame([(f"{u}-{i}", 1) for u, (_, k) in rates.items() for i in range(k)],
                     columns=["search_id", "rank"])
    return s, c


def test_two_users_per_arm_t_reference_and_no_verdict():
    s, c = _two_per_arm()
    logs = onlineeval.load_logs(searches=s, clicks=c)
    with pytest.warns(UserWarning, match=r"insufficient data: no verdict where an arm has "
                                         r"fewer than 50 units.*ctr/treatment \(2 control"):
        df = onlineeval.abtest(logs, metrics="ctr,clicks_per_unit").set_index("metric")
    users = _per_user(s, c)
    uc, ut = users.loc["control"], users.loc["treatment"]
    # ratio metric: independent delta method (linearised per-user values) + Welch's t
    w = sps.ttest_ind(_lin(ut), _lin(uc), equal_var=False)
    ctr = df.loc["ctr"]
    assert ctr["p_value"] == pytest.approx(w.pvalue, rel=1e-10)
    assert ctr["p_value"] == pytest.approx(0.106, abs=1e-3)  # the z test said 0.0047
    assert ctr["df"] == pytest.approx(w.df, rel=1e-10)
    ci = w.confidence_interval(0.95)
    assert (ctr["ci_low"], ctr["ci_high"]) == pytest.approx((ci.low, ci.high),
                                                                    rel=1e-10)
    # per-unit mean: scipy's Welch test on the per-user click counts
    w = sps.ttest_ind(ut["n_clicks"], uc["n_clicks"], equal_var=False)
    assert df.loc["clicks_per_unit", "p_value"] == pytest.approx(w.pvalue, rel=1e-10)
    assert (df["verdict"] == "insufficient data").all() and not df["significant"].any()
    # with the minimum lowered to 2 there is a verdict, and it is not "significant"
    low = onlineeval.abtest(logs, metrics="ctr", min_units=2, correction="none")
    assert low["verdict"].tolist() == ["not significant"]
    with pytest.raises(InvalidParameterError, match="min_units"):
        onlineeval.abtest(logs, metrics="ctr", min_units=1)


def test_zero_variance_in_both_arms_is_undefined_with_a_reason():
    # every control user searched once, every treatment user twice: searches_per_unit has
    # zero variance in both arms. Welch would say p = 0 with a zero-width interval.
    n = 60
    s = pd.DataFrame(
        [(f"c{u}", f"cu{u}", "control") for u in range(n)]
        + [(f"t{u}-{k}", f"tu{u}", "treatment") for u in range(n) for k in range(2)],
        columns=["search_id", "user_id", "variant"])
    c = pd.DataFrame({"search_id": [f"c{u}" for u in range(0, n, 3)], "rank": 1})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        df = onlineeval.abtest(logs, metrics="searches_per_unit,ctr").set_index("metric")
    said = " | ".join(str(w.message) for w in rec)
    assert re.search(r"undefined p-values: searches_per_unit/treatment have zero variance in "
                     r"both arms.*mannwhitney", said)
    # no treatment user clicked: one arm without variance, still a defined test (warned)
    assert "one arm has zero variance (every unit the same value): ctr/treatment (treatment)" \
        in said
    assert df.loc["ctr", "verdict"] in ("significant", "not significant")
    row = df.loc["searches_per_unit"]
    assert row["estimate"] == 1.0
    assert row[["p_value", "p_adjusted", "ci_low", "ci_high"]].isna().all()
    assert row["verdict"] == "undefined: zero variance in both arms"
    assert not row["significant"]
    # the rank test is defined there and agrees with scipy
    mw = onlineeval.abtest(logs, metrics="searches_per_unit", test="mannwhitney")
    ref = sps.mannwhitneyu(np.full(n, 2.0), np.ones(n)).pvalue
    assert mw["p_value"].iloc[0] == pytest.approx(ref, rel=1e-12)


def test_cuped_without_pre_period_traffic_says_it_was_not_applied(make_tables):
    s, c = make_tables(seed=17, users={"control": 80, "treatment": 80})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    # a pre-period before the first search: no unit has pre-period traffic
    with pytest.warns(UserWarning, match=r"CUPED was not applied.*ctr/treatment \(no "
                                         r"pre-period traffic\)"):
        df = onlineeval.abtest(logs, metrics="ctr", pre_period="2023-06-01,2024-01-01")
    plain = onlineeval.abtest(logs, metrics="ctr")
    row = df.iloc[0]
    assert not row["cuped_applied"] and np.isnan(row["cuped_variance_reduction"])
    assert row["test"] == ("delta-method t (Welch-Satterthwaite df) (CUPED not applied: no "
                           "pre-period traffic)")
    assert row["p_value"] == pytest.approx(plain["p_value"].iloc[0], rel=1e-9)
