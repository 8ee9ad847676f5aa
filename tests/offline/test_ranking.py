"""prepare(): trec_eval's ranking, relevance lookup, duplicates and unknown queries."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from onlineeval.errors import InputError
from onlineeval.offline import hugepages, ranking
from onlineeval.offline.ranking import (
    NONPOOL,
    UNJUDGED,
    docno_keys,
    general_sort,
    grouped_sort,
    prepare,
)

# the fixtures include judged queries the run lacks on purpose (trec_eval skips them);
# tests/offline/test_query_overlap.py checks the warning that says so
pytestmark = pytest.mark.filterwarnings("ignore::onlineeval.offline.SkippedQueriesWarning")


def frame(rows, value):
    return pd.DataFrame(rows, columns=["qid", "docno", value])


@pytest.fixture(params=["arrow"])
def string_backend(request):
    """The string backend of prepare: pyarrow (a required dependency; the numpy fallback for a
    missing pyarrow is gone)."""
    return request.param


def test_ties_broken_by_docno_descending_in_byte_order(string_backend):
    # trec_eval: score descending, equal scores by strcmp(docno) descending
    run = frame([("q", "a", 1.0), ("q", "b", 1.0), ("q", "10", 1.0), ("q", "9", 1.0),
                 ("q", "top", 2.0), ("q", "B", 1.0)], "score")
    qrels = frame([("q", "a", 1)], "rel")
    r = prepare(qrels, run, keep_docnos=True)
    assert r.docno.tolist() == ["top", "b", "a", "B", "9", "10"]


def test_rank_column_is_ignored(tmp_path, string_backend):
    path = tmp_path / "r.run"
    path.write_text("q Q0 low 1 0.1 t\nq Q0 high 2 0.9 t\n")
    r = prepare({"q": {"high": 1}}, path, keep_docnos=True)
    assert r.docno.tolist() == ["high", "low"]
    assert r.rel.tolist() == [1, NONPOOL]


def test_relevance_codes_and_counts(string_backend):
    qrels = {"q": {"d1": 2, "d2": 0, "d3": -1, "d4": 1}}
    run = {"q": {"d1": 4.0, "d2": 3.0, "d3": 2.0, "d5": 1.0}}
    r = prepare(qrels, run)
    assert r.rel.tolist() == [2, 0, UNJUDGED, NONPOOL]
    assert r.rel_levels.tolist() == [[1, 1, 1]]  # the -1 judgment counts nowhere
    assert r.num_rel.tolist() == [2] and r.num_rel_ret.tolist() == [1]
    r2 = prepare(qrels, run, relevance_level=2)
    assert r2.num_rel.tolist() == [1] and r2.num_rel_ret.tolist() == [1]


def test_query_order_is_byte_order_and_unjudged_queries_are_ignored(string_backend):
    qrels = {"9": {"a": 1}, "10": {"a": 1}, "x": {"a": 1}}
    run = {"10": {"a": 1.0}, "9": {"a": 1.0}, "nojudgments": {"a": 1.0, "b": 2.0},
           "other": {"a": 1.0}}
    r = prepare(qrels, run)
    assert r.qids.tolist() == ["10", "9"]  # "x" has no results: skipped without -c
    assert r.ignored_run_queries == 2
    assert r.n_qrels_queries == 3


def test_complete_gives_missing_queries_the_stand_in_ranking(string_backend):
    qrels = {"a": {"d": 1}, "b": {"d": 1, "e": 0}, "c": {"d": 1}}
    run = {"a": {"d": 1.0, "z": 0.5}, "c": {"z": 1.0}}
    r = prepare(qrels, run, complete=True, keep_docnos=True)
    assert r.qids.tolist() == ["a", "b", "c"]
    assert r.missing.tolist() == [False, True, False]
    assert r.query_rels(1).tolist() == [NONPOOL]
    assert r.docno.tolist() == ["d", "z", ranking.MISSING_DOCNO, "z"]


def test_max_results_truncates_after_ranking(string_backend):
    run = {"q": {"a": 1.0, "b": 3.0, "c": 2.0}}
    r = prepare({"q": {"a": 1}}, run, max_results=2, keep_docnos=True)
    assert r.docno.tolist() == ["b", "c"] and r.num_ret.tolist() == [2]


def test_duplicate_document_in_run_is_an_error(tmp_path, string_backend):
    path = tmp_path / "dup.run"
    path.write_text("q Q0 a 1 3.0 t\nq Q0 b 2 2.0 t\nq Q0 a 3 1.0 t\n")
    with pytest.raises(InputError, match=r"document 'a' is listed 2 times for query 'q'"):
        prepare({"q": {"a": 1}}, path)
    # trec_eval only checks the documents it keeps: -M2 drops the second 'a'
    r = prepare({"q": {"a": 1}}, path, max_results=2)
    assert r.num_ret.tolist() == [2]


def test_duplicate_in_unjudged_query_is_ignored(string_backend):
    run = pd.DataFrame({"qid": ["q", "z", "z"], "docno": ["a", "b", "b"],
                        "score": [1.0, 2.0, 1.0]})
    r = prepare({"q": {"a": 1}}, run)  # query z is not judged, so trec_eval never sees it
    assert r.qids.tolist() == ["q"]


def test_duplicate_judgment_is_an_error(string_backend):
    qrels = frame([("q", "a", 1), ("q", "a", 0)], "rel")
    with pytest.raises(InputError, match="judged 2 times for query 'q'"):
        prepare(qrels, {"q": {"a": 1.0}})


def test_no_common_query_is_an_error(string_backend):
    with pytest.raises(InputError, match="no query has both judgments"):
        prepare({"q1": {"a": 1}}, {"q2": {"a": 1.0}})


def test_segment_helpers():
    r = prepare({"a": {"x": 1, "y": 1}, "b": {"x": 1}},
                {"a": {"x": 3.0, "z": 2.0, "y": 1.0}, "b": {"z": 1.0}})
    assert r.pos.tolist() == [0, 1, 2, 0]
    assert r.cum_rel.tolist() == [1, 1, 2, 0]
    assert r.at_cutoff(r.cum_rel, 2).tolist() == [1, 0]
    assert r.at_cutoff(r.cum_rel, np.array([0, 5])).tolist() == [0, 0]
    assert r.first_pos(r.is_rel).tolist() == [0, -1]
    assert r.segment_sum(np.array([0.5, 0.25, 0.125, 1.0])).tolist() == [0.875, 1.0]


@pytest.mark.parametrize("sizes", [[7, 7, 7], [5, 0, 3, 9], [40] + [1] * 60])
def test_rank_order_paths_agree_with_a_plain_sort(sizes):
    # equal-size, padded-grid and lexsort paths of _rank_order against sorted()
    rng = np.random.default_rng(len(sizes))
    qi = np.repeat(np.arange(len(sizes)), sizes).astype(np.int32)
    rng.shuffle(qi)
    n = len(qi)
    score = rng.integers(0, 4, n).astype(float)         # many ties
    drank = rng.permutation(n).astype(np.int32)          # distinct docno ranks
    by_key = np.argsort(qi.astype(np.int64) * n + drank, kind="stable")
    order = general_sort._rank_order(qi, score, drank, len(sizes), by_key)
    expected = sorted(range(n), key=lambda i: (qi[i], -score[i], -drank[i]))
    assert order.tolist() == expected


@pytest.mark.parametrize("layout", ["blocks", "blocks_unordered", "unequal", "interleaved",
                                    "split"])
def test_key_order_matches_a_global_sort(layout):
    rng = np.random.default_rng(7)
    if layout == "blocks":
        qi = np.repeat(np.arange(4), 6)
    elif layout == "blocks_unordered":
        qi = np.repeat(np.array([2, 0, 3, 1]), 6)
    elif layout == "unequal":
        qi = np.repeat(np.arange(3), [2, 6, 4])
    elif layout == "interleaved":
        qi = np.tile(np.arange(4), 6)
    else:  # query 0 in two blocks of the same length
        qi = np.repeat(np.array([0, 1, 0, 2]), 6)
    qi = qi.astype(np.int32)
    drank = rng.permutation(len(qi)).astype(np.int32)
    got = general_sort._key_order(qi, drank)
    if layout in ("blocks", "blocks_unordered"):
        expected = np.argsort(qi.astype(np.int64) * len(qi) + drank, kind="stable")
        assert got.tolist() == expected.tolist()
    else:
        assert got is None


def test_duplicate_judgment_of_an_unevaluated_query_is_ignored(string_backend):
    # trec_eval only looks at the judgments of queries it evaluates
    qrels = frame([("q", "a", 1), ("z", "b", 1), ("z", "b", 0)], "rel")
    r = prepare(qrels, {"q": {"a": 1.0}})
    assert r.qids.tolist() == ["q"]
    with pytest.raises(InputError, match="judged 2 times for query 'z'"):
        prepare(qrels, {"q": {"a": 1.0}}, complete=True)


def test_absurd_grade_is_a_clear_error():
    with pytest.raises(InputError, match="highest relevance grade is 1000000000"):
        prepare({"q": {"a": 10**9}}, {"q": {"a": 1.0}})


# --------------------------------------------------------------------------- fast path
# prepare() takes a shortcut when each query's rows form one block (any lengths) without
# duplicate documents (grouped_sort: hashed docno keys, sorts of padded query rows). These
# tests check that shortcut against a plain Python ranking written from trec_eval's rules, on
# data built to stress it: ties, close scores, ragged blocks, docnos of many lengths (and
# non-ASCII ones), and a weak hash that makes every docno of a query collide.

def _assert_is_reference(r, qrels_rows, run_rows):
    qids, counts, rel, score, docno = _reference(qrels_rows, run_rows)
    assert r.qids.tolist() == qids
    assert np.diff(r.offsets).tolist() == counts
    assert r.rel.tolist() == rel
    assert r.score.tolist() == score
    assert r.docno.tolist() == docno


def _reference(qrels_rows, run_rows):
    """trec_eval's ranking by hand: qids in byte order, score desc, docno desc (bytes)."""
    judged = {}
    for q, d, g in qrels_rows:
        judged[(q, d)] = g
    by_q = {}
    for q, d, s in run_rows:
        by_q.setdefault(q, []).append((d, s))
    qids = sorted({q for q, _, _ in qrels_rows} & set(by_q), key=lambda x: x.encode())
    rel, score, docno, counts = [], [], [], []
    for q in qids:
        docs = sorted(by_q[q], key=lambda ds: (ds[1], ds[0].encode()), reverse=True)
        counts.append(len(docs))
        for d, s in docs:
            g = judged.get((q, d))
            rel.append(NONPOOL if g is None else UNJUDGED if g < 0 else g)
            score.append(s)
            docno.append(d)
    return qids, counts, rel, score, docno


