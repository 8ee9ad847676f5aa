"""Arguments shared by the ``abtest`` and ``power`` commands, the analysis window shared
with ``interleave``, and ``--expected-split`` shared by ``abtest`` and ``readout`` (not a
command: modules starting with ``_`` are not discovered)."""

from __future__ import annotations

import argparse

from onlineeval.cli._logs import add_event_arguments, add_logs_arguments
from onlineeval.errors import InvalidParameterError


def add_log_arguments(parser: argparse.ArgumentParser, logs_help: str) -> None:
    """``LOGS`` (with ``--columns``, ``--columns-file``), ``--metrics``, ``--unit`` and
    ``--experiment``, named as the API names them."""
    from onlineeval.abtest.metrics import METRICS

    add_logs_arguments(parser, logs_help, strict=False)
    parser.add_argument("--metrics", default=None, metavar="NAME,...",
                        help=f"metrics (default all): {', '.join(METRICS)}")
    parser.add_argument("--unit", default="user_id",
                        help="randomization unit column of searches (default user_id)")
    parser.add_argument("--experiment", default=None,
                        help="experiment to analyse (required when the log holds several)")
    add_event_arguments(parser)


def add_window_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """``--start`` and ``--end``: the analysis window ``START <= ts < END`` over ``what``."""
    parser.add_argument("--start", default=None, metavar="TIMESTAMP",
                        help=f"window start: {what} with ts >= START count (e.g. 2026-01-05 "
                        "or 2026-01-05T08:00:00, compared with the log's ts as written; a "
                        "value with a zone or offset is converted to UTC first)")
    parser.add_argument("--end", default=None, metavar="TIMESTAMP",
                        help=f"window end: {what} with ts < END count (2026-01-19 keeps all "
                        "of 2026-01-18)")


def parse_split(text: str | None) -> dict[str, float] | None:
    """``"control=0.5,treatment=0.5"`` -> ``{"control": 0.5, "treatment": 0.5}``."""
    if text is None:
        return None
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise InvalidParameterError(
                f"--expected-split must look like control=0.5,treatment=0.5; got {text!r}"
            ) from None
    return out
