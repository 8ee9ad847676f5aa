"""sql/agreement/per_query_interleaving.sql against hand-counted pages."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

import onlineeval
from onlineeval.report.build import _per_query_ab, _per_query_interleaving
from onlineeval.study import Experiment


@pytest.fixture
def logs():
    ts = pd.Timestamp("2026-01-01 10:00")
    ids = ["s1", "s2", "s3", "s4", "s5", "s6"]
    searches = pd.DataFrame({
        "search_id": ids, "user_id": ["u1", "u1", "u2", "u3", "u3", "u4"],
        "ts": [ts + pd.Timedelta(minutes=i) for i in range(6)],
        "query": ["a", "a", "a", "b", "b", "c"], "qid": ["q1", "q1", "q1", "q2", "q2", "q3"],
        "experiment": "e", "variant": "interleaved",
    })
    results = pd.DataFrame({
        "search_id": [s for s in ids for _ in range(2)], "rank": [1, 2] * 6,
        "doc_id": [f"{s}-d{r}" for s in ids for r in (1, 2)],
        "team": ["T", "C"] * 6,
    })
    clicks = pd.DataFrame({
        # s1: T's result; s2: C's; s3: both (tie); s4: T's result twice; s5, s6: none
        "search_id": ["s1", "s2", "s3", "s3", "s4", "s4"],
        "rank": [1, 2, 1, 2, 1, 1],
        "ts": [ts + pd.Timedelta(minutes=i, seconds=5) for i in (0, 1, 2, 2, 3, 3)],
    })
    return onlineeval.load_logs(searches=searches, results=results, clicks=clicks)


def test_per_query_delta_by_hand(logs):
    exp = Experiment("e", Path("q"), Path("c.run"), Path("t.run"), interleaving_experiment="e",
                     control_team="C", treatment_team="T")
    df = _per_query_interleaving(exp, logs).table.set_index("qid")
    assert df.loc["q1", ["pages", "wins_t", "wins_o", "ties"]].tolist() == [3, 1, 1, 1]
    assert df.loc["q1", "delta_q"] == pytest.approx((1 + 0.5) / 3 - 0.5)
    assert df.loc["q2", ["pages", "wins_t", "wins_o", "ties"]].tolist() == [2, 1, 0, 0]
    assert df.loc["q2", "delta_q"] == pytest.approx(0.5)
    assert df.loc["q3", "pages"] == 1 and math.isnan(df.loc["q3", "delta_q"])
    # from the other team's side every delta flips
    flipped = Experiment("e", Path("q"), Path("c.run"), Path("t.run"),
                         interleaving_experiment="e", control_team="T", treatment_team="C")
    other = _per_query_interleaving(flipped, logs).table.set_index("qid")
    assert other.loc["q2", "delta_q"] == pytest.approx(-0.5)


def test_multileaved_pages_count_only_the_studied_pair():
    # three teams on every page; the study compares T (treatment) with C (control). Pages
    # also pair T and C with X: those comparisons must not add rows (each query one row, or
    # the within-experiment agreement would see a query twice)
    ts = pd.Timestamp("2026-01-01 10:00")
    ids = ["s1", "s2", "s3"]
    searches = pd.DataFrame({
        "search_id": ids, "user_id": ["u1", "u2", "u3"],
        "ts": [ts + pd.Timedelta(minutes=i) for i in range(3)],
        "query": ["a", "a", "b"], "qid": ["q1", "q1", "q2"],
        "experiment": "e", "variant": "interleaved",
    })
    results = pd.DataFrame({
        "search_id": [s for s in ids for _ in range(3)], "rank": [1, 2, 3] * 3,
        "doc_id": [f"{s}-d{r}" for s in ids for r in (1, 2, 3)],
        "team": ["T", "C", "X"] * 3,
    })
    clicks = pd.DataFrame({
        # s1: T's result (T beats C); s2: X's result (T vs C undecided); s3: C's (C beats T)
        "search_id": ids, "rank": [1, 3, 2],
        "ts": [ts + pd.Timedelta(minutes=i, seconds=5) for i in range(3)],
    })
    logs = onlineeval.load_logs(searches=searches, results=results, clicks=clicks)
    exp = Experiment("e", Path("q"), Path("c.run"), Path("t.run"), interleaving_experiment="e",
                     control_team="C", treatment_team="T")
    df = _per_query_interleaving(exp, logs).table
    assert df["qid"].tolist() == ["q1", "q2"] and set(df["other_team"]) == {"C"}
    df = df.set_index("qid")
    assert df.loc["q1", ["pages", "wins_t", "wins_o", "ties"]].tolist() == [2, 1, 0, 0]
    assert df.loc["q1", "delta_q"] == pytest.approx(0.5)
    assert df.loc["q2", ["pages", "wins_t", "wins_o", "ties"]].tolist() == [1, 0, 1, 0]
    assert df.loc["q2", "delta_q"] == pytest.approx(-0.5)


def test_per_query_ab_ctr_by_hand():
    ts = pd.Timestamp("2026-01-01 10:00")
    # q1: control 2 searches (1 clicked), treatment 1 search (clicked twice)
    # q2: control 1 search without click, treatment none; another experiment's search ignored
    searches = pd.DataFrame({
        "search_id": ["a", "b", "c", "d", "e"], "user_id": ["u1", "u2", "u3", "u4", "u5"],
        "ts": [ts + pd.Timedelta(minutes=i) for i in range(5)],
        "query": ["x", "x", "x", "y", "x"], "qid": ["q1", "q1", "q1", "q2", "q1"],
        "experiment": ["e", "e", "e", "e", "other"],
        "variant": ["control", "control", "treatment", "control", "treatment"],
    })
    clicks = pd.DataFrame({"search_id": ["a", "c", "c", "e"], "rank": [1, 1, 2, 1],
                           "ts": [ts + pd.Timedelta(minutes=i, seconds=3) for i in (0, 2, 2, 4)]})
    logs = onlineeval.load_logs(searches=searches, clicks=clicks)
    exp = Experiment("e", Path("q"), Path("c.run"), Path("t.run"), ab_experiment="e")
    df = _per_query_ab(exp, logs).table.set_index("qid")
    assert df.loc["q1", ["searches_control", "clicked_control", "searches_treatment",
                         "clicked_treatment"]].tolist() == [2, 1, 1, 1]
    assert df.loc["q1", "ctr_delta"] == pytest.approx(1 - 1 / 2)
    assert df.loc["q2", "searches_treatment"] == 0 and math.isnan(df.loc["q2", "ctr_delta"])
