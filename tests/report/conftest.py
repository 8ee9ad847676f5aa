"""Fixtures of the report tests: a readout with hostile names and known numbers, built by
hand from the readout's records (no logs), so the page's own logic is what is under test."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from html.parser import HTMLParser
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from onlineeval.readout import (
    SRM,
    VERDICT_RULE,
    Decision,
    InterleavingSection,
    MetricRow,
    Readout,
    Sensitivity,
    Window,
)
from onlineeval.stats.results import ComparisonResult, comparison_frame

#: a metric name longer than any label line: it has to wrap, in tables and plots
LONG = "time_to_first_click_seconds_of_the_first_result_page_with_a_very_long_name"


def _result(d: float, half: float, p: float, level: float = 0.95, p_adj: float = np.nan,
            family: int | None = None, n: tuple[int, int] = (10000, 10000),
            unit: str = "user_id", test: str = "delta-method t (Welch-Satterthwaite df)"):
    return ComparisonResult(
        estimate=d, ci_low=d - half, ci_high=d + half, ci_level=level, p_value=p,
        p_adjusted=p_adj, correction="holm" if family else None, family_size=family,
        test=test, n=sum(n), units_control=n[0], units_treatment=n[1], unit=unit)


def make_readout(name: str | None = "exp<1> & $5_vs_$10", metrics: int = 4,
                 treatments: int = 1, long: str = LONG, srm_p: float = 0.61,
                 verdict: str = "ship") -> Readout:
    """A readout of ``metrics`` metrics (one primary, one guardrail, the rest secondary) for
    each of ``treatments`` treatment arms, every slot filled."""
    base = [("ctr", "primary", 0.41, 0.423, "higher"),
            ("abandonment_rate", "guardrail", 0.2, 0.199, "lower"),
            (long, "secondary", 3.2, 3.1, "lower"), ("click_mrr", "secondary", 0.3, 0.30013,
                                                     "higher")]
    base += [(f"metric_{i}_{'x' * (i % 30)}", "secondary", 1.0 + i, 1.0 + i * 1.01, "higher")
             for i in range(metrics - len(base))]
    arms = ["treatment"] if treatments == 1 else [f"arm <{k}>" for k in range(treatments)]
    rows = []
    for k, arm in enumerate(arms):
        for metric, role, c, t, better in base[:metrics]:
            t = t + 0.001 * k
            d = t - c
            primary = role == "primary"
            rows.append(MetricRow(
                metric=metric, role=role, control="control <c>", treatment=arm,
                control_value=c, treatment_value=t,
                result=_result(d, 0.004, 0.0123 if primary else 0.4,
                               level=1 - 0.05 / (2 * treatments) if primary else 0.95,
                               p_adj=0.0246 if primary else np.nan,
                               family=treatments if primary else None),
                rel_lift=t / c - 1, rel_ci_low=(d - 0.004) / c, rel_ci_high=(d + 0.004) / c,
                better=better,
                verdict=("better" if primary else "non-inferior" if role == "guardrail"
                         else "no significant difference"),
                interval=("at Holm's level for this row" if primary
                          else "unadjusted (not in the correction family)"),
                margin=0.02 if role == "guardrail" else None,
                margin_relative=role == "guardrail",
                ni_p_value=1.2e-6 if role == "guardrail" else np.nan,
                mde=0.0061 + 0.001 * k, mde_rel=0.021, units_needed=25000.0 + k))
    days = pd.date_range("2026-10-01", periods=30, freq="D")
    day, exposure = [], []
    for i in range(30):
        e, half = 0.013 + 0.01 / (i + 1), 0.02 / np.sqrt(i + 1)
        common = {"metric": "ctr", "variant": arms[0], "estimate": e, "ci_low": e - half,
                  "ci_high": e + half, "ci_level": 0.95}
        day.append({**common, "day": days[i].date()})
        exposure.append({**common, "days_since_exposure": i})
    lead, results = [], []
    for seg, e, u in [("desktop", 0.02, 6000), ("mobile <zz>", 0.005, 3500),
                      ("tablet_" + "x" * 60, -0.01, 500)]:
        lead.append({"segment": seg, "metric": "ctr", "variant": arms[0],
                     "control_value": 0.4, "treatment_value": 0.4 + e})
        results.append(_result(e, 0.01, 0.02, p_adj=0.06, family=3, n=(u // 2, u - u // 2)))
    segments = {"column": "device <d>", "effects": comparison_frame(lead, results),
                "heterogeneity": pd.DataFrame([{
                    "metric": "ctr", "variant": arms[0], "test": "Cochran's Q <q>",
                    "statistic": 7.1, "df": 2, "p_value": 0.0287}])}
    q_lead, q_res = [], []
    for q, c, t in ((0.5, 3.2, 3.0), (0.9, 12.5, 12.0)):
        q_lead.append({"metric": "time_to_first_click", "variant": arms[0], "quantile": q,
                       "control_value": c, "treatment_value": t})
        q_res.append(_result(t - c, 0.1, 0.03, test="unit-level bootstrap percentile"))
    quantiles = comparison_frame(q_lead, q_res)
    queries = pd.DataFrame({
        "experiment": "x", "team": "new", "other_team": "old",
        "query": [f"q{k:03d}" for k in range(20)] + ["a very long query <zz> " * 4],
        "pages": list(range(200, 0, -10)) + [5], "wins_t": 3, "wins_o": 2, "ties": 1,
        "delta_q": [0.1 * ((-1) ** k) for k in range(21)]})
    il = InterleavingSection(
        experiment=name, treatment_team="new <t>", control_team="old",
        result=_result(0.0351, 0.025, 3e-5, n=(2500, 2500), unit="user",
                       test="t test of per-user preference (users as units)"),
        impressions=2900, impressions_with_clicks=2500, wins=1200, losses=1000, ties=300,
        users=2600, winner="new <t>",
        per_query=_result(0.041, 0.03, 0.008, unit="query", n=(450, 450),
                          test="t test of per-query preference"),
        n_queries=450, queries=queries,
        sensitivity=Sensitivity(metric="ctr", ab_units=20000, ab_t=2.5,
                                interleaving_users=2500, interleaving_t=4.1,
                                ab_units_needed=53792.0, ratio=21.5168))
    offline = comparison_frame(
        [{"baseline": "c.run", "run": "t.run", "measure": m, "mean_a": 0.5, "mean_b": 0.5 + d}
         for m, d in (("ndcg_cut_10", 0.0412), ("map", 0.03))],
        [ComparisonResult(estimate=d, ci_low=d - 0.02, ci_high=d + 0.02, ci_level=0.95,
                          p_value=p, p_adjusted=pa, correction="holm", family_size=2,
                          test="paired randomization", n=50, units_control=50,
                          units_treatment=50, unit="query")
         for d, p, pa in ((0.0412, 0.001, 0.002), (0.03, 0.02, 0.02))])
    units = {"control <c>": 10000, **{a: 10000 for a in arms}}
    return Readout(
        experiment=name, designs=("ab", "interleaving"), control="control <c>",
        treatments=tuple(arms), alpha=0.05, family=("ctr",), family_size=treatments,
        window=Window(first_exposure=pd.Timestamp("2026-10-01 00:03"),
                      last_exposure=pd.Timestamp("2026-10-30 23:50")),
        units=units,
        srm=SRM(p_value=srm_p, statistic=0.26, alpha=0.001, observed=units,
                expected={a: 10000.0 for a in units},
                expected_shares={a: 1 / len(units) for a in units}),
        metrics=tuple(rows),
        decisions=tuple(Decision(a, verdict, ("ctr is significantly better after correction",))
                        for a in arms),
        rule=VERDICT_RULE, interleaving=il, offline=offline,
        over_time={"day": pd.DataFrame(day), "exposure_day": pd.DataFrame(exposure)},
        segments=segments, quantiles=quantiles, notes=("a note <n>",),
        excluded={"searches without a variant": 3})


def position_curves(arms: int = 1) -> pd.DataFrame:
    names = ["control <c>", *(["treatment"] if arms == 1 else [f"arm <{k}>"
                                                                for k in range(arms)])]
    return pd.DataFrame([{"variant": v, "rank": r, "ctr": 0.4 / r + 0.01 * j}
                         for j, v in enumerate(names) for r in range(1, 11)])


@pytest.fixture
def readout_of() -> Callable[..., Readout]:
    """Call it with :func:`make_readout`'s arguments for a readout."""
    return make_readout


