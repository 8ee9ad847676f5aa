"""Significance of an interleaving comparison: a sign test and a user-level bootstrap CI.

Δ_AB (Chapelle et al. 2012) = (wins_A + ties / 2) / (wins_A + wins_B + ties) − 0.5, in
[−0.5, 0.5]; positive means A is preferred. Its per-query variant computes Δ_q per query and
averages over the queries with a decided page.

- :func:`sign_test`: two-sided exact binomial test of wins_A against wins_B with p = 1/2
  (``scipy.stats.binomtest``); ties and pages without credit carry no sign and are left out.
- :func:`bootstrap_ci`: percentile interval of Δ_AB over bootstrap resamples of USERS (with
  replacement, each resample as many users as observed). A user's pages are correlated, so
  users, not pages, are the independent units.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse, stats

from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving._random import RandomLike, as_generator
from onlineeval.progress import Progress

# cells (resamples x users) drawn per chunk: bounds memory to a few tens of MB
_CHUNK_CELLS = 2_000_000


def delta_ab(wins_a: np.ndarray, wins_b: np.ndarray, ties: np.ndarray) -> np.ndarray:
    """Δ_AB per group along the last axis, averaged over groups with a decided page.

    With one group (last axis of length 1) this is the page-level Δ_AB; with one group per
    query it is the per-query variant. NaN when no group has a decided page.
    """
    wa, wb, t = (np.asarray(x, dtype=float) for x in (wins_a, wins_b, ties))
    decided = wa + wb + t
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(decided > 0, (wa + t / 2.0) / decided - 0.5, np.nan)
        n = np.sum(decided > 0, axis=-1)
        total = np.nansum(d, axis=-1)
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def sign_test(wins_a: int, wins_b: int) -> float:
    """Two-sided exact binomial test p-value of wins_A vs wins_B (NaN when both are 0)."""
    n = int(wins_a) + int(wins_b)
    if n == 0:
        return math.nan
    return float(stats.binomtest(int(wins_a), n, 0.5, alternative="two-sided").pvalue)


def bootstrap_ci(
    wins_a: np.ndarray, wins_b: np.ndarray, ties: np.ndarray, users: np.ndarray,
    groups: np.ndarray | None = None, *, n_resamples: int = 1000, confidence: float = 0.95,
    rng: RandomLike = 0, label: str = "bootstrap",
) -> tuple[float, float]:
    """Percentile bootstrap CI of Δ_AB, resampling users.

    Parameters
    ----------
    wins_a, wins_b, ties
        Counts per row, a row being one user (or one user and query).
    users
        Integer code 0..U−1 of each row's user; rows of one user are drawn together.
    groups
        Integer code 0..G−1 of each row's query for the per-query Δ_AB; None: page-level.
    n_resamples
        Number of bootstrap resamples (≥ 1).
    confidence
        Coverage of the interval, in (0, 1).
    rng
        Generator or seed (default 0: the same data give the same interval).

    Returns
    -------
    (low, high)
        The (1−c)/2 and (1+c)/2 quantiles of the resampled Δ_AB, ignoring resamples with no
        decided page; NaN when there are no users or no resample has a decided page.
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer) \
            or n_resamples < 1:
        raise InvalidParameterError(f"n_resamples must be an integer >= 1; got {n_resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise InvalidParameterError(f"confidence must lie in (0, 1); got {confidence!r}")
    users = np.asarray(users, dtype=np.int64)
    if users.size == 0:
        return math.nan, math.nan
    n_users = int(users.max()) + 1
    g = np.zeros_like(users) if groups is None else np.asarray(groups, dtype=np.int64)
    n_groups = int(g.max()) + 1
    counts = [
        sparse.csr_matrix((np.asarray(x, dtype=float), (users, g)), shape=(n_users, n_groups))
        for x in (wins_a, wins_b, ties)
    ]
    gen = as_generator(rng)
    chunk = max(1, min(n_resamples, _CHUNK_CELLS // n_users))
    draws = np.empty(n_resamples)
    with Progress(label, total=n_resamples) as bar:
        for start in range(0, n_resamples, chunk):
            c = min(chunk, n_resamples - start)
            picked = gen.integers(0, n_users, size=(c, n_users))
            offsets = (np.arange(c) * n_users)[:, None]
            weights = np.bincount((picked + offsets).ravel(), minlength=c * n_users)
            weights = weights.reshape(c, n_users).astype(float)
            # (users x groups)^T @ (users x resamples) -> groups x resamples
            sums = [np.asarray(m.T @ weights.T).T for m in counts]
            draws[start:start + c] = delta_ab(*sums)
            bar.update(c)
    finite = draws[np.isfinite(draws)]
    if finite.size == 0:
        return math.nan, math.nan
    lo, hi = np.quantile(finite, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(lo), float(hi)
