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
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from onlineeval.errors import InputError
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


def _hostile_dict_pairs():
    """(qrels, run) dicts a user may hand over: value types of every kind, non-ASCII and
    U+00A0 docnos (U+00A0 is not ASCII whitespace: a TREC field may hold it), empty inner
    dicts, keys that are equal after str()."""
    qrels = {"q1": {"a": 2, "b": 0, "é": 1, "d\u00a0x": -1, "z": True},
             "q2": {"a": 1.0, "c": np.int8(3), "d": np.uint64(0)},
             "q3": {}, "q4": {"x": 1}}
    run = {"q1": {"a": 1.5, "b": 1.5, "é": np.float32(0.25), "d\u00a0x": 2, "z": True,
                  "\U0001f600": -3.0},
           "q2": {"a": 0.5, "c": 0.5, "d": float("inf"), "e": -0.0},
           "q3": {"a": 1.0}, "q5": {}}
    return qrels, run


@pytest.mark.filterwarnings("ignore:1 of 3 judged queries in qrels have no results")
def test_hostile_but_valid_dicts_take_the_fast_path_and_prepare_as_the_slow_one(monkeypatch):
    from onlineeval.offline.ranking import prepare
    from onlineeval.offline.reading import sources

    qrels, run = _hostile_dict_pairs()
    fast_q = fast_frames.frame_columns(qrels, "rel", "qrels")
    fast_r = fast_frames.frame_columns(run, "score", "run")
    assert fast_q is not None and fast_r is not None
    assert fast_q.value.dtype == np.int64 and fast_q.value.tolist() == [2, 0, 1, -1, 1, 1, 3, 0, 1]
    assert fast_r.value.tolist() == [1.5, 1.5, 0.25, 2.0, 1.0, -3.0, 0.5, 0.5, float("inf"),
                                     -0.0, 1.0]
    assert str(fast_r.value[9]) == "-0.0"
    # integral floats among int grades: read as float64, then checked and cast
    assert fast_frames.frame_columns({"q": {"a": 1, "b": 2.0}}, "rel", "qrels").value.tolist() \
        == [1, 2]
    for kwargs in ({}, {"complete": True}, {"relevance_level": 2}):
        fast = prepare(qrels, run, keep_docnos=True, **kwargs)
        with monkeypatch.context() as m:
            m.setattr(sources, "frame_columns", lambda *a, **k: None)
            slow = prepare(qrels, run, keep_docnos=True, **kwargs)
        for name in ("qids", "offsets", "rel", "score", "docno", "rel_levels"):
            assert getattr(fast, name).tolist() == getattr(slow, name).tolist(), (name, kwargs)
    # by hand: q1 ranks d\u00a0x (2), b and a (1.5: ties by docno descending), z (1),
    # é (0.25), the emoji (-3)
    ranked = prepare(qrels, run, keep_docnos=True)
    q1 = slice(int(ranked.offsets[0]), int(ranked.offsets[1]))
    assert ranked.docno[q1].tolist() == ["d\u00a0x", "b", "a", "z", "é", "\U0001f600"]


@pytest.mark.parametrize("value", ["1.5", b"1", None, float("nan"), 10**400, 1 + 2j, [1.0]],
                         ids=["str", "bytes", "None", "nan", "10^400", "complex", "list"])
def test_dict_values_that_are_not_plain_numbers_go_to_the_slow_path(value):
    # numpy would parse "1.5" and b"1" and read None as NaN: the fast path must step aside
    # (without an exception of its own) and leave reading or refusing them to the slow path
    for name in ("rel", "score"):
        assert fast_frames.frame_columns({"q": {"a": 1.0, "b": value}}, name, "x") is None


@pytest.mark.parametrize("piece", [1, 2, 3, 1 << 14])
def test_docno_text_check_finds_a_bad_docno_in_any_piece(monkeypatch, piece):
    # the check joins the docnos piece by piece: a bad one in the last piece still counts
    monkeypatch.setattr(fast_frames, "_TEXT_PIECE", piece)
    good = ["GX000-00-0000000", "é", "d\u00a0x", "\U0001f600", "x"]
    assert fast_frames._text_list_ok(good)
    for bad in ["a b", "a\tb", "a\x00", "a\x0bb", "a\x0c", "a\r", "a\n", "d\udcff", 7]:
        assert not fast_frames._text_list_ok([*good, bad]), (piece, bad)
        assert not fast_frames._text_list_ok([bad, *good]), (piece, bad)


def test_decimal_scores_are_read_by_the_slow_path_as_their_float():
    # a sum of Decimals and floats fails, so the fast path steps aside; the slow path reads
    # float(Decimal), the same number as the float written beside it
    run = {"q": {"a": Decimal("0.5"), "b": 0.25, "c": Decimal("0.75")}}
    assert fast_frames.frame_columns(run, "score", "run") is None
    as_floats = {"q": {"a": 0.5, "b": 0.25, "c": 0.75}}
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    assert evaluate(qrels, run, ["map"], per_query=True).equals(
        evaluate(qrels, as_floats, ["map"], per_query=True))


def test_keys_equal_after_str_are_one_query_or_document_as_in_a_file():
    # a dict cannot hold a key twice, but 1 and "1" are one qid (or docno) once written to a
    # TREC file; onlineeval reads them as the file would: one query, and a document judged
    # or retrieved twice is refused exactly as the duplicated line of a file is
    out = evaluate({1: {"a": 1}, "1": {"b": 1}}, {"1": {"a": 2.0, "b": 1.0}}, ["num_rel"],
                   per_query=True)
    assert out["qid"].tolist() == ["1"] and out["num_rel"].tolist() == [2]
    with pytest.raises(InputError, match="document '1' is listed 2 times for query 'q'"):
        evaluate({"q": {"1": 1}}, {"q": {1: 2.0, "1": 1.0}}, ["map"])
    with pytest.raises(InputError, match="document '1' is judged 2 times for query 'q'"):
        evaluate({"q": {1: 1, "1": 0}}, {"q": {"1": 1.0}}, ["map"])


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
