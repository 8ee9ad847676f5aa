"""The ``--format`` option of CLI commands: a DataFrame as a table, CSV or JSON on stdout.

The spelling of values is :mod:`onlineeval.formatting`'s, shared with the report. In a
table, the columns of a comparison's result that hold one value in every row (the interval's
level, the correction, the test, the unit) are said once below the table instead of in every
row; CSV and JSON carry every column in every row."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

import pandas as pd

from onlineeval.formatting import constant_columns, describe_constants, records, text_table
from onlineeval.stats.results import RESULT_COLUMNS

FORMATS = ("table", "csv", "json")

#: result columns (:data:`onlineeval.stats.results.RESULT_COLUMNS`) a table of results says
#: once when they are the same in every row
SAID_ONCE: tuple[str, ...] = ("ci_level", "correction", "family_size", "test", "unit")


def add_format_argument(parser: argparse.ArgumentParser, default: str = "table") -> None:
    parser.add_argument(
        "--format", choices=FORMATS, default=default,
        help=f"output format (default {default}); json is a list of records on stdout",
    )


def emit(df: pd.DataFrame, fmt: str, stream: TextIO | None = None,
         float_format: str = "{:.4f}") -> None:
    """Write ``df`` to ``stream`` (stdout) as an aligned table, CSV or JSON records."""
    out = stream or sys.stdout
    if fmt == "json":
        json.dump(records(df), out, indent=2)
        out.write("\n")
    elif fmt == "csv":
        df.to_csv(out, index=False)
    else:
        shown, once = df, {}
        if set(RESULT_COLUMNS) <= set(df.columns):
            shown, once = constant_columns(df, SAID_ONCE)
        if "correction" in once and once["correction"] is None and "p_adjusted" in shown \
                and shown["p_adjusted"].isna().all():
            # a design without a correction (interleaving, agreement): no column of nulls
            shown = shown.drop(columns="p_adjusted")
            once.pop("family_size", None)
            once["correction"] = "none applied (p_value is not adjusted)"
        out.write(text_table(shown, float_format))
        if once:
            out.write(describe_constants(once) + "\n")
