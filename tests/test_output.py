"""CLI output rendering: tables, CSV and JSON spell missing values one way."""

import io
import json

import numpy as np
import pandas as pd

from onlineeval.cli._output import emit, records


def frame():
    return pd.DataFrame({
        "variant": ["a", None],
        "sessions": pd.array([3, None], dtype="Int64"),
        "flag": pd.array([True, None], dtype="boolean"),
        "ctr": [0.123456, np.nan],
    })


def test_table_spells_missing_as_null_in_every_column():
    out = io.StringIO()
    emit(frame(), "table", out)
    lines = out.getvalue().splitlines()
    assert lines[1].split() == ["a", "3", "True", "0.1235"]
    assert lines[2].split() == ["null", "null", "null", "null"]
    assert "<NA>" not in out.getvalue() and "NaN" not in out.getvalue()


def test_json_records_are_plain_values_with_null():
    out = io.StringIO()
    emit(frame(), "json", out)
    got = json.loads(out.getvalue())
    assert got == [
        {"variant": "a", "sessions": 3, "flag": True, "ctr": 0.123456},
        {"variant": None, "sessions": None, "flag": None, "ctr": None},
    ]
    assert records(frame()) == got


def test_csv_round_trips():
    out = io.StringIO()
    emit(frame(), "csv", out)
    back = pd.read_csv(io.StringIO(out.getvalue()))
    assert back["sessions"].tolist()[0] == 3 and pd.isna(back["ctr"][1])


def test_tiny_values_such_as_p_values_are_not_printed_as_zero():
    out = io.StringIO()
    emit(pd.DataFrame({"p_value": [1.347e-33, 0.0, 0.04123, -2e-4]}), "table", out)
    assert out.getvalue().split()[1:] == ["1.35e-33", "0.0000", "0.0412", "-0.0002"]
