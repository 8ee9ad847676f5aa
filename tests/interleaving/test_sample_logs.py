"""sample_logs/interleaving is what its README's command generates, and reads out sensibly."""

from __future__ import annotations

import json
import re
import shlex
import warnings
from pathlib import Path

import duckdb

from onlineeval.cli import main
from onlineeval.interleaving import interleaving_readout

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs"
HERE = SAMPLE / "interleaving"


def _command() -> list[str]:
    text = (HERE / "README.md").read_text(encoding="utf-8")
    found = re.findall(r"^onlineeval simulate-interleaving .*$", text, flags=re.M)
    assert len(found) == 1, found
    return shlex.split(found[0])[2:]


def test_sample_interleaving_logs_regenerate_identically(tmp_path, capsys):
    argv = _command()
    assert argv[:2] == ["sample_logs", "sample_logs/interleaving"]
    argv[0], argv[1] = str(SAMPLE), str(tmp_path)
    assert main(["simulate-interleaving", *argv]) == 0
    capsys.readouterr()
    assert json.loads((tmp_path / "manifest.json").read_text()) == \
        json.loads((HERE / "manifest.json").read_text())
    con = duckdb.connect()
    for table in ("searches", "results", "clicks", "events"):
        a = con.read_parquet(str(HERE / f"{table}.parquet"))
        b = con.read_parquet(str(tmp_path / f"{table}.parquet"))
        assert a.columns == b.columns and a.types == b.types
        assert a.except_(b).aggregate("count(*)").fetchall() == [(0,)]
        assert b.except_(a).aggregate("count(*)").fetchall() == [(0,)]
        assert a.aggregate("count(*)").fetchall() == b.aggregate("count(*)").fetchall()


def test_same_pairs_as_the_ab_study_and_readme_counts():
    ab = json.loads((SAMPLE / "manifest.json").read_text())
    il = json.loads((HERE / "manifest.json").read_text())
    assert [(e["name"], e["control"], e["treatment"]) for e in ab["experiments"]] == \
        [(e["name"], e["ranker_a"], e["ranker_b"]) for e in il["experiments"]]
    text = (HERE / "README.md").read_text(encoding="utf-8")
    assert f"| `searches.parquet` | {il['logs']['searches']:,} |" in text
    assert f"| `results.parquet` | {il['logs']['results']:,} |" in text
    assert f"| `clicks.parquet` | {il['logs']['clicks']:,} |" in text
    assert f"| `events.parquet` | {sum(il['logs']['events'].values()):,} |" in text


def test_large_offline_margins_win_in_the_sample_logs():
    il = json.loads((HERE / "manifest.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = interleaving_readout(str(HERE), n_resamples=200).set_index("experiment")
    for e in il["experiments"]:
        row = out.loc[e["name"]]
        assert (row.team_a, row.team_b) == tuple(sorted((e["team_a"], e["team_b"])))
        margin = e["ndcg10_delta_b_minus_a"]
        if abs(margin) >= 0.06:
            better = e["team_b"] if margin > 0 else e["team_a"]
            assert row.winner == better, (e["name"], row.winner, better)
        if e["ranker_a"] == e["ranker_b"]:
            assert row.winner is None  # the A/A pair
