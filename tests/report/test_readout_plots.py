"""The readout's plots: labels never overprint (text bounding boxes, measured on the drawn
figure, do not overlap and stay inside it), whatever the length of the names, and the forest
plot's legend says the CI level of each role."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from onlineeval.report import readout_plots
from onlineeval.report.readout_page import readout_html


@pytest.fixture
def drawn(keep_figures):
    """The figures the plot functions draw, kept for inspection."""
    return keep_figures(readout_plots)


def text_boxes(fig: Figure):
    """(text, window extent) of every visible, non-empty text of the drawn figure."""
    renderer = fig.canvas.get_renderer()
    drawn_ticks, all_ticks = [], set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                all_ticks.update({id(tick.label1), id(tick.label2)})
                # matplotlib keeps labels of ticks outside the view; it does not draw them
                if ax.get_visible() and lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:
                    drawn_ticks += [tick.label1, tick.label2]
    out = []
    for t in [*drawn_ticks, *(t for t in fig.findobj(Text) if id(t) not in all_ticks)]:
        shown = t.get_visible() and (t.axes is None or t.axes.get_visible())
        if shown and t.get_text().strip():
            out.append((t.get_text(), t.get_window_extent(renderer)))
    return out


def assert_no_overprint(fig: Figure) -> None:
    boxes = text_boxes(fig)
    assert boxes
    w, h = fig.canvas.get_width_height()
    for text, box in boxes:
        assert box.x0 >= -0.5 and box.y0 >= -0.5 and box.x1 <= w + 0.5 and box.y1 <= h + 0.5, \
            f"{text!r} is cut off at the figure's edge"
    for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
        overlap_x = min(a.x1, b.x1) - max(a.x0, b.x0)
        overlap_y = min(a.y1, b.y1) - max(a.y0, b.y0)
        assert overlap_x <= 0.5 or overlap_y <= 0.5, f"{ta!r} overprints {tb!r}"


@pytest.mark.parametrize("n_rows", [1, 4, 30])
def test_forest_labels_never_overprint(drawn, n_rows) -> None:
    rows = _forest_rows(n_rows)
    assert readout_plots.forest_lifts(rows)
    (fig,) = drawn
    assert_no_overprint(fig)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "primary: 97.5% CI, bonferroni-adjusted" in legend
    if n_rows > 1:
        assert "guardrail: 95% CI" in legend


def _forest_rows(n: int) -> pd.DataFrame:
    roles = ["primary"] + [("guardrail", "secondary")[k % 2] for k in range(n - 1)]
    return pd.DataFrame({
        "label": [f"metric_{k}_" + "long_name_part_" * (k % 6) for k in range(n)],
        "role": roles,
        "lift": [0.01 * k for k in range(n)],
        "lift_ci_low": [0.01 * k - 0.02 for k in range(n)],
        "lift_ci_high": [0.01 * k + 0.02 for k in range(n)],
        "ci_level": [0.975] + [0.95] * (n - 1),
        "ci_correction": ["bonferroni"] + [None] * (n - 1),
        "margin": [-0.02 if r == "guardrail" else None for r in roles],
    })


def test_every_readout_plot_has_no_overprinted_label(drawn, readout_of) -> None:
    readout_html(readout_of(metrics=8, treatments=2))
    assert len(drawn) == 3  # forest, over time, segments (position CTR: the study plots')
    for fig in drawn:
        assert_no_overprint(fig)


@pytest.mark.parametrize("days", [3, 90, 400])
def test_over_time_date_ticks_never_overprint(drawn, days) -> None:
    xs = pd.date_range("2026-01-01", periods=days, freq="D")
    rows = [{"axis": "calendar day", "label": f"ctr [{v}]", "x": x, "estimate": 0.01,
             "ci_low": 0.0, "ci_high": 0.02} for v in ("a", "b_" + "x" * 50) for x in xs]
    rows += [{"axis": "days since first exposure", "label": "ctr [a]", "x": k,
              "estimate": 0.01, "ci_low": 0.0, "ci_high": 0.02} for k in range(days)]
    assert readout_plots.cumulative_effect(pd.DataFrame(rows),
                                           ["calendar day", "days since first exposure"])
    (fig,) = drawn
    assert_no_overprint(fig)


@pytest.mark.parametrize("panels", [1, 5])
def test_segment_labels_never_overprint(drawn, panels) -> None:
    rows = [{"panel": f"metric_{p}", "title": f"metric_{p}_{'y' * 30}: heterogeneity p = 0.01",
             "segment": s, "estimate": 0.01, "ci_low": -0.01, "ci_high": 0.03}
            for p in range(panels) for s in ("desktop", "m" * 70, "tablet with spaces " * 3)]
    assert readout_plots.segment_effects(pd.DataFrame(rows))
    (fig,) = drawn
    assert_no_overprint(fig)


def test_wrap_label_keeps_every_character() -> None:
    text = "a_" * 40 + " and words"
    wrapped = readout_plots.wrap_label(text, 26)
    assert all(len(line) <= 26 for line in wrapped.split("\n"))
    assert wrapped.replace("\n", "").replace(" ", "") == text.replace(" ", "")
