"""Shared output helpers for CLI commands: table, csv and json renderings of DataFrames.

The table is for a terminal: text values and column names have their control characters
escaped (:func:`onlineeval.terminal.escape`), so a value from a log cannot move the cursor,
clear the screen or break a row. CSV and JSON are data and carry values unchanged."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, TextIO

import numpy as np
import pandas as pd

from onlineeval.terminal import escape

FORMATS = ("table", "csv", "json")


def add_format_argument(parser: argparse.ArgumentParser, default: str = "table") -> None:
    parser.add_argument(
        "--format", choices=FORMATS, default=default,
        help=f"output format (default {default}); json is a list of records on stdout",
    )


def _plain(value: Any) -> Any:
    """Convert numpy/pandas scalars to JSON-ready Python values; NaN/NA become null."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return value


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The DataFrame as a list of dicts with plain Python values (null for missing)."""
    return [
        {str(k): _plain(v) for k, v in row.items()}
        for row in df.to_dict(orient="records")
    ]


def _fmt_float(value: float, float_format: str) -> str:
    """Fixed decimals, except tiny non-zero values (p-values) in scientific notation."""
    if pd.isna(value):
        return "null"
    if value != 0 and abs(value) < 1e-3:
        return f"{value:.3g}"
    return float_format.format(value)


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
        shown = df.copy()
        for col in shown.columns:
            if pd.api.types.is_float_dtype(shown[col]):
                shown[col] = shown[col].map(lambda v: _fmt_float(v, float_format))
            elif shown[col].isna().any():
                # one spelling of "missing" in every column, as in the JSON output
                shown[col] = shown[col].astype(object).where(shown[col].notna(), "null")
            if not pd.api.types.is_numeric_dtype(shown[col]):
                shown[col] = shown[col].astype(object).map(
                    lambda v: escape(v) if isinstance(v, str) else v)
        shown.columns = [escape(str(c)) for c in shown.columns]
        out.write(shown.to_string(index=False) + "\n")
