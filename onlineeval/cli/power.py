"""``onlineeval power LOGS``: minimum detectable effect and units needed, per metric."""

from __future__ import annotations

import argparse

from onlineeval.cli._experiment_args import add_log_arguments
from onlineeval.cli._logs import load
from onlineeval.cli._output import add_format_argument, emit

NAME = "power"
HELP = ("power analysis from baseline logs: minimum detectable effect for a number of units "
        "per arm, and units per arm needed for an effect")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_log_arguments(parser, "baseline log directory")
    parser.add_argument("--variant", default=None,
                        help="use only this variant's units as the baseline (e.g. control; "
                        "read with the type of the log's variant column, like abtest "
                        "--control)")
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
    from onlineeval.logs.variants import from_text

    logs = load(args, always_report=False)
    df = power(
        logs, metrics=args.metrics, unit=args.unit, alpha=args.alpha, power=args.power,
        units=args.units, effect=args.effect, relative=not args.absolute,
        variant=from_text(logs, args.variant), experiment=args.experiment,
    )
    emit(df, args.format, float_format="{:.6g}")
    return 0
