"""onlineeval.readout on small logs, against hand computations from the tables (pandas and
scipy/statsmodels in the test, never the package's SQL or statistics)."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import onlineeval
from onlineeval.errors import InvalidParameterError
from onlineeval.readout import DONT_SHIP, INCONCLUSIVE, SHIP

from .conftest import make_tables, unit_sums

ALPHA = 0.05


def arm(sums, variant, num, den):
    """Delta-method ratio of one arm by its definition: R = sum x / sum y, the variance of
    the mean of L_i = (x_i - R y_i) / mean(y) over the arm's units; df units: y > 0."""
    part = sums.loc[variant]
    x, y = part[num].to_numpy(), part[den].to_numpy()
    r = x.sum() / y.sum()
    lin = (x - r * y) / y.mean()
    return r, lin.var(ddof=1) / len(x), int((y > 0).sum())


def by_hand(sums, num, den, alpha=ALPHA):
    c, vc, nc = arm(sums, "control", num, den)
    t, vt, nt = arm(sums, "treatment", num, den)
    d, se = t - c, math.sqrt(vc + vt)
    df = (vc + vt) ** 2 / (vc ** 2 / (nc - 1) + vt ** 2 / (nt - 1))
    q = stats.t.isf(alpha / 2, df)
    # relative lift t/c - 1: gradient of t/c in (c, t) is (-t/c^2, 1/c), the arms independent
    rel_se = math.sqrt((t / c ** 2) ** 2 * vc + (1 / c) ** 2 * vt)
    return dict(c=c, t=t, d=d, se=se, df=df, p=2 * stats.t.sf(abs(d) / se, df),
                ci=(d - q * se, d + q * se), rel=t / c - 1, rel_se=rel_se,
                rel_ci=(t / c - 1 - q * rel_se, t / c - 1 + q * rel_se))


