"""Small frozen result records of the statistics layer."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Comparison:
    """Treatment against control for one metric (fields are arrays when vectorised).

    ``abs_diff = treatment - control`` and ``rel_diff = treatment / control - 1`` (``nan``
    when the control value is 0), each with a two-sided ``1 - alpha`` confidence interval;
    ``p_value`` tests ``abs_diff == 0``.
    ``test`` names the procedure that produced the p-value and the intervals, and ``df``
    holds the degrees of freedom of its Student t reference distribution (``nan`` for the
    normal, rank and bootstrap procedures, and where the test is undefined).
    """

    control_value: np.ndarray
    treatment_value: np.ndarray
    abs_diff: np.ndarray
    abs_se: np.ndarray
    abs_ci_low: np.ndarray
    abs_ci_high: np.ndarray
    rel_diff: np.ndarray
    rel_ci_low: np.ndarray
    rel_ci_high: np.ndarray
    p_value: np.ndarray
    test: str
    df: np.ndarray = field(default_factory=lambda: np.float64(np.nan))


@dataclass(frozen=True)
class SRMResult:
    """Sample ratio mismatch check: chi-square goodness of fit of units per variant.

    ``mismatch`` is ``p_value < alpha``; when true the experiment's results are not to be
    trusted (assignment or logging is broken) until the cause is found.
    """

    statistic: float
    p_value: float
    units: dict[str, int] = field(default_factory=dict)
    expected_shares: dict[str, float] = field(default_factory=dict)
    mismatch: bool = False
    alpha: float = 0.001

    def to_dict(self) -> dict[str, object]:
        """The fields the CLI's JSON output carries."""
        return {
            "statistic": float(self.statistic),
            "p_value": float(self.p_value),
            "units": {k: int(v) for k, v in self.units.items()},
            "expected_shares": {k: float(v) for k, v in self.expected_shares.items()},
            "mismatch": bool(self.mismatch),
        }

    def message(self) -> str:
        """One human line describing the check."""
        counts = ", ".join(f"{k}={v}" for k, v in self.units.items())
        shares = ", ".join(f"{k}={v:.4g}" for k, v in self.expected_shares.items())
        if self.mismatch:
            return (
                f"SAMPLE RATIO MISMATCH: units per variant ({counts}) do not fit the expected "
                f"split ({shares}); chi-square = {self.statistic:.3f}, p = {self.p_value:.3g} "
                f"< {self.alpha:g}. Assignment or logging is broken: the results below are "
                "not trustworthy until the cause is found."
            )
        return (
            f"sample ratio check passed: units {counts}, expected shares {shares}, "
            f"chi-square = {self.statistic:.3f}, p = {self.p_value:.3g}"
        )
