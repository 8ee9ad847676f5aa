"""RBO (Webber, Moffat & Zobel 2010) against hand computations and an independent sum."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onlineeval.errors import InputError, InvalidParameterError
from onlineeval.offline.rbo import rbo, rbo_lists


def test_even_lists_by_hand():
    # S = a b c, T = b a d, p = 0.9: X_1 = 0, X_2 = 2, X_3 = 2
    # RBO_EXT = X_3/3 p^3 + (1-p)/p (X_2/2 p^2 + X_3/3 p^3) = 0.486 + (0.1/0.9)(0.81 + 0.486)
    #         = 0.486 + 0.144 = 0.630
    assert rbo_lists(["a", "b", "c"], ["b", "a", "d"], p=0.9) == pytest.approx(0.630, abs=1e-12)
    # truncated: (1-p)(p^1 X_2/2 + p^2 X_3/3) = 0.1 (0.9 + 0.54) = 0.144
    assert rbo_lists(["a", "b", "c"], ["b", "a", "d"], p=0.9, extrapolate=False) == \
        pytest.approx(0.144, abs=1e-12)


def test_uneven_lists_by_hand():
    # S = a b (s = 2), L = b c a (l = 3), p = 0.5: X_1 = 0, X_2 = 1, X_3 = 2, X_s = 1
    # (1-p)/p = 1; sum_d X_d/d p^d = 1/2 * 1/4 + 2/3 * 1/8 = 5/24
    # tail d = 3: X_s (3-2)/(2*3) p^3 = 1/48;  last term (1/3 + 1/2) / 8 = 5/48
    # total = 10/48 + 1/48 + 5/48 = 1/3
    assert rbo_lists(["a", "b"], ["b", "c", "a"], p=0.5) == pytest.approx(1 / 3, abs=1e-12)
    # symmetric in its arguments
    assert rbo_lists(["b", "c", "a"], ["a", "b"], p=0.5) == pytest.approx(1 / 3, abs=1e-12)


def test_depth_cuts_both_lists():
    # depth 2: S = a b, T = b a -> identical sets at depth 2, X_1 = 0, X_2 = 2
    # RBO_EXT = 1 * p^2 + (1-p)/p (p^2) = 0.81 + 0.09 = 0.9
    assert rbo_lists(["a", "b", "c"], ["b", "a", "d"], p=0.9, depth=2) == \
        pytest.approx(0.9, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 40])
@pytest.mark.parametrize("p", [0.5, 0.9, 0.98])
def test_identities(n, p):
    docs = [f"d{i}" for i in range(n)]
    other = [f"x{i}" for i in range(n)]
    assert rbo_lists(docs, docs, p=p) == pytest.approx(1.0, abs=1e-12)
    assert rbo_lists(docs, other, p=p) == 0.0
    # without extrapolation, identical lists of length n score 1 - p^n
    assert rbo_lists(docs, docs, p=p, extrapolate=False) == pytest.approx(1 - p**n, abs=1e-12)


def test_empty_rankings():
    assert rbo_lists([], ["a"]) == 0.0
    assert math.isnan(rbo_lists([], []))


def test_bad_parameters():
    for bad in (0, 1, 1.5, -0.1, True, "0.9"):
        with pytest.raises(InvalidParameterError, match="strictly between 0 and 1"):
            rbo_lists(["a"], ["a"], p=bad)
    with pytest.raises(InvalidParameterError, match="positive integer"):
        rbo_lists(["a"], ["a"], depth=0)
    with pytest.raises(InvalidParameterError, match="more than once"):
        rbo_lists(["a", "a"], ["a"])


def _brute_force(a, b, p, depth=50_000):
    """RBO_EXT as (1-p) Σ p^(d-1) A_d with the paper's extrapolated agreement A_d."""
    s_list, l_list = (a, b) if len(a) <= len(b) else (b, a)
    s, ln = len(s_list), len(l_list)

    def overlap(d):
        return len(set(s_list[:d]) & set(l_list[:d]))

    x_s, x_l = overlap(s), overlap(ln)
    total = 0.0
    for d in range(1, depth + 1):
        if d <= s:
            agree = overlap(d) / d
        elif d <= ln:
            agree = (overlap(d) + x_s * (d - s) / s) / d
        else:
            agree = (x_l - x_s) / ln + x_s / s
        total += (1 - p) * p ** (d - 1) * agree
        if p ** d < 1e-16:
            break
    return total


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 12), unique=True, min_size=1, max_size=10),
    st.lists(st.integers(0, 12), unique=True, min_size=1, max_size=10),
    st.sampled_from([0.3, 0.7, 0.9]),
)
def test_matches_brute_force_sum(a, b, p):
    got = rbo_lists(a, b, p=p)
    assert got == pytest.approx(_brute_force(a, b, p), abs=1e-9)
    assert 0.0 <= got <= 1.0 + 1e-12
    assert got == pytest.approx(rbo_lists(b, a, p=p), abs=1e-12)


