"""The interleave and interleave-lists commands."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from onlineeval.cli import main
from onlineeval.interleaving import FIELDS


@pytest.fixture
def log_dir(tmp_path, hand_frames):
    s, r, c = hand_frames
    s.to_csv(tmp_path / "searches.csv", index=False)
    r.to_csv(tmp_path / "results.csv", index=False)
    c.to_csv(tmp_path / "clicks.csv", index=False)
    return tmp_path


def test_interleave_json_records_have_exactly_the_issue_fields(log_dir, capsys):
    assert main(["interleave", str(log_dir), "--format", "json", "--n-resamples", "100"]) == 0
    out, err = capsys.readouterr()
    recs = json.loads(out)
    assert [list(r) for r in recs] == [list(FIELDS)] * 4  # e1: x/y; e2: r/s, r/t, s/t
    e1 = next(r for r in recs if r["experiment"] == "e1")
    assert (e1["team_a"], e1["team_b"], e1["wins_a"], e1["wins_b"], e1["ties"]) == \
        ("x", "y", 3, 1, 1)
    assert e1["estimate"] == pytest.approx(0.2) and e1["sign_test_p"] == pytest.approx(0.625)
    assert e1["user_delta"] == pytest.approx(0.25)
    assert e1["test"] == "t test of per-user preference (users as units)"
    assert e1["winner"] is None
    assert "no team and were not credited" in err  # the uncredited click is reported


def test_interleave_options(log_dir, capsys):
    argv = ["interleave", str(log_dir), "--experiment", "e1", "--format", "json",
            "--n-resamples", "50"]
    assert main([*argv, "--per-query"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["estimate"] == pytest.approx(0.5 / 3)
    assert main([*argv, "--team-a", "y"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert (rec["team_a"], rec["wins_a"], rec["wins_b"]) == ("y", 1, 3)
    assert main([*argv, "--by", "day"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert [r["impressions"] for r in recs] == [6, 1] and "day" in recs[0]


def test_interleave_matrix_and_table(log_dir, capsys):
    assert main(["interleave", str(log_dir), "--experiment", "e2", "--matrix",
                 "--format", "json", "--n-resamples", "20"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["team"] for r in rows] == ["r", "s", "t"]
    assert rows[0]["r"] is None and rows[0]["s"] == 0.0
    assert main(["interleave", str(log_dir), "--n-resamples", "20"]) == 0
    assert "estimate" in capsys.readouterr().out


def test_interleave_errors_are_one_line(log_dir, capsys):
    assert main(["interleave", str(log_dir), "--experiment", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("onlineeval interleave: error:") and "'nope'" in err
    assert main(["interleave", str(log_dir), "--by", "user_id"]) == 2


def _write_run(path, ranking: dict[str, list[str]], tag: str) -> None:
    with open(path, "w") as fh:
        for q, docs in ranking.items():
            for i, d in enumerate(docs):
                fh.write(f"{q} Q0 {d} {i + 1} {10 - i}.5 {tag}\n")


def test_interleave_lists_writes_team_draft_lists(tmp_path, capsys):
    a = {"q1": ["a", "b", "c", "d"], "q2": ["x", "y"]}
    b = {"q1": ["c", "a", "e", "f"], "q3": ["z"]}
    _write_run(tmp_path / "bm25.run", a, "bm25")
    _write_run(tmp_path / "neural.run", b, "neural")
    argv = ["interleave-lists", str(tmp_path / "bm25.run"), str(tmp_path / "neural.run"),
            "--k", "3", "--seed", "4"]
    assert main(argv) == 0
    lines = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    assert all(len(f) == 7 and f[1] == "Q0" and f[5] == "interleaved" for f in lines)
    by_q: dict[str, list[list[str]]] = {}
    for f in lines:
        by_q.setdefault(f[0], []).append(f)
    assert sorted(by_q) == ["q1", "q2", "q3"]
    q1 = by_q["q1"]
    assert [f[3] for f in q1] == ["1", "2", "3"]
    assert [float(f[4]) for f in q1] == sorted((float(f[4]) for f in q1), reverse=True)
    docs, teams = [f[2] for f in q1], [f[6] for f in q1]
    assert {"a", "c"} <= set(docs) and set(teams) == {"bm25", "neural"}
    own = {"bm25": a["q1"], "neural": b["q1"]}
    for i, (d, t) in enumerate(zip(docs, teams, strict=True)):
        assert d == next(x for x in own[t] if x not in docs[:i])
    assert [(f[2], f[6]) for f in by_q["q2"]] == [("x", "bm25"), ("y", "bm25")]
    assert [(f[2], f[6]) for f in by_q["q3"]] == [("z", "neural")]
    out = tmp_path / "merged.run"
    assert main([*argv, "-o", str(out)]) == 0
    assert out.read_text().splitlines() == [" ".join(f) for f in lines]  # seeded


def test_interleave_lists_first_pick_varies_by_query_and_multileaves(tmp_path, capsys):
    a = {f"q{i}": ["a", "b"] for i in range(200)}
    b = {f"q{i}": ["b", "a"] for i in range(200)}
    c = {f"q{i}": ["c", "a"] for i in range(200)}
    for name, run in (("r1", a), ("r2", b), ("r3", c)):
        _write_run(tmp_path / f"{name}.run", run, name)
    assert main(["interleave-lists", str(tmp_path / "r1.run"), str(tmp_path / "r2.run"),
                 "--teams", "A,B"]) == 0
    firsts = Counter(ln.split()[6] for ln in capsys.readouterr().out.splitlines()
                     if ln.split()[3] == "1")
    assert 60 < firsts["A"] < 140
    assert main(["interleave-lists", *(str(tmp_path / f"r{i}.run") for i in (1, 2, 3)),
                 "--k", "3"]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    assert {r[6] for r in rows} == {"r1", "r2", "r3"}
    assert len(rows) == 600


def test_interleave_lists_errors(tmp_path, capsys):
    _write_run(tmp_path / "x.run", {"q": ["a"]}, "x")
    assert main(["interleave-lists", str(tmp_path / "x.run"), str(tmp_path / "x.run")]) == 2
    assert "--teams" in capsys.readouterr().err
    assert main(["interleave-lists", str(tmp_path / "x.run")]) == 2
    assert main(["interleave-lists", str(tmp_path / "x.run"), str(tmp_path / "x.run"),
                 "--teams", "a,b", "--k", "0"]) == 2


def test_interleave_lists_names_the_query_of_a_duplicate_document(tmp_path, capsys):
    (tmp_path / "a.run").write_text("q7 Q0 d1 1 2.0 a\nq7 Q0 d1 2 1.0 a\n")
    _write_run(tmp_path / "b.run", {"q7": ["d2"]}, "b")
    assert main(["interleave-lists", str(tmp_path / "a.run"), str(tmp_path / "b.run")]) == 2
    err = capsys.readouterr().err
    assert "query q7" in err and "a.run" in err and "twice" in err


def test_interleave_matrix_with_a_breakdown_gives_one_matrix_per_cell(log_dir, capsys):
    # e1 by day (hand-computed, see conftest): day 1 pages p1-p6 -> x wins 2, y 1, 1 tie:
    # Δ = 2.5 / 4 - 0.5 = 0.125; day 2 page p7 -> x wins: Δ = 0.5
    assert main(["interleave", str(log_dir), "--experiment", "e1", "--by", "day", "--matrix",
                 "--format", "json", "--n-resamples", "20"]) == 0
    rows = json.loads(capsys.readouterr().out)
    got = {(r["day"][:10], r["team"]): (r["x"], r["y"]) for r in rows}
    assert got == {("2024-03-01", "x"): (None, 0.125), ("2024-03-01", "y"): (-0.125, None),
                   ("2024-03-02", "x"): (None, 0.5), ("2024-03-02", "y"): (-0.5, None)}


def test_preference_matrix_refuses_a_pair_given_twice(logs):
    import warnings

    from onlineeval.errors import InvalidParameterError
    from onlineeval.interleaving import interleaving_readout, preference_matrix

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = interleaving_readout(logs, "e1", by="day", n_resamples=20)
    assert len(out) == 2
    with pytest.raises(InvalidParameterError, match="one row per pair of teams"):
        preference_matrix(out)


def test_interleave_lists_no_fill_stops_when_a_run_runs_out(tmp_path, capsys):
    # q1: a has 1 document, b has 4; q2: only in b. Filling lets b place its other documents
    # alone; Radlinski et al.'s rule stops as soon as a ranking has nothing left to place.
    _write_run(tmp_path / "a.run", {"q1": ["x"]}, "a")
    _write_run(tmp_path / "b.run", {"q1": ["y", "z", "w", "v"], "q2": ["p", "q"]}, "b")
    runs = [str(tmp_path / "a.run"), str(tmp_path / "b.run")]
    counts = {}
    for extra in ([], ["--no-fill"]):
        for seed in range(20):
            assert main(["interleave-lists", *runs, "--seed", str(seed), *extra]) == 0
            rows = [ln.split() for ln in capsys.readouterr().out.splitlines()]
            per_q = Counter(r[0] for r in rows)
            teams = Counter(r[6] for r in rows if r[0] == "q1")
            counts.setdefault(tuple(extra), []).append((per_q["q1"], per_q["q2"], teams))
    for n1, n2, teams in counts[()]:
        assert (n1, n2) == (5, 2) and teams == {"a": 1, "b": 4}
    for n1, n2, teams in counts[("--no-fill",)]:
        # a places x, after which a has nothing left: b may have had one pick before it
        assert n2 == 0 and teams["a"] == 1 and teams["b"] in (0, 1) and n1 == 1 + teams["b"]
    assert {t["b"] for _, _, t in counts[("--no-fill",)]} == {0, 1}  # the coin decides
    # three runs: the same flag reaches team-draft multileaving
    _write_run(tmp_path / "c.run", {"q1": ["u", "t"]}, "c")
    assert main(["interleave-lists", *runs, str(tmp_path / "c.run"), "--no-fill"]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    assert {r[0] for r in rows} == {"q1"} and Counter(r[6] for r in rows)["a"] == 1
