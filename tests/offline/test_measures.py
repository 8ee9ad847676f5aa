"""trec_eval measures on tiny inputs, each value worked out by hand from its definition.

Query q1 (judgments d1:1, d2:0, d3:2, d4:1, d5:-1; so R = 3 at level 1) is ranked
d1 d6 d2 d3 d5 (scores 0.9 .. 0.5): grades 1, not judged, 0, 2, negative.
Relevant at ranks 1 and 4; d4 is never retrieved.
"""

from __future__ import annotations

import math

import pytest

from onlineeval.errors import InvalidParameterError, UnknownNameError
from onlineeval.offline.trec_eval import parse_measures, trec_eval

# the fixtures include judged queries the run lacks on purpose (trec_eval skips them);
# tests/offline/test_query_overlap.py checks the warning that says so
pytestmark = pytest.mark.filterwarnings("ignore::onlineeval.offline.SkippedQueriesWarning")

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2, "d4": 1, "d5": -1}}
RUN = {"q1": {"d1": 0.9, "d6": 0.8, "d2": 0.7, "d3": 0.6, "d5": 0.5}}


def values(measures, qrels=QRELS, run=RUN, **kw):
    res = trec_eval(qrels, run, measures, **kw)
    frame = res.per_query_frame()
    return {c: frame[c].iloc[0] for c in frame.columns if c != "qid"}, res


EXPECTED = {
    "num_ret": 5, "num_rel": 3, "num_rel_ret": 2, "num_nonrel_judged_ret": 1,
    "P_1": 1.0, "P_5": 2 / 5, "P_10": 2 / 10,
    "recall_5": 2 / 3, "relative_P_5": 2 / 3, "success_1": 1.0,
    "map": (1 / 1 + 2 / 4) / 3,
    "map_cut_1": 1 / 3,
    "recip_rank": 1.0,
    "Rprec": 1 / 3,                       # 1 relevant in the top min(5, 3) = 3
    "Rprec_mult_0.20": 1.0,               # c = trunc(0.6 + 0.9) = 1
    "Rprec_mult_2.00": 2 / 6,             # c = trunc(6.9) = 6 > 5 retrieved
    # judged non-relevant N = 1 (d2); d1 has none above (1), d3 has d2 above (1 - 1/1)
    "bpref": (1 + 0) / 3,
    # d1 at j=0 counts 1; d3 at j=3: 1/4 + 3/4 * (1+1+0)/3 * (1+e)/(1+1+2e) = 0.5
    "infAP": (1 + 0.5) / 3,
    "unj_5": 2 / 5,                       # d6 (not in qrels), d5 (negative grade)
    "set_P": 2 / 5, "set_recall": 2 / 3, "set_relative_P": 2 / 3,
    "set_map": (2 * 2) / (5 * 3), "set_F": 2 * (0.4 * 2 / 3) / (0.4 + 2 / 3),
    "utility": 2 - 3,                     # 1·relret − 1·nonrelret
    # DCG = 1/log2(2) + 2/log2(5); ideal grades 2, 1, 1
    "ndcg": (1 + 2 / math.log2(5)) / (2 + 1 / math.log2(3) + 1 / math.log2(4)),
    "ndcg_cut_3": 1 / (2 + 1 / math.log2(3) + 1 / math.log2(4)),
    "binG": (1 / math.log2(2) + 1 / math.log2(4)) / 3,   # 0 and 2 non-relevant above
    # gains rescaled to g/2 (max grade 2 > 1): 0.1 * (0.5 + 1.0 * 0.9^3)
    "rbp": 0.1 * (0.5 + 0.9 ** 3),
    # unjudged at 0-based positions 1 and 4: 0.9^5 + 0.1 * (0.9 + 0.9^4)
    "rbp_resid": 0.9 ** 5 + 0.1 * (0.9 + 0.9 ** 4),
    # interpolated precision: 1 at the first relevant, 0.5 at the second
    "iprec_at_recall_0.00": 1.0, "iprec_at_recall_0.30": 1.0,   # lround(0.9) = 1
    "iprec_at_recall_0.50": 0.5, "iprec_at_recall_0.70": 0.5,   # lround(1.5), lround(2.1) = 2
    "iprec_at_recall_1.00": 0.0,                                # 3 relevant never reached
    "11pt_avg_0,.5,1": (1.0 + 0.5 + 0.0) / 3,
}

