"""The plots of an experiment readout (:mod:`onlineeval.report.readout_page`), as base64 PNG.

Drawn like the study report's plots (:mod:`onlineeval.report.plots`: Agg canvas, no pyplot,
text from the data shown literally). The figures are as wide as the page the readout declares
(:data:`FIGURE_WIDTH_IN` at the plots' DPI), with fixed font sizes, so a figure is never scaled
down in the browser and its text stays readable. Labels never overprint: a long name (a
metric, a segment value) is wrapped to :data:`LABEL_CHARS` characters a line, and each row of
a forest plot gets the height its wrapped label needs, not an even share of the axis.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure

from onlineeval.formatting import percent
from onlineeval.report.plots import _DPI, _literal_text, to_png_base64

#: the content width of the readout page in CSS pixels (its CSS declares it)
PAGE_WIDTH_PX = 960
#: the figure width in inches: the page width less the image border, at the plots' DPI
FIGURE_WIDTH_IN = (PAGE_WIDTH_PX - 20) / _DPI
#: characters per line of a wrapped label (a metric or segment name)
LABEL_CHARS = 26
#: font sizes in points: tick labels, axis labels and legends, titles
TICK_PT, LABEL_PT, TITLE_PT = 8, 9, 10
#: inches a line of tick-label text needs (8 pt with line spacing), and a row at least
_LINE_IN, _ROW_MIN_IN = 0.16, 0.3

#: colours of the comparison roles (and of anything else drawn)
ROLE_COLOURS = {"primary": "#1f5fa8", "guardrail": "#b36b00", "secondary": "#555555"}


def wrap_label(text: str, width: int = LABEL_CHARS) -> str:
    """``text`` on lines of at most ``width`` characters (a word longer than that is cut)."""
    lines = textwrap.wrap(str(text), width=width, break_long_words=True,
                          break_on_hyphens=False, replace_whitespace=True) or [""]
    return "\n".join(lines)


def _rows_layout(labels: Sequence[str]) -> tuple[np.ndarray, float]:
    """y positions (top row highest) and the axis height in inches for rows whose wrapped
    labels have the given line counts: each row is as tall as its label."""
    heights = np.array([max(_ROW_MIN_IN, (lab.count("\n") + 1) * _LINE_IN + 0.08)
                        for lab in labels])
    bottoms = np.concatenate([[0.0], np.cumsum(heights[::-1])[:-1]])[::-1]
    return bottoms + heights / 2, float(heights.sum())


def ci_label(role: str, level: float, correction: str | None) -> str:
    """The legend entry of a role's intervals: the level, and the correction if adjusted."""
    adj = f", {correction}-adjusted" if isinstance(correction, str) and correction else ""
    return f"{role}: {percent(level, signed=False)} CI{adj}"


@_literal_text
def forest_lifts(rows: pd.DataFrame) -> str:
    """Relative lifts (treatment / control − 1, in %) with their intervals, one row per
    metric and treatment, coloured by role; the legend says each role's CI level.

    ``rows`` columns: ``label`` (the row's name), ``role``, ``lift``, ``lift_ci_low``,
    ``lift_ci_high`` (fractions), ``ci_level``, ``ci_correction`` (None when unadjusted),
    and optionally ``margin`` (a guardrail's non-inferiority bound as a relative change,
    drawn as a dashed tick).
    """
    labels = [wrap_label(x) for x in rows["label"]]
    y, height = _rows_layout(labels)
    fig = Figure(figsize=(FIGURE_WIDTH_IN, height + 1.3))
    ax = fig.subplots()
    ax.axvline(0, color="#999", lw=0.8)
    handles, names = [], []
    for yi, (_, row) in zip(y, rows.iterrows(), strict=True):
        colour = ROLE_COLOURS.get(str(row["role"]), "#555555")
        lo, hi = row["lift_ci_low"] * 100, row["lift_ci_high"] * 100
        if pd.notna(lo) and pd.notna(hi):
            ax.plot([lo, hi], [yi, yi], color=colour, lw=1.8)
        (h,) = ax.plot([row["lift"] * 100], [yi], "s", color=colour, ms=5)
        name = ci_label(str(row["role"]), float(row["ci_level"]), row.get("ci_correction"))
        if name not in names:
            handles.append(h)
            names.append(name)
        margin = row.get("margin")
        if margin is not None and pd.notna(margin):
            (m,) = ax.plot([margin * 100], [yi], marker="|", ms=12, color=colour, ls="none",
                           mew=1.5, alpha=0.7)
            if "non-inferiority margin" not in names:
                handles.append(m)
                names.append("non-inferiority margin")
    ax.set_yticks(y, labels, fontsize=TICK_PT)
    ax.set_ylim(0, height)
    ax.tick_params(axis="x", labelsize=TICK_PT)
    ax.set_xlabel("relative lift, % (treatment / control − 1)", fontsize=LABEL_PT)
    ax.grid(axis="x", alpha=0.3)
    # outside the axes, right: never on top of a row; the legend is given its labels
    # explicitly (a name starting with "_" would otherwise be dropped)
    ax.legend(handles, names, fontsize=TICK_PT, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0.0)
    return to_png_base64(fig)


