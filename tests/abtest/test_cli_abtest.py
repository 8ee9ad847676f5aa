"""The abtest and power commands: JSON shape, the SRM banner above the results, errors."""

import json

import pytest

import onlineeval
from onlineeval.abtest import COLUMNS, POWER_COLUMNS
from onlineeval.cli import main

SRM_KEYS = {"statistic", "p_value", "units", "expected_shares", "mismatch"}


def _write(make_tables, path, **kwargs):
    s, c = make_tables(**kwargs)
    path.mkdir()
    s.to_csv(path / "searches.csv", index=False)
    c.to_csv(path / "clicks.csv", index=False)
    return str(path)


def test_json_is_one_object_with_srm_and_results(make_tables, tmp_path, capsys):
    logs = _write(make_tables, tmp_path / "ab", seed=21)
    code = main(["abtest", logs, "--metrics", "ctr,searches_per_unit", "--format", "json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"srm", "results"}
    assert set(out["srm"]) == SRM_KEYS
    assert out["srm"]["mismatch"] is False
    assert [list(r) for r in out["results"]] == [list(COLUMNS)] * 2
    assert out["results"][0]["metric"] == "ctr"
    # the API takes the same directory and gives the same numbers
    api = onlineeval.abtest(logs, metrics=["ctr", "searches_per_unit"])
    assert [r["p_value"] for r in out["results"]] == pytest.approx(list(api["p_value"]),
                                                                  rel=1e-12)

    code = main(["abtest", logs, "--metrics", "ctr", "--pre-period",
                 "2024-01-01,2024-01-05", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert list(out["results"][0]) == [*COLUMNS, "cuped_variance_reduction"]
    code = main(["abtest", logs, "--metrics", "ctr", "--pre-period",
                 "2024-01-01", "2024-01-05", "--format", "json"])
    assert json.loads(capsys.readouterr().out) == out


def test_srm_mismatch_printed_above_results(make_tables, tmp_path, capsys):
    logs = _write(make_tables, tmp_path / "skewed", seed=22,
                  users={"control": 300, "treatment": 200})
    assert main(["abtest", logs, "--metrics", "ctr"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("!!!!")
    assert "SAMPLE RATIO MISMATCH" in out[1]
    assert out.index(next(line for line in out if "metric" in line and "variant" in line)) > 1
    assert main(["abtest", logs, "--metrics", "ctr", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["srm"]["mismatch"] is True
    assert captured.err.startswith("!!! SAMPLE RATIO MISMATCH")
    assert main(["abtest", logs, "--metrics", "ctr", "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("metric,variant,")
    assert captured.err.startswith("!!! SAMPLE RATIO MISMATCH")
    # a declared 60/40 split fits
    assert main(["abtest", logs, "--metrics", "ctr", "--expected-split",
                 "control=3,treatment=2"]) == 0
    assert capsys.readouterr().out.startswith("sample ratio check passed")


def test_errors_exit_2_with_one_line(make_tables, tmp_path, capsys):
    logs = _write(make_tables, tmp_path / "e", seed=23)

    def one_line_error(argv):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1, captured.err
        return captured.err

    err = one_line_error(["abtest", logs, "--treatment", "nope"])
    assert "unknown treatment variant 'nope'" in err
    assert "control (150 units), treatment (150 units)" in err
    err = one_line_error(["abtest", logs, "--metrics", "ctr,bogus"])
    assert "unknown metric 'bogus'" in err and "click_mrr" in err and "searches_per_unit" in err
    # a variant without units in the analysed period (the pre-period ends after every search)
    err = one_line_error(["abtest", logs, "--pre-period", "2030-01-01"])
    assert "has 0 units" in err and "control (0 units)" in err
    assert "--expected-split" in one_line_error(["abtest", logs, "--expected-split", "control:1"])
    assert "unknown metric" in one_line_error(["power", logs, "--metrics", "nope"])
    assert "'ctl'" in one_line_error(["power", logs, "--variant", "ctl"])


def test_power_command(make_tables, tmp_path, capsys):
    logs = _write(make_tables, tmp_path / "p", seed=24)
    assert main(["power", logs, "--metrics", "ctr", "--effect", "0.05", "--format",
                 "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [list(r) for r in rows] == [list(POWER_COLUMNS)]
    # the command prints what the API computes (tests/abtest/test_sizing.py checks the API)
    api = onlineeval.power(logs, metrics="ctr", effect=0.05).iloc[0]
    for key in ("baseline_value", "unit_sd", "mde_abs", "effect_abs", "units_per_arm_needed"):
        assert rows[0][key] == pytest.approx(float(api[key]), rel=1e-12), key
    assert rows[0]["baseline_units"] == 300 and rows[0]["units_per_arm"] == 150
