"""``onlineeval aa LOGS``: false-positive rates of the fixed-horizon test under peeking and of
the sequential test, on salted A/A re-randomisations of an experiment's units."""

from __future__ import annotations

import argparse

from onlineeval.cli._experiment_args import (
    add_cuped_arguments,
    add_log_arguments,
    add_window_arguments,
    cuped_of,
    pre_period_of,
)
from onlineeval.cli._logs import load
from onlineeval.cli._output import add_format_argument, emit

NAME = "aa"
HELP = ("A/A peeking check: re-randomise the units many times and report how often the "
        "fixed-horizon test (read at every look) and the sequential test flag a difference")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_log_arguments(parser, "log directory of the experiment whose units are re-randomised")
    add_window_arguments(parser, "searches")
    parser.add_argument("--splits", type=int, default=500,
                        help="number of salted A/A splits (default 500)")
    parser.add_argument("--looks", default="day", metavar="day|hour|N",
                        help="read every calendar day (default), every hour or N looks "
                        "spread evenly over the days")
    add_cuped_arguments(parser, "; both tests are then CUPED's at every look")
    parser.add_argument("--alpha", type=float, default=0.05, help="two-sided level (0.05)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the salts (default 0)")
    add_format_argument(parser)


def run(args: argparse.Namespace) -> int:
    from onlineeval.abtest.aa import aa_test
    from onlineeval.stats.sequential import parse_looks

    looks = parse_looks(args.looks)
    logs = load(args, always_report=False)
    metrics = "ctr" if args.metrics is None else [m.strip() for m in args.metrics.split(",")]
    df = aa_test(logs, metrics, splits=args.splits, looks=looks, alpha=args.alpha,
                 seed=args.seed, experiment=args.experiment, unit=args.unit,
                 start=args.start, end=args.end, pre_period=pre_period_of(args),
                 cuped=cuped_of(args))
    emit(df, args.format, float_format="{:.4g}")
    return 0
