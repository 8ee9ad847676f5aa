"""The synthetic collection and rankers: determinism, file formats, and NDCG against trec_eval.

NDCG@10 is checked against pytrec_eval (trec_eval's own code) reading the written files, and the
default rankers' order is checked against their design (more noise, lower NDCG).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from onlineeval.errors import InvalidParameterError
from onlineeval.simulate import (
    DEFAULT_RANKERS,
    make_collection,
    make_run,
    ndcg_at_k,
    ndcg_per_query,
    write_qrels,
    write_run,
)


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, zero, doc, rel = line.split()
        assert zero == "0"
        out.setdefault(qid, {})[doc] = int(rel)
    return out


def _read_run(path: Path, tag: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    last: dict[str, tuple[int, float]] = {}
    for line in path.read_text().splitlines():
        qid, q0, doc, rank, score, t = line.split()
        assert q0 == "Q0" and t == tag
        prev_rank, prev_score = last.get(qid, (0, float("inf")))
        assert int(rank) == prev_rank + 1 and float(score) <= prev_score
        last[qid] = (int(rank), float(score))
        out.setdefault(qid, {})[doc] = float(score)
    return out


def test_same_seed_same_collection_and_runs() -> None:
    a = make_collection(np.random.default_rng(4), 20, 15)
    b = make_collection(np.random.default_rng(4), 20, 15)
    c = make_collection(np.random.default_rng(5), 20, 15)
    assert a.qrels == b.qrels and a.texts == b.texts and a.misspelling == b.misspelling
    assert np.array_equal(a.popularity, b.popularity)
    assert a.qrels != c.qrels
    r1 = make_run(a, "x", 1.0, np.random.default_rng(9))
    r2 = make_run(a, "x", 1.0, np.random.default_rng(9))
    assert r1.docs == r2.docs and r1.scores == r2.scores


def test_collection_shape() -> None:
    col = make_collection(np.random.default_rng(1), 200, 30)
    assert len(col.qids) == 200 and len(set(col.qids)) == 200
    grades = np.array([g for q in col.qids for g in col.qrels[q].values()])
    assert set(np.unique(grades)) <= {0, 1, 2, 3, 4}
    assert all(max(col.qrels[q].values()) >= 1 for q in col.qids)
    assert col.popularity.sum() == pytest.approx(1.0)
    assert np.all(np.diff(col.popularity) < 0)  # Zipf-like: topic 1 most popular
    for q in col.qids:
        texts = col.texts[q]
        assert len(texts) >= 2 and len(set(texts)) == len(texts)
        assert col.misspelling[q] not in texts
    all_texts = [t for q in col.qids for t in col.texts[q]]
    assert len(all_texts) == len(set(all_texts))  # a text names one topic only
    assert col.grades(col.qids[0], ["nope"]) == [0]
    frame = col.qrels_frame()
    assert list(frame.columns) == ["qid", "docno", "rel"] and len(frame) == 200 * 30


def test_ndcg_matches_trec_eval_on_written_files(tmp_path: Path) -> None:
    col = make_collection(np.random.default_rng(2), 40, 25)
    qrels = _read_qrels(write_qrels(col, tmp_path / "qrels.txt"))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"})
    for i, sd in enumerate([0.0, 0.5, 1.5, 3.0]):
        run = make_run(col, f"r{i}", sd, np.random.default_rng(i))
        parsed = _read_run(write_run(run, tmp_path / f"r{i}.run"), f"r{i}")
        golden = {q: v["ndcg_cut_10"] for q, v in evaluator.evaluate(parsed).items()}
        ours = ndcg_per_query(col, run, 10)
        assert set(golden) == set(ours)
        for q in golden:
            assert ours[q] == pytest.approx(golden[q], abs=1e-12)
        assert ndcg_at_k(col, run, 10) == pytest.approx(np.mean(list(golden.values())),
                                                         abs=1e-12)
    ideal = make_run(col, "ideal", 0.0, np.random.default_rng(0))
    assert ndcg_at_k(col, ideal) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_rankers_order_as_designed(seed: int) -> None:
    """More noise, lower NDCG@10: strictly, for the default noise levels (distinct ones)."""
    children = np.random.SeedSequence(seed).spawn(1 + len(DEFAULT_RANKERS))
    col = make_collection(np.random.default_rng(children[0]))
    ndcg = {name: ndcg_at_k(col, make_run(col, name, sd, np.random.default_rng(children[i + 1])))
            for i, (name, sd) in enumerate(DEFAULT_RANKERS.items())}
    by_noise: dict[float, list[float]] = {}
    for name, sd in DEFAULT_RANKERS.items():
        by_noise.setdefault(sd, []).append(ndcg[name])
    levels = sorted(by_noise)
    for lo, hi in zip(levels, levels[1:], strict=False):
        assert min(by_noise[lo]) > max(by_noise[hi]), (lo, hi, by_noise)
    # same noise, independent draws: a small margin (near-zero pair of the study)
    assert abs(ndcg["s080"] - ndcg["s080b"]) < 0.03


def test_run_tie_order_is_trec_eval_order() -> None:
    col = make_collection(np.random.default_rng(0), 3, 12)
    run = make_run(col, "flat", 0.0, np.random.default_rng(0))  # scores = grades: many ties
    for q in col.qids:
        docs, scores = run.docs[q], run.scores[q]
        for i in range(len(docs) - 1):
            assert scores[i] > scores[i + 1] or (scores[i] == scores[i + 1]
                                                 and docs[i] > docs[i + 1])
    frame = run.frame()
    assert list(frame.columns) == ["qid", "docno", "rank", "score"] and len(frame) == 36


def test_bad_arguments() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidParameterError):
        make_collection(rng, 0)
    with pytest.raises(InvalidParameterError, match="grade_probs"):
        make_collection(rng, 3, grade_probs=(0.5, 0.5))
    with pytest.raises(InvalidParameterError, match="noise_sd"):
        make_run(make_collection(rng, 2), "x", -1.0, rng)