@_literal_text
def cumulative_effect(series: pd.DataFrame, axes_order: Sequence[str]) -> str:
    """The cumulative Δ with its interval per day, one panel per time axis (e.g. calendar
    day, days since a unit's first exposure) and one line per metric and treatment.

    ``series`` columns: ``axis`` (one of ``axes_order``), ``label``, ``x`` (a date on a
    calendar axis, a number otherwise), ``estimate``, ``ci_low``, ``ci_high``.
    """
    present = [a for a in axes_order if a in set(series["axis"])]
    fig = Figure(figsize=(FIGURE_WIDTH_IN, 3.4))
    axes = fig.subplots(1, max(1, len(present)), squeeze=False)[0]
    for ax, axis in zip(axes, present, strict=False):
        part = series[series["axis"] == axis]
        # one column may hold dates (a calendar axis) and numbers (days since exposure)
        dates = all(isinstance(v, pd.Timestamp | np.datetime64) for v in part["x"])
        part = part.assign(x=pd.to_datetime(part["x"]) if dates
                           else pd.to_numeric(part["x"]).astype(float))
        handles, names = [], []
        for label, line in part.groupby("label", sort=False):
            line = line.sort_values("x")
            x = line["x"].to_numpy()
            (h,) = ax.plot(x, line["estimate"], marker="o", ms=3, lw=1.4)
            ax.fill_between(x, line["ci_low"], line["ci_high"], color=h.get_color(),
                            alpha=0.15, lw=0)
            handles.append(h)
            names.append(wrap_label(str(label)))
        ax.axhline(0, color="#999", lw=0.8)
        if dates:
            locator = AutoDateLocator(maxticks=6)
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
        else:
            ax.xaxis.get_major_locator().set_params(integer=True, nbins=6)
        ax.set_xlabel(axis, fontsize=LABEL_PT)
        ax.set_ylabel("cumulative Δ (treatment − control)", fontsize=LABEL_PT)
        ax.tick_params(labelsize=TICK_PT)
        ax.grid(alpha=0.3)
        ax.legend(handles, names, fontsize=TICK_PT - 1, loc="best")
    if not present:
        axes[0].text(0.5, 0.5, "no data", ha="center", va="center")
    return to_png_base64(fig)


