"""The experiment readout as one frozen record: :class:`Readout`.

:func:`onlineeval.readout` computes it; the terminal table, the JSON/CSV outputs and the HTML
readout all show the fields below and nothing else, so every output carries the same numbers.

:class:`Readout` (one experiment):

- ``experiment`` — the ``searches.experiment`` read out (None: the log has none);
  ``designs`` — ``("ab",)``, ``("interleaving",)`` or both;
- ``control`` — the control variant; ``treatments`` — the treatment variants (A/B/n: each
  one is compared with the control on its own);
- ``alpha`` — the level of every test; ``power`` — the power the MDE is computed for (0.8);
- ``family`` — the primary metrics: the one multiple-testing family (Holm's step-down over
  the primary metric x treatment comparisons, ``correction``); ``family_size`` — its size;
- ``window`` (:class:`Window`) — the bounds given and the first/last exposure analysed, and
  the calendar days they span;
- ``unit`` — the randomization unit column; ``units`` — units per variant (A/B);
- ``srm`` (:class:`SRM`) — the sample ratio check: p-value, status (``ok``/``mismatch``),
  expected and observed units per variant;
- ``metrics`` — one :class:`MetricRow` per metric and treatment: role (primary, guardrail,
  secondary), control and treatment values, the comparison (:class:`ComparisonResult`:
  ``estimate`` = Δ = treatment − control with its interval, ``p_value``, ``p_adjusted``
  within the primary family), relative lift with its interval, the guardrail's
  non-inferiority test, the MDE at the observed sample and the units an observed effect
  would need, and the metric's verdict;
- ``decisions`` — one :class:`Decision` per treatment: ``ship``, ``don't ship`` or
  ``inconclusive`` with the reasons; ``rule`` — the rule, as text (:data:`VERDICT_RULE`);
- ``interleaving`` (:class:`InterleavingSection`) — the treatment team's Δ_AB, wins /
  losses / ties, the per-user CI and p, the per-query breakdown and the sensitivity figure;
- ``offline`` — the offline comparison of the runs, when runs and qrels are given;
- ``counterfactual`` (:class:`onlineeval.readout.counterfactual.CounterfactualSection`) —
  the counterfactual prediction of the A/B from logged data, when runs and a logging log
  are given;
- ``over_time`` — the effect of each primary metric over time
  (:func:`onlineeval.abtest.effect_over_time`): ``{"day": cumulative Δ with its CI per
  calendar day, "exposure_day": Δ per day since a unit's first exposure}`` (None without
  timestamps);
- ``segments`` — with a segment column, ``{"column": it, "effects": Δ per segment of each
  primary metric and treatment (Holm over the segments), "heterogeneity": Cochran's Q per
  metric and treatment}`` (:func:`onlineeval.abtest.segments.segment_effects`), else None;
- ``quantiles`` — the median and p90 of time to first click and of every numeric
  per-search column the log has, per arm, with treatment − control and intervals clustered
  by unit (Deng, Knoblich & Lu 2018: :func:`onlineeval.abtest.quantiles.quantile_effects`),
  not a correction family; None when the log has no such value;
- ``position_ctr`` — click-through rate per rank of each arm (control and treatments) in
  the window, from the A/B log's results (:func:`onlineeval.position_ctr`: ``variant``,
  ``rank``, ``shown``, ``clicked``, ``clicks``, ``ctr``); None without an A/B log with
  results;
- ``notes`` — what the readout warned about; ``excluded`` — rows left out, by reason.

:meth:`Readout.to_dict` gives all of it as JSON-ready values (null for undefined numbers,
ISO text for timestamps); :meth:`Readout.tables` as pandas DataFrames.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import pandas as pd

from onlineeval.formatting import plain, records
from onlineeval.stats.results import ComparisonResult

SHIP = "ship"
DONT_SHIP = "don't ship"
INCONCLUSIVE = "inconclusive"

#: the verdict rule, as the outputs state it
VERDICT_RULE = (
    "ship when every primary metric improves significantly after Holm's correction within "
    "the primary family and no guardrail fails its one-sided non-inferiority test; don't "
    "ship when a primary metric is significantly worse (after correction) or a guardrail "
    "fails its non-inferiority test (is not shown to be within its margin); otherwise "
    "inconclusive"
)

PRIMARY = "primary"
GUARDRAIL = "guardrail"
SECONDARY = "secondary"
ROLES = (PRIMARY, GUARDRAIL, SECONDARY)


def _json(value: Any) -> Any:
    """Any field value as JSON-ready data (records for frames, dicts for records)."""
    if isinstance(value, pd.DataFrame):
        return records(value)
    if hasattr(value, "to_dict") and not isinstance(value, pd.Series):
        return _json(value.to_dict())
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return plain(value)


@dataclass(frozen=True)
class Window:
    """The analysis window: ``start`` and ``end`` as given (None: unbounded), the first and
    last exposure analysed, and ``days``, the calendar days from the first exposure's date to
    the last's, both counted (None without timestamps)."""

    start: pd.Timestamp | None = None
    end: pd.Timestamp | None = None
    first_exposure: pd.Timestamp | None = None
    last_exposure: pd.Timestamp | None = None

    @property
    def days(self) -> int | None:
        if self.first_exposure is None or self.last_exposure is None:
            return None
        return int((pd.Timestamp(self.last_exposure).normalize()
                    - pd.Timestamp(self.first_exposure).normalize()).days) + 1

    def to_dict(self) -> dict[str, Any]:
        return {**{f.name: plain(getattr(self, f.name)) for f in fields(self)},
                "days": self.days}


