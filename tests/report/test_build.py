"""Orientation of online deltas in the report table: positive always favours the treatment."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from onlineeval.report.build import ExperimentReadout, _row, lower_is_better
from onlineeval.study import Experiment


@pytest.mark.parametrize("metric,lower", [
    ("abandonment_rate", True), ("zero_result_rate", True), ("session_abandonment_rate", True),
    ("mean_time_to_first_click_s", True), ("reformulation_rate", True),
    ("ctr", False), ("click_mrr", False), ("session_success_rate", False),
    ("clicks_per_search", False),
])
def test_lower_is_better(metric, lower):
    assert lower_is_better(metric) is lower


def test_row_negates_lower_is_better_metrics_and_swaps_their_interval():
    exp = Experiment("e", Path("q"), Path("c.run"), Path("t.run"))
    offline = pd.DataFrame([{"measure": "map", "delta": 0.1, "ci_low": 0.05, "ci_high": 0.15,
                             "p_adjusted": 0.01}])
    ab = pd.DataFrame([
        # abandonment fell by 0.02 (an improvement), CTR rose by 0.03
        {"metric": "abandonment_rate", "abs_diff": -0.02, "abs_ci_low": -0.035,
         "abs_ci_high": -0.005, "p_adjusted": 0.02},
        {"metric": "ctr", "abs_diff": 0.03, "abs_ci_low": 0.01, "abs_ci_high": 0.05,
         "p_adjusted": 0.03},
    ])
    r = ExperimentReadout(exp, offline, ab=ab, srm={"mismatch": False})
    row = _row(r)
    assert row["ab:abandonment_rate"] == pytest.approx(0.02)
    assert (row["ab:abandonment_rate_ci_low"], row["ab:abandonment_rate_ci_high"]) == \
        pytest.approx((0.005, 0.035))
    assert row["ab:abandonment_rate_p"] == 0.02
    assert row["ab:ctr"] == pytest.approx(0.03)
    assert (row["ab:ctr_ci_low"], row["ab:ctr_ci_high"]) == pytest.approx((0.01, 0.05))
    assert row["offline:map"] == 0.1 and row["srm_mismatch"] is False
