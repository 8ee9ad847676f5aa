"""Team-draft multileaving (Schuth et al. 2014): team-draft with more than two teams.

The rankers draft in rounds: the teams with the fewest picks so far (among those that still
have an unplaced document) are the candidates, one of them is chosen uniformly at random and
places its highest-ranked unplaced document. Choosing uniformly among the teams level on
picks is the same as Schuth et al.'s random order of the rankers within each round. With two
rankings this is exactly :func:`~onlineeval.interleaving.team_draft` with the same ``fill``:
by default (``fill=True``) a ranking with no unplaced document left drops out and the others
continue; ``fill=False`` stops the list as soon as any ranking has none left (the published
two-ranker rule, generalised).
Credit is as in team-draft: each clicked
result counts for the team that placed it; the readout compares every pair of teams
(a pairwise preference matrix).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving._random import RandomLike, as_generator
from onlineeval.interleaving.team_draft import Interleaved, check_ranking, draft, resolve_k


def team_draft_multileave(
    rankings: Mapping[Hashable, Sequence[Hashable]] | Sequence[Sequence[Hashable]],
    k: int | None = None, rng: RandomLike = None, fill: bool = True,
) -> Interleaved:
    """Merge several rankings by team-draft multileaving.

    Parameters
    ----------
    rankings
        A mapping team label -> ranking, or a sequence of rankings (labels 0, 1, ...).
        At least two rankings.
    k
        Length of the merged list; None (default) places every distinct document.
    rng
        Generator or seed for choosing among teams level on picks.
    fill
        True (default): when a ranking runs out, the others keep drafting; False: the list
        ends there, so every team keeps within one pick of the others.

    Returns
    -------
    Interleaved
        ``(docs, teams)``; ``teams`` holds the labels.
    """
    if isinstance(rankings, Mapping):
        labels = list(rankings)
        lists = [check_ranking(rankings[t], f"ranking {t!r}") for t in labels]
    else:
        lists = [check_ranking(r, f"ranking {i}") for i, r in enumerate(rankings)]
        labels = list(range(len(lists)))
    if len(lists) < 2:
        raise InvalidParameterError(
            f"multileaving needs at least two rankings; got {len(lists)}"
        )
    gen = as_generator(rng)
    return draft(lists, labels, resolve_k(k, lists),
                 lambda c: c[int(gen.integers(len(c)))], fill=fill)