@dataclass(frozen=True)
class SRM:
    """The sample ratio check (:mod:`onlineeval.stats.srm`): chi-square goodness of fit of
    the ``observed`` units per variant to ``expected`` (total units x expected share)."""

    p_value: float
    statistic: float
    alpha: float
    observed: dict[str, int]
    expected: dict[str, float]
    expected_shares: dict[str, float]

    @property
    def status(self) -> str:
        return "mismatch" if self.p_value < self.alpha else "ok"

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "p_value": plain(self.p_value),
                "statistic": plain(self.statistic), "alpha": self.alpha,
                "observed": dict(self.observed), "expected": _json(self.expected),
                "expected_shares": _json(self.expected_shares)}


@dataclass(frozen=True, eq=False)
class MetricRow:
    """One metric of one treatment against the control.

    ``result.estimate`` is Δ = treatment − control; its interval is at ``result.ci_level``:
    for a primary metric the level Holm tested the row at (so the interval excludes 0
    exactly when the row is significant after correction), else 1 − alpha (unadjusted:
    ``interval`` says which). ``result.p_value`` is unadjusted; ``result.p_adjusted`` is
    Holm's within the primary family (null for guardrails and secondary metrics).
    ``rel_lift`` = treatment / control − 1 with its delta-method interval at the same level.
    ``margin`` is a guardrail's non-inferiority margin (absolute, or relative to the
    control's value when ``margin_relative``); ``ni_p_value`` its one-sided p-value.
    ``mde`` (absolute) and ``mde_rel`` are the effects detectable with ``power`` at the
    observed units; ``units_needed`` the units (both arms) the observed Δ would need.
    ``df`` is the degrees of freedom of the t reference (Welch–Satterthwaite).
    """

    metric: str
    role: str
    control: str
    treatment: str
    control_value: float
    treatment_value: float
    result: ComparisonResult
    rel_lift: float
    rel_ci_low: float
    rel_ci_high: float
    better: str | None
    verdict: str
    interval: str
    margin: float | None = None
    margin_relative: bool = False
    ni_p_value: float = math.nan
    mde: float = math.nan
    mde_rel: float = math.nan
    units_needed: float = math.nan
    df: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: plain(getattr(self, f.name)) for f in fields(self)
               if f.name != "result"}
        out.update({k: plain(v) for k, v in self.result.to_dict().items()})
        return out


@dataclass(frozen=True)
class Decision:
    """The verdict for one treatment (``ship``, ``don't ship``, ``inconclusive``) and why."""

    treatment: str
    verdict: str
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"treatment": self.treatment, "verdict": self.verdict,
                "reasons": list(self.reasons)}


@dataclass(frozen=True)
class EventCredit:
    """The interleaving comparison credited by events instead of clicks (a team is credited
    for its results that led to an attributed event of type ``credit``;
    :func:`onlineeval.interleaving_readout` with ``credit=``), beside the click credit.
    ``impressions_with_events`` are the pages with such an event, ``unmatched`` the events
    that credit no result (no doc_id, not on the page, or attributed as the last search)."""

    credit: str
    result: ComparisonResult
    impressions_with_events: int
    wins: int
    losses: int
    ties: int
    unmatched: int
    winner: str | None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _json(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class Sensitivity:
    """How many A/B units the interleaving experiment's decision would have needed.

    With the A/B comparison of ``metric`` (Δ, standard error se, ``ab_units`` units in
    both arms, t_AB = Δ / se) and the interleaving test's t_IL (Δ_u mean over its se, with
    ``interleaving_users`` users): at the observed per-unit variances and effect, an A/B
    test with n units reaches |t| = |t_AB| sqrt(n / ab_units), so the same |t| (the same
    p-value, hence the same decision at any level) needs
    ``ab_units_needed = ab_units (t_IL / t_AB)^2``; ``ratio`` = that / interleaving_users.
    Both are null when the two t point in opposite directions (or one is undefined): no
    number of A/B units gives the same decision then.
    """

    metric: str
    ab_units: int
    ab_t: float
    interleaving_users: int
    interleaving_t: float
    ab_units_needed: float
    ratio: float

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True, eq=False)
class InterleavingSection:
    """The interleaving readout, from the treatment team's side.

    ``result.estimate`` is Δ_AB of ``treatment_team`` over ``control_team`` (> 0: the
    treatment won) with the user-resampling bootstrap interval and the per-user t test's
    p-value; ``wins`` / ``losses`` / ``ties`` are the treatment's decided pages.
    ``per_query`` is the per-query variant (Δ_q averaged over ``n_queries`` queries with a
    decided page; same tests) and ``queries`` the per-query counts and Δ_q.
    ``t_statistic`` is the per-user test's signed t (read back from its p-value and df).
    """

    experiment: str | None
    treatment_team: str
    control_team: str
    result: ComparisonResult
    impressions: int
    impressions_with_clicks: int
    wins: int
    losses: int
    ties: int
    users: int
    winner: str | None
    t_statistic: float = math.nan
    per_query: ComparisonResult | None = None
    n_queries: int | None = None
    queries: pd.DataFrame | None = None
    sensitivity: Sensitivity | None = None
    #: the same comparison credited by events (a log with an events table), else None
    event_credit: EventCredit | None = None
    #: without event credit: one line saying why and how to get it
    event_credit_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: _json(getattr(self, f.name)) for f in fields(self)}
        return out


