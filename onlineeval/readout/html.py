"""The readout as one self-contained HTML page (issue 14 §2).

:func:`render` draws the page (:func:`onlineeval.report.readout_html`, whose module
:mod:`onlineeval.report.readout_page` says what the page shows); given the logs the readout
was computed from, it adds the position CTR per arm of the A/B log (:func:`position_ctr_of`),
which the :class:`~onlineeval.readout.Readout` record does not carry.
"""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd

from onlineeval.readout.result import Readout


def position_ctr_of(logs: Any, ro: Readout) -> pd.DataFrame | None:
    """CTR per rank of each arm of ``ro`` (``variant``, ``rank``, ``ctr``, ...) from the A/B
    log among ``logs`` (one log or a list, as given to :func:`onlineeval.readout`); None when
    there is no A/B log with a results table."""
    from onlineeval import position_ctr
    from onlineeval.logs.coerce import as_logs
    from onlineeval.readout.compute import AB, detect_design

    given = logs if isinstance(logs, list | tuple) else [logs]
    ab = [x for x in map(as_logs, given) if detect_design(x) == AB]
    if not ab or not getattr(ab[0], "has_results", False) or "ab" not in ro.designs:
        return None
    log = ab[0]
    by = ("experiment", "variant") if ro.experiment is not None else ("variant",)
    with warnings.catch_warnings():
        # the readout already said what it had to about the log
        warnings.simplefilter("ignore")
        curves = position_ctr(log, by=by)
    if ro.experiment is not None:
        curves = curves[curves["experiment"].astype(str) == str(ro.experiment)]
    arms = [ro.control, *ro.treatments]
    curves = curves[curves["variant"].astype(str).isin([str(a) for a in arms])]
    return curves.reset_index(drop=True)


def render(ro: Readout, logs: Any = None) -> str:
    """The HTML page of ``ro``; ``logs`` (as given to :func:`onlineeval.readout`) add the
    position CTR per arm."""
    from onlineeval.report.readout_page import readout_html

    curves = position_ctr_of(logs, ro) if logs is not None else None
    return readout_html(ro, position_ctr=curves)
