"""The one number format of the human-readable outputs (issue 14 §1): significant digits
for estimates, p-values in scientific notation below 1e-4, dates as dates. Expected strings
written by hand from the rule."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from onlineeval.formatting import format_number


@pytest.mark.parametrize(("value", "kind", "shown"), [
    (0.0123449, "estimate", "0.01234"),
    (12.3456, "estimate", "12.35"),
    (0.41, "estimate", "0.4100"),          # four significant digits, trailing zeros kept
    (0.99996, "estimate", "1.000"),        # rounding up adds a digit before the point
    (1234.5, "estimate", "1234"),          # round half to even of the binary value
    (123456.7, "estimate", "123,457"),     # whole numbers from 10**4 on
    (3.2e-05, "estimate", "3.200e-05"),
    (0.0, "estimate", "0"),
    (-0.002, "delta", "-0.002000"),
    (0.0131, "delta", "+0.01310"),
    (0.0, "delta", "0"),
    (0.0231, "percent", "+2.31%"),
    (-0.5, "percent", "-50.0%"),
    (0.000123, "percent", "+0.0123%"),
    (0.012, "p", "0.012"),
    (0.3449, "p", "0.34"),
    (0.00012, "p", "0.00012"),
    (9.99e-05, "p", "1.0e-04"),            # below 1e-4: scientific
    (3.2e-07, "p", "3.2e-07"),
    (1.0, "p", "1.0"),
    (0.0, "p", "0"),
    (12345, "count", "12,345"),
    (np.int64(7), "count", "7"),
    (0.95, "level", "95%"),
    (0.975, "level", "97.5%"),
    ("2026-10-01 23:59:59", "date", "2026-10-01"),
    (pd.Timestamp("2026-10-01 00:00:01", tz="UTC"), "date", "2026-10-01"),
])
def test_format_number(value, kind, shown) -> None:
    assert format_number(value, kind) == shown


@pytest.mark.parametrize("missing", [None, math.nan, np.nan, pd.NA, pd.NaT, math.inf])
@pytest.mark.parametrize("kind", ["estimate", "delta", "percent", "p", "count", "level",
                                  "date"])
def test_missing_is_null(missing, kind) -> None:
    if kind == "date" and missing is math.inf:
        return
    assert format_number(missing, kind) == "null"


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown kind 'money'"):
        format_number(1.0, "money")
