"""Fits survive JSON exactly; splits are seeded, deterministic and keep units whole."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import onlineeval
from onlineeval.clickmodels import ClickModelFit, compare, fit, split_searches
from onlineeval.errors import InputError, InvalidParameterError, OutputError

DOCS = {"q1": ["a", "b", "c", "d"], "q2": ["x", "y", "z", "w"], "q3": ["m", "n", "o", "p"]}
PARAMS = {"alpha": {(q, d): 0.2 + 0.15 * i for q in DOCS for i, d in enumerate(DOCS[q])},
          "sigma": {(q, d): 0.7 - 0.1 * i for q in DOCS for i, d in enumerate(DOCS[q])},
          "gamma": 0.8}


@pytest.fixture(scope="module")
def pages(sim):
    return sim, sim.simulate_pages("dbn", PARAMS, DOCS, n_pages=2000, k=3, seed=4)


@pytest.mark.parametrize("model", ["ctr", "pbm", "cascade", "dcm", "ubm", "sdbn", "dbn"])
def test_json_round_trip_is_exact(pages, model, tmp_path):
    mod, p = pages
    logs = mod.load(p)
    f = fit(logs, model)
    path = tmp_path / "m.json"
    text = f.to_json(path)
    assert path.read_text() == text
    g = ClickModelFit.from_json(path)
    assert ClickModelFit.from_json(text).to_dict() == f.to_dict() == g.to_dict()
    for k, v in f.params.pair.items():
        assert np.array_equal(g.params.pair[k], v)
    for k, v in f.params.rank.items():
        assert np.array_equal(g.params.rank[k], v, equal_nan=True)
    pd.testing.assert_frame_equal(g.position_bias, f.position_bias)
    test = mod.load(mod.simulate_pages("dbn", PARAMS, DOCS, n_pages=300, k=3, seed=9))
    a, b = f.perplexity(test), g.perplexity(test)
    assert a.perplexity == b.perplexity and a.log_likelihood == b.log_likelihood


def test_bad_model_files_are_one_line_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "onlineeval-clickmodel", "version": 1}')
    with pytest.raises(InputError, match="not an onlineeval click model file"):
        ClickModelFit.from_json(bad)
    bad.write_text("{nope")
    with pytest.raises(InputError, match=r"bad.json:1:2: not JSON"):
        ClickModelFit.from_json(bad)
    with pytest.raises(InputError, match="cannot read"):
        ClickModelFit.from_json(tmp_path / "missing.json")


def _units(logs, view, col):
    return set(logs.con.sql(f'SELECT DISTINCT "{col}" FROM "{view}"').fetchnumpy()[col])


def test_split_is_seeded_deterministic_and_keeps_units_whole(pages):
    mod, p = pages
    logs = mod.load(p)
    train, test = split_searches(logs, 0.25, "session", seed=1)
    a = _units(logs, test, "search_id")
    assert len(a) == 500 and not a & _units(logs, train, "search_id")
    assert len(a | _units(logs, train, "search_id")) == 2000
    assert _units(logs, split_searches(logs, 0.25, "session", seed=1)[1], "search_id") == a
    assert _units(logs, split_searches(logs, 0.25, "session", seed=2)[1], "search_id") != a
    train, test = split_searches(logs, 0.34, "query", seed=0)
    assert len(_units(logs, test, "query")) == 1
    assert not _units(logs, test, "query") & _units(logs, train, "query")


def test_split_by_session_keeps_sessions_whole():
    searches = pd.DataFrame({"search_id": [f"s{i}" for i in range(40)], "user_id": "u",
                             "session_id": [f"x{i // 4}" for i in range(40)], "query": "q"})
    logs = onlineeval.load_logs(searches=searches, clicks=pd.DataFrame(
        {"search_id": ["s0"], "rank": [1], "doc_id": ["a"]}))
    train, test = split_searches(logs, 0.3, "session", seed=0)
    s_test = _units(logs, test, "session_id")
    assert len(s_test) == 3 and not s_test & _units(logs, train, "session_id")


def test_split_arguments_are_checked(pages):
    mod, p = pages
    logs = mod.load(p)
    for share in (0.0, 1.0, -1, "x"):
        with pytest.raises(InvalidParameterError, match="test_share"):
            split_searches(logs, share)
    with pytest.raises(InvalidParameterError, match="split by"):
        split_searches(logs, 0.2, "user")
    with pytest.raises(InvalidParameterError, match="leaves no test"):
        split_searches(logs, 0.01, "query")


def test_compare_scores_each_model_on_the_same_held_out_pages(pages):
    mod, p = pages
    logs = mod.load(p)
    c = compare(logs, "pbm,dbn", test_share=0.25, seed=3)
    assert list(c.table["model"]) == ["pbm", "dbn"]
    assert set(c.table["test_pages"]) == {500} and set(c.table["train_pages"]) == {1500}
    # the same numbers as fitting on the training view and scoring the test view by hand
    train, test = split_searches(logs, 0.25, "session", seed=3)
    ev = fit(logs, "dbn", searches=train).perplexity(logs, searches=test)
    row = c.table.set_index("model").loc["dbn"]
    assert row["perplexity"] == ev.perplexity and row["log_likelihood"] == ev.log_likelihood
    # data simulated from a DBN: the DBN predicts the held-out clicks better than PBM
    assert row["log_likelihood"] > c.table.set_index("model").loc["pbm", "log_likelihood"]
    json.dumps(c.table.to_dict())


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(pages, tmp_path,
                                                                    monkeypatch):
    from onlineeval import atomic

    mod, p = pages
    fitted = fit(mod.load(p), "pbm")
    out = tmp_path / "m.json"
    out.write_text("old\n")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fitted.to_json(out)
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]
    monkeypatch.undo()
    with pytest.raises(OutputError, match="directory"):
        fitted.to_json(tmp_path)


def test_cli_refuses_an_output_over_its_input_before_fitting(tmp_path, capsys):
    from onlineeval.cli import main

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "searches.csv").write_text("search_id,user_id,ts,query\n")
    for argv in (["clickmodel", "fit", str(logs), "--model", "pbm", "-o", str(logs)],
                 ["qrels-from-clicks", str(logs), "--model", "pbm", "-o",
                  str(logs / "searches.csv")]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "input" in err
    assert (logs / "searches.csv").read_text() == "search_id,user_id,ts,query\n"
