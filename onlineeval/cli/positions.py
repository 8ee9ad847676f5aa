"""``onlineeval positions LOGS``: click-through rate per rank."""

from __future__ import annotations

import argparse

from onlineeval.cli._logs import load
from onlineeval.cli._output import emit
from onlineeval.cli.online import add_log_arguments, by_columns

NAME = "positions"
HELP = ("CTR per rank (position CTR): searches with a click at the rank / searches that showed "
        "the rank; needs the results table")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_log_arguments(parser, "")


def run(args: argparse.Namespace) -> int:
    from onlineeval.online import position_ctr

    logs = load(args)
    emit(position_ctr(logs, by=by_columns(args, logs)), args.format)
    return 0
