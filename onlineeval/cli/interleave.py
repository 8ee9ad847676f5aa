"""``onlineeval interleave LOGS``: read out interleaving experiments from a click log."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from onlineeval.cli._experiment_args import add_window_arguments
from onlineeval.cli._logs import (
    add_event_arguments,
    add_logs_arguments,
    add_satisfaction_arguments,
    load,
)
from onlineeval.cli._options import add_renamed
from onlineeval.cli._output import add_format_argument, emit

NAME = "interleave"
HELP = ("read out team-draft interleaving (and multileaving) experiments from a click log whose "
        "results.team names the ranker of each result: wins, ties, delta_ab of team A (the "
        "treatment), per-user test, user-level bootstrap CI, winner")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_logs_arguments(parser, "log directory with searches.*, results.* (with team), "
                       "clicks.*", strict=False)
    parser.add_argument("--experiment", default=None, metavar="NAME",
                        help="only this experiment (default: every experiment with "
                             "interleaved pages, each on its own rows, never pooled)")
    add_window_arguments(parser, "pages")
    parser.add_argument("--credit", default="clicks", metavar="clicks|satisfied|EVENT_TYPE",
                        help="what a team is credited for: its clicked results (clicks, the "
                        "default), its results with a satisfied click (satisfied: dwell >= "
                        "--sat-dwell-s, or the last click of a session), or its results that "
                        "led to an event of this type in the log's events table, e.g. "
                        "purchase (docs/conversions.md); the click columns then count "
                        "satisfied clicks or events")
    add_event_arguments(parser, event_type=False)
    add_satisfaction_arguments(parser)
    parser.add_argument("--per-query", action="store_true",
                        help="per-query variant: outcomes averaged within each query first, "
                             "then across queries")
    parser.add_argument("--by", default="", metavar="variant,day",
                        help="also break down by variant and/or day")
    parser.add_argument("--treatment", "--team-a", dest="team_a", default=None,
                        metavar="TEAM",
                        help="report this team as A, the side whose Δ_AB is shown (default: "
                             "each pair's treatment where the names tell it — teams control/"
                             "treatment, or experiment C_vs_T with teams C and T — else the "
                             "alphabetically first team)")
    parser.add_argument("--control", default=None, metavar="TEAM",
                        help="report this team as B (its opponent is A)")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="significance level for the winner; CI coverage is 1-alpha "
                             "(default 0.05)")
    add_renamed(parser, "--n-resamples", type=int, default=1000,
                        help="bootstrap resamples of users for the CI (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--matrix", action="store_true",
                        help="print the pairwise preference matrix (delta_ab of row team over "
                             "column team) of each experiment instead of the records")
    add_format_argument(parser)


def run(args: argparse.Namespace) -> int:
    from onlineeval.interleaving import FIELDS, interleaving_readout, preference_matrix

    logs = load(args, always_report=False)
    by = [b.strip() for b in args.by.split(",") if b.strip()]
    out = interleaving_readout(
        logs, args.experiment, by=by, per_query=args.per_query, team_a=args.team_a,
        control=args.control, treatment_first=True,
        alpha=args.alpha, n_resamples=args.n_resamples, seed=args.seed, start=args.start,
        end=args.end, credit=args.credit, attribution_window=args.attribution_window,
        sat_dwell_s=args.sat_dwell_s, session_gap_min=args.session_gap_min,
    )
    _print_window(out.attrs["window"])
    if args.matrix:
        frames = []
        keys = ["experiment", *by]
        # one matrix per experiment and breakdown cell: a pair may appear once in a matrix
        for key, part in out.groupby(keys, dropna=False, sort=True):
            m = preference_matrix(part).reset_index()
            for i, (name, value) in enumerate(zip(keys, key, strict=True)):
                m.insert(i, name, value)
            frames.append(m)
        emit(pd.concat(frames, ignore_index=True), args.format)
        return 0
    cols = list(FIELDS)
    cols[1:1] = by
    emit(out[cols], args.format)
    return 0


def _print_window(window: dict) -> None:
    """The window line, with the pages left out, on stderr beside the load report (stdout
    keeps exactly the records)."""
    from onlineeval.window import describe

    left = [f"{window[k]:,} {label}" for k, label in (
        ("pages_before_window", "pages before --start"),
        ("pages_after_window", "pages at or after --end")) if window[k]]
    print(describe(window, "pages") + (f"; left out: {', '.join(left)}" if left else ""),
          file=sys.stderr)
