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


def add_cuped_arguments(parser: argparse.ArgumentParser, note: str = "") -> None:
    """``--cuped`` and ``--pre-period``: the API's ``cuped`` and ``pre_period`` (read back with
    :func:`cuped_of` and :func:`pre_period_of`)."""
    parser.add_argument("--cuped", action="store_true",
                        help="CUPED with each unit's searches before its first exposure as "
                        f"the pre-period (with --start: everything before --start){note}")
    parser.add_argument("--pre-period", default=None, nargs="+", metavar="START,END",
                        help="CUPED with the experiment starting at END (as --start END) and "
                        "pre-period searches from START on, given as START,END or START END; "
                        f"or one timestamp, the experiment start{note}")


def cuped_of(args: argparse.Namespace) -> bool | None:
    """``--cuped`` as the API's ``cuped`` (None when not given: the pre-period decides)."""
    return True if args.cuped else None


def pre_period_of(args: argparse.Namespace) -> str | None:
    """``--pre-period`` as the API's ``pre_period`` text."""
    return ",".join(args.pre_period) if args.pre_period else None


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
