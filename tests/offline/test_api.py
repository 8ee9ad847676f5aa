"""evaluate(): measure names, output shape, summaries, and the extra measures by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from onlineeval.errors import InputError, InvalidParameterError, UnknownNameError
from onlineeval.offline.api import evaluate, pr_curve
from onlineeval.offline.measures.base import MEASURES
from onlineeval.offline.measures.names import parse_measure

# the fixtures include judged queries the run lacks on purpose (trec_eval skips them);
# tests/offline/test_query_overlap.py checks the warning that says so
pytestmark = pytest.mark.filterwarnings("ignore::onlineeval.offline.SkippedQueriesWarning")

# Ranking (score descending, ties by docno descending): a(3) x(unjudged) c(1) b(0) e(-1) d(2)
# x and c tie at 0.8 and "x" > "c", so x comes first.
QRELS = {"q": {"a": 3, "b": 0, "c": 1, "d": 2, "e": -1}}
RUN = {"q": {"a": 0.9, "x": 0.8, "c": 0.8, "b": 0.5, "e": 0.4, "d": 0.1}}


def value(name, qrels=QRELS, run=RUN, **kw):
    out = evaluate(qrels, run, [name], **kw)
    (col,) = [c for c in out.columns if c != "num_q"]
    return float(out[col].iloc[0])


def test_extra_measures_by_hand():
    assert value("CG@3") == 4.0                            # 3 + 0 + 1
    assert value("DCG@3") == pytest.approx(3.0 + 1 / 2)    # 3/log2(2) + 1/log2(4)
    assert value("DCG_exp@3") == pytest.approx(7.0 + 1 / 2)
    # ideal grades 3, 2, 1 -> 7 + 3/log2(3) + 1/2
    assert value("nDCG_exp@3") == pytest.approx(7.5 / (7.5 + 3 / math.log2(3)))
    assert value("judged@3") == pytest.approx(2 / 3)      # a, c (x unjudged)
    assert value("judged@6") == pytest.approx(4 / 6)      # e's negative grade = unjudged
    assert value("judged@10") == pytest.approx(4 / 10)    # divides by k past the list
    assert value("fallout@3") == 0.0
    assert value("fallout@4") == 1.0                       # b is the only judged non-relevant
    assert value("R_cap@2") == pytest.approx(1 / 2)       # a / min(2, 3)
    assert value("R_cap@10") == pytest.approx(1.0)        # 3 / min(10, 3)
    assert value("Best@1") == 1.0
    assert value("RR@1") == 1.0
    # gmax = 3 (highest grade): R_a = 7/8, R_x = 0, R_c = 1/8
    assert value("ERR@3") == pytest.approx(7 / 8 + (1 / 8) * (1 / 8) / 3)
    assert value("ERR@3(gmax=4)") == pytest.approx(7 / 16 + (9 / 16) * (1 / 16) / 3)
    assert value("F@4") == pytest.approx(4 / 7)           # 2 P R / (P + R), P=2/4, R=2/3
    assert value("F2@4") == pytest.approx(5 * 0.5 * (2 / 3) / (4 * 0.5 + 2 / 3))
    # relevance_level=2: relevant are a (3) and d (2); c (1) becomes judged non-relevant
    assert value("fallout@4", relevance_level=2) == pytest.approx(2 / 2)
    assert value("R_cap@3", relevance_level=2) == pytest.approx(1 / 2)
    assert value("RR@10", relevance_level=2) == 1.0


def test_best_needs_the_top_grade():
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    assert value("Best@1", qrels, run) == 0.0
    assert value("Best@2", qrels, run) == 1.0
    assert value("Best", qrels, run) == 1.0
    # no relevant document: 0
    assert value("Best@2", {"q": {"a": 0}}, {"q": {"a": 1.0}}) == 0.0


def test_empty_relevant_set_scores_zero():
    qrels = {"q": {"a": 0, "b": -1}}
    run = {"q": {"a": 2.0, "b": 1.0, "c": 0.5}}
    for name in ("nDCG_exp@3", "ERR@3", "R_cap@3", "RR@3", "F@3", "Best@3", "CG@3", "DCG@3"):
        assert value(name, qrels, run) == 0.0, name
    assert value("fallout@3", qrels, run) == 1.0
    assert value("judged@3", qrels, run) == pytest.approx(1 / 3)


# --------------------------------------------------------------------------- names

@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("nDCG@10", ("ndcg_cut_10",)), ("NDCG@10", ("ndcg_cut_10",)),
        ("ndcg_cut_10", ("ndcg_cut_10",)), ("ndcg_cut.10", ("ndcg_cut_10",)),
        ("nDCG", ("ndcg",)), ("P@5", ("P_5",)), ("p@5", ("P_5",)), ("P_10", ("P_10",)),
        ("P.5,10", ("P_5", "P_10")), ("P@10,5", ("P_5", "P_10")), ("R@100", ("recall_100",)),
        ("recall@100", ("recall_100",)), ("AP", ("map",)), ("map", ("map",)),
        ("AP@10", ("map_cut_10",)), ("MAP@10", ("map_cut_10",)), ("RR", ("recip_rank",)),
        ("MRR", ("recip_rank",)), ("recip_rank", ("recip_rank",)), ("MRR@10", ("RR@10",)),
        ("rr@10", ("RR@10",)), ("R-prec", ("Rprec",)), ("r-prec", ("Rprec",)),
        ("success@1", ("success_1",)), ("bpref", ("bpref",)), ("11pt", ("11pt_avg",)),
        ("iprec_at_recall_0.10", ("iprec_at_recall_0.10",)),
        ("nDCG_exp@10", ("nDCG_exp@10",)), ("ndcg_exp@10", ("nDCG_exp@10",)),
        ("nDCG_exp", ("nDCG_exp",)), ("DCG@5", ("DCG@5",)), ("CG@5", ("CG@5",)),
        ("ERR@10", ("ERR@10",)), ("err@10(gmax=4)", ("ERR@10(gmax=4)",)),
        ("ERR.10", ("ERR@10",)), ("R_cap@5", ("R_cap@5",)), ("Best@3", ("Best@3",)),
        ("fallout@10", ("fallout@10",)), ("judged@10", ("judged@10",)), ("F@10", ("F1@10",)),
        ("F1@10", ("F1@10",)), ("f2@10", ("F2@10",)), ("F0.5@10", ("F0.5@10",)),
        ("F@10(beta=2)", ("F2@10",)),
    ],
)
def test_names_resolve_to_canonical_columns(name, canonical):
    spec = parse_measure(name)
    assert spec.names == canonical
    # canonical names parse back to themselves
    for c in canonical:
        assert parse_measure(c).names == (c,)


@pytest.mark.parametrize(
    ("name", "error", "match"),
    [
        ("nDGC@10", UnknownNameError, "did you mean"),
        ("precsion", UnknownNameError, "unknown"),
        ("P@0", InvalidParameterError, "positive integer"),
        ("P@x", InvalidParameterError, "positive integer"),
        ("P@", InvalidParameterError, "positive integer"),
        ("R_cap", InvalidParameterError, "needs a cutoff"),
        ("judged", InvalidParameterError, "needs a cutoff"),
        ("map(gmax=3)", InvalidParameterError, "takes no options"),
        ("ERR@10(foo=1)", InvalidParameterError, "no option 'foo'"),
        ("ERR@10(gmax=x)", InvalidParameterError, "must be a number"),
        ("ERR@10(gmax)", InvalidParameterError, "key=value"),
        ("F@5(beta=-1)", InvalidParameterError, "positive"),
        ("F2@5(beta=3)", InvalidParameterError, "twice"),
        ("", InvalidParameterError, "non-empty"),
        ("bpref@10", InvalidParameterError, "does not take a rank cutoff"),
        ("iprec_at_recall@5", InvalidParameterError, "iprec_at_recall.PARAMS"),
        ("map.5", InvalidParameterError, "takes no parameters"),
    ],
)
def test_bad_names(name, error, match):
    with pytest.raises(error, match=match):
        parse_measure(name)


def test_every_extra_measure_is_in_the_engine_registry():
    extras = [name for name, obj in MEASURES.items() if not obj.is_trec_eval]
    assert sorted(extras) == sorted(
        ["nDCG_exp", "DCG", "DCG_exp", "CG", "RR_cut", "ERR", "R_cap", "Best", "fallout",
         "judged", "F"])
    for name in extras:
        obj = MEASURES.get(name)
        assert obj.title and obj.formula and obj.citation, f"{name} has no documentation"
        k = "@5" if obj.cutoff == "required" else ""
        stem = obj.value_stem + ("1" if obj.name_option else "")
        assert parse_measure(f"{stem}{k}").measure is obj


def test_err_gmax_below_a_grade_is_an_error():
    with pytest.raises(InvalidParameterError, match="gmax"):
        evaluate(QRELS, RUN, ["ERR@3(gmax=2)"])


# --------------------------------------------------------------------------- evaluate

def test_per_query_shape_and_summary_row():
    qrels = {"2": {"a": 1}, "10": {"b": 1, "c": 2}, "1": {"z": 1}}
    run = {"10": {"b": 1.0, "c": 2.0}, "2": {"x": 1.0, "a": 0.5}, "unjudged": {"a": 1.0}}
    names = ["AP", "P@5", "P_5", "nDCG_exp@2", "num_rel", "gm_map"]
    pq = evaluate(qrels, run, names, per_query=True)
    # one column per value (P@5 and P_5 are the same), qids in byte order ("10" < "2");
    # query "1" has no results (skipped) and "unjudged" has no judgments (ignored)
    assert list(pq.columns) == ["qid", "map", "P_5", "nDCG_exp@2", "num_rel", "gm_map"]
    assert pq["qid"].tolist() == ["10", "2"]
    assert pq["map"].tolist() == pytest.approx([1.0, 0.5])
    assert pq["P_5"].tolist() == pytest.approx([2 / 5, 1 / 5])
    assert pq["num_rel"].tolist() == [2, 1]
    # gm_map per query is log(max(AP, 1e-5)), as trec_eval -q prints it
    assert pq["gm_map"].tolist() == pytest.approx([0.0, math.log(0.5)])
    mean = evaluate(qrels, run, names)
    assert list(mean.columns) == ["map", "P_5", "nDCG_exp@2", "num_rel", "gm_map", "num_q"]
    assert int(mean["num_q"].iloc[0]) == 2
    assert mean["map"].iloc[0] == pytest.approx(0.75)
    assert mean["num_rel"].iloc[0] == 3                   # totals, as trec_eval
    assert mean["gm_map"].iloc[0] == pytest.approx(math.sqrt(0.5))
    assert mean["nDCG_exp@2"].iloc[0] == pytest.approx(pq["nDCG_exp@2"].mean())


def test_complete_scores_missing_queries_as_zero():
    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    run = {"1": {"a": 1.0}}
    assert value("AP", qrels, run) == 1.0
    out = evaluate(qrels, run, ["AP", "nDCG_exp@5", "judged@5", "num_rel", "num_ret", "num_q"],
                   complete=True, per_query=True)
    assert "num_q" not in out.columns  # a count over queries, not a per-query value
    assert out["qid"].tolist() == ["1", "2"]
    assert out["map"].tolist() == [1.0, 0.0]
    assert out["nDCG_exp@5"].tolist() == [1.0, 0.0]
    assert out["judged@5"].tolist() == [0.2, 0.0]
    assert out["num_rel"].tolist() == [1, 1]  # trec_eval -c still counts its judgments
    assert out["num_ret"].tolist() == [1, 0]  # ... but zeroes num_ret of its stand-in ranking
    summary = evaluate(qrels, run, ["num_ret", "num_q"], complete=True)
    assert summary["num_ret"].iloc[0] == 1 and summary["num_q"].iloc[0] == 2
    assert value("AP", qrels, run, complete=True) == 0.5


def test_input_forms_agree(tmp_path):
    qrels_path = tmp_path / "qrels.txt"
    run_path = tmp_path / "run.txt"
    qrels_path.write_text("q1 0 a 1\nq1 0 b 2\nq2 0 c 1\n")
    run_path.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.5 t\nq1 Q0 z 3 0.1 t\nq2 Q0 c 1 1 t\n")
    names = ["AP", "nDCG@3", "nDCG_exp@3", "ERR@3"]
    from_paths = evaluate(str(qrels_path), run_path, names, per_query=True)
    from_frames = evaluate(
        pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "c"], "rel": [1, 2, 1]}),
        pd.DataFrame({"qid": ["q1", "q1", "q1", "q2"], "docno": ["a", "b", "z", "c"],
                      "score": [0.5, 0.5, 0.1, 1.0]}),
        names, per_query=True)
    from_dicts = evaluate({"q1": {"a": 1, "b": 2}, "q2": {"c": 1}},
                          {"q1": {"a": 0.5, "b": 0.5, "z": 0.1}, "q2": {"c": 1.0}},
                          names, per_query=True)
    pd.testing.assert_frame_equal(from_paths, from_frames)
    pd.testing.assert_frame_equal(from_paths, from_dicts)
    # tie a/b broken by docno descending: b (grade 2) first -> ideal order, nDCG = 1
    assert from_paths["ndcg_cut_3"].tolist() == pytest.approx([1.0, 1.0])


def test_bad_arguments():
    with pytest.raises(InvalidParameterError, match="at least one measure"):
        evaluate(QRELS, RUN, [])
    with pytest.raises(InvalidParameterError, match="list of names"):
        evaluate(QRELS, RUN, 10)
    with pytest.raises(InvalidParameterError, match="non-empty string"):
        evaluate(QRELS, RUN, ["AP", None])
    with pytest.raises(InvalidParameterError, match="relevance_level"):
        evaluate(QRELS, RUN, ["AP"], relevance_level="1")
    with pytest.raises(InvalidParameterError, match="run's id"):
        evaluate(QRELS, RUN, ["runid"])
    with pytest.raises(InputError):
        evaluate({"q": {"a": 1}}, {"other": {"a": 1.0}}, ["AP"])


def test_single_name_string_is_accepted():
    assert list(evaluate(QRELS, RUN, "P@5").columns) == ["P_5", "num_q"]


def test_pr_curve_points():
    # 4 relevant at ranks 1, 2, 4, 8: precision at the 1st..4th relevant = 1, 1, .75, .5.
    # trec_eval 10.0 turns recall level x into n = round(4x) relevant documents and takes the
    # best precision from the n-th relevant on: n = 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4 for
    # x = 0.0 ... 1.0. (trec_eval 9 / pytrec_eval use trunc(4x + 0.9) and give 0.5 at x = 0.8.)
    docs = ["r1", "r2", "n3", "r4", "n5", "n6", "n7", "r8"]
    qrels = {"q": {"r1": 1, "r2": 1, "r4": 1, "r8": 1}}
    run = {"q": {d: float(10 - i) for i, d in enumerate(docs)}}
    curve = pr_curve(qrels, run)
    assert curve["recall"].tolist() == pytest.approx(np.round(np.arange(11) / 10, 2))
    expected = [1.0] * 7 + [0.75] * 2 + [0.5] * 2
    assert curve["precision"].tolist() == pytest.approx(expected)
    assert value("11pt", qrels, run) == pytest.approx(np.mean(expected))


# --------------------------------------------------------------------------- golden files

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
NOT_PER_QUERY_VALUES = ("runid", "num_q", "relstring")


def _golden(name):
    out = []
    for line in (DATA / name).read_text().splitlines():
        measure, qid, value = line.split("\t")
        out.append((measure.strip(), qid, value))
    return out


@pytest.mark.parametrize(
    ("golden", "qrels", "run", "options"),
    [
        ("out.test.aq", "qrels.test", "results.test", {}),
        ("out.test.aql", "qrels.rel_level", "results.test", {"relevance_level": 2}),
        ("out.test.aqc", "qrels.test", "results.trunc", {"complete": True}),
    ],
)
def test_value_names_reproduce_trec_eval_golden_output(golden, qrels, run, options):
    """Every value trec_eval 10.0 printed, asked for by its printed name (``P_5``,
    ``iprec_at_recall_0.10``, ``relative_P_5``...), formatted as trec_eval formats it."""
    lines = [x for x in _golden(golden) if not x[0].startswith(NOT_PER_QUERY_VALUES)]
    names = sorted({m for m, _, _ in lines})
    per_q = evaluate(DATA / qrels, DATA / run, names, per_query=True, **options).set_index("qid")
    summary = evaluate(DATA / qrels, DATA / run, names, **options)
    assert list(per_q.columns) == names
    checked = 0
    for measure, qid, text in lines:
        ours = summary[measure].iloc[0] if qid == "all" else per_q.at[qid, measure]
        mine = f"{ours:6.4f}" if "." in text else str(int(ours))
        assert mine == text, (measure, qid)
        checked += 1
    assert checked > 300


# --------------------------------------------------------------------------- input agreement

@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\x1c"])
def test_non_ascii_whitespace_ids_score_the_same_from_file_and_frame(tmp_path, space):
    # U+00A0 etc. are part of a field for trec_eval (it splits on C isspace: ASCII only), in a
    # file and now in a DataFrame/dict too; "a" and "a<space>b" are different documents
    ab, cd, qid = f"a{space}b", f"c{space}d", f"q{space}1"
    qrels_path = tmp_path / "q.qrels"
    run_path = tmp_path / "r.run"
    qrels_path.write_text(f"{qid} 0 {ab} 1\n{qid} 0 {cd} 2\n{qid} 0 a 0\n{qid} 0 b 0\n")
    run_path.write_text(f"{qid} Q0 a 1 3.0 t\n{qid} Q0 {ab} 2 2.0 t\n{qid} Q0 {cd} 3 1.0 t\n"
                        f"{qid} Q0 b 4 0.5 t\n")
    names = ["AP", "P@1", "P@2", "P@3", "RR", "nDCG@4", "num_rel_ret"]
    from_files = evaluate(qrels_path, run_path, names, per_query=True)
    qrels_frame = pd.DataFrame({"qid": [qid] * 4, "docno": [ab, cd, "a", "b"],
                                "rel": [1, 2, 0, 0]})
    run_frame = pd.DataFrame({"qid": [qid] * 4, "docno": ["a", ab, cd, "b"],
                              "score": [3.0, 2.0, 1.0, 0.5]})
    from_frames = evaluate(qrels_frame, run_frame, names, per_query=True)
    from_dicts = evaluate({qid: {ab: 1, cd: 2, "a": 0, "b": 0}},
                          {qid: {"a": 3.0, ab: 2.0, cd: 1.0, "b": 0.5}}, names, per_query=True)
    pd.testing.assert_frame_equal(from_files, from_frames)
    pd.testing.assert_frame_equal(from_files, from_dicts)
    # by hand: ranking a (0), ab (1), cd (2), b (0); 2 relevant documents
    assert from_files["qid"].tolist() == [qid]
    row = from_files.iloc[0]
    assert row["map"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert (row["P_1"], row["P_2"], row["P_3"]) == pytest.approx((0, 1 / 2, 2 / 3))
    assert row["recip_rank"] == 0.5 and row["num_rel_ret"] == 2
    dcg = 1 / math.log2(3) + 2 / math.log2(4)       # trec_eval ndcg: linear gain
    assert row["ndcg_cut_4"] == pytest.approx(dcg / (2 + 1 / math.log2(3)))


def test_run_label_names_a_bad_dataframe_or_dict_run():
    qrels = {"1": {"a": 1, "b": 0}}
    with pytest.raises(InputError, match=r"^my run column 'score' row 1: 'x' is not a number"):
        evaluate(qrels, {"1": {"a": 1.0, "b": "x"}}, "map", run_label="my run")
    with pytest.raises(InputError, match=r"^my run: document 'a' is listed 2 times"):
        evaluate(qrels, pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "a"],
                                      "score": [1.0, 2.0]}), "map", run_label="my run")
    with pytest.raises(InputError, match=r"results in my run "):
        evaluate(qrels, {"2": {"a": 1.0}}, "map", run_label="my run")
    # the default names it "run", as before
    with pytest.raises(InputError, match=r"^run column 'score' row 1"):
        evaluate(qrels, {"1": {"a": 1.0, "b": "x"}}, "map")
    for bad in ("", None, 3):
        with pytest.raises(InvalidParameterError, match="run_label must be a non-empty string"):
            evaluate(qrels, {"1": {"a": 1.0}}, "map", run_label=bad)


def test_run_label_does_not_rename_a_file(tmp_path):
    run = tmp_path / "bad.run"
    run.write_text("1 Q0 a 1 1.0 t\n1 Q0 b 2 x t\n")
    with pytest.raises(InputError, match=r"bad\.run:2: score") as err:
        evaluate({"1": {"a": 1}}, run, "map", run_label="my run")
    assert "my run" not in str(err.value)


def test_negative_relevance_level_is_refused():
    # found by the offline audit: at -1, recall_5 came out 1.5 and map 1.375 (unjudged
    # retrieved documents counted as relevant hits, the relevant total counted judged ones)
    qrels = {"q1": {"d1": 1, "d2": 0}}
    run = {"q1": {"d1": 3.0, "d3": 2.0, "d4": 1.0}}
    with pytest.raises(InvalidParameterError, match="relevance_level must be >= 0"):
        evaluate(qrels, run, ["recall_5", "map"], relevance_level=-1)
    got = evaluate(qrels, run, ["recall_5"], relevance_level=0)
    assert got["recall_5"].iloc[0] == pytest.approx(1 / 2)  # d1 of {d1, d2}
