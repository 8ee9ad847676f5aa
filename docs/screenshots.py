"""Screenshots of the HTML readout for the README, taken by headless Chromium; and the
widths the browser lays the page's tables out at.

    python docs/screenshots.py                       # the README's two screenshots
    python docs/screenshots.py PAGE.html -o shot.png --height 2400
    python docs/screenshots.py PAGE.html --measure   # table widths as the browser lays them

Needs Debian's ``chromium`` (``apt-get install chromium``). Without a page, it writes the
README's screenshots: the readout of one experiment of the bundled sample logs
(``docs/readout-screenshot.png``: s200_vs_s100, A/B and interleaving logs, with its runs for
the offline prediction) and the top of the sample study's report
(``docs/report-screenshot.png``, as ``onlineeval demo`` writes it).

Chromium runs headless with a new empty profile and with its background networking off (the
page is self-contained; nothing is fetched). ``--measure`` loads a copy of the page with a
script added that records, for every table, its laid-out width against the width of the
page's content box, and the document's scroll width against the window's: a table wider
than the page the readout declares shows up there, as a browser sees it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
SAMPLE = DOCS.parent / "sample_logs"
READOUT_PNG = DOCS / "readout-screenshot.png"
REPORT_PNG = DOCS / "report-screenshot.png"
#: the window heights of the README's screenshots (the top of each page)
README_HEIGHT = 1900
#: the browser window: the page's declared width (960 px) plus its body padding and room
WINDOW_WIDTH = 1040

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--hide-scrollbars", "--mute-audio"]

_MEASURE = """<script>
(function () {
  var main = document.querySelector("main") || document.body;
  var out = {content_width: main.clientWidth, window_width: window.innerWidth,
             scroll_width: document.documentElement.scrollWidth,
             page_height: document.documentElement.scrollHeight, tables: []};
  document.querySelectorAll("table").forEach(function (t, i) {
    out.tables.push({index: i, width: t.getBoundingClientRect().width,
                     right: t.getBoundingClientRect().right,
                     content_right: main.getBoundingClientRect().right});
  });
  document.querySelectorAll("img").forEach(function (im) {
    if (!im.complete || im.naturalWidth === 0) { out.broken_images = (out.broken_images || 0) + 1; }
  });
  var pre = document.createElement("pre");
  pre.id = "onlineeval-measure";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def chromium() -> str | None:
    """The Chromium executable, or None when it is not installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(args: list[str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    exe = chromium()
    if exe is None:
        raise SystemExit("screenshots.py: Chromium is not installed (apt-get install "
                         "chromium)")
    with tempfile.TemporaryDirectory(prefix="onlineeval-chromium-") as profile:
        return subprocess.run([exe, *_FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=timeout, check=False)


def measure(page: Path, width: int = WINDOW_WIDTH) -> dict:
    """The page as Chromium lays it out in a window ``width`` pixels wide: content width,
    scroll width, page height and every table's width (see the module docstring)."""
    text = page.read_text(encoding="utf-8")
    probe = text.replace("</body>", _MEASURE + "</body>", 1)
    with tempfile.TemporaryDirectory(prefix="onlineeval-measure-") as tmp:
        copy = Path(tmp) / "page.html"
        copy.write_text(probe, encoding="utf-8")
        done = _run([f"--window-size={width},1000", "--virtual-time-budget=5000",
                     "--dump-dom", copy.as_uri()])
    m = re.search(r'<pre id="onlineeval-measure">(.*?)</pre>', done.stdout, re.S)
    if not m:
        raise RuntimeError(f"Chromium gave no measurement (exit {done.returncode}): "
                           f"{done.stderr.strip()[-500:]}")
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def screenshot(page: Path, png: Path, width: int = WINDOW_WIDTH,
               height: int | None = None) -> Path:
    """A PNG of ``page`` in a window ``width`` wide and ``height`` tall (default: the whole
    page, at most 16,000 pixels)."""
    if height is None:
        height = min(16000, int(measure(page, width)["page_height"]) + 20)
    png.parent.mkdir(parents=True, exist_ok=True)
    tmp = png.with_name(f".{png.name}.tmp.png")
    done = _run([f"--window-size={width},{height}", "--virtual-time-budget=5000",
                 f"--screenshot={tmp}", page.resolve().as_uri()])
    if not tmp.is_file():
        raise RuntimeError(f"Chromium wrote no screenshot (exit {done.returncode}): "
                           f"{done.stderr.strip()[-500:]}")
    tmp.replace(png)  # whole, or not at all
    return png


def sample_readout(directory: Path) -> Path:
    """The readout page of one experiment of the bundled sample logs, in ``directory``."""
    import onlineeval
    from onlineeval.report import readout_page as html

    logs = [onlineeval.load_logs(SAMPLE / "ab"), onlineeval.load_logs(SAMPLE / "interleaving")]
    ro = onlineeval.readout(
        logs, experiment="s200_vs_s100", guardrails=["abandonment_rate"],
        non_inferiority={"abandonment_rate": "2%"},
        secondary=["click_mrr", "mean_time_to_first_click_s"],
        runs=(SAMPLE / "runs" / "s200.run", SAMPLE / "runs" / "s100.run"),
        qrels=SAMPLE / "qrels.txt")
    page = directory / "readout.html"
    page.write_text(html.render(ro), encoding="utf-8")
    return page


def sample_report(directory: Path) -> Path:
    """The sample study's report (as ``onlineeval demo`` writes it), in ``directory``."""
    from onlineeval.report import write_report

    page = directory / "report.html"
    write_report(SAMPLE / "study.toml", page)
    return page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", nargs="?", type=Path,
                        help="the HTML page (default: the sample logs' readout)")
    parser.add_argument("-o", "--output", type=Path, default=None,
                        help="the PNG to write (with a page; required then)")
    parser.add_argument("--width", type=int, default=WINDOW_WIDTH)
    parser.add_argument("--height", type=int, default=None,
                        help="window height in pixels (default: the whole page)")
    parser.add_argument("--measure", action="store_true",
                        help="print the laid-out widths as JSON instead of a screenshot")
    args = parser.parse_args(argv)
    if args.page is not None:
        if args.measure:
            print(json.dumps(measure(args.page, args.width), indent=2))
            return 0
        if args.output is None:
            parser.error("-o/--output is required with a page")
        print(screenshot(args.page, args.output, args.width, args.height))
        return 0
    with tempfile.TemporaryDirectory(prefix="onlineeval-readout-") as tmp:
        for make, png in ((sample_readout, READOUT_PNG), (sample_report, REPORT_PNG)):
            page = make(Path(tmp))
            print(screenshot(page, png, args.width, args.height or README_HEIGHT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
