"""The log arguments of every command that loads a click log, and loading it.

``LOGS``, ``--columns``, ``--columns-file`` (and ``--strict`` where the command offers it)
are added here only, so every command reads a log the same way: the mapping options are
parsed into the ``columns=`` mapping of :func:`onlineeval.load_logs`
(:mod:`onlineeval.logs.mapping_text`), whose rules and errors they share.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from onlineeval.cli._options import add_renamed

LOGS_HELP = ("log directory holding searches.*, clicks.* and optionally results.* (CSV, "
             "CSV.gz, TSV, Parquet or JSON lines, or folders of parts)")


def add_logs_arguments(parser: argparse.ArgumentParser, logs_help: str = LOGS_HELP, *,
                       strict: bool = True) -> None:
    """``LOGS``, ``--columns``, ``--columns-file`` and (with ``strict``) ``--strict``."""
    parser.add_argument("logs", metavar="LOGS", help=logs_help)
    add_mapping_arguments(parser)
    if strict:
        parser.add_argument("--strict", action="store_true",
                            help="fail instead of excluding bad rows (duplicates, orphans, ...)")


def add_mapping_arguments(parser: argparse.ArgumentParser) -> None:
    """``--columns`` and ``--columns-file``: the log's own column names."""
    parser.add_argument("--columns", action="append", default=None,
                        metavar="TABLE.SOURCE=CANONICAL,...",
                        help="map the log's own column names to the canonical ones, e.g. "
                        "searches.uid=user_id,searches.arm=variant,clicks.position=rank; "
                        "SOURCE=CANONICAL without a table maps it in every table having it; "
                        "TABLE.SOURCE= (nothing after =) leaves the column out")
    parser.add_argument("--columns-file", action="append", default=None, metavar="FILE.toml",
                        help="the same mapping as a TOML file: [searches] then lines "
                        'uid = "user_id"; one [table] per log table')


def add_event_arguments(parser: argparse.ArgumentParser, *, event_type: bool = True) -> None:
    """``--attribution-window`` and (with ``event_type``) ``--event-type``: how the outcome
    metrics of a log with an events table attribute its events (the API's
    ``attribution_window=``, ``event_type=``)."""
    parser.add_argument("--attribution-window", default=None, metavar="DURATION",
                        help="with an events table: how long after a click or search an event "
                        "is still attributed to it: hours (24) or e.g. 30min, 7d, inf "
                        "(default 24 h; both ends inclusive; docs/conversions.md)")
    if not event_type:
        return
    parser.add_argument("--event-type", default=None, metavar="TYPE",
                        help="with an events table: count only events of this type (e.g. "
                        "purchase) in conversions and revenue (default: every type)")


def add_satisfaction_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sat-dwell-s`` and ``--session-gap-min``: when a click is satisfied and when a
    derived session ends (the API's ``sat_dwell_s=``, ``session_gap_min=``)."""
    add_renamed(parser, "--sat-dwell-s", type=float, default=30.0, metavar="SECONDS",
                help="dwell from which a click is satisfied (default 30)")
    add_renamed(parser, "--session-gap-min", type=float, default=30.0, metavar="MINUTES",
                help="inactivity that ends a derived session (default 30; used when the log "
                "has no session_id)")


def columns(args: argparse.Namespace) -> Any:
    """The ``columns=`` mapping the command line gives."""
    from onlineeval.logs.mapping_text import parse

    return parse(getattr(args, "columns", None), getattr(args, "columns_file", None))


def mapping_inputs(args: argparse.Namespace) -> list[str]:
    """The files the options read besides the log (an output must not overwrite them)."""
    return [args.logs, *(getattr(args, "columns_file", None) or ())]


def load(args: argparse.Namespace, *, always_report: bool = True, path: str | None = None,
         ) -> Any:
    """Load the log the command line names (or ``path``, for a command taking several logs,
    with the same mapping); print the load report on stderr (with ``always_report`` False
    only when rows were excluded)."""
    from onlineeval.errors import ExcludedRowsWarning
    from onlineeval.logs import load_logs

    with warnings.catch_warnings():
        # the report printed below lists the excluded rows
        warnings.simplefilter("ignore", ExcludedRowsWarning)
        logs = load_logs(args.logs if path is None else path, columns=columns(args),
                         strict=bool(getattr(args, "strict", False)))
    if always_report or logs.report.excluded_total:
        print(logs.report.summary(), file=sys.stderr)
    from onlineeval.logs.coerce import as_logs

    return as_logs(logs, attribution_window=getattr(args, "attribution_window", None),
                   event_type=getattr(args, "event_type", None))
