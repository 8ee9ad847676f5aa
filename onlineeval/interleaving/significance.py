"""Significance of an interleaving comparison: a per-user test, a sign test, a bootstrap CI.

Δ_AB (Chapelle et al. 2012) = (wins_A + ties / 2) / (wins_A + wins_B + ties) − 0.5, in
[−0.5, 0.5]; positive means A is preferred. Its per-query variant computes Δ_q per query and
averages over the queries with a decided page.

Pages of one user are not independent (the same person, the same tastes, often the same
query again), so the headline test treats USERS as the independent units:

- :func:`user_test`: each user with a decided page gets a preference
  Δ_u = (wins_A,u + ties_u / 2) / decided_u − 0.5, and the mean of Δ_u over users is tested
  against 0 with a one-sample t test (``users − 1`` degrees of freedom; the same numbers as
  ``scipy.stats.ttest_1samp``). Every user weighs the same, however many pages they saw, so
  one heavy user (a bot, a tester) cannot decide the outcome. Under no preference each Δ_u
  has mean 0 (team-draft assigns teams by fair coin flips), so this tests the same null as
  Δ_AB. When every user has the same Δ_u (e.g. each user's every decided page was won by
  one team) the t statistic is 0/0; the test is then the exact two-sided sign test over
  users (``binomtest(users, users, 1/2)``), which is defined there, and the interval for the
  mean is null (a zero-width interval would claim certainty). Calibration on simulated
  experiments without a preference (users with their own tastes and 1 to ~15 decided pages;
  ``tests/interleaving/test_significance.py``): at α = 0.05 the per-user test rejects 5.6%
  with 5 users, 4.9% with 20, and 5.1% / 4.9% with 20 / 200 users of whom one has 300 pages;
  the page-level sign test rejects 8.9%, 14.5%, 82% and 72% of the same experiments.
- :func:`sign_test`: two-sided exact binomial test of wins_A against wins_B with p = 1/2
  (``scipy.stats.binomtest``); ties and pages without credit carry no sign and are left out.
  It treats pages (or queries) as independent, which they are not: a labelled secondary
  statistic only.
- :func:`bootstrap_ci`: percentile interval of Δ_AB over bootstrap resamples of USERS (with
  replacement, each resample as many users as observed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from onlineeval.errors import InvalidParameterError
from onlineeval.interleaving._random import RandomLike, as_generator
from onlineeval.levels import check_level
from onlineeval.progress import Progress
from onlineeval.stats.results import ComparisonResult

# scipy is imported where it is used: it is ~60 MiB of the process, which the interleaving
# readout would otherwise hold under DuckDB's peak (the DuckDB phase comes first, the
# statistics after it)

# cells (resamples x users, and resamples x queries for the per-query sums) per chunk:
# bounds memory to a few tens of MB
_CHUNK_CELLS = 2_000_000


def preference(wins_a: Any, wins_b: Any, ties: Any) -> np.ndarray:
    """The preference for A, elementwise: (wins_A + ties / 2) / (wins_A + wins_B + ties) − 0.5
    (Chapelle et al. 2012), in [−0.5, 0.5]; NaN where no page is decided. The one definition:
    Δ_AB, the per-query Δ_q, the per-user Δ_u and the agreement's per-query table use it."""
    wa, wb, t = (np.asarray(x, dtype=float) for x in (wins_a, wins_b, ties))
    decided = wa + wb + t
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(decided > 0, (wa + t / 2.0) / decided - 0.5, np.nan)


