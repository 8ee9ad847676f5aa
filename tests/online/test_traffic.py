"""top_queries and queries_over_time on the hand-made log (conftest.py), by hand.

Kept searches: a: s1, s10 (users u1, u3; both clicked); b: s2 (no click); c: s3, s4 (u1; s4
clicked); d: s5; x: s6; y: s7 (clicked); z: s8 (no click); s9 has no query.
"""

from __future__ import annotations

import pandas as pd
import pytest

from onlineeval import load_logs
from onlineeval.errors import InvalidParameterError, SchemaError
from onlineeval.online import queries_over_time, top_queries


@pytest.fixture
def hand_logs(module_hand_logs):
    """One load for the whole module: its tests only read the log."""
    return module_hand_logs


def test_top_queries_hand_computed(hand_logs):
    df = top_queries(hand_logs, n=3, by=())
    assert list(df.columns) == ["position", "query", "searches", "users", "ctr"]
    # ties on searches are broken by query text: a before c; b first of the single ones
    assert df["query"].tolist() == ["a", "c", "b"]
    assert df["searches"].tolist() == [2, 2, 1]
    assert df["users"].tolist() == [2, 1, 1]
    assert df["ctr"].tolist() == pytest.approx([1.0, 0.5, 0.0])
    assert df["position"].tolist() == [1, 2, 3]


def test_top_queries_by_variant(hand_logs):
    df = top_queries(hand_logs, n=2, by="variant")
    assert df["variant"].tolist() == ["control", "control", "treatment", "treatment"]
    assert df["query"].tolist() == ["c", "a", "a", "x"]
    assert df["searches"].tolist() == [2, 1, 1, 1]


def test_queries_over_time_hand_computed(hand_logs):
    df = queries_over_time(hand_logs, "hour")
    assert list(df.columns) == ["hour", "searches", "users", "queries", "ctr"]
    assert df["hour"].tolist() == [pd.Timestamp("2024-01-01 00:00"),
                                   pd.Timestamp("2024-01-01 01:00"),
                                   pd.Timestamp("2024-01-02 00:00")]
    assert df["searches"].tolist() == [8, 1, 1]
    assert df["users"].tolist() == [2, 1, 1]
    assert df["queries"].tolist() == [6, 1, 1]
    assert df["ctr"].tolist() == pytest.approx([4 / 8, 1.0, 1.0])
    days = queries_over_time(hand_logs, "day", by="variant")
    assert list(days.columns[:2]) == ["day", "variant"]
    assert days["searches"].tolist() == [5, 4, 1]


def test_errors(hand):
    logs = load_logs(searches=hand.searches_df(ts=False).drop(columns="query"),
                     clicks=hand.clicks_df(ts=False))
    with pytest.raises(SchemaError, match="query"):
        top_queries(logs)
    with pytest.raises(SchemaError, match="ts"):
        queries_over_time(logs, "day")
    with pytest.raises(InvalidParameterError, match="freq"):
        queries_over_time(logs, "month")
    with pytest.raises(InvalidParameterError, match="n must"):
        top_queries(logs, n=0)
