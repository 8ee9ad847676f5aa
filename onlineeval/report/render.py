"""Render a computed :class:`~onlineeval.report.build.Report` as one self-contained HTML file
(inline CSS, plots as base64 PNG ``data:`` URIs, no script, nothing fetched) and as JSON."""

from __future__ import annotations

import html
import math
import re
import warnings
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from onlineeval.formatting import DIGITS, count, number, pvalue, records
from onlineeval.formatting import plain as _plain
from onlineeval.report.build import COUNTERFACTUAL, INTERLEAVING, Report, lower_is_better
from onlineeval.report.plots import (
    PlotError,
    forest_ab,
    position_ctr_curves,
    scatter_offline_online,
)
from onlineeval.report.readout_page import CSS as READOUT_CSS
from onlineeval.report.readout_page import name_cell, readout_section, text_cell, toc
from onlineeval.report.readout_page import table as fitted_table

#: the section ids every report has, in order (tests and links rely on them)
SECTIONS: tuple[str, ...] = (
    "summary", "agreement", "scatter", "forest", "position-ctr", "tau-matrix",
    "experiments-table", "experiments",
)

#: the readout page's CSS (page width, tables, cards) and the report's own classes
_CSS = READOUT_CSS + """
.headline{background:#f4f8fd;border-left:4px solid #1f5fa8;padding:.6em 1em}
"""

#: titles of the report's sections, for the table of contents
_TITLES = {
    "summary": "Summary", "agreement": "Offline–online agreement across experiments",
    "scatter": "Offline Δ against online Δ", "forest": "A/B deltas (forest plot)",
    "position-ctr": "Position CTR per variant", "tau-matrix": "Kendall τ-b matrix",
    "experiments-table": "All experiments", "experiments": "Per experiment",
}


def _is_p(column: str) -> bool:
    """Whether a report column holds p-values (spelled as p-values)."""
    return column == "p" or column.endswith("_p") or column.startswith("p_")


def _fmt(value: Any, digits: int = DIGITS, p: bool = False) -> str:
    """A value of the report in the readout's one number format
    (:mod:`onlineeval.formatting`): estimates to ``digits`` significant digits, p-values
    (``p``) in scientific notation below 1e-4, whole numbers with separators, — for
    undefined."""
    if value is None or value is pd.NA:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float | int):
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            return "—"
        if isinstance(value, int):
            return count(value)
        return pvalue(value) if p else number(value, digits)
    return str(value)


def _table(df: pd.DataFrame, columns: list[str] | None = None) -> str:
    """``df`` as a table that fits the page (transposed where it would not:
    :func:`onlineeval.report.readout_page.table`); names from the data wrap."""
    if df is None or not len(df):
        return '<p class="note">no rows</p>'
    cols = columns or list(df.columns)
    rows = [[name_cell(_fmt(_plain(row[c]))) if isinstance(_plain(row[c]), str)
             else text_cell(_fmt(_plain(row[c]), p=_is_p(str(c)))) for c in cols]
            for _, row in df[cols].iterrows()]
    return fitted_table([name_cell(c) for c in cols], rows)


ROUNDING = ("Numbers are spelled as in the readouts: estimates to 4 significant digits (3 for "
            "the per-query sign agreement, τ and ρ), p-values to 3 significant digits and in "
            "scientific notation below 0.0001, counts with thousands separators; — means "
            "undefined; report.json holds them unrounded.")


def _oriented(col: str) -> str:
    """How the report names a column of the experiments table: an A/B metric where lower is
    better has its difference negated there (positive = the treatment is better), and says so.
    """
    metric = col.removeprefix("ab:")
    if col.startswith("ab:") and lower_is_better(metric):
        return f"{col} (negated)"
    return col


def _slug(name: str) -> str:
    return "experiment-" + re.sub(r"[^A-Za-z0-9_-]+", "-", name)


def _img(plot: Callable[..., str], *args: Any, alt: str) -> str:
    """The plot as an embedded PNG, or a note saying why it could not be drawn."""
    try:
        b64 = plot(*args)
    except PlotError as exc:
        warnings.warn(f"the report's {alt} was left out: {exc}", stacklevel=2)
        return f'<p class="note">The {html.escape(alt)} could not be drawn: ' \
               f'{html.escape(str(exc))}</p>'
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{b64}">'


