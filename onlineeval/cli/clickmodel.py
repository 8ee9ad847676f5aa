"""``onlineeval clickmodel fit|compare LOGS``: click models fitted on a log."""

from __future__ import annotations

import argparse
import sys

from onlineeval.cli import _positive_int
from onlineeval.cli._logs import add_logs_arguments, load, mapping_inputs
from onlineeval.cli._options import add_renamed
from onlineeval.cli._output import add_format_argument, emit

NAME = "clickmodel"
HELP = ("fit click models (ctr, pbm, cascade, dcm, ubm, sdbn, dbn) on a log: position bias, "
        "attractiveness, satisfaction; compare them by held-out perplexity")


LOGS_HELP = "log directory (searches, results, clicks)"


def _prior(text: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be two pseudo-counts 'a,b' such as 1,1 (or 0,0 for plain maximum "
            f"likelihood); got {text!r}") from None
    if not (a >= 0 and b >= 0):
        raise argparse.ArgumentTypeError(f"pseudo-counts must be >= 0; got {text!r}")
    return a, b


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Estimation options shared by the commands that fit a click model."""
    parser.add_argument("--prior", type=_prior, default=(1.0, 1.0), metavar="A,B",
                        help="Beta pseudo-counts added to every estimated probability "
                        "(default 1,1; 0,0 = maximum likelihood)")
    parser.add_argument("--max-rank", type=_positive_int, default=10, metavar="N",
                        help="model ranks 1..N (default 10); deeper results are counted and "
                        "left out")
    parser.add_argument("--max-iter", type=_positive_int, default=1000, metavar="N",
                        help="EM iterations at most (default 1000)")
    add_renamed(parser, "--query", default="query", metavar="COL",
                        help="searches column taken as the query (default query; e.g. qid)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from onlineeval.clickmodels.models import MODELS, ORDER

    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    models_help = "; ".join(f"{m}: {MODELS.get(m).summary}" for m in ORDER)
    f = sub.add_parser("fit", help="fit one model; print its position bias per rank",
                       description="Fit one click model. Prints the position bias per rank "
                       "(examination averaged over the pages showing the rank, and relative to "
                       "rank 1); a summary goes to stderr; -o writes the whole model as JSON.")
    add_logs_arguments(f, LOGS_HELP)
    f.add_argument("--model", required=True, metavar="M", help=f"the model: {models_help}")
    f.add_argument("-o", "--output", metavar="FILE",
                   help="write the fitted model as JSON (atomically; never over an input)")
    add_model_options(f)
    add_format_argument(f)
    c = sub.add_parser("compare", help="fit models on a training split, score the rest",
                       description="Fit each model on a seeded training split of the pages "
                       "and print its log-likelihood and perplexity on the held-out pages.")
    add_logs_arguments(c, LOGS_HELP)
    c.add_argument("--models", default=",".join(ORDER), metavar="M,...",
                   help=f"models to compare (default all: {','.join(ORDER)})")
    c.add_argument("--test-share", type=float, default=0.2, metavar="SHARE",
                   help="share of sessions (or queries) held out (default 0.2)")
    c.add_argument("--split", choices=("session", "query"), default="session",
                   help="keep each session (default; a log without session ids: each page) or "
                   "each query whole on one side")
    c.add_argument("--seed", type=int, default=0, help="seed of the split (default 0)")
    c.add_argument("--per-rank", action="store_true",
                   help="print the perplexity of every model at every rank instead")
    add_model_options(c)
    add_format_argument(c)
    h = sub.add_parser("harvest", help="position bias from (query, doc) pairs shown at several "
                       "ranks (intervention harvesting), beside PBM's",
                       description="Examination per rank relative to rank 1 from (query, doc) "
                       "pairs the log shows at rank 1 and at rank k (Agarwal et al. 2019), with "
                       "a bootstrap interval over queries, and PBM's estimate beside it.")
    add_logs_arguments(h, LOGS_HELP)
    h.add_argument("--n-boot", type=_positive_int, default=1000, metavar="B",
                   help="bootstrap resamples of queries (default 1000)")
    h.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    h.add_argument("--confidence", type=float, default=0.95,
                   help="interval confidence (default 0.95)")
    h.add_argument("--no-pbm", action="store_true", help="do not fit PBM for comparison")
    add_model_options(h)
    add_format_argument(h)


def run(args: argparse.Namespace) -> int:
    if args.action == "fit":
        return _fit(args)
    if args.action == "harvest":
        return _harvest(args)
    return _compare(args)


def _harvest(args: argparse.Namespace) -> int:
    from onlineeval.clickmodels import fit
    from onlineeval.clickmodels.harvest import harvest_position_bias

    logs = load(args)
    out = harvest_position_bias(logs, query=args.query, max_rank=args.max_rank,
                                n_boot=args.n_boot, seed=args.seed,
                                confidence=args.confidence)
    if not args.no_pbm:
        pbm = fit(logs, "pbm", prior=args.prior, max_rank=args.max_rank,
                  max_iter=args.max_iter, query=args.query).position_bias
        out = out.merge(pbm[["rank", "relative"]].rename(columns={"relative": "pbm"}),
                        on="rank", how="left")
    emit(out, args.format)
    return 0


def _fit(args: argparse.Namespace) -> int:
    from onlineeval.atomic import Output, fill
    from onlineeval.clickmodels import MODELS, fit

    model = MODELS.canonical(args.model)
    with Output(inputs=mapping_inputs(args)) as out:
        # planned before the fit, so a bad output path is refused before any work
        target = out.file(args.output) if args.output else None
        logs = load(args)
        fitted = fit(logs, model, prior=args.prior, max_rank=args.max_rank,
                     max_iter=args.max_iter, query=args.query)
        if target is not None:
            fill(target, fitted.to_json())
    s = fitted.summary().iloc[0]
    print(f"{model}: {s['pages']} pages in {s['patterns']} click patterns, {s['pairs']} "
          f"(query, doc) pairs; log-likelihood {s['log_likelihood']:.4f} "
          f"({s['log_likelihood_per_page']:.4f} per page); {s['iterations']} iteration(s), "
          f"{'converged' if s['converged'] else 'NOT converged (raise --max-iter)'}"
          + (f"; gamma {fitted.params.scalar['gamma']:.4f}" if "gamma" in fitted.params.scalar
             else ""), file=sys.stderr)
    if args.output:
        print(f"wrote {args.output}", file=sys.stderr)
    emit(fitted.position_bias, args.format)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from onlineeval.clickmodels import compare

    logs = load(args)
    result = compare(logs, args.models, test_share=args.test_share, by=args.split,
                     seed=args.seed, prior=args.prior, max_rank=args.max_rank,
                     max_iter=args.max_iter, query=args.query)
    t = result.table
    print(f"split by {args.split}, seed {args.seed}: {t['train_pages'].iloc[0]} training and "
          f"{t['test_pages'].iloc[0]} test pages", file=sys.stderr)
    emit(result.perplexity_by_rank if args.per_rank else t, args.format)
    return 0
