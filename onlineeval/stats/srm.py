"""Sample ratio mismatch (SRM): are the units split between variants as designed?

Pearson chi-square goodness of fit (``scipy.stats.chisquare``) of the observed units per
variant against ``total * expected_share``, with ``k - 1`` degrees of freedom. A p-value below
``alpha`` (default 0.001, strict because the check runs on every experiment) flags a
mismatch: a broken assignment, a bot filter hitting one arm, or lost logs. Results of an
experiment with a mismatch are not trustworthy.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy import stats

from onlineeval.errors import InvalidParameterError
from onlineeval.levels import check_level
from onlineeval.stats.results import SRMResult

#: how far from 1 the expected shares may sum (three thirds typed as 0.333 sum to 0.999)
SPLIT_TOLERANCE = 1.001e-3


def normalise_split(
    variants: list[str], expected: Mapping[str, float] | None,
) -> dict[str, float]:
    """Expected share per variant: equal by default, else ``expected``.

    ``expected`` must name exactly the analysed variants with positive shares that sum to 1
    (within :data:`SPLIT_TOLERANCE`, so thirds typed as 0.333 pass; they are then rescaled to
    sum to exactly 1). Shares that do not sum to 1 are refused rather than rescaled: 0.6 and
    0.5 is more likely a typo than a design.
    """
    if expected is None:
        return {v: 1.0 / len(variants) for v in variants}
    missing = [v for v in variants if v not in expected]
    extra = [v for v in expected if v not in variants]
    if missing or extra:
        raise InvalidParameterError(
            f"the expected split must give a share for each analysed variant "
            f"{variants}; got {dict(expected)} (missing {missing}, not analysed {extra})"
        )
    weights = {}
    for v in variants:
        w = expected[v]
        if not isinstance(w, int | float) or not np.isfinite(w) or w <= 0:
            raise InvalidParameterError(
                f"expected share of variant {v!r} must be a positive number; got {w!r}"
            )
        weights[v] = float(w)
    total = sum(weights.values())
    if abs(total - 1.0) > SPLIT_TOLERANCE:
        shares = ", ".join(f"{v}={w:g}" for v, w in weights.items())
        raise InvalidParameterError(
            f"the expected split must give shares that sum to 1; got {shares} (sum "
            f"{total:.6g}): fix the shares, e.g. "
            + ", ".join(f"{v}={w / total:.4g}" for v, w in weights.items())
        )
    return {v: w / total for v, w in weights.items()}


def srm_test(
    units: Mapping[str, int], expected: Mapping[str, float] | None = None,
    alpha: float = 0.001,
) -> SRMResult:
    """Chi-square goodness of fit of ``units`` (variant -> count) to the expected split."""
    alpha = check_level(alpha)
    variants = list(units)
    if len(variants) < 2:
        raise InvalidParameterError(
            f"the sample ratio check needs at least two variants; got {variants}"
        )
    shares = normalise_split(variants, expected)
    observed = np.array([units[v] for v in variants], dtype=float)
    total = observed.sum()
    res = stats.chisquare(observed, f_exp=total * np.array([shares[v] for v in variants]))
    p = float(res.pvalue)
    return SRMResult(
        statistic=float(res.statistic), p_value=p,
        units={v: int(units[v]) for v in variants}, expected_shares=shares,
        mismatch=bool(p < alpha), alpha=float(alpha),
    )
