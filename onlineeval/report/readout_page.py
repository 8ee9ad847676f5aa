"""The HTML readout of an experiment: "should we ship?" on one self-contained page.

:func:`readout_html` renders one or several experiment readouts as a page: a table of
contents, then per experiment a summary card (verdict and the rule behind it, the primary
lifts with their intervals, the guardrails, the sample-ratio check, the window), the metric
table, a forest plot of the lifts, the cumulative effect over time, the effect per segment,
the quantile metrics, position CTR per arm, the interleaving panel and — when the readout has
it — the offline prediction beside the online result. :func:`readout_section` is one
experiment's part, which the study report (:mod:`onlineeval.report.render`) embeds as well.

The page is self-contained: inline CSS, images as ``data:`` PNG, no script, nothing fetched.

Width: the page declares its content width (:data:`PAGE_WIDTH_PX`, the CSS variable
``--page-width``) and the font size of its tables (:data:`TABLE_FONT_PX`). Every table is
laid out to fit it: a cell's width is counted as its longest line at
:data:`CHAR_EM` em per character plus padding (a name from the data is wrapped in a
``.name`` span whose CSS ``max-width`` caps it at :data:`NAME_CH` characters, so it counts as
at most that); a table whose columns would add up to more than the page is shown transposed,
in as many pieces as needed. tests/report/test_readout_page.py checks the rule on the HTML
with its own estimate, and docs/screenshots.py measures the tables in Chromium.

Numbers: every number shown is the readout's, spelled by
:func:`onlineeval.formatting.format_number`; each sits in a ``<span data-key=...>`` naming
the value it shows, so a test (or a reader's script) can match it to the readout.
"""

from __future__ import annotations

import html
import re
import unicodedata
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from onlineeval.formatting import format_number
from onlineeval.report.plots import PlotError, position_ctr_curves
from onlineeval.report.readout_plots import (
    PAGE_WIDTH_PX,
    ci_label,
    cumulative_effect,
    forest_lifts,
    segment_effects,
)

#: the font size of the tables in CSS pixels
TABLE_FONT_PX = 13
#: the width of a character counted for a table's layout, in em (a generous average for
#: digits, signs and Latin text in a sans-serif font)
CHAR_EM = 0.62
#: horizontal padding plus border of a table cell, in CSS pixels
CELL_PAD_PX = 14
#: the widest a name from the data may make a cell, in characters (``.name`` max-width)
NAME_CH = 20
#: the widest a cell of prose the page writes (a decision) may be, in characters
PROSE_CH = 14

#: the sub-sections of every experiment's readout, in order (each is present, with a note
#: when the readout has no data for it); ids are ``readout-<experiment>-<part>``
PARTS: tuple[tuple[str, str], ...] = (
    ("summary", "Summary"),
    ("metrics", "Metrics"),
    ("forest", "Lifts (forest plot)"),
    ("power", "Power and minimum detectable effect"),
    ("over-time", "Effect over time"),
    ("segments", "Segments"),
    ("quantiles", "Quantile metrics"),
    ("position-ctr", "Position CTR per arm"),
    ("interleaving", "Interleaving"),
    ("offline", "Offline prediction"),
)

