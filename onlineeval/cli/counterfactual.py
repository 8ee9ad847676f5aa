"""``onlineeval counterfactual LOGS --run candidate.run``: clicks@k of a ranking never shown."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from onlineeval.cli._logs import add_logs_arguments, load
from onlineeval.cli._options import add_renamed
from onlineeval.cli._output import add_format_argument, emit

if TYPE_CHECKING:
    from onlineeval.counterfactual import CounterfactualResult

NAME = "counterfactual"
HELP = ("estimate a candidate ranking's clicks@k from the logs of the ranker that was shown "
        "(position-based ips, snips or dr; CI clustered by user, effective sample size, "
        "clipping)")


def add_estimate_arguments(parser: Any, estimator: str = "ips") -> None:
    """The options of a counterfactual estimate (metric, propensities, estimator, model,
    clip, query column, unit, max rank), shared by ``counterfactual`` and ``agree
    --counterfactual``; ``estimator`` is the default estimator."""
    from onlineeval.counterfactual.estimators import ESTIMATORS

    parser.add_argument("--metric", default="clicks@10",
                        help="clicks@K: expected clicks per page in the candidate's top K "
                        "(default clicks@10)")
    parser.add_argument("--propensities", default="pbm", metavar="pbm|harvested|FILE",
                        help="examination per rank: a PBM fitted on the log (default), "
                        "intervention harvesting on the log, or a CSV file rank,propensity (0 marks "
                        "a rank never examined: what was shown there is counted and reported, "
                        "not used)")
    parser.add_argument("--estimator", default=estimator, choices=tuple(ESTIMATORS),
                        help=f"default {estimator}. ips: each logged click weighs p_c/p_l; "
                        "snips: per "
                        "(query, doc) clicks over the examination they were shown with "
                        "(lower variance where the logged rank varies; no page-level "
                        "support needed); dr: a pbm click model's predicted clicks plus "
                        "the ips-weighted residuals (fills slots the log did not show)")
    parser.add_argument("--model", default=None, metavar="pbm|FILE",
                        help="dr's click model: pbm, the log's own (default: examination = "
                        "the propensities, attractiveness = clicks over examination mass; "
                        "its noise is in the interval), or a pbm model file written by "
                        "`clickmodel fit --model pbm -o` on other data (taken as exact)")
    parser.add_argument("--clip", type=float, default=None, metavar="M",
                        help="cap the weights p_c/p_l of ips and dr at M (default: no cap)")
    add_renamed(parser, "--query", default="query", metavar="COL",
                help="searches column matching the runs' qids (default query)")
    parser.add_argument("--unit", default="user_id", metavar="COL",
                        help="randomization unit the CI clusters on (default user_id)")
    parser.add_argument("--max-rank", type=int, default=10, metavar="N",
                        help="logged ranks read (default 10)")


class _OptionsParser(argparse.ArgumentParser):
    """Reads ``KEY=VALUE`` options as the estimate's own options; a bad one is an error
    naming it (one line), not argparse's exit."""

    def error(self, message: str) -> Any:
        from onlineeval.errors import InvalidParameterError

        raise InvalidParameterError(f"{self.prog}: {message}")


def parse_estimate_options(text: str | None, option: str, estimator: str = "snips",
                           ) -> dict[str, Any]:
    """``KEY=VALUE[,KEY=VALUE...]`` (the keywords of :func:`onlineeval.counterfactual.
    evaluate`, e.g. ``estimator=dr,clip=10,max_rank=5``) as keyword arguments, read and
    checked by the same option definitions as ``onlineeval counterfactual``'s; only the keys
    given are returned (the caller's defaults stand for the others). ``option`` names the
    command-line option in errors."""
    from onlineeval.errors import InvalidParameterError

    parser = _OptionsParser(prog=option, add_help=False)
    add_estimate_arguments(parser, estimator=estimator)
    parser.add_argument("--confidence", type=float)
    argv, given = [], []
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise InvalidParameterError(f"{option}: expected KEY=VALUE, got {item.strip()!r} "
                                        "(e.g. estimator=dr,clip=10)")
        argv += [f"--{key.replace('_', '-')}", value.strip()]
        given.append(key)
    known = {a.dest for a in parser._actions}
    unknown = [k for k in given if k not in known]
    if unknown:
        keys = sorted(k for k in known if k != "help")
        raise InvalidParameterError(f"{option}: unknown key {unknown[0]!r}; use "
                                    f"{', '.join(keys)}")
    args = vars(parser.parse_args(argv))
    return {k: args[k] for k in dict.fromkeys(given)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_logs_arguments(parser, "log directory (searches, results, clicks)")
    parser.add_argument("--run", required=True, metavar="FILE",
                        help="the candidate ranking as a TREC run; its qids must be values of "
                        "--query")
    add_estimate_arguments(parser)
    parser.add_argument("--confidence", type=float, default=0.95,
                        help="confidence of the interval (default 0.95)")
    add_format_argument(parser)


def clipping(res: CounterfactualResult) -> str:
    if res.estimator == "snips":
        return "snips has no weight to cap"
    if res.clip is None:
        return "not capped (--clip not given)"
    return (f"capped at {res.clip:g} as asked: {res.clipped_clicks} of the "
            f"{res.weighted_clicks} clicks used had a larger weight")


def run(args: argparse.Namespace) -> int:
    from onlineeval.counterfactual import evaluate

    logs = load(args)
    res = evaluate(logs, args.run, metric=args.metric, propensities=args.propensities,
                   estimator=args.estimator, clip=args.clip, model=args.model,
                   query=args.query,
                   unit=args.unit, max_rank=args.max_rank, confidence=args.confidence)
    print(f"propensities: {res.propensity_source}: "
          + ", ".join(f"{r}:{p:.4f}" for r, p in zip(res.propensities["rank"],
                                                     res.propensities["propensity"],
                                                     strict=True)), file=sys.stderr)
    if res.model:
        print(f"click model: {res.model}", file=sys.stderr)
    print(f"weights: {clipping(res)}", file=sys.stderr)
    emit(res.summary(), args.format)
    return 0