def _stats_row(s: dict[str, Any]) -> dict[str, Any]:
    """The columns of one agreement (:func:`onlineeval.agreement` statistics)."""
    return {
        "experiments": s["n"], "sign agree": f"{s['n_agree']}/{s['n_agree'] + s['n_disagree']}",
        "rate": s["sign_agreement"], "Wilson CI low": s["sign_ci_low"],
        "Wilson CI high": s["sign_ci_high"], "Kendall τ-b": s["kendall_tau"],
        "τ p": s["kendall_p"], "Spearman ρ": s["spearman_rho"], "ρ p": s["spearman_p"],
    }


def _agreement_rows(report: Report) -> pd.DataFrame:
    """One row per online outcome: the primary offline Δ against it; with counterfactual Δs
    (column ``prediction``), also a row of the counterfactual Δ against it."""
    rows = []
    labels = dict(report.outcomes)
    cf = report.counterfactual_metric
    for col, res in report.agreements.items():
        lead = {"prediction": f"offline Δ {report.measures[0]}"} if cf else {}
        rows.append({**lead, "online outcome": labels[col], **_stats_row(res.stats)})
        if cf and "counterfactual vs online" in res.pairs:
            rows.append({"prediction": f"counterfactual Δ {cf}", "online outcome": labels[col],
                         **_stats_row(res.pairs["counterfactual vs online"])})
    return pd.DataFrame(rows)


def _offline_vs_counterfactual(report: Report) -> pd.DataFrame:
    """The primary offline Δ against the counterfactual Δ (over the experiments with both;
    the same in every outcome's agreement, read from the first)."""
    for res in report.agreements.values():
        if "offline vs counterfactual" in res.pairs:
            return pd.DataFrame([{
                "offline": f"offline Δ {report.measures[0]}",
                "counterfactual": f"counterfactual Δ {report.counterfactual_metric}",
                **_stats_row(res.pairs["offline vs counterfactual"])}])
    return pd.DataFrame()


def _decision_matrix(report: Report) -> pd.DataFrame:
    labels = dict(report.outcomes)
    data = {}
    for col, res in report.agreements.items():
        if res.decisions is not None:
            data[labels[col]] = res.decisions.set_index("decision")["count"]
    return pd.DataFrame(data).reset_index() if data else pd.DataFrame()


def _large_margin_text(report: Report) -> str:
    lm = report.large_margin
    if lm.get("all_agree") is None:
        if not lm["n"]:
            return f"No experiment has a large offline margin ({html.escape(lm['rule'])})."
        return (f"{lm['n']} experiment(s) have a large offline margin "
                f"({html.escape(lm['rule'])}), but none has an interleaving readout.")
    cls = "ok" if lm["all_agree"] else "bad"
    verdict = "agree in sign" if lm["all_agree"] else "do NOT all agree in sign"
    extra = "" if lm["all_agree"] else (
        " Disagreeing: " + html.escape(", ".join(lm["disagree"])) + ".")
    return (f'<span class="{cls}">On the {lm["n_with_interleaving"]} pair(s) with a large '
            f'offline margin ({html.escape(lm["rule"])}), offline '
            f'{html.escape(report.measures[0])} and interleaving {verdict}: '
            f'{lm["n_agree"]} of {lm["n_with_interleaving"]}.</span>{extra}')


def _left_out_online(w: dict[str, Any]) -> str:
    """What a per-query agreement left out, counted (see build._within): judged queries without
    an online Δ (and how many of them were searched, but the Δ is undefined), searched queries
    that are not judged, searched queries neither judged nor with a Δ, rows without a query id.
    """
    undefined = w.get("n_online_undefined", 0)
    judged = w.get("n_undefined_judged", 0)
    reason = html.escape(str(w.get("online_undefined_reason", "")))
    unit = html.escape(str(w.get("without_query_unit", "searches")))
    return (f"left out: {w['n_offline_only']} judged without an online Δ ({judged} of them "
            f"searched but {reason}), {w['n_online_only']} searched but not judged, "
            f"{undefined - judged} searched, not judged and without an online Δ, "
            f"{w.get('n_without_query', 0)} {unit} without a query id")


