"""The experiment readout: one self-contained HTML report (and JSON) for a study file.

:func:`write_report` reads a study (:mod:`onlineeval.study`), computes every number
(:mod:`onlineeval.report.build`), and renders the HTML (:mod:`onlineeval.report.render`)
with its plots embedded as PNG images (:mod:`onlineeval.report.plots`).
"""

from __future__ import annotations

import json
from pathlib import Path

from onlineeval.atomic import Output, fill
from onlineeval.namespace import lazy_submodules
from onlineeval.report.build import Report, build_report
from onlineeval.report.render import SECTIONS, render_html, report_dict
from onlineeval.study import Study, read_study

__all__ = ["SECTIONS", "Report", "build_report", "render_html", "report_dict", "study_inputs",
           "write_report"]


def study_inputs(study: Study) -> list[Path]:
    """Every file and directory a study reads: the study file, qrels, runs, log folders
    (the counterfactual's logging log too) and column mapping files."""
    paths = [study.path]
    for exp in study.experiments:
        paths += [p for p in (exp.qrels, exp.control_run, exp.treatment_run) if p is not None]
        paths += [p for p in (exp.ab_logs, exp.interleaving_logs, exp.columns_file,
                              exp.counterfactual_logs) if p is not None]
    return list(dict.fromkeys(paths))


def write_report(study: Study | str | Path, output: str | Path,
                 json_path: str | Path | None = None) -> Report:
    """Compute the report of ``study``, write the HTML to ``output`` (and the JSON to
    ``json_path``), and return the computed :class:`Report`.

    The output paths are checked before any work (neither may be an input of the study, lie
    inside one of its log folders, be a directory, or be the same file); both files are
    written under temporary names and renamed into place together when complete
    (:class:`onlineeval.atomic.Output`).
    """
    if not isinstance(study, Study):
        study = read_study(study)
    with Output(inputs=study_inputs(study)) as out:
        html_tmp = out.file(output)
        json_tmp = out.file(json_path) if json_path is not None else None
        report = build_report(study)
        fill(html_tmp, render_html(report))
        if json_tmp is not None:
            fill(json_tmp, json.dumps(report_dict(report), indent=2, allow_nan=False) + "\n")
    return report


__getattr__ = lazy_submodules(__name__)  # onlineeval.namespace
