"""``onlineeval abtest LOGS``: read out an A/B(/n) experiment from click logs."""

from __future__ import annotations

import argparse
import json
import sys
import warnings

import pandas as pd

from onlineeval.cli._experiment_args import (
    add_cuped_arguments,
    add_log_arguments,
    add_window_arguments,
    cuped_of,
    parse_split,
    pre_period_of,
)
from onlineeval.cli._logs import load
from onlineeval.cli._output import add_format_argument, emit
from onlineeval.errors import SampleRatioMismatchWarning
from onlineeval.formatting import records

NAME = "abtest"
HELP = ("A/B(/n) test readout per randomization unit: delta-method and Welch t tests, "
        "sample ratio mismatch check, CUPED, Holm/BH corrections, no verdict on too few units")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from onlineeval.abtest.readout import MIN_UNITS, TESTS
    from onlineeval.stats.multiple import CORRECTIONS

    add_log_arguments(parser, "log directory (searches.*, clicks.*, ...)")
    parser.add_argument("--control", default="control",
                        help="control variant (default control); read with the type of the "
                        "log's variant column: 0 is the number 0 when the log writes its "
                        "variants as whole numbers")
    parser.add_argument("--treatment", action="append", default=None, metavar="NAME",
                        help="treatment variant (read like --control); repeat or separate by "
                        "commas for A/B/n (default: every other variant)")
    add_window_arguments(parser, "exposures")
    add_cuped_arguments(parser)
    parser.add_argument("--alpha", type=float, default=0.05, help="level (default 0.05)")
    parser.add_argument("--correction", default="holm", choices=list(CORRECTIONS),
                        help="multiple-testing correction across metrics x treatments "
                        "(default holm)")
    parser.add_argument("--test", default="auto", choices=list(TESTS),
                        help="auto: delta-method t / Welch's t (Welch-Satterthwaite df); "
                        "mannwhitney: Mann-Whitney U for per-unit means; bootstrap: "
                        "unit-resampling bootstrap")
    parser.add_argument("--min-units", type=int, default=MIN_UNITS,
                        help="fewest units with data per arm for a verdict; below it the "
                        f"verdict is 'insufficient data' (default {MIN_UNITS})")
    parser.add_argument("--expected-split", default=None, metavar="VARIANT=SHARE,...",
                        help="expected share of units per variant for the SRM check, "
                        "summing to 1 (default equal)")
    parser.add_argument("--srm-alpha", type=float, default=0.001,
                        help="SRM p-value threshold (default 0.001)")
    parser.add_argument("--bootstrap-reps", type=int, default=2000,
                        help="bootstrap replicates (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    add_format_argument(parser)


#: the window fields the CSV output repeats on every row (as window_<field>)
WINDOW_COLUMNS = ("start", "end", "first_exposure", "last_exposure")


def run(args: argparse.Namespace) -> int:
    from onlineeval.abtest import abtest
    from onlineeval.abtest.units import describe_window
    from onlineeval.logs.variants import from_text

    logs = load(args, always_report=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        treatment = None
        if args.treatment:
            treatment = [from_text(logs, t.strip()) for item in args.treatment
                         for t in item.split(",") if t.strip()]
        split = parse_split(args.expected_split)
        df = abtest(
            logs, control=from_text(logs, args.control), treatment=treatment,
            metrics=args.metrics,
            unit=args.unit, alpha=args.alpha, correction=args.correction,
            pre_period=pre_period_of(args),
            experiment=args.experiment, test=args.test,
            expected_split=None if split is None else {
                from_text(logs, k): v for k, v in split.items()}, srm_alpha=args.srm_alpha,
            bootstrap_reps=args.bootstrap_reps, seed=args.seed, start=args.start,
            end=args.end, cuped=cuped_of(args), min_units=args.min_units,
        )
    srm = df.attrs["srm"]
    for w in caught:
        # the SRM warning is shown with the output, prominently, instead
        if not issubclass(w.category, SampleRatioMismatchWarning):
            print(f"warning: {w.message}", file=sys.stderr)
    message = df.attrs["srm_message"]
    window = df.attrs["window"]
    if args.format in ("json", "csv"):
        # machine-readable output stays parseable; the mismatch still reaches the terminal
        if srm["mismatch"]:
            print(f"!!! {message}", file=sys.stderr)
        # every row states the window it was computed over: the same ISO text in both
        # formats (CSV would write a Timestamp its own way)
        rows = df.assign(**{f"window_{k}": None if window[k] is None else window[k].isoformat()
                            for k in WINDOW_COLUMNS})
        if args.format == "json":
            json.dump({"srm": srm, "experiment": df.attrs["experiment"],
                       "window": records(pd.DataFrame([window]))[0],
                       "results": records(rows)}, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            emit(rows, "csv")
    else:
        if srm["mismatch"]:
            bar = "!" * 78
            print(f"{bar}\n!!! {message}\n{bar}")
        else:
            print(message)
        print(describe_window(window))
        # what is the same in every row is said once below the table: the test names (long,
        # one per metric), the correction and its family, the level, the unit; n is the sum
        # of the two units columns
        emit(df.drop(columns=["significant", "test", "ci_level", "correction", "family_size",
                              "n", "unit"]), "table", float_format="{:.4g}")
        by_test: dict[str, list[str]] = {}
        for metric, name in df.attrs["tests"].items():
            by_test.setdefault(name, []).append(metric)
        tests = "; ".join(f"{name} for {', '.join(m)}" for name, m in by_test.items())
        family = df["family_size"].iloc[0] if len(df) else 0
        print(f"tests: {tests}. Correction: {df.attrs['correction']} over {family} p-values; "
              f"alpha = {df.attrs['alpha']:g}; {100 * (1 - df.attrs['alpha']):.4g}% intervals, not "
              f"adjusted; units: {df.attrs['unit']}; no verdict below "
              f"{df.attrs['min_units']} units with data per arm")
    excluded = {k: v for k, v in df.attrs["excluded"].items() if v}
    if excluded:
        print("left out of the outcome: "
              + ", ".join(f"{k} = {v:,}" for k, v in excluded.items()), file=sys.stderr)
    return 0