@dataclass(frozen=True, eq=False)
class Readout:
    """An experiment's readout; the fields are described in the module docstring."""

    experiment: str | None
    designs: tuple[str, ...]
    control: str | None
    treatments: tuple[str, ...]
    alpha: float
    family: tuple[str, ...]
    family_size: int
    correction: str = "holm"
    power: float = 0.8
    unit: str = "user_id"
    window: Window | None = None
    units: dict[str, int] = field(default_factory=dict)
    srm: SRM | None = None
    metrics: tuple[MetricRow, ...] = ()
    decisions: tuple[Decision, ...] = ()
    rule: str = VERDICT_RULE
    interleaving: InterleavingSection | None = None
    offline: pd.DataFrame | None = None
    counterfactual: Any = None
    over_time: Any = None
    segments: Any = None
    quantiles: Any = None
    position_ctr: pd.DataFrame | None = None
    notes: tuple[str, ...] = ()
    excluded: dict[str, int] = field(default_factory=dict)

    @property
    def verdict(self) -> str | None:
        """The verdict when there is one treatment (else None: read ``decisions``)."""
        return self.decisions[0].verdict if len(self.decisions) == 1 else None

    def rows(self, role: str | None = None) -> list[MetricRow]:
        """The metric rows, or those of one role."""
        return [r for r in self.metrics if role is None or r.role == role]

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values (``json.dumps(..., allow_nan=False)`` works)."""
        out = {f.name: _json(getattr(self, f.name)) for f in fields(self)}
        out["verdict"] = self.verdict
        return out

    def tables(self) -> dict[str, pd.DataFrame]:
        """The readout as DataFrames: ``summary`` (one row per treatment: verdict, window,
        SRM), ``metrics`` (one row per metric and treatment), and where present ``srm``,
        ``interleaving``, ``queries``, ``offline``, ``over_time``, ``segments``,
        ``quantiles``, ``position_ctr``."""
        w = self.window.to_dict() if self.window is not None else {}
        srm = self.srm.to_dict() if self.srm is not None else {}
        summary = pd.DataFrame([{
            "experiment": self.experiment, "designs": "+".join(self.designs),
            "control": self.control, "treatment": d.treatment, "verdict": d.verdict,
            "reasons": "; ".join(d.reasons), "first_exposure": w.get("first_exposure"),
            "last_exposure": w.get("last_exposure"), "days": w.get("days"),
            "units_control": self.units.get(self.control) if self.control else None,
            "units_treatment": self.units.get(d.treatment),
            "srm_status": srm.get("status"), "srm_p_value": srm.get("p_value"),
            "alpha": self.alpha, "family": ",".join(self.family),
        } for d in self.decisions])
        out = {"summary": summary,
               "metrics": pd.DataFrame([r.to_dict() for r in self.metrics])}
        if self.srm is not None:
            out["srm"] = pd.DataFrame([
                {"variant": v, "observed": n, "expected": self.srm.expected.get(v),
                 "expected_share": self.srm.expected_shares.get(v)}
                for v, n in self.srm.observed.items()])
        if self.interleaving is not None:
            il = self.interleaving
            row = {k: v for k, v in il.to_dict().items()
                   if k not in ("result", "per_query", "queries", "sensitivity")}
            row.update(il.result.to_dict())
            if il.sensitivity is not None:
                row.update({f"sensitivity_{k}": v for k, v in il.sensitivity.to_dict().items()})
            out["interleaving"] = pd.DataFrame([row])
            if il.queries is not None:
                out["queries"] = il.queries
        for name in ("offline", "counterfactual", "over_time", "segments", "quantiles",
                     "position_ctr"):
            value = getattr(self, name)
            if isinstance(value, pd.DataFrame):
                out[name] = value
            elif isinstance(value, Mapping):
                out.update({f"{name}_{k}": v for k, v in value.items()
                            if isinstance(v, pd.DataFrame)})
            elif value is not None and hasattr(value, "to_frame"):
                out[name] = value.to_frame()
            elif value is not None and hasattr(value, "to_dict"):
                out[name] = pd.DataFrame([value.to_dict()])
        return out