CSS = f"""
:root{{--page-width:{PAGE_WIDTH_PX}px}}
body{{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
margin:0;padding:1em;color:#222;line-height:1.4;font-size:15px}}
main{{max-width:var(--page-width);margin:0 auto}}
h1{{font-size:1.5em}}h2{{border-bottom:2px solid #1f5fa8;padding-bottom:.2em;margin-top:2em}}
h3{{margin-top:1.4em}}
table{{border-collapse:collapse;margin:.6em 0;font-size:{TABLE_FONT_PX}px}}
th,td{{border:1px solid #ccc;padding:.25em .5em;text-align:right;vertical-align:top}}
th{{background:#eef3fa}}td:first-child,th:first-child{{text-align:left}}
.name,.prose{{display:inline-block;overflow-wrap:anywhere;text-align:left}}
.name{{max-width:{NAME_CH}ch}}.prose{{max-width:{PROSE_CH}ch}}
.role{{color:#666;font-size:.85em}}
img{{max-width:100%;height:auto;border:1px solid #eee}}
.card{{border:1px solid #c9d6e8;border-left:6px solid #1f5fa8;padding:.4em 1em;margin:.8em 0;
background:#f7fafd}}
.card.ship{{border-left-color:#1e7b34}}.card.no-ship{{border-left-color:#b3261e}}
.verdict{{font-size:1.2em;font-weight:700}}
.ship .verdict{{color:#1e7b34}}.no-ship .verdict{{color:#b3261e}}
.inconclusive .verdict{{color:#8a6d00}}
.ok{{color:#1e7b34;font-weight:600}}.bad{{color:#b3261e;font-weight:700}}
.srm{{background:#fdecea;border:2px solid #b3261e;padding:.5em 1em;margin:.6em 0}}
.note{{color:#555;font-size:.9em}}
nav ul{{margin:.2em 0}}nav li{{margin:.1em 0}}
"""

_VERDICT_CLASS = {"ship": "ship", "don't ship": "no-ship", "inconclusive": "inconclusive"}

_NONE = "—"  # shown where the readout has no value for a cell (formatted numbers say null)


@dataclass(frozen=True)
class ReadoutParts:
    """What the page shows of one experiment, as plain tables (the adapter
    :func:`parts_of` fills it from a readout).

    ``comparisons``: one row per metric and treatment: ``metric``, ``variant``, ``role``
    (primary / guardrail / secondary), ``control_value``, ``treatment_value``, the result
    block (:data:`onlineeval.stats.results.RESULT_COLUMNS`: ``estimate`` is treatment −
    control), ``lift``, ``lift_ci_low``, ``lift_ci_high`` (relative, as fractions),
    ``decision`` (the row's reading); guardrail rows also ``margin`` (relative) and
    ``ni_p_value``. Optional tables (None when the readout has none): ``power`` (metric,
    variant, ``mde`` relative, ``power``, ``units_needed``), ``over_time`` (``axis``,
    ``metric``, ``variant``, ``x``, ``estimate``, ``ci_low``, ``ci_high``, ``ci_level``),
    ``segments`` (``segment``, ``metric``, ``variant``, ``estimate``, ``ci_low``,
    ``ci_high``, ``units``, ``heterogeneity_p``), ``quantiles`` (``metric``, ``quantile``,
    ``control_value``, ``treatment_value``, ``estimate``, ``ci_low``, ``ci_high``,
    ``method``), ``position_ctr`` (``variant``, ``rank``, ``ctr``), ``interleaving`` (a dict:
    ``estimate``, ``ci_low``, ``ci_high``, ``ci_level``, ``p_value``, ``wins``, ``losses``,
    ``ties``, ``n``, ``unit``, ``queries``, ``test``, ``sensitivity``...),
    ``interleaving_queries`` (``query``, ``pages``, ``delta``), ``offline`` (``measure``,
    ``estimate``, ``ci_low``, ``ci_high``, ``p_value``, ``n``).
    """

    experiment: str
    control: str
    verdict: str
    rule: str
    comparisons: pd.DataFrame
    units: dict[str, int] = field(default_factory=dict)
    window: dict[str, Any] = field(default_factory=dict)
    srm: dict[str, Any] | None = None
    power: pd.DataFrame | None = None
    over_time: pd.DataFrame | None = None
    segments: pd.DataFrame | None = None
    segment_column: str | None = None
    segment_note: str | None = None
    quantiles: pd.DataFrame | None = None
    position_ctr: pd.DataFrame | None = None
    interleaving: dict[str, Any] | None = None
    interleaving_queries: pd.DataFrame | None = None
    offline: pd.DataFrame | None = None
    notes: tuple[str, ...] = ()


