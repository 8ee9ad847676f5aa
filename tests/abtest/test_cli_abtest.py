"""The abtest and power commands: JSON shape, the SRM banner above the results, errors."""

import io
import json

import pandas as pd
import pytest

import onlineeval
from onlineeval.abtest import COLUMNS, POWER_COLUMNS
from onlineeval.cli import main

SRM_KEYS = {"statistic", "p_value", "units", "expected_shares", "mismatch"}
WINDOW_KEYS = {"start", "end", "first_exposure", "last_exposure", "pre_period_start", "cuped"}
# the window fields every result row repeats (JSON records and CSV rows alike)
WINDOW_FIELDS = ["window_start", "window_end", "window_first_exposure", "window_last_exposure"]


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
    assert set(out) == {"srm", "experiment", "window", "results"}
    assert set(out["srm"]) == SRM_KEYS
    assert out["experiment"] is None  # the log has no experiment column
    assert set(out["window"]) == WINDOW_KEYS
    assert out["srm"]["mismatch"] is False
    assert [list(r) for r in out["results"]] == [[*COLUMNS, *WINDOW_FIELDS]] * 2
    assert out["results"][0]["metric"] == "ctr"
    # the API takes the same directory and gives the same numbers
    api = onlineeval.abtest(logs, metrics=["ctr", "searches_per_unit"])
    assert [r["p_value"] for r in out["results"]] == pytest.approx(list(api["p_value"]),
                                                                  rel=1e-12)

    code = main(["abtest", logs, "--metrics", "ctr", "--pre-period",
                 "2024-01-01,2024-01-05", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert list(out["results"][0]) == [*COLUMNS, "cuped_variance_reduction", "cuped_applied",
                                       *WINDOW_FIELDS]
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
                 "control=0.6,treatment=0.4"]) == 0
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
    err = one_line_error(["abtest", logs, "--expected-split", "control=0.6,treatment=0.5"])
    assert "sum to 1" in err and "sum 1.1" in err
    err = one_line_error(["power", logs, "--metrics", "ctr", "--effect", "4"])
    assert "outside [0, 1]" in err and "--absolute" in err
    assert "integer >= 50" in one_line_error(["power", logs, "--units", "20"])
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


def test_the_readout_states_its_window_in_every_format(make_tables, tmp_path, capsys):
    logs = _write(make_tables, tmp_path / "w", seed=25)
    s, _ = make_tables(seed=25)
    start, end = pd.Timestamp("2024-01-03"), pd.Timestamp("2024-01-10")
    kept = s[(s["ts"] >= start) & (s["ts"] < end)]
    first, last = kept["ts"].min(), kept["ts"].max()
    argv = ["abtest", logs, "--metrics", "ctr", "--start", "2024-01-03", "--end",
            "2024-01-10T01:00:00+01:00"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[1] == (f"window: {start} <= ts < {end}; first exposure {first}, "
                        f"last exposure {last}")
    assert "pre_exposure_searches = " in captured.err
    assert main([*argv, "--format", "json"]) == 0
    window = json.loads(capsys.readouterr().out)["window"]
    assert window == {"start": start.isoformat(), "end": end.isoformat(),
                      "first_exposure": first.isoformat(), "last_exposure": last.isoformat(),
                      "pre_period_start": None, "cuped": False}
    assert main([*argv, "--format", "csv"]) == 0
    rows = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(rows.columns) == [*COLUMNS, *WINDOW_FIELDS]
    assert pd.Timestamp(rows.loc[0, "window_first_exposure"]) == first
    assert pd.Timestamp(rows.loc[0, "window_end"]) == end
    assert main(["abtest", logs, "--metrics", "ctr", "--cuped"]) == 0
    assert "CUPED pre-period: each unit's searches before its first exposure" in \
        capsys.readouterr().out
    assert main(["abtest", logs, "--start", "yesterday"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "start must be a timestamp" in err


def test_abtest_refuses_a_log_of_several_experiments_naming_them(make_tables, tmp_path,
                                                                 capsys):
    s1, c1 = make_tables(seed=26, users={"control": 10, "treatment": 10}, experiment="e1")
    s2, c2 = make_tables(seed=27, users={"control": 10, "treatment": 10}, experiment="e2")
    s2["search_id"] = "b" + s2["search_id"]
    c2["search_id"] = "b" + c2["search_id"]
    path = tmp_path / "two"
    path.mkdir()
    pd.concat([s1, s2]).to_csv(path / "searches.csv", index=False)
    pd.concat([c1, c2]).to_csv(path / "clicks.csv", index=False)
    assert main(["abtest", str(path), "--metrics", "ctr"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "several experiments (e1, e2)" in err
    assert "--experiment" in err
    assert main(["abtest", str(path), "--metrics", "ctr", "--experiment", "e2"]) == 0


def test_table_shows_verdict_df_and_names_the_tests(make_tables, tmp_path, capsys):
    logs = _write(make_tables, tmp_path / "small", seed=25,
                  users={"control": 20, "treatment": 20})
    assert main(["abtest", logs, "--metrics", "ctr,searches_per_unit"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    header = next(line for line in lines if "metric" in line and "variant" in line)
    assert header.split()[-5:] == ["rel_diff", "rel_ci_low", "rel_ci_high", "verdict", "df"]
    assert header.split()[4:11] == ["estimate", "ci_low", "ci_high", "p_value", "p_adjusted",
                                    "units_control", "units_treatment"]
    assert sum("insufficient data" in line for line in lines) == 2
    assert lines[-1].startswith("tests: delta-method t (Welch-Satterthwaite df) for ctr; "
                                "Welch t (Welch-Satterthwaite df) for searches_per_unit.")
    assert lines[-1].endswith("no verdict below 50 units with data per arm")
    assert "warning: insufficient data" in captured.err
    assert main(["abtest", logs, "--metrics", "ctr", "--min-units", "10",
                 "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)["results"][0]
    assert row["verdict"] in ("significant", "not significant")
    assert row["test"] == "delta-method t (Welch-Satterthwaite df)" and row["df"] > 10
