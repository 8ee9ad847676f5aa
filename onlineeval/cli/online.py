"""``onlineeval online LOGS``: the online metrics of a click log, per variant (or any group)."""

from __future__ import annotations

import argparse
from typing import Any

from onlineeval.cli._logs import add_logs_arguments, load
from onlineeval.cli._output import add_format_argument, emit

NAME = "online"
HELP = ("online metrics of a click log per group: searches, sessions, users, CTR, abandonment, "
        "zero-result rate, session success, time to first click, click MRR, reformulation")


def add_log_arguments(parser: argparse.ArgumentParser, by_default: str) -> None:
    """Arguments shared by the online-metrics commands: the log's (LOGS, --columns,
    --columns-file, --strict), --by, --format."""
    add_logs_arguments(parser)
    default_text = (f"{by_default} when the log has it (after experiment when the log holds "
                    "several experiments), else the whole log" if by_default
                    else "none: the whole log")
    parser.add_argument("--by", default=None, metavar="COL,...",
                        help="group by these searches columns and/or time buckets hour, day, "
                        f"week of ts (default {default_text}); '' for none")
    parser.set_defaults(_by_default=by_default)
    add_format_argument(parser)


def by_columns(args: argparse.Namespace, logs: Any) -> str | list[str]:
    """The --by columns; when not given, the command's default if the log has that column,
    after experiment when the log holds several experiments (a default never pools them).

    A given --by is passed on as typed: the online functions split it on commas.
    """
    if args.by is None:
        from onlineeval.online.grouping import experiment_names

        default = args._by_default
        if not default:
            return []
        cols = [default] if logs.has("searches", default) else []
        if len(experiment_names(logs)) > 1:
            cols.insert(0, "experiment")
        return cols
    return args.by


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from onlineeval.cli._logs import add_event_arguments, add_satisfaction_arguments
    from onlineeval.online.definitions import COLUMNS, EVENT_COLUMNS, METRICS

    add_log_arguments(parser, "variant")
    add_event_arguments(parser)
    add_satisfaction_arguments(parser)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "metrics:\n" + "\n".join(
        f"  {name}: {METRICS.get(name).definition}" for name in COLUMNS
    ) + "\nwith an events table (docs/conversions.md):\n" + "\n".join(
        f"  {name}: {METRICS.get(name).definition}" for name in EVENT_COLUMNS
    )


def run(args: argparse.Namespace) -> int:
    from onlineeval.online import online_metrics

    logs = load(args)
    df = online_metrics(logs, by=by_columns(args, logs), sat_dwell_s=args.sat_dwell_s,
                        session_gap_min=args.session_gap_min)
    emit(df, args.format)
    return 0