def _experiment_html(report: Report, r: Any) -> str:
    exp = r.experiment
    control, treatment = ((exp.control_run.stem, exp.treatment_run.stem) if exp.has_runs
                          else (r.readout.control, r.readout.treatments[0]))
    parts = [f'<section id="{_slug(exp.name)}" class="experiment">',
             f"<h3>{html.escape(exp.name)}: control {html.escape(control)} → "
             f"treatment {html.escape(treatment)}</h3>"]
    if r.readout is not None:
        # the experiment's readout as `onlineeval readout -o` draws it, with the study's
        # offline comparison as its offline prediction
        ro = r.readout if r.offline is None else replace(r.readout, offline=r.offline)
        parts.append(readout_section(ro, level=4))
    if r.offline is not None:
        parts.append(f"<h4>Offline ({html.escape(report.study.test)} test, "
                     f"{html.escape(report.study.correction)} correction; a = control, "
                     "b = treatment, estimate = mean_b − mean_a over n queries)</h4>")
        parts.append(_table(r.offline, ["measure", "n", "mean_a", "mean_b", "estimate",
                                        "ci_low", "ci_high", "p_value", "p_adjusted",
                                        "significant", "effect_size"]))
    if r.ab is not None and r.readout is None:
        parts.append("<h4>A/B test (estimate = treatment − control, rel_diff = estimate / "
                     "control_value; the first online metric is primary, its p Holm-adjusted "
                     "within the primary family; the others' p unadjusted)</h4>")
        if r.srm and r.srm.get("mismatch"):
            parts.append(f'<div class="srm"><b>SAMPLE RATIO MISMATCH</b> — the A/B results '
                         f'below are not trustworthy. {html.escape(r.srm_message or "")}</div>')
        elif r.srm:
            units = ", ".join(f"{k}: {v:,}" for k, v in r.srm.get("units", {}).items())
            parts.append(f'<p>SRM check: <span class="ok">no mismatch</span> (χ² p = '
                         f'{_fmt(r.srm.get("p_value"), p=True)}; units {html.escape(units)})</p>')
        parts.append(_table(r.ab, [c for c in ["metric", "role", "variant", "control_value",
                                   "treatment_value",
                                   "estimate", "ci_low", "ci_high", "rel_diff",
                                   "p_value", "p_adjusted", "significant"] if c in r.ab.columns]))
    if r.interleaving is not None and r.readout is None:
        parts.append("<h4>Interleaving (team-draft; team A = treatment, so estimate = Δ_AB "
                     "&gt; 0 means the treatment won)</h4>")
        cols = [c for c in ("team_a", "team_b", "impressions", "impressions_with_clicks",
                            "wins_a", "wins_b", "ties", "estimate", "ci_low", "ci_high",
                            "p_value", "winner") if c in r.interleaving.columns]
        parts.append(_table(r.interleaving, cols))
    if r.within:
        parts.append("<h4>Per-query agreement</h4><ul>")
        for label, w in r.within.items():
            parts.append(
                f"<li>Offline per-query Δ {html.escape(report.measures[0])} against "
                f"{html.escape(label)} over {w['n']} queries ({_left_out_online(w)}): "
                "sign agreement "
                f"{w['n_agree']}/{w['n_agree'] + w['n_disagree']} "
                f"({_fmt(w['sign_agreement'], 3)}; {w['n_zero']} queries with a zero delta "
                f"left out), Kendall τ-b {_fmt(w['kendall_tau'], 3)} "
                f"(p = {_fmt(w['kendall_p'], p=True)}), Spearman ρ {_fmt(w['spearman_rho'], 3)} "
                f"(p = {_fmt(w['spearman_p'], p=True)}).</li>")
        parts.append("</ul>")
    for note in r.notes:
        parts.append(f'<p class="note">{html.escape(note)}</p>')
    parts.append("</section>")
    return "\n".join(parts)


