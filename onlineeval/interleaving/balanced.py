"""Balanced interleaving (Joachims 2003) and its own credit rule.

Merging: a coin decides once which ranking has priority. Two pointers ``ka`` and ``kb`` walk
down A and B; the ranking whose pointer is behind (or, when they are level, the one with
priority) offers its next document, which is appended unless it is already in the list, and
that ranking's pointer advances. Joachims stops as soon as either ranking runs out (his loop
runs while ``ka <= |A|`` and ``kb <= |B|``; ``fill=False`` does exactly that); by default
(``fill=True``) we then continue with the remaining documents of the other ranking, skipping
placed ones, so the merged list holds every distinct document (cut to ``k``). The two agree
whenever neither ranking runs out before ``k`` documents are placed.

Credit (Joachims 2003; also stated in Chapelle et al. 2012): let ``d`` be the clicked
document shown lowest in the merged list and ``k* = min(rank of d in A, rank of d in B)``
(1-based; a ranking that lacks ``d`` counts as infinity). Then ``h_A`` is the number of
clicked documents among the top ``k*`` of A, ``h_B`` among the top ``k*`` of B; the ranking
with more wins the page, equal positive counts tie, no click gives no outcome. This rule
needs both input rankings, which click logs do not carry (only ``results.team``), so balanced
outcomes are computed in Python, not by the log SQL.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence

from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving._random import RandomLike, as_generator
from onlineeval.interleaving.team_draft import check_ranking, resolve_k
from onlineeval.namespace import make_callable


def balanced(
    ranking_a: Sequence[Hashable], ranking_b: Sequence[Hashable], k: int | None = None,
    rng: RandomLike = None, a_first: bool | None = None, fill: bool = True,
) -> list[Hashable]:
    """Merge two rankings by balanced interleaving.

    Parameters
    ----------
    ranking_a, ranking_b
        Document ids in rank order; each lists a document at most once.
    k
        Length of the merged list; None (default) places every distinct document.
    rng
        Generator or seed for the one coin flip that gives A or B priority.
    a_first
        Fix the priority instead of flipping the coin (the coin is then not drawn).
    fill
        True (default): once either ranking runs out, append the other's remaining
        documents. False: stop there, as Joachims (2003) does.

    Returns
    -------
    list
        The merged list. There is no team column: use :func:`balanced_credit` to score clicks.
    """
    a = check_ranking(ranking_a, "ranking_a")
    b = check_ranking(ranking_b, "ranking_b")
    n = resolve_k(k, [a, b])
    if a_first is None:
        a_first = bool(as_generator(rng).random() < 0.5)
    merged: list[Hashable] = []
    placed: set[Hashable] = set()
    ka = kb = 0
    while len(merged) < n and ka < len(a) and kb < len(b):
        if ka < kb or (ka == kb and a_first):
            doc, ka = a[ka], ka + 1
        else:
            doc, kb = b[kb], kb + 1
        if doc not in placed:
            placed.add(doc)
            merged.append(doc)
    for doc in [*a[ka:], *b[kb:]] if fill else []:
        if len(merged) >= n:
            break
        if doc not in placed:
            placed.add(doc)
            merged.append(doc)
    return merged


def balanced_credit(
    ranking_a: Sequence[Hashable], ranking_b: Sequence[Hashable], merged: Sequence[Hashable],
    clicked: Iterable[Hashable],
) -> tuple[int, int]:
    """Credit ``(h_A, h_B)`` of one page under the balanced-interleaving rule (module doc).

    ``clicked`` are the clicked document ids (a document clicked twice counts once); each
    must be in ``merged``. No click gives ``(0, 0)``.
    """
    shown = {d: i for i, d in enumerate(merged)}
    clicks = set(clicked)
    missing = clicks - set(shown)
    if missing:
        raise InvalidParameterError(
            f"clicked documents {sorted(map(str, missing))} are not in the merged list"
        )
    if not clicks:
        return 0, 0
    lowest = max(clicks, key=shown.__getitem__)
    rank_a = {d: i + 1 for i, d in enumerate(ranking_a)}
    rank_b = {d: i + 1 for i, d in enumerate(ranking_b)}
    cut = min(rank_a.get(lowest, math.inf), rank_b.get(lowest, math.inf))
    if math.isinf(cut):
        raise InvalidParameterError(f"clicked document {lowest!r} is in neither ranking")
    cut = int(cut)
    return len(clicks & set(ranking_a[:cut])), len(clicks & set(ranking_b[:cut]))


# the module is callable as balanced(), so this name is the module in every import order
# (onlineeval.namespace)
make_callable(__name__)
