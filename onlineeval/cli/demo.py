"""``onlineeval demo``: the report of the bundled sample study, in one command."""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

from onlineeval.errors import InputError

NAME = "demo"
HELP = ("run the report on the bundled sample study (sample_logs/study.toml): writes "
        "report.html and report.json, prints a short summary and the report's path")

DEFAULT_OUTPUT = "onlineeval-demo"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "-o", default=DEFAULT_OUTPUT, metavar="DIR",
                        help=f"directory for report.html and report.json (default "
                             f"./{DEFAULT_OUTPUT}, created if needed)")
    parser.add_argument("--study", default=None, metavar="STUDY.toml",
                        help="use this study file instead of the bundled sample study")


def find_sample_study() -> Path:
    """The sample study: ./sample_logs/study.toml, else the one shipped with the package,
    else the source checkout's."""
    candidates = [Path.cwd() / "sample_logs" / "study.toml"]
    packaged = resources.files("onlineeval") / "sample_logs" / "study.toml"
    candidates.append(Path(str(packaged)))
    candidates.append(Path(__file__).resolve().parents[2] / "sample_logs" / "study.toml")
    for c in candidates:
        if c.is_file():
            return c
    raise InputError(
        "cannot find the sample study (looked for "
        + ", ".join(str(c) for c in candidates)
        + "); run the demo from a clone of the repository, or pass --study STUDY.toml"
    )


def run(args: argparse.Namespace) -> int:
    from onlineeval.cli.report import summary_text
    from onlineeval.report import write_report

    study = Path(args.study) if args.study else find_sample_study()
    out = Path(args.output)
    html_path, json_path = out / "report.html", out / "report.json"
    report = write_report(study, html_path, json_path)
    print(summary_text(report))
    print(f"report: {html_path.resolve()}")
    print(f"numbers: {json_path.resolve()}")
    return 0