def render_html(report: Report) -> str:
    """The report as one self-contained HTML document."""
    from onlineeval import __version__

    study = report.study
    primary = report.primary
    t = report.table
    srm_bad = [r.experiment.name for r in report.experiments if r.srm and r.srm.get("mismatch")]
    out = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(study.title)} — onlineeval report</title>",
        f"<style>{_CSS}</style></head><body><main>",
        f"<h1>{html.escape(study.title)}</h1>",
        f'<p class="note">onlineeval {__version__} · study {html.escape(str(study.path))} · '
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC · α = {study.alpha:g}</p>",
        f'<p class="note">{ROUNDING}</p>',
        # in a section of its own: every list and table of the report is in one
        '<section id="toc">' + toc(
            [r.readout for r in report.experiments if r.readout is not None],
            [(sid, _TITLES[sid]) for sid in SECTIONS if sid in _present(report)],
            with_parts=False) + "</section>",
        '<section id="summary"><h2>Summary</h2>',
    ]
    if srm_bad:
        out.append('<div class="srm"><b>SAMPLE RATIO MISMATCH</b> in: '
                   f'{html.escape(", ".join(srm_bad))} — their A/B results are not '
                   "trustworthy.</div>")
    out.append(f'<p class="headline">{_large_margin_text(report)}</p>')
    for source, text in report.load_notes.items():
        out.append(f'<p class="note">Rows excluded while loading {html.escape(source)}: '
                   f"{html.escape(text)}</p>")
    measure = (f"primary offline measure <b>{html.escape(report.measures[0])}</b>"
               if report.measures else "no runs, so no offline measure")
    out.append(f"<p>{len(report.experiments)} experiments; {measure}; online outcomes: "
               f"{html.escape(', '.join(label for _, label in report.outcomes) or 'none')}.</p>")
    out.append("</section>")
    if not report.measures:
        out.append('<section id="agreement"><h2>Offline–online agreement across experiments'
                   '</h2><p class="note">No experiment of the study has runs: nothing to '
                   "agree with.</p></section>")
        out += _without_offline(report, study)
        out.append("</main></body></html>")
        return "\n".join(out)

    out.append('<section id="agreement"><h2>Offline–online agreement across experiments</h2>')
    out.append(f"<p>Offline Δ {html.escape(report.measures[0])} (treatment − control) against "
               "each online outcome, oriented so that positive favours the treatment. Sign "
               "agreement leaves out experiments with a zero delta; Wilson 95% interval.</p>")
    if report.counterfactual_metric:
        out.append(f"<p>Counterfactual Δ {html.escape(report.counterfactual_metric)}: the "
                   "treatment run − control run expected clicks estimated on the logging "
                   "ranker's log (onlineeval.counterfactual.compare), a third prediction beside "
                   "the offline Δ, over the experiments with both values.</p>")
    out.append(_table(_agreement_rows(report)))
    between = _offline_vs_counterfactual(report)
    if len(between):
        out.append("<h3>Offline Δ against counterfactual Δ</h3>")
        out.append(_table(between))
    dm = _decision_matrix(report)
    if len(dm):
        out.append(f"<h3>Decision table (α = {study.alpha:g}; offline and A/B p-values "
                   "adjusted within each experiment)</h3>")
        out.append(_table(dm))
    out.append("</section>")

    out.append('<section id="scatter"><h2>Offline Δ against online Δ</h2>')
    out.append(_img(scatter_offline_online, t, primary, report.outcomes,
                    alt="scatter of offline delta against online deltas with confidence "
                        "intervals"))
    out.append("</section>")

    out.append('<section id="forest"><h2>A/B deltas (forest plot)</h2>')
    ab = _ab_long(report)
    if len(ab):
        out.append('<p class="note">Treatment − control with CIs; blue = significant after '
                   "correction, red = the experiment has a sample ratio mismatch.</p>")
        out.append(_img(forest_ab, ab, list(study.online_metrics),
                        alt="forest plot of A/B deltas"))
    else:
        out.append('<p class="note">No A/B logs in this study.</p>')
    out.append("</section>")

    out.append('<section id="position-ctr"><h2>Position CTR per variant</h2>')
    curves = _curves(report)
    if len(curves):
        out.append(_img(position_ctr_curves, curves,
                        alt="click-through rate by rank per variant"))
    else:
        out.append('<p class="note">No A/B logs with results in this study.</p>')
    out.append("</section>")

    out.append('<section id="tau-matrix"><h2>Which offline measure agrees best with which '
               "online outcome (Kendall τ-b across experiments)</h2>")
    if len(report.tau):
        piv = report.tau.pivot(index="offline", columns="online", values="kendall_tau")
        piv = piv.reindex(index=[f"offline:{m}" for m in report.measures],
                          columns=[c for c, _ in report.outcomes]).reset_index()
        out.append(_table(piv.rename(columns=_oriented)))
        out.append(_table(report.tau.assign(online=report.tau["online"].map(_oriented))))
    out.append("</section>")

    out.append('<section id="experiments-table"><h2>All experiments</h2>')
    cols = ["experiment", "control", "treatment"] + [
        c for c in t.columns if (c.startswith("offline:") or c.startswith("ab:")
                                 or c.startswith((INTERLEAVING, COUNTERFACTUAL)))
        and not c.endswith(
            ("_ci_low", "_ci_high"))]
    out.append('<p class="note">Every Δ is treatment − control, except the A/B metrics marked '
               "(negated): lower is better for them, so their difference is negated (control − "
               "treatment) and positive favours the treatment in every column. Interleaving is "
               "Δ_AB of the treatment's team (p-value of the per-user test); offline p-values are "
               "adjusted across measures, the primary A/B metric's within the primary family, "
               "the other A/B metrics' are not. Counterfactual is the treatment run − control run "
               "clicks@k estimated on the logging ranker's log (normal interval, z-test "
               "p-value).</p>")
    out.append(_table(t[cols].rename(columns=_oriented)))
    out.append("</section>")

    out.append('<section id="experiments"><h2>Per experiment</h2>')
    out.extend(_experiment_html(report, r) for r in report.experiments)
    out.append("</section>")
    out.append("</main></body></html>")
    return "\n".join(out)


