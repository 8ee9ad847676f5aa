"""``onlineeval report`` on a study whose experiments have logs but no runs (it used to stop
at ``experiment[1].control_run: required key is missing``); each experiment's readout is
the one onlineeval.readout gives."""

import json
import warnings
from pathlib import Path

import pytest

import onlineeval
from onlineeval.cli import main
from onlineeval.errors import InputError
from onlineeval.study import read_study

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs"
EXP = "s060_vs_s100"  # alphabetically the control's team (s060) comes first


@pytest.fixture(scope="module")
def study(tmp_path_factory, sample_experiment_logs):
    # the sample logs of the one experiment the study reads out (its users' rows)
    sample = sample_experiment_logs(EXP)
    path = tmp_path_factory.mktemp("study") / "study.toml"
    path.write_text(
        f'ab_logs = "{sample / "ab"}"\n'
        + f'interleaving_logs = "{sample / "interleaving"}"\n'
        'online_metrics = ["ctr", "abandonment_rate"]\nn_resamples = 200\n'
        f'[[experiment]]\nname = "{EXP}"\n', encoding="utf-8")
    return path


def test_study_without_runs_is_read(study):
    exp = read_study(study).experiments[0]
    assert not exp.has_runs and exp.qrels is None
    assert exp.control_team == "" and exp.treatment_team == ""


def test_one_run_without_the_other_is_refused(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(f'ab_logs = "{SAMPLE / "ab"}"\n[[experiment]]\nname = "x"\n'
                 'control_run = "c.run"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"treatment_run: required key is missing"):
        read_study(p)
    p.write_text('[[experiment]]\nname = "x"\n', encoding="utf-8")
    with pytest.raises(InputError, match="nothing to read out"):
        read_study(p)


def test_report_reuses_the_readout(study, tmp_path, capsys, sample_experiment_logs):
    out, js = tmp_path / "r.html", tmp_path / "r.json"
    assert main(["report", str(study), "-o", str(out), "--json", str(js)]) == 0
    capsys.readouterr()
    html = out.read_text(encoding="utf-8")
    assert "Verdict:" in html and "No experiment of the study has runs" in html
    data = json.loads(js.read_text(encoding="utf-8"))
    (e,) = data["experiments"]
    assert e["control_run"] is None and e["offline"] is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sample = sample_experiment_logs(EXP)
        ro = onlineeval.readout([sample / "ab", sample / "interleaving"], experiment=EXP,
                                primary=["ctr"], secondary=["abandonment_rate"],
                                n_resamples=200)
    assert e["readout"]["verdict"] == ro.verdict
    ctr = next(r for r in e["ab"] if r["metric"] == "ctr")
    assert ctr["estimate"] == pytest.approx(ro.rows("primary")[0].result.estimate, rel=1e-12)
    assert ctr["p_adjusted"] == pytest.approx(ro.rows("primary")[0].result.p_adjusted)
    # the interleaving side is the treatment's (s100), as in the readout
    (il,) = e["interleaving"]
    assert (il["team_a"], il["team_b"]) == ("s100", "s060")
    assert il["estimate"] == pytest.approx(ro.interleaving.result.estimate, rel=1e-12)
    table = {r["experiment"]: r for r in data["table"]}
    assert table[EXP]["interleaving"] == pytest.approx(il["estimate"])