def test_runs_per_query_with_trec_eval_tie_breaking():
    # query 1: scores tie, trec_eval orders ties by docno descending -> run_a ranks c, b, a
    run_a = pd.DataFrame({"qid": ["1", "1", "1", "2"], "docno": ["a", "b", "c", "x"],
                          "score": [1.0, 1.0, 1.0, 3.0]})
    run_b = {"1": ["c", "b", "a"], "3": ["y"]}
    out = rbo(run_a, run_b, p=0.9)
    assert list(out.columns) == ["qid", "rbo"]
    assert out["qid"].tolist() == ["1", "2", "3"]
    assert out["rbo"].tolist() == pytest.approx([1.0, 0.0, 0.0], abs=1e-12)
    # scored dict input ranks the same way
    out2 = rbo({"1": {"a": 1.0, "b": 1.0, "c": 1.0}}, {"1": ["a", "b", "c"]}, p=0.5)
    # c b a vs a b c: X_1 = 0, X_2 = 1, X_3 = 3 -> 1 * 1/8 + 1 * (1/2 * 1/4 + 1/8)
    assert out2["rbo"].tolist() == pytest.approx([0.125 + 0.125 + 0.125], abs=1e-12)


def test_duplicate_document_in_a_run_names_the_query():
    run = pd.DataFrame({"qid": ["7", "7"], "docno": ["a", "a"], "score": [1.0, 0.5]})
    with pytest.raises(InputError, match="query '7'.*more than once"):
        rbo(run, {"7": ["a"]})


def test_runs_from_trec_files(tmp_path):
    a = tmp_path / "a.run"
    b = tmp_path / "b.run"
    a.write_text("1 Q0 x 1 3.0 A\n1 Q0 y 2 2.0 A\n1 Q0 z 3 1.0 A\n")
    b.write_text("1 Q0 y 1 9 B\n1 Q0 x 2 8 B\n1 Q0 w 3 7 B\n")
    # x y z vs y x w: the first example of test_even_lists_by_hand (0.630 at p = 0.9)
    out = rbo(str(a), b, p=0.9)
    assert out["rbo"].tolist() == pytest.approx([0.630], abs=1e-12)
    assert rbo(a, a)["rbo"].tolist() == pytest.approx([1.0], abs=1e-12)


_GOOD = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.0, 1.0]})
# each bad input with the part of the reader's message that says what is wrong with it
_BAD_RUNS = [
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, "high"]}),
     r"column 'score' row 1: 'high' is not a number"),
    (pd.DataFrame({"qid": ["1"], "docno": ["a"]}), r"DataFrame needs columns qid, docno, score"),
    (pd.DataFrame({"qid": ["1"], "docno": ["a b"], "score": [1.0]}),
     r"column 'docno' row 0: 'a b' is empty or contains whitespace"),
    ({"1": {"a": 1.0, "b": "high"}}, r"column 'score' row 1: 'high' is not a number"),
    ({"1": {"a": 1.0}, "2": 5}, r"dict must map qid -> \{docno: score\}; qid '2' maps to int"),
    (42, r"must be a file path, a DataFrame"),
]


@pytest.mark.parametrize(("bad", "problem"), _BAD_RUNS)
def test_a_bad_dataframe_or_dict_run_is_named_by_its_position(bad, problem):
    with pytest.raises(InputError, match=r"^rbo second run \(run_b\) .*" + problem) as second:
        rbo(_GOOD, bad)
    assert "first" not in str(second.value)
    with pytest.raises(InputError, match=r"^rbo first run \(run_a\) .*" + problem) as first:
        rbo(bad, _GOOD)
    assert "second" not in str(first.value)


def test_a_bad_run_file_is_named_by_path_and_line(tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 high t\n")
    with pytest.raises(InputError, match=r"bad\.run:2: score \(5th field\) must be a number"):
        rbo(_GOOD, bad)