def _present(report: Report) -> set[str]:
    """The report's sections on the page (a study without runs has no scatter or τ
    matrix, and position CTR only with results)."""
    if report.measures:
        return set(SECTIONS)
    present = {"summary", "agreement", "forest", "experiments-table", "experiments"}
    return present | ({"position-ctr"} if len(_curves(report)) else set())


def _without_offline(report: Report, study: Any) -> list[str]:
    """The sections of a study without runs: the A/B forest plot, position CTR, the table
    of experiments and each experiment's readout."""
    out = ['<section id="forest"><h2>A/B deltas (forest plot)</h2>']
    ab = _ab_long(report)
    if len(ab):
        out.append(_img(forest_ab, ab, list(study.online_metrics),
                        alt="forest plot of A/B deltas"))
    out.append("</section>")
    curves = _curves(report)
    if len(curves):
        out.append('<section id="position-ctr"><h2>Position CTR per variant</h2>')
        out.append(_img(position_ctr_curves, curves,
                        alt="click-through rate by rank per variant"))
        out.append("</section>")
    t = report.table
    cols = [c for c in t.columns if not c.endswith(("_ci_low", "_ci_high"))]
    out.append('<section id="experiments-table"><h2>All experiments</h2>')
    out.append(_table(t[cols].rename(columns=_oriented)))
    out.append("</section>")
    out.append('<section id="experiments"><h2>Per experiment</h2>')
    out.extend(_experiment_html(report, r) for r in report.experiments)
    out.append("</section>")
    return out


def _ab_long(report: Report) -> pd.DataFrame:
    parts = []
    for r in report.experiments:
        if r.ab is not None and len(r.ab):
            parts.append(r.ab.assign(experiment=r.experiment.name,
                                     srm_mismatch=bool(r.srm and r.srm.get("mismatch"))))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _curves(report: Report) -> pd.DataFrame:
    parts = []
    for r in report.experiments:
        if r.position_ctr is not None and len(r.position_ctr):
            parts.append(r.position_ctr.assign(experiment=r.experiment.name))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def report_dict(report: Report) -> dict[str, Any]:
    """Every number of the report, JSON-ready."""
    def recs(df: pd.DataFrame | None) -> list[dict[str, Any]] | None:
        return None if df is None else records(df)

    def plain(d: dict[str, Any] | None) -> dict[str, Any] | None:
        if d is None:
            return None
        return {k: (plain(v) if isinstance(v, dict) else
                    [_plain(x) for x in v] if isinstance(v, list) else _plain(v))
                for k, v in d.items()}

    s = report.study
    return {
        "study": {
            "path": str(s.path), "title": s.title, "measures": list(s.measures),
            "online_metrics": list(s.online_metrics), "alpha": s.alpha, "test": s.test,
            "correction": s.correction, "large_margin": s.large_margin, "seed": s.seed,
            "n_resamples": s.n_resamples,
        },
        "large_margin": plain(report.large_margin),
        # the table's A/B columns of metrics where lower is better hold control − treatment
        "table_negated_columns": [c for c in report.table.columns if _oriented(c) != c],
        "load_exclusions": dict(report.load_notes),
        "agreement": {col: res.to_dict() for col, res in report.agreements.items()},
        "tau_matrix": recs(report.tau),
        "table": recs(report.table),
        "experiments": [
            {
                "name": r.experiment.name,
                "control_run": None if r.experiment.control_run is None
                else str(r.experiment.control_run),
                "treatment_run": None if r.experiment.treatment_run is None
                else str(r.experiment.treatment_run),
                "readout": None if r.readout is None else r.readout.to_dict(),
                "offline": recs(r.offline), "ab": recs(r.ab), "srm": plain(r.srm),
                "interleaving": recs(r.interleaving), "position_ctr": recs(r.position_ctr),
                "counterfactual": None if r.counterfactual is None
                else r.counterfactual.to_dict(),
                "per_query_agreement": {k: plain(v) for k, v in r.within.items()},
                "notes": list(r.notes),
            }
            for r in report.experiments
        ],
    }
