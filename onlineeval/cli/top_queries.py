"""``onlineeval top-queries LOGS``: the most searched queries, with users and CTR."""

from __future__ import annotations

import argparse

from onlineeval.cli._logs import load
from onlineeval.cli._output import emit
from onlineeval.cli.online import add_log_arguments, by_columns

NAME = "top-queries"
HELP = "the most searched queries (per group) with their users and CTR"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_log_arguments(parser, "")
    parser.add_argument("-n", type=int, default=20, help="queries per group (default 20)")


def run(args: argparse.Namespace) -> int:
    from onlineeval.online import top_queries

    logs = load(args)
    emit(top_queries(logs, n=args.n, by=by_columns(args, logs)), args.format)
    return 0
