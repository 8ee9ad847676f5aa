"""The A/B part of the readout: one :func:`onlineeval.abtest` pass over the log (every
metric asked, no correction), then the readout's own family, intervals and verdicts.

The family is the primary metrics only (:mod:`onlineeval.readout.decide`: Holm within it,
intervals at Holm's levels), so asking for more secondary metrics or guardrails changes no
primary p-value. Secondary metrics carry their unadjusted p-value and ``1 - alpha``
interval, labelled so. Guardrails get a one-sided non-inferiority test against the user's
margin.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.errors import InvalidParameterError
from onlineeval.readout.decide import (
    holm_levels,
    metric_verdict,
    non_inferiority_p,
    se_from_interval,
    t_quantile,
)
from onlineeval.readout.result import GUARDRAIL, PRIMARY, SECONDARY, SRM, MetricRow, Window
from onlineeval.stats.multiple import adjust
from onlineeval.stats.power import mde, units_needed

_MARGIN = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(%?)\s*$")


@dataclass(frozen=True)
class Margin:
    """A non-inferiority margin: ``value`` > 0, absolute or (``relative``) a fraction of the
    control's value."""

    value: float
    relative: bool

    def text(self) -> str:
        from onlineeval.formatting import number

        return f"{number(100 * self.value)}%" if self.relative else number(self.value)


def parse_margin(metric: str, value: Any) -> Margin:
    """``0.01`` (absolute), ``"0.01"`` or ``"2%"`` (relative to the control's value)."""
    if isinstance(value, bool):
        value = None
    if isinstance(value, int | float) and math.isfinite(value) and value > 0:
        return Margin(float(value), False)
    m = _MARGIN.match(value) if isinstance(value, str) else None
    if m is not None and float(m.group(1)) > 0:
        if m.group(2):
            return Margin(float(m.group(1)) / 100.0, True)
        return Margin(float(m.group(1)), False)
    raise InvalidParameterError(
        f"the non-inferiority margin of {metric!r} must be a positive number (absolute, e.g. "
        f"0.005) or a percentage of the control's value (e.g. 2%); got {value!r}"
    )


def parse_margins(value: Mapping[str, Any] | str | None) -> dict[str, Margin]:
    """Margins per metric from a mapping or ``"M:MARGIN,M:MARGIN"``."""
    if value is None:
        return {}
    if isinstance(value, str):
        pairs = {}
        for part in (p.strip() for p in value.split(",") if p.strip()):
            name, sep, margin = part.partition(":")
            if not sep or not name.strip():
                raise InvalidParameterError(
                    f"non-inferiority margins are METRIC:MARGIN pairs separated by commas "
                    f"(e.g. abandonment_rate:2%,ctr:0.005); got {part!r}"
                )
            pairs[name.strip()] = margin
        value = pairs
    if not isinstance(value, Mapping):
        raise InvalidParameterError(
            f"non_inferiority must map metric names to margins; got {type(value).__name__}"
        )
    return {str(k): parse_margin(str(k), v) for k, v in value.items()}


