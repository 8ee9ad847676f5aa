"""Rows at ranks <= k and per-query sums over them: the building blocks of the measures
beyond trec_eval (CG, DCG, nDCG_exp, RR@k, ERR, R_cap, Best, fallout, judged, F).

:data:`CONVENTIONS` states the rules those measures share; the reference page prints it.
"""

from __future__ import annotations

import numpy as np

from onlineeval.errors import InvalidParameterError
from onlineeval.offline.ranking import Ranked

CONVENTIONS = """\
Which queries are evaluated, ranking and tie-breaking are the engine's (trec_eval's) rules,
so these measures and trec_eval's always score the same lists.

* Rank `r` counts from 1; `k` is a cutoff (none: the whole list). When the list is shorter
  than `k` the missing positions contribute nothing (gain 0, not relevant, not judged);
  judged@k still divides by `k`, as trec_eval's P@k does.
* A retrieved document without a qrels line is unjudged: gain 0, not relevant, not judged. A
  qrels line with a *negative* grade is read as trec_eval reads it — in the pool but not
  judged: gain 0, not relevant, not judged, not judged non-relevant.
* *Relevant* means grade >= the relevance level (trec_eval's `-l`, default 1; must be >= 0).
  Graded measures (CG, DCG, DCG_exp, nDCG_exp, ERR) use the grades themselves and ignore the
  relevance level, as trec_eval's ndcg does: a grade-1 document still has gain 1 at `-l 2`.
* A query with no relevant document scores 0 on RR@k, R_cap, F and Best (trec_eval's rule for
  its own measures). The graded measures score 0 when the query has no positive grade.
* An empty result list (a query missing from the run, under -c) scores 0 everywhere.
* Discount `1 / log2(r + 1)` as in trec_eval's ndcg. Linear gain = grade (Järvelin &
  Kekäläinen 2002); exponential gain = `2^grade - 1` (Burges et al. 2005).
"""


def check_cutoff(k: object) -> None:
    """Raise unless ``k`` is None or a positive integer."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1):
        raise InvalidParameterError(f"a cutoff k must be a positive integer; got {k!r}")


def top(data: Ranked, k: int | None) -> np.ndarray:
    """Boolean mask of the rows at ranks <= k."""
    check_cutoff(k)
    if k is None:
        return np.ones(len(data.rel), dtype=bool)
    return data.pos < k


def relevant(data: Ranked) -> np.ndarray:
    """``data.is_rel``, refusing a negative relevance level.

    Below 0 the engine's codes for "not in the qrels" (-1) and "negative grade" (-2) would
    pass ``rel >= level`` while |R| counts judged grades >= 0 only, so a measure could count
    an unjudged document as a relevant hit (R_cap above 1). Level 0 already makes every judged
    document relevant, so nothing is lost.
    """
    if data.relevance_level < 0:
        raise InvalidParameterError(
            f"relevance_level must be >= 0 for the measures beyond trec_eval (RR@k, R_cap, "
            f"F, fallout, Best); got {data.relevance_level}. Use 0 to count every judged "
            f"document as relevant"
        )
    return data.is_rel


def masked_sum(data: Ranked, mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per-query sum of ``values`` over the rows in ``mask``."""
    return np.bincount(data.seg[mask], weights=values[mask],
                       minlength=data.n_queries).astype(np.float64)


def gain(grade: np.ndarray, exponential: bool) -> np.ndarray:
    """Linear (grade) or exponential (2^grade - 1) gain; codes below 0 carry no gain."""
    g = np.maximum(grade, 0).astype(np.float64)
    return np.exp2(g) - 1.0 if exponential else g


def discount(pos: np.ndarray) -> np.ndarray:
    """1 / log2(rank + 1) for 0-based positions."""
    return 1.0 / np.log2(pos + 2.0)


def max_judged_grade(data: Ranked) -> np.ndarray:
    """Highest grade >= 0 judged for each query (-1 when it has no such judgment)."""
    present = data.rel_levels > 0
    highest = present.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1)
    return np.where(present.any(axis=1), highest, -1).astype(np.int64)
