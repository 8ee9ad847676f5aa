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
    from onlineeval.readout.text import csv_frame

    row = csv_frame(ro).query("role == 'counterfactual'").iloc[0]
    assert (row["metric"], row["estimator"]) == ("clicks@10", "snips")
    assert (row["estimate"], row["ci_low"], row["ci_high"], row["control_value"],
            row["treatment_value"]) == pytest.approx(
        (want.result.estimate, want.result.ci_low, want.result.ci_high, want.control.value,
         want.treatment.value), rel=1e-12)
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


def test_cli_readout_counterfactual_equals_the_api(capsys, tmp_path, sample_experiment_logs):
    """``onlineeval readout --counterfactual LOGS --counterfactual-options K=V`` shows what
    ``readout(counterfactual=, counterfactual_options=)`` computes: the JSON section equals
    compare() with the options given (and qid as the query column, the section's default),
    and the terminal text carries the same Δ."""
    from onlineeval.cli import main
    from onlineeval.formatting import number

    # the counterfactual reads the whole A/B log, the readout its experiment's users (the
    # same numbers, tests/report/test_sample_study.py)
    ab = str(SAMPLE / "ab")
    part = str(sample_experiment_logs("s100_vs_s080") / "ab")
    argv = ["readout", part, "--experiment", "s100_vs_s080", "--runs", ",".join(RUNS),
            "--qrels", str(SAMPLE / "qrels.txt"), "--secondary", "none",
            "--counterfactual", ab, "--counterfactual-options",
            "estimator=ips,metric=clicks@5,max_rank=5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # one readout: the terminal text on stdout, the JSON (ro.to_dict(), as --format json
        # prints it) in the file
        assert main([*argv, "--json", str(tmp_path / "r.json")]) == 0
        got = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["counterfactual"]
        want = compare(onlineeval.load_logs(ab), *RUNS, query="qid", estimator="ips",
                       metric="clicks@5", max_rank=5)
    assert (got["estimator"], got["metric"]) == ("ips", "clicks@5")
    assert (got["estimate"], got["ci_low"], got["ci_high"], got["p_value"]) == pytest.approx(
        (want.result.estimate, want.result.ci_low, want.result.ci_high,
         want.result.p_value), rel=1e-9)
    assert (got["control_value"], got["treatment_value"]) == pytest.approx(
        (want.control.value, want.treatment.value), rel=1e-9)
    text = " ".join(capsys.readouterr().out.split())  # the text wraps its lines
    assert f"Δ clicks@5 {number(want.result.estimate, signed=True)} [" in text


@pytest.mark.parametrize("extra, message", [
    (["--counterfactual", "LOGS"], "--counterfactual needs --runs"),
    (["--counterfactual-options", "estimator=dr"], "--counterfactual-options needs "
                                                   "--counterfactual"),
    (["--runs", "a.run,b.run", "--qrels", "q", "--counterfactual", "LOGS",
      "--counterfactual-options", "foo=1"], "unknown key 'foo'; use clip, confidence"),
    (["--runs", "a.run,b.run", "--qrels", "q", "--counterfactual", "LOGS",
      "--counterfactual-options", "estimator"], "expected KEY=VALUE"),
    (["--runs", "a.run,b.run", "--qrels", "q", "--counterfactual", "LOGS",
      "--counterfactual-options", "clip=x"], "invalid float value: 'x'"),
])
def test_cli_counterfactual_options_are_checked_before_any_log_is_read(capsys, extra,
                                                                        message):
    from onlineeval.cli import main

    assert main(["readout", "no-such-dir", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
