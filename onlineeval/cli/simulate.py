"""``onlineeval simulate OUTDIR --seed N``: generate a simulated study (qrels, runs, A/B logs)."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from onlineeval.cli._output import add_format_argument, emit

NAME = "simulate"
HELP = ("generate a simulated study deterministically from a seed: judged collection (TREC "
        "qrels), rankers of known quality (TREC runs), A/B click logs (Parquet), manifest.json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("outdir", metavar="OUTDIR", help="directory to write the study into")
    parser.add_argument("--seed", type=int, required=True, help="random seed (>= 0)")
    parser.add_argument("--users", type=int, default=3000,
                        help="users per experiment (default 3000)")
    parser.add_argument("--queries", type=int, default=100, help="topics (default 100)")
    parser.add_argument("--docs-per-query", type=int, default=30,
                        help="judged documents per topic (default 30)")
    parser.add_argument("--days", type=float, default=14.0,
                        help="days over which sessions are planned (default 14); a session "
                        "running past the end is kept whole")
    parser.add_argument("--pre-days", type=float, default=0.0,
                        help="days of pre-period traffic before the experiment, served as "
                        "control to every user (for CUPED; default 0)")
    parser.add_argument("--rankers", default=None, metavar="NAME=SD,...",
                        help="rankers as name=noise_sd pairs (default: s040..s260, see README)")
    parser.add_argument("--pairs", default=None, metavar="CTRL:TREAT,...",
                        help="experiments as control:treatment ranker pairs (default: 10 pairs)")
    parser.add_argument("--events", action=argparse.BooleanOptionalAction, default=True,
                        help="also write ab/events.parquet: purchases and add-to-carts after "
                        "clicks, likelier on better results (default: on; see "
                        "onlineeval.simulate.EventModel)")
    parser.add_argument("--force", action="store_true",
                        help="replace a study already in OUTDIR")
    add_format_argument(parser)


def run(args: argparse.Namespace) -> int:
    from onlineeval.simulate import TrafficConfig, simulate
    from onlineeval.simulate.study import parse_pairs, parse_rankers

    manifest = simulate(
        args.outdir, args.seed, users_per_experiment=args.users,
        rankers=parse_rankers(args.rankers) if args.rankers else None,
        pairs=parse_pairs(args.pairs) if args.pairs else None,
        n_queries=args.queries, docs_per_query=args.docs_per_query,
        traffic=TrafficConfig(days=args.days, pre_days=args.pre_days), overwrite=args.force,
        events=args.events,
    )
    table = pd.DataFrame([
        {"experiment": e["name"], "control": e["control"], "treatment": e["treatment"],
         "ndcg10_control": e["ndcg10_control"], "ndcg10_treatment": e["ndcg10_treatment"],
         "ndcg10_delta": e["ndcg10_delta"], "users_control": e["users"].get("control", 0),
         "users_treatment": e["users"].get("treatment", 0), "searches": e["searches"],
         "clicks": e["clicks"]}
        for e in manifest["experiments"]
    ])
    emit(table, args.format)
    if args.format == "table":
        logs = manifest["logs"]
        events = f", {sum(logs['events'].values())} events" if "events" in logs else ""
        print(f"wrote {args.outdir}: qrels.txt, runs/ ({len(manifest['rankers'])} rankers), "
              f"ab/ ({logs['searches']} searches, {logs['clicks']} clicks{events}), "
              "manifest.json", file=sys.stderr)
    return 0
