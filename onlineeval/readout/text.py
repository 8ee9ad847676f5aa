"""The readout for a terminal (one screen, at most :data:`onlineeval.formatting.WIDTH`
columns) and as CSV rows; every number spelled by :mod:`onlineeval.formatting`."""

from __future__ import annotations

import textwrap
from typing import Any

import pandas as pd

from onlineeval.formatting import (
    WIDTH,
    count,
    fitted_table,
    number,
    percent,
    plain,
    pvalue,
    when,
)
from onlineeval.readout.counterfactual import counterfactual_lines
from onlineeval.readout.result import GUARDRAIL, PRIMARY, SECONDARY, MetricRow, Readout

_HEADINGS = {
    PRIMARY: "primary metrics — the correction family: Holm over {n} comparison(s); p is "
             "Holm-adjusted; intervals at Holm's level for the row",
    GUARDRAIL: "guardrails — one-sided non-inferiority at alpha (p of that test); "
               "intervals unadjusted",
    SECONDARY: "secondary metrics — p UNADJUSTED, intervals unadjusted (not in the family)",
}


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, subsequent_indent=indent or "  ") or [""]


def _lift(r: MetricRow) -> str:
    def bound(x: float) -> str:
        return percent(x).removesuffix("%")

    return f"{percent(r.rel_lift)} [{bound(r.rel_ci_low)}, {bound(r.rel_ci_high)}]"


def _margin(r: MetricRow) -> str:
    if r.margin is None:
        return ""
    return f"{number(100 * r.margin)}%" if r.margin_relative else number(r.margin)


def _metric_table(rows: list[MetricRow], role: str, multi: bool) -> str:
    headers = ["metric", *(["treatment"] if multi else []), "control", "treat.", "Δ",
               "lift % [CI]", "p", "verdict"]
    if role == GUARDRAIL:
        headers[-1:-1] = ["margin"]
    body = []
    for r in rows:
        p = r.result.p_adjusted if role == PRIMARY else (
            r.ni_p_value if role == GUARDRAIL else r.result.p_value)
        cells = [r.metric, *([r.treatment] if multi else []), number(r.control_value),
                 number(r.treatment_value), number(r.result.estimate, signed=True), _lift(r),
                 pvalue(p), r.verdict]
        if role == GUARDRAIL:
            cells[-1:-1] = [_margin(r)]
        body.append(cells)
    return fitted_table(headers, body, wrap=[0, len(headers) - 1])


