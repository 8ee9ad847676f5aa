"""``onlineeval readout LOGS [LOGS]``: should this experiment ship?"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from onlineeval.cli._experiment_args import (
    add_cuped_arguments,
    add_window_arguments,
    cuped_of,
    parse_split,
    pre_period_of,
)
from onlineeval.cli._logs import add_event_arguments, add_mapping_arguments, load
from onlineeval.cli._output import add_format_argument

NAME = "readout"
HELP = ("read out one experiment from its logs (A/B, A/B/n, interleaving, or an A/B log and "
        "an interleaving log together): verdict, lifts with intervals, guardrails, SRM, power")

#: exit status of --fail-on-srm when the sample ratio check fails (after the output is written)
SRM_EXIT = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", metavar="LOGS", nargs="+",
                        help="log directory; or two: an A/B log and an interleaving log of "
                             "the same experiment (an interleaving log's results have team)")
    add_mapping_arguments(parser)
    parser.add_argument("--experiment", default=None,
                        help="experiment to read out (required when a log holds several)")
    parser.add_argument("--control", default=None,
                        help="control variant (default control)")
    parser.add_argument("--treatment", default=None, metavar="T[,T...]",
                        help="treatment variant(s) (default every other variant; each is "
                             "compared with the control)")
    parser.add_argument("--primary", default="ctr", metavar="M[,M...]",
                        help="primary metrics: the one correction family (Holm within it); "
                             "default ctr")
    parser.add_argument("--guardrails", default="", metavar="M[,M...]",
                        help="guardrail metrics (each needs a --non-inferiority margin)")
    parser.add_argument("--non-inferiority", default=None, metavar="M:MARGIN[,...]",
                        help="non-inferiority margins: absolute (abandonment_rate:0.01) or "
                             "relative to the control (abandonment_rate:2%%); a metric with a "
                             "margin is a guardrail")
    parser.add_argument("--secondary", default=None, metavar="M[,M...]|none",
                        help="secondary metrics, unadjusted (default every metric the log "
                             "supports; none for none)")
    parser.add_argument("--runs", default=None, metavar="CONTROL.run,TREATMENT.run",
                        help="the control's and the treatment's TREC runs: with --qrels, the "
                        "offline prediction beside the online result")
    parser.add_argument("--qrels", default=None, metavar="FILE",
                        help="TREC qrels judging the runs (with --runs)")
    parser.add_argument("--counterfactual", default=None, metavar="LOGS",
                        help="the log of the ranker(s) shown before or beside the experiment: "
                        "adds the counterfactual prediction of this A/B, treatment run - "
                        "control run clicks@10 estimated on that log (needs --runs and "
                        "--qrels)")
    parser.add_argument("--counterfactual-options", default=None, metavar="KEY=VALUE[,...]",
                        help="options of that estimate, the keywords of `onlineeval "
                        "counterfactual`: estimator (default snips), propensities, metric, "
                        "model, clip, query (default qid when the log has it), unit, "
                        "max_rank, confidence; e.g. estimator=dr,clip=10")
    parser.add_argument("--segments", default=None, metavar="COL",
                        help="break the effect down by this searches column")
    add_window_arguments(parser, "exposures")
    add_event_arguments(parser)
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="level of every test (default 0.05)")
    parser.add_argument("--design", choices=("auto", "ab", "interleaving"), default="auto",
                        help="the log's design (default auto: interleaving when results.team "
                             "is present)")
    parser.add_argument("--control-team", default=None,
                        help="interleaving: the control's results.team (default: told by the "
                             "names, e.g. experiment C_vs_T)")
    parser.add_argument("--treatment-team", default=None,
                        help="interleaving: the treatment's results.team")
    parser.add_argument("--fail-on-srm", action="store_true",
                        help=f"exit with status {SRM_EXIT} (after writing the output) when "
                             "the sample ratio check fails")
    parser.add_argument("--expected-split", default=None, metavar="VARIANT=SHARE,...",
                        help="the designed share of units per variant for the sample ratio "
                        "checks (fixed-horizon and, with --sequential, the always-valid one), "
                        "summing to 1, e.g. control=0.3,treatment=0.7 (default equal)")
    parser.add_argument("-o", "--output", default=None, metavar="READOUT.html",
                        help="also write the HTML readout")
    parser.add_argument("--json", default=None, metavar="READOUT.json",
                        help="also write the readout as JSON")
    parser.add_argument("--sequential", action="store_true",
                        help="instead, one row per look and metric (primary and guardrails) "
                        "with always-valid intervals and p-values and the first look the "
                        "sequential test would stop at (onlineeval.sequential_readout; A/B "
                        "logs: --control defaults to control, --treatment to treatment; an "
                        "interleaving log: the per-user preference of the treatment team)")
    parser.add_argument("--looks", default="day", metavar="day|hour|N",
                        help="with --sequential: read every calendar day (default), every "
                        "hour or N looks spread evenly over the days")
    add_cuped_arguments(parser, "; with --sequential, at every look (A/B logs)")
    add_format_argument(parser)


def _sequential(args: argparse.Namespace) -> int:
    from onlineeval.abtest.sequential import is_interleaving, sequential_readout
    from onlineeval.cli._output import emit
    from onlineeval.errors import InvalidParameterError
    from onlineeval.stats.sequential import parse_looks

    if len(args.logs) != 1 or args.output or args.json or args.counterfactual:
        raise InvalidParameterError("--sequential reads one log and writes to stdout: "
                                    "drop the second LOGS, -o, --json and --counterfactual")
    looks = parse_looks(args.looks)
    split = parse_split(args.expected_split)
    logs = load(args, always_report=False, path=args.logs[0])
    metrics = [m.strip() for m in f"{args.primary},{args.guardrails}".split(",") if m.strip()]
    control, treatment = _arms(logs, args)
    if is_interleaving(logs, args.design):
        # one metric, the per-user preference: the A/B default --primary ctr does not apply
        metrics = None if metrics == ["ctr"] else metrics
        control = args.control_team or args.control
        treatment = args.treatment_team or args.treatment
    frame = sequential_readout(
        logs, control, treatment, metrics, looks=looks, alpha=args.alpha,
        experiment=args.experiment, start=args.start, end=args.end, design=args.design,
        expected_split=split, cuped=cuped_of(args), pre_period=pre_period_of(args))
    emit(frame, args.format, float_format="{:.4g}")
    return 0


def _counterfactual(args: argparse.Namespace, runs: tuple[str, ...] | None,
                    ) -> tuple[Any, dict[str, Any] | None]:
    """The logging log and the estimate's options of ``--counterfactual`` (None, None
    without it)."""
    from onlineeval.cli.counterfactual import parse_estimate_options
    from onlineeval.errors import InvalidParameterError

    if args.counterfactual is None:
        if args.counterfactual_options is not None:
            raise InvalidParameterError("--counterfactual-options needs --counterfactual LOGS "
                                        "(the logging ranker's log)")
        return None, None
    if runs is None:
        raise InvalidParameterError("--counterfactual needs --runs CONTROL.run,TREATMENT.run "
                                    "(and --qrels): the two rankings whose clicks it predicts")
    options = parse_estimate_options(args.counterfactual_options, "--counterfactual-options")
    return load(args, always_report=False, path=args.counterfactual), options


def _arms(logs: Any, args: argparse.Namespace) -> tuple[Any, Any]:
    """--control and --treatment read with the type of the log's variant column (``0`` is
    the number 0 when the log writes its variants as whole numbers), as abtest reads them."""
    from onlineeval.logs.variants import from_text, is_integer

    treatment = args.treatment
    if treatment is not None and is_integer(logs):
        parts = [from_text(logs, t.strip()) for t in treatment.split(",") if t.strip()]
        treatment = parts[0] if len(parts) == 1 else parts
    return from_text(logs, args.control), treatment


def run(args: argparse.Namespace) -> int:
    if args.sequential:
        return _sequential(args)
    from onlineeval.atomic import Output, fill
    from onlineeval.errors import InputError, InvalidParameterError

    if args.cuped or args.pre_period:
        raise InvalidParameterError(
            "--cuped and --pre-period read out with --sequential here; for the fixed-horizon "
            "CUPED readout use onlineeval abtest --cuped"
        )
    from onlineeval.readout import readout
    from onlineeval.readout.text import csv_frame, render_text

    html = None
    if args.output is not None:
        try:
            from onlineeval.report import readout_page as html  # issue 14 §2
        except ImportError:
            raise InputError(
                "HTML readout not available yet in this version: drop -o (use --json)"
            ) from None
    runs = None
    if (args.runs is None) != (args.qrels is None):
        raise InvalidParameterError("--runs and --qrels go together: give both (the offline "
                                    "prediction needs the two runs and their judgments)")
    if args.runs is not None:
        runs = tuple(r.strip() for r in args.runs.split(","))
        if len(runs) != 2 or not all(runs):
            raise InvalidParameterError(f"--runs takes two runs, CONTROL.run,TREATMENT.run; "
                                        f"got {args.runs!r}")
    cf_logs, cf_options = _counterfactual(args, runs)
    split = parse_split(args.expected_split)
    logs = [load(args, always_report=False, path=p) for p in args.logs]
    control, treatment = _arms(logs[0], args)
    secondary = None if args.secondary is None else (
        () if args.secondary.strip().lower() == "none" else args.secondary)
    with Output(inputs=[*args.logs, *(args.columns_file or ()), *(runs or ()),
                        *([args.qrels] if args.qrels else []),
                        *([args.counterfactual] if args.counterfactual else [])]) as out:
        json_tmp = out.file(args.json) if args.json else None
        html_tmp = out.file(args.output) if args.output else None
        ro = readout(
            logs if len(logs) > 1 else logs[0], experiment=args.experiment,
            control=control, treatment=treatment, primary=args.primary,
            guardrails=args.guardrails, non_inferiority=args.non_inferiority,
            segments=args.segments, start=args.start, end=args.end, alpha=args.alpha,
            design=args.design, secondary=secondary, control_team=args.control_team,
            treatment_team=args.treatment_team, runs=runs, qrels=args.qrels,
            counterfactual=cf_logs, counterfactual_options=cf_options,
            expected_split=split,
        )
        if json_tmp is not None:
            fill(json_tmp, json.dumps(ro.to_dict(), indent=2, allow_nan=False) + "\n")
        if html_tmp is not None and html is not None:
            fill(html_tmp, html.render(ro, logs))
    if args.format == "json":
        json.dump(ro.to_dict(), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    elif args.format == "csv":
        csv_frame(ro).to_csv(sys.stdout, index=False)
    else:
        sys.stdout.write(render_text(ro))
    if args.fail_on_srm and ro.srm is not None and ro.srm.status == "mismatch":
        print(f"onlineeval readout: sample ratio mismatch (p = {ro.srm.p_value:.3g}); exit "
              f"status {SRM_EXIT} (--fail-on-srm)", file=sys.stderr)
        return SRM_EXIT
    return 0
