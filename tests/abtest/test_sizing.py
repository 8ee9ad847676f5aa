"""onlineeval.power: per-unit sd by hand from per-user aggregates; MDE and units needed
against statsmodels' NormalIndPower."""

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower

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
    d = NormalIndPower().solve_power(nobs1=200, alpha=0.05, power=0.8, ratio=1.0)
    assert row["mde_abs"] == pytest.approx(d * row["unit_sd"], rel=1e-4)
    assert row["mde_rel"] == pytest.approx(row["mde_abs"] / r, rel=1e-12)
    assert row["effect_abs"] == pytest.approx(0.05 * r)
    need = int(row["units_per_arm_needed"])
    es = row["effect_abs"] / row["unit_sd"]
    assert NormalIndPower().power(es, need, 0.05) >= 0.8 > NormalIndPower().power(es, need - 1,
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
    with pytest.raises(UnknownNameError, match="'ctl'.*control, treatment"):
        onlineeval.power(logs, variant="ctl")
    with pytest.raises(InvalidParameterError, match="power"):
        onlineeval.power(logs, power=1.0)
    with pytest.raises(InvalidParameterError, match="effect"):
        onlineeval.power(logs, effect=0)
    with pytest.raises(InvalidParameterError, match="units per arm"):
        onlineeval.power(logs, units=1)
