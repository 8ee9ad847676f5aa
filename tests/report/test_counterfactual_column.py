"""The study report's counterfactual column: where the study names the logging ranker's log,
each experiment with runs gets the counterfactual Δ (treatment run − control run clicks@k on
that log) beside its offline and online Δ, and the agreement table gets the counterfactual
rows. The numbers are onlineeval.counterfactual.compare's on the same inputs (which
tests/counterfactual check by hand and by coverage); a tiny hand-made study keeps it cheap
(the shared sample study does not name a logging log, so its build is unchanged)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.counterfactual import compare
from onlineeval.errors import InputError
from onlineeval.report import build_report, render_html, report_dict, study_inputs
from onlineeval.study import read_study

STUDY = """qrels = "qrels.txt"
ab_logs = "ab"
measures = ["P@1"]
online_metrics = ["ctr"]
counterfactual_logs = "logging"
counterfactual_options = { metric = "clicks@2", max_rank = 2 }
[[experiment]]
name = "x"
control_run = "c.run"
treatment_run = "t.run"
[[experiment]]
name = "y"
control_run = "t.run"
treatment_run = "c.run"
counterfactual_options = { estimator = "ips", metric = "clicks@2", max_rank = 2 }
"""


def _logging_log(directory):
    """40 pages of two queries, each showing its two documents in either order; clicks
    drawn from a position-based model (d1 and d3 the more attractive)."""
    rng = np.random.default_rng(7)
    attract = {"d1": 0.7, "d2": 0.2, "d3": 0.6, "d4": 0.3}
    exam = [1.0, 0.5]
    ts = pd.Timestamp("2025-12-01")
    searches, results, clicks = [], [], []
    for i in range(40):
        q, docs = ("q1", ["d1", "d2"]) if i % 2 == 0 else ("q2", ["d3", "d4"])
        if rng.random() < 0.5:
            docs = docs[::-1]
        sid = f"L{i}"
        searches.append({"search_id": sid, "user_id": f"u{i % 13}",
                         "ts": ts + pd.Timedelta(minutes=i), "query": q})
        for rank, d in enumerate(docs, start=1):
            results.append({"search_id": sid, "rank": rank, "doc_id": d})
            if rng.random() < exam[rank - 1] * attract[d]:
                clicks.append({"search_id": sid, "rank": rank,
                               "ts": ts + pd.Timedelta(minutes=i, seconds=5 + rank)})
    directory.mkdir()
    pd.DataFrame(searches).to_csv(directory / "searches.csv", index=False)
    pd.DataFrame(results).to_csv(directory / "results.csv", index=False)
    pd.DataFrame(clicks).to_csv(directory / "clicks.csv", index=False)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("cf-study")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq2 0 d4 0\n")
    (tmp_path / "c.run").write_text("q1 Q0 d2 1 2 c\nq1 Q0 d1 2 1 c\n"
                                    "q2 Q0 d4 1 2 c\nq2 Q0 d3 2 1 c\n")
    (tmp_path / "t.run").write_text("q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n"
                                    "q2 Q0 d3 1 2 t\nq2 Q0 d4 2 1 t\n")
    ab = tmp_path / "ab"
    ab.mkdir()
    ts = pd.Timestamp("2026-01-01")
    rows = []
    for e in ("x", "y"):
        for i in range(8):
            rows.append({"search_id": f"{e}{i}", "user_id": f"{e}u{i}",
                         "ts": ts + pd.Timedelta(hours=i), "query": ["q1", "q2"][i % 2],
                         "experiment": e, "variant": ["control", "treatment"][i // 4 % 2]})
    pd.DataFrame(rows).to_csv(ab / "searches.csv", index=False)
    # x: control 1 of 4 searches clicked, treatment 3 of 4; y: the other way round
    clicked = ["x0", "x4", "x5", "x6", "y0", "y1", "y2", "y4"]
    pd.DataFrame({"search_id": clicked, "rank": 1,
                  "ts": ts + pd.Timedelta(hours=9)}).to_csv(ab / "clicks.csv", index=False)
    _logging_log(tmp_path / "logging")
    p = tmp_path / "study.toml"
    p.write_text(STUDY)
    return p


@pytest.fixture(scope="module")
def report(study):
    """The tiny study's report, built once for the module."""
    return build_report(study)


