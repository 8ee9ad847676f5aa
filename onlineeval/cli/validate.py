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

from onlineeval.cli._logs import add_event_arguments, add_logs_arguments
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
    add_event_arguments(parser)
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
    logs = logs.with_events(args.attribution_window, args.event_type)
    found = describe(logs, unit=args.unit)
    events = _events(logs)
    failed = bool(args.strict and found.excluded_total)
    if args.format == "json":
        out = found.to_dict()
        if events is not None:
            out["events"] = events
        out["strict"] = bool(args.strict)
        out["status"] = 1 if failed else 0
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print(found)
        if events is not None:
            _print_events(events)
        if failed:
            print(f"--strict: {found.excluded_total:,} row"
                  f"{'' if found.excluded_total == 1 else 's'} would be excluded (exit status 1)")
    return 1 if failed else 0


def _events(logs: object) -> dict[str, object] | None:
    """The events' types and how they are attributed (None without an events table)."""
    from onlineeval.online.attribution import attribution_counts, check_event_type, event_types

    if not getattr(logs, "has_events", False):
        return None
    check_event_type(logs)
    return {"types": event_types(logs), "event_type": logs.events.event_type,
            "attribution_window": logs.events.window_text,
            "attribution": attribution_counts(logs)}


def _print_events(events: dict) -> None:
    from onlineeval.online.attribution import REASONS, RULES

    out = sys.stdout
    types = ", ".join(f"{t} {n:,}" for t, n in events["types"].items())
    which = events["event_type"] or "every type"
    counts = events["attribution"]
    done = sum(counts[r] for r in RULES)
    lost = sum(counts[r] for r in REASONS)
    rules = ", ".join(f"{counts[r]:,} {r}" for r in RULES)
    reasons = ", ".join(f"{counts[r]:,} {r}" for r in REASONS if counts[r])
    out.write(f"\nevents: {types}\n")
    out.write(f"  attributed to searches ({which}, window {events['attribution_window']}): "
              f"{done:,} ({rules})\n")
    out.write(f"  unattributable: {lost:,}" + (f" ({reasons})" if lost else "") + "\n")


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
