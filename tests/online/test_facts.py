"""The per-search facts view, row by row, on the hand-made log (events in conftest.py)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from onlineeval import queries
from onlineeval.online import facts as facts_module
from onlineeval.online import search_facts
from onlineeval.online.facts import FACT_COLUMNS
from onlineeval.queries import quote_ident

# search_id: (session_first, has_click, n_clicks, n_sat_clicks, rr, ttfc_s, reformulated,
#             session_has_click, session_success, session_abandoned, session_no)
EXPECTED = {
    "s1": (1, 1, 1, 0, 0.5, 10.0, 0, 1, 1, 0, 1),
    "s2": (0, 0, 0, 0, 0.0, None, 1, 0, 0, 0, 1),
    "s3": (0, 0, 0, 0, 0.0, None, 0, 0, 0, 0, 1),
    "s4": (0, 1, 1, 1, 1.0, 30.0, 0, 0, 0, 0, 1),
    "s5": (1, 1, 2, 1, 1.0, 10.0, 0, 1, 1, 0, 2),
    "s6": (1, 1, 1, 0, 1.0, 5.0, 0, 1, 0, 0, 1),
    "s7": (0, 1, 1, 0, 0.25, 7.0, 0, 0, 0, 0, 1),
    "s8": (1, 0, 0, 0, 0.0, None, 0, 0, 0, 1, 2),
    "s9": (0, 0, 0, 0, 0.0, None, 0, 0, 0, 0, 2),
    "s10": (1, 1, 1, 0, 0.5, None, 0, 1, 0, 0, 1),
}
NAMES = ("session_first", "has_click", "n_clicks", "n_sat_clicks", "rr", "ttfc_s",
         "reformulated", "session_has_click", "session_success", "session_abandoned",
         "session_no")


def facts_frame(logs, **kw) -> pd.DataFrame:
    view = search_facts(logs, **kw)
    return logs.con.sql(f"SELECT * FROM {quote_ident(view)}").df().set_index("search_id")


def test_facts_row_by_row(hand_logs):
    df = facts_frame(hand_logs)
    assert sorted(df.index) == sorted(EXPECTED)
    for sid, values in EXPECTED.items():
        for name, want in zip(NAMES, values, strict=True):
            got = df.loc[sid, name]
            if want is None:
                assert pd.isna(got), (sid, name)
            else:
                assert got == pytest.approx(want), (sid, name, got)
    # zero-result / abandonment flags
    assert df.loc["s3", "zero_result"] == 1 and df.loc["s3", "nonzero"] == 0
    assert df.loc["s3", "abandoned"] == 0  # no results: not an abandonment
    assert df.loc["s2", "abandoned"] == 1
    assert df.loc["s9", "known_query"] == 0


def test_facts_columns_match_docs(hand_logs):
    view = search_facts(hand_logs)
    columns = list(hand_logs.con.table(quote_ident(view)).columns)
    searches = list(hand_logs.con.table("searches").columns)
    assert columns == searches + list(FACT_COLUMNS)
    # the module docstring documents each added column, in order
    documented = re.findall(r"^``(\w+)`` [A-Z]+$", facts_module.__doc__, flags=re.M)
    assert documented == list(FACT_COLUMNS)
    # and so does the SQL header
    header = queries.load("online/search_facts").doc
    outputs = header[header.index("outputs:"):]
    for name in FACT_COLUMNS:
        assert re.search(rf"\b{name}\b", outputs), name


def test_every_metric_is_a_ratio_of_fact_sums(hand_logs):
    """Summing the facts per variant by hand (in pandas) gives online_metrics exactly."""
    from onlineeval.online import online_metrics
    from onlineeval.online.definitions import COLUMNS, METRICS

    df = facts_frame(hand_logs).reset_index()
    df["searches"] = 1
    assert (df["known_rr"] == df["rr"].notna().astype(int)).all()
    sums = df.groupby("variant").sum(numeric_only=True)
    sums["users"] = df.groupby("variant")["user_id"].nunique()
    got = online_metrics(hand_logs).set_index("variant")
    for name in COLUMNS:
        m = METRICS.get(name)
        want = sums[m.numerator] if m.denominator is None else (
            sums[m.numerator] / sums[m.denominator])
        pd.testing.assert_series_equal(got[name].astype(float), want.astype(float),
                                       check_names=False)


def test_view_is_named_per_parameters(hand_logs):
    a = search_facts(hand_logs, sat_dwell_s=5)
    b = search_facts(hand_logs, sat_dwell_s=30)
    assert a != b
    count = hand_logs.con.sql(
        f"SELECT sum(n_sat_clicks) FROM {quote_ident(a)}").fetchall()[0][0]
    assert count == 6  # c1 (5 s), c2 (last), c3 (9 s), c4, c5 (15 s), c6 (10 s)
    count = hand_logs.con.sql(
        f"SELECT sum(n_sat_clicks) FROM {quote_ident(b)}").fetchall()[0][0]
    assert count == 2  # c2, c4


def test_metric_sums_are_the_fact_sums(hand_logs):
    """metric_sums (what H5-style per-unit code reuses) equals the sums of the facts view."""
    from onlineeval.online import metric_sums

    sums = metric_sums(hand_logs, by=()).iloc[0]
    df = facts_frame(hand_logs)
    assert sums["searches"] == len(df) == 10
    assert sums["users"] == df["user_id"].nunique() == 3
    for col in ("session_first", "has_click", "n_clicks", "session_success", "reformulated"):
        assert sums[col] == df[col].sum(), col
    assert sums["ttfc_s"] == pytest.approx(62.0)
