"""Heterogeneity of an effect across segments: Cochran's Q.

With ``k`` independent estimates ``d_s`` of the same effect (the treatment − control Δ in
each segment) and their variances ``v_s``, the fixed-effect pooled estimate is
``d = sum(w_s d_s) / sum(w_s)`` with ``w_s = 1 / v_s``, and

    Q = sum(w_s (d_s - d)^2)

is the Wald statistic of the null that every segment has the same effect (no treatment ×
segment interaction). Under it Q is approximately chi-square with ``k - 1`` degrees of
freedom; the approximation takes the variances as known, which is reasonable when every
segment has many units (the A/B callers leave segments with few units out). ``I^2 =
max(0, (Q - (k - 1)) / Q)`` is the share of the spread of the ``d_s`` beyond what their
sampling error explains (Higgins & Thompson 2002). The estimates must be independent: in the
A/B segment readout each unit belongs to exactly one segment.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from onlineeval.errors import InvalidParameterError

#: the test's name as results record it
COCHRAN_Q = "Cochran's Q (chi-square, k - 1 df)"


@dataclass(frozen=True)
class Heterogeneity:
    """Cochran's Q over ``k`` estimates (null statistic and p-value when ``k < 2`` or a
    variance is not positive and finite: then there is nothing to test)."""

    statistic: float
    df: int
    p_value: float
    pooled: float
    pooled_se: float
    i2: float
    k: int
    test: str = COCHRAN_Q

    def to_dict(self) -> dict[str, object]:
        return {"test": self.test, "statistic": self.statistic, "df": self.df,
                "p_value": self.p_value, "pooled": self.pooled, "pooled_se": self.pooled_se,
                "i2": self.i2, "k": self.k}


def cochran_q(estimates: np.ndarray, variances: np.ndarray) -> Heterogeneity:
    """Cochran's Q of independent ``estimates`` with their sampling ``variances``."""
    d = np.asarray(estimates, dtype=float).ravel()
    v = np.asarray(variances, dtype=float).ravel()
    if d.shape != v.shape:
        raise InvalidParameterError(
            f"one variance per estimate: got {d.size} estimates and {v.size} variances"
        )
    k = int(d.size)
    nan = float("nan")
    if k < 2 or not (np.all(np.isfinite(d)) and np.all(np.isfinite(v)) and np.all(v > 0)):
        return Heterogeneity(nan, max(k - 1, 0), nan, nan, nan, nan, k)
    w = 1.0 / v
    pooled = float(np.sum(w * d) / np.sum(w))
    q = float(np.sum(w * (d - pooled) ** 2))
    i2 = max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0
    return Heterogeneity(q, k - 1, float(stats.chi2.sf(q, k - 1)), pooled,
                         float(np.sqrt(1.0 / np.sum(w))), i2, k)
