"""The HTML readout: every section and image, nothing fetched, no table wider than the page
it declares, and every number the readout's, spelled by the one formatter."""

from __future__ import annotations

import base64
import math
import re
import unicodedata
from html.parser import HTMLParser

import pandas as pd
import pytest

from onlineeval.formatting import format_number
from onlineeval.report import readout_page
from onlineeval.report.readout_page import PARTS, readout_html, slug

PNG = b"\x89PNG\r\n\x1a\n"

#: the sections of a part that draw a plot when the readout has its data
PLOTTED = ("forest", "over-time", "segments", "position-ctr")


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


def check_page(text: str, experiments: list[str]) -> Page:
    page = parse(text)
    assert page.external == []
    assert "script" not in page.tags and "iframe" not in page.tags
    assert "contents" in page.ids
    for name in experiments:
        for part, _ in PARTS:
            assert f"{slug(name)}-{part}" in page.ids
        for part in PLOTTED:
            imgs = page.images.get(f"{slug(name)}-{part}", [])
            assert len(imgs) == 1, part
            head, b64 = imgs[0].split(",", 1)
            assert head == "data:image/png;base64"
            assert base64.b64decode(b64).startswith(PNG)
    # every link of the table of contents points at an element of the page
    assert page.links and set(page.links) <= set(page.ids)
    assert len(page.ids) == len(set(page.ids))
    width = css_px(page.css, r"--page-width:(\d+)px")
    font = css_px(page.css, r"table\{[^}]*font-size:(\d+)px")
    assert page.tables
    for t in page.tables:
        assert table_width_px(t, font) <= width
    return page


def test_every_section_and_image_and_the_table_of_contents(readout_parts) -> None:
    a, b = readout_parts(), readout_parts(name="second")
    check_page(readout_html([a, b]), [a.experiment, b.experiment])


def test_names_are_escaped(readout_parts) -> None:
    text = readout_html(readout_parts())
    assert "exp&lt;1&gt; &amp; $5_vs_$10" in text
    assert "<1>" not in text and "<zz>" not in text and "<c>" not in text
    assert "mobile &lt;zz&gt;" in text


def test_no_table_wider_than_the_page_with_long_names_and_many_arms(readout_parts) -> None:
    many = readout_parts(metrics=14, treatments=5)
    page = check_page(readout_html(many), [many.experiment])
    # rows do not widen a table: 5 arms x 14 metrics stay one table of 70 rows
    assert max(len(t) for t in page.tables) == 1 + 70


def test_a_table_too_wide_is_transposed_and_every_cell_kept() -> None:
    cells = readout_page.text_cell
    header = [cells(f"column {k} " + "w" * 10) for k in range(12)]
    rows = [[cells(f"r{i}c{k}") for k in range(12)] for i in range(3)]
    html_text = readout_page.table(header, rows)
    page = parse(f"<style>{readout_page.CSS}</style>{html_text}")
    assert len(page.tables) >= 1
    shown = [line for t in page.tables for row in t for cell in row for line in cell]
    texts = {"".join(t for t, _ in line) for line in shown}
    assert {f"r{i}c{k}" for i in range(3) for k in range(12)} <= texts
    assert {f"column {k} " + "w" * 10 for k in range(12)} <= texts
    for t in page.tables:
        assert table_width_px(t, readout_page.TABLE_FONT_PX) <= readout_page.PAGE_WIDTH_PX