@pytest.fixture
def curves() -> Callable[..., pd.DataFrame]:
    """Call it for the position CTR per arm of a readout (``arms`` treatment arms)."""
    return position_curves


# --- reading a page back: the HTML parser and the table-width rule of the tests ---------


class Page(HTMLParser):
    """What the tests read off the HTML: sections, images, links, tables, numbers, CSS."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.stack: list[str | None] = []
        self.images: dict[str, list[str]] = {}
        self.links: list[str] = []
        self.external: list[str] = []
        self.tags: set[str] = set()
        self.css = ""
        self._in_style = False
        # tables: list of rows; a row: list of cells; a cell: list of lines, each line a list
        # of (text, max-width in ch or None)
        self.tables: list[list[list[list[list[tuple[str, int | None]]]]]] = []
        self._cell: list[list[tuple[str, int | None]]] | None = None
        self._span_caps: list[int | None] = []
        self.numbers: list[tuple[str, str, str]] = []  # (key, kind, text)
        self._num: list[str] | None = None
        self._num_attrs: tuple[str, str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "section":
            self.stack.append(a.get("id"))
        if tag == "style":
            self._in_style = True
        if tag == "img":
            part = next((s for s in reversed(self.stack) if s), None)
            self.images.setdefault(part, []).append(a["src"])
        if tag == "a" and a.get("href", "").startswith("#"):
            self.links.append(a["href"][1:])
        for key in ("src", "href"):
            if key in a and not a[key].startswith(("data:", "#")):
                self.external.append(a[key])
        if tag == "table":
            self.tables.append([])
        if tag == "tr":
            self.tables[-1].append([])
        if tag in ("td", "th"):
            self._cell = [[]]
            self._span_caps = []
        if tag == "br" and self._cell is not None:
            self._cell.append([])
        if tag == "span":
            self._span_caps.append(self._cap(a.get("class", "")))
            if "data-key" in a:
                self._num, self._num_attrs = [], (a["data-key"], a["data-kind"])

    def _cap(self, classes: str) -> int | None:
        for cls in classes.split():
            m = re.search(r"\." + cls + r"\{[^}]*max-width:(\d+)ch", self.css)
            if m:
                return int(m.group(1))
        return None

    def handle_endtag(self, tag):
        if tag == "section":
            self.stack.pop()
        if tag == "style":
            self._in_style = False
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(self._cell)
            self._cell = None
        if tag == "span":
            self._span_caps.pop()
            if self._num is not None:
                self.numbers.append((*self._num_attrs, "".join(self._num)))
                self._num = None

    def handle_data(self, data):
        if self._in_style:
            self.css += data
        if self._cell is not None:
            cap = next((c for c in reversed(self._span_caps) if c is not None), None)
            self._cell[-1].append((data, cap))
        if self._num is not None:
            self._num.append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


def css_px(css: str, pattern: str) -> float:
    m = re.search(pattern, css)
    assert m, f"the page's CSS declares no {pattern}"
    return float(m.group(1))


# The width rule, computed here independently of the renderer: a cell is as wide as its
# widest line (lines split at <br>); a line counts its characters (2 for an East Asian wide
# one) at 0.62 em of the declared table font, except text inside a span whose CSS caps its
# max-width at N ch, which counts at most N; plus 14 px of padding and border. A table is as
# wide as the sum of its widest cell per column, and must not exceed the declared page width.
def _chars(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def line_chars(line: list[tuple[str, int | None]]) -> int:
    total = 0
    capped: dict[int, int] = {}
    for text, cap in line:
        if cap is None:
            total += _chars(text)
        else:
            capped[cap] = capped.get(cap, 0) + _chars(text)
    return total + sum(min(cap, n) for cap, n in capped.items())


def table_width_px(table, font_px: float) -> float:
    columns: dict[int, float] = {}
    for row in table:
        for j, cell in enumerate(row):
            chars = max(line_chars(line) for line in cell)
            columns[j] = max(columns.get(j, 0.0), chars * 0.62 * font_px + 14)
    return sum(columns.values())




def assert_tables_fit(page: Page) -> None:
    """No table of ``page`` counts wider (the rule above) than the page width it declares."""
    width = css_px(page.css, r"--page-width:(\d+)px")
    font = css_px(page.css, r"table\{[^}]*font-size:(\d+)px")
    assert page.tables
    for t in page.tables:
        assert table_width_px(t, font) <= width


@pytest.fixture
def html_tools() -> SimpleNamespace:
    """The page parser and the width rule (``parse``, ``table_width_px``, ``css_px``,
    ``assert_tables_fit``)."""
    return SimpleNamespace(parse=parse, table_width_px=table_width_px, css_px=css_px,
                           assert_tables_fit=assert_tables_fit, Page=Page)


@pytest.fixture
def keep_figures(monkeypatch) -> Callable[[Any], list]:
    """Call it with a plot module: the figures its plot functions draw from then on are
    kept (in the returned list) for inspection."""
    def keep(module: Any) -> list:
        figures: list = []
        real = module.to_png_base64

        def drawn(fig: Any) -> str:
            png = real(fig)
            figures.append(fig)
            return png

        monkeypatch.setattr(module, "to_png_base64", drawn)
        return figures

    return keep
