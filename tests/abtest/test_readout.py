"""onlineeval.abtest end to end, against statistics computed independently from per-user
aggregates in pandas (statsmodels, scipy)."""

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
from onlineeval.errors import InvalidParameterError, SchemaError, UnknownNameError
from onlineeval.stats.srm import srm_test


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
    cm = CompareMeans(DescrStatsW(_lin(ut).to_numpy()), DescrStatsW(_lin(uc).to_numpy()))
    z, p = cm.ztest_ind(usevar="unequal")
    lo, hi = cm.zconfint_diff(usevar="unequal")
    ctr_c = uc["has_click"].sum() / uc["one"].sum()
    ctr_t = ut["has_click"].sum() / ut["one"].sum()
    assert row["control_value"] == pytest.approx(ctr_c, rel=1e-12)
    assert row["treatment_value"] == pytest.approx(ctr_t, rel=1e-12)
    assert row["rel_diff"] == pytest.approx(ctr_t / ctr_c - 1, rel=1e-12)
    assert row["p_value"] == pytest.approx(p, rel=1e-9)
    assert (row["abs_ci_low"], row["abs_ci_high"]) == pytest.approx((lo, hi), rel=1e-9)
    assert row["units_control"] == len(uc) and row["units_treatment"] == len(ut)

    row = df.set_index("metric").loc["searches_per_unit"]
    w = sps.ttest_ind(ut["one"], uc["one"], equal_var=False)
    assert row["p_value"] == pytest.approx(w.pvalue, rel=1e-9)
    ci = w.confidence_interval(0.95)
    assert (row["abs_ci_low"], row["abs_ci_high"]) == pytest.approx((ci.low, ci.high),
                                                                    rel=1e-9)

    holm = multipletests(df["p_value"], method="holm")[1]
    np.testing.assert_allclose(df["p_adjusted"], holm, rtol=1e-12)
    assert (df["significant"] == (df["p_adjusted"] < 0.05)).all()
    # a +0.12 click probability on 300 users per arm is detected
    assert df.set_index("metric").loc["ctr", "significant"]
    srm = srm_test({"control": len(uc), "treatment": len(ut)})
    assert df.attrs["srm"] == srm.to_dict()
    assert df.attrs["tests"] == {"ctr": "delta-z", "searches_per_unit": "welch-t",
                                 "clicks_per_unit": "welch-t"}


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
    with pytest.warns(UserWarning, match="SAMPLE RATIO MISMATCH"):
        df = onlineeval.abtest(logs, metrics="ctr")
    assert df.attrs["srm"]["mismatch"] is True
    assert df.attrs["srm"]["units"] == {"control": 300, "treatment": 200}
    # the same counts fit a declared 60/40 split
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = onlineeval.abtest(logs, metrics="ctr",
                               expected_split={"control": 0.6, "treatment": 0.4})
    assert df.attrs["srm"]["mismatch"] is False


def test_cuped_through_the_api(make_tables):
    from onlineeval.abtest.units import load_units, parse_pre_period
    from onlineeval.stats.cuped import cuped_compare
    from onlineeval.stats.moments import Moments

    s, c = make_tables(seed=14, days=28, click_boost={"treatment": 0.05})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    df = onlineeval.abtest(logs, metrics=["ctr", "searches_per_unit"],
                           pre_period="2024-01-01,2024-01-15")
    assert list(df.columns) == [*COLUMNS, "cuped_variance_reduction"]
    data = load_units(logs, pre_period=parse_pre_period("2024-01-01,2024-01-15"))
    cols = [data.col(n) for n in ("has_click", "searches", "pre_has_click", "pre_searches",
                                  "has_pre")]
    res = cuped_compare(Moments.from_units(data.arms["control"][:, cols]),
                        Moments.from_units(data.arms["treatment"][:, cols]),
                        num=0, den=1, pre_num=2, pre_den=3, has_pre=4)
    row = df.set_index("metric").loc["ctr"]
    assert row["abs_diff"] == pytest.approx(float(res.comparison.abs_diff), rel=1e-12)
    assert row["cuped_variance_reduction"] == pytest.approx(float(res.variance_reduction))
    # control/treatment values are the plain experiment-period values
    exp = s[s["ts"] >= pd.Timestamp("2024-01-15")]
    users = _per_user(exp, c[c["search_id"].isin(exp["search_id"])])
    uc = users.loc["control"]
    assert row["control_value"] == pytest.approx(uc["has_click"].sum() / uc["one"].sum())


def test_other_tests_and_missing_columns(make_tables):
    s, c = make_tables(seed=15)
    logs = onlineeval.load_logs(searches=s, clicks=c)
    mw = onlineeval.abtest(logs, metrics="searches_per_unit,ctr", test="mannwhitney")
    users = _per_user(s, c)
    p = sps.mannwhitneyu(users.loc["treatment"]["one"], users.loc["control"]["one"]).pvalue
    assert mw["p_value"].iloc[0] == pytest.approx(p, rel=1e-12)
    assert mw.attrs["tests"] == {"searches_per_unit": "mann-whitney-u", "ctr": "delta-z"}
    bs = onlineeval.abtest(logs, metrics="ctr", test="bootstrap", bootstrap_reps=500, seed=3)
    again = onlineeval.abtest(logs, metrics="ctr", test="bootstrap", bootstrap_reps=500, seed=3)
    pd.testing.assert_frame_equal(bs, again)
    assert bs["abs_ci_low"].iloc[0] < bs["abs_diff"].iloc[0] < bs["abs_ci_high"].iloc[0]

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
