"""Properties of team-draft interleaving (Radlinski, Kurup & Joachims 2008)."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving import (
    outcome,
    team_draft,
    team_draft_credit,
    team_draft_distribution,
)

# two rankings drawn from a small pool of documents, so they overlap often
rankings = st.lists(st.integers(0, 12), unique=True, max_size=10)
ks = st.one_of(st.none(), st.integers(0, 14))


def _check_properties(a: list, b: list, k: int | None, docs: list, teams: list) -> None:
    union = set(a) | set(b)
    n = len(union) if k is None else min(k, len(union))
    assert len(docs) == len(teams) == n
    assert len(set(docs)) == n and set(docs) <= union
    own = {"A": a, "B": b}
    for i, (doc, team) in enumerate(zip(docs, teams, strict=True)):
        # each pick is the team's highest-ranked document not placed before it
        unplaced = [d for d in own[team] if d not in docs[:i]]
        assert unplaced and doc == unplaced[0]
    for team, ranking in own.items():
        ranks = [ranking.index(d) for d, t in zip(docs, teams, strict=True) if t == team]
        assert ranks == sorted(ranks)  # each team's documents in its own rank order
    for i in range(1, n + 1):
        prefix = set(docs[:i])
        if not set(a) <= prefix and not set(b) <= prefix:
            counts = Counter(teams[:i])
            assert abs(counts["A"] - counts["B"]) <= 1
    if n >= 2 and a and b:
        assert a[0] in docs and b[0] in docs


@settings(max_examples=300, deadline=None)
@given(rankings, rankings, ks, st.integers(0, 2**32 - 1))
def test_team_draft_properties(a, b, k, seed):
    docs, teams = team_draft(a, b, k=k, rng=seed)
    _check_properties(a, b, k, docs, teams)


def test_first_pick_is_fair_within_binomial_bound():
    a, b = list("abcdef"), list("fedcba")
    n = 4000
    first_a = sum(team_draft(a, b, k=4, rng=seed).teams[0] == "A" for seed in range(n))
    # two-sided exact binomial test of P(A first) = 1/2; fails by chance with prob. 0.001
    assert stats.binomtest(first_a, n, 0.5).pvalue > 0.001
    lo, hi = stats.binom.ppf([0.0005, 0.9995], n, 0.5)
    assert lo <= first_a <= hi


def _permissible(a: list, b: list, n: int) -> set[tuple[tuple, tuple]]:
    """All merged lists the rules allow, found by checking every team sequence of length n
    (an enumeration independent of the drafting loop under test)."""
    found = set()
    for labels in itertools.product("AB", repeat=n):
        docs: list = []
        ok = True
        for i, team in enumerate(labels):
            left = {t: [d for d in r if d not in docs] for t, r in (("A", a), ("B", b))}
            if not left[team]:
                ok = False
                break
            other = "B" if team == "A" else "A"
            picks = Counter(labels[:i])
            # with both rankings unexhausted, only a team with no more picks may pick
            if left[other] and picks[team] > picks[other]:
                ok = False
                break
            docs.append(left[team][0])
        if ok:
            found.add((tuple(docs), labels))
    return found


@pytest.mark.parametrize(
    ("a", "b", "k"),
    [
        (["x", "y", "z"], ["y", "x", "w"], None),
        (["x", "y", "z"], ["y", "x", "w"], 2),
        (["x", "y"], ["x", "y"], None),
        (["p"], ["q", "r", "s", "t"], None),
        ([], ["q", "r"], None),
        (["a", "b", "c", "d"], ["d", "c", "b", "a"], 3),
    ],
)
def test_output_is_always_a_permissible_interleaving(a, b, k):
    n = len(set(a) | set(b)) if k is None else min(k, len(set(a) | set(b)))
    allowed = _permissible(a, b, n)
    seen = set()
    for seed in range(400):
        docs, teams = team_draft(a, b, k=k, rng=seed)
        key = (tuple(docs), tuple(teams))
        assert key in allowed
        seen.add(key)
    assert seen == allowed  # every permissible interleaving actually occurs
    dist = team_draft_distribution(a, b, k=k)
    assert {(tuple(d), tuple(t)) for (d, t), _ in dist} == allowed
    assert sum(p for _, p in dist) == pytest.approx(1.0)


def test_exact_distribution_matches_sampling_frequencies():
    a, b = ["a", "b", "c", "d"], ["c", "a", "e", "f"]
    dist = team_draft_distribution(a, b, k=4)
    n = 6000
    rng = np.random.default_rng(7)
    counts = Counter(tuple(team_draft(a, b, k=4, rng=rng).teams) for _ in range(n))
    keys = [tuple(t) for (_, t), _ in dist]
    assert len(set(keys)) == len(keys)
    observed = [counts[key] for key in keys]
    expected = [p * n for _, p in dist]
    assert sum(observed) == n
    assert stats.chisquare(observed, expected).pvalue > 0.001


def test_hand_worked_example():
    # A = [1,2,3], B = [2,4,1]. Coin -> A: A places 1; B (fewer picks) places 2;
    # coin -> B: B's best unplaced is 4; A (fewer picks) skips placed 2 and places 3.
    a, b = [1, 2, 3], [2, 4, 1]
    coins = iter([0, 1])
    from onlineeval.interleaving.team_draft import draft

    merged = draft([a, b], ["A", "B"], 4, lambda c: c[next(coins)])
    assert merged.docs == [1, 2, 4, 3]
    assert merged.teams == ["A", "B", "B", "A"]


def test_exhausted_ranking_lets_the_other_continue():
    docs, teams = team_draft(["a"], ["b", "c", "d", "e"], rng=3)
    assert sorted(docs) == ["a", "b", "c", "d", "e"]
    assert teams.count("A") == 1 and teams.count("B") == 4
    assert docs[-3:] == ["c", "d", "e"]


def test_seed_and_generator_give_same_result_and_are_deterministic():
    a, b = list("abcdefgh"), list("hgfedcba")
    assert team_draft(a, b, 6, rng=11) == team_draft(a, b, 6, rng=np.random.default_rng(11))
    assert team_draft(a, b, 6, rng=11) == team_draft(a, b, 6, rng=11)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((["a", "a"], ["b"]), "twice"),
        (("abc", ["b"]), "not a single string"),
        ((["a"], ["b"], -1), "non-negative"),
        ((["a"], ["b"], 2.5), "non-negative"),
    ],
)
def test_bad_input_is_a_clear_error(args, message):
    with pytest.raises(InvalidParameterError, match=message):
        team_draft(*args, rng=0)


def test_bad_rng_is_a_clear_error():
    with pytest.raises(InvalidParameterError, match="rng must be"):
        team_draft(["a"], ["b"], rng="seed")


def test_credit_counts_distinct_clicked_results_per_team():
    teams = ["A", "B", "A", "B"]
    assert team_draft_credit(teams, [1, 1, 3]) == {"A": 2, "B": 0}
    assert team_draft_credit(teams, [2, 3]) == {"A": 1, "B": 1}
    assert team_draft_credit(teams, []) == {"A": 0, "B": 0}
    with pytest.raises(InvalidParameterError, match="outside"):
        team_draft_credit(teams, [5])


def test_outcome_rule():
    assert outcome(2, 1) == "a"
    assert outcome(0, 1) == "b"
    assert outcome(1, 1) == "tie"
    assert outcome(0, 0) == "none"
