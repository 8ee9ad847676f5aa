"""``onlineeval readout``: one screen within 100 columns, SRM once and as a field in JSON
and CSV, --fail-on-srm, --json written; and the one number format."""

import csv
import io
import json
import warnings

import pandas as pd
import pytest

import onlineeval
from onlineeval.cli import main
from onlineeval.formatting import count, number, percent, pvalue, when

from .conftest import make_tables


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("ab")
    s, c = make_tables(seed=3, boost={"treatment": 0.08})
    s.to_parquet(d / "searches.parquet")
    c.to_parquet(d / "clicks.parquet")
    return d


@pytest.fixture(scope="module")
def srm_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("srm")
    s, c = make_tables(seed=7, users={"control": 150, "treatment": 60})
    s.to_parquet(d / "searches.parquet")
    c.to_parquet(d / "clicks.parquet")
    return d


def test_table_fits_100_columns_and_says_srm_once(log_dir, capsys):
    assert main(["readout", str(log_dir), "--non-inferiority", "abandonment_rate:2%"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert out.count("SRM:") == 1
    assert "VERDICT" in out and "rule: ship when" in out
    assert "p UNADJUSTED" in out


def test_json_and_csv_carry_srm_and_agree_with_the_api(log_dir, tmp_path, capsys):
    js = tmp_path / "r.json"
    assert main(["readout", str(log_dir), "--format", "json", "--json", str(js)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads(js.read_text(encoding="utf-8")) == printed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = onlineeval.readout(log_dir)
    assert printed["srm"]["status"] == ro.srm.status
    assert printed["srm"]["p_value"] == pytest.approx(ro.srm.p_value)
    ctr = printed["metrics"][0]
    assert ctr["metric"] == "ctr" and ctr["estimate"] == ro.rows("primary")[0].result.estimate
    assert main(["readout", str(log_dir), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["srm_status"] for r in rows} == {ro.srm.status}
    assert {r["overall_verdict"] for r in rows} == {ro.verdict}
    assert float(rows[0]["estimate"]) == pytest.approx(ctr["estimate"], rel=1e-12)


def test_fail_on_srm_exits_3_after_the_output(srm_dir, capsys):
    assert main(["readout", str(srm_dir), "--secondary", "none"]) == 0
    assert "SRM: MISMATCH" in capsys.readouterr().out
    assert main(["readout", str(srm_dir), "--secondary", "none", "--fail-on-srm"]) == 3
    cap = capsys.readouterr()
    assert "SRM: MISMATCH" in cap.out and "--fail-on-srm" in cap.err


def test_html_output_not_available_is_one_line(log_dir, tmp_path, capsys):
    status = main(["readout", str(log_dir), "-o", str(tmp_path / "r.html")])
    if status == 2:
        err = capsys.readouterr().err
        assert "HTML readout not available yet" in err and err.count("\n") == 1
        assert not (tmp_path / "r.html").exists()
    else:
        assert status == 0 and (tmp_path / "r.html").read_text(encoding="utf-8")


def test_number_format():
    assert number(0.0123456) == "0.01235"
    assert number(-0.0123456, signed=True) == "-0.01235"
    assert number(123456.7) == "123,457"
    assert number(float("nan")) == "null"
    assert pvalue(0.0312) == "0.0312" and pvalue(2.24e-5) == "2.2e-05"
    assert pvalue(1e-4) == "0.0001"
    assert percent(0.040608) == "+4.06%" and percent(-0.25, signed=False) == "-25%"
    assert count(3157.7) == "3,158"
    assert when(pd.Timestamp("2026-01-05")) == "2026-01-05"
    assert when(pd.Timestamp("2026-01-05 10:03:31.9")) == "2026-01-05 10:03"


def test_runs_and_qrels_add_the_offline_prediction_as_the_api_does(capsys,
                                                                   sample_experiment_logs):
    """``--runs C,T --qrels Q`` is the API's ``runs=(C, T), qrels=Q``: the same offline
    section in JSON; the runs and qrels go together."""
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "sample_logs"
    runs = (str(sample / "runs" / "s080.run"), str(sample / "runs" / "s040.run"))
    qrels = str(sample / "qrels.txt")
    ab = sample_experiment_logs("s080_vs_s040") / "ab"  # the experiment's users' rows
    args = ["readout", str(ab), "--experiment", "s080_vs_s040", "--secondary",
            "none", "--format", "json"]
    assert main([*args, "--runs", ",".join(runs), "--qrels", qrels]) == 0
    printed = json.loads(capsys.readouterr().out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = onlineeval.readout(str(ab), experiment="s080_vs_s040", secondary=(),
                                runs=runs, qrels=qrels)
    assert printed["offline"] and printed["offline"] == json.loads(
        json.dumps(ro.to_dict()["offline"]))
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out).get("offline") is None
    assert main([*args, "--runs", ",".join(runs)]) == 2
    assert "--runs and --qrels go together" in capsys.readouterr().err
    assert main([*args, "--runs", runs[0], "--qrels", qrels]) == 2
    assert "--runs takes two runs" in capsys.readouterr().err
