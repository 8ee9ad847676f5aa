"""Balanced interleaving (Joachims 2003): merging and its credit rule."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving import balanced, balanced_credit

rankings = st.lists(st.integers(0, 12), unique=True, max_size=10)


def test_hand_worked_merge_and_credit():
    a, b = ["a", "b", "c", "d"], ["b", "e", "a", "f"]
    # A first: a (A1); b (B1); A2=b placed; e (B2); c (A3); B3=a placed; d (A4); f (B4)
    merged = balanced(a, b, a_first=True)
    assert merged == ["a", "b", "e", "c", "d", "f"]
    # B first: b (B1); a (A1); e (B2); A2=b placed; B3=a placed; c (A3); f (B4); d (A4)
    assert balanced(a, b, a_first=False) == ["b", "a", "e", "c", "f", "d"]
    # clicks on b and e: lowest clicked is e, rank 2 in B, absent from A -> k* = 2;
    # top-2 of A {a, b} holds 1 click, top-2 of B {b, e} holds 2: B wins
    assert balanced_credit(a, b, merged, ["b", "e"]) == (1, 2)
    # click on a only: rank 1 in A, 3 in B -> k* = 1: A {a} 1, B {b} 0
    assert balanced_credit(a, b, merged, ["a", "a"]) == (1, 0)
    # clicks on a and b: lowest is b, rank 2 in A, 1 in B -> k* = 1: A {a} 1, B {b} 1: tie
    assert balanced_credit(a, b, merged, ["a", "b"]) == (1, 1)
    assert balanced_credit(a, b, merged, []) == (0, 0)


@settings(max_examples=300, deadline=None)
@given(rankings, rankings, st.one_of(st.none(), st.integers(0, 14)), st.booleans())
def test_prefixes_hold_top_of_both_rankings_balanced(a, b, k, a_first):
    merged = balanced(a, b, k=k, a_first=a_first)
    union = set(a) | set(b)
    n = len(union) if k is None else min(k, len(union))
    assert len(merged) == n and len(set(merged)) == n and set(merged) <= union
    for i in range(1, n + 1):
        prefix = set(merged[:i])
        if set(a) <= prefix or set(b) <= prefix:
            break  # one ranking is used up; the rest is the other's tail
        # Joachims' property: the top i of the merged list is the union of a top-ka of A
        # and a top-kb of B with ka and kb differing by at most one
        splits = [
            (ka, kb) for ka in range(len(a) + 1) for kb in range(len(b) + 1)
            if abs(ka - kb) <= 1 and prefix == set(a[:ka]) | set(b[:kb])
        ]
        assert splits, (merged, i)


def test_priority_coin_is_fair():
    a, b = ["x", "y"], ["y", "x"]
    n = 3000
    firsts = Counter(balanced(a, b, k=1, rng=seed)[0] for seed in range(n))
    assert stats.binomtest(firsts["x"], n, 0.5).pvalue > 0.001


def test_clicks_must_be_shown():
    with pytest.raises(InvalidParameterError, match="not in the merged list"):
        balanced_credit(["a"], ["b"], ["a", "b"], ["c"])
