"""``onlineeval report``: the self-contained HTML readout of a study file."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the report pulls in matplotlib; import it only when a command runs
    from onlineeval.report.build import Report

NAME = "report"
HELP = ("write one self-contained HTML report for a study file (offline, A/B, interleaving "
        "per experiment; offline-online agreement across experiments)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study", metavar="STUDY.toml", help="study file (see onlineeval.study)")
    parser.add_argument("-o", "--output", required=True, metavar="REPORT.html",
                        help="where to write the HTML report")
    parser.add_argument("--json", metavar="OUT.json", default=None,
                        help="also write every number of the report as JSON")


def run(args: argparse.Namespace) -> int:
    from onlineeval.report import write_report

    report = write_report(args.study, args.output, args.json)
    print(summary_text(report), file=sys.stderr)
    print(args.output)
    return 0


def summary_text(report: Report) -> str:
    """A few lines for the terminal: agreement per online outcome and the large-margin check."""
    lines = [f"{report.study.title}: {len(report.experiments)} experiments"]
    labels = dict(report.outcomes)
    def line(prediction: str, outcome: str, s: dict) -> str:
        tau = "null" if s["kendall_tau"] != s["kendall_tau"] else f"{s['kendall_tau']:+.2f}"
        return (f"  {prediction} vs {outcome}: sign agreement "
                f"{s['n_agree']}/{s['n_agree'] + s['n_disagree']}, Kendall tau-b {tau}")

    cf = f"counterfactual Δ {report.counterfactual_metric}"
    for col, res in report.agreements.items():
        lines.append(line(report.measures[0], labels[col], res.stats))
        if "counterfactual vs online" in res.pairs:
            lines.append(line(cf, labels[col], res.pairs["counterfactual vs online"]))
    between = next((res.pairs["offline vs counterfactual"] for res in report.agreements.values()
                    if "offline vs counterfactual" in res.pairs), None)
    if between is not None:
        lines.append(line(report.measures[0], cf, between))
    lm = report.large_margin
    if lm.get("all_agree") is not None:
        verdict = "agree in sign" if lm["all_agree"] else "do NOT all agree in sign"
        lines.append(f"  large offline margins ({lm['rule']}): offline and interleaving "
                     f"{verdict} on {lm['n_agree']} of {lm['n_with_interleaving']} pairs")
    verdicts: dict[str, list[str]] = {}
    for r in report.experiments:
        for d in (r.readout.decisions if r.readout is not None else ()):
            who = r.experiment.name if len(r.readout.decisions) == 1 else \
                f"{r.experiment.name} ({d.treatment})"
            verdicts.setdefault(d.verdict, []).append(who)
    for verdict, names in verdicts.items():
        lines.append(f"  readout verdict {verdict} ({len(names)}): {', '.join(names)}")
    srm = [r.experiment.name for r in report.experiments if r.srm and r.srm.get("mismatch")]
    if srm:
        lines.append(f"  SAMPLE RATIO MISMATCH in: {', '.join(srm)}")
    return "\n".join(lines)
