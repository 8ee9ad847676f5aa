"""The statistics behind the readout's decisions: Holm levels, non-inferiority, MDE, verdicts.

**Holm's levels.** The primary family (every primary metric x treatment comparison) is
corrected by Holm's step-down procedure (:mod:`onlineeval.stats.multiple`): sorted by
p-value, the k-th smallest (1-based) of m is tested at ``alpha / (m - k + 1)`` as long as
every smaller one was rejected; after the first non-rejection nothing more is. Each primary
interval is drawn at the level its row was tested at — ``1 - alpha / (m - k + 1)`` up to and
including the first non-rejection, and that step's level after it — so a primary interval
excludes 0 exactly when Holm rejects the row (:func:`holm_levels`). With one primary metric
and one treatment this is the plain ``1 - alpha`` interval. (These intervals are consistent
with the decisions, not simultaneous: Bonferroni's ``1 - alpha / m`` intervals would cover
jointly but could include 0 for a row Holm rejects.)

**Non-inferiority** (guardrails). A guardrail with margin ``M > 0`` is tested one-sided at
``alpha``: for a metric where higher is better, H0: Δ <= −M against H1: Δ > −M, with
``t = (Δ + M) / se`` and ``p = P(T > t)``; where lower is better, H0: Δ >= M, ``t = (Δ − M) /
se``, ``p = P(T < t)``; T is Student t with the comparison's Welch–Satterthwaite df. A
relative margin ("2%") is tested the same way on the relative lift with its delta-method
standard error (so the control's value is not treated as known). The guardrail passes when
``p < alpha`` (shown to be within its margin) and fails otherwise.

**Standard errors** are read back from the comparison's two-sided ``1 - alpha`` interval:
``se = (ci_high − ci_low) / (2 t_{df}.isf(alpha / 2))`` — exactly the se the interval was
built from (:func:`onlineeval.stats.tests.compare`), for Δ and for the relative lift alike.

**MDE at the observed sample.** The per-unit standard deviation that gives the observed se
with the arms' mean size n̄ = (n_c + n_t) / 2 is ``sd = se sqrt(n̄ / 2)``; the MDE is
:func:`onlineeval.stats.power.mde` of that sd at n̄ units per arm (two-sided, at the row's
test level, power 0.8), i.e. about ``(z_{1−α/2} + z_{0.8}) se``. ``units_needed`` is the
units of both arms the observed Δ would need for that power:
``2 units_needed(sd, Δ)`` (:func:`onlineeval.stats.power.units_needed`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from onlineeval.readout.result import (
    DONT_SHIP,
    GUARDRAIL,
    INCONCLUSIVE,
    PRIMARY,
    SHIP,
    Decision,
    MetricRow,
)

BETTER = "better"
WORSE = "worse"
NO_DIFFERENCE = "not significant"
NON_INFERIOR = "non-inferior"
NOT_NON_INFERIOR = "fails non-inferiority"


def holm_levels(p_values: np.ndarray, alpha: float) -> np.ndarray:
    """The level (alpha') Holm tests each p-value at, in input order (module docstring); a
    null p-value gets ``alpha / m``."""
    p = np.asarray(p_values, dtype=float)
    ok = ~np.isnan(p)
    m = int(ok.sum())
    out = np.full(p.shape, alpha / max(m, 1))
    idx = np.flatnonzero(ok)
    order = idx[np.argsort(p[idx], kind="stable")]
    failed_level = None
    for k, i in enumerate(order):
        level = alpha / (m - k) if failed_level is None else failed_level
        out[i] = level
        if failed_level is None and not p[i] < level:
            failed_level = level
    return out


def t_quantile(level_alpha: float, df: float) -> float:
    """The two-sided critical value at ``level_alpha``: Student t with ``df``, normal when
    df is null."""
    if df is None or not np.isfinite(df):
        return float(stats.norm.isf(level_alpha / 2.0))
    return float(stats.t.isf(level_alpha / 2.0, df))


def se_from_interval(low: float, high: float, alpha: float, df: float) -> float:
    """The standard error a two-sided ``1 - alpha`` interval was built from."""
    return (high - low) / (2.0 * t_quantile(alpha, df))


def non_inferiority_p(estimate: float, se: float, df: float, margin: float,
                      better: str) -> float:
    """One-sided non-inferiority p-value (module docstring); null when undefined."""
    if not (np.isfinite(estimate) and np.isfinite(se)) or se <= 0:
        return math.nan
    dist = stats.norm if df is None or not np.isfinite(df) else stats.t(df)
    if better == "higher":
        return float(dist.sf((estimate + margin) / se))
    return float(dist.cdf((estimate - margin) / se))


def metric_verdict(row_verdict: str, role: str, significant: bool, estimate: float,
                   better: str | None, ni_p: float, alpha: float) -> str:
    """The verdict of one metric row: a guardrail's non-inferiority, or the direction of a
    significant difference (primary: after correction; secondary: unadjusted)."""
    if role == GUARDRAIL:
        if np.isfinite(ni_p) and ni_p < alpha:
            return NON_INFERIOR
        why = "" if row_verdict in ("significant", "not significant") else f" ({row_verdict})"
        return NOT_NON_INFERIOR + why
    if row_verdict not in ("significant", "not significant"):
        return row_verdict  # insufficient data / undefined: no direction is read
    if not significant:
        return NO_DIFFERENCE
    if better is None:
        return "higher" if estimate > 0 else "lower"
    up = estimate > 0
    return BETTER if up == (better == "higher") else WORSE


def _inconclusive_reason(r: MetricRow) -> str:
    from onlineeval.formatting import count, number, percent

    have = (r.result.units_control or 0) + (r.result.units_treatment or 0)
    text = (f"{r.metric}: Δ {number(r.result.estimate, signed=True)} "
            f"({percent(r.rel_lift)}), {r.verdict}")
    if np.isfinite(r.mde):
        text += (f"; detectable at the observed {count(have)} units (power 0.8): "
                 f"±{number(r.mde)} ({percent(r.mde_rel, signed=False)})")
    if np.isfinite(r.units_needed):
        more = max(0.0, r.units_needed - have)
        text += (f"; the observed Δ would need {count(r.units_needed)} units "
                 f"({count(more)} more)")
    return text


def decide(rows: list[MetricRow], treatment: str) -> Decision:
    """The verdict for ``treatment`` from its primary and guardrail rows (the rule:
    :data:`onlineeval.readout.result.VERDICT_RULE`)."""
    mine = [r for r in rows if r.treatment == treatment]
    primary = [r for r in mine if r.role == PRIMARY]
    guard = [r for r in mine if r.role == GUARDRAIL]
    worse = [f"{r.metric} is significantly worse after correction" for r in primary
             if r.verdict == WORSE]
    failed = [f"guardrail {r.metric} {r.verdict}" for r in guard if r.verdict != NON_INFERIOR]
    if worse or failed:
        return Decision(treatment, DONT_SHIP, tuple(worse + failed))
    if primary and all(r.verdict == BETTER for r in primary):
        return Decision(treatment, SHIP, tuple(
            [f"{r.metric} is significantly better after correction" for r in primary]
            + [f"guardrail {r.metric} is non-inferior" for r in guard]))
    return Decision(treatment, INCONCLUSIVE, tuple(
        _inconclusive_reason(r) for r in primary if r.verdict != BETTER))
