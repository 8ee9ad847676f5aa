"""The experiment readout: one self-contained HTML report (and JSON) for a study file.

:func:`write_report` reads a study (:mod:`onlineeval.study`), computes every number
(:mod:`onlineeval.report.build`), and renders the HTML (:mod:`onlineeval.report.render`)
with its plots embedded as PNG images (:mod:`onlineeval.report.plots`).
"""

from __future__ import annotations

import json
from pathlib import Path

from onlineeval.report.build import Report, build_report
from onlineeval.report.render import SECTIONS, render_html, report_dict
from onlineeval.study import Study

__all__ = ["SECTIONS", "Report", "build_report", "render_html", "report_dict", "write_report"]


def write_report(study: Study | str | Path, output: str | Path,
                 json_path: str | Path | None = None) -> Report:
    """Compute the report of ``study``, write the HTML to ``output`` (and the JSON to
    ``json_path``), and return the computed :class:`Report`."""
    report = build_report(study)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render_html(report), encoding="utf-8")
    if json_path is not None:
        json_path = Path(json_path)
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report_dict(report), indent=2, allow_nan=False) + "\n",
                             encoding="utf-8")
    return report