def render_text(ro: Readout) -> str:
    """The readout as the terminal shows it."""
    lines: list[str] = []
    lines += _wrap(f"experiment {ro.experiment} — {' + '.join(ro.designs)} readout, "
                   f"alpha {number(ro.alpha)}")
    w = ro.window
    if w is not None:
        span = (f"{when(w.first_exposure)} .. {when(w.last_exposure)} ({w.days} days)"
                if w.first_exposure is not None else "no timestamps")
        bounds = "" if w.start is None and w.end is None else \
            f"; window {when(w.start) if w.start is not None else '-'} .. " \
            f"{when(w.end) if w.end is not None else '-'}"
        lines += _wrap(f"exposures: {span}{bounds}")
    if ro.units:
        lines += _wrap("units: " + ", ".join(f"{v} {count(n)}" for v, n in ro.units.items())
                       + f" ({ro.unit})")
    if ro.srm is not None:
        s = ro.srm
        lines += _wrap(
            f"SRM: {s.status.upper()} (chi-square p = {pvalue(s.p_value)}, alarm below "
            f"{number(s.alpha)}; expected " + ", ".join(
                f"{v} {number(e, 6)}" for v, e in s.expected.items()) + ")")
    for d in ro.decisions:
        lines.append("")
        who = f" ({d.treatment})" if len(ro.decisions) > 1 or d.treatment != "treatment" \
            else ""
        lines += _wrap(f"VERDICT{who}: {d.verdict.upper()}")
        for reason in d.reasons:
            lines += _wrap(f"  - {reason}", "    ")
    if ro.decisions:
        lines += _wrap(f"rule: {ro.rule}")
    multi = len(ro.treatments) > 1
    for role in (PRIMARY, GUARDRAIL, SECONDARY):
        rows = ro.rows(role)
        if not rows:
            continue
        lines.append("")
        lines += _wrap(_HEADINGS[role].format(n=ro.family_size))
        lines.append(_metric_table(rows, role, multi).rstrip("\n"))
    if ro.metrics:
        r = ro.metrics[0]
        lines.append("")
        lines += _wrap(f"Δ = treatment − control; lift = treatment / control − 1 with a "
                       f"delta-method interval; test: {r.result.test}")
    lines += _over_time_lines(ro) + _segment_lines(ro) + _quantile_lines(ro)
    for line in counterfactual_lines(ro):
        lines += _wrap(line) if line else [""]
    il = ro.interleaving
    if il is not None:
        lines.append("")
        res = il.result
        lines += _wrap(
            f"interleaving ({il.treatment_team} = treatment vs {il.control_team}): Δ_AB "
            f"{number(res.estimate, signed=True)} [{number(res.ci_low, signed=True)}, "
            f"{number(res.ci_high, signed=True)}] ({percent(res.ci_level, signed=False)} "
            f"CI, users resampled), p = {pvalue(res.p_value)} ({res.test}, {count(res.n)} "
            f"users); wins {count(il.wins)}, losses {count(il.losses)}, ties {count(il.ties)}"
            f" of {count(il.impressions)} pages; winner: {il.winner or 'none'}")
        ev = il.event_credit
        if ev is not None:
            e = ev.result
            lines += _wrap(
                f"  credited by {ev.credit} events instead of clicks: Δ_AB "
                f"{number(e.estimate, signed=True)} [{number(e.ci_low, signed=True)}, "
                f"{number(e.ci_high, signed=True)}], p = {pvalue(e.p_value)} ({count(e.n)} "
                f"users); wins {count(ev.wins)}, losses {count(ev.losses)}, ties "
                f"{count(ev.ties)} of {count(ev.impressions_with_events)} pages with an "
                f"attributed {ev.credit} ({count(ev.unmatched)} events on no result); "
                f"winner: {ev.winner or 'none'}", "    ")
        elif il.event_credit_note:
            lines += _wrap(f"  {il.event_credit_note}", "    ")
        if il.per_query is not None:
            q = il.per_query
            lines += _wrap(
                f"  per query: Δ_AB {number(q.estimate, signed=True)} "
                f"[{number(q.ci_low, signed=True)}, {number(q.ci_high, signed=True)}] over "
                f"{count(il.n_queries)} queries with a decided page")
        s = il.sensitivity
        if s is not None:
            lines += _wrap(
                f"  sensitivity: the same decision from an A/B test of {s.metric} would need "
                f"{count(s.ab_units_needed)} units (observed A/B: {count(s.ab_units)} units, "
                f"t = {number(s.ab_t, 3)}; interleaving: {count(s.interleaving_users)} users, "
                f"t = {number(s.interleaving_t, 3)}): {number(s.ratio, 3)} A/B units per "
                "interleaving user", "    ")
    return "\n".join(lines) + "\n"


def _ci(r: Any) -> str:
    """Δ [low, high] of a result row (a dict with estimate, ci_low, ci_high)."""
    return (f"{number(r.get('estimate'), signed=True)} [{number(r.get('ci_low'), signed=True)}, "
            f"{number(r.get('ci_high'), signed=True)}]")


def _level(frame: pd.DataFrame) -> str:
    levels = sorted({plain(x) for x in frame.get("ci_level", pd.Series(dtype=float))} - {None})
    return ", ".join(percent(x, signed=False) for x in levels) or "null"


def _over_time_lines(ro: Any) -> list[str]:
    """Per primary metric and treatment: the cumulative Δ per calendar day, then the Δ per day
    since a unit's first exposure, as tables."""
    if not ro.over_time:
        return []
    lines: list[str] = []
    axes = (("day", "day", "cumulative Δ per calendar day",
             lambda v: when(v)),
            ("exposure_day", "days_since_exposure", "Δ per day since a unit's first exposure",
             lambda v: count(v)))
    for key, xcol, title, spell in axes:
        frame = ro.over_time.get(key)
        if not isinstance(frame, pd.DataFrame) or not len(frame):
            continue
        for (metric, variant), part in frame.groupby(["metric", "variant"], sort=False):
            lines.append("")
            lines += _wrap(f"over time ({metric}, {variant}): {title} ({_level(part)} "
                           "intervals, p unadjusted for the many looks):")
            body = [[spell(r.get(xcol)), number(r.get("control_value")),
                     number(r.get("treatment_value")), _ci(r), pvalue(r.get("p_value")),
                     count(r.get("n"))] for r in part.to_dict("records")]
            lines.append(fitted_table(
                ["day" if key == "day" else "days since", "control", "treat.", "Δ [CI]", "p",
                 "units"], body, wrap=[3]).rstrip("\n"))
    return lines