def _expected(parts) -> dict[str, tuple[object, str]]:
    """Every number the page must show: its key -> (the readout's value, its kind)."""
    k = slug(parts.experiment)
    out: dict[str, tuple[object, str]] = {}
    for _, r in parts.comparisons.iterrows():
        key = f"{k}/{r['metric']}/{r['variant']}"
        for field, kind in (("control_value", "estimate"), ("treatment_value", "estimate"),
                            ("estimate", "delta"), ("lift", "percent")):
            out[f"{key}/{field}"] = (r[field], kind)
        out[f"{key}/estimate:ci_low"] = (r["ci_low"], "delta")
        out[f"{key}/estimate:ci_high"] = (r["ci_high"], "delta")
        out[f"{key}/lift:ci_low"] = (r["lift_ci_low"], "percent")
        out[f"{key}/lift:ci_high"] = (r["lift_ci_high"], "percent")
        # a decision reads the adjusted p-value where a correction applies
        adjusted = isinstance(r["correction"], str)
        out[f"{key}/p_decision"] = (r["p_adjusted"] if adjusted else r["p_value"], "p")
        if r["role"] == "guardrail":
            out[f"{key}/margin"] = (r["margin"], "percent")
            out[f"{key}/ni_p_value"] = (r["ni_p_value"], "p")
    for _, r in parts.power.iterrows():
        key = f"{k}/{r['metric']}/{r['variant']}"
        out[f"{key}/mde"] = (r["mde"], "percent")
        out[f"{key}/power"] = (r["power"], "estimate")
        out[f"{key}/units_needed"] = (r["units_needed"], "count")
    out[f"{k}/srm/p_value"] = (parts.srm["p_value"], "p")
    for arm, n in parts.units.items():
        out[f"{k}/units/{arm}"] = (n, "count")
    for field, kind in (("start", "date"), ("end", "date"), ("days", "count")):
        out[f"{k}/window/{field}"] = (parts.window[field], kind)
    il = parts.interleaving
    for field, kind in (("estimate", "delta"), ("p_value", "p"), ("wins", "count"),
                        ("losses", "count"), ("ties", "count"), ("queries", "count"),
                        ("n", "count"), ("sensitivity", "count")):
        out[f"{k}/interleaving/{field}"] = (il[field], kind)
    out[f"{k}/interleaving/estimate:ci_low"] = (il["ci_low"], "delta")
    out[f"{k}/interleaving/estimate:ci_high"] = (il["ci_high"], "delta")
    for _, r in parts.offline.iterrows():
        key = f"{k}/offline/{r['measure']}"
        out[f"{key}/estimate"] = (r["estimate"], "delta")
        out[f"{key}/estimate:ci_low"] = (r["ci_low"], "delta")
        out[f"{key}/estimate:ci_high"] = (r["ci_high"], "delta")
        out[f"{key}/p_value"] = (r["p_value"], "p")
        out[f"{key}/n"] = (r["n"], "count")
    for _, r in parts.segments.iterrows():
        key = f"{k}/segment/{r['metric']}/{r['variant']}/{r['segment']}"
        out[f"{key}/estimate"] = (r["estimate"], "delta")
        out[f"{key}/estimate:ci_low"] = (r["ci_low"], "delta")
        out[f"{key}/estimate:ci_high"] = (r["ci_high"], "delta")
        out[f"{key}/units"] = (r["units"], "count")
        out[f"{key}/heterogeneity_p"] = (r["heterogeneity_p"], "p")
    for _, r in parts.quantiles.iterrows():
        key = f"{k}/quantile/{r['metric']}/{r['quantile']}"
        out[f"{key}/control_value"] = (r["control_value"], "estimate")
        out[f"{key}/treatment_value"] = (r["treatment_value"], "estimate")
        out[f"{key}/estimate"] = (r["estimate"], "delta")
        out[f"{key}/estimate:ci_low"] = (r["ci_low"], "delta")
        out[f"{key}/estimate:ci_high"] = (r["ci_high"], "delta")
    return out


def _close(text: str, kind: str, value: object) -> bool:
    """The shown text read back as a number is the value to the precision shown."""
    if kind == "date":
        return text == pd.Timestamp(value).date().isoformat()
    t = text.replace(",", "").rstrip("%")
    shown = float(t) / (100 if kind == "percent" else 1)
    v = float(value)
    if kind == "count":
        return shown == round(v)
    mantissa = t.split("e")[0].lstrip("+-")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(t.split("e")[1]) if "e" in t else 0
    half_unit = 0.5 * 10.0 ** (exponent - decimals) / (100 if kind == "percent" else 1)
    return math.isclose(shown, v, abs_tol=half_unit * 1.0001)


@pytest.mark.parametrize("treatments", [1, 3])
def test_every_number_is_the_readouts_spelled_by_the_one_formatter(readout_parts,
                                                                    treatments) -> None:
    parts = readout_parts(treatments=treatments)
    page = parse(readout_html(parts))
    shown: dict[str, set[str]] = {}
    kinds: dict[str, str] = {}
    for key, kind, text in page.numbers:
        shown.setdefault(key, set()).add(text)
        kinds[key] = kind
    expected = _expected(parts)
    missing = set(expected) - set(shown)
    assert not missing
    for key, (value, kind) in expected.items():
        assert kinds[key] == kind, key
        # the same number wherever it appears (summary card, table, offline panel)
        assert shown[key] == {format_number(value, kind)}, key
        assert _close(next(iter(shown[key])), kind, value), (key, shown[key], value)


def test_number_spans_name_values_of_the_readout(readout_parts) -> None:
    """No number on the page is outside the readout (only per-query rows are extra)."""
    parts = readout_parts()
    page = parse(readout_html(parts))
    expected = _expected(parts)
    extra = {key for key, _, _ in page.numbers} - set(expected)
    assert all("/interleaving/query/" in k or k.endswith("n_queries_shown") for k in extra)


def test_srm_mismatch_and_verdict_shown(readout_parts) -> None:
    from dataclasses import replace

    parts = replace(readout_parts(), verdict="don't ship",
                    srm={"p_value": 1e-6, "mismatch": True, "statistic": 30.0,
                         "message": "units 10000 vs 9000"})
    text = readout_html(parts)
    assert "SAMPLE RATIO MISMATCH" in text and 'class="card no-ship"' in text
    assert "Verdict: DON&#x27;T SHIP" in text
    assert format_number(1e-6, "p") == "1.0e-06"
    assert ">1.0e-06<" in text


def test_missing_parts_say_so(readout_parts) -> None:
    from dataclasses import replace

    parts = replace(readout_parts(), over_time=None, segments=None, quantiles=None,
                    position_ctr=None, interleaving=None, interleaving_queries=None,
                    offline=None, power=None)
    page = parse(readout_html(parts))
    for part, _ in PARTS:
        assert f"{slug(parts.experiment)}-{part}" in page.ids
    assert set(page.images) == {f"{slug(parts.experiment)}-forest"}
    text = readout_html(parts)
    assert "No offline runs given" in text and "No interleaving log" in text