MEASURES = ["num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "P.1,5,10",
            "recall.5", "relative_P.5", "success.1", "map", "map_cut.1", "recip_rank",
            "Rprec", "Rprec_mult.0.2,2.0", "bpref", "infAP", "unj.5", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F", "utility", "ndcg", "ndcg_cut.3", "binG",
            "rbp", "rbp_resid", "iprec_at_recall.0,.3,.5,.7,1", "11pt_avg.0,.5,1"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hand_computed_value(name):
    got, _ = values(MEASURES)
    assert got[name] == pytest.approx(EXPECTED[name], abs=1e-12), name


def test_relstring():
    got, res = values(["relstring"])
    assert got["relstring"] == "1-02."
    assert "relstring             \tq1\t'1-02.'\n" in res.format(per_query=True)


def test_relevance_level_two():
    # only d3 (grade 2) is relevant; d1 becomes judged non-relevant
    got, _ = values(["map", "bpref", "num_rel", "ndcg"], relevance_level=2)
    assert got["num_rel"] == 1
    assert got["map"] == pytest.approx(1 / 4)
    assert got["bpref"] == 0.0            # two judged non-relevant above d3
    # ndcg ignores the relevance level (grades are gains), as trec_eval does
    assert got["ndcg"] == pytest.approx(EXPECTED["ndcg"])


def test_summary_means_totals_and_geometric_mean():
    qrels = {**QRELS, "q2": {"x": 1}}
    run = {**RUN, "q2": {"y": 1.0}}
    res = trec_eval(qrels, run, ["num_q", "num_ret", "map", "gm_map"])
    assert res.summary["num_q"] == 2
    assert res.summary["num_ret"] == 6                      # a total, not a mean
    assert res.summary["map"] == pytest.approx(0.5 / 2)
    # q2's AP of 0 is floored at 1e-5 before the geometric mean
    assert res.summary["gm_map"] == pytest.approx(math.sqrt(0.5 * 1e-5))
    text = res.format()
    assert text.splitlines()[0] == "num_q                 \tall\t2"
    assert "gm_map                \tall\t0.0022\n" in text


def test_complete_scores_missing_queries_as_trec_eval():
    qrels = {**QRELS, "q0": {"x": 1}}
    res = trec_eval(qrels, RUN, ["num_q", "num_ret", "P.5", "unj.5", "map"], complete=True)
    frame = res.per_query_frame().set_index("qid")
    assert frame.loc["q0", "num_ret"] == 0 and frame.loc["q0", "unj_5"] == 0.0
    assert res.summary["num_q"] == 2
    assert res.summary["map"] == pytest.approx(0.5 / 2)
    assert res.summary["P_5"] == pytest.approx(0.4 / 2)
    # without -c the query is skipped
    assert trec_eval(qrels, RUN, ["num_q"]).summary["num_q"] == 1


def test_custom_gains_for_ndcg():
    # ndcg.1=3: grade 1 gains 3, grade 2 keeps gain 2; ideal order 3, 3, 2
    got, _ = values(["ndcg.1=3"])
    dcg = 3 / math.log2(2) + 2 / math.log2(5)
    ideal = 3 + 3 / math.log2(3) + 2 / math.log2(4)
    assert got["ndcg_1=3"] == pytest.approx(dcg / ideal)


@pytest.mark.parametrize("spec, error, needle", [
    ("P.0", InvalidParameterError, "positive"),
    ("P.5,5", InvalidParameterError, "duplicate"),
    ("P.x", InvalidParameterError, "not an integer"),
    ("map.5", InvalidParameterError, "takes no parameters"),
    ("ndcg.1", InvalidParameterError, "malformed pair"),
    ("MAP", InvalidParameterError, "case-sensitive"),
    ("nope", UnknownNameError, "unknown trec_eval measure"),
])
def test_bad_measure_arguments(spec, error, needle):
    with pytest.raises(error, match=needle):
        parse_measures([spec])


def test_cutoffs_are_sorted_and_read_like_strtol():
    (req,) = parse_measures(["ndcg_cut.20,10,23.4"])
    assert req[1].names == ("ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23")


def test_walked_gain_measures_by_hand():
    # gains by rank 1, 0, 0, 2, 0; ideal gains 2, 1, 1 (m = 3)
    got, _ = values(["ndcg_rel", "Rndcg", "G"])
    custom, _ = values(["G.1=3"])  # one -m per measure counts, so a separate run
    l3, l5 = math.log2(3), math.log2(5)
    idcg = 2 + 1 / l3 + 0.5
    dcg = 1 + 2 / l5
    # ndcg_rel: at rank 1: 1/2; at rank 4: dcg/idcg; the unretrieved d4 adds dcg/idcg
    assert got["ndcg_rel"] == pytest.approx((0.5 + 2 * dcg / idcg) / 3)
    # Rndcg: ideal gain changes 2->1 before rank 2 (1/2), 1->0 before rank 4 (1/idcg),
    # and the end of the list once the ideal is exhausted (dcg/idcg)
    assert got["Rndcg"] == pytest.approx((0.5 + 1 / idcg + dcg / idcg) / 3)
    # G: rank 1: 1/log2(2 + 2 - 1); rank 4: cost 2+1+1+1 = 5, gained 3: 2/log2(2 + 5 - 3)
    assert got["G"] == pytest.approx((1 / l3 + 2 / 2) / 4)
    # G.1=3: gains 3, 0, 0, 2, 0; ideal 3, 3, 2 (sum 8); rank 4: cost 3+3+2+1, gained 5
    assert custom["G_1=3"] == pytest.approx((3 / 1 + 2 / math.log2(6)) / 8)


# --------------------------------------------------------------------------- equal-length path
# When every query has the same number of ranked rows, Ranked.width is set and the per-row
# helpers (pos, segment sums and running sums, seg_of/pos_of) and the DCG measures work on a
# (queries x width) view. Every all_trec value must equal the general path's, bit for bit.

def _regular_inputs(seed, n_q=12, width=15):
    import numpy as np

    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for i in range(n_q):
        q = f"q{rng.integers(0, 10**6)}"
        docs = [f"d{j}" for j in rng.choice(5 * width, size=width, replace=False)]
        run[q] = {d: float(rng.integers(0, 5)) / 4 for d in docs}     # ties
        if i % 5 == 4:
            continue                                                  # run-only query
        judged = {d: int(rng.integers(-1, 4)) for d in docs if rng.random() < 0.5}
        judged[f"never{i}"] = int(rng.integers(0, 3))                 # judged, not retrieved
        qrels[q] = judged
    qrels["judged_only"] = {"x": 2}
    return qrels, run


@pytest.mark.parametrize("kwargs", [{}, {"max_results": 6}, {"relevance_level": 2},
                                    {"complete": True}])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("block", [7, 1 << 20])   # DCG blocks: many, or one
def test_equal_length_path_matches_the_general_path(seed, kwargs, block, monkeypatch):
    import numpy as np
    import pandas as pd

    from onlineeval.offline import ranking
    from onlineeval.offline.measures import dcg

    monkeypatch.setattr(dcg, "_BLOCK_CELLS", block)
    qrels, run = _regular_inputs(seed)
    # all_trec, plus gain overrides for negative codes and cutoffs beyond the width
    measures = ["all_trec", "ndcg.-2=1,-1=0.5,0=0.25,2=5", "ndcg_cut.1,3,100"]
    fast = trec_eval(qrels, run, measures, **kwargs)
    if not kwargs.get("complete"):
        assert fast.ranked.width is not None   # the equal-length path was taken
    monkeypatch.setattr(ranking.Ranked, "width", property(lambda self: None))
    slow = trec_eval(qrels, run, measures, **kwargs)
    assert slow.ranked.width is None
    a, b = fast.per_query_frame(), slow.per_query_frame()
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert fast.format(True) == slow.format(True)
    # and the helpers themselves
    r = fast.ranked
    rows = np.flatnonzero(r.is_rel)
    assert r.seg_of(rows).tolist() == r.seg[rows].tolist()
    assert r.pos_of(rows).tolist() == r.pos[rows].tolist()
