"""segment_effects: Δ per segment (a unit's segment is the value at its first exposure),
Holm over the segments, Cochran's Q for the treatment × segment interaction. Checked by hand
on a small log, against a statsmodels OLS interaction model with HC2 errors on the
unit-level data, against statsmodels' meta-analysis Q, and on the sample logs against the
segments recomputed with pandas from the raw files."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.meta_analysis import combine_effects

import onlineeval
from onlineeval.abtest import segment_effects
from onlineeval.errors import UnknownNameError
from onlineeval.stats.heterogeneity import cochran_q
from onlineeval.stats.results import RESULT_COLUMNS

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "ab"

# searches per unit by (segment, arm); "m" is a unit first exposed on mobile that later
# searches on desktop: all its 3 searches count in mobile
UNITS = {
    ("desktop", "control"): [1, 2, 3],
    ("desktop", "treatment"): [2, 3, 4, 5],
    ("mobile", "control"): [2, 2, 4],
    ("mobile", "treatment"): [1, 1, 2],
}


def small_logs():
    rows = []
    t0 = pd.Timestamp("2024-01-01")
    uid = 0
    for (device, variant), counts in UNITS.items():
        for n in counts:
            uid += 1
            rows += [(f"u{uid}", device, variant, t0 + pd.Timedelta(hours=uid, minutes=j))
                     for j in range(n)]
    # the moving unit: mobile first, then desktop; before its first exposure a tablet search
    # of no experiment (pre-period: neither outcome nor segment)
    rows += [("m", "tablet", None, t0), ("m", "mobile", "control", t0 + pd.Timedelta(hours=30)),
             ("m", "mobile", "control", t0 + pd.Timedelta(hours=31)),
             ("m", "desktop", "control", t0 + pd.Timedelta(hours=32))]
    searches = pd.DataFrame(rows, columns=["user_id", "device", "variant", "ts"])
    searches["search_id"] = [f"s{i}" for i in range(len(searches))]
    searches["experiment"] = np.where(searches["variant"].isna(), None, "e")
    searches["n_results"] = 10
    clicks = pd.DataFrame({"search_id": searches["search_id"][::2], "rank": 1})
    return onlineeval.load_logs(searches=searches, clicks=clicks)


def run(min_units=2):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        df = segment_effects(small_logs(), "device", "control", "treatment",
                             "searches_per_unit", min_units=min_units)
    return df, [str(w.message) for w in seen]


def test_segments_by_hand():
    df, seen = run()
    assert list(df["segment"]) == ["desktop", "mobile"]
    assert list(df.columns[5:5 + len(RESULT_COLUMNS)]) == list(RESULT_COLUMNS)
    c_d, t_d = np.array([1.0, 2, 3]), np.array([2.0, 3, 4, 5])
    c_m, t_m = np.array([2.0, 2, 4, 3]), np.array([1.0, 1, 2])  # the mover: 3 searches
    d = df.set_index("segment")
    assert d.loc["desktop", "estimate"] == pytest.approx(1.5)
    assert d.loc["mobile", "estimate"] == pytest.approx(4 / 3 - 2.75)
    assert (d.loc["mobile", "units_control"], d.loc["mobile", "units_treatment"]) == (4, 3)
    # Welch per segment, then Holm over the two segments
    p = [stats.ttest_ind(t, c, equal_var=False).pvalue for c, t in ((c_d, t_d), (c_m, t_m))]
    assert list(d["p_value"]) == pytest.approx(p, rel=1e-9)
    lo, hi = sorted(p)
    holm = {lo: min(1, 2 * lo), hi: max(min(1, 2 * lo), hi)}
    assert list(d["p_adjusted"]) == pytest.approx([holm[x] for x in p], rel=1e-9)
    assert set(d["correction"]) == {"holm"} and set(d["family_size"]) == {2}
    # Cochran's Q with two segments: (d1 - d2)^2 / (v1 + v2), v = s^2/n per arm
    v_d = c_d.var(ddof=1) / 3 + t_d.var(ddof=1) / 4
    v_m = c_m.var(ddof=1) / 4 + t_m.var(ddof=1) / 3
    q = (1.5 - (4 / 3 - 2.75)) ** 2 / (v_d + v_m)
    het = df.attrs["heterogeneity"]
    assert het["statistic"] == pytest.approx(q, rel=1e-12)
    assert het["df"] == 1 and het["p_value"] == pytest.approx(stats.chi2.sf(q, 1))
    assert df.attrs["units_moving"] == 1
    assert any("1 units have exposures in more than one value" in m for m in seen)


def test_q_is_the_interaction_wald_test_of_a_unit_level_model():
    # OLS of searches per unit on arm x segment cells with HC2 errors: each cell mean's
    # variance is then exactly s^2 / n (a saturated model), so the Wald test of the
    # interaction is Cochran's Q of the per-segment Welch differences
    df, _ = run()
    rows = [(seg, arm, v) for (seg, arm), counts in UNITS.items() for v in counts]
    rows[rows.index(("mobile", "control", 4)) + 1:
         rows.index(("mobile", "control", 4)) + 1] = [("mobile", "control", 3)]
    units = pd.DataFrame(rows, columns=["seg", "arm", "y"])
    fit = smf.ols("y ~ C(arm) * C(seg)", data=units).fit(cov_type="HC2")
    wald = fit.wald_test("C(arm)[T.treatment]:C(seg)[T.mobile] = 0", scalar=True)
    assert df.attrs["heterogeneity"]["statistic"] == pytest.approx(float(wald.statistic),
                                                                   rel=1e-10)


def test_cochran_q_against_statsmodels_meta_analysis():
    rng = np.random.default_rng(3)
    d, v = rng.normal(size=7), rng.uniform(0.01, 0.2, size=7)
    ours = cochran_q(d, v)
    ref = combine_effects(d, v)
    assert ours.statistic == pytest.approx(ref.q, rel=1e-12)
    assert ours.df == ref.df_resid == 6
    assert ours.i2 == pytest.approx(ref.i2, rel=1e-12)
    assert ours.pooled == pytest.approx(ref.mean_effect_fe, rel=1e-12)
    assert np.isnan(cochran_q([1.0], [0.1]).statistic)
    assert np.isnan(cochran_q([1.0, 2.0], [0.1, 0.0]).p_value)


def test_small_segments_are_left_out_of_q():
    df, _ = run(min_units=4)
    # desktop control has 3 units, mobile treatment 3: both below 4
    assert not df["in_heterogeneity"].any()
    het = df.attrs["heterogeneity"]
    assert np.isnan(het["statistic"]) and het["segments_left_out"] == ["desktop", "mobile"]


def test_unknown_column():
    with pytest.raises(UnknownNameError, match="segment column"):
        segment_effects(small_logs(), "devise", "control", "treatment")


def test_sample_logs_segments_recomputed_with_pandas():
    exp = "s260_vs_s040"
    logs = onlineeval.load_logs(SAMPLE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = segment_effects(logs, "qid", "control", "treatment", experiment=exp)
    s = pd.read_parquet(SAMPLE / "searches.parquet")
    s = s[s["experiment"] == exp].copy()
    clicked = set(pd.read_parquet(SAMPLE / "clicks.parquet")["search_id"])
    s["clicked"] = s["search_id"].isin(clicked)
    first = s.sort_values(["user_id", "ts", "qid"]).drop_duplicates("user_id")
    s["segment"] = s["user_id"].map(first.set_index("user_id")["qid"])
    cells = s.groupby(["segment", "variant"])["clicked"].agg(["sum", "size"])
    ctr = (cells["sum"] / cells["size"]).unstack()
    units = s.groupby(["segment", "variant"])["user_id"].nunique().unstack().fillna(0)
    got = df.set_index("segment")
    assert list(got.index) == sorted(ctr.index)
    assert np.allclose(got["control_value"], ctr.loc[got.index, "control"], rtol=1e-12,
                       equal_nan=True)
    assert np.allclose(got["treatment_value"], ctr.loc[got.index, "treatment"], rtol=1e-12,
                       equal_nan=True)
    assert (got["units_control"] == units.loc[got.index, "control"]).all()
    assert df.attrs["units_moving"] == int((s.groupby("user_id")["qid"].nunique() > 1).sum())
    # every analysed unit is in one segment
    ab = onlineeval.abtest(logs, metrics=["ctr"], experiment=exp).iloc[0]
    assert got["units_control"].sum() == ab["units_control"]
    assert got["units_treatment"].sum() == ab["units_treatment"]
    used = df[df["in_heterogeneity"]]
    se2 = ((used["ci_high"] - used["estimate"]) / stats.t.isf(0.025, used["df"])) ** 2
    ref = combine_effects(used["estimate"].to_numpy(), se2.to_numpy())
    assert df.attrs["heterogeneity"]["statistic"] == pytest.approx(ref.q, rel=1e-9)
    assert df.attrs["heterogeneity"]["k"] == len(used) >= 2


@pytest.mark.slow
def test_q_false_positive_rate_on_aa_splits(aa_population):
    # 500 A/A splits of the simulated population (2,000 users, click propensity varying by
    # user) into 4 fixed random segments: no interaction exists, so Q (on the segments'
    # delta-method CTR differences) should reject about 5% at 0.05. Measured 5.6% over
    # 1,000 splits; binomial sd over 500 is 1%.
    from onlineeval.stats.moments import Moments
    from onlineeval.stats.tests import delta_t

    data, units = aa_population
    num, den = data.col("has_click"), data.col("searches")
    rng = np.random.default_rng(5)
    seg = rng.integers(0, 4, len(units))
    reject = 0
    reps = 500
    for _ in range(reps):
        arm = rng.random(len(units)) < 0.5
        d, v = [], []
        for s in range(4):
            res = delta_t(Moments.from_units(units[(seg == s) & ~arm][:, [num, den]]),
                          Moments.from_units(units[(seg == s) & arm][:, [num, den]]), 0, 1)
            d.append(float(res.abs_diff))
            v.append(float(res.abs_se) ** 2)
        reject += cochran_q(d, v).p_value < 0.05
    assert 0.03 <= reject / reps <= 0.08


def test_hostile_column_names_and_a_log_without_ts():
    # names with a quote and a space are quoted identifiers, never pasted; without ts every
    # exposure of a unit is "first": the value first in text order wins, NULL last
    s = pd.DataFrame({"search_id": [f"s{i}" for i in range(8)], "user_id": list("aabbccdd"),
                      "variant": ["control"] * 4 + ["treatment"] * 4,
                      'de"v ice': ["y", "x", "x", "x", "y", "y", "x", None],
                      'lat "s': [1.0, 2, 3, np.nan, 5, 6, 7, 8]})
    c = pd.DataFrame({"search_id": ["s0", "s3", "s5"], "rank": [1, 1, 1]})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    with pytest.warns(UserWarning, match="2 units have exposures in more than one value"):
        df = segment_effects(logs, 'de"v ice', "control", "treatment", min_units=2)
    d = df.set_index("segment")
    assert list(d.index) == ["x", "y"]
    # a (y, x) -> x, b -> x: control x = 2 clicks / 4 searches; d (x, NULL) -> x, c -> y
    assert d.loc["x", "control_value"] == 0.5 and d.loc["x", "units_control"] == 2
    assert (d.loc["x", "treatment_value"], d.loc["y", "treatment_value"]) == (0.0, 0.5)
    assert np.isnan(d.loc["y", "control_value"])
    from onlineeval.abtest import quantile_effects

    q = quantile_effects(logs, "control", "treatment", 'lat "s', q=0.5, min_units=2)
    assert (q.iloc[0]["control_value"], q.iloc[0]["treatment_value"]) == (2.0, 6.0)
    assert q.iloc[0]["values_control"] == 3
