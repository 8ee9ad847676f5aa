"""online_metrics on the hand-made log of conftest.py, every value worked out by hand.

Per-search facts of the log (see conftest.py for the events):

u1 sessions: A = {s1, c1, s2, s3, s4, c2} (s3 -> s4 is exactly 30 min: same session),
             B = {s5, c3, c4} (c2 -> s5 is 30 min 1 s: new session).
  c1 dwell 5 s: not satisfied.  c2 no dwell, last event of A: satisfied.
  c3 no dwell, next event c4 9 s later: derived dwell 9 s, not satisfied.  c4 40 s: satisfied.
  s2 -> s3 is the only reformulation (s1 and s4 are followed by a click, s3 -> s4 same query).
  time to first click: s1 10 s, s4 30 s, s5 10 s.  reciprocal ranks: s1 1/2, s4 1, s5 1.
u2 sessions: C = {s6, c5, s7, c6}, D = {s8, s9} (c6 -> s8 is 31 min).
  c5 no dwell, next event s7 15 s later: not satisfied.  c6 dwell 10 s (known, even though
  last of C): not satisfied.  No reformulation (s8 -> s9 has no query for s9).
  time to first click: s6 5 s, s7 7 s.  reciprocal ranks: s6 1, s7 1/4.
u3 session E = {s10}; c7 has neither ts nor dwell: not satisfied, no time to first click.
u4 and the "ghost" click are excluded by the loader.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from onlineeval import load_logs
from onlineeval.errors import SchemaError, UnknownNameError
from onlineeval.online import online_metrics
from onlineeval.online.definitions import COLUMNS


@pytest.fixture
def hand_logs(module_hand_logs):
    """One load for the whole module: its tests only read the log."""
    return module_hand_logs

CONTROL = {
    "searches": 5, "sessions": 2, "users": 1,
    "ctr": 3 / 5,                       # s1, s4, s5
    "clicks_per_search": 4 / 5,         # c1..c4
    "abandonment_rate": 1 / 4,          # s2 among s1, s2, s4, s5 (s3 has no results)
    "zero_result_rate": 1 / 5,          # s3
    "session_abandonment_rate": 0 / 2,
    "session_success_rate": 2 / 2,      # A (c2), B (c4)
    "mean_time_to_first_click_s": (10 + 30 + 10) / 3,
    "click_mrr": (0.5 + 0 + 0 + 1 + 1) / 5,
    "reformulation_rate": 1 / 5,        # s2
    "queries_per_session": 5 / 2,
}
TREATMENT = {
    "searches": 5, "sessions": 3, "users": 2,
    "ctr": 3 / 5,                       # s6, s7, s10
    "clicks_per_search": 3 / 5,         # c5, c6, c7
    "abandonment_rate": 2 / 5,          # s8, s9
    "zero_result_rate": 0 / 5,
    "session_abandonment_rate": 1 / 3,  # D
    "session_success_rate": 0 / 3,
    "mean_time_to_first_click_s": (5 + 7) / 2,
    "click_mrr": (1 + 0.25 + 0 + 0 + 0.5) / 5,
    "reformulation_rate": 0 / 4,        # s9 has no query
    "queries_per_session": 5 / 3,
}
OVERALL = {
    "searches": 10, "sessions": 5, "users": 3,
    "ctr": 6 / 10, "clicks_per_search": 7 / 10, "abandonment_rate": 3 / 9,
    "zero_result_rate": 1 / 10, "session_abandonment_rate": 1 / 5,
    "session_success_rate": 2 / 5, "mean_time_to_first_click_s": (10 + 30 + 10 + 5 + 7) / 5,
    "click_mrr": (2.5 + 1.75) / 10, "reformulation_rate": 1 / 9, "queries_per_session": 2.0,
}


def check_row(row: pd.Series, expected: dict[str, float]) -> None:
    for name, value in expected.items():
        got = row[name]
        if value is None:
            assert pd.isna(got), name
        else:
            assert got == pytest.approx(value, rel=1e-12, abs=1e-15), name


def test_columns_are_the_issue_table(hand_logs):
    df = online_metrics(hand_logs)
    assert list(df.columns) == ["variant", *COLUMNS]
    assert list(COLUMNS) == [
        "searches", "sessions", "users", "ctr", "clicks_per_search", "abandonment_rate",
        "zero_result_rate", "session_abandonment_rate", "session_success_rate",
        "mean_time_to_first_click_s", "click_mrr", "reformulation_rate",
        "queries_per_session",
    ]


def test_by_variant_hand_computed(hand_logs):
    df = online_metrics(hand_logs).set_index("variant")
    assert list(df.index) == ["control", "treatment"]
    check_row(df.loc["control"], CONTROL)
    check_row(df.loc["treatment"], TREATMENT)


def test_whole_log_hand_computed(hand_logs):
    df = online_metrics(hand_logs, by=())
    assert len(df) == 1
    check_row(df.iloc[0], OVERALL)


def test_excluded_rows_are_ignored_and_counted(hand_logs):
    excluded = hand_logs.report.excluded
    assert excluded[("searches", "duplicate_search_id")] == 2
    assert sum(n for (t, _), n in excluded.items() if t == "clicks") == 2
    df = online_metrics(hand_logs, by=())
    assert df.loc[0, "users"] == 3  # u4 only had the duplicated search


def test_by_day(hand):
    logs = load_logs(searches=hand.searches_df(), clicks=hand.clicks_df(), results=hand.results_df())
    df = online_metrics(logs, by="day")
    assert list(df.columns) == ["day", *COLUMNS]
    assert [str(d)[:10] for d in df["day"]] == ["2024-01-01", "2024-01-02"]
    day1 = {  # u1 and u2
        "searches": 9, "sessions": 4, "users": 2, "ctr": 5 / 9, "clicks_per_search": 6 / 9,
        "abandonment_rate": 3 / 8, "zero_result_rate": 1 / 9,
        "session_abandonment_rate": 1 / 4, "session_success_rate": 2 / 4,
        "mean_time_to_first_click_s": 62 / 5, "click_mrr": 3.75 / 9,
        "reformulation_rate": 1 / 8, "queries_per_session": 9 / 4,
    }
    day2 = {  # u3
        "searches": 1, "sessions": 1, "users": 1, "ctr": 1.0, "clicks_per_search": 1.0,
        "abandonment_rate": 0.0, "zero_result_rate": 0.0, "session_abandonment_rate": 0.0,
        "session_success_rate": 0.0, "mean_time_to_first_click_s": None, "click_mrr": 0.5,
        "reformulation_rate": 0.0, "queries_per_session": 1.0,
    }
    check_row(df.iloc[0], day1)
    check_row(df.iloc[1], day2)


def test_by_variant_and_day(hand_logs):
    df = online_metrics(hand_logs, by=["variant", "day"])
    assert list(df.columns[:2]) == ["variant", "day"]
    assert len(df) == 3  # control/day1, treatment/day1, treatment/day2
    assert df["searches"].tolist() == [5, 4, 1]


def test_session_gap_parameter(hand_logs):
    # with a 20-minute gap, s3 -> s4 (30 min) also splits u1: {s1,s2,s3}, {s4,c2}, {s5,c3,c4}
    df = online_metrics(hand_logs, session_gap_min=20).set_index("variant")
    check_row(df.loc["control"], {
        "sessions": 3, "session_success_rate": 2 / 3, "session_abandonment_rate": 0 / 3,
        "reformulation_rate": 1 / 5, "queries_per_session": 5 / 3,
    })


def test_gap_boundary_is_strict(hand_logs):
    # s3 -> s4 is exactly 1800 s: a gap of exactly 30 min keeps the session, 29.99 min splits
    at = online_metrics(hand_logs, session_gap_min=30).set_index("variant")
    below = online_metrics(hand_logs, session_gap_min=29.99).set_index("variant")
    assert at.loc["control", "sessions"] == 2
    assert below.loc["control", "sessions"] == 3


def test_sat_dwell_parameter(hand_logs):
    # sat at 5 s: c1 (5 s), c3 (derived 9 s), c5 (derived 15 s), c6 (10 s) become satisfied
    df = online_metrics(hand_logs, sat_dwell_s=5).set_index("variant")
    assert df.loc["control", "session_success_rate"] == 1.0
    assert df.loc["treatment", "session_success_rate"] == pytest.approx(1 / 3)
    # at 41 s even c4 (40 s) fails; c2 stays satisfied as the last event of its session
    df = online_metrics(hand_logs, sat_dwell_s=41).set_index("variant")
    assert df.loc["control", "session_success_rate"] == pytest.approx(1 / 2)


def test_n_results_derived_from_results_table(hand):
    logs = load_logs(searches=hand.searches_df().drop(columns="n_results"), clicks=hand.clicks_df(),
                     results=hand.results_df())
    df = online_metrics(logs).set_index("variant")
    check_row(df.loc["control"], CONTROL)
    check_row(df.loc["treatment"], TREATMENT)


def test_given_sessions(hand):
    # u1 in one given session; u2 in b1 (s6, s7) and b2 (s8, s9); u3 reuses the id "b1",
    # which is a different session because sessions are (user_id, session_id) pairs.
    sessions = {"s1": "a", "s2": "a", "s3": "a", "s4": "a", "s5": "a", "s6": "b1", "s7": "b1",
                "s8": "b2", "s9": "b2", "s10": "b1"}
    logs = load_logs(searches=hand.searches_df(session_id=sessions), clicks=hand.clicks_df(),
                     results=hand.results_df())
    df = online_metrics(logs, session_gap_min=1).set_index("variant")  # gap unused
    # u1's one session: c2 is no longer last (s5 follows in the session): derived dwell
    # 1801 s, satisfied; c4 satisfied. Reformulation unchanged (s2 -> s3).
    check_row(df.loc["control"], {**CONTROL, "sessions": 1, "session_success_rate": 1.0,
                                  "queries_per_session": 5.0})
    check_row(df.loc["treatment"], {**TREATMENT, "sessions": 3})


def test_log_without_ts_reports_time_free_metrics_only(hand):
    logs = load_logs(searches=hand.searches_df(ts=False), clicks=hand.clicks_df(ts=False),
                     results=hand.results_df())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = online_metrics(logs).set_index("variant")
    messages = [str(w.message) for w in caught]
    nulls = ["sessions", "session_abandonment_rate", "session_success_rate",
             "mean_time_to_first_click_s", "reformulation_rate", "queries_per_session"]
    for name in nulls:
        assert df[name].isna().all(), name
        assert any(m.startswith(f"{name} is NULL") and "searches.ts" in m for m in messages)
    time_free = {k: v for k, v in CONTROL.items() if k not in nulls}
    check_row(df.loc["control"], time_free)
    check_row(df.loc["treatment"], {k: v for k, v in TREATMENT.items() if k not in nulls})
    with pytest.raises(SchemaError, match="no ts"):
        online_metrics(logs, by="day")


def test_log_without_ts_but_with_sessions_and_dwell(hand):
    # sessions are given, so they count; a click is satisfied only by a known dwell >= 30 s
    # (without ts no click can be shown to be the last of its session): only c4.
    sessions = {"s1": "a", "s2": "a", "s3": "a", "s4": "a", "s5": "b"}
    logs = load_logs(searches=hand.searches_df(ts=False, session_id=sessions),
                     clicks=hand.clicks_df(ts=False), results=hand.results_df())
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        df = online_metrics(logs).set_index("variant")
    assert df.loc["control", "sessions"] == 2
    assert df.loc["control", "session_success_rate"] == 0.5
    assert df.loc["control", "queries_per_session"] == 2.5
    assert pd.isna(df.loc["control", "reformulation_rate"])


def test_unknown_by_lists_what_is_available(hand_logs):
    with pytest.raises(UnknownNameError) as err:
        online_metrics(hand_logs, by="variantt")
    text = str(err.value)
    assert "variantt" in text and "variant" in text and "day" in text


@pytest.mark.parametrize("name", ['x"; DROP TABLE searches; --', 'a"\n) ; DROP TABLE x; --'])
def test_group_column_with_quotes_is_data_not_sql(hand, name):
    s = hand.searches_df()
    s[name] = ["g1"] * 6 + ["g2"] * 6
    logs = load_logs(searches=s, clicks=hand.clicks_df(), results=hand.results_df())
    df = online_metrics(logs, by=[name])
    assert list(df.columns)[0] == name
    assert df[name].tolist() == ["g1", "g2"]
    assert df["searches"].sum() == 10


def test_bad_parameters(hand_logs):
    from onlineeval.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="session_gap_min"):
        online_metrics(hand_logs, session_gap_min=0)
    with pytest.raises(InvalidParameterError, match="sat_dwell_s"):
        online_metrics(hand_logs, sat_dwell_s=float("nan"))
    with pytest.raises(InvalidParameterError, match="sat_dwell_s"):
        online_metrics(hand_logs, sat_dwell_s="30")


def test_integer_ids(hand):
    # ids as integers (no ties in the hand log, so the order is the same): same metrics
    def num(x):
        return int(x[1:]) if x[1:].isdigit() else {"dup": 98, "ghost": 99}[x]

    s, c, r = hand.searches_df(), hand.clicks_df(), hand.results_df()
    for df in (s, c, r):
        df["search_id"] = [num(x) for x in df["search_id"]]
    s["user_id"] = [int(u[1:]) for u in s["user_id"]]
    logs = load_logs(searches=s, clicks=c, results=r)
    df = online_metrics(logs).set_index("variant")
    check_row(df.loc["control"], CONTROL)
    check_row(df.loc["treatment"], TREATMENT)


def test_searches_column_clashing_with_a_fact_is_a_clear_error(hand):
    s = hand.searches_df()
    s["n_clicks"] = 1
    logs = load_logs(searches=s, clicks=hand.clicks_df(), results=hand.results_df())
    with pytest.raises(SchemaError, match="n_clicks"):
        online_metrics(logs)


def test_log_without_clicks(hand):
    logs = load_logs(searches=hand.searches_df(), clicks=hand.clicks_df().iloc[0:0],
                     results=hand.results_df())
    df = online_metrics(logs, by=())
    # without clicks: u1 still splits at s4 -> s5 (1831 s); s1 -> s2, s2 -> s3 and s6 -> s7
    # are now reformulations (no click in between); s7 -> s8 crosses a session
    check_row(df.iloc[0], {
        "searches": 10, "sessions": 5, "users": 3, "ctr": 0.0, "clicks_per_search": 0.0,
        "abandonment_rate": 1.0, "zero_result_rate": 0.1, "session_abandonment_rate": 1.0,
        "session_success_rate": 0.0, "mean_time_to_first_click_s": None, "click_mrr": 0.0,
        "reformulation_rate": 3 / 9, "queries_per_session": 2.0,
    })


def test_clicks_with_doc_id_only(hand):
    c = hand.clicks_df()
    c["doc_id"] = [f"d-{s}-{r}" for s, r in zip(c["search_id"], c["rank"], strict=True)]
    c = c.drop(columns="rank")
    # with results, the loader fills the rank: same metrics
    logs = load_logs(searches=hand.searches_df(), clicks=c, results=hand.results_df())
    check_row(online_metrics(logs, by=()).iloc[0], OVERALL)
    # without results, click_mrr cannot be known: NULL with a warning naming clicks.rank
    logs = load_logs(searches=hand.searches_df(), clicks=c)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = online_metrics(logs, by=())
    assert pd.isna(df.loc[0, "click_mrr"])
    assert any("click_mrr is NULL" in str(w.message) and "clicks.rank" in str(w.message)
               for w in caught)
    check_row(df.iloc[0], {k: v for k, v in OVERALL.items() if k != "click_mrr"})
