"""The HTML readout of an experiment: "should we ship?" on one self-contained page.

:func:`readout_html` renders one or several :class:`onlineeval.readout.Readout` records as a
page: a table of contents, then per experiment a summary card (the verdict per treatment with
its reasons and the rule, the primary lifts with their intervals, the guardrails, the
sample-ratio check, the window and units), the metric table, a forest plot of the lifts, power
and minimum detectable effects, the effect over time, the effect per segment, the quantile
metrics, position CTR per arm, the interleaving panel and — when the readout has it — the
offline prediction beside the online result. :func:`readout_section` is one experiment's
part, which the study report (:mod:`onlineeval.report.render`) embeds as well.

The page is self-contained: inline CSS, images as ``data:`` PNG, no script, nothing fetched.

Width: the page declares its content width (``--page-width``,
:data:`~onlineeval.report.readout_plots.PAGE_WIDTH_PX`) and the font size of its tables
(:data:`TABLE_FONT_PX`). Every table is laid out to fit: a cell counts as wide as its longest
line (lines end at ``<br>``) at :data:`CHAR_EM` em per character (2 for an East Asian wide
one) plus :data:`CELL_PAD_PX`; text in a ``.name`` or ``.prose`` span counts at most the
span's CSS ``max-width`` (:data:`NAME_CH`, :data:`PROSE_CH` characters: such spans wrap); a
table counts the sum of its widest cell per column. A table that would count wider than the
page is shown transposed (``<table class="transposed">``: its first column holds the column
names), in as many pieces as needed (each after the first ``class="transposed continued"``). tests/report/test_readout_page.py
checks the rule on the HTML with its own estimate; docs/screenshots.py measures the tables
as Chromium lays them out.

Numbers: every number shown is a field of the readout, spelled by
:mod:`onlineeval.formatting` (``number``, ``pvalue``, ``percent``, ``count``, ``when``) as
the terminal readout spells it; each sits in a ``<span data-key=... data-kind=...>`` naming
the field, so a test (or a reader's script) can match it to the readout. The p-value shown
for a metric is the one its decision reads: Holm-adjusted for a primary metric, the one-sided
non-inferiority p for a guardrail, unadjusted (and labelled so) for a secondary metric.
"""

from __future__ import annotations

