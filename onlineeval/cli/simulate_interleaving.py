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


def run(args: argparse.Namespace) -> int:
    from onlineeval.simulate.interleaving import simulate_interleaving_study

    out = simulate_interleaving_study(args.study, args.outdir, users_per_experiment=args.users)
    print(f"wrote {args.outdir}: {out['logs']['searches']} searches, "
          f"{out['logs']['clicks']} clicks, {len(out['experiments'])} experiments")
    return 0