def parts_of(readout: Any) -> ReadoutParts:
    """The page's view of a readout (a :class:`ReadoutParts` passes through)."""
    if isinstance(readout, ReadoutParts):
        return readout
    raise TypeError(f"readout_html: cannot render a {type(readout).__name__}")


# --- cells and tables -----------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """A table cell: its HTML and the characters its widest line counts for the layout."""

    html: str
    chars: int


def _width_chars(text: str) -> int:
    """Characters counted for ``text`` on one line: an East Asian wide character counts 2."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def text_cell(text: Any) -> Cell:
    """A cell of fixed text (a label the page writes)."""
    s = _NONE if text is None else str(text)
    return Cell(html.escape(s), _width_chars(s))


def name_cell(text: Any, below: str | None = None) -> Cell:
    """A cell holding a name from the data, wrapped at :data:`NAME_CH` characters (and a
    short word of the page's ``below`` it, e.g. the metric's role)."""
    s = str(text)
    chars = min(NAME_CH, _width_chars(s))
    extra = ""
    if below:
        extra = f'<br><span class="role">{html.escape(below)}</span>'
        chars = max(chars, len(below))
    return Cell(f'<span class="name">{html.escape(s)}</span>{extra}', chars)


def prose_cell(text: Any) -> Cell:
    """A cell of the page's own words (a decision), wrapped at :data:`PROSE_CH` characters."""
    s = "" if text is None else str(text)
    return Cell(f'<span class="prose">{html.escape(s)}</span>', min(PROSE_CH, _width_chars(s)))


def num(value: Any, kind: str, key: str | None) -> str:
    """A formatted number in a span naming the value (``data-key``) and its ``kind``."""
    text = html.escape(format_number(value, kind))
    if key is None:
        return text
    return (f'<span data-key="{html.escape(key)}" data-kind="{kind}">{text}</span>')


def num_cell(value: Any, kind: str, key: str | None) -> Cell:
    return Cell(num(value, kind, key), len(format_number(value, kind)))


def interval_cell(low: Any, high: Any, kind: str, key: str | None,
                  value: Any = None) -> Cell:
    """``value`` (when given) and ``[low, high]`` below it."""
    lo, hi = format_number(low, kind), format_number(high, kind)
    bracket = (f"[{num(low, kind, key and key + ':ci_low')}, "
               f"{num(high, kind, key and key + ':ci_high')}]")
    width = len(lo) + len(hi) + 4
    if value is None:
        return Cell(bracket, width)
    shown = format_number(value, kind)
    return Cell(f"{num(value, kind, key)}<br>{bracket}", max(width, len(shown)))


def _cell_px(chars: int) -> float:
    return chars * CHAR_EM * TABLE_FONT_PX + CELL_PAD_PX


def table_px(header: Sequence[Cell], rows: Sequence[Sequence[Cell]]) -> float:
    """The width the layout rule counts for a table (the module docstring)."""
    widths = [max(c.chars for c in col) for col in zip(header, *rows, strict=True)]
    return sum(_cell_px(w) for w in widths)


def table(header: Sequence[Any], rows: Sequence[Sequence[Cell]], *,
          caption: str | None = None) -> str:
    """A table that fits the page: as given when its width fits, else transposed (a row
    per column) in pieces of as many of its rows as fit."""
    head = [h if isinstance(h, Cell) else text_cell(h) for h in header]
    if not rows:
        return '<p class="note">no rows</p>'
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    if table_px(head, rows) <= PAGE_WIDTH_PX:
        return _html_table(head, rows, cap)
    pieces, start = [], 0
    while start < len(rows):
        stop = start + 1
        while stop < len(rows) and _transposed_px(head, rows[start:stop + 1]) <= PAGE_WIDTH_PX:
            stop += 1
        block = rows[start:stop]
        t_rows = [[head[j], *(r[j] for r in block)] for j in range(1, len(head))]
        pieces.append(_html_table(
            [head[0], *(r[0] for r in block)], t_rows, cap if not start else "",
            header_cells=True))
        start = stop
    return "\n".join(pieces)


