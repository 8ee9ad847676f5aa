"""``onlineeval validate LOGS``: load a log with every check and say what was found.

Exit status 0 when the log loads (with ``--strict``: and no row is excluded), 1 when
``--strict`` is given and rows are excluded, 2 when the log cannot be loaded at all.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import TYPE_CHECKING

from onlineeval.cli._logs import add_logs_arguments
from onlineeval.cli._output import emit

if TYPE_CHECKING:
    from onlineeval.logs.describe import LogDescription

NAME = "validate"
HELP = ("load a log with every check and print the schema found (provided / derived / absent "
        "columns per table), the time range, the experiments and variants with their units, "
        "and the rows excluded; exit 0 clean, 1 rows excluded under --strict, 2 unusable")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_logs_arguments(parser, strict=False)
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when any row would be excluded (the report "
                        "is printed either way)")
    parser.add_argument("--unit", default="user_id",
                        help="searches column counted as the units of each variant (default "
                        "user_id)")
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="table (default) or json: one object with tables, time_range, "
                        "variants, exclusions")


def run(args: argparse.Namespace) -> int:
    from onlineeval.cli._logs import columns
    from onlineeval.errors import ExcludedRowsWarning
    from onlineeval.logs import load_logs
    from onlineeval.logs.describe import describe

    with warnings.catch_warnings():
        # every excluded row is listed below; --strict decides the exit status, so the log
        # is loaded without strict mode to show everything there is
        warnings.simplefilter("ignore", ExcludedRowsWarning)
        logs = load_logs(args.logs, columns=columns(args))
    found = describe(logs, unit=args.unit)
    failed = bool(args.strict and found.excluded_total)
    if args.format == "json":
        out = found.to_dict()
        out["strict"] = bool(args.strict)
        out["status"] = 1 if failed else 0
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print(found)
        if failed:
            print(f"--strict: {found.excluded_total:,} row"
                  f"{'' if found.excluded_total == 1 else 's'} would be excluded (exit status 1)")
    return 1 if failed else 0


def _print(found: LogDescription) -> None:
    out = sys.stdout
    out.write(f"log: {found.source}\n\nschema (canonical column <- the log's column):\n")
    for table, t in found.tables.items():
        if not t["given"]:
            out.write(f"  {table}: not given\n")
            continue
        out.write(f"  {table}: {t['rows_read']:,} rows read, {t['rows_kept']:,} kept\n")
        provided = [c if src == c else f"{c} <- {src}" for c, src in t["provided"].items()]
        out.write(f"    provided: {', '.join(provided) or '(none)'}\n")
        for c, how in t["derived"].items():
            out.write(f"    derived:  {c}: {how}\n")
        absent = list(t["absent"])
        empty = [f"{c} (present, but holds no value)" for c in t["empty"]]
        out.write(f"    absent:   {', '.join(absent + empty) or '(none)'}\n")
        if t["extra"]:
            out.write(f"    extra:    {', '.join(t['extra'])} (kept for --by)\n")
    tr = found.time_range
    if tr["first_ts"] is None:
        out.write("\ntime range: none (no search has a ts)\n")
    else:
        out.write(f"\ntime range: {tr['first_ts']} to {tr['last_ts']} ({tr['searches_with_ts']:,}"
                  f" of {tr['searches']:,} kept searches with a ts)\n")
    out.write(f"\nexperiments and variants (units: distinct {found.unit}):\n")
    if len(found.variants):
        emit(found.variants, "table", stream=out)
        if found.variants["units_elsewhere"].any():
            out.write("  units_elsewhere: units also seen in another variant of the same "
                      "experiment (the A/B readout leaves them out)\n")
    else:
        out.write("  (no searches)\n")
    if not found.exclusions:
        out.write("\nexcluded rows: none\n")
        return
    out.write(f"\nexcluded rows: {found.excluded_total:,}\n")
    for e in found.exclusions:
        out.write(f"  {e['table']}: {e['rows']:,} ({e['reason']}): {e['meaning']}\n")
