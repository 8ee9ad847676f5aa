"""position_ctr on the hand-made log (conftest.py); every count worked out by hand.

Kept searches and their page sizes: s1 3, s2 2, s3 0, s4 2, s5 3, s6 2, s7 4, s8 1, s9 1,
s10 2. Clicks by rank: 1 on s4, s5, s6; 2 on s1, s10; 3 on s5; 4 on s7.
"""

from __future__ import annotations

import pytest

from onlineeval import load_logs
from onlineeval.errors import SchemaError
from onlineeval.online import position_ctr


@pytest.fixture
def hand_logs(module_hand_logs):
    """One load for the whole module: its tests only read the log."""
    return module_hand_logs


def test_position_ctr_hand_computed(hand_logs):
    df = position_ctr(hand_logs)
    assert list(df.columns) == ["rank", "shown", "clicked", "clicks", "ctr"]
    assert df["rank"].tolist() == [1, 2, 3, 4]
    assert df["shown"].tolist() == [9, 7, 3, 1]
    assert df["clicked"].tolist() == [3, 2, 1, 1]
    assert df["clicks"].tolist() == [3, 2, 1, 1]
    assert df["ctr"].tolist() == pytest.approx([3 / 9, 2 / 7, 1 / 3, 1.0])


def test_position_ctr_by_variant(hand_logs):
    df = position_ctr(hand_logs, by="variant")
    control = df[df["variant"] == "control"]
    # control pages: s1 3, s2 2, s3 0, s4 2, s5 3; clicks rank 2 (s1), 1 (s4), 3 and 1 (s5)
    assert control["shown"].tolist() == [4, 4, 2]
    assert control["clicked"].tolist() == [2, 1, 1]


def test_repeated_clicks_count_once_in_clicked(hand):
    c = hand.clicks_df()
    c.loc[len(c)] = c.loc[0]  # c1 twice
    logs = load_logs(searches=hand.searches_df(), clicks=c, results=hand.results_df())
    df = position_ctr(logs)
    assert df.loc[df["rank"] == 2, "clicked"].item() == 2
    assert df.loc[df["rank"] == 2, "clicks"].item() == 3


def test_position_ctr_needs_results(hand):
    logs = load_logs(searches=hand.searches_df(), clicks=hand.clicks_df())
    with pytest.raises(SchemaError, match="results"):
        position_ctr(logs)
