"""``onlineeval qrels-from-clicks LOGS --model dbn -o clicks.qrels``: judgments from clicks."""

from __future__ import annotations

import argparse
import sys

from onlineeval.cli._logs import add_logs_arguments, load, mapping_inputs
from onlineeval.cli._output import add_format_argument, emit
from onlineeval.cli.clickmodel import LOGS_HELP, add_model_options

NAME = "qrels-from-clicks"
HELP = ("fit a click model and write TREC qrels graded by thresholds on its relevance per "
        "(query, doc), readable by trec-eval, compare and agree")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from onlineeval.clickmodels.judgments import DEFAULT_GRADES, DEFAULT_MIN_IMPRESSIONS

    add_logs_arguments(parser, LOGS_HELP)
    parser.add_argument("--model", default="dbn", metavar="M",
                        help="click model (default dbn: relevance = attractiveness x "
                        "satisfaction); pbm, ubm, sdbn, dcm, cascade also work")
    parser.add_argument("--grades", default=",".join(str(g) for g in DEFAULT_GRADES),
                        metavar="T1,T2,...",
                        help="increasing relevance thresholds: grade = how many of them the "
                        "relevance reaches (default 0.1,0.3,0.5,0.7 -> grades 0..4)")
    parser.add_argument("--min-impressions", type=int, default=DEFAULT_MIN_IMPRESSIONS,
                        metavar="N", help="judge only pairs shown on at least N pages "
                        f"(default {DEFAULT_MIN_IMPRESSIONS})")
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="the qrels file to write (atomically; never over an input)")
    add_model_options(parser)
    add_format_argument(parser)


def run(args: argparse.Namespace) -> int:
    from onlineeval.atomic import Output, fill
    from onlineeval.clickmodels import MODELS, fit
    from onlineeval.clickmodels.judgments import check_thresholds, qrels_from_clicks

    model = MODELS.canonical(args.model)
    check_thresholds(args.grades)
    with Output(inputs=mapping_inputs(args)) as out:
        target = out.file(args.output)  # refused before any work if it is an input
        logs = load(args)
        fitted = fit(logs, model, prior=args.prior, max_rank=args.max_rank,
                     max_iter=args.max_iter, query=args.query)
        j = qrels_from_clicks(fitted, args.grades, args.min_impressions)
        fill(target, j.to_trec())
    print(f"{model}: judged {j.judged} of {j.pairs} (query, doc) pairs; "
          f"{j.too_few_impressions} left out with fewer than {j.min_impressions} impressions; "
          f"wrote {args.output}", file=sys.stderr)
    emit(j.per_grade, args.format)
    return 0
