"""onlineeval.power: per-unit sd by hand from per-user aggregates; MDE and units needed
against statsmodels' TTestIndPower (the t test the readout runs)."""

import re

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.power import TTestIndPower

import onlineeval
from onlineeval.abtest import POWER_COLUMNS
from onlineeval.errors import InvalidParameterError, UnknownNameError


def test_power_from_baseline_logs(make_tables):
    s, c = make_tables(seed=31, users={"control": 400, "treatment": 100})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    df = onlineeval.power(logs, metrics=["ctr", "searches_per_unit"], variant="control",
                          effect=0.05)
    assert list(df.columns) == list(POWER_COLUMNS)
    base = s[s["variant"] == "control"]
    clicked = base["search_id"].isin(c["search_id"])
    per_user = base.assign(x=clicked.astype(float), y=1.0).groupby("user_id")[["x", "y"]].sum()
    r = per_user["x"].sum() / per_user["y"].sum()
    lin = (per_user["x"] - r * per_user["y"]) / per_user["y"].mean()
    row = df.set_index("metric").loc["ctr"]
    assert row["baseline_value"] == pytest.approx(r, rel=1e-12)
    assert row["unit_sd"] == pytest.approx(lin.std(ddof=1), rel=1e-9)
    assert row["baseline_units"] == 400 and row["units_per_arm"] == 200
    # the t test's power at the MDE, by statsmodels, is the requested 0.8
    es = row["mde_abs"] / row["unit_sd"]
    assert TTestIndPower().power(es, 200, 0.05, ratio=1.0) == pytest.approx(0.8, abs=1e-9)
    assert row["mde_rel"] == pytest.approx(row["mde_abs"] / r, rel=1e-12)
    assert row["effect_abs"] == pytest.approx(0.05 * r)
    need = int(row["units_per_arm_needed"])
    es = row["effect_abs"] / row["unit_sd"]
    assert TTestIndPower().power(es, need, 0.05) >= 0.8 > TTestIndPower().power(es, need - 1,
                                                                                0.05)
    spu = df.set_index("metric").loc["searches_per_unit"]
    assert spu["unit_sd"] == pytest.approx(per_user["y"].std(ddof=1), rel=1e-9)

    absolute = onlineeval.power(logs, metrics="ctr", units=1000, effect=0.01, relative=False,
                                alpha=0.01, power=0.9)
    assert absolute["units_per_arm"].iloc[0] == 1000
    assert absolute["effect_abs"].iloc[0] == pytest.approx(0.01)
    all_units = per_user.shape[0] + s[s["variant"] == "treatment"]["user_id"].nunique()
    assert absolute["baseline_units"].iloc[0] == all_units
    assert np.isnan(onlineeval.power(logs, metrics="ctr")["units_per_arm_needed"].iloc[0])


def test_power_from_logs_without_variants(make_tables):
    # plain production logs (no experiment yet) are a baseline too
    s, c = make_tables(seed=33, users={"control": 60, "treatment": 60})
    s = s.drop(columns="variant")
    df = onlineeval.power(onlineeval.load_logs(searches=s, clicks=c), metrics="ctr")
    per_user = s.assign(x=s["search_id"].isin(c["search_id"]).astype(float), y=1.0)
    per_user = per_user.groupby("user_id")[["x", "y"]].sum()
    r = per_user["x"].sum() / per_user["y"].sum()
    lin = (per_user["x"] - r * per_user["y"]) / per_user["y"].mean()
    assert df["baseline_units"].iloc[0] == 120
    assert df["unit_sd"].iloc[0] == pytest.approx(lin.std(ddof=1), rel=1e-9)


def test_power_bad_input(make_tables):
    s, c = make_tables(seed=32, users={"control": 20, "treatment": 20})
    logs = onlineeval.load_logs(searches=s, clicks=c)
    with pytest.raises(UnknownNameError, match="'ctl'.*'control', 'treatment'"):
        onlineeval.power(logs, variant="ctl")
    with pytest.raises(InvalidParameterError, match="power"):
        onlineeval.power(logs, power=1.0)
    with pytest.raises(InvalidParameterError, match="effect"):
        onlineeval.power(logs, effect=0)
    with pytest.raises(InvalidParameterError, match="units per arm"):
        onlineeval.power(logs, units=1)