def delta_ab(wins_a: np.ndarray, wins_b: np.ndarray, ties: np.ndarray) -> np.ndarray:
    """Δ_AB per group along the last axis, averaged over groups with a decided page.

    With one group (last axis of length 1) this is the page-level Δ_AB; with one group per
    query it is the per-query variant. NaN when no group has a decided page.
    """
    wa, wb, t = (np.asarray(x, dtype=float) for x in (wins_a, wins_b, ties))
    decided = wa + wb + t
    d = preference(wa, wb, t)
    with np.errstate(invalid="ignore", divide="ignore"):
        n = np.sum(decided > 0, axis=-1)
        total = np.nansum(d, axis=-1)
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def sign_test(wins_a: int, wins_b: int) -> float:
    """Two-sided exact binomial test p-value of wins_A vs wins_B (NaN when both are 0)."""
    from scipy import stats

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
        decided page; NaN when there are no users, no resample has a decided page, or every
        resample gives the same Δ_AB (e.g. every decided page won by one team: a zero-width
        interval would claim a certainty the users do not give).
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer) \
            or n_resamples < 1:
        raise InvalidParameterError(f"n_resamples must be an integer >= 1; got {n_resamples!r}")
    confidence = check_level(confidence, "confidence")
    users = _codes(users)
    if users.size == 0:
        return math.nan, math.nan
    n_users = int(users.max()) + 1
    g = np.zeros(users.shape, dtype=np.int8) if groups is None else _codes(groups)
    n_groups = int(g.max()) + 1
    counts = _by_group((wins_a, wins_b, ties), users, g, n_users, n_groups)
    gen = as_generator(rng)
    # the chunk's sums are groups x resamples: with many queries that, not the users' weights,
    # is the larger array (10k users and 40k queries took 470 MB when only users counted).
    # The draws are the same whatever the chunk: one stream, consumed in order
    chunk = max(1, min(n_resamples, _CHUNK_CELLS // max(n_users, n_groups)))
    draws = np.empty(n_resamples)
    with Progress(label, total=n_resamples) as bar:
        for start in range(0, n_resamples, chunk):
            c = min(chunk, n_resamples - start)
            picked = gen.integers(0, n_users, size=(c, n_users))
            offsets = (np.arange(c) * n_users)[:, None]
            weights = np.bincount((picked + offsets).ravel(), minlength=c * n_users)
            weights = weights.reshape(c, n_users).astype(float)
            # (groups x users) @ (users x resamples) -> groups x resamples: sums of whole
            # numbers, exact in any order
            sums = [np.asarray(m @ weights.T).T for m in counts]
            draws[start:start + c] = delta_ab(*sums)
            bar.update(c)
    finite = draws[np.isfinite(draws)]
    if finite.size == 0 or np.ptp(finite) == 0:
        return math.nan, math.nan
    lo, hi = np.quantile(finite, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(lo), float(hi)


def _codes(x: Any) -> np.ndarray:
    """Integer codes as given (an int32 array stays one: no 8-byte copy per row)."""
    a = np.asarray(x)
    return a if a.dtype.kind in "iu" else a.astype(np.int64)


def _by_group(values: tuple[Any, ...], users: np.ndarray, groups: np.ndarray, n_users: int,
              n_groups: int) -> list[Any]:
    """The counts ``values`` as sparse (groups x users) matrices, a user's rows of one group
    added. They share one index: rows already in (group, user) order, as the per-query
    readout fetches them, are used as they are, so the matrices cost the counts themselves
    and one small index per row (4.5M rows: 160 MB), not a copy per matrix."""
    from scipy import sparse

    index = np.int32 if max(n_users, n_groups, users.size) < 2**31 else np.int64
    u, g = users.astype(index, copy=False), groups.astype(index, copy=False)
    data = [np.asarray(x, dtype=float) for x in values]
    ordered = bool(np.all((g[1:] > g[:-1]) | ((g[1:] == g[:-1]) & (u[1:] > u[:-1]))))
    if not ordered:
        order = np.lexsort((u, g))
        u, g, data = u[order], g[order], [x[order] for x in data]
        same = (g[1:] == g[:-1]) & (u[1:] == u[:-1])
        if same.any():
            first = np.flatnonzero(np.r_[True, ~same])
            u, g, data = u[first], g[first], [np.add.reduceat(x, first) for x in data]
    indptr = np.zeros(n_groups + 1, dtype=index)
    np.cumsum(np.bincount(g, minlength=n_groups), out=indptr[1:])
    return [sparse.csr_matrix((x, u, indptr), shape=(n_groups, n_users)) for x in data]


@dataclass(frozen=True, kw_only=True)
class UserTest(ComparisonResult):
    """The per-user preference test of :func:`user_test`: the shared result fields with
    ``estimate`` the mean over users of Δ_u, ``n`` the users with a decided page (the
    independent units the test counts), ``units_control`` and ``units_treatment`` the users
    given (each saw both teams, so both count every user), ``unit`` "user"; and the test's
    own fields below."""

    df: float  #: degrees of freedom of the t reference (nan for the sign test)
    se: float  #: standard error of the mean Δ_u (sd over users / sqrt(n); nan without a t test)
    top_user: int  #: row index of the user with the most decided pages (-1: none)
    top_user_share: float  #: that user's share of the decided pages
    effective_users: float  #: (sum of decided pages)^2 / sum of squares: Kish's count


def user_test(wins_a: np.ndarray, wins_b: np.ndarray, ties: np.ndarray,
              alpha: float = 0.05) -> UserTest:
    """Test the mean per-user preference against 0; one row per user (module docstring)."""
    from scipy import stats

    alpha = check_level(alpha)
    wa, wb, t = (np.asarray(x, dtype=float) for x in (wins_a, wins_b, ties))
    decided = wa + wb + t
    has = decided > 0
    n = int(has.sum())
    nan = math.nan

    def result(estimate: float, p: float, low: float, high: float, df: float, test: str,
               top: int, share: float, effective: float, se: float = nan) -> UserTest:
        return UserTest(estimate=estimate, ci_low=low, ci_high=high, ci_level=1.0 - alpha,
                        p_value=p, test=test, n=n, units_control=len(wa),
                        units_treatment=len(wa), unit="user", df=df, se=se, top_user=top,
                        top_user_share=share, effective_users=effective)

    if n == 0:
        return result(nan, nan, nan, nan, nan, "undefined: no decided page", -1, nan, nan)
    top = int(np.argmax(decided))
    share = float(decided[top] / decided.sum())
    effective = float(decided.sum() ** 2 / (decided ** 2).sum())
    d_u = preference(wa[has], wb[has], t[has])
    mean = float(d_u.mean())
    if n < 2:
        return result(mean, nan, nan, nan, nan,
                      "undefined: fewer than 2 users with a decided page", top, share,
                      effective)
    if np.ptp(d_u) == 0:
        if mean == 0:
            return result(mean, nan, nan, nan, nan, "undefined: every user's preference is 0",
                          top, share, effective)
        p = float(stats.binomtest(n, n, 0.5).pvalue)
        return result(mean, p, nan, nan, nan,
                      "exact sign test over users (every user's preference is the same, so "
                      "the t test is undefined)", top, share, effective)
    se = float(d_u.std(ddof=1)) / math.sqrt(n)
    df = float(n - 1)
    p = float(2.0 * stats.t.sf(abs(mean) / se, df))
    q = float(stats.t.isf(alpha / 2.0, df))
    return result(mean, p, mean - q * se, mean + q * se, df, USER_T, top, share, effective,
                  se)


#: the name of the headline test in the readout's ``test`` field
USER_T = "t test of per-user preference (users as units)"
