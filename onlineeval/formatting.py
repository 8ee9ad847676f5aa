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

import math
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
    if isinstance(value, pd.Timestamp):
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
