"""The study file's readout keys (primary, guardrails, non_inferiority) and its column mapping
(columns, the format of --columns-file): read and checked with one-line errors naming the
study file and key, and used by the report's per-experiment readouts, whose numbers are those
of onlineeval.readout with the same arguments."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

import onlineeval
from onlineeval.errors import InputError
from onlineeval.report import build_report, study_inputs
from onlineeval.study import read_study

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs"
EXP = "s200_vs_s100"


def write(directory: Path, text: str) -> Path:
    p = directory / "study.toml"
    p.write_text(text, encoding="utf-8")
    return p


HEAD = f'ab_logs = "{SAMPLE / "ab"}"\nonline_metrics = ["ctr", "click_mrr", "abandonment_rate"]\n'


def test_top_level_keys_are_defaults_and_an_experiment_replaces_them(tmp_path):
    s = read_study(write(tmp_path, HEAD + (
        'primary = ["click_mrr"]\nguardrails = ["abandonment_rate"]\n'
        'non_inferiority = { abandonment_rate = "2%" }\n'
        '[[experiment]]\nname = "a"\n'
        '[[experiment]]\nname = "b"\nprimary = ["ctr"]\nguardrails = ["zero_result_rate"]\n'
        'non_inferiority = { zero_result_rate = 0.01 }\n'
        '[[experiment]]\nname = "c"\nguardrails = []\n')))
    a, b, c = s.experiments
    assert a.primary == ("click_mrr",) and a.non_inferiority == {"abandonment_rate": "2%"}
    assert a.guardrails == ("abandonment_rate",)
    assert b.primary == ("ctr",) and b.non_inferiority == {"zero_result_rate": 0.01}
    # c keeps the top-level margins: a metric with a margin is a guardrail
    assert c.primary == ("click_mrr",) and c.guardrails == ("abandonment_rate",)


def test_default_primary_is_the_first_online_metric(tmp_path):
    (e,) = read_study(write(tmp_path, HEAD + '[[experiment]]\nname = "a"\n')).experiments
    assert e.primary == ("ctr",) and e.non_inferiority == {} and e.columns is None


@pytest.mark.parametrize("text,message", [
    ('guardrails = ["abandonment_rate"]\n',
     r"^study.toml: guardrails: 'abandonment_rate' needs a non-inferiority margin"),
    ('primary = ["ctrr"]\n', r"^study.toml: primary: unknown metric 'ctrr'; did you mean 'ctr'"),
    ('primary = []\n', r"^study.toml: primary: expected a non-empty list"),
    ('non_inferiority = { abandonment_rate = "two" }\n',
     r"^study.toml: non_inferiority.abandonment_rate: the non-inferiority margin of "),
    ('non_inferiority = { abandonment_rate = -1 }\n',
     r"^study.toml: non_inferiority.abandonment_rate: .* must be a positive number"),
    ('non_inferiority = { ctr = "1%" }\n', r"^study.toml: guardrails: 'ctr' is a primary"),
    ('primary = "ctr"\n', r"^study.toml: primary: expected list, got str"),
    ('columns = 3\n', r"^study.toml: columns: expected str or dict, got int"),
    ('columns = "nope.toml"\n', r"^study.toml: columns: file 'nope.toml' does not exist"),
    ('[columns.sessions]\nuid = "user_id"\n',
     r"^study.toml: columns.sessions: \[sessions\] is not a log table"),
    ('[columns.searches]\nuid = 3\n',
     r"^study.toml: columns.searches.uid: the value of 'uid' under \[searches\] must be"),
])
def test_errors_name_the_file_and_key(tmp_path, text, message):
    with pytest.raises(InputError, match=message) as info:
        read_study(write(tmp_path, HEAD + text + '[[experiment]]\nname = "a"\n'))
    assert "\n" not in str(info.value)


def test_an_experiments_key_is_named_with_the_experiment(tmp_path):
    with pytest.raises(InputError, match=r"^study.toml: experiment\[1\] \(a\).guardrails: "
                                         r"'ctr' is a primary"):
        read_study(write(tmp_path, HEAD + '[[experiment]]\nname = "a"\n'
                         'guardrails = ["ctr"]\nnon_inferiority = { ctr = 0.01 }\n'))


def _api_readout(logs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return onlineeval.readout(logs, experiment=EXP, **kw)


def _rows(ro) -> pd.DataFrame:
    return pd.DataFrame([{"metric": r.metric, "role": r.role, "estimate": r.result.estimate,
                          "p_value": r.result.p_value, "p_adjusted": r.result.p_adjusted,
                          "ni_p_value": r.ni_p_value, "verdict": r.verdict}
                         for r in ro.metrics])


@pytest.fixture(scope="module")
def sample_ab(sample_experiment_logs) -> Path:
    """The sample A/B log of experiment EXP alone (its users' rows: the same readout)."""
    return sample_experiment_logs(EXP) / "ab"


@pytest.fixture(scope="module")
def guarded_report(tmp_path_factory, sample_ab):
    d = tmp_path_factory.mktemp("guarded")
    head = HEAD.replace(str(SAMPLE / "ab"), str(sample_ab))
    path = write(d, head + 'n_resamples = 200\nguardrails = ["abandonment_rate"]\n'
                 'non_inferiority = { abandonment_rate = "2%" }\n'
                 f'[[experiment]]\nname = "{EXP}"\nprimary = ["ctr", "click_mrr"]\n')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_report(path)


def test_the_report_readout_uses_the_study_keys(guarded_report, sample_ab):
    (r,) = guarded_report.experiments
    ro = r.readout
    assert ro.family == ("ctr", "click_mrr")
    roles = {row.metric: row.role for row in ro.metrics}
    assert roles == {"ctr": "primary", "click_mrr": "primary",
                     "abandonment_rate": "guardrail"}
    guard = ro.rows("guardrail")[0]
    assert guard.margin == pytest.approx(0.02) and guard.margin_relative
    want = _api_readout(sample_ab, primary=["ctr", "click_mrr"],
                        guardrails=["abandonment_rate"],
                        non_inferiority={"abandonment_rate": "2%"}, secondary=())
    pd.testing.assert_frame_equal(_rows(ro), _rows(want))
    assert [d.verdict for d in ro.decisions] == [d.verdict for d in want.decisions]


def _renamed_copy(directory: Path, source: Path) -> Path:
    """The A/B log ``source`` with the user and variant columns renamed, as an export
    might."""
    out = directory / "export"
    out.mkdir()
    for table in ("searches", "results", "clicks"):
        df = pd.read_parquet(source / f"{table}.parquet")
        if table == "searches":
            df = df.rename(columns={"user_id": "uid", "variant": "arm"})
        df.to_parquet(out / f"{table}.parquet")
    return out


@pytest.mark.parametrize("form", ["inline", "file"])
def test_column_mapping_gives_the_canonical_numbers(tmp_path, form, sample_ab):
    export = _renamed_copy(tmp_path, sample_ab)
    mapping = '[searches]\nuid = "user_id"\narm = "variant"\n'
    if form == "file":
        (tmp_path / "mapping.toml").write_text(mapping, encoding="utf-8")
        columns = 'columns = "mapping.toml"\n'
    else:
        columns = '[columns.searches]\nuid = "user_id"\narm = "variant"\n'
    text = (f'ab_logs = "{export}"\nonline_metrics = ["ctr", "abandonment_rate"]\n'
            f'n_resamples = 200\n[[experiment]]\nname = "{EXP}"\n' + columns)
    path = write(tmp_path, text)
    study = read_study(path)
    if form == "file":
        assert tmp_path / "mapping.toml" in study_inputs(study)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = build_report(study)
    (r,) = report.experiments
    want = _api_readout(sample_ab, secondary=["abandonment_rate"])
    pd.testing.assert_frame_equal(_rows(r.readout), _rows(want))
    assert r.readout.units == want.units


def test_a_mapping_the_log_refuses_names_the_study_key(tmp_path, sample_ab):
    export = _renamed_copy(tmp_path, sample_ab)
    path = write(tmp_path, f'ab_logs = "{export}"\n[[experiment]]\nname = "{EXP}"\n'
                 '[experiment.columns.searches]\nuser = "user_id"\narm = "variant"\n')
    with pytest.raises(InputError) as info:
        build_report(path)
    text = str(info.value)
    assert "\n" not in text and text.startswith("study.toml: experiment 's200_vs_s100'")
    assert "columns.searches.user" in text
