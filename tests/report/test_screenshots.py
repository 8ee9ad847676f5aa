"""The readout in a real browser (docs/screenshots.py, headless Chromium): no table wider
than the page's content box, nothing scrolls sideways, every image decodes, and a screenshot
is written. Skipped where Chromium is not installed (Debian package ``chromium``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from onlineeval.report.readout_page import readout_html

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "screenshots.py"

pytestmark = pytest.mark.skipif(
    not any(shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")),
    reason="Chromium is not installed (apt-get install chromium)")


@pytest.fixture(scope="module")
def shots(load_script):
    return load_script(SCRIPT)


def test_tables_fit_the_page_in_chromium(shots, readout_of, tmp_path) -> None:
    page = tmp_path / "readout.html"
    page.write_text(readout_html([readout_of(metrics=14, treatments=3),
                                  readout_of(name="second")]), encoding="utf-8")
    m = shots.measure(page)
    assert m["content_width"] == 960  # the width the page declares
    assert m["scroll_width"] <= m["window_width"]
    assert len(m["tables"]) > 10
    for t in m["tables"]:
        assert t["width"] <= m["content_width"] + 0.5, t
        assert t["right"] <= t["content_right"] + 0.5, t
    assert not m.get("broken_images")
    png = shots.screenshot(page, tmp_path / "shot.png", height=1200)
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert not list(tmp_path.glob(".*.tmp.png"))


def test_the_measurement_sees_a_table_wider_than_the_page(shots, tmp_path) -> None:
    """The check can fail: a table of long unbreakable cells, put in without the layout rule,
    is measured wider than the content box."""
    from onlineeval.report.readout_page import CSS

    cells = "".join(f"<td>{'x' * 40}{k}</td>" for k in range(6))
    page = tmp_path / "wide.html"
    page.write_text(f"<!DOCTYPE html><html><head><style>{CSS}</style></head><body><main>"
                    f"<table><tr>{cells}</tr></table></main></body></html>", encoding="utf-8")
    m = shots.measure(page)
    assert m["tables"][0]["width"] > m["content_width"]