def test_the_report_shows_compare_on_the_same_inputs(study, report):
    base = study.parent
    r = report
    logs = onlineeval.load_logs(base / "logging")
    want = {
        "x": compare(logs, str(base / "c.run"), str(base / "t.run"), estimator="snips",
                     query="query", metric="clicks@2", max_rank=2),
        "y": compare(logs, str(base / "t.run"), str(base / "c.run"), estimator="ips",
                     query="query", metric="clicks@2", max_rank=2),
    }
    table = r.table.set_index("experiment")
    for name, c in want.items():
        row = table.loc[name]
        assert (row["counterfactual"], row["counterfactual_ci_low"],
                row["counterfactual_ci_high"], row["counterfactual_p"]) == pytest.approx(
            (c.result.estimate, c.result.ci_low, c.result.ci_high, c.result.p_value),
            rel=1e-12)
        e = next(x for x in r.experiments if x.experiment.name == name)
        assert e.counterfactual.estimator == c.control.estimator
        assert e.readout.counterfactual is e.counterfactual  # the readout page shows it
    assert table.loc["x", "counterfactual"] != 0
    # the agreement table's third source: the same agreement() on the table's deltas
    res = r.agreements["ab:ctr"]
    direct = onlineeval.agreement(pd.DataFrame({
        "experiment": ["x", "y"], "offline_delta": table["offline:P_1"].to_numpy(),
        "online_delta": table["ab:ctr"].to_numpy(),
        "cf": [want["x"].result.estimate, want["y"].result.estimate]}), counterfactual="cf")
    for pair in ("counterfactual vs online", "offline vs counterfactual"):
        assert res.pairs[pair]["n"] == 2
        assert res.pairs[pair]["n_agree"] == direct.pairs[pair]["n_agree"]
        assert res.pairs[pair]["kendall_tau"] == pytest.approx(
            direct.pairs[pair]["kendall_tau"], nan_ok=True)
    html = render_html(r)
    assert "counterfactual Δ clicks@2" in html and "Offline Δ against counterfactual Δ" in html
    assert "counterfactual_p" in html
    d = report_dict(r)
    assert d["table"][0]["counterfactual"] == pytest.approx(want["x"].result.estimate,
                                                            rel=1e-12)
    assert "counterfactual vs online" in d["agreement"]["ab:ctr"]["pairs"]
    assert d["experiments"][1]["counterfactual"]["estimate"] == pytest.approx(
        want["y"].result.estimate, rel=1e-12)
    assert d["experiments"][1]["counterfactual"]["estimator"] == "ips"
    assert base / "logging" in study_inputs(read_study(study))


def test_study_checks_the_counterfactual_keys(study):
    text = study.read_text()
    bad = study.parent / "bad.toml"  # beside the study: its paths resolve
    bad.write_text(text.replace('counterfactual_options = { estimator = "ips"',
                                'counterfactual_options = { estimater = "ips"'))
    with pytest.raises(InputError, match=r"experiment\[2\] \(y\)\.counterfactual_options\."
                                         r"estimater: unknown option; did you mean "
                                         r"'estimator'\?"):
        read_study(bad)
    bad.write_text(text + '[[experiment]]\nname = "z"\nab_logs = "ab"\n'
                          'counterfactual_logs = "logging"\n')
    with pytest.raises(InputError, match=r"experiment\[3\] \(z\)\.counterfactual_logs: the "
                                         "counterfactual Δ is that of the runs"):
        read_study(bad)
    # a top-level logging log does not apply to an experiment without runs
    bad.write_text(text + '[[experiment]]\nname = "z"\nab_logs = "ab"\n')
    assert read_study(bad).experiments[2].counterfactual_logs is None


def test_the_terminal_summary_has_the_counterfactual_lines(report):
    from onlineeval.cli.report import summary_text

    r = report
    text = summary_text(r)
    res = r.agreements["ab:ctr"]
    for prediction, outcome, pair in (("counterfactual Δ clicks@2", "A/B ctr",
                                       "counterfactual vs online"),
                                      ("P_1", "counterfactual Δ clicks@2",
                                       "offline vs counterfactual")):
        s = res.pairs[pair]
        assert (f"  {prediction} vs {outcome}: sign agreement {s['n_agree']}/"
                f"{s['n_agree'] + s['n_disagree']}, Kendall tau-b "
                f"{s['kendall_tau']:+.2f}") in text.splitlines()