import html
import re
import unicodedata
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from onlineeval.formatting import count, number, percent, plain, pvalue, when
from onlineeval.readout.decide import NON_INFERIOR
from onlineeval.report.plots import PlotError, position_ctr_curves
from onlineeval.report.readout_plots import (
    PAGE_WIDTH_PX,
    confidence_sequence,
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
#: the widest a cell of the page's own prose (a verdict) may be, in characters
PROSE_CH = 16
#: per-query interleaving rows shown (the queries with the most pages); JSON has them all
QUERIES_SHOWN = 15

#: the sub-sections of every experiment's readout, in order (each is present, with a note
#: when the readout has no data for it); ids are ``readout-<experiment>-<part>``
PARTS: tuple[tuple[str, str], ...] = (
    ("summary", "Summary"),
    ("metrics", "Metrics"),
    ("forest", "Lifts (forest plot)"),
    ("power", "Power and minimum detectable effect"),
    ("over-time", "Effect over time"),
    ("sequential", "Always-valid monitoring (sequential test)"),
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
.card{{border:1px solid #c9d6e8;border-left:6px solid #8a6d00;padding:.4em 1em;margin:.8em 0;
background:#f7fafd}}
.card.ship{{border-left-color:#1e7b34}}.card.no-ship{{border-left-color:#b3261e}}
.verdict{{font-size:1.2em;font-weight:700;margin:.3em 0}}
.v-ship{{color:#1e7b34}}.v-no-ship{{color:#b3261e}}.v-inconclusive{{color:#8a6d00}}
.ok{{color:#1e7b34;font-weight:600}}.bad{{color:#b3261e;font-weight:700}}
.srm{{background:#fdecea;border:2px solid #b3261e;padding:.5em 1em;margin:.6em 0}}
.note{{color:#555;font-size:.9em}}
nav ul{{margin:.2em 0}}nav li{{margin:.3em 0}}nav .note a{{white-space:nowrap}}
"""

_VERDICT_CLASS = {"ship": "ship", "don't ship": "no-ship", "inconclusive": "inconclusive"}


def _date(value: Any) -> str:
    return "null" if plain(value) is None else when(value)


#: how each kind of number is spelled: the functions of :mod:`onlineeval.formatting`
SPELL: dict[str, Callable[[Any], str]] = {
    "estimate": number,
    "delta": lambda v: number(v, signed=True),
    "percent": percent,
    "p": pvalue,
    "count": count,
    "level": lambda v: percent(v, signed=False),
    "fraction": lambda v: percent(v, signed=False),
    "date": _date,
}


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
    s = "" if text is None else str(text)
    return Cell(html.escape(s), _width_chars(s))


def name_cell(text: Any, below: str | None = None) -> Cell:
    """A cell holding a name from the data, wrapped at :data:`NAME_CH` characters (and a
    short word of the page's ``below`` it, e.g. the metric's role)."""
    s = "null" if text is None else str(text)
    chars = min(NAME_CH, _width_chars(s))
    extra = ""
    if below:
        extra = f'<br><span class="role">{html.escape(below)}</span>'
        chars = max(chars, _width_chars(below))
    return Cell(f'<span class="name">{html.escape(s)}</span>{extra}', chars)


def prose_cell(text: Any) -> Cell:
    """A cell of the page's own words (a verdict), wrapped at :data:`PROSE_CH` characters."""
    s = "" if text is None else str(text)
    return Cell(f'<span class="prose">{html.escape(s)}</span>', min(PROSE_CH, _width_chars(s)))


def num(value: Any, kind: str, key: str | None) -> str:
    """A number spelled by :data:`SPELL`, in a span naming its field (``data-key``)."""
    text = html.escape(SPELL[kind](value))
    if key is None:
        return text
    return f'<span data-key="{html.escape(key)}" data-kind="{kind}">{text}</span>'


def num_cell(value: Any, kind: str, key: str | None, suffix: str = "") -> Cell:
    return Cell(num(value, kind, key) + html.escape(suffix),
                len(SPELL[kind](value)) + len(suffix))


def interval(low: Any, high: Any, kind: str, key: str) -> str:
    """``[low, high]``, each bound in its own span (``key:ci_low``, ``key:ci_high``)."""
    return f"[{num(low, kind, key + ':ci_low')}, {num(high, kind, key + ':ci_high')}]"


def estimate_cell(value: Any, low: Any, high: Any, kind: str, key: str) -> Cell:
    """``value`` and its interval on the line below."""
    width = len(SPELL[kind](low)) + len(SPELL[kind](high)) + 4
    return Cell(f"{num(value, kind, key)}<br>{interval(low, high, kind, key)}",
                max(width, len(SPELL[kind](value))))


def _cell_px(chars: int) -> float:
    return chars * CHAR_EM * TABLE_FONT_PX + CELL_PAD_PX


def table_px(header: Sequence[Cell], rows: Sequence[Sequence[Cell]]) -> float:
    """The width the layout rule counts for a table (the module docstring)."""
    widths = [max(c.chars for c in col) for col in zip(header, *rows, strict=True)]
    return sum(_cell_px(w) for w in widths)


def table(header: Sequence[Any], rows: Sequence[Sequence[Cell]]) -> str:
    """A table that fits the page: as given when its width fits, else transposed (a row
    per column) in pieces of as many of its rows as fit."""
    head = [h if isinstance(h, Cell) else text_cell(h) for h in header]
    if not rows:
        return '<p class="note">no rows</p>'
    if table_px(head, rows) <= PAGE_WIDTH_PX:
        return _html_table(head, rows)
    pieces, start = [], 0
    while start < len(rows):
        stop = start + 1
        while stop < len(rows) and table_px(*_transposed(head, rows[start:stop + 1])) \
                <= PAGE_WIDTH_PX:
            stop += 1
        pieces.append(_html_table(*_transposed(head, rows[start:stop]), header_cells=True,
                                  transposed="transposed continued" if start else "transposed"))
        start = stop
    return "\n".join(pieces)


def _transposed(head: Sequence[Cell], block: Sequence[Sequence[Cell]],
                ) -> tuple[list[Cell], list[list[Cell]]]:
    return ([head[0], *(r[0] for r in block)],
            [[head[j], *(r[j] for r in block)] for j in range(1, len(head))])


def _html_table(head: Sequence[Cell], rows: Sequence[Sequence[Cell]],
                header_cells: bool = False, transposed: str = "") -> str:
    """The table's HTML; a transposed piece says so (``class="transposed"``: its first
    column holds the column names; ``continued``: it goes on the piece before), so a
    reader's script can turn it back."""
    th = "".join(f"<th>{c.html}</th>" for c in head)
    body = []
    for r in rows:
        first = f"<th>{r[0].html}</th>" if header_cells else f"<td>{r[0].html}</td>"
        body.append("<tr>" + first + "".join(f"<td>{c.html}</td>" for c in r[1:]) + "</tr>")
    cls = f' class="{transposed}"' if transposed else ""
    return (f"<table{cls}><thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody>"
            "</table>")


# --- reading the readout ---------------------------------------------------------------


def name_of(readout: Any) -> str:
    """The experiment's name on the page (``experiment`` when the log has none)."""
    return "experiment" if readout.experiment is None else str(readout.experiment)


def slug(name: str) -> str:
    """The id stem of an experiment's readout (letters, digits, ``_`` and ``-`` only)."""
    return "readout-" + re.sub(r"[^A-Za-z0-9_-]+", "-", str(name))


def part_id(experiment: str, part: str) -> str:
    return f"{slug(experiment)}-{part}"


def row_key(readout: Any, row: Any) -> str:
    """The data-key stem of a metric row: experiment, metric, treatment."""
    return f"{slug(name_of(readout))}/{row.metric}/{row.treatment}"


def decision_p(row: Any) -> tuple[float, str]:
    """The p-value a metric's decision reads and its label: Holm-adjusted (primary), the
    non-inferiority test's (guardrail), else unadjusted."""
    if row.role == "primary":
        return row.result.p_adjusted, "adj."
    if row.role == "guardrail":
        return row.ni_p_value, "NI"
    return row.result.p_value, "unadj."


def margin_text(row: Any, key: str) -> str:
    """A guardrail's non-inferiority margin: relative in %, else absolute."""
    if row.margin is None:
        return "none"
    if row.margin_relative:
        return f"{num(row.margin, 'fraction', key + '/margin')} of the control's value"
    return f"{num(row.margin, 'estimate', key + '/margin')} (absolute)"


def margin_bound(row: Any) -> float | None:
    """A guardrail's non-inferiority bound as a relative lift (for the forest plot): the
    margin, below 0 where higher is better, above where lower is; an absolute margin over
    the control's value."""
    if row.margin is None or row.role != "guardrail":
        return None
    m = row.margin if row.margin_relative else row.margin / row.control_value
    return -m if row.better == "higher" else m


def _several(readout: Any) -> bool:
    return len(readout.treatments) > 1


def _label(readout: Any, metric: str, treatment: str) -> str:
    return f"{metric} [{treatment}]" if _several(readout) else str(metric)


def _frames(value: Any) -> list[pd.DataFrame]:
    """A slot (segments, quantiles) as a list of frames: a frame, a mapping of frames or
    None."""
    if value is None:
        return []
    if isinstance(value, pd.DataFrame):
        return [value] if len(value) else []
    if isinstance(value, Mapping):
        return [v for v in value.values() if isinstance(v, pd.DataFrame) and len(v)]
    to_frame = getattr(value, "to_frame", None)
    return _frames(to_frame()) if callable(to_frame) else []


# --- the parts -------------------------------------------------------------------------


def _img(plot: Callable[..., str], *args: Any, alt: str) -> str:
    """The plot as an embedded PNG, or a note saying why it could not be drawn."""
    try:
        b64 = plot(*args)
    except PlotError as exc:
        warnings.warn(f"the readout's {alt} was left out: {exc}", stacklevel=2)
        return (f'<p class="note">The {html.escape(alt)} could not be drawn: '
                f"{html.escape(str(exc))}</p>")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{b64}">'


def _note(text: str) -> str:
    return f'<p class="note">{text}</p>'


def _summary(ro: Any) -> str:
    verdicts = {d.verdict for d in ro.decisions}
    overall = verdicts.pop() if len(verdicts) == 1 else "inconclusive"
    out = [f'<div class="card {_VERDICT_CLASS.get(overall, "inconclusive")}">']
    if not ro.decisions:
        out.append('<p class="verdict v-inconclusive">No verdict: the readout has no A/B '
                   "metric to decide on</p>")
    for d in ro.decisions:
        who = f" ({html.escape(d.treatment)})" if _several(ro) else ""
        cls = _VERDICT_CLASS.get(d.verdict, "inconclusive")
        reasons = "; ".join(d.reasons)
        out.append(f'<p class="verdict v-{cls}">Verdict{who}: {html.escape(d.verdict.upper())}'
                   f"</p><p>{html.escape(reasons)}</p>")
    out.append(f'<p class="note">Rule: {html.escape(ro.rule)}.</p><ul>')
    for r in ro.rows("primary"):
        key = row_key(ro, r)
        out.append(
            f"<li>Primary <b>{html.escape(_label(ro, r.metric, r.treatment))}</b>: lift "
            f"{num(r.rel_lift, 'percent', key + '/rel_lift')} "
            f"{interval(r.rel_ci_low, r.rel_ci_high, 'percent', key + '/rel_lift')} "
            f"({num(r.result.ci_level, 'level', key + '/ci_level')} CI at Holm's level for "
            f"the row), Holm-adjusted p = {num(r.result.p_adjusted, 'p', key + '/p')} in a "
            f"family of {num(r.result.family_size, 'count', key + '/family_size')}: "
            f"{html.escape(r.verdict)}</li>")
    guards = ro.rows("guardrail")
    for r in guards:
        key = row_key(ro, r)
        fails = r.verdict != NON_INFERIOR
        status = f'<span class="{"bad" if fails else "ok"}">{html.escape(r.verdict)}</span>'
        out.append(
            f"<li>Guardrail <b>{html.escape(_label(ro, r.metric, r.treatment))}</b>: {status}"
            f" (margin {margin_text(r, key)}; one-sided p = "
            f"{num(r.ni_p_value, 'p', key + '/p')}; lift "
            f"{num(r.rel_lift, 'percent', key + '/rel_lift')})</li>")
    if not guards and ro.metrics:
        out.append("<li>Guardrails: none declared</li>")
    out.append(f"<li>{_srm_text(ro)}</li><li>{_window_text(ro)}</li></ul></div>")
    if ro.srm is not None and ro.srm.status == "mismatch":
        s = ro.srm
        seen = ", ".join(f"{html.escape(str(v))} {num(n, 'count', None)}"
                         for v, n in s.observed.items())
        want = ", ".join(f"{html.escape(str(v))} {num(n, 'estimate', None)}"
                         for v, n in s.expected.items())
        out.append(f'<div class="srm"><b>SAMPLE RATIO MISMATCH</b>: units {seen}; expected '
                   f"{want}. The units per arm do not fit the expected split: assignment or "
                   "logging is broken and the A/B results are not trustworthy until the "
                   "cause is found.</div>")
    out.extend(_note(html.escape(n)) for n in ro.notes)
    excluded = {why: n for why, n in ro.excluded.items() if n}
    if excluded:
        left = ", ".join(f"{html.escape(str(why))}: {num(n, 'count', None)}"
                         for why, n in excluded.items())
        out.append(_note(f"Rows left out: {left}."))
    return "\n".join(out)


def _srm_text(ro: Any) -> str:
    k = slug(name_of(ro))
    s = ro.srm
    if s is None:
        return "Sample ratio check: not run (no A/B log)"
    bad = s.status == "mismatch"
    status = ('<span class="bad">MISMATCH</span>' if bad
              else '<span class="ok">no mismatch</span>')
    expected = ", ".join(f"{html.escape(str(v))} {num(e, 'estimate', None)}"
                         for v, e in s.expected.items())
    return (f"Sample ratio check: {status} (χ² p = {num(s.p_value, 'p', k + '/srm/p_value')}"
            f", alarm below {num(s.alpha, 'estimate', None)}; expected {expected})")


def _window_text(ro: Any) -> str:
    k = slug(name_of(ro))
    w = ro.window
    units = ", ".join(f"{html.escape(str(arm))} {num(n, 'count', f'{k}/units/{arm}')}"
                      for arm, n in ro.units.items())
    if w is not None and w.first_exposure is not None:
        when_ = (f"Exposures {num(w.first_exposure, 'date', k + '/window/first_exposure')} "
                 f"to {num(w.last_exposure, 'date', k + '/window/last_exposure')} "
                 f"({num(w.days, 'count', k + '/window/days')} days)")
    else:
        when_ = "Exposures: no timestamps"
    if w is not None and (w.start is not None or w.end is not None):
        when_ += (f"; window {num(w.start, 'date', k + '/window/start')} to "
                  f"{num(w.end, 'date', k + '/window/end')}")
    return f"{when_}; units per arm ({html.escape(ro.unit)}): {units or 'none'}"


def _metrics_table(ro: Any) -> str:
    if not ro.metrics:
        return _note("No A/B metrics in this readout.")
    header = ["metric (role)", "control", "treatment", "Δ [CI]", "lift [CI]", "p",
              "verdict"]
    rows = []
    for r in ro.metrics:
        key = row_key(ro, r)
        p, label = decision_p(r)
        rows.append([
            name_cell(_label(ro, r.metric, r.treatment), r.role),
            num_cell(r.control_value, "estimate", key + "/control_value"),
            num_cell(r.treatment_value, "estimate", key + "/treatment_value"),
            estimate_cell(r.result.estimate, r.result.ci_low, r.result.ci_high, "delta",
                          key + "/estimate"),
            estimate_cell(r.rel_lift, r.rel_ci_low, r.rel_ci_high, "percent",
                          key + "/rel_lift"),
            num_cell(p, "p", key + "/p", f" {label}"),
            prose_cell(r.verdict),
        ])
    intervals = sorted({f"{r.role}: {r.interval}" for r in ro.metrics})
    test = ro.metrics[0].result.test
    return (table(header, rows) + _note(
        "Δ = treatment − control; lift = treatment / control − 1 with a delta-method "
        f"interval. p: adj. = Holm-adjusted within the primary family of "
        f"{num(ro.family_size, 'count', None)}; NI = the guardrail's one-sided "
        "non-inferiority test; unadj. = unadjusted (secondary metrics are not in the "
        f"family). Test: {html.escape(test)}. Intervals: "
        f"{html.escape('; '.join(intervals))}."))


def _forest(ro: Any) -> str:
    if not ro.metrics:
        return _note("No A/B metrics in this readout.")
    rows = pd.DataFrame([{
        "label": _label(ro, r.metric, r.treatment), "role": r.role, "lift": r.rel_lift,
        "lift_ci_low": r.rel_ci_low, "lift_ci_high": r.rel_ci_high,
        "ci_level": r.result.ci_level,
        "ci_correction": ro.correction if r.role == "primary" else None,
        "margin": margin_bound(r),
    } for r in ro.metrics])
    return _img(forest_lifts, rows, alt=f"forest plot of relative lifts of {name_of(ro)}")


def _power(ro: Any) -> str:
    if not ro.metrics:
        return _note("No A/B metrics in this readout.")
    rows = []
    for r in ro.metrics:
        key = row_key(ro, r)
        rows.append([name_cell(_label(ro, r.metric, r.treatment), r.role),
                     num_cell(r.mde, "estimate", key + "/mde"),
                     num_cell(r.mde_rel, "fraction", key + "/mde_rel"),
                     num_cell(r.result.n, "count", key + "/n"),
                     num_cell(r.units_needed, "count", key + "/units_needed")])
    return (table(["metric", "MDE (±Δ)", "MDE (±lift)", "units (both arms)",
                   "units the observed Δ needs"], rows)
            + _note(f"Minimum detectable effect with power {html.escape(number(ro.power))} "
                    f"at the observed units and alpha {html.escape(number(ro.alpha))}; the "
                    "units (both arms) at which the observed Δ would be detected with that "
                    "power — how much more traffic an inconclusive result needs."))


#: the time axes of the over-time slot: key, axis title, x column
_TIME_AXES = (("day", "calendar day (cumulative)", "day"),
              ("exposure_day", "days since a unit's first exposure", "days_since_exposure"))


def _over_time(ro: Any) -> str:
    slot = ro.over_time
    frames = []
    if isinstance(slot, Mapping):
        for key, title, xcol in _TIME_AXES:
            f = slot.get(key)
            if isinstance(f, pd.DataFrame) and len(f) and xcol in f.columns:
                x = pd.to_datetime(f[xcol]) if key == "day" else f[xcol]
                frames.append(pd.DataFrame({
                    "axis": title, "x": list(x),
                    "label": [_label(ro, m, v) for m, v in zip(f["metric"], f["variant"],
                                                                strict=True)],
                    "estimate": f["estimate"], "ci_low": f["ci_low"], "ci_high": f["ci_high"],
                    "ci_level": f["ci_level"]}))
    if not frames:
        return _note("No effect-over-time series in this readout (it needs timestamps and "
                     "an A/B log).")
    series = pd.concat(frames, ignore_index=True)
    levels = ", ".join(SPELL["level"](x) for x in sorted(set(series["ci_level"])))
    return (_img(cumulative_effect, series, [t for _, t, _ in _TIME_AXES],
                 alt=f"effect over time of {name_of(ro)}")
            + _note(f"Left: the cumulative Δ (treatment − control) up to each calendar day; "
                    f"right: Δ on each day since a unit's first exposure (a novelty or primacy "
                    f"effect shows as a trend there). Shaded: {levels} intervals, unadjusted "
                    f"for the many looks — read the trend, not a single day's significance."))


def _sequential(ro: Any, frame: pd.DataFrame | None) -> str:
    if frame is None or frame.empty:
        return _note("No sequential readout on this page (it is drawn from the logs, with "
                     "timestamps: onlineeval readout LOGS -o PAGE.html, or "
                     "onlineeval.report.readout_page.render(readout, logs)).")
    lines = []
    for metric, part in frame.groupby("metric", sort=False):
        part = part.sort_values("look")
        last = _date(part["look_end"].iloc[-1])
        stops = part[part["stop"].astype(bool)]
        fixed = part[(part["fixed_ci_low"] > 0) | (part["fixed_ci_high"] < 0)]
        seq = (f"would have stopped on {_date(stops['look_end'].iloc[0])} (look "
               f"{int(stops['look'].iloc[0])} of {len(part)})" if len(stops) else
               f"does not stop by the last look ({last}, {len(part)} looks)")
        fix = (f"the fixed-horizon interval first excludes 0 on "
               f"{_date(fixed['look_end'].iloc[0])}" if len(fixed) else
               "the fixed-horizon interval never excludes 0")
        lines.append(f"{metric}: the sequential test {seq}; {fix}.")
    alpha = frame.attrs.get("alpha", ro.alpha)
    return (_img(confidence_sequence, frame, alt=f"confidence sequence of {name_of(ro)}")
            + _note(" ".join(lines))
            + _note(f"Shaded: the always-valid {SPELL['level'](1 - alpha)} interval "
                    "(normal-mixture confidence sequence, running intersection), which may be "
                    "read at every look and acted on at the first that excludes 0; dashed: "
                    "the fixed-horizon interval of each look alone, valid only at one "
                    "planned look. Each metric's sequence is valid over its looks, not across "
                    "metrics; an interleaving panel tests the mean per-user preference."))


def _segments(ro: Any) -> str:
    slot = ro.segments
    effects = slot.get("effects") if isinstance(slot, Mapping) else None
    if not isinstance(effects, pd.DataFrame) or not len(effects):
        return _note("No segments in this readout (onlineeval readout --segments COL).")
    k = slug(name_of(ro))
    column = str(slot.get("column", "segment"))
    het_rows = slot.get("heterogeneity")
    het: dict[tuple[str, str], dict[str, Any]] = {}
    if isinstance(het_rows, pd.DataFrame):
        het = {(str(h["metric"]), str(h["variant"])): dict(h) for _, h in het_rows.iterrows()}
    plot_rows, rows, corrections = [], [], set()
    for _, r in effects.iterrows():
        label = _label(ro, r["metric"], r["variant"])
        h = het.get((str(r["metric"]), str(r["variant"])), {})
        plot_rows.append({
            "panel": label, "segment": "null" if r["segment"] is None else str(r["segment"]),
            "title": f"{label}: heterogeneity ({h.get('test', 'test')}) p = "
                     f"{pvalue(h.get('p_value'))}",
            "estimate": r["estimate"], "ci_low": r["ci_low"], "ci_high": r["ci_high"]})
        key = f"{k}/segment/{r['metric']}/{r['variant']}"
        adjusted = isinstance(r.get("correction"), str)
        if adjusted:
            corrections.add(f"{r['correction']} over {plain(r['family_size'])} segments")
        rows.append([
            name_cell(r["segment"]), name_cell(label),
            num_cell(r["n"], "count", f"{key}/{r['segment']}/n"),
            estimate_cell(r["estimate"], r["ci_low"], r["ci_high"], "delta",
                          f"{key}/{r['segment']}/estimate"),
            num_cell(r["p_adjusted"] if adjusted else r["p_value"], "p",
                     f"{key}/{r['segment']}/p", " adj." if adjusted else " unadj."),
            num_cell(h.get("p_value"), "p", key + "/heterogeneity_p")])
    how = "; ".join(sorted(corrections)) or "none"
    return (_img(segment_effects, pd.DataFrame(plot_rows),
                 alt=f"effect per {column} of {name_of(ro)}")
            + table([column, "metric", "units", "Δ [CI]", "p", "heterogeneity p"], rows)
            + _note(f"A unit's segment is its {html.escape(column)} at its first exposure. "
                    f"Per-segment p adjusted: {html.escape(how)} (intervals unadjusted). "
                    "Heterogeneity: the treatment × segment interaction (Cochran's Q over the "
                    "segments with enough units in both arms)."))


def _quantiles(ro: Any) -> str:
    frames = _frames(ro.quantiles)
    if not frames:
        return _note("No quantile metrics in this readout.")
    k = slug(name_of(ro))
    rows, methods = [], set()
    for f in frames:
        for _, r in f.iterrows():
            q = r.get("quantile")
            key = f"{k}/quantile/{r['metric']}/{r.get('variant', '')}/{q}"
            methods.add(str(r.get("test", "")))
            rows.append([name_cell(_label(ro, r["metric"], r.get("variant", ""))),
                         num_cell(q, "estimate", key + "/quantile"),
                         num_cell(r["control_value"], "estimate", key + "/control_value"),
                         num_cell(r["treatment_value"], "estimate", key + "/treatment_value"),
                         estimate_cell(r["estimate"], r["ci_low"], r["ci_high"], "delta",
                                       key + "/estimate")])
    how = "; ".join(sorted(m for m in methods if m))
    return (table(["metric", "quantile", "control", "treatment", "Δ [CI]"], rows)
            + _note(f"Δ = treatment − control. Intervals: {html.escape(how or 'unstated')}."))


def _position_ctr(ro: Any) -> str:
    curves = getattr(ro, "position_ctr", None)
    if curves is None or not len(curves):
        return _note("No position CTR for this readout (it needs the A/B log's results).")
    return _img(position_ctr_curves, curves.assign(experiment=name_of(ro)),
                alt=f"click-through rate by rank per arm of {name_of(ro)}")


def _interleaving(ro: Any) -> str:
    il = ro.interleaving
    if il is None:
        return _note("No interleaving log for this experiment.")
    k = slug(name_of(ro)) + "/interleaving"
    header = ["Δ_AB of the treatment", "estimate [CI]", "p", "units", "test"]
    def row(label: Any, res: Any, key: str) -> list[Any]:
        # one comparison result: its estimate [CI], p, units and test
        return [label, estimate_cell(res.estimate, res.ci_low, res.ci_high, "delta",
                                     key + "/estimate"),
                num_cell(res.p_value, "p", key + "/p_value"),
                num_cell(res.n, "count", key + "/n", f" {res.unit}s"), prose_cell(res.test)]

    rows = [row(text_cell("pages pooled"), il.result, k)]
    if il.per_query is not None:
        rows.append(row(Cell(f"mean per-query Δ_q<br>({num(il.n_queries, 'count', k + '/n_queries')}"
                             " queries)", 16), il.per_query, k + "/per_query"))
    ev = il.event_credit
    if ev is not None:
        rows.append(row(Cell(f"credited by {html.escape(ev.credit)} events<br>("
                             f"{num(ev.impressions_with_events, 'count', k + '/events/pages')} "
                             "pages)", 16), ev.result, k + "/events"))
    out = [f"<p>Treatment team <b>{html.escape(il.treatment_team)}</b> against control team "
           f"<b>{html.escape(il.control_team)}</b>: wins "
           f"{num(il.wins, 'count', k + '/wins')}, losses "
           f"{num(il.losses, 'count', k + '/losses')}, ties "
           f"{num(il.ties, 'count', k + '/ties')} of "
           f"{num(il.impressions, 'count', k + '/impressions')} pages; winner: "
           f"{html.escape(str(il.winner or 'none'))}.</p>",
           table(header, rows),
           _note(f"Δ_AB &gt; 0: the treatment won (wins, losses and ties are the treatment's). "
                 f"{SPELL['level'](il.result.ci_level)} intervals. Each row says its test and the "
                 "independent units it rests on; the second averages the per-query Δ_q over the "
                 "queries with a decided page.")]
    s = il.sensitivity
    if s is not None:
        out.append(
            f"<p>Sensitivity: the same decision from an A/B test of {html.escape(s.metric)} "
            f"would need about {num(s.ab_units_needed, 'count', k + '/ab_units_needed')} "
            f"units (observed A/B: {num(s.ab_units, 'count', k + '/ab_units')} units, t = "
            f"{num(s.ab_t, 'estimate', k + '/ab_t')}; interleaving: "
            f"{num(s.interleaving_users, 'count', k + '/interleaving_users')} users, t = "
            f"{num(s.interleaving_t, 'estimate', k + '/interleaving_t')}): "
            f"{num(s.ratio, 'estimate', k + '/ratio')} A/B units per interleaving user.</p>")
    qs = il.queries
    if qs is not None and len(qs):
        # the query text (the readout's per-query table), or a query id
        qcol = "query" if "query" in qs.columns else "qid"
        top = qs.sort_values(["pages", qcol], ascending=[False, True]).head(QUERIES_SHOWN)
        rows = [[name_cell(r[qcol]),
                 *(num_cell(r[c], "count", f"{k}/query/{r[qcol]}/{c}")
                   for c in ("pages", "wins_t", "wins_o", "ties")),
                 num_cell(r["delta_q"], "delta", f"{k}/query/{r[qcol]}/delta_q")]
                for _, r in top.iterrows()]
        out.append(f"<h4>Per query: the {num(len(top), 'count', None)} with the most pages "
                   f"(of {num(il.n_queries, 'count', None)} queries with a decided page)</h4>")
        out.append(table(["query", "pages", "treatment wins", "control wins", "ties", "Δ_q"],
                         rows))
    return "\n".join(out)


def _offline(ro: Any) -> str:
    off = ro.offline
    if off is None or not len(off):
        return _note("No offline runs given: pass the control and treatment runs and qrels "
                     "to see the offline prediction beside the online result.") + \
            _counterfactual(ro)
    k = slug(name_of(ro)) + "/offline"
    rows = []
    for _, r in off.iterrows():
        key = f"{k}/{r['measure']}"
        adjusted = isinstance(r.get("correction"), str)
        rows.append([name_cell(r["measure"]),
                     estimate_cell(r["estimate"], r["ci_low"], r["ci_high"], "delta",
                                   key + "/estimate"),
                     num_cell(r["p_adjusted"] if adjusted else r["p_value"], "p", key + "/p",
                              " adj." if adjusted else " unadj."),
                     num_cell(r["n"], "count", key + "/n")])
    online = [f"A/B {html.escape(_label(ro, r.metric, r.treatment))} lift "
              f"{num(r.rel_lift, 'percent', row_key(ro, r) + '/rel_lift')} "
              f"({html.escape(r.verdict)})" for r in ro.rows("primary")]
    if ro.interleaving is not None:
        online.append("interleaving Δ_AB " + num(
            ro.interleaving.result.estimate, "delta",
            slug(name_of(ro)) + "/interleaving/estimate"))
    test = str(off["test"].iloc[0]) if "test" in off.columns else "paired test"
    return (table(["offline measure", "Δ [CI]", "p", "queries"], rows)
            + f"<p>Online, beside it: {'; '.join(online) or 'no online result'}.</p>"
            + _note(f"Offline Δ = treatment run − control run over the judged queries "
                    f"({html.escape(test)}).") + _counterfactual(ro))


def _counterfactual(ro: Any) -> str:
    """The counterfactual prediction (:mod:`onlineeval.readout.counterfactual`), when the
    readout has one: Δ with its interval, keyed ``<experiment>/counterfactual``."""
    cf = getattr(ro, "counterfactual", None)
    if cf is None:
        return ""
    k = slug(name_of(ro)) + "/counterfactual"
    r = cf.result
    return (f"<p>Counterfactual prediction of this A/B from the logged data "
            f"({html.escape(cf.source)}): Δ {html.escape(cf.metric)} "
            f"{num(r.estimate, 'delta', k + '/estimate')} "
            f"{interval(r.ci_low, r.ci_high, 'delta', k + '/estimate')} "
            f"({num(r.ci_level, 'level', k + '/ci_level')} CI, p = "
            f"{num(r.p_value, 'p', k + '/p')}).</p>"
            + _note(f"{html.escape(cf.estimator)} on the logged pages, propensities "
                    f"{html.escape(cf.propensity_source)}; Δ = treatment run − control run "
                    f"clicks per page in the top slots; unsupported top slots "
                    f"{num(cf.unsupported_share, 'fraction', k + '/unsupported_share')}."))


def readout_section(readout: Any, level: int = 2,
                    sequential: pd.DataFrame | None = None) -> str:
    """One experiment's readout as an HTML ``<section>`` (heading level ``level``, its
    parts one level below), for a page that includes :data:`CSS`. ``sequential`` (rows of
    :func:`onlineeval.sequential_readout`) draws the confidence sequence over the looks."""
    ro = readout
    name = name_of(ro)
    h, sub = f"h{level}", f"h{level + 1}"
    treat = ", ".join(ro.treatments) or "none"
    out = [f'<section id="{slug(name)}" class="readout">',
           f"<{h}>{html.escape(name)}</{h}>",
           f"<p>{html.escape(' + '.join(ro.designs))} readout: control "
           f"<b>{html.escape(str(ro.control))}</b>, treatment <b>{html.escape(treat)}</b>; "
           f"alpha {html.escape(number(ro.alpha))}.</p>"]
    render: dict[str, Callable[[], str]] = {
        "summary": lambda: _summary(ro), "metrics": lambda: _metrics_table(ro),
        "forest": lambda: _forest(ro), "power": lambda: _power(ro),
        "over-time": lambda: _over_time(ro), "segments": lambda: _segments(ro),
        "sequential": lambda: _sequential(ro, sequential),
        "quantiles": lambda: _quantiles(ro),
        "position-ctr": lambda: _position_ctr(ro),
        "interleaving": lambda: _interleaving(ro), "offline": lambda: _offline(ro),
    }
    for part, title in PARTS:
        out.append(f'<section id="{part_id(name, part)}">')
        if part != "summary":
            out.append(f"<{sub}>{html.escape(title)}</{sub}>")
        out.append(render[part]())
        out.append("</section>")
    out.append("</section>")
    return "\n".join(out)


def toc(readouts: Sequence[Any], before: Sequence[tuple[str, str]] = (),
        heading: str = "Contents", with_parts: bool = True) -> str:
    """The table of contents: ``before`` (id, title) sections of the page, then each
    experiment with its verdicts and (``with_parts``), on one line, links to its parts."""
    items = [f'<li><a href="#{html.escape(i)}">{html.escape(t)}</a></li>' for i, t in before]
    for ro in readouts:
        name = name_of(ro)
        parts = " · ".join(f'<a href="#{part_id(name, part)}">{html.escape(t)}</a>'
                           for part, t in PARTS)
        verdicts = ", ".join(d.verdict if not _several(ro) else f"{d.treatment}: {d.verdict}"
                             for d in ro.decisions) or "no verdict"
        below = f'<br><span class="note">{parts}</span>' if with_parts else ""
        items.append(f'<li><a href="#{slug(name)}"><b>{html.escape(name)}</b></a> — '
                     f"{html.escape(verdicts)}{below}</li>")
    return f'<nav id="contents"><h2>{html.escape(heading)}</h2><ul>{"".join(items)}</ul></nav>'


def readout_html(readout: Any | Sequence[Any], title: str | None = None,
                 sequential: Mapping[str, pd.DataFrame] | pd.DataFrame | None = None,
                 ) -> str:
    """One or several experiment readouts as one self-contained HTML page.

    ``sequential``: rows of :func:`onlineeval.sequential_readout` for the one readout, or a
    mapping experiment name -> such a frame."""
    from onlineeval import __version__

    many = list(readout) if isinstance(readout, list | tuple) else [readout]
    names = [name_of(ro) for ro in many]
    if len(set(names)) != len(names):
        raise ValueError("readout_html: two readouts of one experiment name")
    sequences = sequential if isinstance(sequential, Mapping) else (
        {names[0]: sequential} if sequential is not None else {})
    if title is None:
        title = "Experiment readout: " + ", ".join(names)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{html.escape(title)}</title>", f"<style>{CSS}</style></head><body><main>",
           f"<h1>{html.escape(title)}</h1>",
           f'<p class="note">onlineeval {html.escape(__version__)}</p>', toc(many)]
    out.extend(readout_section(ro, sequential=sequences.get(name_of(ro))) for ro in many)
    out.append("</main></body></html>")
    return "\n".join(out)


def sequential_of(logs: Any, ro: Any) -> pd.DataFrame | None:
    """The sequential readout (:func:`onlineeval.sequential_readout`) of ``ro``'s primary
    metrics for its first treatment on the A/B log among ``logs``, and of the per-user
    preference on its interleaving log, at daily looks; None when neither can be read (no
    timestamps, no such log)."""
    from onlineeval.abtest.sequential import sequential_readout
    from onlineeval.errors import OnlineEvalError
    from onlineeval.logs.coerce import as_logs
    from onlineeval.readout.compute import AB, INTERLEAVING, detect_design

    given = [as_logs(x) for x in (logs if isinstance(logs, list | tuple) else [logs])]
    window = {"start": ro.window.start, "end": ro.window.end} if ro.window else {}
    frames = []
    with warnings.catch_warnings():
        # the readout already said what it had to about the log
        warnings.simplefilter("ignore")
        for lg in given:
            try:
                if detect_design(lg) == AB and "ab" in ro.designs and ro.treatments:
                    primary = [m.metric for m in ro.metrics if m.role == "primary"
                               and m.treatment == ro.treatments[0]]
                    if primary:
                        frames.append(sequential_readout(
                            lg, ro.control, ro.treatments[0], primary, design="ab",
                            alpha=ro.alpha, experiment=ro.experiment, unit=ro.unit, **window))
                elif detect_design(lg) == INTERLEAVING and ro.interleaving is not None:
                    il = ro.interleaving
                    frames.append(sequential_readout(
                        lg, il.control_team, il.treatment_team, design="interleaving",
                        alpha=ro.alpha, experiment=il.experiment, **window))
            except OnlineEvalError:
                continue
    if not frames:
        return None
    out = pd.concat(frames, ignore_index=True)
    out.attrs["alpha"] = ro.alpha
    return out


def render(ro: Any, logs: Any = None) -> str:
    """The HTML page of the readout ``ro`` (``onlineeval readout -o``); ``logs`` (as given
    to :func:`onlineeval.readout`) add the sequential readout, which the readout record
    does not carry."""
    sequences = sequential_of(logs, ro) if logs is not None else None
    return readout_html(ro, sequential=sequences)
