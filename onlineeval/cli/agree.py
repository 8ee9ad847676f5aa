"""``onlineeval agree``: offline–online agreement across experiments from your own table."""

from __future__ import annotations

import argparse
import json
import sys

import pandas as pd

from onlineeval.cli._output import emit

NAME = "agree"
HELP = ("offline-online agreement across experiments: sign agreement (Wilson CI), Kendall "
        "tau-b, Spearman rho and the decision table, from a CSV with columns experiment, "
        "offline_delta, online_delta[, offline_p, online_p]")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", metavar="EXPERIMENTS.csv",
                        help="CSV, one row per experiment: experiment, offline_delta, "
                             "online_delta and optionally offline_p, online_p")
    parser.add_argument("--offline", default="offline_delta", help="offline delta column")
    parser.add_argument("--online", default="online_delta", help="online delta column")
    parser.add_argument("--offline-p", default=None, metavar="COLUMN",
                        help="offline p-value column (default offline_p when present)")
    parser.add_argument("--online-p", default=None, metavar="COLUMN",
                        help="online p-value column (default online_p when present)")
    parser.add_argument("--experiment", default="experiment", metavar="COLUMN",
                        help="column naming the experiment (default experiment)")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="significance level of the decision table")
    parser.add_argument("--confidence", type=float, default=0.95,
                        help="confidence level of the Wilson interval")
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="table (default) or json: one object with summary, decisions, "
                             "experiments")


def run(args: argparse.Namespace) -> int:
    from onlineeval.agreement import agreement

    result = agreement(args.table, offline=args.offline, online=args.online,
                       offline_p=args.offline_p, online_p=args.online_p,
                       experiment=args.experiment, alpha=args.alpha,
                       confidence=args.confidence)
    if args.format == "json":
        json.dump(result.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    s = result.stats
    out = sys.stdout
    pct = f"{s['confidence']:.0%}"
    out.write(f"experiments: {s['n']}")
    if s["n_excluded"]:
        out.write(f" ({s['n_excluded']} excluded for a missing delta: "
                  f"{', '.join(result.excluded)})")
    out.write("\n")
    rate = "null" if pd.isna(s["sign_agreement"]) else f"{s['sign_agreement']:.3f}"
    out.write(f"sign agreement: {s['n_agree']}/{s['n_agree'] + s['n_disagree']} = {rate} "
              f"(Wilson {pct} CI {_f(s['sign_ci_low'])} – {_f(s['sign_ci_high'])}); "
              f"{s['n_zero']} with a zero delta left out\n")
    out.write(f"Kendall tau-b: {_f(s['kendall_tau'])} (p = {_f(s['kendall_p'])})\n")
    out.write(f"Spearman rho:  {_f(s['spearman_rho'])} (p = {_f(s['spearman_p'])})\n")
    if result.decisions is not None:
        out.write(f"\ndecision table (alpha = {s['alpha']}):\n")
        emit(result.decisions, "table")
    out.write("\n")
    shown = result.experiments.copy()
    # a pair with a zero delta has no direction: say null, as the float columns do
    shown["sign_agrees"] = [("null" if pd.isna(v) else str(bool(v)))
                            for v in shown["sign_agrees"]]
    emit(shown, "table")
    return 0


def _f(value: float) -> str:
    return "null" if pd.isna(value) else f"{value:.4f}"
