"""``onlineeval agree``: offline–online agreement across experiments from your own table."""

from __future__ import annotations

import argparse
import json
import sys

import pandas as pd

from onlineeval.cli._logs import load
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
    cf = parser.add_argument_group(
        "counterfactual delta (a third source beside offline and online)")
    cf.add_argument("--counterfactual", default=None, metavar="LOGS",
                    help="the logging ranker's log: estimate each experiment's "
                    "counterfactual delta (treatment - control clicks@K) of the runs named in "
                    "the table's --control-run and --treatment-run columns (paths relative "
                    "to the table) and compare it with the offline and online deltas")
    from onlineeval.cli._logs import add_mapping_arguments

    add_mapping_arguments(cf)  # the counterfactual log's own column names
    cf.add_argument("--counterfactual-column", default=None, metavar="COLUMN",
                    help="instead, a table column already holding the counterfactual delta")
    cf.add_argument("--control-run", default="control_run", metavar="COLUMN",
                    help="column naming each experiment's control run (default control_run)")
    cf.add_argument("--treatment-run", default="treatment_run", metavar="COLUMN",
                    help="column naming each experiment's treatment run (default "
                    "treatment_run)")
    from onlineeval.cli.counterfactual import add_estimate_arguments

    add_estimate_arguments(cf, estimator="snips")
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="table (default) or json: one object with summary, decisions, "
                             "experiments")


def run(args: argparse.Namespace) -> int:
    from onlineeval.agreement import agreement, with_counterfactual
    from onlineeval.errors import InvalidParameterError

    table, column = args.table, args.counterfactual_column
    if args.counterfactual is not None:
        if column is not None:
            raise InvalidParameterError("give --counterfactual LOGS or --counterfactual-column "
                                        "COLUMN, not both")
        logs = load(args, always_report=False, path=args.counterfactual)
        table = with_counterfactual(
            args.table, logs, control=args.control_run, treatment=args.treatment_run,
            experiment=args.experiment, estimator=args.estimator,
            propensities=args.propensities, metric=args.metric, model=args.model,
            clip=args.clip, query=args.query, unit=args.unit,
            max_rank=args.max_rank, confidence=args.confidence)
        column = "counterfactual_delta"
    result = agreement(table, offline=args.offline, online=args.online,
                       offline_p=args.offline_p, online_p=args.online_p,
                       experiment=args.experiment, alpha=args.alpha,
                       confidence=args.confidence, counterfactual=column)
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
    for name, p in result.pairs.items():
        missing = f"; {p['n_missing']} without both left out" if p["n_missing"] else ""
        out.write(f"{name}: sign agreement {p['n_agree']}/{p['n_agree'] + p['n_disagree']} "
                  f"(Wilson {pct} CI {_f(p['sign_ci_low'])} – {_f(p['sign_ci_high'])}), "
                  f"Kendall tau-b {_f(p['kendall_tau'])} ({pct} CI {_f(p['kendall_ci_low'])} "
                  f"– {_f(p['kendall_ci_high'])}; p = {_f(p['kendall_p'])}), Spearman rho "
                  f"{_f(p['spearman_rho'])} ({pct} CI {_f(p['spearman_ci_low'])} – "
                  f"{_f(p['spearman_ci_high'])}; p = {_f(p['spearman_p'])}) over {p['n']} "
                  f"experiments{missing}\n")
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
