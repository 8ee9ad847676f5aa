"""The whole simulated study: determinism from the seed, the files, the manifest, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import pytrec_eval

from onlineeval.cli import main
from onlineeval.errors import InvalidParameterError, OutputError
from onlineeval.simulate import Pair, simulate

RANKERS = {"best": 0.3, "mid": 1.0, "worst": 2.5}
PAIRS = (Pair("worst", "best"), Pair("mid", "mid"))
SMALL = {"users_per_experiment": 150, "rankers": RANKERS, "pairs": PAIRS,
         "n_queries": 25, "docs_per_query": 15}


def _table(path: Path) -> list[tuple]:
    return duckdb.connect().read_parquet(str(path)).fetchall()


def _all_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix != ".parquet"}


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("study")
    return out, simulate(out, 42, **SMALL)


def test_same_seed_same_study(study, tmp_path: Path) -> None:
    out, manifest = study
    again = simulate(tmp_path / "again", 42, **SMALL)
    assert again == manifest
    assert _all_files(out) == _all_files(tmp_path / "again")
    for name in ("searches", "results", "clicks"):
        assert _table(out / "ab" / f"{name}.parquet") == \
            _table(tmp_path / "again" / "ab" / f"{name}.parquet")
    other = simulate(tmp_path / "other", 43, **SMALL)
    assert other["rankers"] != manifest["rankers"]
    assert _table(out / "ab" / "clicks.parquet") != \
        _table(tmp_path / "other" / "ab" / "clicks.parquet")


def test_manifest_ndcg_matches_trec_eval_on_the_files(study) -> None:
    out, manifest = study
    qrels: dict[str, dict[str, int]] = {}
    for line in (out / "qrels.txt").read_text().splitlines():
        qid, _, doc, rel = line.split(" ")
        qrels.setdefault(qid, {})[doc] = int(rel)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"})
    for name, info in manifest["rankers"].items():
        run: dict[str, dict[str, float]] = {}
        for line in (out / info["run"]).read_text().splitlines():
            qid, _, doc, _, score, tag = line.split(" ")
            assert tag == name
            run.setdefault(qid, {})[doc] = float(score)
        per = evaluator.evaluate(run)
        mean = sum(v["ndcg_cut_10"] for v in per.values()) / len(per)
        assert info["ndcg10"] == pytest.approx(mean, abs=1e-12)
        assert info["noise_sd"] == RANKERS[name]
    assert manifest["rankers"]["best"]["ndcg10"] > manifest["rankers"]["mid"]["ndcg10"] > \
        manifest["rankers"]["worst"]["ndcg10"]
    exp = {e["name"]: e for e in manifest["experiments"]}
    assert set(exp) == {"worst_vs_best", "mid_vs_mid"}
    assert exp["mid_vs_mid"]["ndcg10_delta"] == 0.0
    assert exp["worst_vs_best"]["ndcg10_delta"] == pytest.approx(
        manifest["rankers"]["best"]["ndcg10"] - manifest["rankers"]["worst"]["ndcg10"])
    assert manifest["seed"] == 42 and manifest["click_model"]["model"] == "dbn-cascade"


def test_logs_load_cleanly_and_counts_match_manifest(study) -> None:
    import onlineeval

    out, manifest = study
    logs = onlineeval.load_logs(out / "ab")
    assert logs.report.excluded_total == 0
    assert logs.has("searches", "ts") and logs.has("clicks", "dwell_ms")
    assert logs.has("searches", "session_id") and not logs.has("results", "team")
    rows = logs.con.execute(
        "SELECT experiment, variant, count(DISTINCT user_id), count(*) FROM searches "
        "GROUP BY ALL ORDER BY ALL").fetchall()
    for e in manifest["experiments"]:
        mine = [r for r in rows if r[0] == e["name"]]
        assert {r[1]: r[2] for r in mine} == e["users"]
        assert sum(r[3] for r in mine) == e["searches"]
        assert sum(e["users"].values()) == 150
    total = logs.con.execute("SELECT count(*) FROM clicks").fetchall()[0][0]
    assert total == manifest["logs"]["clicks"]
    users = logs.con.execute(
        "SELECT count(DISTINCT experiment) FROM searches GROUP BY user_id "
        "ORDER BY 1 DESC LIMIT 1").fetchall()[0][0]
    assert users == 1  # each user belongs to one experiment


def test_refuses_to_overwrite_and_validates(study, tmp_path: Path) -> None:
    out, _ = study
    with pytest.raises(OutputError, match="already holds a study"):
        simulate(out, 42, **SMALL)
    with pytest.raises(InvalidParameterError, match="unknown ranker 'nope'"):
        simulate(tmp_path / "x", 1, rankers=RANKERS, pairs=(Pair("best", "nope"),))
    with pytest.raises(InvalidParameterError, match="duplicate"):
        simulate(tmp_path / "x", 1, rankers=RANKERS, pairs=PAIRS + (Pair("mid", "mid"),))
    with pytest.raises(InvalidParameterError, match="seed"):
        simulate(tmp_path / "x", -1)


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    argv = ["simulate", str(tmp_path / "s"), "--seed", "7", "--users", "40", "--queries", "10",
            "--rankers", "a=0.2,b=2", "--pairs", "b:a,a:a", "--format", "json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["experiment"] for r in rows] == ["b_vs_a", "a_vs_a"]
    assert rows[0]["ndcg10_delta"] > 0 and rows[1]["ndcg10_delta"] == 0
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["seed"] == 7 and set(manifest["rankers"]) == {"a", "b"}
    assert main(argv) == 2
    assert "--force" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0
    capsys.readouterr()
    assert main(["simulate", str(tmp_path / "t"), "--seed", "1", "--pairs", "a-b"]) == 2
    assert "CONTROL:TREATMENT" in capsys.readouterr().err
    assert main(["simulate", str(tmp_path / "t"), "--seed", "1", "--rankers", "a=x"]) == 2


def test_top_level_api_name_is_callable_in_any_import_order(tmp_path: Path) -> None:
    import onlineeval
    import onlineeval.simulate as package

    m = onlineeval.simulate(tmp_path / "a", 3, **SMALL)
    assert m == package.simulate(tmp_path / "b", 3, **SMALL)
    assert callable(package)


def test_cli_pre_period(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["simulate", str(tmp_path / "p"), "--seed", "2", "--users", "60", "--queries",
                 "10", "--pairs", "s100:s040", "--pre-days", "7"]) == 0
    capsys.readouterr()
    manifest = json.loads((tmp_path / "p" / "manifest.json").read_text())
    assert manifest["traffic"]["pre_days"] == 7.0
    lo, hi = duckdb.connect().read_parquet(str(tmp_path / "p" / "ab" / "searches.parquet")) \
        .aggregate("min(ts), max(ts)").fetchall()[0]
    assert str(lo) < "2026-01-05" <= str(hi)
    assert str(lo) >= "2025-12-29"


def test_build_world_and_simulate_pairs_reproduce_the_study(study) -> None:
    from onlineeval.simulate import build_world, simulate_pairs

    out, manifest = study
    collection, runs = build_world(42, RANKERS, SMALL["n_queries"], SMALL["docs_per_query"])
    assert list(runs) == list(RANKERS)
    tables, facts = simulate_pairs(collection, runs, PAIRS, 42,
                                   users_per_experiment=SMALL["users_per_experiment"])
    assert [f["name"] for f in facts] == [e["name"] for e in manifest["experiments"]]
    assert [f["users"] for f in facts] == [e["users"] for e in manifest["experiments"]]
    clicks = tables.clicks.sort_values("search_id", kind="stable")
    on_disk = _table(out / "ab" / "clicks.parquet")
    assert [(r.search_id, r.rank, r.doc_id, r.ts.to_pydatetime(), r.dwell_ms)
            for r in clicks.itertuples()] == on_disk
    # another stream and another page builder: fresh draws, same users and pairs
    seen = []

    def factory(runs_, pair, k):
        seen.append((pair.name, k))
        return lambda variant, qid, rng: (runs_[pair.control].ranking(qid)[:k], ["A"] * k)

    other, _ = simulate_pairs(collection, runs, PAIRS, 42, users_per_experiment=20, stream=1,
                              page_builder_factory=factory,
                              assign_factory=lambda pair: (lambda user: "interleaved"))
    assert seen == [("worst_vs_best", 10), ("mid_vs_mid", 10)]
    assert set(other.searches["variant"]) == {"interleaved"}
    assert set(other.results["team"]) == {"A"}


def test_progress_shows_on_a_tty_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tty_stderr,
        capsys: pytest.CaptureFixture) -> None:
    tty = tty_stderr()
    simulate(tmp_path / "tty", 1, **{**SMALL, "users_per_experiment": 30})
    assert "simulating users: 60/60" in "".join(tty.parts)
    monkeypatch.undo()
    simulate(tmp_path / "quiet", 1, **{**SMALL, "users_per_experiment": 30})
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", ["a/b", "..", ".hidden", "with space", ""])
def test_ranker_names_must_be_file_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidParameterError, match="run file name"):
        simulate(tmp_path / "x", 1, rankers={name: 1.0, "ok": 0.5}, pairs=(Pair("ok", "ok"),),
                 users_per_experiment=5)
    assert not (tmp_path / "x").exists()
