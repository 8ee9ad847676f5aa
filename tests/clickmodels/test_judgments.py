"""qrels from clicks: grading, what is left out, the file, and the simulated study."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.cli import main
from onlineeval.clickmodels import fit
from onlineeval.clickmodels.judgments import qrels_from_clicks
from onlineeval.errors import InputError, InvalidParameterError

SAMPLE = Path(__file__).parents[2] / "sample_logs"


def _fake_fit(sim, rel: dict, impressions: dict):
    pages = [(q, [d], (0,)) for (q, d) in rel]
    f = fit(sim.load(pages), "cascade")
    f.params.pair["attractiveness"] = np.array(
        [rel[(q, d)] for q, d in zip(f.pairs["query"], f.pairs["doc_id"], strict=True)])
    f.pairs["impressions"] = [impressions[(q, d)] for q, d in zip(f.pairs["query"],
                                                                    f.pairs["doc_id"],
                                                                    strict=True)]
    return f


def test_grades_are_the_number_of_thresholds_reached(sim):
    rel = {("q", "a"): 0.0, ("q", "b"): 0.1, ("q", "c"): 0.29, ("q", "d"): 0.3,
           ("q", "e"): 0.7, ("q", "f"): 1.0, ("r", "a"): 0.55}
    imp = dict.fromkeys(rel, 10) | {("r", "a"): 9}
    j = qrels_from_clicks(_fake_fit(sim, rel, imp))
    assert j.qrels.values.tolist() == [["q", "a", 0], ["q", "b", 1], ["q", "c", 1],
                                       ["q", "d", 2], ["q", "e", 4], ["q", "f", 4]]
    assert (j.pairs, j.judged, j.too_few_impressions) == (7, 6, 1)
    assert j.per_grade["pairs"].tolist() == [1, 2, 1, 0, 2]
    assert j.to_trec().splitlines()[1] == "q 0 b 1"
    j2 = qrels_from_clicks(_fake_fit(sim, rel, imp), grades="0.5", min_impressions=9)
    assert j2.qrels["rel"].tolist() == [0, 0, 0, 0, 1, 1, 1]


def test_bad_thresholds_and_untrec_ids_are_errors(sim):
    f = _fake_fit(sim, {("a query", "d"): 0.5}, {("a query", "d"): 50})
    with pytest.raises(InputError, match="query that a TREC qrels file cannot hold"):
        qrels_from_clicks(f)
    for bad in ("0.3,0.1", "0,0.5", "x", "0.5,1.5"):
        with pytest.raises(InvalidParameterError, match="grade"):
            qrels_from_clicks(f, bad)
    with pytest.raises(InvalidParameterError, match="min_impressions"):
        qrels_from_clicks(f, min_impressions=0)
    pages = [("q", ["d"], (1,))] * 20
    with pytest.raises(InvalidParameterError, match="no relevance"):
        qrels_from_clicks(fit(sim.load(pages), "ctr"))


@pytest.fixture(scope="module")
def click_qrels(tmp_path_factory):
    out = tmp_path_factory.mktemp("qrels") / "clicks.qrels"
    # (the CLI prints its warnings itself: 3655 zero-result pages left out)
    assert main(["qrels-from-clicks", str(SAMPLE / "ab"), "--query", "qid",
                 "--max-iter", "100", "-o", str(out)]) == 0
    return out


def test_click_qrels_order_the_rankers_like_the_true_judgments(click_qrels):
    """The bundled study: clicks of the simulator's DBN on the A/B pages of nine rankers.
    For every pair of rankers whose true NDCG@10 differs by more than 0.05, NDCG@10 on the
    click-derived qrels puts them in the same order."""
    true_q = onlineeval.read_qrels(SAMPLE / "qrels.txt")
    click_q = onlineeval.read_qrels(click_qrels)
    runs = sorted((SAMPLE / "runs").glob("*.run"))
    ndcg = {}
    for path in runs:
        run = onlineeval.read_run(path)
        ndcg[path.stem] = tuple(
            float(onlineeval.evaluate(q, run, ["ndcg_cut.10"])["ndcg_cut_10"].iloc[0])
            for q in (true_q, click_q))
    pairs = [(a, b) for a, b in itertools.combinations(ndcg, 2)
             if abs(ndcg[a][0] - ndcg[b][0]) > 0.05]
    assert len(pairs) >= 20
    for a, b in pairs:
        assert np.sign(ndcg[a][0] - ndcg[b][0]) == np.sign(ndcg[a][1] - ndcg[b][1]), (a, b)


def test_the_qrels_file_is_complete_and_readable(click_qrels):
    text = click_qrels.read_text()
    assert text.endswith("\n") and not list(click_qrels.parent.glob(".*.tmp"))
    q = onlineeval.read_qrels(click_qrels)
    assert set(q["rel"]) <= {0, 1, 2, 3, 4} and len(q) == len(text.splitlines())


def test_cli_refuses_inputs_and_keeps_old_output_on_error(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    pd.DataFrame({"search_id": ["s1"], "user_id": ["u"], "query": ["a b"]}).to_csv(
        logs / "searches.csv", index=False)
    pd.DataFrame({"search_id": ["s1"], "rank": [1], "doc_id": ["d"]}).to_csv(
        logs / "results.csv", index=False)
    pd.DataFrame({"search_id": ["s1"], "rank": [1]}).to_csv(logs / "clicks.csv", index=False)
    assert main(["qrels-from-clicks", str(logs), "-o", str(logs / "clicks.csv")]) == 2
    assert "would change the input" in capsys.readouterr().err
    out = tmp_path / "old.qrels"
    out.write_text("kept\n")
    assert main(["qrels-from-clicks", str(logs), "-o", str(out), "--min-impressions",
                 "1"]) == 2
    assert "TREC qrels file cannot hold" in capsys.readouterr().err
    assert out.read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "old.qrels"]