@pytest.fixture(scope="module")
def readout(logs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return onlineeval.readout(logs, guardrails=["abandonment_rate"],
                                  non_inferiority={"abandonment_rate": 0.03},
                                  secondary=["click_mrr"])


def test_primary_ctr_by_hand(tables, readout):
    h = by_hand(unit_sums(*tables), "has_click", "one")
    (row,) = readout.rows("primary")
    assert row.metric == "ctr" and row.treatment == "treatment"
    assert row.control_value == pytest.approx(h["c"], rel=1e-12)
    assert row.treatment_value == pytest.approx(h["t"], rel=1e-12)
    r = row.result
    assert r.estimate == pytest.approx(h["d"], rel=1e-12)
    assert r.p_value == pytest.approx(h["p"], rel=1e-9)
    # a family of one: Holm's adjusted p is the p, the interval the plain 1 - alpha one
    assert r.p_adjusted == pytest.approx(h["p"], rel=1e-9) and r.family_size == 1
    assert r.ci_level == pytest.approx(0.95)
    assert (r.ci_low, r.ci_high) == pytest.approx(h["ci"], rel=1e-9)
    assert row.df == pytest.approx(h["df"], rel=1e-9)
    assert row.rel_lift == pytest.approx(h["rel"], rel=1e-12)
    assert (row.rel_ci_low, row.rel_ci_high) == pytest.approx(h["rel_ci"], rel=1e-9)


def test_relative_interval_is_not_the_fixed_control_one(tables, readout):
    # treating the control's value as known would give se_t / c only: narrower
    sums = unit_sums(*tables)
    c, _, _ = arm(sums, "control", "has_click", "one")
    _, vt, _ = arm(sums, "treatment", "has_click", "one")
    (row,) = readout.rows("primary")
    half = (row.rel_ci_high - row.rel_ci_low) / 2
    fixed = stats.t.isf(ALPHA / 2, row.df) * math.sqrt(vt) / c
    assert half > fixed * 1.05


def test_guardrail_non_inferiority_by_hand(tables, readout):
    h = by_hand(unit_sums(*tables), "abandoned", "nonzero")
    (row,) = readout.rows("guardrail")
    assert row.result.estimate == pytest.approx(h["d"], rel=1e-12)
    # abandonment: lower is better. H0: delta >= +0.03, H1: delta < 0.03
    expected = stats.t.cdf((h["d"] - 0.03) / h["se"], h["df"])
    assert row.ni_p_value == pytest.approx(expected, rel=1e-9)
    assert row.margin == 0.03 and not row.margin_relative
    assert row.verdict == ("non-inferior" if expected < ALPHA else "fails non-inferiority")
    # guardrails are not in the family: no adjusted p, unadjusted interval
    assert math.isnan(row.result.p_adjusted) and row.result.ci_level == pytest.approx(0.95)


def test_relative_margin_tests_the_relative_lift(logs, tables):
    h = by_hand(unit_sums(*tables), "abandoned", "nonzero")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = onlineeval.readout(logs, non_inferiority="abandonment_rate:10%", secondary=())
    (row,) = ro.rows("guardrail")
    assert row.margin == pytest.approx(0.10) and row.margin_relative
    expected = stats.t.cdf((h["rel"] - 0.10) / h["rel_se"], h["df"])
    assert row.ni_p_value == pytest.approx(expected, rel=1e-9)


def test_higher_is_better_margin_direction(logs, tables):
    # ctr as a guardrail (higher is better): H0 delta <= -M
    h = by_hand(unit_sums(*tables), "has_click", "one")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = onlineeval.readout(logs, primary=["click_mrr"], non_inferiority={"ctr": 0.01},
                                secondary=())
    (row,) = ro.rows("guardrail")
    assert row.ni_p_value == pytest.approx(stats.t.sf((h["d"] + 0.01) / h["se"], h["df"]),
                                           rel=1e-9)


def test_primary_family_does_not_change_with_secondary_metrics(logs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        few = onlineeval.readout(logs, primary="ctr,click_mrr", secondary=())
        many = onlineeval.readout(logs, primary="ctr,click_mrr", secondary=None,
                                  non_inferiority={"abandonment_rate": "5%"})
    assert len(many.metrics) > len(few.metrics) + 5
    for a, b in zip(few.rows("primary"), many.rows("primary"), strict=True):
        assert a.result == b.result
        assert a.result.family_size == 2


def test_holm_within_the_primary_family_matches_statsmodels(logs):
    from statsmodels.stats.multitest import multipletests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = onlineeval.readout(logs, primary="ctr,click_mrr,clicks_per_search", secondary=())
    rows = ro.rows("primary")
    raw = [r.result.p_value for r in rows]
    reject, adj, _, _ = multipletests(raw, alpha=ALPHA, method="holm")
    assert [r.result.p_adjusted for r in rows] == pytest.approx(list(adj), rel=1e-12)
    for r, rej in zip(rows, reject, strict=True):
        # the interval drawn at Holm's level excludes 0 exactly when Holm rejects
        assert (r.result.ci_low > 0 or r.result.ci_high < 0) == bool(rej)


def test_mde_and_units_needed_match_statsmodels(readout):
    from statsmodels.stats.power import TTestIndPower

    (row,) = readout.rows("primary")
    r = row.result
    se = (r.ci_high - r.ci_low) / (2 * stats.t.isf(ALPHA / 2, row.df))
    n_bar = (r.units_control + r.units_treatment) / 2
    sd = se * math.sqrt(n_bar / 2)
    d = TTestIndPower().solve_power(nobs1=n_bar, alpha=ALPHA, power=0.8, ratio=1.0)
    assert row.mde == pytest.approx(d * sd, rel=1e-6)
    assert row.mde_rel == pytest.approx(d * sd / row.control_value, rel=1e-6)
    need = TTestIndPower().solve_power(effect_size=r.estimate / sd, alpha=ALPHA, power=0.8)
    assert row.units_needed == 2 * math.ceil(need)


def _readout(boost, seed, n=80, **kw):
    s, c = make_tables(seed=seed, users={"control": n, "treatment": n},
                       boost={"treatment": boost})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return onlineeval.readout(onlineeval.load_logs(searches=s, clicks=c), secondary=(),
                                  **kw)


def test_verdict_ship():
    ro = _readout(0.25, seed=1)
    assert ro.verdict == SHIP, ro.decisions


def test_verdict_dont_ship_primary_worse():
    ro = _readout(-0.25, seed=2)
    assert ro.verdict == DONT_SHIP
    assert any("ctr is significantly worse" in r for r in ro.decisions[0].reasons)


def test_verdict_dont_ship_guardrail_fails():
    # a big ctr gain, but zero results (untouched by the treatment) cannot be shown within
    # a margin of 1e-6
    ro = _readout(0.25, seed=1, non_inferiority={"zero_result_rate": 1e-6})
    assert ro.rows("primary")[0].verdict == "better"
    assert ro.verdict == DONT_SHIP
    assert any("guardrail zero_result_rate fails" in r for r in ro.decisions[0].reasons)


def test_verdict_inconclusive_says_mde_and_more_units():
    ro = _readout(0.0, seed=4)
    (row,) = ro.rows("primary")
    assert row.verdict == "not significant", row
    assert ro.verdict == INCONCLUSIVE
    (reason,) = ro.decisions[0].reasons
    assert "detectable at the observed" in reason
    if np.isfinite(row.units_needed):
        assert "more)" in reason


def test_verdict_inconclusive_with_insufficient_data():
    ro = _readout(0.4, seed=5, n=20)
    assert ro.rows("primary")[0].verdict == "insufficient data"
    assert ro.verdict == INCONCLUSIVE


def test_ab_n_gives_each_treatment_its_verdict():
    s, c = make_tables(seed=6, users={"control": 80, "better": 80, "worse": 80},
                       boost={"better": 0.3, "worse": -0.3})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = onlineeval.readout(onlineeval.load_logs(searches=s, clicks=c), secondary=())
    verdicts = {d.treatment: d.verdict for d in ro.decisions}
    assert verdicts == {"better": SHIP, "worse": DONT_SHIP}
    assert ro.family_size == 2  # ctr x two treatments
    assert ro.verdict is None


def test_guardrail_without_margin_and_directionless_primary_are_refused(logs):
    with pytest.raises(InvalidParameterError, match="need a non-inferiority margin"):
        onlineeval.readout(logs, guardrails=["abandonment_rate"])
    with pytest.raises(InvalidParameterError, match="no direction"):
        onlineeval.readout(logs, primary=["searches_per_unit"])
    with pytest.raises(InvalidParameterError, match="positive number"):
        onlineeval.readout(logs, non_inferiority={"abandonment_rate": "-2%"})


def test_window_and_srm_fields(tables, readout):
    s, _ = tables
    first = s.groupby("user_id")["ts"].min()
    assert readout.window.first_exposure == first.min()
    assert readout.window.last_exposure == s["ts"].max()
    assert readout.window.days == (s["ts"].max().normalize() - first.min().normalize()).days + 1
    counts = s.groupby("variant")["user_id"].nunique()
    assert readout.srm.observed == {"control": counts["control"],
                                    "treatment": counts["treatment"]}
    assert readout.srm.p_value == pytest.approx(
        stats.chisquare([counts["control"], counts["treatment"]]).pvalue)


def test_fail_on_srm_raises(tables):
    s, c = make_tables(seed=7, users={"control": 150, "treatment": 60})
    from onlineeval.readout import SampleRatioMismatchError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logs = onlineeval.load_logs(searches=s, clicks=c)
        assert onlineeval.readout(logs, secondary=()).srm.status == "mismatch"
        with pytest.raises(SampleRatioMismatchError):
            onlineeval.readout(logs, secondary=(), fail_on_srm=True)


def test_to_dict_and_tables_carry_the_same_numbers(readout):
    import json

    d = json.loads(json.dumps(readout.to_dict(), allow_nan=False))
    t = readout.tables()["metrics"]
    for rec, row in zip(d["metrics"], t.to_dict("records"), strict=True):
        assert rec["estimate"] == row["estimate"] and rec["metric"] == row["metric"]
    assert d["srm"]["status"] == readout.srm.status
    assert pd.isna(t.loc[t["role"] == "guardrail", "p_adjusted"]).all()


def test_over_time_ends_at_the_readouts_result(readout):
    # the cumulative effect's last day is the whole experiment: the primary row's numbers
    (row,) = readout.rows("primary")
    day = readout.over_time["day"]
    last = day.iloc[-1]
    assert last["metric"] == "ctr" and last["variant"] == "treatment"
    assert last["estimate"] == pytest.approx(row.result.estimate, rel=1e-9)
    assert last["p_value"] == pytest.approx(row.result.p_value, rel=1e-6)
    assert set(readout.tables()) >= {"over_time_day", "over_time_exposure_day"}


def test_over_time_is_effect_over_time_of_each_reading(logs, readout):
    # the readout stores the per-unit rows once for both readings
    # (onlineeval.abtest.units.shared_unit_rows); each is effect_over_time's own (to the
    # last bits: two identical calls already differ there, DuckDB's parallel variance sums)
    from onlineeval.abtest import effect_over_time

    for by in ("day", "exposure_day"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = effect_over_time(logs, "control", "treatment", "ctr", by=by)
        pd.testing.assert_frame_equal(readout.over_time[by], want, check_exact=False,
                                      rtol=1e-12, atol=0)


def test_quantiles_are_readstats_quantile_effects(logs, readout):
    from onlineeval.abtest.quantiles import quantile_effects

    q = readout.quantiles
    assert set(q["quantile"]) == {0.5, 0.9} and set(q["metric"]) == {"time_to_first_click"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = quantile_effects(logs, "control", "treatment", "time_to_first_click", (0.5, 0.9))
    assert q["estimate"].tolist() == want["estimate"].tolist()
    assert q["p_value"].tolist() == pytest.approx(want["p_value"].tolist(), rel=1e-12,
                                                  nan_ok=True)
    assert "quantiles" in readout.tables()