_NAMES = ["d{}", "doc-{:07d}", "clueweb12-0000tw-00-{:05d}", "Dé{}", "x{}" + "y" * 40]


def _random_blocks(seed, n_q, width, close_scores=False, ragged=False):
    """Random qrels and run rows, each query's run rows in one block (ragged: of 1..width
    rows, docnos of several lengths, some non-ASCII, one longer than the hashed keys take)."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" for i in rng.permutation(n_q)]          # blocks not in byte order
    run_rows, qrels_rows = [], []
    for q in qids:
        n_docs = int(rng.integers(1, width + 1)) if ragged else width
        nums = rng.choice(4 * width, size=n_docs, replace=False)
        docs = [_NAMES[int(i) % (len(_NAMES) - 1)].format(i) if ragged else f"d{i}"
                for i in nums]
        scores = rng.integers(0, 4, size=n_docs) / 4.0      # many ties
        if close_scores:   # distinct scores closer than the packed key can tell apart
            scores = 1.0 + rng.integers(0, 3, size=n_docs) * 2.0 ** -50
        scores = np.where(rng.random(n_docs) < 0.1, -scores, scores)   # -0.0 and negatives
        for d, s in zip(docs, scores, strict=True):
            run_rows.append((q, d, float(s)))
            if rng.random() < 0.5:
                qrels_rows.append((q, d, int(rng.integers(-1, 4))))
        qrels_rows.append((q, f"never{q}", 1))               # judged, not retrieved
    qrels_rows.append(("judged_only", "x", 2))               # a query without results
    return qrels_rows, run_rows


def _weak_hash(words):
    # every docno of a query collides with many others: the confirmation must catch it
    return (words[:, 0] & np.uint64(3)).astype(np.uint64)


@pytest.mark.parametrize("close_scores", [False, True])
@pytest.mark.parametrize("hashing", ["real", "colliding"])
@pytest.mark.parametrize("ragged", [False, True])
def test_fast_path_matches_a_plain_ranking(close_scores, hashing, ragged, monkeypatch,
                                           string_backend):
    results = []
    real = grouped_sort.rank_groups
    monkeypatch.setattr(grouped_sort, "rank_groups",
                        lambda *a: results.append(real(*a)) or results[-1])
    if hashing == "colliding":
        monkeypatch.setattr(docno_keys, "_hash_words", _weak_hash)
    qrels_rows, run_rows = _random_blocks(7, n_q=40, width=25, close_scores=close_scores,
                                          ragged=ragged)
    r = prepare(frame(qrels_rows, "rel"), frame(run_rows, "score"), keep_docnos=True)
    assert results, "the fast path was not tried"
    # it ranks the run itself, unless every docno collides (then the general path does)
    assert (results[0] is None) == (hashing == "colliding")
    _assert_is_reference(r, qrels_rows, run_rows)


def test_docnos_too_long_to_hash_take_the_general_path(monkeypatch):
    qrels_rows, run_rows = _random_blocks(8, n_q=10, width=6)
    long = "x" * (docno_keys.MAX_BYTES + 1)
    run_rows = [(q, d if i else long, s) for i, (q, d, s) in enumerate(run_rows)]
    qrels_rows.append((run_rows[0][0], long, 3))
    results = []
    real = grouped_sort.rank_groups
    monkeypatch.setattr(grouped_sort, "rank_groups",
                        lambda *a: results.append(real(*a)) or results[-1])
    r = prepare(frame(qrels_rows, "rel"), frame(run_rows, "score"), keep_docnos=True)
    assert results == [None]
    _assert_is_reference(r, qrels_rows, run_rows)


def test_fast_path_agrees_with_general_path_with_flags(monkeypatch):
    qrels_rows, run_rows = _random_blocks(11, n_q=30, width=12)
    qrels, run = frame(qrels_rows, "rel"), frame(run_rows, "score")
    for kwargs in ({"max_results": 5}, {"complete": True}, {"relevance_level": 2}):
        fast = prepare(qrels, run, keep_docnos=True, **kwargs)
        with monkeypatch.context() as m:
            m.setattr(grouped_sort, "rank_groups", lambda *a: None)
            slow = prepare(qrels, run, keep_docnos=True, **kwargs)
        assert fast.qids.tolist() == slow.qids.tolist()
        assert fast.offsets.tolist() == slow.offsets.tolist()
        assert fast.rel.tolist() == slow.rel.tolist()
        assert fast.score.tolist() == slow.score.tolist()
        assert fast.docno.tolist() == slow.docno.tolist()
        assert fast.rel_levels.tolist() == slow.rel_levels.tolist()


def test_fast_path_layout_misses_fall_back():
    # a duplicate document inside an equal-length block must still be reported
    run = frame([("q", "a", 1.0), ("q", "a", 2.0), ("p", "b", 1.0), ("p", "c", 1.0)], "score")
    with pytest.raises(InputError, match="listed 2 times"):
        prepare(frame([("q", "a", 1), ("p", "b", 1)], "rel"), run)
    # a query split over two blocks is ranked as one query
    run = frame([("q", "a", 1.0), ("p", "b", 1.0), ("q", "c", 3.0), ("p", "d", 0.5)], "score")
    r = prepare(frame([("q", "a", 1), ("p", "b", 1)], "rel"), run, keep_docnos=True)
    assert r.docno.tolist() == ["b", "d", "c", "a"]


# --------------------------------------------------------------------------- fast path pieces
# rank_groups works through the blocks in pieces of about _CHUNK_CELLS cells, two threads at a
# time; a tiny piece size forces many pieces (and, with close scores, pieces that need the
# exact fallback next to pieces that do not).

@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 17])
@pytest.mark.parametrize("close_scores", [False, True])
@pytest.mark.parametrize("ragged", [False, True])
def test_fast_path_in_pieces_matches_a_plain_ranking(chunk, close_scores, ragged, monkeypatch):
    monkeypatch.setattr(grouped_sort, "_CHUNK_CELLS", chunk)
    calls = []
    real = grouped_sort.rank_groups
    monkeypatch.setattr(grouped_sort, "rank_groups",
                        lambda *a: calls.append(real(*a)) or calls[-1])
    qrels_rows, run_rows = _random_blocks(5, n_q=23, width=9, close_scores=close_scores,
                                          ragged=ragged)
    # queries of the run without judgments are dropped before the fast path
    run_rows += [("unjudged_q", f"d{i}", float(i % 3)) for i in range(9)]
    r = prepare(frame(qrels_rows, "rel"), frame(run_rows, "score"), keep_docnos=True)
    assert calls and calls[0] is not None and r.ignored_run_queries == 1
    _assert_is_reference(r, qrels_rows, run_rows)


def test_fast_path_in_pieces_from_files_matches_the_general_path(tmp_path, monkeypatch):
    # file inputs: dictionary-encoded columns from the pyarrow reader, blocks not in qid
    # order, ties, unjudged documents, negative grades, judged-only queries
    qrels_rows, run_rows = _random_blocks(17, n_q=31, width=11)
    qrels_path = tmp_path / "q.txt"
    run_path = tmp_path / "r.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows))
    run_path.write_text("".join(f"{q} Q0 {d} {i} {s!r} tag\n"
                                for i, (q, d, s) in enumerate(run_rows)))
    monkeypatch.setattr(grouped_sort, "_CHUNK_CELLS", 20)
    fast = prepare(qrels_path, run_path, keep_docnos=True)
    monkeypatch.setattr(grouped_sort, "rank_groups", lambda *a: None)
    slow = prepare(qrels_path, run_path, keep_docnos=True)
    for name in ("qids", "offsets", "rel", "score", "docno", "rel_levels"):
        assert getattr(fast, name).tolist() == getattr(slow, name).tolist(), name


def test_duplicate_judgment_with_a_regular_run_is_still_an_error(monkeypatch):
    # the duplicate-judgment check is separate from the fast path; its error must come out
    # all the same, and an unevaluated query's duplicates must not
    monkeypatch.setattr(grouped_sort, "_CHUNK_CELLS", 2)
    run = frame([("a", "x", 1.0), ("a", "y", 2.0), ("b", "x", 1.0), ("b", "z", 0.5)],
                "score")
    qrels = frame([("a", "x", 1), ("b", "z", 0), ("b", "z", 1), ("c", "w", 1), ("c", "w", 0)],
                  "rel")
    with pytest.raises(InputError, match="'z' is judged 2 times for query 'b'"):
        prepare(qrels, run)
    ok = prepare(qrels[qrels["qid"] != "b"], run)
    assert ok.qids.tolist() == ["a"]
    with pytest.raises(InputError, match="'w' is judged 2 times for query 'c'"):
        prepare(qrels[qrels["qid"] != "b"], run, complete=True)


def test_no_hugepage_advice_restores_the_setting():
    setter = np._core.multiarray._set_madvise_hugepage
    before = setter(True)
    try:
        with hugepages.no_hugepage_advice():
            assert setter(False) is False      # switched off inside
        assert setter(True) is True            # and back on afterwards
    finally:
        setter(before)


def _thp_flag() -> int:
    return hugepages._prctl()(hugepages._PR_GET_THP_DISABLE, 0, 0, 0, 0)


@pytest.mark.parametrize("before", [0, 1])
def test_no_hugepage_advice_sets_and_restores_the_thp_flag(before):
    # this project runs on Linux (CI and the benchmark machine): the prctl path must exist
    assert sys.platform.startswith("linux") and hugepages._prctl() is not None
    original = _thp_flag()
    assert hugepages._set_thp_disabled(bool(before)) == bool(original)
    try:
        with hugepages.no_hugepage_advice():
            assert _thp_flag() == 1                  # switched off inside
            with hugepages.no_hugepage_advice():       # nested (evaluate -> prepare)
                assert _thp_flag() == 1
            assert _thp_flag() == 1                  # the inner block restored "off"
        assert _thp_flag() == before                 # and the caller's setting afterwards
    finally:
        hugepages._set_thp_disabled(bool(original))
    assert _thp_flag() == original


def test_overlapping_blocks_in_two_threads_restore_the_setting():
    # thread A enters, B enters, A leaves, B leaves: a per-block save/restore would leave
    # the switches off for good (B saved A's "off"); the first in saves, the last out restores
    import threading

    original = _thp_flag()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def a():
        with hugepages.no_hugepage_advice():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b():
        a_in.wait(5)
        with hugepages.no_hugepage_advice():
            b_in.set()
            a_out.wait(5)
            seen["inside_after_a_left"] = _thp_flag()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"inside_after_a_left": 1}      # still off while B's block runs
    assert _thp_flag() == original                  # the caller's setting afterwards
    assert hugepages._advice_depth == 0


def _small_pair(tmp_path):
    rng = np.random.default_rng(7)
    qrels, run = [], []
    for q in range(30):
        for d in rng.choice(60, 25, replace=False):
            qrels.append(f"q{q} 0 d{d} {rng.integers(-1, 4)}")
        for r, d in enumerate(rng.choice(80, 40, replace=False)):
            run.append(f"q{q} Q0 d{d} {r} {rng.integers(0, 10) / 4} tag")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "run.txt").write_text("\n".join(run) + "\n")
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


def test_thp_switch_fallback_when_prctl_is_missing_or_fails(tmp_path, monkeypatch):
    from onlineeval.offline import evaluate

    qrels, run = _small_pair(tmp_path)
    measures = ["map", "ndcg_cut_10", "P_10", "recall_100", "recip_rank", "ndcg", "bpref"]
    with_switch = evaluate(qrels, run, measures, per_query=True)
    calls = []

    def failing(option, *args):
        calls.append(option)
        return -1                                    # e.g. a kernel without the option

    for fake in (None, failing):
        monkeypatch.setattr(hugepages, "_prctl", lambda fake=fake: fake)
        assert hugepages._set_thp_disabled(True) is None
        with hugepages.no_hugepage_advice():           # still runs, numpy's switch still used
            pass
        without = evaluate(qrels, run, measures, per_query=True)
        pd.testing.assert_frame_equal(without, with_switch)
    # a failed query is never followed by a set (nothing to restore)
    assert calls and set(calls) == {hugepages._PR_GET_THP_DISABLE}


@pytest.mark.parametrize("grades, dtype", [((-1, 0, 1, 3), np.int8),
                                           ((-1000, -1, 0, 2, 300), np.int16),
                                           ((0, 127), np.int8), ((0, 128), np.int16),
                                           ((0, 70000), np.int32)])
def test_rel_codes_in_the_narrowest_type_on_both_paths(grades, dtype, monkeypatch):
    # Ranked.rel is int8 unless a grade needs more; very negative grades must still become
    # UNJUDGED (not wrap around when narrowed)
    rng = np.random.default_rng(len(grades))
    qrels_rows, run_rows = _random_blocks(3, n_q=15, width=8)
    qrels_rows = [(q, d, int(rng.choice(grades))) for q, d, _ in qrels_rows]
    qrels, run = frame(qrels_rows, "rel"), frame(run_rows, "score")
    fast = prepare(qrels, run, keep_docnos=True)
    monkeypatch.setattr(grouped_sort, "rank_groups", lambda *a: None)
    slow = prepare(qrels, run, keep_docnos=True)
    _, _, rel, _, docno = _reference(qrels_rows, run_rows)
    for r in (fast, slow):
        assert r.rel.dtype == dtype
        assert r.rel.tolist() == rel and r.docno.tolist() == docno
    assert ranking.rel_dtype(max(grades)) == dtype


@pytest.mark.parametrize("equal_lengths", [True, False])
def test_running_count_equals_the_running_sum_at_the_rows(equal_lengths):
    qrels_rows, run_rows = _random_blocks(21, n_q=17, width=13)
    if not equal_lengths:
        run_rows = run_rows[:-5]                       # the last query is shorter
    r = prepare(frame(qrels_rows, "rel"), frame(run_rows, "score"))
    assert (r.width is not None) == equal_lengths
    for mask in (r.is_rel, r.rel == NONPOOL, r.rel >= 0, np.zeros(len(r.rel), dtype=bool)):
        rows = np.flatnonzero(mask)
        assert r.running_count(rows).tolist() == r.segment_cumsum(mask)[rows].tolist()
    assert r.cum_rel.tolist() == r.segment_cumsum(r.is_rel.astype(np.int64)).tolist()


def test_docno_keys_do_not_depend_on_the_column_width():
    # the run's and the qrels' columns are padded to their own longest docno; the same docno
    # must get the same key in both (a wrong key silently loses a judgment)
    import pyarrow as pa

    short = docno_keys.DocnoKeys.of(pa.array(["d1", "ab"]))
    long = docno_keys.DocnoKeys.of(pa.array(["never_retrieved_x" * 3, "d1", "ab"]))
    assert short.width == 8 and long.width == 56
    assert short.key.tolist() == long.key[1:].tolist()
    assert short.same(np.array([0, 1]), long, np.array([1, 2])).all()
    assert not short.same(np.array([0]), long, np.array([2])).any()
    assert docno_keys.DocnoKeys.of(pa.array(["x" * (docno_keys.MAX_BYTES + 1)])) is None


@pytest.mark.parametrize("kwargs", [{}, {"max_results": 3}, {"complete": True},
                                    {"relevance_level": 2}])
def test_dense_table_of_small_dictionaries_matches_a_plain_ranking(tmp_path, monkeypatch,
                                                                   kwargs):
    # files with few distinct docnos are read as dictionaries: the relevance then comes from
    # a (block, judged docno) table instead of the hashed join
    qrels_rows, run_rows = _random_blocks(23, n_q=40, width=12)
    qrels_path, run_path = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows))
    run_path.write_text("".join(f"{q} Q0 {d} {i} {s!r} tag\n"
                                for i, (q, d, s) in enumerate(run_rows)))
    tables = []
    real = grouped_sort._dense_table
    monkeypatch.setattr(grouped_sort, "_dense_table",
                        lambda *a: tables.append(real(*a)) or tables[-1])
    monkeypatch.setattr(grouped_sort, "_CHUNK_CELLS", 30)
    r = prepare(qrels_path, run_path, keep_docnos=True, **kwargs)
    assert tables and tables[0] is not None
    with monkeypatch.context() as m:
        m.setattr(grouped_sort, "rank_groups", lambda *a: None)
        slow = prepare(qrels_path, run_path, keep_docnos=True, **kwargs)
    for name in ("qids", "offsets", "rel", "score", "docno", "rel_levels"):
        assert getattr(r, name).tolist() == getattr(slow, name).tolist(), name
    if not kwargs:
        _assert_is_reference(r, qrels_rows, run_rows)
    # a document listed twice in one block is still reported, with its count (under -M only
    # when both copies are kept, as trec_eval: here the copy scores below every other)
    q, d, _ = run_rows[5]
    run_path.write_text(run_path.read_text() + f"{q} Q0 {d} 99 -9.0 tag\n")
    lines = run_path.read_text().splitlines(keepends=True)
    block = [ln for ln in lines if ln.split()[0] == q]
    others = [ln for ln in lines if ln.split()[0] != q]
    run_path.write_text("".join(block + others))
    if "max_results" in kwargs:
        assert prepare(qrels_path, run_path, **kwargs).qids.tolist() == r.qids.tolist()
        return
    with pytest.raises(InputError, match=f"document '{d}' is listed 2 times for query '{q}'"):
        prepare(qrels_path, run_path, **kwargs)


def test_keys_equal_only_in_their_kept_bits_are_not_a_match(tmp_path, monkeypatch):
    # the join grid keeps the high bits of each key; two docnos whose (exact, distinct) keys
    # differ only in the dropped low bits must not be taken for one: here "d1" (retrieved,
    # unjudged) sits next to "d2" (judged 3, not retrieved) in every query's grid row
    qrels_rows = [(f"t{i}", "d2", 3) for i in range(20)]
    run_rows = [(f"t{i}", d, s) for i in range(20) for d, s in (("d1", 2.0), ("d4", 1.0))]
    qrels_path, run_path = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows))
    run_path.write_text("".join(f"{q} Q0 {d} {i} {s!r} tag\n"
                                for i, (q, d, s) in enumerate(run_rows)))
    # an exact key per docno ('d' then digits), differing in the low bits only
    monkeypatch.setattr(docno_keys, "_hash_words", lambda words: words[:, 0] >> np.uint64(8))
    monkeypatch.setattr(grouped_sort, "_dense_table", lambda *a: None)
    exact = []
    real = docno_keys.DocnoKeys.exact_with
    monkeypatch.setattr(docno_keys.DocnoKeys, "exact_with",
                        lambda self, other: exact.append(real(self, other)) or exact[-1])
    r = prepare(qrels_path, run_path, keep_docnos=True)
    assert exact == [True]
    _assert_is_reference(r, qrels_rows, run_rows)


@pytest.mark.parametrize("kwargs", [{}, {"max_results": 4}, {"complete": True},
                                    {"relevance_level": 2}])
def test_dicts_look_judgments_up_in_the_qrels_dict(monkeypatch, kwargs):
    # both sides dicts: each run docno is looked up in its query's inner qrels dict; the
    # result must be the plain ranking, and the same as through the hashed join
    qrels_rows, run_rows = _random_blocks(11, n_q=30, width=10, ragged=True)
    qrels, run = {}, {}
    for q, d, g in qrels_rows:
        # grades as a user may give them: int, integral float, bool
        qrels.setdefault(q, {})[d] = float(g) if g == 2 else True if g == 1 else g
    for q, d, s in run_rows:
        run.setdefault(q, {})[d] = s
    calls = []
    real = grouped_sort._dict_join
    monkeypatch.setattr(grouped_sort, "_dict_join",
                        lambda *a: calls.append(1) or real(*a))
    r = prepare(qrels, run, keep_docnos=True, **kwargs)
    assert calls, "the dict lookup was not used"
    with monkeypatch.context() as m:
        m.setattr(grouped_sort, "_from_dicts", lambda *a: False)
        hashed = prepare(qrels, run, keep_docnos=True, **kwargs)
    for name in ("qids", "offsets", "rel", "score", "docno", "rel_levels"):
        assert getattr(r, name).tolist() == getattr(hashed, name).tolist(), name
    if not kwargs:
        _assert_is_reference(r, qrels_rows, run_rows)


@pytest.mark.parametrize("chunk", [3, 1 << 17])
@pytest.mark.parametrize("ragged", [False, True])
def test_runs_written_in_score_order_rank_as_trec_eval(monkeypatch, chunk, ragged):
    # blocks already by score descending skip the sort; their ties (-0.0 and 0.0 included)
    # must still be ordered by docno descending, and a block out of order sorted
    monkeypatch.setattr(grouped_sort, "_CHUNK_CELLS", chunk)
    qrels_rows, run_rows = _random_blocks(13, n_q=25, width=12, ragged=ragged)
    blocks = {}
    for q, d, s in run_rows:
        blocks.setdefault(q, []).append((q, d, s))
    ordered = []
    for i, rows in enumerate(blocks.values()):
        if i != 4:   # one block left as it came
            rows = sorted(rows, key=lambda row: row[2], reverse=True)
        ordered += rows
    for rows in (ordered, [(q, d, s + 0.0 if s else -0.0) for q, d, s in ordered]):
        r = prepare(frame(qrels_rows, "rel"), frame(rows, "score"), keep_docnos=True)
        _assert_is_reference(r, qrels_rows, rows)


@pytest.mark.parametrize("ragged", [False, True])
def test_docnos_in_many_chunks_rank_and_match_as_trec_eval(tmp_path, monkeypatch, ragged):
    # mostly distinct docnos stay plain text in pyarrow's chunks (one per read block); tie
    # breaking and match confirmation pick rows from them chunk by chunk (string_codes.take)
    import pyarrow as pa

    from onlineeval.offline.reading import arrow_reader

    qrels_rows, run_rows = _random_blocks(23, n_q=40, width=9, ragged=ragged)
    run_rows = [(q, d + "-" + q, s) for q, d, s in run_rows]           # distinct docnos
    qrels_rows = [(q, d if d.startswith("never") or q == "judged_only" else d + "-" + q, g)
                  for q, d, g in qrels_rows]
    run_rows = run_rows[::-1]                                  # blocks out of score order
    qrels_path, run_path = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows))
    run_path.write_text("".join(f"{q} Q0 {d} {i} {s!r} tag\n"
                                for i, (q, d, s) in enumerate(run_rows)))
    monkeypatch.setattr(arrow_reader, "BLOCK_SIZE", 512)
    monkeypatch.setattr(grouped_sort, "_CHUNK_CELLS", 40)
    calls = []
    real = grouped_sort.rank_groups
    monkeypatch.setattr(grouped_sort, "rank_groups", lambda *a: calls.append(1) or real(*a))
    r = prepare(qrels_path, run_path, keep_docnos=True)
    assert calls and isinstance(arrow_reader.read_regular(run_path, "run").docno,
                                pa.ChunkedArray)
    _assert_is_reference(r, qrels_rows, run_rows)


def test_take_from_a_chunked_column_keeps_the_order_of_the_rows():
    import pyarrow as pa

    from onlineeval.offline.ranking import string_codes

    col = pa.chunked_array([pa.array(["a", "b", "c"]), pa.array([], pa.string()),
                            pa.array(["dé", "e"]), pa.array(["f"])])
    values = col.to_pylist()
    rng = np.random.default_rng(5)
    for n in (0, 1, 4, 20):
        rows = rng.integers(0, len(values), n)
        assert string_codes.take(col, rows).to_pylist() == [values[i] for i in rows]
    assert string_codes.take(col, np.array([True, False, False, True, False, True]))\
        .to_pylist() == ["a", "dé", "f"]


@pytest.mark.parametrize("reader", ["read_qrels", "read_run"])
def test_public_readers_read_under_the_hugepage_switch(tmp_path, monkeypatch, reader):
    # the DataFrame path reads five columns into pandas; without the switch the kernel's
    # huge-page compaction doubled its CPU time on the TREC-shaped bench (issue 15)
    import onlineeval.offline.reading as reading
    from onlineeval.offline.reading import arrow_reader

    path = tmp_path / "f.txt"
    path.write_text("q1 0 d1 1\n" if reader == "read_qrels" else "q1 Q0 d1 1 2.5 t\n")
    seen = []
    real = arrow_reader.read_regular
    monkeypatch.setattr(arrow_reader, "read_regular",
                        lambda *a, **k: seen.append(hugepages._advice_depth) or real(*a, **k))
    setter = np._core.multiarray._set_madvise_hugepage
    before = setter(True)
    try:
        frame = getattr(reading, reader)(path)
        assert setter(True) is True                # restored afterwards
    finally:
        setter(before)
    assert seen == [1] and len(frame) == 1