def _segment_lines(ro: Any) -> list[str]:
    """Per primary metric and treatment: Δ per segment (Holm over the segments) and the
    heterogeneity test."""
    if not ro.segments:
        return []
    lines: list[str] = []
    effects, het = ro.segments["effects"], ro.segments["heterogeneity"]
    column = ro.segments["column"]
    for h in het.to_dict("records"):
        part = effects[(effects["metric"] == h["metric"]) & (effects["variant"] == h["variant"])]
        how = {str(c) for c in part.get("correction", ())}
        adjusted = len(how) == 1 and all(isinstance(c, str) for c in part["correction"])
        lines.append("")
        lines += _wrap(
            f"segments by {column} ({h['metric']}, {h['variant']}; a unit's segment at its "
            f"first exposure; {_level(part)} intervals unadjusted, p "
            + (f"{how.pop()}-adjusted over the segments" if adjusted else "unadjusted")
            + f"): heterogeneity {h['test']}: Q = {number(h['statistic'])}, df "
            f"{plain(h['df'])}, p = {pvalue(h['p_value'])}"
            + (f" over {plain(h['k'])} segments with enough units" if "k" in h else ""))
        body = [[r.get("segment") if r.get("segment") is not None else "null",
                 number(r.get("control_value")), number(r.get("treatment_value")), _ci(r),
                 pvalue(r.get("p_adjusted") if adjusted else r.get("p_value")),
                 count(r.get("n"))]
                for r in part.to_dict("records")]
        lines.append(fitted_table([str(column), "control", "treat.", "Δ [CI]",
                                   "p adj." if adjusted else "p", "units"], body,
                                  wrap=[0, 3]).rstrip("\n"))
    return lines


def _quantile_lines(ro: Any) -> list[str]:
    """The quantile metrics: per metric, quantile and treatment, the arms' values and Δ."""
    q = ro.quantiles
    if q is None or not len(q):
        return []
    tests = "; ".join(sorted({str(t) for t in q.get("test", ()) if isinstance(t, str)}))
    lines = [""] + _wrap(f"quantile metrics ({_level(q)} intervals clustered by unit, p "
                         f"unadjusted; {tests or 'test unstated'}):")
    multi = q["variant"].nunique() > 1
    body = [[r["metric"], *([r["variant"]] if multi else []),
             f"p{round(100 * r['quantile'])}", number(r.get("control_value")),
             number(r.get("treatment_value")), _ci(r), pvalue(r.get("p_value"))]
            for r in q.to_dict("records")]
    headers = ["metric", *(["treatment"] if multi else []), "quantile", "control", "treat.",
               "Δ [CI]", "p"]
    lines.append(fitted_table(headers, body, wrap=[0, len(headers) - 2]).rstrip("\n"))
    return lines


def csv_frame(ro: Readout) -> pd.DataFrame:
    """One CSV row per metric and treatment, then the counterfactual prediction when there
    is one (``role`` ``counterfactual``), then one per arm and rank of the position CTR
    (``role`` ``position_ctr``: ``variant``, ``rank``, ``shown``, ``clicked``, ``clicks``,
    ``ctr``), with the experiment, the window, the SRM check and the verdict on every row."""
    verdicts = {d.treatment: d.verdict for d in ro.decisions}
    w = ro.window.to_dict() if ro.window is not None else {}
    srm = ro.srm.to_dict() if ro.srm is not None else {}
    lead: dict[str, Any] = {
        "experiment": ro.experiment, "first_exposure": w.get("first_exposure"),
        "last_exposure": w.get("last_exposure"), "days": w.get("days"),
        "srm_status": srm.get("status"), "srm_p_value": srm.get("p_value"),
    }
    rows = []
    for r in ro.metrics:
        rows.append({**lead, "overall_verdict": verdicts.get(r.treatment),
                     **{k: plain(v) for k, v in r.to_dict().items()}})
    if not rows and ro.interleaving is not None:
        il = ro.interleaving
        rows.append({**lead, "metric": "interleaving_delta_ab", "role": "interleaving",
                     "control": il.control_team, "treatment": il.treatment_team,
                     **il.result.to_dict()})
    cf = getattr(ro, "counterfactual", None)
    if cf is not None:
        # the prediction of the A/B from logged data (role counterfactual): treatment run −
        # control run of its click metric, with each run's value
        rows.append({**lead, "metric": cf.metric, "role": "counterfactual",
                     "control_value": cf.control_value, "treatment_value": cf.treatment_value,
                     **cf.result.to_dict(), "estimator": cf.estimator,
                     "propensity_source": cf.propensity_source,
                     "unsupported_share": cf.unsupported_share, "source": cf.source})
    if ro.position_ctr is not None:
        # after the metric rows: CTR per rank of each arm (role position_ctr); an arm's row
        # carries its treatment's verdict (the control's, the experiment's when it has one)
        for r in ro.position_ctr.to_dict("records"):
            rows.append({**lead, "overall_verdict": verdicts.get(r["variant"], ro.verdict),
                         "metric": "ctr_at_rank", "role": "position_ctr",
                         **{k: plain(v) for k, v in r.items() if k != "experiment"}})
    return pd.DataFrame(rows)