def names(value: Sequence[str] | str | None) -> list[str]:
    """Metric names from a list or a comma-separated string, in order, once each."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",")]
    return list(dict.fromkeys(v for v in value if v))


@dataclass
class ABPart:
    rows: list[MetricRow]
    treatments: tuple[str, ...]
    units: dict[str, int]
    srm: SRM
    window: Window
    excluded: dict[str, int]
    experiment: str | None
    family_size: int
    frame: pd.DataFrame


def _direction(metric: str) -> str | None:
    from onlineeval.abtest.metrics import METRICS

    return METRICS.get(metric).better


def ab_part(logs: Any, *, experiment: str | None, control: str, treatments: list[str] | None,
            primary: list[str], guardrails: dict[str, Margin], secondary: list[str] | None,
            alpha: float, power: float, unit: str, start: Any, end: Any,
            srm_alpha: float, expected_split: Mapping[str, float] | None) -> ABPart:
    """The metric rows of every treatment, with the SRM check and the window."""
    from onlineeval.abtest import abtest
    from onlineeval.abtest.metrics import METRICS, ORDER, missing

    for name in [*primary, *guardrails]:
        METRICS.get(name)  # unknown names: the registry's error lists the metrics
        if _direction(name) is None:
            raise InvalidParameterError(
                f"{name!r} has no direction of improvement, so it cannot be a primary metric "
                "or a guardrail; give it as a secondary metric"
            )
    both = sorted(set(primary) & set(guardrails))
    if both:
        raise InvalidParameterError(f"a metric is either primary or a guardrail: {both}")
    if secondary is None:
        secondary = [n for n in ORDER if not missing(logs, METRICS.get(n))]
    secondary = [n for n in secondary if n not in primary and n not in guardrails]
    roles = {**{n: PRIMARY for n in primary}, **{n: GUARDRAIL for n in guardrails},
             **{n: SECONDARY for n in secondary}}
    df = abtest(logs, control=control, treatment=treatments, metrics=list(roles),
                unit=unit, alpha=alpha, correction="none", experiment=experiment,
                expected_split=expected_split, srm_alpha=srm_alpha, start=start, end=end)
    df = df.reset_index(drop=True)
    primary_rows = df.index[df["metric"].map(roles) == PRIMARY]
    levels = pd.Series(alpha, index=df.index, dtype=float)
    p_adj = pd.Series(math.nan, index=df.index, dtype=float)
    p = df.loc[primary_rows, "p_value"].to_numpy(dtype=float)
    levels[primary_rows] = holm_levels(p, alpha)
    p_adj[primary_rows] = adjust(p, "holm")
    family_size = int(np.count_nonzero(~np.isnan(p)))
    rows = []
    for i, rec in df.iterrows():
        rows.append(_row(rec, roles[rec["metric"]], guardrails.get(rec["metric"]), control,
                         alpha, float(levels[i]), float(p_adj[i]), family_size, len(primary_rows),
                         power))
    a = df.attrs
    srm = a["srm"]
    total = sum(srm["units"].values())
    w = a["window"]
    return ABPart(
        rows=rows, treatments=tuple(dict.fromkeys(df["variant"])),
        units=dict(srm["units"]),
        srm=SRM(p_value=srm["p_value"], statistic=srm["statistic"], alpha=srm_alpha,
                observed=dict(srm["units"]),
                expected={v: total * s for v, s in srm["expected_shares"].items()},
                expected_shares=dict(srm["expected_shares"])),
        window=Window(start=w.get("start"), end=w.get("end"),
                      first_exposure=w.get("first_exposure"),
                      last_exposure=w.get("last_exposure")),
        excluded={k: int(v) for k, v in a["excluded"].items()}, experiment=a["experiment"],
        family_size=family_size, frame=df,
    )


def _row(rec: pd.Series, role: str, margin: Margin | None, control: str, alpha: float,
         level: float, p_adjusted: float, family_size: int, comparisons: int,
         power: float) -> MetricRow:
    from onlineeval.stats.results import ComparisonResult

    df = float(rec["df"])
    est = float(rec["estimate"])
    se = se_from_interval(float(rec["ci_low"]), float(rec["ci_high"]), alpha, df)
    rel = float(rec["rel_diff"])
    rel_se = se_from_interval(float(rec["rel_ci_low"]), float(rec["rel_ci_high"]), alpha, df)
    better = _direction(rec["metric"])
    result = ComparisonResult(**{k: rec[k] for k in (
        "estimate", "ci_low", "ci_high", "ci_level", "p_value", "test", "n",
        "units_control", "units_treatment", "unit")})
    result = replace(result, n=int(result.n), units_control=int(result.units_control),
                     units_treatment=int(result.units_treatment))
    rel_lo, rel_hi = float(rec["rel_ci_low"]), float(rec["rel_ci_high"])
    if role == PRIMARY:
        q = t_quantile(level, df)
        result = replace(result.adjusted(p_adjusted, "holm", family_size),
                         ci_low=est - q * se, ci_high=est + q * se, ci_level=1.0 - level)
        rel_lo, rel_hi = rel - q * rel_se, rel + q * rel_se
        interval = (f"at Holm's level for this row, {100 * (1 - level):.4g}% (primary family "
                    f"of {comparisons}): excludes 0 exactly when significant after correction")
        significant = bool(p_adjusted < alpha)
        test_alpha = level
    else:
        interval = "unadjusted (not in the correction family)"
        significant = bool(rec["p_value"] < alpha)
        test_alpha = alpha if role == SECONDARY else min(2.0 * alpha, 0.999)
    ni_p = math.nan
    if margin is not None:
        if margin.relative:
            ni_p = non_inferiority_p(rel, rel_se, df, margin.value, better)
        else:
            ni_p = non_inferiority_p(est, se, df, margin.value, better)
    verdict = metric_verdict(str(rec["verdict"]), role, significant, est, better, ni_p, alpha)
    n_c, n_t = result.units_control, result.units_treatment
    mde_abs, need = math.nan, math.nan
    if np.isfinite(se) and se > 0 and min(n_c, n_t) >= 2:
        n_bar = (n_c + n_t) / 2.0
        sd = se * math.sqrt(n_bar / 2.0)
        mde_abs = float(mde(sd, n_bar, test_alpha, power))
        if est != 0 and np.isfinite(est):
            need = 2.0 * float(units_needed(sd, est, test_alpha, power))
    control_value = float(rec["control_value"])
    return MetricRow(
        metric=rec["metric"], role=role, control=control, treatment=rec["variant"],
        control_value=control_value, treatment_value=float(rec["treatment_value"]),
        result=result, rel_lift=rel, rel_ci_low=rel_lo, rel_ci_high=rel_hi, better=better,
        verdict=verdict, interval=interval,
        margin=None if margin is None else margin.value,
        margin_relative=bool(margin is not None and margin.relative), ni_p_value=ni_p,
        mde=mde_abs, mde_rel=mde_abs / control_value if control_value else math.nan,
        units_needed=need, df=df,
    )
