"""What every click model shares: parameters, pseudo-count updates, the EM loop.

Every probability a model estimates from counts gets the same Beta pseudo-counts ``prior =
(a, b)``: the update is ``(expected successes + a) / (expected trials + a + b)``, so the fit
is the maximum a posteriori estimate under a Beta(a + 1, b + 1) prior (``(0, 0)`` is plain
maximum likelihood), and a parameter with no data at all — a (query, document) never shown in
training — takes ``a / (a + b)``. EM then never decreases the log posterior (log-likelihood +
``sum(a log p + b log(1 - p))``), which is what :attr:`Params.history` records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from onlineeval.clickmodels.patterns import Patterns
from onlineeval.errors import InvalidParameterError

Prior = tuple[float, float]


@dataclass
class Params:
    """Fitted parameters: per (query, doc) pair (aligned with the training pairs), per rank
    (arrays indexed by rank, index 0 unused; UBM's is ``[rank, distance]``) and scalars."""

    pair: dict[str, np.ndarray] = field(default_factory=dict)
    rank: dict[str, np.ndarray] = field(default_factory=dict)
    scalar: dict[str, float] = field(default_factory=dict)


@dataclass
class FitTrace:
    """How the estimation went: the objective (log posterior) per iteration, for iterative
    models the number of iterations and whether the tolerance was reached."""

    history: list[float]
    iterations: int
    converged: bool


def check_prior(prior: object) -> Prior:
    try:
        a, b = (float(v) for v in prior)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"prior must be two pseudo-counts (a, b) >= 0; got {prior!r}") from None
    if not (a >= 0 and b >= 0 and np.isfinite(a) and np.isfinite(b)):
        raise InvalidParameterError(f"prior pseudo-counts must be finite and >= 0; got {prior!r}")
    return a, b


def beta_update(num: np.ndarray, den: np.ndarray, prior: Prior) -> np.ndarray:
    """(num + a) / (den + a + b); NaN where there is neither data nor prior."""
    a, b = prior
    total = den + a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (num + a) / np.where(total > 0, total, 1.0), np.nan)


def default_value(prior: Prior) -> float:
    """The estimate of a parameter that has no data: the prior's a / (a + b)."""
    a, b = prior
    return a / (a + b) if a + b > 0 else float("nan")


def log_prior(values: np.ndarray, prior: Prior) -> float:
    """sum(a log p + b log(1 - p)) over the finite entries (0 log 0 counts as 0)."""
    a, b = prior
    v = values[np.isfinite(values)]
    total = 0.0
    with np.errstate(divide="ignore"):
        if a:
            total += a * float(np.log(v).sum())
        if b:
            total += b * float(np.log1p(-v).sum())
    return total


def bernoulli_ll(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """log P(c) for c ~ Bernoulli(p), elementwise (log 0 = -inf)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.where(c, p, 1.0 - p))


def take_pair(values: np.ndarray, index: np.ndarray, default: float) -> np.ndarray:
    """``values[index]`` with ``default`` where index is -1 (unseen pair or padding)."""
    out = np.full(index.shape, default, dtype=float)
    ok = index >= 0
    out[ok] = values[index[ok]]
    return out


def take_rank(values: np.ndarray, rank: np.ndarray, default: float) -> np.ndarray:
    """``values[rank]`` with ``default`` for ranks beyond the array (padding has rank 0)."""
    out = np.full(rank.shape, default, dtype=float)
    ok = (rank > 0) & (rank < values.shape[0])
    out[ok] = values[rank[ok]]
    return out


def pair_sums(pat: Patterns, where: np.ndarray, values: np.ndarray | float) -> np.ndarray:
    """Sum of ``weight * values`` over positions selected by ``where``, per pair."""
    w = np.broadcast_to(pat.weight[:, None], pat.pair.shape)
    vals = np.broadcast_to(values, pat.pair.shape)
    return np.bincount(pat.pair[where], weights=(w * vals)[where],
                       minlength=len(pat.pairs)).astype(float)


def rank_sums(pat: Patterns, where: np.ndarray, values: np.ndarray | float,
              size: int) -> np.ndarray:
    """Sum of ``weight * values`` over positions selected by ``where``, per rank."""
    w = np.broadcast_to(pat.weight[:, None], pat.rank.shape)
    vals = np.broadcast_to(values, pat.rank.shape)
    return np.bincount(pat.rank[where], weights=(w * vals)[where], minlength=size).astype(float)


def run_em(step: Callable[[], float], max_iter: int, tol: float) -> FitTrace:
    """Call ``step`` (one E+M step returning the objective at the parameters it started
    from) until the objective gains less than ``tol`` (relative) or ``max_iter`` steps."""
    history: list[float] = []
    converged = False
    for _ in range(max_iter):
        history.append(step())
        if len(history) >= 2:
            gain = history[-1] - history[-2]
            if gain <= tol * max(1.0, abs(history[-1])):
                converged = True
                break
    return FitTrace(history=history, iterations=len(history), converged=converged)


def check_iterations(max_iter: object, tol: object) -> tuple[int, float]:
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InvalidParameterError(f"max_iter must be a whole number >= 1; got {max_iter!r}")
    try:
        t = float(tol)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        t = -1.0
    if not t >= 0:
        raise InvalidParameterError(f"tol must be a number >= 0; got {tol!r}")
    return int(max_iter), t
