"""Worked examples from the project's seed documents, recomputed by hand.

Where a seed's number is wrong (or rounded in a misleading way) the test says so and asserts
the value that follows from the definition.
"""

from __future__ import annotations

import math

import pytest

from onlineeval.offline.api import evaluate


def _ranked_run(qid: str, docs: list[str]) -> dict[str, dict[str, float]]:
    """A run listing ``docs`` in this order (strictly decreasing scores, no ties)."""
    return {qid: {d: float(len(docs) - i) for i, d in enumerate(docs)}}


def _one(qrels, run, measure):
    """The mean of a single measure (the one column besides num_q)."""
    out = evaluate(qrels, run, [measure])
    assert len(out) == 1
    (col,) = [c for c in out.columns if c != "num_q"]
    return float(out[col].iloc[0])


def test_ap_relevant_at_1_3_6_of_3():
    # AP = (1/1 + 2/3 + 3/6) / 3 = 13/18 = 0.7222 (the seed's 0.722 is right)
    docs = [f"d{i}" for i in range(1, 7)]
    qrels = {"q": {"d1": 1, "d3": 1, "d6": 1}}
    run = _ranked_run("q", docs)
    for name in ("AP", "map", "MAP"):
        assert _one(qrels, run, name) == pytest.approx(13 / 18, abs=1e-12)
    assert round(13 / 18, 3) == 0.722


def test_ndcg_exp_at_3_grades_3_2_3():
    # gains 2^g - 1: ranking 3, 2, 3 -> 7, 3, 7; ideal 3, 3, 2 -> 7, 7, 3
    # DCG  = 7/log2(2) + 3/log2(3) + 7/log2(4) = 7 + 1.892789 + 3.5 = 12.392789
    # IDCG = 7 + 7/log2(3) + 3/2             = 7 + 4.416508 + 1.5 = 12.916508
    # nDCG = 0.959454. SEED DISCREPANCY: the seed prints 0.960, but the value is 0.959 to
    # three decimals (0.96 to two); we assert the exact value.
    qrels = {"q": {"a": 3, "b": 2, "c": 3}}
    run = _ranked_run("q", ["a", "b", "c"])
    dcg = 7 + 3 / math.log2(3) + 7 / 2
    idcg = 7 + 7 / math.log2(3) + 3 / 2
    got = _one(qrels, run, "nDCG_exp@3")
    assert got == pytest.approx(dcg / idcg, abs=1e-12)
    assert got == pytest.approx(0.959454, abs=1e-6)
    assert round(got, 3) == 0.959
    # trec_eval's nDCG (linear gain) on the same ranking: (3 + 2/log2 3 + 3/2) / (3 + 3/log2 3 + 1)
    lin = (3 + 2 / math.log2(3) + 1.5) / (3 + 3 / math.log2(3) + 1)
    assert _one(qrels, run, "nDCG@3") == pytest.approx(lin, abs=1e-12)
    assert _one(qrels, run, "ndcg_cut_3") == pytest.approx(lin, abs=1e-12)
    # DCG_exp@3 is the unnormalised numerator; DCG@3 the linear-gain one
    assert _one(qrels, run, "DCG_exp@3") == pytest.approx(dcg, abs=1e-12)
    assert _one(qrels, run, "DCG@3") == pytest.approx(3 + 2 / math.log2(3) + 1.5, abs=1e-12)


