"""``onlineeval compare``: paired offline comparison of runs against a baseline."""

from __future__ import annotations

import argparse

from onlineeval.cli._options import add_renamed
from onlineeval.cli._output import add_format_argument, emit

NAME = "compare"
HELP = ("compare runs with a baseline run per query: mean delta, CI, p-value (paired t, "
        "Wilcoxon, sign, randomization or bootstrap test), effect size, Holm/BH correction")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qrels", metavar="QRELS", help="TREC qrels file")
    parser.add_argument("run_a", metavar="RUN_A", help="baseline TREC run")
    parser.add_argument("runs", metavar="RUN_B", nargs="+",
                        help="one or more runs, each compared with RUN_A")
    parser.add_argument("-m", "--measure", dest="measures", action="append", required=True,
                        help="measure (repeatable), e.g. -m ndcg@10 -m map")
    from onlineeval.offline.compare import PAIRED_TESTS
    from onlineeval.stats.multiple import CORRECTIONS

    parser.add_argument("--test", default="t",
                        help=f"paired test: {', '.join(PAIRED_TESTS)} (default t)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level")
    parser.add_argument("--correction", default="holm",
                        help=f"multiple-testing correction over runs × measures: "
                             f"{', '.join(CORRECTIONS)} (default holm)")
    add_renamed(parser, "--n-resamples", type=int, default=10_000,
                        help="resamples of the randomization and bootstrap tests")
    parser.add_argument("--seed", type=int, default=0, help="seed of resampling tests")
    add_format_argument(parser)


def run(args: argparse.Namespace) -> int:
    from onlineeval.offline.compare import compare

    result = compare(
        args.qrels, args.run_a, list(args.runs), args.measures, test=args.test,
        alpha=args.alpha, correction=args.correction, n_resamples=args.n_resamples,
        seed=args.seed,
    )
    emit(result, args.format)
    return 0
