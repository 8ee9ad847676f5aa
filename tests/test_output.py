"""CLI output rendering: tables, CSV and JSON spell missing values one way."""

import io
import json

import numpy as np
import pandas as pd

from onlineeval.cli._output import emit
from onlineeval.formatting import records


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


def test_table_escapes_control_characters_in_values_and_names_but_csv_json_do_not():
    evil = pd.DataFrame({"q\x1b[1m": ["a\x1b[2Jb", "c\rd\ne", "rtl\u202eevil", "tab\there"],
                         "n": [1, 2, 3, 4]})
    out = io.StringIO()
    emit(evil, "table", out)
    text = out.getvalue()
    assert not any(ch in text for ch in "\x1b\r\t\u202e")
    assert text.count("\n") == 5  # header and four rows: no value breaks a row
    for shown in ("q\\x1b[1m", "a\\x1b[2Jb", "c\\rd\\ne", "rtl\\u202eevil", "tab\\there"):
        assert shown in text
    out = io.StringIO()
    emit(evil, "json", out)
    assert [r["q\x1b[1m"] for r in json.loads(out.getvalue())] == list(evil["q\x1b[1m"])


def test_escape_leaves_ordinary_text_alone():
    from onlineeval.terminal import escape, one_line

    text = "Zürich – naïve café 東京 emoji 👩‍💻 nbsp\u00a0end"  # ZWJ in the emoji stays
    assert escape(text) == text
    assert escape("a\x00b\x7fc\x9bd") == "a\\x00b\\x7fc\\x9bd"
    assert escape("one\ntwo\x1b", keep="\n") == "one\ntwo\\x1b"
    assert one_line("  first\x1b line\nsecond\n") == "first\\x1b line"


def _results_frame():
    from onlineeval.stats.results import ComparisonResult, comparison_frame

    def result(est, p, correction):
        return ComparisonResult(estimate=est, ci_low=est - 0.1, ci_high=est + 0.1,
                                ci_level=0.9, p_value=p,
                                p_adjusted=p * 2 if correction else float("nan"),
                                correction=correction, family_size=2 if correction else None,
                                test="t", n=8, units_control=8, units_treatment=8,
                                unit="query")

    return lambda correction: comparison_frame(
        [{"measure": "map"}, {"measure": "P_10"}],
        [result(0.2, 0.01, correction), result(-0.1, 0.3, correction)])


def test_a_table_of_results_says_the_columns_equal_in_every_row_once():
    make = _results_frame()
    out = io.StringIO()
    emit(make("holm"), "table", out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["measure", "estimate", "ci_low", "ci_high", "p_value",
                                "p_adjusted", "n", "units_control", "units_treatment"]
    assert lines[-1] == "ci_level = 0.9; correction = holm; family_size = 2; test = t; " \
                        "unit = query"
    # no correction: no column of nulls, and the footer says the p-values are not adjusted
    out = io.StringIO()
    emit(make(None), "table", out)
    lines = out.getvalue().splitlines()
    assert "p_adjusted" not in lines[0] and "null" not in out.getvalue()
    assert lines[-1] == ("ci_level = 0.9; correction = none applied (p_value is not "
                         "adjusted); test = t; unit = query")
    # CSV and JSON keep every column in every row
    got = json.loads(_json(make("holm")))
    assert [r["correction"] for r in got] == ["holm", "holm"] and got[0]["ci_level"] == 0.9


def test_a_table_without_the_result_block_keeps_its_columns():
    # a column that happens to be called "test" or "unit" is data, not a result's
    df = pd.DataFrame({"unit": ["u1", "u1"], "test": ["a", "a"], "ctr": [0.5, 0.25]})
    out = io.StringIO()
    emit(df, "table", out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["unit", "test", "ctr"] and len(lines) == 3


def _json(df):
    out = io.StringIO()
    emit(df, "json", out)
    return out.getvalue()
