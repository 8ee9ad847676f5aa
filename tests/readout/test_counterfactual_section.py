"""The readout's counterfactual section: the numbers are onlineeval.counterfactual.compare's
on the logging log given (which tests/counterfactual check against pandas and by coverage),
shown in the terminal text and the JSON."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import onlineeval
from onlineeval.counterfactual import compare
from onlineeval.errors import InvalidParameterError
from onlineeval.readout.text import render_text

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs"
RUNS = (str(SAMPLE / "runs" / "s100.run"), str(SAMPLE / "runs" / "s080.run"))


def test_readout_shows_the_counterfactual_prediction_beside_the_ab(sample_experiment_logs):
    # the counterfactual reads the whole A/B log (nine rankers shown); the A/B readout beside
    # it only its experiment's users (the same numbers, tests/report/test_sample_study.py)
    logs = onlineeval.load_logs(SAMPLE / "ab")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = onlineeval.readout(sample_experiment_logs("s100_vs_s080") / "ab",
                                experiment="s100_vs_s080", runs=RUNS,
                                qrels=SAMPLE / "qrels.txt", counterfactual=logs,
                                secondary=["clicks_per_search"])
        want = compare(logs, *RUNS, query="qid", estimator="snips")
    s = ro.counterfactual
    assert (s.result.estimate, s.result.ci_low, s.result.ci_high, s.result.p_value) == \
        pytest.approx((want.result.estimate, want.result.ci_low, want.result.ci_high,
                       want.result.p_value), rel=1e-12)
    assert (s.control_value, s.treatment_value) == pytest.approx(
        (want.control.value, want.treatment.value), rel=1e-12)
    text = render_text(ro)
    assert "counterfactual prediction of this A/B from the logged data" in text
    assert "A/B Δ clicks_per_search" in text
    d = json.loads(json.dumps(ro.to_dict(), allow_nan=False))["counterfactual"]
    assert d["estimate"] == pytest.approx(want.result.estimate, rel=1e-12)
    assert "counterfactual" in ro.tables()
    from onlineeval.formatting import number
    from onlineeval.report.readout_page import readout_section

    page = readout_section(ro)
    assert "Counterfactual prediction of this A/B from the logged data" in page
    assert (f'data-key="readout-s100_vs_s080/counterfactual/estimate" data-kind="delta">'
            f"{number(want.result.estimate, signed=True)}<") in page


def test_counterfactual_needs_runs():
    with pytest.raises(InvalidParameterError, match="needs runs"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            onlineeval.readout(SAMPLE / "ab", experiment="s100_vs_s080",
                               counterfactual=SAMPLE / "ab", secondary=())