def _transposed_px(head: Sequence[Cell], block: Sequence[Sequence[Cell]]) -> float:
    t_head = [head[0], *(r[0] for r in block)]
    t_rows = [[head[j], *(r[j] for r in block)] for j in range(1, len(head))]
    return table_px(t_head, t_rows)


def _html_table(head: Sequence[Cell], rows: Sequence[Sequence[Cell]], caption: str,
                header_cells: bool = False) -> str:
    th = "".join(f"<th>{c.html}</th>" for c in head)
    body = []
    for r in rows:
        first = f"<th>{r[0].html}</th>" if header_cells else f"<td>{r[0].html}</td>"
        body.append("<tr>" + first + "".join(f"<td>{c.html}</td>" for c in r[1:]) + "</tr>")
    return (f"<table>{caption}<thead><tr>{th}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


# --- the page --------------------------------------------------------------------------


def slug(name: str) -> str:
    """The id stem of an experiment's readout (letters, digits, ``_`` and ``-`` only)."""
    return "readout-" + re.sub(r"[^A-Za-z0-9_-]+", "-", str(name))


def part_id(experiment: str, part: str) -> str:
    return f"{slug(experiment)}-{part}"


def _img(plot: Callable[..., str], *args: Any, alt: str) -> str:
    """The plot as an embedded PNG, or a note saying why it could not be drawn."""
    try:
        b64 = plot(*args)
    except PlotError as exc:
        warnings.warn(f"the readout's {alt} was left out: {exc}", stacklevel=2)
        return (f'<p class="note">The {html.escape(alt)} could not be drawn: '
                f"{html.escape(str(exc))}</p>")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{b64}">'


def _row_key(row: Any) -> str:
    return f"{row['metric']}/{row['variant']}"


def _label(row: Any, several: bool) -> str:
    return f"{row['metric']} [{row['variant']}]" if several else str(row["metric"])


def _treatments(p: ReadoutParts) -> list[str]:
    return [str(v) for v in dict.fromkeys(p.comparisons["variant"])]


def _several_treatments(p: ReadoutParts) -> bool:
    return p.comparisons["variant"].nunique() > 1


def _p_adjusted(row: Any) -> tuple[Any, str]:
    """The p-value a row's decision reads, and how it is named."""
    if row.get("correction") is not None and pd.notna(row.get("correction")):
        size = format_number(row["family_size"], "count")
        return row["p_adjusted"], f"p ({row['correction']}-adjusted in a family of {size})"
    return row["p_value"], "p (unadjusted)"


def _summary(p: ReadoutParts) -> str:
    k = slug(p.experiment)
    cls = _VERDICT_CLASS.get(p.verdict, "inconclusive")
    out = [f'<div class="card {cls}">',
           f'<p class="verdict">Verdict: {html.escape(p.verdict.upper())}</p>',
           f'<p class="note">Rule: {html.escape(p.rule)}</p>', "<ul>"]
    several = _several_treatments(p)
    comp = p.comparisons
    for _, row in comp[comp["role"] == "primary"].iterrows():
        key = f"{k}/{_row_key(row)}"
        pv, pname = _p_adjusted(row)
        out.append(
            f"<li>Primary <b>{html.escape(_label(row, several))}</b>: lift "
            f"{num(row['lift'], 'percent', key + '/lift')} "
            f"[{num(row['lift_ci_low'], 'percent', key + '/lift:ci_low')}, "
            f"{num(row['lift_ci_high'], 'percent', key + '/lift:ci_high')}] "
            f"({html.escape(format_number(row['ci_level'], 'level'))} CI); "
            f"{html.escape(pname)} = {num(pv, 'p', key + '/p_decision')}; "
            f"{html.escape(str(row.get('decision', '')))}</li>")
    guards = comp[comp["role"] == "guardrail"]
    if len(guards):
        for _, row in guards.iterrows():
            key = f"{k}/{_row_key(row)}"
            ok = str(row.get("decision", "")).startswith("pass")
            status = (f'<span class="{"ok" if ok else "bad"}">'
                      f"{html.escape(str(row.get('decision', '')))}</span>")
            out.append(
                f"<li>Guardrail <b>{html.escape(_label(row, several))}</b>: {status} "
                f"(non-inferiority margin {num(row.get('margin'), 'percent', key + '/margin')}"
                f", one-sided p = {num(row.get('ni_p_value'), 'p', key + '/ni_p_value')}; "
                f"lift {num(row['lift'], 'percent', key + '/lift')})</li>")
    else:
        out.append("<li>Guardrails: none declared</li>")
    out.append(f"<li>{_srm_text(p)}</li>")
    out.append(f"<li>{_window_text(p)}</li>")
    out.append("</ul></div>")
    if p.srm and p.srm.get("mismatch"):
        out.append(f'<div class="srm"><b>SAMPLE RATIO MISMATCH</b>: the split of units does '
                   f"not fit the design; the results are not trustworthy until the cause is "
                   f"found. {html.escape(str(p.srm.get('message', '')))}</div>")
    out.extend(f'<p class="note">{html.escape(n)}</p>' for n in p.notes)
    return "\n".join(out)


def _srm_text(p: ReadoutParts) -> str:
    k = slug(p.experiment)
    if not p.srm:
        return "Sample ratio check: not run"
    bad = bool(p.srm.get("mismatch"))
    status = ('<span class="bad">MISMATCH</span>' if bad
              else '<span class="ok">no mismatch</span>')
    return (f"Sample ratio check: {status} (χ² p = "
            f"{num(p.srm.get('p_value'), 'p', k + '/srm/p_value')})")


def _window_text(p: ReadoutParts) -> str:
    k = slug(p.experiment)
    w = p.window
    units = ", ".join(
        f"{html.escape(str(arm))} {num(n, 'count', f'{k}/units/{arm}')}"
        for arm, n in p.units.items())
    if w:
        when = (f"Window: {num(w.get('start'), 'date', k + '/window/start')} to "
                f"{num(w.get('end'), 'date', k + '/window/end')} "
                f"({num(w.get('days'), 'count', k + '/window/days')} days)")
    else:
        when = "Window: not known"
    return f"{when}; units per arm: {units or _NONE}"


def _metrics_table(p: ReadoutParts) -> str:
    k = slug(p.experiment)
    several = _several_treatments(p)
    header = ["metric (role)", "control", "treatment", "Δ [CI]", "lift [CI]", "p",
              "decision"]
    rows = []
    for _, row in p.comparisons.iterrows():
        key = f"{k}/{_row_key(row)}"
        pv, _ = _p_adjusted(row)
        adjusted = pv is not row["p_value"]
        p_html = num(pv, "p", key + "/p_decision")
        p_text = format_number(pv, "p") + (" adj." if adjusted else " unadj.")
        p_cell = Cell(p_html + (" adj." if adjusted else " unadj."), len(p_text))
        rows.append([
            name_cell(_label(row, several), str(row["role"])),
            num_cell(row["control_value"], "estimate", key + "/control_value"),
            num_cell(row["treatment_value"], "estimate", key + "/treatment_value"),
            interval_cell(row["ci_low"], row["ci_high"], "delta", key + "/estimate",
                          row["estimate"]),
            interval_cell(row["lift_ci_low"], row["lift_ci_high"], "percent",
                          key + "/lift", row["lift"]),
            p_cell, prose_cell(row.get("decision", "")),
        ])
    levels = sorted({(str(r["role"]), float(r["ci_level"]),
                      r["correction"] if pd.notna(r.get("correction")) else None)
                     for _, r in p.comparisons.iterrows()})
    note = "; ".join(ci_label(role, lvl, corr) for role, lvl, corr in levels)
    return (table(header, rows) + f'<p class="note">Δ = treatment − control; lift = '
            f"treatment / control − 1. Intervals: {html.escape(note)}. p: adjusted (adj.) "
            "within the primary family, unadjusted (unadj.) for the other metrics; a "
            "guardrail's decision reads its one-sided non-inferiority test.</p>")


def _forest(p: ReadoutParts) -> str:
    c = p.comparisons
    several = _several_treatments(p)
    rows = pd.DataFrame({
        "label": [_label(r, several) for _, r in c.iterrows()], "role": c["role"],
        "lift": c["lift"], "lift_ci_low": c["lift_ci_low"], "lift_ci_high": c["lift_ci_high"],
        "ci_level": c["ci_level"],
        "ci_correction": [r["correction"] if r["role"] == "primary" and
                          pd.notna(r.get("correction")) else None for _, r in c.iterrows()],
        "margin": c["margin"] if "margin" in c.columns else None,
    })
    return _img(forest_lifts, rows, alt=f"forest plot of relative lifts of {p.experiment}")


def _power(p: ReadoutParts) -> str:
    if p.power is None or not len(p.power):
        return '<p class="note">No power figures in this readout.</p>'
    k = slug(p.experiment)
    rows = []
    for _, row in p.power.iterrows():
        key = f"{k}/{_row_key(row)}"
        rows.append([name_cell(_label(row, _several_treatments(p))),
                     num_cell(row.get("mde"), "percent", key + "/mde"),
                     num_cell(row.get("power"), "estimate", key + "/power"),
                     num_cell(row.get("units_needed"), "count", key + "/units_needed")])
    return (table(["metric", "MDE (relative)", "achieved power", "units needed per arm"],
                  rows)
            + '<p class="note">The minimum detectable effect at the observed sample and the '
              "power to detect the observed lift; units needed per arm for the observed lift "
              "to be detected with the readout's power target.</p>")


def _over_time(p: ReadoutParts) -> str:
    ot = p.over_time
    if ot is None or not len(ot):
        return '<p class="note">No effect-over-time series in this readout.</p>'
    several = ot["variant"].nunique() > 1 if "variant" in ot.columns else False
    series = ot.assign(label=[_label(r, several) for _, r in ot.iterrows()])
    axes = list(dict.fromkeys(series["axis"]))
    levels = sorted(set(series["ci_level"])) if "ci_level" in series.columns else []
    lv = ", ".join(format_number(x, "level") for x in levels) or "unstated"
    return (_img(cumulative_effect, series, axes,
                 alt=f"cumulative effect over time of {p.experiment}")
            + f'<p class="note">Cumulative Δ (treatment − control) with its {lv} interval '
              "(shaded), by calendar day and by day since a unit's first exposure: a "
              "novelty or primacy effect shows as a trend in the second.</p>")


def _segments(p: ReadoutParts) -> str:
    sg = p.segments
    if sg is None or not len(sg):
        return '<p class="note">No segments requested (--segments COL).</p>'
    k = slug(p.experiment)
    several = sg["variant"].nunique() > 1
    titles = []
    for _, r in sg.iterrows():
        het = r.get("heterogeneity_p")
        titles.append(f"{_label(r, several)}: heterogeneity p = "
                      f"{format_number(het, 'p')}")
    plot_rows = sg.assign(panel=[_label(r, several) for _, r in sg.iterrows()],
                          title=titles)
    rows = []
    for _, r in sg.iterrows():
        key = f"{k}/segment/{r['metric']}/{r['variant']}/{r['segment']}"
        rows.append([name_cell(r["segment"]), name_cell(_label(r, several)),
                     num_cell(r.get("units"), "count", key + "/units"),
                     interval_cell(r["ci_low"], r["ci_high"], "delta", key + "/estimate",
                                   r["estimate"]),
                     num_cell(r.get("heterogeneity_p"), "p", key + "/heterogeneity_p")])
    col = html.escape(p.segment_column or "segment")
    note = f'<p class="note">{html.escape(p.segment_note)}</p>' if p.segment_note else ""
    return (_img(segment_effects, plot_rows, alt=f"effect per {col} of {p.experiment}")
            + table([p.segment_column or "segment", "metric", "units", "Δ [CI]",
                     "heterogeneity p"], rows) + note)


def _quantiles(p: ReadoutParts) -> str:
    q = p.quantiles
    if q is None or not len(q):
        return '<p class="note">No quantile metrics in this readout.</p>'
    k = slug(p.experiment)
    rows = []
    for _, r in q.iterrows():
        key = f"{k}/quantile/{r['metric']}/{r['quantile']}"
        rows.append([name_cell(r["metric"]), text_cell(r["quantile"]),
                     num_cell(r["control_value"], "estimate", key + "/control_value"),
                     num_cell(r["treatment_value"], "estimate", key + "/treatment_value"),
                     interval_cell(r["ci_low"], r["ci_high"], "delta", key + "/estimate",
                                   r["estimate"])])
    methods = sorted({str(m) for m in q.get("method", pd.Series(dtype=object)).dropna()})
    how = f" Intervals: {html.escape('; '.join(methods))}." if methods else ""
    return (table(["metric", "quantile", "control", "treatment", "Δ [CI]"], rows)
            + f'<p class="note">Δ = treatment − control.{how}</p>')


def _position_ctr(p: ReadoutParts) -> str:
    pc = p.position_ctr
    if pc is None or not len(pc):
        return '<p class="note">No position CTR (the logs have no results table).</p>'
    return _img(position_ctr_curves, pc.assign(experiment=p.experiment),
                alt=f"click-through rate by rank per arm of {p.experiment}")


def _interleaving(p: ReadoutParts) -> str:
    il = p.interleaving
    if not il:
        return '<p class="note">No interleaving log for this experiment.</p>'
    k = slug(p.experiment) + "/interleaving"
    header = ["Δ_AB of the treatment [CI]", "p", "wins", "losses", "ties", "queries",
              f"units ({il.get('unit', 'unit')})"]
    row = [interval_cell(il.get("ci_low"), il.get("ci_high"), "delta", k + "/estimate",
                         il.get("estimate")),
           num_cell(il.get("p_value"), "p", k + "/p_value"),
           num_cell(il.get("wins"), "count", k + "/wins"),
           num_cell(il.get("losses"), "count", k + "/losses"),
           num_cell(il.get("ties"), "count", k + "/ties"),
           num_cell(il.get("queries"), "count", k + "/queries"),
           num_cell(il.get("n"), "count", k + "/n")]
    out = [table(header, [row])]
    test = il.get("test")
    out.append(f'<p class="note">Δ_AB &gt; 0: the treatment won (wins, losses and ties are '
               f"the treatment's); {html.escape(format_number(il.get('ci_level'), 'level'))} "
               f"interval and p from {html.escape(str(test or 'the per-unit test'))}.</p>")
    sens = il.get("sensitivity")
    if sens is not None and pd.notna(sens):
        out.append(f"<p>Sensitivity: the same decision from an A/B test would need about "
                   f"{num(sens, 'count', k + '/sensitivity')} units "
                   f"({html.escape(str(il.get('sensitivity_note', '')))}).</p>")
    pq = p.interleaving_queries
    if pq is not None and len(pq):
        rows = [[name_cell(r["query"]), num_cell(r["pages"], "count", f"{k}/query/{r['query']}/pages"),
                 num_cell(r["delta"], "delta", f"{k}/query/{r['query']}/delta")]
                for _, r in pq.iterrows()]
        out.append(f"<h4>Per query ({num(len(pq), 'count', k + '/n_queries_shown')} "
                   "shown)</h4>")
        out.append(table(["query", "pages", "Δ_q"], rows))
    return "\n".join(out)


def _offline(p: ReadoutParts) -> str:
    off = p.offline
    if off is None or not len(off):
        return ('<p class="note">No offline runs given: pass the control and treatment runs '
                "and qrels to see the offline prediction beside the online result.</p>")
    k = slug(p.experiment) + "/offline"
    rows = []
    for _, r in off.iterrows():
        key = f"{k}/{r['measure']}"
        rows.append([name_cell(r["measure"]),
                     interval_cell(r["ci_low"], r["ci_high"], "delta", key + "/estimate",
                                   r["estimate"]),
                     num_cell(r.get("p_value"), "p", key + "/p_value"),
                     num_cell(r.get("n"), "count", key + "/n")])
    prim = p.comparisons[p.comparisons["role"] == "primary"]
    online = []
    for _, r in prim.iterrows():
        key = f"{slug(p.experiment)}/{_row_key(r)}"
        online.append(f"A/B {html.escape(str(r['metric']))} lift "
                      f"{num(r['lift'], 'percent', key + '/lift')}")
    if p.interleaving:
        key = slug(p.experiment) + "/interleaving/estimate"
        online.append(f"interleaving Δ_AB {num(p.interleaving.get('estimate'), 'delta', key)}")
    beside = "; ".join(online) or _NONE
    return (table(["offline measure", "Δ [CI]", "p", "queries"], rows)
            + f"<p>Online result beside it: {beside}.</p>")


_RENDER: dict[str, Callable[[ReadoutParts], str]] = {
    "summary": _summary, "metrics": _metrics_table, "forest": _forest, "power": _power,
    "over-time": _over_time, "segments": _segments, "quantiles": _quantiles,
    "position-ctr": _position_ctr, "interleaving": _interleaving, "offline": _offline,
}


def readout_section(readout: Any, level: int = 2) -> str:
    """One experiment's readout as an HTML ``<section>`` (heading level ``level``, its
    parts one level below), for a page that includes :data:`CSS`."""
    p = parts_of(readout)
    h, sub = f"h{level}", f"h{level + 1}"
    out = [f'<section id="{slug(p.experiment)}" class="readout">',
           f"<{h}>{html.escape(p.experiment)}</{h}>",
           f"<p>Control arm <b>{html.escape(p.control)}</b>; treatment "
           f"{html.escape(', '.join(_treatments(p)))}.</p>"]
    for part, title in PARTS:
        out.append(f'<section id="{part_id(p.experiment, part)}">')
        if part != "summary":
            out.append(f"<{sub}>{html.escape(title)}</{sub}>")
        out.append(_RENDER[part](p))
        out.append("</section>")
    out.append("</section>")
    return "\n".join(out)


def toc(readouts: Sequence[ReadoutParts], extra: Sequence[tuple[str, str]] = ()) -> str:
    """The table of contents: each experiment with its verdict and parts; then ``extra``
    (id, title) sections of the page."""
    items = []
    for p in readouts:
        subs = "".join(f'<li><a href="#{part_id(p.experiment, part)}">{html.escape(t)}</a>'
                       "</li>" for part, t in PARTS)
        items.append(f'<li><a href="#{slug(p.experiment)}">{html.escape(p.experiment)}</a> '
                     f"— {html.escape(p.verdict)}<ul>{subs}</ul></li>")
    items.extend(f'<li><a href="#{html.escape(i)}">{html.escape(t)}</a></li>'
                 for i, t in extra)
    return f'<nav id="contents"><h2>Contents</h2><ul>{"".join(items)}</ul></nav>'


def readout_html(readout: Any | Sequence[Any], title: str | None = None) -> str:
    """One or several experiment readouts as one self-contained HTML page."""
    from onlineeval import __version__

    many = readout if isinstance(readout, list | tuple) else [readout]
    parts = [parts_of(r) for r in many]
    if title is None:
        title = "Experiment readout: " + ", ".join(p.experiment for p in parts)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{html.escape(title)}</title>", f"<style>{CSS}</style></head><body><main>",
           f"<h1>{html.escape(title)}</h1>",
           f'<p class="note">onlineeval {html.escape(__version__)}</p>',
           toc(parts)]
    out.extend(readout_section(p) for p in parts)
    out.append("</main></body></html>")
    return "\n".join(out)
