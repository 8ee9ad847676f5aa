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


#: significant digits of an estimate (a value, a difference, a lift in %) wherever shown
SIGNIFICANT = 4
#: p-values below this are written in scientific notation
P_SCIENTIFIC_BELOW = 1e-4


def format_number(value: Any, kind: str = "estimate") -> str:
    """The one spelling of a number in every human-readable output (terminal, HTML).

    ``kind`` says what the number is:

    - ``"estimate"`` — :data:`SIGNIFICANT` significant digits (``0.01235``, ``12.35``);
      magnitudes of ``10**SIGNIFICANT`` and more are rounded to whole numbers with thousands
      separators (``123,457``), non-zero magnitudes below 1e-4 are scientific (``1.235e-05``);
    - ``"delta"`` — as an estimate, with an explicit sign (``+0.01235``, ``-0.002``);
    - ``"percent"`` — a relative change given as a fraction, shown in percent with a sign
      (``0.0231`` → ``+2.31%``), :data:`SIGNIFICANT` − 1 significant digits;
    - ``"p"`` — a p-value: two significant digits (``0.012``, ``0.34``), scientific below
      :data:`P_SCIENTIFIC_BELOW` (``3.2e-07``), so a tiny p-value is never printed as 0;
    - ``"count"`` — a whole number with thousands separators (``12,345``);
    - ``"level"`` — a confidence level in percent (``0.95`` → ``95%``);
    - ``"date"`` — a timestamp as its ISO date (``2026-11-27``).

    A missing or undefined value (None, NaN, NA, NaT, ±inf) is ``null``, as in the JSON
    records and the text tables.
    """
    if kind == "date":
        if value is None or value is pd.NaT or (not isinstance(value, str) and pd.isna(value)):
            return "null"
        return pd.Timestamp(value).date().isoformat()
    v = plain(value)
    if v is None or isinstance(v, str | bool):
        return "null" if v is None else str(v)
    v = float(v)
    if kind == "count":
        return f"{round(v):,}"
    if kind == "level":
        return f"{v * 100:.{SIGNIFICANT}g}%"
    if kind == "p":
        if v != 0 and abs(v) < P_SCIENTIFIC_BELOW:
            return f"{v:.1e}"
        return _significant(v, 2)
    if kind == "percent":
        return _signed(_significant(v * 100, SIGNIFICANT - 1)) + "%"
    if kind == "delta":
        return _signed(_significant(v, SIGNIFICANT))
    if kind == "estimate":
        return _significant(v, SIGNIFICANT)
    raise ValueError(f"format_number: unknown kind {kind!r}")


def _signed(text: str) -> str:
    return text if text.startswith("-") or text in {"0", "null"} else "+" + text


def _significant(v: float, digits: int) -> str:
    """``v`` to ``digits`` significant digits in fixed notation (no exponent between 1e-4
    and 10**digits; whole numbers with separators above, scientific below)."""
    if v == 0:
        return "0"
    magnitude = abs(v)
    if magnitude >= 10 ** digits:
        return f"{v:,.0f}"
    if magnitude < P_SCIENTIFIC_BELOW:
        return f"{v:.{digits - 1}e}"
    rounded = float(f"{v:.{digits}g}")
    # decimals so that exactly `digits` significant digits show (trailing zeros kept)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:.{decimals}f}"
