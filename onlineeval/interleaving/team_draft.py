"""Team-draft interleaving (Radlinski, Kurup & Joachims 2008) and its click credit.

Two rankers are teams that draft documents for one merged list. While fewer than ``k``
documents are placed, the team with fewer picks so far picks next, and a fair coin decides
when both have picked equally often; a team picks its highest-ranked document that is not
already placed. When one ranking has no unplaced document left, the other keeps picking alone
(``fill=True``, the default), so the page is as long as the rankings allow. The published
algorithm (Radlinski et al. 2008; restated by Chapelle et al. 2012) instead stops as soon as
either ranking has no unplaced document left (its loop runs while
``(∃i: A[i] ∉ I) ∧ (∃j: B[j] ∉ I)``): ``fill=False`` gives exactly that. The two agree whenever
neither ranking runs out before ``k`` documents are placed (e.g. both hold at least ``k``).
Filling gives the longer ranking extra, uncontested slots, so a ranker that returns more
results gains credit from that alone; the published rule keeps the team sizes within one.
A click is credited to the team that placed the clicked document.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple

from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving._random import RandomLike, as_generator
from onlineeval.namespace import make_callable


class Interleaved(NamedTuple):
    """A merged list: ``docs[i]`` is shown at rank ``i + 1`` and was placed by ``teams[i]``."""

    docs: list[Hashable]
    teams: list[Hashable]


def check_ranking(ranking: Sequence[Hashable], name: str) -> list[Hashable]:
    """The ranking as a list; a document listed twice is an error (ranks must be unique)."""
    if isinstance(ranking, str | bytes):
        raise InvalidParameterError(
            f"{name} must be a sequence of document ids, not a single string ({ranking!r})"
        )
    items = list(ranking)
    seen: set[Hashable] = set()
    for pos, doc in enumerate(items, start=1):
        if doc in seen:
            raise InvalidParameterError(
                f"{name} lists document {doc!r} twice (again at rank {pos}); a ranking must "
                "hold each document once — deduplicate it first"
            )
        seen.add(doc)
    return items


def resolve_k(k: int | None, rankings: Sequence[Sequence[Hashable]]) -> int:
    """``k`` checked; None means every distinct document of the rankings."""
    union = len({d for r in rankings for d in r})
    if k is None:
        return union
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InvalidParameterError(f"k must be a non-negative integer or None; got {k!r}")
    return min(k, union)


def draft(
    rankings: Sequence[Sequence[Hashable]], labels: Sequence[Hashable], k: int,
    choose: Callable[[list[int]], int], fill: bool = True,
) -> Interleaved:
    """The team-draft loop shared by two-team interleaving and multileaving.

    ``choose(candidates)`` returns one of the indices in ``candidates`` (all teams that have
    the fewest picks among those with an unplaced document left); it is only called when
    there are at least two candidates. ``fill=False`` stops as soon as any ranking has no
    unplaced document left (the published two-team rule).
    """
    placed: set[Hashable] = set()
    pointer = [0] * len(rankings)
    picks = [0] * len(rankings)
    docs: list[Hashable] = []
    teams: list[Hashable] = []
    while len(docs) < k:
        available = []
        for i, ranking in enumerate(rankings):
            while pointer[i] < len(ranking) and ranking[pointer[i]] in placed:
                pointer[i] += 1
            if pointer[i] < len(ranking):
                available.append(i)
        if not available or (not fill and len(available) < len(rankings)):
            break
        fewest = min(picks[i] for i in available)
        candidates = [i for i in available if picks[i] == fewest]
        team = candidates[0] if len(candidates) == 1 else choose(candidates)
        doc = rankings[team][pointer[team]]
        placed.add(doc)
        docs.append(doc)
        teams.append(labels[team])
        picks[team] += 1
    return Interleaved(docs, teams)


def team_draft(
    ranking_a: Sequence[Hashable], ranking_b: Sequence[Hashable], k: int | None = None,
    rng: RandomLike = None, teams: tuple[Hashable, Hashable] = ("A", "B"), fill: bool = True,
) -> Interleaved:
    """Merge two rankings by team-draft interleaving.

    Parameters
    ----------
    ranking_a, ranking_b
        Document ids in rank order (best first); each lists a document at most once.
    k
        Length of the merged list; None (default) places every distinct document. The
        result is shorter than ``k`` when the rankings hold fewer distinct documents.
    rng
        ``numpy.random.Generator`` or integer seed for the coin flips (None: unseeded).
    teams
        Labels written to the team column for ranking_a and ranking_b.
    fill
        True (default): when one ranking has no unplaced document left, the other keeps
        picking until the page holds ``k`` documents. False: stop there, exactly as the
        published algorithm (Radlinski et al. 2008) does; the page may then be shorter than
        ``k`` (empty when either ranking is empty). See the module docstring.

    Returns
    -------
    Interleaved
        ``(docs, teams)``, two lists of equal length.
    """
    a = check_ranking(ranking_a, "ranking_a")
    b = check_ranking(ranking_b, "ranking_b")
    if len(teams) != 2 or teams[0] == teams[1]:
        raise InvalidParameterError(f"teams must be two distinct labels; got {teams!r}")
    gen = as_generator(rng)
    return draft([a, b], list(teams), resolve_k(k, [a, b]),
                 lambda c: c[0] if gen.random() < 0.5 else c[1], fill=fill)


def team_draft_distribution(
    ranking_a: Sequence[Hashable], ranking_b: Sequence[Hashable], k: int | None = None,
    teams: tuple[Hashable, Hashable] = ("A", "B"), fill: bool = True,
) -> list[tuple[Interleaved, float]]:
    """Every merged list team-draft can produce, with its exact probability.

    Enumerates all sequences of coin flips (at most ``ceil(k / 2)`` are ever needed, one
    before each odd-numbered pick) and merges identical results. Probabilities sum to 1.
    Cost grows as ``2 ** ceil(k / 2)``: meant for k up to about 20. ``fill`` as in
    :func:`team_draft`.
    """
    a = check_ranking(ranking_a, "ranking_a")
    b = check_ranking(ranking_b, "ranking_b")
    n = resolve_k(k, [a, b])
    flips = (n + 1) // 2
    found: dict[tuple[tuple[Hashable, ...], tuple[Hashable, ...]], float] = {}
    for bits in itertools.product((0, 1), repeat=flips):
        it = iter(bits)
        merged = draft([a, b], list(teams), n, lambda c, it=it: c[next(it)], fill=fill)
        key = (tuple(merged.docs), tuple(merged.teams))
        found[key] = found.get(key, 0.0) + 0.5 ** flips
    return [(Interleaved(list(d), list(t)), p) for (d, t), p in found.items()]


def team_draft_credit(
    teams: Sequence[Hashable], clicked_ranks: Sequence[int],
) -> dict[Hashable, int]:
    """Credit per team: the number of distinct clicked results the team placed.

    ``clicked_ranks`` are 1-based ranks of the merged list; a rank clicked twice counts once.
    A click on a rank outside the list is an error. Teams without a click get 0.
    """
    credit: dict[Hashable, int] = {t: 0 for t in teams}
    for rank in set(clicked_ranks):
        if not 1 <= rank <= len(teams):
            raise InvalidParameterError(
                f"clicked rank {rank} is outside the merged list of {len(teams)} results"
            )
        credit[teams[rank - 1]] += 1
    return credit


def outcome(credit_a: int, credit_b: int) -> str:
    """``"a"`` or ``"b"`` for the team with more credit, ``"tie"`` when equal and > 0,
    ``"none"`` when neither has credit (no credited click)."""
    if credit_a > credit_b:
        return "a"
    if credit_b > credit_a:
        return "b"
    return "tie" if credit_a > 0 else "none"


# the module is callable as team_draft(), so this name is the module in every import order
# (onlineeval.namespace)
make_callable(__name__)
