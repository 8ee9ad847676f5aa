"""``onlineeval simulate-interleaving STUDY OUTDIR``: team-draft interleaving logs for the
ranker pairs of a simulated A/B study (:func:`onlineeval.simulate.interleaving.
simulate_interleaving_study`)."""

from __future__ import annotations

import argparse

NAME = "simulate-interleaving"
HELP = "simulate team-draft interleaving logs for the ranker pairs of a simulated A/B study"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study", help="study directory holding manifest.json (e.g. sample_logs)")
    parser.add_argument("outdir", help="directory for the interleaving logs")
    parser.add_argument("--users", type=int, default=None,
                        help="users per experiment (default: the study's)")
    parser.add_argument("--events", action=argparse.BooleanOptionalAction, default=None,
                        help="write events.parquet (purchases, add-to-carts after clicks); "
                        "default: as the study, i.e. when its manifest.json has an event model")


def run(args: argparse.Namespace) -> int:
    from onlineeval.simulate.interleaving import simulate_interleaving_study

    out = simulate_interleaving_study(args.study, args.outdir, users_per_experiment=args.users,
                                      events=args.events)
    logs = out["logs"]
    events = f", {sum(logs['events'].values())} events" if "events" in logs else ""
    print(f"wrote {args.outdir}: {logs['searches']} searches, {logs['clicks']} clicks"
          f"{events}, {len(out['experiments'])} experiments")
    return 0