@_literal_text
def segment_effects(rows: pd.DataFrame) -> str:
    """Δ per segment with its interval, one panel (a row) per metric and treatment, the
    heterogeneity p-value in the panel title.

    ``rows`` columns: ``panel`` (title: metric and treatment), ``segment``, ``estimate``,
    ``ci_low``, ``ci_high``, ``title`` (the panel's full title, e.g. with the
    heterogeneity test).
    """
    panels = list(dict.fromkeys(rows["panel"]))
    layouts = []
    for panel in panels:
        part = rows[rows["panel"] == panel]
        labels = [wrap_label(s, 20) for s in part["segment"]]
        layouts.append((part, labels, *_rows_layout(labels)))
    height = max((h for *_, h in layouts), default=1.0)
    # one panel a row: a panel as wide as the page has room for any wrapped label and title
    fig = Figure(figsize=(FIGURE_WIDTH_IN, max(1, len(panels)) * (height + 1.2)))
    axes = list(fig.subplots(max(1, len(panels)), 1, squeeze=False).ravel())
    for ax, (part, labels, y, h) in zip(axes, layouts, strict=False):
        ax.axvline(0, color="#999", lw=0.8)
        for yi, (_, row) in zip(y, part.iterrows(), strict=True):
            if pd.notna(row["ci_low"]) and pd.notna(row["ci_high"]):
                ax.plot([row["ci_low"], row["ci_high"]], [yi, yi], color="#1f5fa8", lw=1.6)
            ax.plot([row["estimate"]], [yi], "s", color="#1f5fa8", ms=5)
        ax.set_yticks(y, labels, fontsize=TICK_PT)
        ax.set_ylim(0, max(h, height))
        ax.tick_params(axis="x", labelsize=TICK_PT)
        ax.xaxis.get_major_locator().set_params(nbins=4)
        ax.set_title(wrap_label(str(part["title"].iloc[0]), 80), fontsize=TITLE_PT - 1)
        ax.set_xlabel("Δ (treatment − control)", fontsize=LABEL_PT)
        ax.grid(axis="x", alpha=0.3)
    if not panels:
        axes[0].text(0.5, 0.5, "no data", ha="center", va="center")
    return to_png_base64(fig)


@_literal_text
def confidence_sequence(frame: pd.DataFrame) -> str:
    """One panel per metric of a sequential readout (:func:`onlineeval.sequential_readout`
    rows): the always-valid interval at each look (shaded, with the estimate), the
    fixed-horizon interval of that look alone (dashed), zero, and the first look at which
    the sequential test stops (a vertical line, when it does)."""
    metrics = list(dict.fromkeys(frame["metric"]))
    fig = Figure(figsize=(FIGURE_WIDTH_IN, 3.2))
    axes = fig.subplots(1, max(1, len(metrics)), squeeze=False)[0]
    for ax, metric in zip(axes, metrics, strict=False):
        part = frame[frame["metric"] == metric].sort_values("look")
        x = pd.to_datetime(part["look_end"]).to_numpy()
        # an unbounded sequence (no usable look yet) is left out of the band, not drawn
        low = part["ci_low"].to_numpy(dtype=float)
        high = part["ci_high"].to_numpy(dtype=float)
        ok = np.isfinite(low) & np.isfinite(high)
        ax.fill_between(x[ok], low[ok], high[ok], color="#1f5fa8", alpha=0.22, lw=0,
                        label="always-valid interval")
        ax.plot(x, part["estimate"], color="#1f5fa8", marker="o", ms=3, lw=1.4,
                label="estimate")
        for col in ("fixed_ci_low", "fixed_ci_high"):
            ax.plot(x, part[col], color="#b36b00", ls="--", lw=1.1,
                    label="fixed-horizon interval" if col == "fixed_ci_low" else None)
        ax.axhline(0, color="#999", lw=0.8)
        stops = part[part["stop"].astype(bool)]
        if len(stops):
            first = pd.Timestamp(stops["look_end"].iloc[0])
            ax.axvline(first, color="#2a7d2a", lw=1.2, label="sequential stop")
        locator = AutoDateLocator(maxticks=6)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
        ax.set_title(wrap_label(str(metric)), fontsize=LABEL_PT)
        # the interleaving row (metric "preference") is a preference, not a difference of arms
        ax.set_ylabel("mean per-user preference for the treatment" if metric == "preference"
                      else "Δ (treatment − control)", fontsize=LABEL_PT)
        ax.tick_params(labelsize=TICK_PT)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=TICK_PT - 1, loc="best")
    if not metrics:
        axes[0].text(0.5, 0.5, "no data", ha="center", va="center")
    return to_png_base64(fig)
