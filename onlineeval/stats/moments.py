"""First and second moments of per-unit vectors, and ratio metrics with delta-method variance.

A unit (the randomization unit, usually a user) carries a small vector of sums, e.g.
``(clicks, searches)``. An arm of an experiment is summarised by the number of units ``n``,
the mean vector and the sample covariance matrix (``ddof=1``) of those vectors. Every
statistic of :mod:`onlineeval.stats` is computed from this summary.

All functions are vectorised: ``n`` may have any shape ``S``, the means then have shape
``S + (k,)`` and the covariances ``S + (k, k)``; this is how the A/A calibration re-splits
one population hundreds of times without a Python loop.

Ratio metric (Deng, Knoblich & Lu 2018, "Applying the Delta Method in Metric Analytics")::

    R = sum(x) / sum(y) = mean(x) / mean(y)
    Var(R) ~= (s_xx - 2 R s_xy + R^2 s_yy) / (n * mean(y)^2)

where ``s`` are the sample (co)variances of the per-unit ``x`` and ``y``. This is the variance
of the mean of the per-unit linearisation ``(x_i - R y_i) / mean(y)``. It accounts for the
correlation of searches within a unit, which a per-search binomial variance ignores.
Edge cases: ``mean(y) == 0`` (no unit has any denominator) gives ``R = nan`` and
``Var = nan``; ``n < 2`` gives ``Var = nan`` (no variance estimate from one unit). When
every unit has the same ratio (``x_i = R y_i``) the linearisation is 0 and so is ``Var``;
the three terms above then cancel only up to rounding, so a result within
:data:`CANCELLATION` of the terms' magnitude (``s_xx + 2 |R s_xy| + R^2 s_yy``) is set to 0
(it could otherwise come out slightly negative and make the p-value a silent ``nan``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from onlineeval.errors import InvalidParameterError

#: a variance computed as a difference of terms and below this share of their magnitude is
#: rounding noise: with every unit's ratio equal, the residue measured on up to 200,000 units
#: stayed below 6e-15 of the terms. A real variance this small would need per-unit ratios
#: equal to about 6.5 significant digits.
CANCELLATION = 1e-13


def clamp_cancelled(var: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``var`` with values within ``CANCELLATION * scale`` of 0 (either sign) set to 0.

    ``scale`` is the magnitude of the terms whose difference gave ``var``; nan stays nan.
    """
    var = np.asarray(var, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(var) <= CANCELLATION * np.abs(scale), 0.0, var)


@dataclass(frozen=True)
class Moments:
    """Number of units, mean vector and sample covariance (ddof=1) of per-unit vectors.

    Attributes
    ----------
    n : numpy.ndarray
        Units, shape ``S`` (``()`` for a single arm).
    mean : numpy.ndarray
        Shape ``S + (k,)``.
    cov : numpy.ndarray
        Shape ``S + (k, k)``; ``nan`` where ``n < 2``.
    """

    n: np.ndarray
    mean: np.ndarray
    cov: np.ndarray

    @classmethod
    def from_units(cls, values: np.ndarray) -> Moments:
        """Moments of the rows of ``values``, shape ``S + (units, k)``, computed centred."""
        v = np.asarray(values, dtype=float)
        if v.ndim < 2:
            raise InvalidParameterError(
                f"per-unit values must be an array of units x variables; got shape {v.shape}"
            )
        n, k = v.shape[-2], v.shape[-1]
        shape = v.shape[:-2]
        if n == 0:
            return cls(np.zeros(shape), np.full(shape + (k,), np.nan),
                       np.full(shape + (k, k), np.nan))
        mean = v.mean(axis=-2)
        if n >= 2:
            d = v - mean[..., None, :]
            cov = np.swapaxes(d, -1, -2) @ d / (n - 1)
        else:
            cov = np.full(shape + (k, k), np.nan)
        return cls(np.full(shape, float(n)), mean, cov)

    @classmethod
    def from_sums(cls, n: np.ndarray, sums: np.ndarray, cross: np.ndarray) -> Moments:
        """Moments from ``n``, ``sum(v)`` and ``sum(v v^T)`` over units (broadcast over ``S``).

        Raw sums lose precision when the mean is large against the spread; callers that hold
        the per-unit rows should centre them first (see :func:`split_moments`).
        """
        n = np.asarray(n, dtype=float)
        sums = np.asarray(sums, dtype=float)
        cross = np.asarray(cross, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = sums / n[..., None]
            outer = mean[..., :, None] * mean[..., None, :]
            cov = (cross - n[..., None, None] * outer) / (n[..., None, None] - 1)
        cov = np.where((n >= 2)[..., None, None], cov, np.nan)
        return cls(n, mean, cov)


def split_moments(values: np.ndarray, assign: np.ndarray) -> Moments:
    """Moments of many subsets of the same units at once.

    Parameters
    ----------
    values : numpy.ndarray
        Per-unit vectors, shape ``(units, k)``.
    assign : numpy.ndarray
        0/1 (or boolean) membership, shape ``S + (units,)``: one subset per leading index.

    Returns
    -------
    Moments
        With ``n`` of shape ``S``. Values are centred on their overall mean before the sums
        are taken, so the covariances do not suffer from cancellation.
    """
    v = np.asarray(values, dtype=float)
    a = np.asarray(assign, dtype=float)
    shift = v.mean(axis=0)
    d = v - shift
    k = d.shape[1]
    n = a.sum(axis=-1)
    sums = a @ d
    cross = (a @ (d[:, :, None] * d[:, None, :]).reshape(len(d), k * k)).reshape(
        a.shape[:-1] + (k, k)
    )
    m = Moments.from_sums(n, sums, cross)
    return Moments(m.n, m.mean + shift, m.cov)


@dataclass(frozen=True)
class Estimate:
    """A point estimate and the variance of its sampling distribution (arrays broadcast)."""

    value: np.ndarray
    var: np.ndarray


def ratio(m: Moments, num: int, den: int) -> Estimate:
    """``mean(x) / mean(y)`` for variables ``num`` and ``den``, with delta-method variance.

    A per-unit mean is the special case of a ``den`` column that is 1 for every unit. See the module docstring for the formula and edge cases.
    """
    mx = m.mean[..., num]
    my = m.mean[..., den]
    sxx = m.cov[..., num, num]
    syy = m.cov[..., den, den]
    sxy = m.cov[..., num, den]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = mx / my
        var = clamp_cancelled(sxx - 2.0 * r * sxy + r * r * syy,
                              sxx + 2.0 * np.abs(r * sxy) + r * r * syy) / (m.n * my * my)
    return Estimate(r, var)


def ratio_gradient(m: Moments, num: int, den: int) -> np.ndarray:
    """Gradient of ``mean[num] / mean[den]`` with respect to the mean vector, shape ``S+(k,)``.

    The delta method: ``Var(f(mean)) ~= g^T Cov g / n`` with ``g`` this gradient. Used to
    linearise ratios for CUPED covariances.
    """
    g = np.zeros_like(m.mean)
    mx = m.mean[..., num]
    my = m.mean[..., den]
    with np.errstate(invalid="ignore", divide="ignore"):
        g[..., num] = 1.0 / my
        g[..., den] = -mx / (my * my)
    return g


def mean(m: Moments, col: int) -> Estimate:
    """Mean of one per-unit variable and the variance of that mean (``s^2 / n``)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return Estimate(m.mean[..., col], m.cov[..., col, col] / m.n)
