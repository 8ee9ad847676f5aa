"""DataFrames as text and as JSON-ready records: the formatting every output shares.

The CLI (:mod:`onlineeval.cli`), the HTML/JSON report and the agreement readout's
``to_dict`` all go through here, so a value is spelled one way wherever it is shown: a
missing or undefined number is ``null`` (never ``NaN`` or ``<NA>``), a timestamp is ISO text,
and a tiny non-zero number (a p-value) is never printed as 0.

The text table is for a terminal: text values and column names have their control characters
escaped (:func:`onlineeval.terminal.escape`), so a value from a log cannot move the cursor,
clear the screen or break a row. Records are data and carry values unchanged.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from onlineeval.terminal import escape


def plain(value: Any) -> Any:
    """A numpy/pandas scalar as a JSON-ready Python value; NaN, NA and infinities are None."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, pd.Timestamp | datetime.date):
        return value.isoformat()
    return value


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The DataFrame as a list of dicts with plain Python values (None for missing)."""
    return [
        {str(k): plain(v) for k, v in row.items()}
        for row in df.to_dict(orient="records")
    ]


def format_float(value: float, float_format: str = "{:.4f}") -> str:
    """Fixed decimals, except tiny non-zero values (p-values) in scientific notation."""
    if pd.isna(value):
        return "null"
    if value != 0 and abs(value) < 1e-3:
        return f"{value:.3g}"
    return float_format.format(value)


def text_table(df: pd.DataFrame, float_format: str = "{:.4f}") -> str:
    """``df`` as an aligned text table without index, ``null`` for every missing value."""
    shown = df.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            shown[col] = shown[col].map(lambda v: format_float(v, float_format))
        elif shown[col].isna().any():
            # one spelling of "missing" in every column, as in the JSON records
            shown[col] = shown[col].astype(object).where(shown[col].notna(), "null")
        if not pd.api.types.is_numeric_dtype(shown[col]):
            shown[col] = shown[col].astype(object).map(
                lambda v: escape(v) if isinstance(v, str) else v)
    shown.columns = [escape(str(c)) for c in shown.columns]
    return shown.to_string(index=False) + "\n"


def constant_columns(df: pd.DataFrame, candidates: Sequence[str],
                     ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``df`` without those of ``candidates`` that hold one value in every row, and those
    values (plain): a table can then say them once instead of repeating them per row."""
    if not len(df):
        return df, {}
    same: dict[str, Any] = {}
    for col in candidates:
        if col in df.columns:
            values = {plain(v) for v in df[col]}
            if len(values) == 1:
                same[col] = values.pop()
    return df.drop(columns=list(same)), same


def describe_constants(values: dict[str, Any], float_format: str = "{:.4g}") -> str:
    """``name = value`` pairs on one line (``null`` for a missing value), escaped for a
    terminal."""
    def shown(v: Any) -> str:
        if v is None:
            return "null"
        if isinstance(v, float):
            return format_float(v, float_format)
        return escape(str(v))

    return "; ".join(f"{name} = {shown(v)}" for name, v in values.items())


# The one number format of the readout's outputs (terminal, HTML): estimates to DIGITS
# significant digits, p-values in scientific notation below P_SCIENTIFIC, counts with
# thousands separators, timestamps as dates (with the time of day when it is not midnight).
DIGITS = 4
P_SCIENTIFIC = 1e-4


def number(value: Any, digits: int = DIGITS, signed: bool = False) -> str:
    """An estimate to ``digits`` significant digits (``null`` when undefined); large values
    are written out in full with separators, never in exponent form."""
    value = plain(value)
    if value is None:
        return "null"
    value = float(value)
    sign = "+" if signed else ""
    if value != 0 and abs(value) >= 10 ** digits:
        return f"{value:{sign},.0f}"
    return f"{value:{sign}.{digits}g}"


def pvalue(value: Any) -> str:
    """A p-value: 3 significant digits, scientific notation below :data:`P_SCIENTIFIC`."""
    value = plain(value)
    if value is None:
        return "null"
    if value != 0 and value < P_SCIENTIFIC:
        return f"{value:.1e}"
    return f"{value:.3g}"


def percent(fraction: Any, digits: int = 3, signed: bool = True) -> str:
    """A fraction as a percentage to ``digits`` significant digits (``+1.23%``)."""
    value = plain(fraction)
    if value is None:
        return "null"
    return f"{number(100.0 * value, digits, signed)}%"


def count(value: Any) -> str:
    """A count with thousands separators (``null`` when undefined)."""
    value = plain(value)
    if value is None:
        return "null"
    return f"{round(float(value)):,}"


def when(value: Any) -> str:
    """A timestamp as a date, with hours and minutes unless it is midnight."""
    if value is None or value is pd.NaT:
        return "null"
    ts = pd.Timestamp(value)
    return ts.strftime("%Y-%m-%d") if ts == ts.normalize() else ts.strftime("%Y-%m-%d %H:%M")


#: the widest a terminal table may be (the readout fits this; wider cells wrap)
WIDTH = 100


def fitted_table(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int = WIDTH,
                 wrap: Sequence[int] = ()) -> str:
    """An aligned text table no wider than ``width``: while it is too wide, the widest of
    the ``wrap`` columns (indices) is narrowed and its cells wrap onto continuation lines
    (at ``_``, spaces and hyphens where possible). Cells are escaped for a terminal."""
    cells = [[escape(str(c)) for c in headers]] + [[escape(str(c)) for c in r] for r in rows]
    ncol = len(headers)
    widths = [max(len(r[i]) for r in cells) for i in range(ncol)]
    floor = 8

    def total() -> int:
        return sum(widths) + 2 * (ncol - 1)

    while total() > width:
        wide = [i for i in wrap if widths[i] > floor]
        if not wide:
            break
        i = max(wide, key=lambda j: widths[j])
        widths[i] = max(floor, widths[i] - (total() - width))

    def pieces(text: str, w: int) -> list[str]:
        lines = [""]
        for token in re.split(r"(?<=[_ \-/])", text):
            while len(token) > w:  # a word longer than the column: cut it
                if lines[-1]:
                    lines.append("")
                lines[-1], token = token[:w], token[w:]
                lines.append("")
            if len(lines[-1]) + len(token.rstrip()) > w and lines[-1]:
                lines.append("")
            lines[-1] += token
        return [ln.rstrip() for ln in lines if ln.strip()] or [""]

    out = []
    for r in cells:
        parts = [pieces(c, widths[i]) for i, c in enumerate(r)]
        for k in range(max(len(p) for p in parts)):
            line = "  ".join(
                (p[k] if k < len(p) else "").ljust(widths[i]) if i < ncol - 1
                else (p[k] if k < len(p) else "")
                for i, p in enumerate(parts))
            out.append(line.rstrip())
    return "\n".join(out) + "\n"
