"""The report's plots, rendered to PNG with matplotlib's Agg canvas and returned as base64.

Figures are built with :class:`matplotlib.figure.Figure` and drawn on an Agg canvas directly,
never through pyplot: no display and no network are needed, and the caller's matplotlib
backend (e.g. a notebook's inline backend) is left alone. The images are embedded in the
HTML (``<img src="data:image/png;base64,...">``).

Names from the data (experiments, variants, metrics) are drawn as they are: mathtext is off,
so ``promo_$5_vs_$10`` is not typeset as a formula, and legends are given their labels
explicitly, so a variant named ``_hidden`` is not dropped as matplotlib drops labels that
start with ``_``. A figure matplotlib cannot draw (e.g. too large to rasterise) raises
:class:`PlotError`, which the report turns into a note in place of the plot.
"""

from __future__ import annotations

import base64
import functools
import io
import math
from collections.abc import Callable, Sequence
from typing import ParamSpec

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from onlineeval.errors import OnlineEvalError

_DPI = 100

_P = ParamSpec("_P")


class PlotError(OnlineEvalError):
    """matplotlib could not draw a figure of the report."""


def _literal_text(plot: Callable[_P, str]) -> Callable[_P, str]:
    """Build and draw the figure with mathtext off: every text is shown literally (text
    objects read the setting when created, tick labels when drawn, so both happen inside)."""
    @functools.wraps(plot)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> str:
        with matplotlib.rc_context({"text.parse_math": False}):
            return plot(*args, **kwargs)
    return wrapper


def to_png_base64(fig: Figure) -> str:
    """Render ``fig`` to PNG on an Agg canvas and return the bytes base64-encoded.

    Raises :class:`PlotError` when matplotlib cannot lay out or rasterise the figure."""
    buf = io.BytesIO()
    FigureCanvasAgg(fig)
    try:
        fig.tight_layout()
        fig.savefig(buf, format="png", dpi=_DPI)
    except (ValueError, RuntimeError, OverflowError, MemoryError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PlotError(f"matplotlib could not draw the figure: {first}") from None
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _grid(n: int, ncols: int, width: float = 4.2,
          height: float = 3.4) -> tuple[Figure, list[Axes]]:
    ncols = max(1, min(ncols, n))
    nrows = max(1, math.ceil(n / ncols))
    fig = Figure(figsize=(width * ncols, height * nrows))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _err(value: pd.Series, low: pd.Series, high: pd.Series) -> np.ndarray:
    """Asymmetric error-bar lengths; a missing interval draws no bar."""
    lo = (value - low).to_numpy(dtype=float)
    hi = (high - value).to_numpy(dtype=float)
    return np.nan_to_num(np.vstack([lo, hi]), nan=0.0).clip(min=0.0)


@_literal_text
def scatter_offline_online(table: pd.DataFrame, offline: str,
                           outcomes: Sequence[tuple[str, str]]) -> str:
    """Offline Δ (x) against each online Δ (y), one panel per online outcome, with CIs.

    ``table`` has one row per experiment with columns ``experiment``, ``{offline}``,
    ``{offline}_ci_low``/``_ci_high`` and for each ``(column, label)`` of ``outcomes`` the
    columns ``{column}``, ``{column}_ci_low``, ``{column}_ci_high``.
    """
    fig, axes = _grid(max(1, len(outcomes)), 3)
    for ax, (col, label) in zip(axes, outcomes, strict=False):
        part = table.dropna(subset=[offline, col])
        ax.axhline(0, color="#999", lw=0.8)
        ax.axvline(0, color="#999", lw=0.8)
        if len(part):
            ax.errorbar(
                part[offline], part[col],
                xerr=_err(part[offline], part[f"{offline}_ci_low"], part[f"{offline}_ci_high"]),
                yerr=_err(part[col], part[f"{col}_ci_low"], part[f"{col}_ci_high"]),
                fmt="o", ms=5, color="#1f5fa8", ecolor="#8fb3da", elinewidth=1, capsize=2,
            )
            for _, row in part.iterrows():
                ax.annotate(str(row["experiment"]), (row[offline], row[col]), fontsize=6,
                            xytext=(3, 3), textcoords="offset points", color="#333")
        else:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel(f"offline Δ {offline.removeprefix('offline:')}")
        ax.set_ylabel("online Δ (positive = treatment better)", fontsize=8)
        ax.set_title(label, fontsize=10)
        ax.grid(alpha=0.3)
    return to_png_base64(fig)


@_literal_text
def forest_ab(ab: pd.DataFrame, metrics: Sequence[str]) -> str:
    """Forest plot of A/B absolute deltas with CIs: one panel per metric, one row per
    experiment (and treatment variant). Experiments with an SRM are drawn in red.

    ``ab`` columns: experiment, variant, metric, estimate, ci_low, ci_high,
    significant, srm_mismatch.
    """
    metrics = [m for m in metrics if m in set(ab["metric"])] or sorted(set(ab["metric"]))
    n_rows = ab.groupby(["experiment", "variant"]).ngroups
    fig, axes = _grid(max(1, len(metrics)), 3, height=max(2.5, 0.35 * n_rows + 1.2))
    for ax, metric in zip(axes, metrics, strict=False):
        part = ab[ab["metric"] == metric].reset_index(drop=True)
        y = np.arange(len(part))[::-1]
        colors = ["#c0392b" if bool(m) else ("#1f5fa8" if bool(s) else "#555")
                  for m, s in zip(part["srm_mismatch"], part["significant"], strict=True)]
        ax.axvline(0, color="#999", lw=0.8)
        for yi, (_, row), c in zip(y, part.iterrows(), colors, strict=True):
            lo, hi = row["ci_low"], row["ci_high"]
            if pd.notna(lo) and pd.notna(hi):
                ax.plot([lo, hi], [yi, yi], color=c, lw=1.5)
            ax.plot([row["estimate"]], [yi], "s", color=c, ms=5)
        labels = [str(e) if v == "treatment" else f"{e} [{v}]"
                  for e, v in zip(part["experiment"], part["variant"], strict=True)]
        ax.set_yticks(y, labels, fontsize=7)
        ax.set_xlabel(f"Δ {metric} (treatment − control)")
        ax.set_title(metric, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    return to_png_base64(fig)


@_literal_text
def position_ctr_curves(curves: pd.DataFrame, max_rank: int = 10) -> str:
    """Click-through rate by rank, one line per variant, one panel per experiment.

    ``curves`` columns: experiment, variant, rank, ctr.
    """
    curves = curves[curves["rank"] <= max_rank]
    names = list(dict.fromkeys(curves["experiment"]))
    fig, axes = _grid(max(1, len(names)), 4, width=3.4, height=2.8)
    for ax, name in zip(axes, names, strict=False):
        part = curves[curves["experiment"] == name]
        handles, labels = [], []
        for variant, line in part.groupby("variant", sort=True):
            line = line.sort_values("rank")
            handles += ax.plot(line["rank"], line["ctr"], marker="o", ms=3)
            labels.append(str(variant))
        ax.set_title(str(name), fontsize=9)
        ax.set_xlabel("rank", fontsize=8)
        ax.set_ylabel("CTR at rank", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(handles, labels, fontsize=7)  # explicit: a label may start with "_"
    if not names:
        axes[0].text(0.5, 0.5, "no data", ha="center", va="center")
    return to_png_base64(fig)