def test_mrr_first_relevant_at_2_1_5():
    # (1/2 + 1/1 + 1/5) / 3 = 17/30 = 0.5667; the seed's 0.57 is this rounded to 2 decimals
    qrels = {"q1": {"r1": 1}, "q2": {"r2": 1}, "q3": {"r3": 1}}
    run = {}
    for q, rel, pos in (("q1", "r1", 2), ("q2", "r2", 1), ("q3", "r3", 5)):
        docs = [f"{q}n{i}" for i in range(6)]
        docs.insert(pos - 1, rel)
        run.update(_ranked_run(q, docs))
    for name in ("MRR", "RR", "recip_rank", "MRR@10"):
        out = evaluate(qrels, run, [name])
        value = float(out[[c for c in out.columns if c != "num_q"][0]].iloc[0])
        assert value == pytest.approx(17 / 30, abs=1e-12)
        assert int(out["num_q"].iloc[0]) == 3
    # with a cutoff of 4 the third query's relevant document (rank 5) no longer counts
    assert _one(qrels, run, "MRR@4") == pytest.approx((1 / 2 + 1) / 3, abs=1e-12)


def test_r_cap_at_5_three_of_seven():
    # BEIR's capped recall: relevant in top 5 / min(5, |R|) = 3 / 5 = 0.60 (seed is right);
    # plain recall@5 is 3/7
    rel = [f"r{i}" for i in range(7)]
    qrels = {"q": {d: 1 for d in rel}}
    docs = ["r0", "n1", "r1", "n2", "r2", "r3", "r4"]
    run = _ranked_run("q", docs)
    assert _one(qrels, run, "R_cap@5") == pytest.approx(0.6, abs=1e-12)
    assert _one(qrels, run, "R@5") == pytest.approx(3 / 7, abs=1e-12)


@pytest.mark.parametrize(
    ("k", "expected"),
    [(1, 0.0), (2, 1 / 8), (3, 1 / 8), (4, 2 / 8), (5, 3 / 8), (6, 3 / 8), (7, 4 / 8),
     (10, 4 / 8), (100, 4 / 8)],
)
def test_recall_at_k_relevant_at_2_4_5_7_of_8(k, expected):
    rel = {2, 4, 5, 7}
    docs = [f"r{i}" if i in rel else f"n{i}" for i in range(1, 11)]
    qrels = {"q": {f"r{i}": 1 for i in rel} | {f"unretrieved{j}": 1 for j in range(4)}}
    run = _ranked_run("q", docs)
    assert _one(qrels, run, f"R@{k}") == pytest.approx(expected, abs=1e-12)
    assert _one(qrels, run, f"recall_{k}") == pytest.approx(expected, abs=1e-12)
    # P@k counts relevant in the top k over k (k beyond the list still divides by k)
    hits = sum(1 for i in rel if i <= k)
    assert _one(qrels, run, f"P@{k}") == pytest.approx(hits / k, abs=1e-12)


def test_map_at_k_is_not_mean_of_precision_at_k():
    # SEED DISCREPANCY: one seed blog defines MAP@k as the mean of P@1..P@k. For relevant
    # documents at ranks 1, 3, 6 (3 relevant) and k = 6 that gives
    # (1 + 1/2 + 2/3 + 2/4 + 2/5 + 3/6) / 6 = 0.5944, which is not average precision.
    # AP@k (trec_eval's map_cut, BEIR) averages precision at each relevant rank <= k over the
    # number of relevant documents: AP@6 = (1 + 2/3 + 3/6) / 3 = 0.7222,
    # AP@3 = (1 + 2/3) / 3 = 0.5556.
    docs = [f"d{i}" for i in range(1, 7)]
    qrels = {"q": {"d1": 1, "d3": 1, "d6": 1}}
    run = _ranked_run("q", docs)
    blog = sum(sum(1 for r in (1, 3, 6) if r <= j) / j for j in range(1, 7)) / 6
    assert blog == pytest.approx(0.594444, abs=1e-6)
    ap6 = _one(qrels, run, "AP@6")
    assert ap6 == pytest.approx(13 / 18, abs=1e-12)
    assert abs(ap6 - blog) > 0.1
    assert _one(qrels, run, "MAP@3") == pytest.approx(5 / 9, abs=1e-12)
    assert _one(qrels, run, "map_cut_3") == pytest.approx(5 / 9, abs=1e-12)
