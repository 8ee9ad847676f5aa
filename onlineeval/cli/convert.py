"""``onlineeval convert --from FORMAT INPUT OUTDIR``: public click-log formats -> canonical Parquet."""

from __future__ import annotations

import argparse
import json
import sys

NAME = "convert"
HELP = ("convert a click log in a public format (aol, yandex-wscd) to canonical Parquet tables "
        "(searches, results, clicks) in OUTDIR")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from onlineeval.logs.convert import FORMATS

    choices = ", ".join(f"{name} ({FORMATS.get(name).description})" for name in FORMATS)
    parser.add_argument("--from", dest="format", required=True, metavar="FORMAT",
                        help=f"input format: {choices}")
    parser.add_argument("input", metavar="INPUT",
                        help="the log file (.gz allowed) or a directory of log files")
    parser.add_argument("outdir", metavar="OUTDIR", help="directory for the Parquet tables")
    parser.add_argument("--force", action="store_true",
                        help="replace tables already converted into OUTDIR")
    parser.add_argument("--format", dest="output_format", choices=("table", "json"),
                        default="table",
                        help="report as text (default) or as one JSON object on stdout")


def run(args: argparse.Namespace) -> int:
    from onlineeval.logs.convert import convert

    report = convert(args.input, args.outdir, args.format, overwrite=args.force)
    if args.output_format == "json":
        json.dump({
            "format": report.format, "inputs": report.inputs, "outdir": report.outdir,
            "rows": report.rows, "counts": report.counts, "files": report.files,
            "notes": report.notes,
        }, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(report.summary())
    return 0