def _flat_logs(make_tables):
    # every search has results, so zero_result_rate is 0 for every unit
    s, c = make_tables(seed=34, users={"control": 80, "treatment": 80})
    s["n_results"] = 10
    return onlineeval.load_logs(searches=s, clicks=c)


def test_power_refuses_a_zero_variance_metric(make_tables):
    # Issue 12: a metric that does not vary over the baseline gave unit_sd 0, an MDE of 0
    # and "2 units needed"; no sample size follows from it
    logs = _flat_logs(make_tables)
    with pytest.raises(InvalidParameterError,
                       match=r"zero variance over the 160 baseline units: zero_result_rate "
                             r"\(every unit's value is 0\).*metrics ctr"):
        onlineeval.power(logs, metrics="ctr,zero_result_rate", effect=0.1)
    assert len(onlineeval.power(logs, metrics="ctr", effect=0.1)) == 1


@pytest.mark.parametrize("effect,relative,what", [
    (4.0, True, r"ctr \(baseline 0\.\d+ would become 1\.\d+, outside \[0, 1\]"),
    (0.9, False, r"ctr \(baseline 0\.\d+ would become 1\.\d+, outside \[0, 1\]"),
    (-1.5, True, r"searches_per_unit \(baseline 4\.\d+ would become -\d\.\d+, outside "
                 r"\[0, inf\]"),
])
def test_power_refuses_an_effect_the_metric_cannot_show(make_tables, effect, relative, what):
    # Issue 12: effect=2 on a CTR of 0.82 asked for a CTR of 2.46 and got a sample size (the
    # CTR of these logs is about 0.28, so the relative effect that breaks it is larger)
    logs = _flat_logs(make_tables)
    with pytest.raises(InvalidParameterError, match=what):
        onlineeval.power(logs, metrics="ctr,searches_per_unit", effect=effect,
                         relative=relative)


def test_power_effect_limits_are_the_metric_range(make_tables):
    # the largest relative increase of a CTR r is 1 / r - 1: just inside works, just
    # outside is refused, and the message gives that limit
    logs = _flat_logs(make_tables)
    r = float(onlineeval.power(logs, metrics="ctr")["baseline_value"].iloc[0])
    top = 1 / r - 1
    ok = onlineeval.power(logs, metrics="ctr", effect=top * 0.999)
    assert ok["effect_abs"].iloc[0] == pytest.approx(top * 0.999 * r)
    with pytest.raises(InvalidParameterError, match=re.escape(f"at most {top:+.6g})")):
        onlineeval.power(logs, metrics="ctr", effect=top * 1.001)


def test_power_respects_the_readouts_minimum_units(make_tables):
    # the readout gives no verdict below min_units per arm, so power never plans fewer, and
    # an MDE at fewer units is not offered
    logs = _flat_logs(make_tables)
    huge = onlineeval.power(logs, metrics="ctr", effect=1.5)
    by_formula = TTestIndPower().solve_power(
        huge["effect_abs"].iloc[0] / huge["unit_sd"].iloc[0], alpha=0.05, power=0.8)
    assert by_formula < 50 and huge["units_per_arm_needed"].iloc[0] == 50
    assert onlineeval.power(logs, metrics="ctr", effect=1.5, min_units=10)[
        "units_per_arm_needed"].iloc[0] == max(10, np.ceil(by_formula))
    with pytest.raises(InvalidParameterError, match="integer >= 50"):
        onlineeval.power(logs, metrics="ctr", units=30)
    s, c = make_tables(seed=35, users={"control": 40, "treatment": 40})
    small = onlineeval.load_logs(searches=s, clicks=c)
    with pytest.warns(UserWarning, match="40 units per arm, fewer than the 50"):
        out = onlineeval.power(small, metrics="ctr")
    assert np.isnan(out["mde_abs"].iloc[0])
    assert isinstance(out, pd.DataFrame)
