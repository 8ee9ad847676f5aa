"""Team-draft multileaving (Schuth et al. 2014)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving import team_draft_distribution, team_draft_multileave

rankings = st.lists(st.integers(0, 10), unique=True, max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(rankings, min_size=2, max_size=4), st.integers(0, 2**32 - 1))
def test_multileave_properties(lists, seed):
    docs, teams = team_draft_multileave(lists, rng=seed)
    union = set().union(*map(set, lists))
    assert len(docs) == len(union) and set(docs) == union
    for i, (doc, team) in enumerate(zip(docs, teams, strict=True)):
        unplaced = [d for d in lists[team] if d not in docs[:i]]
        assert unplaced and doc == unplaced[0]
    for i in range(1, len(docs) + 1):
        prefix = set(docs[:i])
        if all(not set(r) <= prefix for r in lists):
            counts = Counter(teams[:i])
            picks = [counts[t] for t in range(len(lists))]
            assert max(picks) - min(picks) <= 1


def test_two_rankings_follow_the_team_draft_distribution():
    a, b = ["a", "b", "c", "d"], ["c", "a", "e", "f"]
    dist = team_draft_distribution(a, b, k=4, teams=("A", "B"))
    rng = np.random.default_rng(3)
    n = 6000
    counts = Counter(
        tuple(team_draft_multileave({"A": a, "B": b}, k=4, rng=rng).teams) for _ in range(n)
    )
    observed = [counts[tuple(t)] for (_, t), _ in dist]
    assert sum(observed) == n
    assert stats.chisquare(observed, [p * n for _, p in dist]).pvalue > 0.001


def test_first_pick_uniform_over_three_rankers():
    lists = {"x": [1, 2, 3], "y": [2, 3, 1], "z": [3, 1, 2]}
    n = 3000
    firsts = Counter(team_draft_multileave(lists, k=1, rng=s).teams[0] for s in range(n))
    assert stats.chisquare([firsts[t] for t in lists]).pvalue > 0.001


def test_needs_two_rankings():
    with pytest.raises(InvalidParameterError, match="at least two"):
        team_draft_multileave([[1, 2]], rng=0)
