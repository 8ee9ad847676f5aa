"""``onlineeval trec-eval``: trec_eval 10.0's output, byte for byte.

    onlineeval trec-eval [-q] [-c] [-n] [-M N] [-l N] [-m MEASURE[.PARAMS]]... QRELS RUN

Same flags and output as trec_eval (see :mod:`onlineeval.offline.trec_eval`); without ``-m``
the ``official`` measure set is printed.
"""

from __future__ import annotations

import argparse
import sys

from onlineeval.offline.trec_eval import trec_eval

NAME = "trec-eval"
HELP = "evaluate a TREC run against qrels and print exactly what trec_eval 10.0 prints"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", dest="per_query", action="store_true",
                        help="also print each query's values (before the summary)")
    parser.add_argument("-c", dest="complete", action="store_true",
                        help="average over every judged query; queries missing from the run "
                             "score as trec_eval -c scores them")
    parser.add_argument("-n", dest="no_summary", action="store_true",
                        help="do not print the summary ('all') lines")
    parser.add_argument("-M", dest="max_results", type=int, metavar="N",
                        help="evaluate only the first N ranked documents of each query")
    parser.add_argument("-l", dest="level", type=int, default=1, metavar="N",
                        help="minimum grade counted as relevant (default 1)")
    parser.add_argument("-m", dest="measures", action="append", metavar="MEASURE[.PARAMS]",
                        help="measure to print, e.g. map, P.5,10, ndcg_cut.10, all_trec, "
                             "official (repeatable; default official)")
    parser.add_argument("qrels", help="TREC qrels file: qid iter docno rel")
    parser.add_argument("run", help="TREC run file: qid Q0 docno rank score tag")


def run(args: argparse.Namespace) -> int:
    result = trec_eval(
        args.qrels, args.run, measures=args.measures or ["official"],
        relevance_level=args.level, max_results=args.max_results, complete=args.complete,
    )
    sys.stdout.write(result.format(per_query=args.per_query, summary=not args.no_summary))
    return 0
