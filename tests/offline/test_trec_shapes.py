"""Collections shaped like real TREC ones, through every entry point, against pytrec_eval.

The benchmark's generator (bench/offline_bench.py, ``generate_trec``) writes small GOV2-,
ClueWeb- and MS MARCO-shaped collections: deep judgment pools (most judged documents not
retrieved), long docnos, grades -1..4, qids that are not ``q<N>``, ragged query depths. Each
is scored by onlineeval from the paths, from the DataFrames of ``read_qrels``/``read_run``
and from pytrec_eval-style dicts, and every per-query value must equal pytrec_eval's
(trec_eval's own C code) on every measure the benchmark times.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from onlineeval.offline import evaluate, read_qrels, read_run
from onlineeval.offline.reading import fast_frames

# pytrec_eval-terrier is in the test extras; without it these comparisons cannot run
pytrec_eval = pytest.importorskip("pytrec_eval")

BENCH = Path(__file__).resolve().parents[2] / "bench" / "offline_bench.py"


@pytest.fixture(scope="module")
def bench(load_script):
    return load_script(BENCH)


@pytest.mark.parametrize("shape", ["gov2", "clueweb", "msmarco"])
def test_every_entry_point_agrees_with_pytrec_eval(tmp_path, bench, shape):
    qrels_path, run_path = tmp_path / "q.txt", tmp_path / "r.txt"
    bench.generate_trec(shape, 120, 60, 40, seed=7, qrels_path=qrels_path, run_path=run_path)
    qrels, run = bench.read_dicts(str(qrels_path), str(run_path))
    # the generator's promises: long docnos, grades -1..4, most judged docs not retrieved
    grades = {g for docs in qrels.values() for g in docs.values()}
    assert grades == {-1, 0, 1, 2, 3, 4}
    assert min(len(d) for docs in run.values() for d in docs) >= 16
    retrieved = sum(d in run.get(q, {}) for q, docs in qrels.items() for d in docs)
    assert retrieved < 0.5 * sum(len(docs) for docs in qrels.values())
    assert not any(q.startswith("q") for q in run)

    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(bench.PYTREC_NAMES.values())).evaluate(run)
    entries = {
        "paths": evaluate(qrels_path, run_path, bench.MEASURES, per_query=True),
        "frames": evaluate(read_qrels(qrels_path), read_run(run_path), bench.MEASURES,
                           per_query=True),
        "dicts": evaluate(qrels, run, bench.MEASURES, per_query=True),
    }
    for entry, ours in entries.items():
        assert sorted(ours["qid"]) == sorted(theirs), entry
        for row in ours.itertuples(index=False):
            for m in bench.MEASURES:
                want = theirs[row.qid][bench.PYTREC_NAMES[m].replace(".", "_")]
                got = getattr(row, m)
                assert math.isclose(got, want, rel_tol=0, abs_tol=1e-12), (entry, m, row.qid)


def test_clean_frames_and_dicts_take_the_fast_conversion(tmp_path, bench):
    # the fast conversion must be the one used on clean inputs (else the entry points are
    # slow), and must step aside on anything the slow path words an error for
    bench.generate_trec("gov2", 10, 20, 10, seed=3, qrels_path=tmp_path / "q",
                        run_path=tmp_path / "r")
    frame = read_run(tmp_path / "r")
    assert fast_frames.frame_columns(frame, "score", "run") is not None
    assert fast_frames.frame_columns(frame.astype({"docno": object}), "score", "run") is not None
    qrels, run = bench.read_dicts(str(tmp_path / "q"), str(tmp_path / "r"))
    assert fast_frames.frame_columns(run, "score", "run") is not None
    assert fast_frames.frame_columns(qrels, "rel", "qrels") is not None
    q = next(iter(run))
    bad_inputs = [
        {q: {"a b": 1.0}}, {q: {"": 1.0}}, {q: {"x": "1.5"}}, {q: {"x": None}},
        {q: {1: 1.0}}, {"#q": {"x": 1.0}}, {q: {"d\udcff": 1.0}}, {q: {"x": float("nan")}},
        pd.DataFrame({"qid": [q], "docno": ["a\tb"], "score": [1.0]}),
        pd.DataFrame({"qid": [1], "docno": ["a"], "score": [1.0]}),
        pd.DataFrame({"qid": [q], "docno": [None], "score": [1.0]}),
        pd.DataFrame({"qid": [q], "docno": ["a"], "score": ["1"]}),
    ]
    for bad in bad_inputs:
        assert fast_frames.frame_columns(bad, "score", "run") is None, bad
    assert fast_frames.frame_columns({q: {"x": 1.5}}, "rel", "qrels") is None   # not integral


@pytest.mark.parametrize("seed", range(3))
def test_fast_conversion_prepares_what_the_slow_path_prepares(tmp_path, bench, monkeypatch,
                                                              seed):
    from onlineeval.offline.ranking import prepare
    from onlineeval.offline.reading import sources

    bench.generate_trec("clueweb", 40, 30, 20, seed=seed, qrels_path=tmp_path / "q",
                        run_path=tmp_path / "r")
    qrels, run = bench.read_dicts(str(tmp_path / "q"), str(tmp_path / "r"))
    frames = read_qrels(tmp_path / "q"), read_run(tmp_path / "r")
    for kwargs in ({}, {"complete": True, "max_results": 7}, {"relevance_level": 2}):
        fast = [prepare(*inputs, keep_docnos=True, **kwargs) for inputs in ((qrels, run), frames)]
        with monkeypatch.context() as m:
            m.setattr(sources, "frame_columns", lambda *a, **k: None)
            slow = [prepare(*inputs, keep_docnos=True, **kwargs)
                    for inputs in ((qrels, run), frames)]
        for a, b in zip(fast, slow, strict=True):
            for name in ("qids", "offsets", "rel", "score", "docno", "rel_levels"):
                assert getattr(a, name).tolist() == getattr(b, name).tolist(), (name, kwargs)
