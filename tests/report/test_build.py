"""Orientation of online deltas in the report table: positive always favours the treatment."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pandas as pd
import pytest

from onlineeval.errors import OnlineEvalError
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
    offline = pd.DataFrame([{"measure": "map", "estimate": 0.1, "ci_low": 0.05,
                             "ci_high": 0.15, "p_value": 0.005, "p_adjusted": 0.01,
                             "correction": "holm"}])
    ab = pd.DataFrame([
        # abandonment fell by 0.02 (an improvement), CTR rose by 0.03
        {"metric": "abandonment_rate", "estimate": -0.02, "ci_low": -0.035,
         "ci_high": -0.005, "p_value": 0.01, "p_adjusted": 0.02, "correction": "holm"},
        {"metric": "ctr", "estimate": 0.03, "ci_low": 0.01, "ci_high": 0.05,
         "p_value": 0.015, "p_adjusted": 0.03, "correction": "holm"},
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
    assert row["offline:map_p"] == 0.01 and row["ab:ctr_p"] == 0.03


def test_row_reads_the_p_value_where_no_correction_applies():
    # interleaving applies no correction: its p_adjusted is null and the row takes p_value
    exp = Experiment("e", Path("q"), Path("c.run"), Path("t.run"))
    offline = pd.DataFrame([{"measure": "map", "estimate": 0.1, "ci_low": 0.05,
                             "ci_high": 0.15, "p_value": 0.005, "p_adjusted": 0.01,
                             "correction": "holm"}])
    il = pd.DataFrame([{"estimate": 0.12, "ci_low": 0.1, "ci_high": 0.14, "p_value": 0.004,
                        "p_adjusted": float("nan"), "correction": None}])
    row = _row(ExperimentReadout(exp, offline, interleaving=il))
    assert (row["interleaving"], row["interleaving_ci_low"], row["interleaving_ci_high"],
            row["interleaving_p"]) == (0.12, 0.1, 0.14, 0.004)


@pytest.fixture
def interleaving_study(tmp_path):
    """A study of one experiment x (treatment run t, control run c) with interleaving logs
    only; the log also holds experiment 'solo' whose page names a single team."""
    from onlineeval.study import read_study

    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d3 1\n")
    (tmp_path / "c.run").write_text("q1 Q0 d2 1 2 c\nq1 Q0 d1 2 1 c\nq2 Q0 d3 1 1 c\n")
    (tmp_path / "t.run").write_text("q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq2 Q0 d3 1 1 t\n")
    il = tmp_path / "il"
    il.mkdir()
    ts = pd.Timestamp("2026-01-01")
    # x: s1 q1 t-c, click rank 1 -> t wins; s2 q1 c-t, click rank 1 -> c wins;
    #    s3 q2 t-c, click rank 1 -> t wins.  solo: s4 q1, both results by t (single team)
    pd.DataFrame({
        "search_id": ["s1", "s2", "s3", "s4"], "user_id": ["u1", "u2", "u3", "u4"],
        "ts": [ts + pd.Timedelta(minutes=i) for i in range(4)],
        "query": ["q1", "q1", "q2", "q1"], "experiment": ["x", "x", "x", "solo"],
    }).to_csv(il / "searches.csv", index=False)
    pd.DataFrame({
        "search_id": [s for s in ("s1", "s2", "s3", "s4") for _ in range(2)],
        "rank": [1, 2] * 4, "doc_id": ["d1", "d2", "d2", "d1", "d3", "d4", "d1", "d2"],
        "team": ["t", "c", "c", "t", "t", "c", "t", "t"],
    }).to_csv(il / "results.csv", index=False)
    pd.DataFrame({"search_id": ["s1", "s2", "s3", "s4"], "rank": [1, 1, 1, 1],
                  "ts": [ts + pd.Timedelta(minutes=i, seconds=5) for i in range(4)]}
                 ).to_csv(il / "clicks.csv", index=False)
    p = tmp_path / "study.toml"
    p.write_text('qrels = "qrels.txt"\ninterleaving_logs = "il"\nmeasures = ["P@1"]\n'
                 'n_resamples = 100\n[[experiment]]\nname = "x"\ncontrol_run = "c.run"\n'
                 'treatment_run = "t.run"\n')
    return read_study(p)


def test_interleaving_page_outcomes_computed_once_and_warnings_captured(
        interleaving_study, monkeypatch, recwarn, capsys):
    import dataclasses

    from onlineeval.interleaving import outcomes
    from onlineeval.report import build_report

    # A study file always names the experiment, and within one named experiment no page is
    # left out for naming a single team (a single-team experiment is an error instead). The
    # warning arises when the readout reads every experiment of the log: an Experiment built
    # in code without an experiment filter.
    (exp,) = interleaving_study.experiments
    study = dataclasses.replace(
        interleaving_study,
        experiments=(dataclasses.replace(exp, interleaving_experiment=None),))
    calls = []
    real = outcomes.page_outcomes

    def counting(logs, experiment=None, **window):
        calls.append(experiment)
        return real(logs, experiment, **window)

    monkeypatch.setattr(outcomes, "page_outcomes", counting)
    r = build_report(study)
    assert calls == [None]  # the log's page outcomes are built once for the experiment
    assert [str(w.message) for w in recwarn] == []  # nothing escaped the report's capture
    assert capsys.readouterr().err == ""
    e = r.experiments[0]
    single = [n for n in e.notes if "name only one team" in n]
    assert single == ["interleaving: 1 interleaved pages belong to experiments whose pages "
                      "name only one team and were left out of the readout (check the team "
                      "names and the experiment column)"]
    il = e.interleaving.iloc[0]
    assert (il["team_a"], il["team_b"], il["wins_a"], il["wins_b"], il["ties"]) == \
        ("t", "c", 2, 1, 0)
    assert il["estimate"] == pytest.approx((2 + 0 / 2) / 3 - 0.5)
    # per-query Δ_q of t against c: q1 one win each -> 0; q2 t's win -> +0.5. Offline Δ P@1
    # (t − c): q1 1 − 0 = +1, q2 1 − 1 = 0. Each query has a zero on one side: no direction
    w = e.within["interleaving Δ_q"]
    assert (w["n"], w["n_agree"], w["n_disagree"], w["n_zero"]) == (2, 0, 0, 2)


def test_study_file_experiment_reads_its_page_outcomes_once(interleaving_study, monkeypatch,
                                                           recwarn):
    from onlineeval.interleaving import outcomes
    from onlineeval.report.build import _experiment, _LogCache

    calls = []
    real = outcomes.page_outcomes
    monkeypatch.setattr(outcomes, "page_outcomes",
                        lambda logs, experiment=None, **window: calls.append(experiment)
                        or real(logs, experiment, **window))
    (exp,) = interleaving_study.experiments
    r = _experiment(interleaving_study, exp, _LogCache())
    assert calls == ["x"]
    # within experiment x no page is left out: no warning, no note about one
    assert [str(w.message) for w in recwarn] == []
    assert r.notes == ["no A/B logs in the study for this experiment"]
    il = r.interleaving.iloc[0]
    assert (il["wins_a"], il["wins_b"], il["impressions"]) == (2, 1, 3)
    assert r.within["interleaving Δ_q"]["n"] == 2


@pytest.mark.parametrize("role, corrupt, needle", [
    # a score that is not a number, and a qid a run file could never hold (a '#' line is a
    # comment to trec_eval): the error names the run by its study key and path
    ("treatment_run", lambda df: df.assign(score=df["score"].astype(object).where(
        df.index != 1, "high")), r"column 'score' row 1: 'high' is not a number"),
    ("control_run", lambda df: df.assign(qid=df["qid"].where(df.index != 2, "#q2")),
     r"column 'qid' row 2: '#q2' starts with '#'"),
])
def test_bad_dataframe_run_in_a_report_names_the_run(interleaving_study, monkeypatch, role,
                                                     corrupt, needle):
    # a study names its runs by path; scoring hands each run to per_query_scores with a
    # label, which is how a DataFrame run is named in errors. The run of `role` reaches the
    # scorer as a bad DataFrame here (read from its file, then corrupted).
    from onlineeval.offline import read_run
    from onlineeval.report import build_report

    compare = importlib.import_module("onlineeval.offline.compare")  # not the function

    (exp,) = interleaving_study.experiments
    target = getattr(exp, role)
    labels = {}
    real = compare.per_query_scores

    def scorer(qrels, run, measures, *, run_label="run"):
        labels[Path(run).name] = run_label
        if run == target:
            run = corrupt(read_run(run))
        return real(qrels, run, measures, run_label=run_label)

    monkeypatch.setattr(compare, "per_query_scores", scorer)
    with pytest.raises(OnlineEvalError) as err:
        build_report(interleaving_study)
    message = str(err.value)
    label = f"{role} {str(target)!r}"
    assert labels[target.name] == label
    assert message.startswith("study.toml: experiment 'x': offline comparison: ")
    assert re.search(re.escape(label) + " " + needle, message), message
    if role == "treatment_run":    # the control run was scored first, with its own label
        assert labels["c.run"] == f"control_run {str(exp.control_run)!r}"


def test_study_runs_are_scored_with_their_labels(interleaving_study, monkeypatch):
    # the clean study: both runs are labelled by their key and path, and the scores are
    # what per_query_scores gives for the run files themselves
    from onlineeval.report import build_report

    compare = importlib.import_module("onlineeval.offline.compare")  # not the function

    (exp,) = interleaving_study.experiments
    seen = []
    real = compare.per_query_scores

    def scorer(qrels, run, measures, *, run_label="run"):
        seen.append((Path(run).name, run_label))
        return real(qrels, run, measures, run_label=run_label)

    monkeypatch.setattr(compare, "per_query_scores", scorer)
    r = build_report(interleaving_study)
    assert seen == [("c.run", f"control_run {str(exp.control_run)!r}"),
                    ("t.run", f"treatment_run {str(exp.treatment_run)!r}")]
    # P@1 per query by hand from the fixture: c ranks d2 first for q1 (not relevant) and d3
    # for q2 (relevant); t ranks d1 (relevant) and d3 (relevant)
    pq = r.experiments[0].per_query.set_index("qid")
    assert pq["control"].to_dict() == {"q1": 0.0, "q2": 1.0}
    assert pq["treatment"].to_dict() == {"q1": 1.0, "q2": 1.0}


def test_study_qrels_file_is_read_as_trec_eval_reads_it(interleaving_study):
    # " #q3 0 d1 1" is a judgment of query '#q3' for trec_eval (get_qrels.c tests '#' in the
    # first column only) and evaluate() reads it so from the file; the report scores the
    # study's qrels file the same way. Scored as trec_eval -c, the judged query that neither
    # run answers is a 0 on both sides; its delta is 0.
    from onlineeval.report import build_report

    (exp,) = interleaving_study.experiments
    with open(exp.qrels, "a") as fh:
        fh.write(" #q3 0 d1 1\n")
    r = build_report(interleaving_study)
    pq = r.experiments[0].per_query.set_index("qid")
    assert pq.loc["#q3"].tolist() == [0.0, 0.0, 0.0]
    assert pq["control"].to_dict() == {"#q3": 0.0, "q1": 0.0, "q2": 1.0}
    assert pq["treatment"].to_dict() == {"#q3": 0.0, "q1": 1.0, "q2": 1.0}
    off = r.experiments[0].offline.iloc[0]
    assert off["estimate"] == pytest.approx((0 + 1 + 0) / 3)   # mean per-query P@1 delta


def test_an_unknown_team_gets_the_study_file_hint(interleaving_study):
    # the readout refuses team_a with a typed error (UnknownTeamError), and the report adds
    # how to name the teams in the study file
    import dataclasses

    from onlineeval.report import build_report

    (exp,) = interleaving_study.experiments
    study = dataclasses.replace(
        interleaving_study, experiments=(dataclasses.replace(exp, treatment_team="zz"),))
    with pytest.raises(OnlineEvalError) as err:
        build_report(study)
    message = str(err.value)
    assert message.startswith("study.toml: experiment 'x': interleaving readout of ")
    assert "team_a 'zz' is not a team of the interleaved pages; teams: c, t" in message
    assert message.endswith("— the teams are the logs' results.team names: set control_team "
                            "/ treatment_team of this experiment in the study file")


def test_other_interleaving_errors_get_no_team_hint(interleaving_study):
    # a log without results.team mentions "team" in its message; the old report matched the
    # message's text and told the user to rename the teams, which cannot help here
    from onlineeval.report import build_report

    (exp,) = interleaving_study.experiments
    results = exp.interleaving_logs / "results.csv"
    pd.read_csv(results).drop(columns="team").to_csv(results, index=False)
    with pytest.raises(OnlineEvalError) as err:
        build_report(interleaving_study)
    message = str(err.value)
    assert "interleaving needs results.team" in message
    assert "control_team / treatment_team" not in message
