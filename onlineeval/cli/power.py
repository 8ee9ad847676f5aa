"""``onlineeval power LOGS``: minimum detectable effect and units needed, per metric."""

from __future__ import annotations

import argparse
import sys

from onlineeval.cli._output import add_format_argument, emit

NAME = "power"
HELP = ("power analysis from baseline logs: minimum detectable effect for a number of units "
        "per arm, and units per arm needed for an effect")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from onlineeval.abtest.metrics import METRICS

    parser.add_argument("logs", metavar="LOGS", help="baseline log directory")
    parser.add_argument("--metrics", default=None, metavar="NAME,...",
                        help=f"metrics (default all): {', '.join(METRICS)}")
    parser.add_argument("--unit", default="user_id",
                        help="randomization unit column of searches (default user_id)")
    parser.add_argument("--variant", default=None,
                        help="use only this variant's units as the baseline (e.g. control)")
    parser.add_argument("--experiment", default=None,
                        help="experiment to use (required when the log holds several)")
    parser.add_argument("--alpha", type=float, default=0.05, help="two-sided level (0.05)")
    parser.add_argument("--power", type=float, default=0.8, help="power (default 0.8)")
    parser.add_argument("--units", type=int, default=None,
                        help="units per arm for the MDE (default half the baseline's units)")
    parser.add_argument("--effect", type=float, default=None,
                        help="effect to size for: relative (0.01 = +1%%) unless --absolute")
    parser.add_argument("--absolute", action="store_true",
                        help="--effect is an absolute difference of the metric")
    add_format_argument(parser)


def run(args: argparse.Namespace) -> int:
    from onlineeval.abtest import power
    from onlineeval.logs import load_logs

    logs = load_logs(args.logs)
    if logs.report.excluded_total:
        print(logs.report.summary(), file=sys.stderr)
    df = power(
        logs, metrics=args.metrics, unit=args.unit, alpha=args.alpha, power=args.power,
        units=args.units, effect=args.effect, relative=not args.absolute,
        variant=args.variant, experiment=args.experiment,
    )
    emit(df, args.format, float_format="{:.6g}")
    return 0
