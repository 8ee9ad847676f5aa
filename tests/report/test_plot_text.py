"""Names from the data reach the report's plots as text: no mathtext, no hidden legend
entries, and a figure matplotlib cannot draw becomes a note instead of a traceback."""

from __future__ import annotations

import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from onlineeval.report import plots, render

DOLLARS = "promo_$5_vs_$10"     # two dollars: mathtext would typeset "5_vs_" as a formula
BROKEN = r"x$\nosuchcommand$y"  # mathtext would fail to parse this and raise


@pytest.fixture
def drawn(monkeypatch):
    """The figures the plot functions draw, kept for inspection."""
    figures: list[Figure] = []
    real = plots.to_png_base64

    def keep(fig: Figure) -> str:
        png = real(fig)
        figures.append(fig)
        return png

    monkeypatch.setattr(plots, "to_png_base64", keep)
    return figures


def texts(fig: Figure) -> list[Text]:
    return [t for t in fig.findobj(Text) if t.get_text()]


def test_names_with_dollars_and_underscores_are_drawn_literally(drawn) -> None:
    curves = pd.DataFrame({
        "experiment": [DOLLARS] * 4 + [BROKEN] * 2,
        "variant": ["_hidden", "_hidden", "control", "control", "a", "a"],
        "rank": [1, 2, 1, 2, 1, 2], "ctr": [0.5, 0.3, 0.4, 0.2, 0.1, 0.1],
    })
    assert plots.position_ctr_curves(curves)
    ab = pd.DataFrame({
        "experiment": [DOLLARS, BROKEN], "variant": ["treatment", "_t$2$"],
        "metric": ["ctr", "ctr"], "estimate": [0.01, -0.02], "ci_low": [0.0, -0.03],
        "ci_high": [0.02, -0.01], "significant": [True, False],
        "srm_mismatch": [False, False],
    })
    assert plots.forest_ab(ab, ["ctr"])
    table = pd.DataFrame({
        "experiment": [DOLLARS, BROKEN], "offline:m": [0.1, 0.2],
        "offline:m_ci_low": [0.0, 0.1], "offline:m_ci_high": [0.2, 0.3],
        "ab:ctr": [0.01, 0.02], "ab:ctr_ci_low": [0.0, 0.01], "ab:ctr_ci_high": [0.02, 0.03],
    })
    assert plots.scatter_offline_online(table, "offline:m", [("ab:ctr", "A/B $ctr$")])
    curves_fig, forest_fig, scatter_fig = drawn
    for fig in drawn:
        assert all(not t.get_parse_math() for t in texts(fig))
    ax = curves_fig.axes[0]
    assert ax.get_title() == DOLLARS
    # a label starting with "_" is still in the legend
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["_hidden", "control"]
    assert curves_fig.axes[1].get_title() == BROKEN
    ticks = {t.get_text() for t in forest_fig.axes[0].get_yticklabels()}
    assert ticks == {DOLLARS, f"{BROKEN} [_t$2$]"}
    shown = {t.get_text() for t in texts(scatter_fig)}
    assert {DOLLARS, BROKEN, "A/B $ctr$"} <= shown


def test_a_figure_matplotlib_cannot_draw_becomes_a_note(monkeypatch) -> None:
    def too_large(self, *args, **kwargs):
        raise ValueError("Image size of 1260x350120 pixels is too large. It must be less "
                         "than 2^16 in each direction.")

    monkeypatch.setattr(Figure, "savefig", too_large)
    curves = pd.DataFrame({"experiment": ["e"], "variant": ["control"], "rank": [1],
                           "ctr": [0.5]})
    with pytest.raises(plots.PlotError, match="Image size of 1260x350120 pixels"):
        plots.position_ctr_curves(curves)
    with pytest.warns(UserWarning, match="position CTR plot was left out"):
        html = render._img(plots.position_ctr_curves, curves, alt="position CTR plot")
    assert html.startswith('<p class="note">The position CTR plot could not be drawn')
    assert "too large" in html and "<img" not in html
