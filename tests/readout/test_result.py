"""The Readout record: JSON-safe to_dict, tables, window days, SRM status."""

import json
import math

import pandas as pd

from onlineeval.readout import SRM, Decision, MetricRow, Readout, Window
from onlineeval.stats.results import ComparisonResult


def _row(**kw):
    res = ComparisonResult(estimate=0.1, ci_low=math.nan, ci_high=0.2, ci_level=0.95,
                           p_value=0.01, test="t", n=4, units_control=2, units_treatment=2,
                           unit="user_id")
    base = dict(metric="ctr", role="primary", control="control", treatment="treatment",
                control_value=0.5, treatment_value=0.6, result=res, rel_lift=0.2,
                rel_ci_low=math.nan, rel_ci_high=0.3, better="higher", verdict="improved",
                interval="unadjusted")
    base.update(kw)
    return MetricRow(**base)


def test_window_days_counts_calendar_days_both_ends():
    # Jan 5 10:00 .. Jan 18 01:00: the dates 5..18, 14 days
    w = Window(first_exposure=pd.Timestamp("2026-01-05 10:00"),
               last_exposure=pd.Timestamp("2026-01-18 01:00"))
    assert w.days == 14
    assert Window(first_exposure=pd.Timestamp("2026-01-05 23:59"),
                  last_exposure=pd.Timestamp("2026-01-05 00:01")).days == 1
    assert Window().days is None


def test_srm_status_from_alpha():
    s = SRM(p_value=0.0009, statistic=11.0, alpha=0.001, observed={"a": 1, "b": 2},
            expected={"a": 1.5, "b": 1.5}, expected_shares={"a": 0.5, "b": 0.5})
    assert s.status == "mismatch"
    assert SRM(0.001, 1.0, 0.001, {}, {}, {}).status == "ok"


def test_to_dict_is_json_safe_and_tables_carry_srm():
    r = Readout(experiment="e", designs=("ab",), control="control", treatments=("treatment",),
                alpha=0.05, family=("ctr",), family_size=1, metrics=(_row(),),
                decisions=(Decision("treatment", "ship", ("why",)),),
                units={"control": 2, "treatment": 2},
                srm=SRM(0.5, 0.45, 0.001, {"control": 2, "treatment": 2},
                        {"control": 2.0, "treatment": 2.0},
                        {"control": 0.5, "treatment": 0.5}),
                window=Window(first_exposure=pd.Timestamp("2026-01-05"),
                              last_exposure=pd.Timestamp("2026-01-06")))
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert d["verdict"] == "ship"
    assert d["metrics"][0]["ci_low"] is None and d["metrics"][0]["rel_ci_low"] is None
    assert d["window"]["first_exposure"] == "2026-01-05T00:00:00" and d["window"]["days"] == 2
    assert d["srm"]["status"] == "ok"
    t = r.tables()
    assert t["summary"].loc[0, "srm_status"] == "ok"
    assert t["metrics"].loc[0, "estimate"] == 0.1
    assert list(t["srm"]["observed"]) == [2, 2]
