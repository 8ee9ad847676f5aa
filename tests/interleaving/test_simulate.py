"""onlineeval.simulate.interleaving: the page builder, the study rebuild, the written logs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from onlineeval.errors import InputError, InvalidParameterError
from onlineeval.logs import load_logs
from onlineeval.simulate import Pair, make_collection, make_run, simulate
from onlineeval.simulate.interleaving import (
    interleaving_page_builder,
    simulate_interleaving_study,
    study_rankers,
    team_names,
)

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs"


def test_team_names():
    assert team_names("bm25", "neural") == ("bm25", "neural")
    assert team_names("s100", "s100") == ("s100/control", "s100/treatment")


def test_page_builder_serves_team_draft_of_the_top_k():
    collection = make_collection(np.random.default_rng(0), 5, 20)
    runs = {n: make_run(collection, n, sd, np.random.default_rng(i))
            for i, (n, sd) in enumerate((("a", 0.5), ("b", 2.0)))}
    build = interleaving_page_builder(runs, "a", "b", k=6)
    for qid in collection.qids:
        docs, teams = build("interleaved", qid, np.random.default_rng(1))
        assert len(docs) == 6 and set(teams) <= {"a", "b"}
        for team in ("a", "b"):
            top = runs[team].ranking(qid)[:6]
            own = [d for d, t in zip(docs, teams, strict=True) if t == team]
            assert own == [d for d in top if d in own]  # the team's own rank order
        assert runs["a"].ranking(qid)[0] in docs and runs["b"].ranking(qid)[0] in docs
    with pytest.raises(InvalidParameterError, match="unknown ranker"):
        interleaving_page_builder(runs, "a", "zzz")


def test_study_rebuild_matches_the_sample_study_run_files():
    manifest = json.loads((SAMPLE / "manifest.json").read_text())
    _, runs = study_rankers(manifest)
    for name, spec in manifest["rankers"].items():
        first = (SAMPLE / spec["run"]).read_text().splitlines()[:30]
        docs, scores = runs[name].docs, runs[name].scores
        qid = next(iter(docs))
        assert first == [f"{qid} Q0 {d} {r + 1} {s:.6f} {name}"
                         for r, (d, s) in enumerate(zip(docs[qid], scores[qid], strict=True))][:30]


def test_interleaving_study_on_a_small_study(tmp_path):
    study = tmp_path / "study"
    simulate(study, 3, users_per_experiment=40, pairs=[Pair("s200", "s040"), Pair("s100", "s100")],
             n_queries=12)
    out = simulate_interleaving_study(study, tmp_path / "il")
    assert [e["name"] for e in out["experiments"]] == ["s200_vs_s040", "s100_vs_s100"]
    assert out["experiments"][1]["team_a"] == "s100/control"
    logs = load_logs(tmp_path / "il")
    assert logs.report.excluded_total == 0
    teams = logs.con.execute(
        "SELECT s.experiment, list(DISTINCT r.team ORDER BY r.team) FROM searches s "
        "JOIN results r USING (search_id) GROUP BY 1 ORDER BY 1").fetchall()
    assert teams == [("s100_vs_s100", ["s100/control", "s100/treatment"]),
                     ("s200_vs_s040", ["s040", "s200"])]
    variants = logs.con.execute("SELECT DISTINCT variant FROM searches").fetchall()
    assert variants == [("interleaved",)]
    # deterministic
    again = simulate_interleaving_study(study, tmp_path / "il2")
    assert again == out


def test_changed_study_is_refused(tmp_path):
    study = tmp_path / "study"
    simulate(study, 4, users_per_experiment=5, pairs=[Pair("s200", "s040")], n_queries=5)
    run = study / "runs" / "s040.run"
    lines = run.read_text().splitlines()
    run.write_text("\n".join([lines[1], lines[0], *lines[2:]]) + "\n")
    with pytest.raises(InputError, match="differs from the study's run file"):
        simulate_interleaving_study(study, tmp_path / "il")
    shutil.rmtree(study)
    with pytest.raises(InputError, match="manifest.json does not exist"):
        simulate_interleaving_study(study, tmp_path / "il")


def test_the_command_writes_what_the_function_writes_and_errors_in_one_line(tmp_path, capsys):
    from onlineeval.cli import main

    study = tmp_path / "study"
    simulate(study, 5, users_per_experiment=20, pairs=[Pair("s200", "s040")], n_queries=6)
    assert main(["simulate-interleaving", str(study), str(tmp_path / "cli")]) == 0
    direct = simulate_interleaving_study(study, tmp_path / "api")
    assert f"{direct['logs']['searches']} searches" in capsys.readouterr().out
    for name in ("searches", "results", "clicks"):
        assert sorted(p.name for p in (tmp_path / "cli").glob(f"{name}*")) == \
            sorted(p.name for p in (tmp_path / "api").glob(f"{name}*"))
        cli_logs, api_logs = load_logs(tmp_path / "cli"), load_logs(tmp_path / "api")
        assert cli_logs.con.table(name).df().equals(api_logs.con.table(name).df())
    # a missing study is one line and exit 2, not a traceback
    assert main(["simulate-interleaving", str(tmp_path / "none"), str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "manifest.json does not exist" in err[0]
